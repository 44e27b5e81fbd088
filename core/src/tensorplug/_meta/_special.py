"""The ``special`` family of the meta namespace: :data:`special`, the special-function
namespace the Meta backend hands its kit (``array_backend.register(..., special=...)``, Note
[Special-function namespace] in array_backend/_special.py). Each function is elementwise: the
broadcast shape of its array operands, in their promoted dtype (Note [Meta arrays] in
_array.py); ``airy`` gives its four results.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ._array import MetaArray, _broadcast, _promote, asarray

_UNARY = (
    "gammaln", "psi", "erfinv", "erfc", "erfcx", "i0", "i0e", "i1", "i1e", "ndtri", "log_ndtr",
    "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e",
)  # fmt: skip
_BINARY = ("xlogy", "xlog1py", "zeta", "gammainc", "gammaincc", "polygamma")


def _elementwise(name: str) -> Any:
    def fn(*xs: Any) -> MetaArray:
        arrays = [x if isinstance(x, MetaArray) else asarray(x) for x in xs]
        shape = _broadcast(*(a.shape for a in arrays))
        if name == "polygamma":  # polygamma(n, x): x's dtype
            return MetaArray(shape, arrays[1].dtype)
        return MetaArray(shape, _promote(*arrays))

    fn.__name__ = name
    return fn


def _airy(x: Any) -> tuple[MetaArray, ...]:
    r = _elementwise("airy")(x)
    return (r, r, r, r)


special = SimpleNamespace(
    __name__="tensorplug._meta.special",
    airy=_airy,
    **{name: _elementwise(name) for name in (*_UNARY, *_BINARY)},
)
