"""scipy's special functions over dask arrays, for the kit's special-function namespace
(``register(..., special=...)``, Note [Special-function namespace] in the kit's _special.py).

Each function is scipy.special's ufunc applied chunk by chunk (``dask.array.core.elemwise``): lazy,
broadcasting its operands as the ufunc does, with the ufunc's result dtype.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["SpecialFunctions"]


class SpecialFunctions:
    """``scipy.special``'s names, each applied elementwise to dask arrays."""

    def __init__(self) -> None:
        import scipy.special  # type: ignore[import-untyped]

        self._scipy = scipy.special

    @functools.cache  # noqa: B019 - one instance per loaded backend
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        fn = getattr(self._scipy, name)  # AttributeError: a name scipy lacks

        def elementwise(*args: Any, **kwargs: Any) -> Any:
            from dask.array.core import elemwise

            return elemwise(functools.partial(fn, **kwargs) if kwargs else fn, *args)

        elementwise.__name__ = name
        return elementwise
