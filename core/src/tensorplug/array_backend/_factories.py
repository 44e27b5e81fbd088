"""Factory kernels: zeros, ones, empty, full, arange, linspace, logspace, eye, tril_indices,
triu_indices, rand, randn, randint, randperm; and the random ops beside them: normal, bernoulli,
multinomial and the in-place fills bernoulli_, uniform_, normal_, exponential_, random_.

Factories reach a backend through ``BackendSelect`` with ``device=`` already naming it. Default
dtypes follow PyTorch: the default floating dtype, except ``arange`` with integer arguments and
``randint`` (int64) and ``full``, whose dtype follows the fill value (bool, int64, default
float, default complex). Random factories draw from ``generator`` or the device type's default
generator (``tensorplug.random``), through the backend's own random state
(:meth:`tensorplug.random.Generator.backend_state`).

Note [Factory fast path]
~~~~~~~~~~~~~~~~~~~~~~~~
``zeros``, ``ones``, ``empty`` and ``full`` first try the common call: a dtype the backend
stores natively, a device it has seen before (``Kit.device`` interns devices, so one dict
lookup finds it), no device context to enter (CPU), and for ``full`` a finite float or int that
fits the floating dtype. Then the array is made with one call (``ones`` and ``full`` as
``empty`` + ``fill``, what ``np.ones``/``np.full`` do below their Python layer) and wrapped. A
negative size makes the array library refuse; the general path then raises PyTorch's message.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from .. import dtypes as _dt
from .. import random as _random
from ..device import canonical
from ..device import device as Device
from ..tensor import Tensor
from ._kit import (
    Kernels,
    Kit,
    OpError,
    Scalar,
    check_broadcast,
    check_fits,
    check_sizes,
    scalar_dtype,
    torch_name,
)


def build(kit: Kit) -> Kernels:
    xp = kit.xp
    k: Kernels = {}
    ks = kit.keyset

    def target(dtype: _dt.dtype | None, device: str | Device | None) -> tuple[_dt.dtype, Device]:
        d = _dt.get_default_dtype() if dtype is None else dtype
        kit.check_dtype(d)
        return d, kit.device(canonical(device))

    def make(fn: Any, shape: tuple[int, ...], d: _dt.dtype, dev: Device) -> Tensor:
        with kit.on(dev):
            if d in kit.native:
                arr = fn(shape, dtype=kit.storage[d])
            else:
                arr = kit.cast(fn(shape, dtype=kit.compute[d]), kit.storage[d])
        return kit.new(arr, d, dev, ks)

    # Note [Factory fast path]
    new = kit.new
    default_dtype = _dt.get_default_dtype
    seen_device = kit.interned_device
    fast_store = {d: kit.storage[d] for d in kit.native} if kit.device_context is None else {}
    fill = getattr(kit.array_type, "fill", None)
    xp_zeros, xp_empty = xp.zeros, xp.empty
    # floating dtype -> the largest finite value ``full`` may write without a check
    fmax = {d: float(_dt.finfo(d).max) for d in fast_store if d.kind == "f"}

    def quick(
        fn: Any, size: Sequence[int], dtype: _dt.dtype | None, device: Any, value: Any = None
    ) -> Tensor | None:
        """The array ``fn(size)`` (filled with ``value`` if given) on the fast path, or None."""
        d = default_dtype() if dtype is None else dtype
        xd = fast_store.get(d)
        dev = seen_device(device)
        if xd is None or dev is None:
            return None
        try:
            arr = fn(size, dtype=xd)
        except (ValueError, TypeError):  # a negative size: the general path's message
            return None
        if value is not None:
            fill(arr, value)  # type: ignore[misc]
        return new(arr, d, dev, ks)

    def zeros(
        size: Sequence[int],
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        r = quick(xp_zeros, size, dtype, device)
        if r is not None:
            return r
        d, dev = target(dtype, device)
        return make(xp.zeros, check_sizes(size), d, dev)

    def ones(
        size: Sequence[int],
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if fill is not None:
            r = quick(xp_empty, size, dtype, device, 1)
            if r is not None:
                return r
        d, dev = target(dtype, device)
        return make(xp.ones, check_sizes(size), d, dev)

    def empty(
        size: Sequence[int],
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
        memory_format: Any = None,
    ) -> Tensor:
        r = quick(xp_empty, size, dtype, device)
        if r is not None:
            return r
        d, dev = target(dtype, device)
        return make(xp.empty, check_sizes(size), d, dev)

    def full(
        size: Sequence[int],
        fill_value: Scalar,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if fill is not None and type(fill_value) is float:
            top = fmax.get(default_dtype() if dtype is None else dtype)
            if top is not None and -top <= fill_value <= top:  # finite, and no overflow check
                r = quick(xp_empty, size, dtype, device, fill_value)
                if r is not None:
                    return r
        d, dev = target(scalar_dtype(fill_value) if dtype is None else dtype, device)
        shape = check_sizes(size)
        check_fits(fill_value, d)
        arr = kit.fill_array(shape, fill_value, d, dev)
        return kit.new(arr, d, dev, ks)

    k["zeros"] = zeros
    k["ones"] = ones
    k["empty.memory_format"] = empty
    k["full"] = full

    # --- ranges --------------------------------------------------------------------------

    def arange_start_step(
        start: Scalar,
        end: Scalar,
        step: Scalar = 1,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        all_int = all(isinstance(x, int) for x in (start, end, step))
        if dtype is None:
            dtype = _dt.int64 if all_int else _dt.get_default_dtype()
        d, dev = target(dtype, device)
        real: list[int | float] = []
        for x in (start, end, step):
            if isinstance(x, complex):
                raise OpError("arange does not support complex arguments")
            if not math.isfinite(x):
                raise OpError(f"unsupported range: {start} -> {end}")
            real.append(x)
        lo, hi, st = real
        integral = d.kind in "ui"
        n_given: int | None = None
        if integral and not all_int:
            # an integer dtype first converts start, end and step toward zero, as PyTorch
            # (arange(-2.5, 2, dtype=int64) is [-2, -1, 0, 1]); int64 counts its elements
            # from the converted values, the narrower types (as PyTorch's) from the given ones
            if d is not _dt.int64 and int(st):
                n_given = math.ceil((hi - lo) / st)
            lo, hi, st = int(lo), int(hi), int(st)
        if st == 0:
            raise OpError("step must be nonzero")
        if (st > 0 and hi < lo) or (st < 0 and hi > lo):
            raise OpError("upper bound and larger bound inconsistent with step sign")
        if n_given is not None:
            n = max(0, n_given)
        elif isinstance(lo, int) and isinstance(hi, int) and isinstance(st, int):
            n = max(0, -(-(hi - lo) // st))
        else:
            n = max(0, math.ceil((hi - lo) / st))
        with kit.on(dev):
            if integral:
                arr = xp.arange(lo, lo + n * st, st, dtype=kit.storage[_dt.int64])[:n]
            else:
                acc = kit.compute[_dt.float64] if _dt.float64 in kit.compute else kit.compute[d]
                arr = xp.arange(n, dtype=acc) * st + lo
        return kit.wrap(arr, d, dev)

    def arange(
        end: Scalar,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        return arange_start_step(0, end, 1, dtype=dtype, device=device)

    def linspace(
        start: Scalar,
        end: Scalar,
        steps: int,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if steps < 0:
            raise OpError("number of steps must be non-negative")
        if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
            dtype = _dt.get_default_dtype().to_complex()
        d, dev = target(dtype, device)
        acc_d = _dt.complex128 if d.kind == "c" else _dt.float64
        acc = kit.compute[acc_d] if acc_d in kit.compute else kit.compute[d]
        with kit.on(dev):
            if steps == 1:
                arr = xp.full((1,), start, dtype=acc)
            else:
                # PyTorch's symmetric formula: the first half counts up from start, the second
                # half down from end, so both ends are exact
                i = xp.arange(steps, dtype=acc)
                step = (end - start) / (steps - 1)
                half = steps // 2
                arr = xp.where(i < half, start + step * i, end - step * (steps - 1 - i))
        if d.kind in "ui":
            arr = xp.trunc(xp.real(arr)) if acc_d is _dt.complex128 else xp.trunc(arr)
        return kit.wrap(arr, d, dev)

    def logspace(
        start: Scalar,
        end: Scalar,
        steps: int,
        base: float = 10.0,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if steps < 0:
            raise OpError("number of steps must be non-negative")
        if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
            dtype = _dt.get_default_dtype().to_complex()
        d, dev = target(dtype, device)
        if d.kind == "b":
            raise NotImplementedError("aten::logspace: \"logspace_cpu\" not implemented for 'Bool'")
        acc = kit.compute[_dt.complex128 if d.kind == "c" else _dt.float64]
        with kit.on(dev), kit.quiet():
            # base ** linspace's exponents (its symmetric formula); integers truncate the
            # double result and wrap around, as PyTorch's cast
            i = xp.arange(steps, dtype=acc)
            step = (end - start) / (steps - 1) if steps > 1 else 0.0
            half = steps // 2 if steps > 1 else 1  # one step: start
            e = xp.where(i < half, start + step * i, end - step * (steps - 1 - i))
            arr = xp.asarray(base, dtype=acc) ** e
            if d.kind in "ui":
                arr = kit.cast(xp.trunc(xp.real(arr)), kit.storage[_dt.int64])
        return kit.wrap(arr, d, dev)

    def eye_m(
        n: int,
        m: int,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        if n < 0:
            raise OpError(f"n must be greater or equal to 0, got {n}")
        if m < 0:
            raise OpError(f"m must be greater or equal to 0, got {m}")
        d, dev = target(dtype, device)
        with kit.on(dev):
            arr = xp.eye(n, m, dtype=kit.compute[d])
        return kit.wrap(arr, d, dev)

    def eye(
        n: int,
        *,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        return eye_m(n, n, dtype=dtype, device=device)

    def triangle_indices(name: str, lower: bool) -> Any:
        def kernel(
            row: int,
            col: int,
            offset: int = 0,
            *,
            dtype: _dt.dtype | None = None,
            layout: Any = None,
            device: str | Device | None = None,
            pin_memory: bool | None = None,
        ) -> Tensor:
            if row < 0:
                raise OpError(f"row must be non-negative, got{row}")
            if col < 0:
                raise OpError(f"col must be non-negative, got{col}")
            d = _dt.int64 if dtype is None else dtype  # PyTorch's default here is long
            if d not in (_dt.int32, _dt.int64):
                raise NotImplementedError(f'"{name}" not implemented for \'{torch_name(d)}\'')
            dev = kit.device(canonical(device))
            with kit.on(dev):
                r, c = xp.tril_indices(row, offset, col) if lower else xp.triu_indices(row, offset, col)
                arr = xp.stack([r, c]) if row and col else xp.zeros((2, 0), dtype=kit.storage[d])
            return kit.wrap(kit.cast(arr, kit.storage[d]), d, dev)

        return kernel

    k["arange"] = arange
    k["arange.start_step"] = arange_start_step
    k["linspace"] = linspace
    k["logspace"] = logspace
    k["eye"] = eye
    k["eye.m"] = eye_m
    k["tril_indices"] = triangle_indices("tril_indices", True)
    k["triu_indices"] = triangle_indices("triu_indices", False)

    # --- random --------------------------------------------------------------------------

    def rng(generator: _random.Generator | None, dev: Device) -> Any:
        g = generator if generator is not None else _random.default_generator(dev.type)
        return g.backend_state(kit.key_name, kit.make_rng)

    def real_dtype(d: _dt.dtype) -> Any:
        r = d.to_real()
        return kit.storage[_dt.float64] if r is _dt.float64 else kit.storage[_dt.float32]

    def draw(gen: Any, how: str, shape: tuple[int, ...], d: _dt.dtype, dev: Device) -> Any:
        with kit.on(dev):
            xd = real_dtype(d)
            method = getattr(gen, how)
            if d.kind == "c":
                re, im = method(shape, dtype=xd), method(shape, dtype=xd)
                if how == "standard_normal":
                    re, im = re / math.sqrt(2), im / math.sqrt(2)
                arr = re + 1j * im
            else:
                arr = method(shape, dtype=xd)
        return kit.from_rng(arr, dev)

    def random_float(name: str, how: str) -> Any:
        def kernel(
            size: Sequence[int],
            *,
            generator: _random.Generator | None = None,
            dtype: _dt.dtype | None = None,
            layout: Any = None,
            device: str | Device | None = None,
            pin_memory: bool | None = None,
        ) -> Tensor:
            d, dev = target(dtype, device)
            if d.kind not in "fc":
                raise OpError(f"\"{name}\" not implemented for '{torch_name(d)}'")
            shape = check_sizes(size)
            return kit.wrap(draw(rng(generator, dev), how, shape, d, dev), d, dev)

        return kernel

    k["rand"] = random_float("check_uniform_bounds", "random")
    k["randn"] = random_float("normal_kernel_cpu", "standard_normal")

    def randint_low(
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
        d, dev = target(_dt.int64 if dtype is None else dtype, device)
        if low >= high:
            raise OpError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        shape = check_sizes(size)
        if d.kind in "ui":
            check_fits(low, d, wrap_unsigned=False)
            check_fits(high - 1, d, wrap_unsigned=False)
        gen = rng(generator, dev)
        with kit.on(dev):
            arr = gen.integers(low, high, size=shape, dtype=kit.storage[_dt.int64])
        return kit.wrap(kit.from_rng(arr, dev), d, dev)

    def randint(
        high: int,
        size: Sequence[int],
        *,
        generator: _random.Generator | None = None,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        return randint_low(0, high, size, generator=generator, dtype=dtype, device=device)

    k["randint"] = randint
    k["randint.low"] = randint_low

    # --- random: permutations, normal with tensor moments, sampling from tensors -----------
    # PyTorch checks the distribution's parameters before the dtype (normal_ with std=-1 on a
    # Long tensor complains about std); a dtype it does not sample is NotImplementedError.

    def refuse(op: str, kernel: str, d: _dt.dtype) -> NotImplementedError:
        return NotImplementedError(f"aten::{op}: \"{kernel}\" not implemented for '{torch_name(d)}'")

    def check_std(std: float) -> None:
        if not std >= 0.0:  # NaN too
            raise OpError(f"normal expects std >= 0.0, but found std {std:g}")

    def uniform(generator: _random.Generator | None, shape: tuple[int, ...], dev: Device) -> Any:
        with kit.on(dev):
            return kit.from_rng(rng(generator, dev).random(shape), dev)  # float64 in [0, 1)

    # the largest n whose permutation a floating dtype holds exactly (PyTorch's wording)
    perm_limits = {_dt.float16: (2049, "2049", "Half"), _dt.float32: (2**24 + 1, "2^24+1", "Float"),
                   _dt.float64: (2**53 + 1, "2^53+1", "Double")}  # fmt: skip

    def randperm(
        n: int,
        *,
        generator: _random.Generator | None = None,
        dtype: _dt.dtype | None = None,
        layout: Any = None,
        device: str | Device | None = None,
        pin_memory: bool | None = None,
    ) -> Tensor:
        d, dev = target(_dt.int64 if dtype is None else dtype, device)  # PyTorch: long
        check_sizes([n])
        if d.kind in "bc":
            raise refuse("randperm", "randperm", d)
        limit = perm_limits.get(d)
        if limit is not None and n > limit[0]:
            raise OpError(f"n cannot be greater than {limit[1]} for {limit[2]} type.")
        if d.kind in "ui" and n:
            check_fits(n - 1, d, wrap_unsigned=False)
        gen = rng(generator, dev)
        with kit.on(dev):
            arr = gen.permutation(n)
        return kit.wrap(kit.from_rng(arr, dev), d, dev)

    def normal_sample(
        mean: Any, std: Any, shape: tuple[int, ...], d: _dt.dtype, dev: Device, generator: Any
    ) -> Tensor:
        z = draw(rng(generator, dev), "standard_normal", shape, d, dev)
        return kit.wrap(z * std + mean, d, dev)

    def normal_float_float(
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
        d, dev = target(dtype, device)
        if d.kind != "f":
            raise refuse("normal", "normal_kernel_cpu", d)
        return normal_sample(mean, std, check_sizes(size), d, dev, generator)

    def check_std_tensor(std: Tensor, d: _dt.dtype) -> Any:
        s = kit.operand(std, d, std._device)
        if not bool(xp.all(s >= 0)):  # NaN fails too
            raise OpError("normal expects all elements of std >= 0.0")
        return s

    def normal_tensor_float(
        mean: Tensor, std: float = 1.0, *, generator: _random.Generator | None = None
    ) -> Tensor:
        check_std(std)
        d, dev = mean._dtype, mean._device
        if d.kind != "f":
            raise refuse("normal", "normal_kernel_cpu", d)
        m = kit.operand(mean, d, dev)
        return normal_sample(m, std, tuple(m.shape), d, dev, generator)

    def normal_float_tensor(
        mean: float, std: Tensor, *, generator: _random.Generator | None = None
    ) -> Tensor:
        d, dev = std._dtype, std._device
        if d.kind != "f":
            raise refuse("normal", "normal_kernel_cpu", d)
        s = check_std_tensor(std, d)
        return normal_sample(mean, s, tuple(s.shape), d, dev, generator)

    def normal_tensor_tensor(
        mean: Tensor, std: Tensor, *, generator: _random.Generator | None = None
    ) -> Tensor:
        d, dev = mean._dtype, mean._device  # the result has mean's dtype, as PyTorch
        for t in (mean, std):
            if t._dtype.kind != "f":
                raise refuse("normal", "normal_kernel_cpu", t._dtype)
        kit.same_device(mean, std)
        shape = check_broadcast(tuple(mean._data.shape), tuple(std._data.shape))
        s = check_std_tensor(std, d)
        return normal_sample(kit.operand(mean, d, dev), s, shape, d, dev, generator)

    k["randperm"] = randperm
    k["normal.float_float"] = normal_float_float
    k["normal.Tensor_float"] = normal_tensor_float
    k["normal.float_Tensor"] = normal_float_tensor
    k["normal.Tensor_Tensor"] = normal_tensor_tensor

    def bernoulli(self: Tensor, *, generator: _random.Generator | None = None) -> Tensor:
        d, dev = self._dtype, self._device
        if d.kind != "f":
            raise refuse("bernoulli", "bernoulli_tensor_cpu_p_", d)
        p = kit.operand(self, _dt.float64, dev)
        if not bool(xp.all((p >= 0) & (p <= 1))):
            raise OpError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)"
            )
        return kit.wrap(uniform(generator, tuple(p.shape), dev) < p, d, dev)

    def bernoulli_draw(self: Tensor, p: float, generator: Any) -> Any:
        if not 0 <= p <= 1:
            raise OpError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        if self._dtype.kind == "c":
            raise refuse("bernoulli", "bernoulli_scalar_cpu_", self._dtype)
        return uniform(generator, tuple(self._data.shape), self._device) < p

    def bernoulli_p(
        self: Tensor, p: float, *, generator: _random.Generator | None = None
    ) -> Tensor:
        return kit.wrap(bernoulli_draw(self, p, generator), self._dtype, self._device)

    def fill_with(self: Tensor, arr: Any) -> Tensor:
        self._data[...] = kit.cast(arr, kit.storage[self._dtype])
        return self

    def bernoulli_float_(
        self: Tensor, p: float = 0.5, *, generator: _random.Generator | None = None
    ) -> Tensor:
        return fill_with(self, bernoulli_draw(self, p, generator))

    def uniform_(
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
        u = uniform(generator, tuple(self._data.shape), self._device)
        return fill_with(self, u * (to - from_) + from_)

    def normal_(
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
        z = draw(rng(generator, dev), "standard_normal", tuple(self._data.shape), d, dev)
        return fill_with(self, z * std + mean)

    def exponential_(
        self: Tensor, lambd: float = 1.0, *, generator: _random.Generator | None = None
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
            e = kit.from_rng(rng(generator, dev).standard_exponential(tuple(self._data.shape)), dev)
        return fill_with(self, e / lambd)

    k["bernoulli"] = bernoulli
    k["bernoulli.p"] = bernoulli_p
    k["bernoulli_.float"] = bernoulli_float_
    k["uniform_"] = uniform_
    k["normal_"] = normal_
    k["exponential_"] = exponential_

    # random_: integers drawn uniformly from [from, to); without ``to``, up to the largest
    # value the dtype holds (for floating dtypes, the largest 2^digits below which every
    # integer is exact). PyTorch's messages name the C++ types.
    c_names = {_dt.bool: "bool", _dt.uint8: "unsigned char", _dt.int8: "signed char",
               _dt.int16: "short", _dt.int32: "int", _dt.int64: "long", _dt.float16: "c10::Half",
               _dt.bfloat16: "c10::BFloat16", _dt.float32: "float", _dt.float64: "double"}  # fmt: skip
    exact_digits = {_dt.float16: 11, _dt.bfloat16: 8, _dt.float32: 24, _dt.float64: 53}

    def dtype_range(d: _dt.dtype) -> tuple[float, float]:
        if d.kind == "b":
            return 0, 1
        if d.kind in "ui":
            info = _dt.iinfo(d)
            return info.min, info.max
        fmax = _dt.finfo(d).max
        return -fmax, fmax

    def random_fill(self: Tensor, low: int, high_inc: int, generator: Any) -> Tensor:
        d, dev = self._dtype, self._device
        if d.kind == "c":
            raise refuse("random_", "random_kernel_cpu", d)
        with kit.on(dev):
            arr = rng(generator, dev).integers(
                low, high_inc, size=tuple(self._data.shape), dtype=kit.storage[_dt.int64],
                endpoint=True,
            )
        return fill_with(self, kit.from_rng(arr, dev))

    def largest(d: _dt.dtype) -> int:
        digits = exact_digits.get(d)
        return 2**digits if digits is not None else int(dtype_range(d)[1])

    def random_from(
        self: Tensor, from_: int, to: int | None, *, generator: _random.Generator | None = None
    ) -> Tensor:
        d = self._dtype
        lo, hi = dtype_range(d)
        if to is None:
            if not lo <= from_ <= hi:
                raise OpError(f"from is out of bounds for {c_names.get(d, d.name)}")
            to_inc = largest(d)
            if from_ > to_inc:
                raise OpError(
                    "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                    f"casted to dtype, but got from={from_} > to_inc={to_inc}"
                )
            return random_fill(self, from_, to_inc, generator)
        if from_ >= to:
            raise OpError(
                f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}"
            )
        for value, what in ((from_, "from"), (to - 1, "to - 1")):
            if not lo <= value <= hi:
                raise OpError(f"{what} is out of bounds for {c_names.get(d, d.name)}")
            digits = exact_digits.get(d)
            if digits is not None and not -(2**digits) <= value <= 2**digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {c_names[d]} can support discrete uniform distribution only "
                    "within this range. This warning will become an error in version 1.7 "
                    "release, please fix the code in advance",
                    UserWarning,
                    stacklevel=2,
                )
        return random_fill(self, from_, to - 1, generator)

    def random_to(
        self: Tensor, to: int, *, generator: _random.Generator | None = None
    ) -> Tensor:
        return random_from(self, 0, to, generator=generator)

    def random_default(self: Tensor, *, generator: _random.Generator | None = None) -> Tensor:
        return random_fill(self, 0, largest(self._dtype), generator)

    k["random_.from"] = random_from
    k["random_.to"] = random_to
    k["random_"] = random_default

    def multinomial(
        self: Tensor,
        num_samples: int,
        replacement: bool = False,
        *,
        generator: _random.Generator | None = None,
    ) -> Tensor:
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
            raise OpError(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
            )
        if n_cat > 2**24:
            raise OpError("number of categories cannot exceed 2^24")
        rows = xp.reshape(p, (-1, n_cat))
        if rows.shape[0] and not bool(xp.all(xp.isfinite(rows) & (rows >= 0))):
            raise OpError("probability tensor contains either `inf`, `nan` or element < 0")
        if rows.shape[0] and not bool(xp.all(xp.sum(rows, axis=-1) > 0)):
            raise OpError("invalid multinomial distribution (sum of probabilities <= 0)")
        gen = rng(generator, dev)
        with kit.on(dev):
            if replacement:
                # inverse CDF; dividing by the total makes the last edge exactly 1
                cdf = xp.cumsum(rows, axis=-1)
                cdf = cdf / cdf[:, -1:]
                u = kit.from_rng(gen.random((rows.shape[0], num_samples)), dev)
                picks = [xp.searchsorted(cdf[r], u[r], side="right") for r in range(rows.shape[0])]
                out = xp.stack(picks) if picks else xp.zeros((0, num_samples), dtype=xp.int64)
            else:
                # PyTorch's algorithm: the num_samples largest p / E with E ~ Exp(1), which
                # draws without replacement in proportion to p; zero-probability categories
                # come last, in any order
                e = kit.from_rng(gen.standard_exponential(rows.shape), dev)
                out = xp.argsort(-(rows / e), axis=-1, stable=True)[:, :num_samples]
        out = xp.reshape(out, (*p.shape[:-1], num_samples))
        return kit.wrap(out, _dt.int64, dev)

    k["multinomial"] = multinomial
    return k
