"""Random kernels: the factories rand, randn, randint, randperm; normal, bernoulli,
multinomial; and the in-place fills bernoulli_, uniform_, normal_, exponential_, random_.

They draw from ``generator`` or the device type's default generator (``tensorplug.random``),
through the backend's own random state (:meth:`tensorplug.random.Generator.backend_state`).
The factories among them reach a backend through ``BackendSelect``, as those of
``_factories`` do, with the same default dtypes (the default floating dtype; ``randint`` and
``randperm``: int64).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from .. import random as _random
from ..device import device as Device
from ..tensor import Tensor
from ._factories import target
from ._kit import (
    Kernels,
    Kit,
    OpError,
    bind,
    check_broadcast,
    check_fits,
    check_sizes,
    cpp_name,
    torch_name,
)

# the largest n whose permutation a floating dtype holds exactly (PyTorch's wording)
_PERM_LIMITS = {_dt.float16: (2049, "2049", "Half"), _dt.float32: (2**24 + 1, "2^24+1", "Float"),
               _dt.float64: (2**53 + 1, "2^53+1", "Double")}  # fmt: skip
# the names of the C++ types in PyTorch's messages; the digits of floating dtypes (random_)
_C_NAMES = {_dt.bool: "bool", _dt.uint8: "unsigned char", _dt.int8: "signed char",
           _dt.int16: "short", _dt.int32: "int", _dt.int64: "long", _dt.float16: "c10::Half",
           _dt.bfloat16: "c10::BFloat16", _dt.float32: "float", _dt.float64: "double"}  # fmt: skip
_EXACT_DIGITS = {_dt.float16: 11, _dt.bfloat16: 8, _dt.float32: 24, _dt.float64: 53}


def rng(kit: Kit, generator: _random.Generator | None, dev: Device) -> Any:
    g = generator if generator is not None else _random.default_generator(dev.type)
    return g.backend_state(kit.key_name, kit.make_rng)


def real_dtype(kit: Kit, d: _dt.dtype) -> Any:
    rng_dtype = kit.rng_dtype
    r = d.to_real()
    return rng_dtype(_dt.float64 if r is _dt.float64 else _dt.float32)


def draw(kit: Kit, gen: Any, how: str, shape: tuple[int, ...], d: _dt.dtype, dev: Device) -> Any:
    with kit.on(dev):
        xd = real_dtype(kit, d)
        method = getattr(gen, how)
        if d.kind == "c":
            re, im = method(shape, dtype=xd), method(shape, dtype=xd)
            if how == "standard_normal":
                re, im = re / math.sqrt(2), im / math.sqrt(2)
            arr = re + 1j * im
        else:
            arr = method(shape, dtype=xd)
    return kit.from_rng(arr, dev)


def random_float(
    kit: Kit,
    name: str,
    how: str,
    size: Sequence[int],
    generator: _random.Generator | None,
    dtype: _dt.dtype | None,
    device: str | Device | None,
) -> Tensor:
    """``rand`` and ``randn``: floats drawn by the generator's method ``how``; ``name`` is
    PyTorch's kernel in the message for other dtypes."""
    d, dev = target(kit, dtype, device)
    if d.kind not in "fc":
        raise OpError(f"\"{name}\" not implemented for '{torch_name(d)}'")
    shape = check_sizes(size)
    return kit.wrap(draw(kit, rng(kit, generator, dev), how, shape, d, dev), d, dev)


