"""``tensorplug.nn.utils.stateless.functional_call``: PyTorch's deprecated name for
``tensorplug.func.functional_call`` (provided by the tensorplug-batched plugin)."""

from __future__ import annotations

import warnings
from typing import Any

import tensorplug

from ...errors import MissingPluginError

__all__ = ["functional_call"]


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``tensorplug.func.functional_call`` (warns, as PyTorch's ``stateless`` version does)."""
    warnings.warn(
        "This API is deprecated as of PyTorch 2.0 and will be removed in a future version of "
        "PyTorch. Please use tensorplug.func.functional_call instead which is a drop-in "
        "replacement.",
        FutureWarning,
        stacklevel=2,
    )
    func = vars(tensorplug).get("func")
    if func is None:
        raise MissingPluginError(
            "functional_call is provided by the tensorplug-batched plugin: pip install "
            "tensorplug-batched",
            distribution="tensorplug-batched",
        )
    return func.functional_call(
        module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict
    )
