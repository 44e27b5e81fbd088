"""Exception types of the core. Each carries the context its message names."""

from __future__ import annotations

__all__ = ["DispatchError", "LinAlgError", "RegistrationError", "MissingPluginError"]


class DispatchError(NotImplementedError):
    """No kernel for the key a call dispatched to (DESIGN §4).

    Attributes: ``op`` (``"ns::op.overload"``), ``key`` (the key name), ``available`` (the
    registration keys that do have a kernel).
    """

    def __init__(self, message: str, *, op: str, key: str, available: list[str]) -> None:
        super().__init__(message)
        self.op = op
        self.key = key
        self.available = available


class RegistrationError(RuntimeError):
    """A definition, kernel or fallback that cannot be registered as asked."""


class MissingPluginError(RuntimeError):
    """A feature that only a plugin which is not installed (or not loaded) provides.

    ``distribution`` is what to ``pip install``.
    """

    def __init__(self, message: str, *, distribution: str) -> None:
        super().__init__(message)
        self.distribution = distribution


class LinAlgError(RuntimeError):
    """A linear algebra function met a matrix it cannot factor or invert (singular, not
    positive-definite): ``torch.linalg.LinAlgError``, public as ``tensorplug.linalg.LinAlgError``.
    Raised by ``linalg.inv``, ``linalg.cholesky``, ``linalg.solve`` and the ``*_ex`` operators
    with ``check_errors=True``; the message is PyTorch's, after the operator's name."""