def rand(
    kit: Kit,
    size: Sequence[int],
    *,
    generator: _random.Generator | None = None,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    return random_float(kit, "check_uniform_bounds", "random", size, generator, dtype, device)


def randn(
    kit: Kit,
    size: Sequence[int],
    *,
    generator: _random.Generator | None = None,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    return random_float(kit, "normal_kernel_cpu", "standard_normal", size, generator, dtype, device)


def randint_low(
    kit: Kit,
    low: int,
    high: int,
    size: Sequence[int],
    *,
    generator: _random.Generator | None = None,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    rng_dtype = kit.rng_dtype
    d, dev = target(kit, _dt.int64 if dtype is None else dtype, device)
    if low >= high:
        raise OpError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    shape = check_sizes(size)
    if d.kind in "ui":
        check_fits(low, d, wrap_unsigned=False)
        check_fits(high - 1, d, wrap_unsigned=False)
    gen = rng(kit, generator, dev)
    with kit.on(dev):
        arr = gen.integers(low, high, size=shape, dtype=rng_dtype(_dt.int64))
    return kit.wrap(kit.from_rng(arr, dev), d, dev)


def randint(
    kit: Kit,
    high: int,
    size: Sequence[int],
    *,
    generator: _random.Generator | None = None,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    return randint_low(kit, 0, high, size, generator=generator, dtype=dtype, device=device)


# --- random: permutations, normal with tensor moments, sampling from tensors -----------
# PyTorch checks the distribution's parameters before the dtype (normal_ with std=-1 on a
# Long tensor complains about std); a dtype it does not sample is NotImplementedError.


def refuse(op: str, kernel: str, d: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f"aten::{op}: \"{kernel}\" not implemented for '{torch_name(d)}'")


def check_std(std: float) -> None:
    if not std >= 0.0:  # NaN too
        raise OpError(f"normal expects std >= 0.0, but found std {std:g}")


def uniform(
    kit: Kit, generator: _random.Generator | None, shape: tuple[int, ...], dev: Device
) -> Any:
    with kit.on(dev):
        return kit.from_rng(rng(kit, generator, dev).random(shape), dev)  # float64 in [0, 1)


def randperm(
    kit: Kit,
    n: int,
    *,
    generator: _random.Generator | None = None,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    d, dev = target(kit, _dt.int64 if dtype is None else dtype, device)  # PyTorch: long
    check_sizes([n])
    if d.kind in "bc":
        raise refuse("randperm", "randperm", d)
    limit = _PERM_LIMITS.get(d)
    if limit is not None and n > limit[0]:
        raise OpError(f"n cannot be greater than {limit[1]} for {limit[2]} type.")
    if d.kind in "ui" and n:
        check_fits(n - 1, d, wrap_unsigned=False)
    gen = rng(kit, generator, dev)
    with kit.on(dev):
        arr = gen.permutation(n)
    return kit.wrap(kit.from_rng(arr, dev), d, dev)


def normal_sample(
    kit: Kit, mean: Any, std: Any, shape: tuple[int, ...], d: _dt.dtype, dev: Device, generator: Any
) -> Tensor:
    z = draw(kit, rng(kit, generator, dev), "standard_normal", shape, d, dev)
    return kit.wrap(z * std + mean, d, dev)


def normal_float_float(
    kit: Kit,
    mean: float,
    std: float,
    size: Sequence[int],
    *,
    generator: _random.Generator | None = None,
    dtype: _dt.dtype | None = None,
    layout: Any = None,
    device: str | Device | None = None,
    pin_memory: bool | None = None,
) -> Tensor:
    check_std(std)
    d, dev = target(kit, dtype, device)
    if d.kind != "f":
        raise refuse("normal", "normal_kernel_cpu", d)
    return normal_sample(kit, mean, std, check_sizes(size), d, dev, generator)


def check_std_tensor(kit: Kit, std: Tensor, d: _dt.dtype) -> Any:
    xp = kit.xp
    s = kit.operand(std, d, std._device)
    if not bool(xp.all(s >= 0)):  # NaN fails too
        raise OpError("normal expects all elements of std >= 0.0")
    return s


def normal_tensor_float(
    kit: Kit, mean: Tensor, std: float = 1.0, *, generator: _random.Generator | None = None
) -> Tensor:
    check_std(std)
    d, dev = mean._dtype, mean._device
    if d.kind != "f":
        raise refuse("normal", "normal_kernel_cpu", d)
    m = kit.operand(mean, d, dev)
    return normal_sample(kit, m, std, tuple(m.shape), d, dev, generator)


def normal_float_tensor(
    kit: Kit, mean: float, std: Tensor, *, generator: _random.Generator | None = None
) -> Tensor:
    d, dev = std._dtype, std._device
    if d.kind != "f":
        raise refuse("normal", "normal_kernel_cpu", d)
    s = check_std_tensor(kit, std, d)
    return normal_sample(kit, mean, s, tuple(s.shape), d, dev, generator)


def normal_tensor_tensor(
    kit: Kit, mean: Tensor, std: Tensor, *, generator: _random.Generator | None = None
) -> Tensor:
    d, dev = mean._dtype, mean._device  # the result has mean's dtype, as PyTorch
    for t in (mean, std):
        if t._dtype.kind != "f":
            raise refuse("normal", "normal_kernel_cpu", t._dtype)
    kit.same_device(mean, std)
    shape = check_broadcast(tuple(mean._data.shape), tuple(std._data.shape))
    s = check_std_tensor(kit, std, d)
    return normal_sample(kit, kit.operand(mean, d, dev), s, shape, d, dev, generator)


def bernoulli(kit: Kit, self: Tensor, *, generator: _random.Generator | None = None) -> Tensor:
    xp = kit.xp
    d, dev = self._dtype, self._device
    if d.kind != "f":
        raise refuse("bernoulli", "bernoulli_tensor_cpu_p_", d)
    p = kit.operand(self, _dt.float64, dev)
    if not bool(xp.all((p >= 0) & (p <= 1))):
        raise OpError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    return kit.wrap(uniform(kit, generator, tuple(p.shape), dev) < p, d, dev)


def bernoulli_draw(kit: Kit, self: Tensor, p: float, generator: Any) -> Any:
    if not 0 <= p <= 1:
        raise OpError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self._dtype.kind == "c":
        raise refuse("bernoulli", "bernoulli_scalar_cpu_", self._dtype)
    return uniform(kit, generator, tuple(self._data.shape), self._device) < p


def bernoulli_p(
    kit: Kit, self: Tensor, p: float, *, generator: _random.Generator | None = None
) -> Tensor:
    return kit.wrap(bernoulli_draw(kit, self, p, generator), self._dtype, self._device)


def fill_with(kit: Kit, self: Tensor, arr: Any) -> Tensor:
    kit.assign(self._data, kit.cast(arr, kit.storage[self._dtype]))
    return self


def bernoulli_float_(
    kit: Kit, self: Tensor, p: float = 0.5, *, generator: _random.Generator | None = None
) -> Tensor:
    return fill_with(kit, self, bernoulli_draw(kit, self, p, generator))


def uniform_(
    kit: Kit,
    self: Tensor,
    from_: float = 0.0,
    to: float = 1.0,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    d = self._dtype
    if d.kind != "f":
        raise refuse("uniform_", "check_uniform_bounds", d)
    if from_ > to:
        raise OpError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}"
        )
    u = uniform(kit, generator, tuple(self._data.shape), self._device)
    return fill_with(kit, self, u * (to - from_) + from_)


def normal_(
    kit: Kit,
    self: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    check_std(std)
    d, dev = self._dtype, self._device
    if d.kind != "f":
        raise refuse("normal_", "normal_kernel_cpu", d)
    z = draw(kit, rng(kit, generator, dev), "standard_normal", tuple(self._data.shape), d, dev)
    return fill_with(kit, self, z * std + mean)


def exponential_(
    kit: Kit, self: Tensor, lambd: float = 1.0, *, generator: _random.Generator | None = None
) -> Tensor:
    if not lambd > 0.0:
        raise OpError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    d, dev = self._dtype, self._device
    if d.kind != "f":
        raise OpError(
            "Exponential distribution is a continuous probability distribution. dtype must "
            f"be a floating point but you specified {torch_name(d)}"
        )
    with kit.on(dev):
        e = kit.from_rng(
            rng(kit, generator, dev).standard_exponential(tuple(self._data.shape)), dev
        )
    return fill_with(kit, self, e / lambd)


# --- cauchy_, log_normal_, geometric_ (issue 29): inverse CDFs of uniform draws -------------


def _continuous(name: str, d: _dt.dtype) -> None:
    if d.kind != "f":
        cname = cpp_name(d) if d.kind == "c" else _C_NAMES.get(d, str(d))
        if d is _dt.int64:
            cname = "long int"  # PyTorch prints the C++ type of int64_t on Linux
        raise OpError(
            f"{name} distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {cname}"
        )


def cauchy_(
    kit: Kit,
    self: Tensor,
    median: float = 0.0,
    sigma: float = 1.0,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    if not sigma > 0.0:
        raise OpError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous("Cauchy", self._dtype)
    u = uniform(kit, generator, tuple(self._data.shape), self._device)
    with kit.quiet():
        return fill_with(kit, self, median + sigma * kit.xp.tan(math.pi * (u - 0.5)))


def log_normal_(
    kit: Kit,
    self: Tensor,
    mean: float = 1.0,
    std: float = 2.0,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    if not std > 0.0:
        raise OpError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    d, dev = self._dtype, self._device
    if d.kind != "f":
        raise refuse("log_normal_", "log_normal_cpu", d)
    z = draw(kit, rng(kit, generator, dev), "standard_normal", tuple(self._data.shape), d, dev)
    with kit.quiet():
        return fill_with(kit, self, kit.xp.exp(z * std + mean))


def geometric_(
    kit: Kit, self: Tensor, p: float, *, generator: _random.Generator | None = None
) -> Tensor:
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...), in any real
    dtype but bool; integer dtypes wrap as PyTorch's cast does."""
    if not 0.0 < p < 1.0:
        raise OpError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    d = self._dtype
    if d.kind in "bc":
        raise refuse("geometric_", "geometric_cpu", d)
    xp = kit.xp
    u = uniform(kit, generator, tuple(self._data.shape), self._device)
    with kit.quiet():  # 1 - u lies in (0, 1]: log never sees 0
        k = xp.ceil(xp.log(1.0 - u) / math.log1p(-p))
        k = xp.where(k < 1.0, 1.0, k)
    if d.kind in "ui":
        k = kit.cast(k, kit.storage[_dt.int64])  # then wrapped into self's dtype
    return fill_with(kit, self, k)


# random_: integers drawn uniformly from [from, to); without ``to``, up to the largest
# value the dtype holds (for floating dtypes, the largest 2^digits below which every
# integer is exact). PyTorch's messages name the C++ types.


def dtype_range(d: _dt.dtype) -> tuple[float, float]:
    if d.kind == "b":
        return 0, 1
    if d.kind in "ui":
        info = _dt.iinfo(d)
        return info.min, info.max
    fmax = _dt.finfo(d).max
    return -fmax, fmax


def random_fill(kit: Kit, self: Tensor, low: int, high_inc: int, generator: Any) -> Tensor:
    rng_dtype = kit.rng_dtype
    d, dev = self._dtype, self._device
    if d.kind == "c":
        raise refuse("random_", "random_kernel_cpu", d)
    with kit.on(dev):
        arr = rng(kit, generator, dev).integers(
            low,
            high_inc,
            size=tuple(self._data.shape),
            dtype=rng_dtype(_dt.int64),
            endpoint=True,
        )
    return fill_with(kit, self, kit.from_rng(arr, dev))


def largest(d: _dt.dtype) -> int:
    digits = _EXACT_DIGITS.get(d)
    return 2**digits if digits is not None else int(dtype_range(d)[1])


def random_from(
    kit: Kit,
    self: Tensor,
    from_: int,
    to: int | None,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    d = self._dtype
    lo, hi = dtype_range(d)
    if to is None:
        if not lo <= from_ <= hi:
            raise OpError(f"from is out of bounds for {_C_NAMES.get(d, d.name)}")
        to_inc = largest(d)
        if from_ > to_inc:
            raise OpError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                f"casted to dtype, but got from={from_} > to_inc={to_inc}"
            )
        return random_fill(kit, self, from_, to_inc, generator)
    if from_ >= to:
        raise OpError(
            f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}"
        )
    for value, what in ((from_, "from"), (to - 1, "to - 1")):
        if not lo <= value <= hi:
            raise OpError(f"{what} is out of bounds for {_C_NAMES.get(d, d.name)}")
        digits = _EXACT_DIGITS.get(d)
        if digits is not None and not -(2**digits) <= value <= 2**digits:
            warnings.warn(
                f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                f"limitations {_C_NAMES[d]} can support discrete uniform distribution only "
                "within this range. This warning will become an error in version 1.7 "
                "release, please fix the code in advance",
                UserWarning,
                stacklevel=2,
            )
    return random_fill(kit, self, from_, to - 1, generator)


def random_to(
    kit: Kit, self: Tensor, to: int, *, generator: _random.Generator | None = None
) -> Tensor:
    return random_from(kit, self, 0, to, generator=generator)


def random_default(kit: Kit, self: Tensor, *, generator: _random.Generator | None = None) -> Tensor:
    return random_fill(kit, self, 0, largest(self._dtype), generator)


def multinomial(
    kit: Kit,
    self: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    xp = kit.xp
    d, dev = self._dtype, self._device
    if d.kind != "f":
        raise OpError(
            f"multinomial only supports floating-point dtypes for input, got: {torch_name(d)}"
        )
    p = kit.operand(self, _dt.float64, dev)
    if p.ndim not in (1, 2):
        raise OpError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise OpError("cannot sample n_sample <= 0 samples")
    n_cat = p.shape[-1]
    if not replacement and num_samples > n_cat:
        raise OpError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_cat > 2**24:
        raise OpError("number of categories cannot exceed 2^24")
    rows = xp.reshape(p, (-1, n_cat))
    if rows.shape[0] and not bool(xp.all(xp.isfinite(rows) & (rows >= 0))):
        raise OpError("probability tensor contains either `inf`, `nan` or element < 0")
    if rows.shape[0] and not bool(xp.all(xp.sum(rows, axis=-1) > 0)):
        raise OpError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = rng(kit, generator, dev)
    with kit.on(dev):
        if replacement:
            # inverse CDF; dividing by the total makes the last edge exactly 1
            cdf = xp.cumulative_sum(rows, axis=-1)
            cdf = cdf / cdf[:, -1:]
            u = kit.from_rng(gen.random((rows.shape[0], num_samples)), dev)  # float64
            cdf = kit.cast(cdf, u.dtype)  # what numpy's searchsorted compares in
            picks = [
                xp.searchsorted(cdf[r, :], u[r, :], side="right") for r in range(rows.shape[0])
            ]
            out = (
                xp.stack(picks)
                if picks
                else xp.zeros((0, num_samples), dtype=kit.storage[_dt.int64])
            )
        else:
            # PyTorch's algorithm: the num_samples largest p / E with E ~ Exp(1), which
            # draws without replacement in proportion to p; zero-probability categories
            # come last, in any order
            e = kit.from_rng(gen.standard_exponential(rows.shape), dev)
            out = xp.argsort(-(rows / e), axis=-1, stable=True)[:, :num_samples]
    out = xp.reshape(out, (*p.shape[:-1], num_samples))
    return kit.wrap(out, _dt.int64, dev)


# --- poisson: a count drawn for each rate ------------------------------------------------------


def poisson(kit: Kit, self: Tensor, generator: _random.Generator | None = None) -> Tensor:
    """Counts drawn from Poisson distributions of the rates ``self``, in its floating dtype.
    The rates go to the generator where it lives (the host, for a backend drawing there)."""
    xp = kit.xp
    d, dev = self._dtype, self._device
    if d.kind != "f":
        raise refuse("poisson", "poisson_cpu", d)
    lam = kit.operand(self, _dt.float64, dev)
    if 0 in tuple(lam.shape):
        return kit.wrap(kit.copy(self._data), d, dev)
    if not bool(xp.all(lam >= 0)):
        raise OpError("invalid Poisson rate, expected rate to be non-negative")
    gen = rng(kit, generator, dev)
    on_host = kit.from_rng is kit.from_host_array
    with kit.on(dev):
        counts = gen.poisson(kit.to_host(lam) if on_host else lam)
    return kit.wrap(kit.from_rng(counts, dev), d, dev)


KERNELS: dict[str, Callable[..., Any]] = {
    "rand": rand,
    "randn": randn,
    "randint": randint,
    "randint.low": randint_low,
    "randperm": randperm,
    "normal.float_float": normal_float_float,
    "normal.Tensor_float": normal_tensor_float,
    "normal.float_Tensor": normal_float_tensor,
    "normal.Tensor_Tensor": normal_tensor_tensor,
    "bernoulli": bernoulli,
    "bernoulli.p": bernoulli_p,
    "bernoulli_.float": bernoulli_float_,
    "uniform_": uniform_,
    "normal_": normal_,
    "exponential_": exponential_,
    "cauchy_": cauchy_,
    "log_normal_": log_normal_,
    "geometric_": geometric_,
    "random_.from": random_from,
    "random_.to": random_to,
    "random_": random_default,
    "multinomial": multinomial,
    "poisson": poisson,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
