"""``tensorplug.linalg``: the linear-algebra functions, as ``torch.linalg``.

Its functions are made from the entries of native_functions.yaml marked ``python_module:
linalg``, named without the ``linalg_`` prefix (Note [Python modules] in _opset/api.py)::

    tp.linalg.vector_norm(x, 2, dim=[1])       # the operator aten::linalg_vector_norm
    tp.linalg.vecdot(x, y, dim=-1)              # aten::linalg_vecdot, a composite
    tp.linalg.svd(a).S                          # named-tuple results, as torch.return_types
    try:
        tp.linalg.inv(singular)
    except tp.linalg.LinAlgError as e:          # a RuntimeError, as torch.linalg.LinAlgError
        ...

Every function of ``torch.linalg`` (2.13) is here (docs/linalg.md lists which are operators
with kernels and which are composites of them).
"""

from __future__ import annotations

from typing import Any

from ._opset import api as _api
from .errors import LinAlgError

__all__ = ["LinAlgError"]  # and the generated functions (__dir__)


def __getattr__(name: str) -> Any:
    fn = _api.generated_function(name, "linalg")
    if fn is None:
        raise AttributeError(f"module 'tensorplug.linalg' has no attribute '{name}'")
    globals()[name] = fn  # later reads find it without this hook
    return fn


def __dir__() -> list[str]:
    return sorted({*globals(), *_api.module_function_names("linalg")})
