"""The FFT namespace of the Dask backend (``register(..., fft=...)``, Note [FFT kernels] in the
kit's _fft.py): array-api-compat's ``fft`` extension over ``dask.array``, each transformed axis
put in one chunk first.

``dask.array.fft`` transforms an axis only when it is one chunk (a transform mixes every point
of its axis), and refuses otherwise. Tensors are chunked along their first dimension (Note
[Default chunks] in chunks.py), and a padded signal (``n=`` larger than the axis) is a
concatenation of chunks, so each function rechunks the axes it transforms to one chunk (a no-op
where they are one already) and leaves the other axes' chunks as they are: the transform still
runs chunk by chunk along them.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["FFT"]


class FFT:
    """The standard ``fft`` extension's names over dask arrays, each transformed axis in one
    chunk."""

    def __init__(self) -> None:
        import array_api_compat.dask.array as xp

        self._fft = xp.fft  # type: ignore[attr-defined]

    @functools.cache  # noqa: B019 - one instance per loaded backend
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        fn = getattr(self._fft, name)  # AttributeError: a name the extension lacks
        if name in ("fftfreq", "rfftfreq", "fftshift", "ifftshift"):
            return fn

        def transform(a: Any, *args: Any, **kwargs: Any) -> Any:
            if "axis" in kwargs:
                axes = [kwargs["axis"]]
            elif kwargs.get("axes") is not None:
                axes = list(kwargs["axes"])
            elif not name.endswith("n"):  # the standard's defaults: the last axis
                axes = [-1]
            else:  # the last len(s) axes, or every axis
                s = kwargs.get("s")
                axes = list(range(a.ndim - (a.ndim if s is None else len(s)), a.ndim))
            one = {ax % a.ndim: -1 for ax in axes if a.numblocks[ax % a.ndim] > 1}
            return fn(a.rechunk(one) if one else a, *args, **kwargs)

        transform.__name__ = name
        return transform
