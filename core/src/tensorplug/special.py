"""``tensorplug.special``: special functions, as ``torch.special``.

Its functions are made from the entries of native_functions.yaml marked ``python_module:
special``, named without the ``special_`` prefix (Note [Python modules] in _opset/api.py)::

    tp.special.expit(x)                        # the operator aten::special_expit
    tp.special.logsumexp(x, [1])
"""

from __future__ import annotations

from typing import Any

from ._opset import api as _api


def __getattr__(name: str) -> Any:
    fn = _api.generated_function(name, "special")
    if fn is None:
        raise AttributeError(f"module 'tensorplug.special' has no attribute '{name}'")
    globals()[name] = fn  # later reads find it without this hook
    return fn


def __dir__() -> list[str]:
    return sorted({*globals(), *_api.module_function_names("special")})
