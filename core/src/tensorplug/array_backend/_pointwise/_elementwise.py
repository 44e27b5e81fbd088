"""The builders of elementwise kernels: binary and unary ops, their in-place and ``out=``
forms, and the dtype rules they share. ``_binary``, ``_unary`` and ``_where`` call them
once per op at registration; each builder returns nothing and puts its kernels in ``k``.

Note [Binary fast path]
~~~~~~~~~~~~~~~~~~~~~~~
``tp.add(a, b)`` on small tensors is dominated by Python overhead, and it is the benchmark of
the whole stack (DESIGN §10). The kernel of a binary op therefore first tries the common case in
a handful of attribute reads, cheapest tests first: both operands have the same dtype and live
on the same (interned) device (two ``is``), that dtype is computed natively (Note [Storage and
compute dtypes] in _kit.py; one dict membership) and alpha is 1. It then calls the array
function once and wraps the result with ``new_tensor`` (Note [Cheap tensors] in tensor.py) in
the operands' dtype, or the op's output dtype (comparisons: bool); no promotion, no cast, no
dict built, no method call. Everything else (mixed dtypes, bfloat16, alpha, 0-dim CPU tensors
with another device) takes the general path, which computes the result dtype with
``tensorplug.dtypes.result_type``. These kernels catch their own errors
(Note [Kernel errors] in _checks.py), and they turn numpy's broadcasting error into PyTorch's.

The same shortcut serves the other forms of the op, each time exactly where the general path
would make the same array call on the same operands:

* ``.Scalar`` (``t * 0.5``, ``t > 0``): a Python float or int with a floating tensor, or an int
  in the dtype's range with an integer tensor, keeps the tensor's dtype and goes to the array
  function as it is (numpy >= 2 and the array API treat Python scalars as weak), so the fast
  path passes it straight through; a float with an integer tensor, a bool, a complex, or an
  int out of range (PyTorch wraps it) takes the general path;
* in place (``p.sub_(g, alpha=lr)``, ``p.mul_(0.5)``): same dtype, then ``f(a, b, out=a)``
  with ``b`` scaled by alpha first as the general path does. ``b`` may broadcast to ``a``'s
  shape (the array library computes as if the operands did not overlap, as the general path's
  copy does); where the array library refuses (an operand that would broadcast ``self``, a
  read-only broadcast view), the general path runs and raises PyTorch's error;
* ops that can make inf or nan (division, powers) run between ``kit.hush()`` and
  ``kit.unhush()`` (Note [Quiet arithmetic] in _kit.py) instead of leaving the fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ..._opset.overlap import overlap_error, partially_overlap
from ...tensor import Tensor
from .._kit import (
    _CONVERTED,
    Kernels,
    Kit,
    OpError,
    Scalar,
    check_broadcast,
    check_fits,
    convert_error,
    guarded,
    lowers,
    torch_name,
)
from ._rules import Check, Rule, check_alpha, keeps, same, shape_error


def _scalar_bounds(native: frozenset[_dt.dtype]) -> dict[_dt.dtype, tuple[bool, float, float]]:
    """dtype -> (whether a Python float passes, smallest and largest Python int that passes):
    the scalars a fast path hands to the array function as they are (Note [Binary fast path])."""
    inf = float("inf")
    bounds: dict[_dt.dtype, tuple[bool, float, float]] = {}
    for d in native:
        if d.kind == "f":
            bounds[d] = (True, -inf, inf)
        elif d.kind in "ui":
            info = _dt.iinfo(d)
            bounds[d] = (False, info.min, info.max)
    return bounds


def general(
    kit: Kit,
    qual: str,
    f: Callable[..., Any],
    rule: Rule,
    self: Tensor,
    other: Tensor | Scalar,
    alpha: Scalar = 1,
    *,
    out_rule: Rule | None = None,
    quiet: bool = False,
    check: Check | None = None,
) -> tuple[Any, _dt.dtype]:
    """The general binary path: (result array in compute dtype, result dtype)."""
    if check is not None:
        check(self, other)
    device = self._device
    promoted = kit.result_dtype(self, other)
    cd = rule(promoted)
    kit.check_dtype(cd)
    a = kit.operand(self, cd, device)
    if isinstance(other, Tensor):
        b = kit.operand(other, cd, device)
    else:
        b = kit.scalar(other, cd)
    if alpha != 1:
        check_alpha(alpha, cd)
        check_fits(alpha, cd)  # as PyTorch: alpha=300 for int8 is an error, not a wrap
        b = b * kit.scalar(alpha, cd)
    if quiet:
        with kit.quiet():
            r = f(a, b)
    else:
        r = f(a, b)
    return r, (out_rule(cd) if out_rule is not None else cd)


def binary(
    kit: Kit,
    k: Kernels,
    name: str,
    f: Callable[..., Any],
    *,
    rule: Rule = same,
    out_rule: Rule | None = None,
    fast_kinds: str = "buifc",
    alpha: bool = False,
    scalar: bool = True,
    inplace: bool = True,
    out: bool = False,
    reverse: bool = False,
    quiet: bool = False,
    overload: str = "Tensor",
    ufunc: Callable[..., Any] | None = None,
    check: Check | None = None,
) -> None:
    """Register ``name.<overload>`` (and ``.Scalar``, ``_.Tensor``, ``_.Scalar``, ``.out``).

    ``ufunc`` is ``f`` as an array function taking ``out=``, for the in-place fast path.
    ``check`` sees the operands (a tensor, a tensor or Python scalar) before the general
    path computes anything: for refusals that depend on more than the promoted dtype; the
    fast paths must not admit what it refuses.
    """
    alloc = object.__new__
    ks = kit.keyset
    arr_t = kit.array_type
    asarray = kit.xp.asarray
    native = kit.native
    hush = kit.hush
    unhush = kit.unhush
    key_name = kit.key_name
    scalar_bounds = _scalar_bounds(native)
    # dtype -> output dtype of the fast path (Note [Binary fast path])
    fast = {d: (out_rule or same)(d) for d in native if d.kind in fast_kinds and keeps(rule, d)}
    # dtype -> (output dtype, whether floats pass, int bounds) for Python scalar operands
    sfast = {d: (od, *scalar_bounds[d]) for d, od in fast.items() if d in scalar_bounds}
    keeps_dtype = out_rule is None  # the result has the operands' dtype: no lookup
    qual_t = f"aten::{name}.{overload}" if overload else f"aten::{name}"

    def slow(self: Tensor, other: Tensor | Scalar, alpha: Scalar, qual: str) -> Tensor:
        try:
            r, od = general(
                kit, qual, f, rule, self, other, alpha, out_rule=out_rule, quiet=quiet, check=check
            )
            return kit.wrap(r, od, self._device)
        except _CONVERTED as e:
            raise shape_error(qual, e, self, other, key=key_name) from e

    def call(a: Any, b: Any, qual: str, self: Tensor, other: Tensor | Scalar) -> Any:
        """``f(a, b)`` of the fast path, quiet where the op is, errors converted."""
        try:
            if quiet:
                token = hush()
                try:
                    r = f(a, b)
                finally:
                    unhush(token)
            else:
                r = f(a, b)
        except _CONVERTED as e:
            raise shape_error(qual, e, self, other, key=key_name) from e
        return r if type(r) is arr_t else asarray(r)

    if alpha and not quiet:
        # alpha is not keyword-only: a caller may pass it by position, which is cheaper (Note
        # [Positional calls below autograd] in tensorplug_autograd/codegen.py)
        def binary(self: Tensor, other: Tensor, alpha: Scalar = 1) -> Tensor:
            d = self._dtype
            dev = self._device
            if d is other._dtype and dev is other._device and d in fast and alpha == 1:
                try:
                    r = f(self._data, other._data)
                except _CONVERTED as e:
                    raise shape_error(qual_t, e, self, other, key=key_name) from e
                if type(r) is not arr_t:
                    r = asarray(r)
                t = alloc(Tensor)  # new_tensor inline (Note [Cheap tensors] in tensor.py)
                t._data = r
                t._dtype = d if keeps_dtype else fast[d]
                t._device = dev
                t._tp_keyset = ks
                t._vc = None
                return t
            return slow(self, other, alpha, qual_t)

    elif not quiet:

        def binary(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]
            d = self._dtype
            dev = self._device
            if d is other._dtype and dev is other._device and d in fast:
                try:
                    r = f(self._data, other._data)
                except _CONVERTED as e:
                    raise shape_error(qual_t, e, self, other, key=key_name) from e
                if type(r) is not arr_t:
                    r = asarray(r)
                t = alloc(Tensor)  # new_tensor inline (Note [Cheap tensors] in tensor.py)
                t._data = r
                t._dtype = d if keeps_dtype else fast[d]
                t._device = dev
                t._tp_keyset = ks
                t._vc = None
                return t
            return slow(self, other, 1, qual_t)

    else:
        assert not alpha, "a quiet op with alpha needs the alpha test of the fast path"

        def binary(self: Tensor, other: Tensor) -> Tensor:  # type: ignore[misc]
            d = self._dtype
            dev = self._device
            if d is other._dtype and dev is other._device and d in fast:
                r = call(self._data, other._data, qual_t, self, other)
                t = alloc(Tensor)  # new_tensor inline (Note [Cheap tensors] in tensor.py)
                t._data = r
                t._dtype = d if keeps_dtype else fast[d]
                t._device = dev
                t._tp_keyset = ks
                t._vc = None
                return t
            return slow(self, other, 1, qual_t)

    def quiet_f(a: Any, b: Any) -> Any:
        token = hush()
        try:
            return f(a, b)
        finally:
            unhush(token)

    raw_f = quiet_f if quiet else f

    def lower_binary(self: Any, other: Any, alpha: Scalar = 1) -> Any:
        """Note [Raw lowerings]: the fast path's ``f(a, b)`` (an array from numpy as long as
        an operand has a dimension)."""
        d = self.dtype
        if d is not other.dtype or self.device != other.device or d not in fast or alpha != 1:
            return None
        if self.shape or other.shape:
            return raw_f, ks
        return (lambda a, b: asarray(raw_f(a, b))), ks

    key = f"{name}.{overload}" if overload else name
    k[key] = lowers(kit, guarded(binary), lower_binary)

    if scalar:
        qual_s = f"aten::{name}.Scalar"

        def binary_scalar(self: Tensor, other: Scalar, alpha: Scalar = 1) -> Tensor:
            spec = sfast.get(self._dtype)
            if spec is not None and alpha == 1:
                t = type(other)
                if (t is float and spec[1]) or (type(other) is int and spec[2] <= other <= spec[3]):
                    if quiet:
                        r = call(self._data, other, qual_s, self, other)
                    else:  # call() inline
                        try:
                            r = f(self._data, other)
                        except _CONVERTED as e:
                            raise shape_error(qual_s, e, self, other, key=key_name) from e
                        if type(r) is not arr_t:
                            r = asarray(r)
                    out = alloc(Tensor)  # new_tensor inline (Note [Cheap tensors] in tensor.py)
                    out._data = r
                    out._dtype = spec[0]
                    out._device = self._device
                    out._tp_keyset = ks
                    out._vc = None
                    return out
            return slow(self, other, alpha, qual_s)

        k[f"{name}.Scalar"] = guarded(binary_scalar)

    if reverse:  # rsub.Scalar / rdiv.Scalar: other OP self
        qual_r = f"aten::r{name}.Scalar"

        def binary_reverse(self: Tensor, other: Scalar, alpha: Scalar = 1) -> Tensor:
            try:
                if check is not None:
                    check(self, other)
                cd = rule(kit.result_dtype(self, other))
                kit.check_dtype(cd)
                a = kit.as_compute(self, cd)
                if alpha != 1:
                    check_alpha(alpha, cd)
                    a = a * kit.scalar(alpha, cd)
                with kit.quiet():
                    r = f(kit.scalar(other, cd), a)
                return kit.wrap(r, out_rule(cd) if out_rule else cd, self._device)
            except _CONVERTED as e:
                raise convert_error(qual_r, e, kit.key_name) from e

        k[f"r{name}.Scalar"] = guarded(binary_reverse)

    if inplace:

        def make_inplace(qual: str) -> Callable[..., Tensor]:
            def inplace_kernel(self: Tensor, other: Tensor | Scalar, alpha: Scalar = 1) -> Tensor:
                try:
                    r, od = general(
                        kit,
                        qual,
                        f,
                        rule,
                        self,
                        other,
                        alpha,
                        out_rule=out_rule,
                        quiet=quiet,
                        check=check,
                    )
                    write_result(kit, self, r, od, in_place=True)
                    return self
                except _CONVERTED as e:
                    raise shape_error(qual, e, self, other, key=key_name) from e

            return inplace_kernel

        ip_t = make_inplace(f"aten::{name}_.Tensor")
        ip_s = make_inplace(f"aten::{name}_.Scalar")
        # in place: the result must have self's dtype (Note [Binary fast path])
        ipfast = (
            frozenset(d for d, od in fast.items() if od is d)
            if ufunc is not None and kit.writes_out
            else frozenset()
        )
        g = ufunc

        def write(a: Any, b: Any, o: Any) -> bool:
            """``o = g(a, b)`` in place; False where the array library refuses."""
            try:
                if quiet:
                    token = hush()
                    try:
                        g(a, b, out=o)  # type: ignore[misc]
                    finally:
                        unhush(token)
                else:
                    g(a, b, out=o)  # type: ignore[misc]
            except _CONVERTED:
                return False
            return True

        # the dtypes whose fast path takes a Python alpha: ``b * alpha`` keeps b's float dtype
        ipalpha = frozenset(d for d in ipfast if d.kind == "f")

        # alpha by position too, as ``binary``'s
        if quiet:

            def binary_inplace(self: Tensor, other: Tensor, alpha: Scalar = 1) -> Tensor:
                d = self._dtype
                base = getattr(other._data, "base", None)  # Note [Memory overlap]
                if base is not None and overlaps(self._data, other._data, base):
                    raise overlap_error(f"aten::{name}_.Tensor")
                if d is other._dtype and self._device is other._device:
                    if alpha == 1:
                        if d in ipfast and write(self._data, other._data, self._data):
                            return self
                    elif d in ipalpha and (type(alpha) is float or type(alpha) is int):
                        if write(self._data, other._data * alpha, self._data):
                            return self
                return ip_t(self, other, alpha)

        else:  # the same, with ``write`` inline (SGD's ``p.sub_(g, alpha=lr)``)

            def binary_inplace(self: Tensor, other: Tensor, alpha: Scalar = 1) -> Tensor:
                d = self._dtype
                base = getattr(other._data, "base", None)  # Note [Memory overlap]
                if base is not None and overlaps(self._data, other._data, base):
                    raise overlap_error(f"aten::{name}_.Tensor")
                if d is other._dtype and self._device is other._device:
                    if alpha == 1:
                        if d not in ipfast:
                            return ip_t(self, other, alpha)
                        b = other._data
                    elif d in ipalpha and (type(alpha) is float or type(alpha) is int):
                        b = other._data * alpha
                    else:
                        return ip_t(self, other, alpha)
                    a = self._data
                    try:
                        g(a, b, out=a)  # type: ignore[misc]
                        return self
                    except _CONVERTED:
                        pass
                return ip_t(self, other, alpha)

        def binary_inplace_scalar(self: Tensor, other: Scalar, alpha: Scalar = 1) -> Tensor:
            d = self._dtype
            spec = sfast.get(d)
            if spec is not None and d in ipfast and alpha == 1:
                t = type(other)
                if (t is float and spec[1]) or (type(other) is int and spec[2] <= other <= spec[3]):
                    if write(self._data, other, self._data):
                        return self
            return ip_s(self, other, alpha)

        def lower_inplace(self: Any, other: Any, alpha: Scalar = 1) -> Any:
            """Note [Raw lowerings]: the fast path's write; the kernel where the library
            refuses it (a read-only array)."""
            d = self.dtype
            dev = self.device
            if d is not other.dtype or dev != other.device:
                return None
            if alpha == 1:
                if d not in ipfast:
                    return None
                scale = None
            elif d in ipalpha and (type(alpha) is float or type(alpha) is int):
                scale = alpha
            else:
                return None
            kernel = k[f"{name}_.Tensor"]

            def inplace_arrays(a: Any, b: Any) -> None:
                base = getattr(b, "base", None)  # Note [Memory overlap]
                if base is not None and overlaps(a, b, base):
                    raise overlap_error(f"aten::{name}_.Tensor")
                if not write(a, b if scale is None else b * scale, a):
                    kernel(kit.new(a, d, dev, ks), kit.new(b, d, dev, ks), alpha)

            return inplace_arrays, ks

        # (ops without alpha never receive one: alpha stays 1)
        k[f"{name}_.Tensor"] = lowers(kit, guarded(binary_inplace), lower_inplace)
        k[f"{name}_.Scalar"] = guarded(binary_inplace_scalar)

    if out:
        qual_o = f"aten::{name}.out"

        def binary_out(self: Tensor, other: Tensor, *, alpha: Scalar = 1, out: Tensor) -> Tensor:
            d = self._dtype
            o = out._data
            for x in (self._data, other._data):  # Note [Memory overlap]
                base = getattr(x, "base", None)
                if base is not None and overlaps(o, x, base):
                    raise overlap_error(qual_o)
            if (
                inplace
                and alpha == 1
                and d in ipfast
                and d is other._dtype
                and d is out._dtype
                and self._device is other._device
                and self._device is out._device
            ):
                # one dtype, one shape: the array function writes into out itself
                # (a broadcast or a resized out takes the general path)
                o = out._data
                if self._data.shape == o.shape and other._data.shape == o.shape:
                    if write(self._data, other._data, o):
                        return out
            try:
                r, od = general(
                    kit,
                    qual_o,
                    f,
                    rule,
                    self,
                    other,
                    alpha,
                    out_rule=out_rule,
                    quiet=quiet,
                    check=check,
                )
                write_result(kit, out, r, od, in_place=False)
                return out
            except _CONVERTED as e:
                raise shape_error(qual_o, e, self, other, key=key_name) from e

        if not alpha:

            def binary_out_noalpha(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
                return binary_out(self, other, out=out)

            k[f"{name}.out"] = guarded(binary_out_noalpha)
        else:
            k[f"{name}.out"] = guarded(binary_out)


def overlaps(a: Any, b: Any, b_base: Any) -> bool:
    """Whether ``a`` (written) partially overlaps ``b`` (read), whose ``base`` is ``b_base``:
    a pointer compare first (arrays of different buffers never overlap), the address ranges
    only for views of one buffer (Note [Memory overlap] in _opset/overlap.py)."""
    if b_base is not a and b_base is not getattr(a, "base", None):
        return False
    return partially_overlap(a, b)


def write_result(kit: Kit, dst: Tensor, r: Any, od: _dt.dtype, *, in_place: bool) -> None:
    """Write result ``r`` (dtype ``od``) into ``dst``: in place, or as an ``out=``."""
    check_cast(od, dst)
    shape = tuple(r.shape) if hasattr(r, "shape") else ()
    dshape = tuple(dst._data.shape)
    if shape == dshape:
        if 0 in shape:  # nothing to write (and dask refuses a[...] = v with a 0-length dim)
            return
        kit.assign(dst._data, kit.cast(kit.xp.asarray(r), kit.storage[dst._dtype]))
    elif in_place:
        raise OpError(
            f"output with shape {list(dshape)} doesn't match the broadcast shape {list(shape)}"
        )
    else:  # out= of another shape is resized, as PyTorch does
        dst._data = kit.cast(kit.xp.asarray(r), kit.storage[dst._dtype])


def check_cast(od: _dt.dtype, dst: Tensor) -> None:
    if not _dt.can_cast(od, dst._dtype):
        raise OpError(
            f"result type {torch_name(od)} can't be cast to the desired output type "
            f"{torch_name(dst._dtype)}"
        )


def check_inplace_shape(self: Tensor, *args: Any) -> None:
    """PyTorch's first check of an in-place op: the operands broadcast to self's shape."""
    shapes = [tuple(a._data.shape) for a in args if isinstance(a, Tensor)]
    if shapes:
        mine = tuple(self._data.shape)
        shape = check_broadcast(mine, *shapes)
        if shape != mine:
            raise OpError(
                f"output with shape {list(mine)} doesn't match the broadcast shape {list(shape)}"
            )


def unary(
    kit: Kit,
    k: Kernels,
    name: str,
    f: Callable[[Any], Any],
    *,
    rule: Rule = same,
    out_rule: Rule | None = None,
    quiet: bool = False,
    reject: str = "",
) -> None:
    """Register ``name``: ``f`` on the data, in the dtype ``rule`` gives (``out_rule``: the
    result's); a native dtype ``rule`` keeps takes the fast path of Note [Binary fast path];
    ``reject``: kinds refused by name; ``quiet``: Note [Quiet arithmetic]."""
    alloc = object.__new__
    ks = kit.keyset
    arr_t = kit.array_type
    asarray = kit.xp.asarray
    native = kit.native
    hush = kit.hush
    unhush = kit.unhush
    fast = {d: (out_rule or same)(d) for d in native if keeps(rule, d) and d.kind not in reject}
    get_fast = fast.get

    def unary(self: Tensor) -> Tensor:
        d = self._dtype
        od = get_fast(d)
        if od is not None:
            if quiet:  # Note [Quiet arithmetic] in _kit.py
                token = hush()
                try:
                    r = f(self._data)
                finally:
                    unhush(token)
            else:
                r = f(self._data)
            if type(r) is not arr_t:
                r = asarray(r)
            t = alloc(Tensor)  # new_tensor inline (Note [Cheap tensors] in tensor.py)
            t._data = r
            t._dtype = od
            t._device = self._device
            t._tp_keyset = ks
            t._vc = None
            return t
        if d.kind in reject:
            if name == "relu" and d.kind == "b":  # PyTorch's words for relu
                raise OpError("Boolean inputs not supported for relu")
            raise OpError(f"\"{name}\" not implemented for '{torch_name(d)}'")
        cd = rule(d)
        kit.check_dtype(cd)
        with kit.quiet():
            r = f(kit.as_compute(self, cd))
        return kit.wrap(r, (out_rule or same)(cd), self._device)

    k[name] = unary


def inplace(
    kit: Kit,
    k: Kernels,
    name: str,
    functional: str,
    check: Callable[..., None] | None = None,
    promoted: bool = False,
) -> None:
    """``name`` (``exp_``) as ``functional`` (``exp``) written into ``self``, with PyTorch's
    checks in its order: the op's own argument checks (``check``), the broadcast shape
    against self's, whether the promoted dtype of the tensors casts to self's (``promoted``:
    before the op, which may refuse that dtype), the op, then the cast of its result. The
    functional kernel raises unnamed errors (OpError), so they name ``aten::<name>``."""
    f = k[functional]

    def inplace(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if check is not None:
            check(self, *args, **kwargs)
        check_inplace_shape(self, *args, *kwargs.values())
        if promoted:
            check_cast(kit.result_dtype(self, *(a for a in args if isinstance(a, Tensor))), self)
        r = f(self, *args, **kwargs)
        write_result(kit, self, r._data, r._dtype, in_place=True)
        return self

    k[name] = inplace
