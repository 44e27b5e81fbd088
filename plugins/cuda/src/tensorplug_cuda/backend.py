"""The CUDA backend's kernels: tensorplug's array kit over CuPy, and where CuPy differs.

:func:`load` is what ``tensorplug.array_backend.register_lazy`` calls on the first CUDA
kernel or tensor: it gets CuPy from the loader (or raises the reason CUDA is unavailable) and
returns the arguments of ``array_backend.register``. What differs from numpy is fixed here, each
piece named for what it fixes:

* :func:`numpy_compatible` -- the array namespace: CuPy with the few functions that differ
  from numpy's: ``argsort`` has no ``stable=`` (CuPy's sort is always stable), and CuPy's
  ufuncs ``reduce`` and ``accumulate`` only for ``add`` and ``multiply`` (the kit reduces with
  ``maximum``, ``minimum``, ``logical_and``, and scans with ``maximum``/``minimum`` for
  ``cummax``/``cummin``), see :class:`ReducingUfunc`;
* :class:`DeviceGenerators` -- random numbers: one CuPy generator per device (a CuPy generator
  lives on the device it was made on), with ``permutation``, which CuPy's lacks;
* multi-GPU machines get ``device_context`` (kernels run on their tensors' device, Note
  [Device guard] in tensorplug.array_backend); one GPU pays nothing for it.

bfloat16: CuPy has no bfloat16 dtype, so the backend has none: making or casting to a bfloat16
CUDA tensor raises, naming the dtypes it has (docs/cuda.md).
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["DeviceGenerators", "load", "numpy_compatible", "special_functions"]


def load(runtime: Any) -> dict[str, Any]:
    """``array_backend.register``'s arguments over CuPy (raises when CUDA is unavailable)."""
    cp = runtime.cupy()
    options: dict[str, Any] = {
        "xp": numpy_compatible(cp),
        "to_host": cp.asnumpy,
        "make_rng": lambda seed: DeviceGenerators(cp, seed),
        "current_device": cp.cuda.runtime.getDevice,
    }
    special = special_functions(cp)
    if special is not None:
        options["special"] = special
    if cp.cuda.runtime.getDeviceCount() > 1:
        options["device_context"] = lambda d: cp.cuda.Device(d.index)
    return options


def special_functions(cp: Any) -> Any:
    """The special-function namespace for the kit (``tp.special``, ``tp.lgamma``, ...):
    ``cupyx.scipy.special``, shipped with CuPy; a CuPy stand-in may bring its own as
    ``cp.scipy_special`` (tests); None without either (those ops then say that this backend
    does not support them)."""
    own = getattr(cp, "scipy_special", None)
    if own is not None:
        return own
    if getattr(cp, "__name__", "") != "cupy":
        return None
    try:
        return importlib.import_module("cupyx.scipy.special")
    except ImportError:  # pragma: no cover - shipped with CuPy
        return None


class _Namespace(types.ModuleType):
    """CuPy's namespace with some functions replaced (module attributes win over CuPy's)."""

    def __init__(self, cp: Any) -> None:
        super().__init__(cp.__name__, cp.__doc__)
        self.cupy = cp

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cupy, name)


def numpy_compatible(cp: Any) -> types.ModuleType:
    """CuPy, with numpy's signatures where the array kit needs them."""
    ns = _Namespace(cp)
    argsort = cp.argsort

    def argsort_accepting_stable(
        a: Any, axis: int = -1, kind: str | None = None, *, stable: bool | None = None
    ) -> Any:
        return argsort(a, axis=axis)  # CuPy's argsort is stable whatever ``kind`` asks

    ns.argsort = argsort_accepting_stable  # type: ignore[attr-defined]
    for name, reduce in (
        ("maximum", cp.max), ("minimum", cp.min), ("logical_and", cp.all), ("logical_or", cp.any),
    ):  # fmt: skip
        setattr(ns, name, ReducingUfunc(getattr(cp, name), reduce))
    return ns


class ReducingUfunc:
    """A CuPy ufunc with numpy's ``reduce`` and ``accumulate``, which CuPy 14 has only for
    ``add`` and ``multiply`` (it raises NotImplementedError for the others).

    ``reduce`` is the matching reduction (``cupy.max`` for ``maximum``). ``accumulate`` is an
    inclusive scan by doubling: after the step of stride ``k`` each element combines the ``2k``
    elements up to it, so ``log2(n)`` elementwise calls cover the axis. ``maximum`` and
    ``minimum`` are associative, NaN included (a NaN stays NaN), so the result equals numpy's
    sequential one."""

    def __init__(self, ufunc: Any, reduction: Any) -> None:
        self._ufunc = ufunc
        self._reduction = reduction
        self.__name__ = getattr(ufunc, "__name__", "ufunc")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ufunc(*args, **kwargs)

    def reduce(
        self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False
    ) -> Any:
        r = self._reduction(array, axis=axis, keepdims=keepdims)
        if dtype is not None:
            r = r.astype(dtype)
        if out is not None:
            out[...] = r
            return out
        return r

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        a = array if dtype is None else array.astype(dtype)
        a = a.copy()
        ax = axis + a.ndim if axis < 0 else axis
        n = a.shape[ax]
        k = 1
        while k < n:
            head = (slice(None),) * ax
            later, earlier = head + (slice(k, None),), head + (slice(None, n - k),)
            a[later] = self._ufunc(a[later], a[earlier])  # the right side is computed first
            k *= 2
        if out is not None:
            out[...] = a
            return out
        return a

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ufunc, name)


class DeviceGenerators:
    """The random state of one seed (``make_rng(seed)``): a CuPy generator per device, each
    seeded with ``seed`` and made on first use of its device, so a tensor's numbers are drawn
    on its own device. Reseeding (``tp.cuda.manual_seed``) drops this object."""

    def __init__(self, cp: Any, seed: int) -> None:
        self._cp = cp
        self._seed = seed
        self._by_device: dict[int, Any] = {}

    def _generator(self) -> Any:
        cp = self._cp
        index = int(cp.cuda.runtime.getDevice())
        g = self._by_device.get(index)
        if g is None:
            g = self._by_device[index] = cp.random.default_rng(self._seed)
        return g

    def random(self, size: Any = None, dtype: Any = None) -> Any:
        g = self._generator()
        return g.random(size) if dtype is None else g.random(size, dtype=dtype)

    def standard_normal(self, size: Any = None, dtype: Any = None) -> Any:
        g = self._generator()
        return g.standard_normal(size) if dtype is None else g.standard_normal(size, dtype=dtype)

    def standard_exponential(self, size: Any = None) -> Any:
        return self._generator().standard_exponential(size)

    def poisson(self, lam: Any, size: Any = None) -> Any:
        return self._generator().poisson(lam, size)

    def integers(
        self,
        low: int,
        high: int | None = None,
        size: Any = None,
        dtype: Any = None,
        endpoint: bool = False,
    ) -> Any:
        g = self._generator()
        if dtype is None:
            return g.integers(low, high, size=size, endpoint=endpoint)
        return g.integers(low, high, size=size, dtype=dtype, endpoint=endpoint)

    def permutation(self, n: int) -> Any:
        """A random permutation of ``range(n)``: the order that sorts ``n`` uniform draws."""
        return self._cp.argsort(self._generator().random(n))
