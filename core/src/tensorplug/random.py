"""Random number generators: ``Generator``, ``manual_seed`` and the default generators.

A :class:`Generator` is backend-neutral: it holds a seed and, per backend, the state of that
backend's own random number generator (a ``numpy.random.Generator`` for CPU, a cupy one for
CUDA). The core never imports numpy: backends create their state lazily through
:meth:`Generator.backend_state`, from the seed, so reseeding is only forgetting states.

Ops that draw random numbers (``rand``, ``randn``, ``randint``, ``randperm``, ``normal``,
``bernoulli``, ``multinomial``, the fills ``uniform_``, ``normal_``...; ``dropout`` through
them) use their ``generator=`` argument, or the default generator of the device type.
Reseeding makes draws reproducible per backend: the same seed gives the same numbers on the
same backend, not across backends (as in PyTorch, where CPU and CUDA streams differ).

Usage::

    import tensorplug as tp
    tp.manual_seed(0)                            # every default generator
    g = tp.Generator().manual_seed(42)           # a private stream
    tp.rand(3, generator=g)
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from . import _backends
from . import dtypes as _dtypes
from .device import device as Device
from .tensor import Tensor

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

# PyTorch's default CPU seed, so an unseeded process starts from a fixed, documented state.
DEFAULT_SEED = 67280421310721
_MASK64 = (1 << 64) - 1


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        try:
            seed = int(seed.__index__())
        except AttributeError:
            raise TypeError(f"manual_seed expected an int, got {type(seed).__name__}") from None
    if not -(1 << 63) <= seed <= _MASK64:
        raise RuntimeError(
            f"Overflow when unpacking long long: seed must be within [-2**63, 2**64), got {seed}"
        )
    return int(seed) & _MASK64


class Generator:
    """A seeded random stream for one device type (``Generator(device="cpu")``)."""

    def __init__(self, device: str | Device = "cpu") -> None:
        self.device = Device(device) if not isinstance(device, Device) else device
        self._seed = DEFAULT_SEED
        self._states: dict[str, Any] = {}
        # backend key -> the bit generator state set_rng_state restored, applied to the
        # backend's state object when it is made (the core cannot make numpy's itself)
        self._pending: dict[str, Any] = {}
        self._lock = threading.Lock()

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; returns ``self`` (so ``Generator().manual_seed(0)`` chains)."""
        s = _check_seed(seed)
        with self._lock:
            self._seed = s
            self._states.clear()
            self._pending.clear()
        return self

    def initial_seed(self) -> int:
        """The seed the stream started from."""
        return self._seed

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def get_state(self) -> Any:
        """A snapshot of the stream, for :meth:`set_state` (``torch.Generator.get_state``).

        Unlike PyTorch's, the snapshot is an opaque Python object (the seed and a copy of each
        backend's state), not a byte tensor: it restores this process's streams, and is not a
        format to save."""
        with self._lock:
            return (self._seed, copy.deepcopy(self._states), copy.deepcopy(self._pending))

    def set_state(self, state: Any) -> Generator:
        """Restore a snapshot of :meth:`get_state`; returns ``self``."""
        seed, states, *pending = state
        with self._lock:
            self._seed = seed
            self._states = copy.deepcopy(states)
            self._pending = copy.deepcopy(pending[0]) if pending else {}
        return self

    def _state_bytes(self) -> bytes:
        """The stream as bytes (what ``get_rng_state`` returns as a uint8 tensor): the seed and
        each backend's bit generator state, as JSON. A backend whose random state has no
        numpy-style ``bit_generator.state`` cannot be saved this way."""
        with self._lock:
            states = dict(self._pending)
            for key, st in self._states.items():
                bits = getattr(st, "bit_generator", None)
                if bits is None or not isinstance(getattr(bits, "state", None), dict):
                    raise RuntimeError(
                        f"get_rng_state: the random state of the {key} backend "
                        f"({type(st).__name__}) has no bit_generator.state to save; use "
                        "Generator.get_state() for an in-process snapshot"
                    )
                states[key] = bits.state
            return json.dumps({"seed": self._seed, "states": states}).encode()

    def _set_state_bytes(self, data: bytes) -> None:
        try:
            got = json.loads(data.decode())
            seed, states = int(got["seed"]), dict(got["states"])
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            raise RuntimeError(
                "set_rng_state: the tensor is not an RNG state of tensorplug.get_rng_state() "
                f"({len(data)} bytes that do not decode as one)"
            ) from None
        with self._lock:
            self._seed = seed
            self._states = {}
            self._pending = states

    def backend_state(self, key_name: str, make: Callable[[int], Any]) -> Any:
        """This stream's state on backend ``key_name``, created by ``make(seed)`` on first use.

        The state object belongs to the backend (it advances it in place); reseeding the
        generator drops it, so the next draw starts over from the new seed.
        """
        state = self._states.get(key_name)
        if state is None:
            with self._lock:
                state = self._states.get(key_name)
                if state is None:
                    state = make(self._seed)
                    saved = self._pending.pop(key_name, None)
                    if saved is not None:  # restored by set_rng_state
                        state.bit_generator.state = saved
                    self._states[key_name] = state
        return state

    def __repr__(self) -> str:
        return f"<tensorplug.Generator device={self.device} seed={self._seed}>"


_defaults: dict[str, Generator] = {}
_defaults_lock = threading.Lock()
_default_seed = DEFAULT_SEED  # what default generators created later start from


def default_generator(device_type: str = "cpu") -> Generator:
    """The default generator of ``device_type``, created on first use."""
    g = _defaults.get(device_type)
    if g is None:
        with _defaults_lock:
            g = _defaults.get(device_type)
            if g is None:
                g = Generator(device_type).manual_seed(_default_seed)
                _defaults[device_type] = g
    return g


def manual_seed(seed: int) -> Generator:
    """Reseed every default generator (of every device type); returns the CPU one."""
    global _default_seed
    s = _check_seed(seed)
    cpu = default_generator("cpu")
    with _defaults_lock:
        _default_seed = s
        gens = list(_defaults.values())
    for g in gens:
        g.manual_seed(s)
    return cpu


def seed() -> int:
    """Reseed every default generator from the operating system's entropy."""
    s = default_generator("cpu").seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The initial seed of the default CPU generator."""
    return default_generator("cpu").initial_seed()


def get_rng_state() -> Tensor:
    """The default CPU generator's state as a 1-D uint8 tensor (``torch.get_rng_state``):
    :func:`set_rng_state` with it makes the same draws again. Its bytes are tensorplug's own
    (JSON of the seed and numpy's bit generator state), not PyTorch's 5056-byte Mersenne
    Twister state."""
    data = default_generator("cpu")._state_bytes()
    cpu = Device("cpu")
    t: Tensor = _backends.for_device_type("cpu").from_python(list(data), _dtypes.uint8, cpu)
    return t


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default CPU generator's state from :func:`get_rng_state`'s tensor."""
    if not isinstance(new_state, Tensor) or new_state.dtype is not _dtypes.uint8:
        raise TypeError("RNG state must be a tensorplug.ByteTensor (a uint8 tensor)")
    default_generator("cpu")._set_state_bytes(bytes(new_state.tolist()))


@contextlib.contextmanager
def fork_rng(
    devices: Any = None, enabled: bool = True, device_type: str | None = None
) -> Iterator[None]:
    """Restore the default generators' states on exit (``torch.random.fork_rng``): the CPU
    one always, and ``device_type``'s (every device type whose default generator exists when
    None). Generators are per device type here, so ``devices`` (indices) selects nothing
    finer; it is accepted for PyTorch's signature."""
    if not enabled or device_type == "meta":
        yield
        return
    with _defaults_lock:
        types = {"cpu", *(_defaults if device_type is None else (device_type,))}
    saved = [(g, g.get_state()) for g in (default_generator(t) for t in sorted(types))]
    try:
        yield
    finally:
        for g, state in saved:
            g.set_state(state)
