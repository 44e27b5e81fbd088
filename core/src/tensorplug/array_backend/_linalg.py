"""Matrix products: mm, bmm, matmul, addmm, dot; linear_backward, linear's three gradients
(Note [Backward kernel fast paths] in _backward.py); and ``tensorplug::linear_forward``,
linear's value in one kernel (Note [Linear forward]).

PyTorch does not promote here: both operands must have the same dtype, and the shape checks
name the operands the way ATen does ("mat1 and mat2 shapes cannot be multiplied (2x3 and
4x5)"). Half precision multiplies in float32 and rounds once (Note [Storage and compute
dtypes] in _kit.py).

Note [Matrix product fast path]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A training step's matrix products are small (64x128 @ 128x10), so the checks and casts around
``xp.matmul`` cost as much as the product. ``mm``, ``matmul`` and ``addmm`` first take the
common case: operands of one natively computed dtype on one (interned) device, 2-D, inner sizes
equal; for ``addmm`` also ``beta == alpha == 1`` and a bias shaped like a row or like the
product. Then ``addmm`` is one ``matmul`` and the bias added into the fresh product in place (no
second array), the same arithmetic as the general path's ``prod + bias``. Everything else, and
every error, takes the general path.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from ._backward import fast_floats
from ._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    Scalar,
    bind,
    check_broadcast,
    cpp_name,
    guard,
    guarded,
    lowers,
    torch_name,
)
from ._pointwise._elementwise import binary


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t._data.shape)


def _same_dtype(a: Tensor, b: Tensor) -> None:
    if a._dtype is not b._dtype:
        raise OpError(
            f"expected m1 and m2 to have the same dtype, but got: {_cname(a)} != {_cname(b)}"
        )


def _cname(t: Tensor) -> str:
    return cpp_name(t._dtype)  # ATen prints C++ type names here ("float != double")


# --- the general kernels ---------------------------------------------------------------------


def product(kit: Kit, a: Tensor, b: Tensor) -> Any:
    d = a._dtype
    kit.same_device(a, b)
    return kit.xp.matmul(kit.as_compute(a, d), kit.as_compute(b, d))


def check_mm(a: Tensor, b: Tensor) -> None:
    sa, sb = _shape(a), _shape(b)
    if len(sa) != 2:
        raise OpError(f"self must be a matrix (got a {len(sa)}-D tensor)")
    if len(sb) != 2:
        raise OpError(f"mat2 must be a matrix (got a {len(sb)}-D tensor)")
    if sa[1] != sb[0]:
        raise OpError(
            f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})"
        )
    _same_dtype(a, b)


def mm(kit: Kit, self: Tensor, mat2: Tensor) -> Tensor:
    check_mm(self, mat2)
    return kit.wrap(product(kit, self, mat2), self._dtype, self._device)


def bmm(kit: Kit, self: Tensor, mat2: Tensor) -> Tensor:
    sa, sb = _shape(self), _shape(mat2)
    if len(sa) != 3:
        raise OpError(f"batch1 must be a 3D tensor (got a {len(sa)}-D tensor)")
    if len(sb) != 3:
        raise OpError(f"batch2 must be a 3D tensor (got a {len(sb)}-D tensor)")
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise OpError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}]."
        )
    _same_dtype(self, mat2)
    return kit.wrap(product(kit, self, mat2), self._dtype, self._device)


def matmul(kit: Kit, self: Tensor, other: Tensor) -> Tensor:
    sa, sb = _shape(self), _shape(other)
    if not sa or not sb:
        raise OpError(
            "both arguments to matmul need to be at least 1D, but they are "
            f"{len(sa)}D and {len(sb)}D"
        )
    _same_dtype(self, other)
    if len(sa) == 2 and len(sb) == 2:
        check_mm(self, other)
    inner_a = sa[-1]
    inner_b = sb[0] if len(sb) == 1 else sb[-2]
    if inner_a != inner_b:
        if len(sa) == 1 and len(sb) == 1:
            raise OpError(
                f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the same "
                f"number of elements, but got {sa[0]} and {sb[0]} elements respectively"
            )
        rows = 1 if len(sa) == 1 else sa[-2]
        cols = 1 if len(sb) == 1 else sb[-1]
        raise OpError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{inner_a} and {inner_b}x{cols})"
        )
    if len(sa) > 2 or len(sb) > 2:
        check_broadcast(sa[:-2] if len(sa) > 1 else (), sb[:-2] if len(sb) > 1 else ())
    return kit.wrap(product(kit, self, other), self._dtype, self._device)


def addmm(
    kit: Kit, self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Scalar = 1, alpha: Scalar = 1
) -> Tensor:
    check_mm(mat1, mat2)
    _same_dtype(self, mat1)
    d = mat1._dtype
    prod = product(kit, mat1, mat2)
    out_shape = (_shape(mat1)[0], _shape(mat2)[1])
    check_broadcast(_shape(self), out_shape)
    if alpha != 1:
        prod = prod * kit.scalar(alpha, d)
    if beta == 0:  # PyTorch ignores self entirely (nan and inf do not propagate)
        r = prod
    else:
        bias = kit.operand(self, d, mat1._device)
        r = prod + (bias if beta == 1 else bias * kit.scalar(beta, d))
    if tuple(r.shape) != out_shape:  # a (0-d) bias cannot grow the product; be safe
        r = r + kit.xp.zeros(out_shape, dtype=r.dtype)
    return kit.wrap(r, d, mat1._device)


def dot(kit: Kit, self: Tensor, tensor: Tensor) -> Tensor:
    sa, sb = _shape(self), _shape(tensor)
    if len(sa) != 1 or len(sb) != 1:
        raise OpError(f"1D tensors expected, but got {len(sa)}D and {len(sb)}D tensors")
    if self._dtype is not tensor._dtype:
        raise OpError(
            "dot : expected both vectors to have same dtype, but found "
            f"{torch_name(self._dtype)} and {torch_name(tensor._dtype)}"
        )
    if sa[0] != sb[0]:
        raise OpError(
            f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have "
            f"the same number of elements, but got {sa[0]} and {sb[0]} elements respectively"
        )
    if self._dtype.name == "bool":
        raise NotImplementedError("aten::dot: \"dot\" not implemented for 'Bool'")
    return kit.wrap(product(kit, self, tensor), self._dtype, self._device)


# --- the fast paths ------------------------------------------------------------------------


def fast_kernels(kit: Kit) -> Kernels:
    """``mm``, ``matmul`` and ``addmm`` of one backend: the fast path (Note [Matrix product
    fast path]) in front of the general kernel above."""
    xp = kit.xp
    new = kit.new
    ks = kit.keyset
    native = kit.native
    matmul_fn = xp.matmul
    add = xp.add
    writes_out = kit.writes_out  # Note [Optional extensions] in _kit.py

    def fast_pair(a: Tensor, b: Tensor) -> bool:
        """Whether ``a @ b`` takes the fast path (Note [Matrix product fast path])."""
        if a._dtype is not b._dtype or a._device is not b._device or a._dtype not in native:
            return False
        x, y = a._data, b._data
        return x.ndim == 2 and y.ndim == 2 and x.shape[1] == y.shape[0]  # type: ignore[no-any-return]

    # The fast paths raise nothing, so these kernels are guarded themselves and only their
    # general paths pay for the error conversion (Note [Kernel errors] in _checks.py).
    slow_mm, slow_matmul = guard("mm", bind(kit, mm)), guard("matmul", bind(kit, matmul))
    slow_addmm = guard("addmm", bind(kit, addmm))

    @guarded
    def fast_mm(self: Tensor, mat2: Tensor) -> Tensor:
        if fast_pair(self, mat2):
            return new(matmul_fn(self._data, mat2._data), self._dtype, self._device, ks)
        return slow_mm(self, mat2)  # type: ignore[no-any-return]

    @guarded
    def fast_matmul(self: Tensor, other: Tensor) -> Tensor:
        if fast_pair(self, other):
            return new(matmul_fn(self._data, other._data), self._dtype, self._device, ks)
        return slow_matmul(self, other)  # type: ignore[no-any-return]

    @guarded
    def fast_addmm(
        self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Scalar = 1, alpha: Scalar = 1
    ) -> Tensor:
        d = self._dtype
        dev = self._device
        if (
            beta == 1
            and alpha == 1
            and d is mat1._dtype
            and d is mat2._dtype
            and dev is mat1._device
            and dev is mat2._device
            and d in native
        ):
            # fast_pair inline (linear's bias + input @ weight.t() comes here every step)
            x, y, bias = mat1._data, mat2._data, self._data
            if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
                return slow_addmm(self, mat1, mat2, beta=beta, alpha=alpha)  # type: ignore[no-any-return]
            cols = y.shape[1]
            if bias.shape == (cols,) or bias.shape == (x.shape[0], cols):
                r = matmul_fn(x, y)
                if writes_out:
                    add(r, bias, out=r)
                else:
                    r = add(r, bias)
                return new(r, d, dev, ks)
        return slow_addmm(self, mat1, mat2, beta=beta, alpha=alpha)  # type: ignore[no-any-return]

    # Note [Raw lowerings] in _kit.py: the fast paths' array calls, where the description of
    # the arguments proves the fast path's conditions
    def fast_described(a: Any, b: Any) -> bool:
        return (
            a.dtype is b.dtype
            and a.device == b.device
            and a.dtype in native
            and len(a.shape) == 2
            and len(b.shape) == 2
            and a.shape[1] == b.shape[0]
        )

    def lower_product(self: Any, other: Any) -> Any:
        return (matmul_fn, ks) if fast_described(self, other) else None

    def lower_addmm(self: Any, mat1: Any, mat2: Any, *, beta: Scalar = 1, alpha: Scalar = 1) -> Any:
        if not (beta == 1 and alpha == 1 and fast_described(mat1, mat2)):
            return None
        if self.dtype is not mat1.dtype or self.device != mat1.device:
            return None
        cols = mat2.shape[1]
        if self.shape != (cols,) and self.shape != (mat1.shape[0], cols):
            return None

        def addmm_arrays(bias: Any, x: Any, y: Any) -> Any:
            r = matmul_fn(x, y)
            if writes_out:
                add(r, bias, out=r)
                return r
            return add(r, bias)

        return addmm_arrays, ks

    return {
        "mm": lowers(kit, fast_mm, lower_product),
        "matmul": lowers(kit, fast_matmul, lower_product),
        "addmm": lowers(kit, fast_addmm, lower_addmm),
    }


# --- linear_backward ----------------------------------------------------------------------


def linear_backward(kit: Kit) -> Kernel:
    """The gradients of ``linear(self, weight, bias)`` for ``grad_output`` (PyTorch's schema):
    ``grad_output @ weight`` shaped like ``self``, ``grad_output.T @ self`` over the rows of
    both (the weight's own layout, no transposed copy) and ``grad_output`` summed over its
    leading dimensions, each only where ``output_mask`` asks for it (None elsewhere, PyTorch's
    undefined tensor). Products compute in the compute dtype and the sum in the accumulation
    dtype of the operands' one dtype (half precision in float32, rounded once)."""
    xp = kit.xp
    fast = fast_floats(kit)
    new = kit.new
    ks = kit.keyset
    matmul = xp.matmul
    add_reduce = getattr(xp.add, "reduce", None)
    hush, unhush = kit.hush, kit.unhush
    transpose = getattr(xp, "matrix_transpose", None) or (lambda a: a.T)

    def general(
        self: Tensor, grad_output: Tensor, weight: Tensor, output_mask: Any
    ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        mask = _mask3(output_mask)
        sx, sg, sw = (tuple(t._data.shape) for t in (self, grad_output, weight))
        if len(sw) != 2:
            raise OpError(f"weight must be a matrix (got a {len(sw)}-D tensor)")
        if not sx:
            raise OpError("self must have at least one dimension (got a 0-D tensor)")
        if sx[-1] != sw[1]:
            raise OpError(
                f"self's last dimension ({sx[-1]}) must equal the number of columns of weight "
                f"({sw[1]})"
            )
        want = sx[:-1] + (sw[0],)
        if sg != want:
            raise OpError(
                f"grad_output must have shape {list(want)} (self's leading dimensions and "
                f"weight's rows), but got {list(sg)}"
            )
        d = grad_output._dtype
        if self._dtype is not d or weight._dtype is not d:
            raise OpError(
                "expected self, grad_output and weight to have the same dtype, but got "
                f"{torch_name(self._dtype)}, {torch_name(d)} and {torch_name(weight._dtype)}"
            )
        if d.kind not in "fc":
            raise OpError(f"\"linear_backward\" not implemented for '{torch_name(d)}'")
        kit.same_device(grad_output, self)
        kit.same_device(grad_output, weight)
        device = grad_output._device
        g = kit.as_compute(grad_output, d)
        gi = gw = gb = None
        if mask[0]:
            gi = kit.wrap(matmul(g, kit.as_compute(weight, d)), d, device)
        if mask[1] or mask[2]:
            rows = (-1, sw[0])
            g2 = g if len(sg) == 2 else xp.reshape(g, rows)
            if mask[1]:
                x = kit.as_compute(self, d)
                x2 = x if len(sx) == 2 else xp.reshape(x, (-1, sw[1]))
                gw = kit.wrap(matmul(transpose(g2), x2), d, device)
            if mask[2]:
                ga = kit.cast(grad_output._data, kit.accumulate[d])
                with kit.quiet():
                    gb = kit.wrap(xp.sum(ga, axis=tuple(range(len(sg) - 1))), d, device)
        return gi, gw, gb

    slow = guard("linear_backward", general, kit.key_name)

    @guarded  # Note [Backward kernel fast paths]
    def linear_backward(
        self: Tensor, grad_output: Tensor, weight: Tensor, output_mask: Any
    ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        # 2-D operands of one native float dtype on one device
        d = grad_output._dtype
        device = grad_output._device
        if (
            d in fast
            and self._dtype is d
            and weight._dtype is d
            and self._device is device
            and weight._device is device
            and len(output_mask) == 3
        ):
            g, x, w = grad_output._data, self._data, weight._data
            if (
                g.ndim == 2
                and x.ndim == 2
                and w.ndim == 2
                and g.shape[0] == x.shape[0]
                and g.shape[1] == w.shape[0]
                and x.shape[1] == w.shape[1]
            ):
                m0, m1, m2 = output_mask
                gi = new(matmul(g, w), d, device, ks) if m0 else None
                gw = new(matmul(g.T, x), d, device, ks) if m1 else None
                gb = None
                if m2:
                    token = hush()
                    try:
                        gb = new(add_reduce(g, 0), d, device, ks)  # type: ignore[misc]
                    finally:
                        unhush(token)
                return gi, gw, gb
        return slow(self, grad_output, weight, output_mask)  # type: ignore[no-any-return]

    return linear_backward


# --- tensorplug::linear_forward -----------------------------------------------------------

_LINEAR = "tensorplug::linear_forward"


def linear_forward(kit: Kit) -> Kernel:
    """``tensorplug::linear_forward(input, weight, bias)``: ``aten::linear``'s value.

    Note [Linear forward]
    ~~~~~~~~~~~~~~~~~~~~~
    ``aten::linear`` decomposes into ``weight.t()`` and ``addmm`` (2-D input with a bias) or
    ``matmul`` (and ``add``); the autograd plugin's ``linear`` node (fused.py) computes its
    forward below autograd through this operator instead, so no transposed weight tensor is
    made and one kernel checks the operands once. The fast path takes operands of one native
    float dtype on one device, a matrix weight whose columns match the input's last dimension
    and a bias that is a row (or, for a 2-D input, shaped like the result, as ``addmm``'s fast
    path): ``matmul(input, weight.T)`` with the bias added into the fresh product in place,
    the arrays and the arithmetic of ``addmm``'s fast path (Note [Matrix product fast path])
    and of ``matmul`` then ``add``, so the bits are the decomposition's. Everything else, and
    every error, takes the decomposition's own kernels of this kit (``t``'s check, ``addmm``,
    ``mm`` for a 2-D input without a bias as the autograd node always called, ``matmul``,
    ``add.Tensor``), whose errors name them.
    """
    xp = kit.xp
    fast = fast_floats(kit)
    new = kit.new
    ks = kit.keyset
    matmul_fn = xp.matmul
    add = xp.add
    permute_dims = getattr(xp, "permute_dims", None) or xp.transpose
    adds: Kernels = {}
    binary(kit, adds, "add", xp.add, alpha=True, out=True, ufunc=xp.add)  # as _binary's
    add_tensor = adds["add.Tensor"]
    slow_mm, slow_matmul = guard("mm", bind(kit, mm)), guard("matmul", bind(kit, matmul))
    slow_addmm = guard("addmm", bind(kit, addmm))

    def transposed(weight: Tensor) -> Tensor:
        """``weight.t()``: ``t``'s check, and the transposed alias of a matrix."""
        nd = weight._data.ndim
        if nd > 2:
            raise OpError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
        return weight._alias(permute_dims(weight._data, (1, 0))) if nd == 2 else weight

    t_of = guard("t.default", transposed)

    def general(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        wt = t_of(weight)
        if input._data.ndim == 2 and wt._data.ndim == 2:
            return slow_mm(input, wt) if bias is None else slow_addmm(bias, input, wt)  # type: ignore[no-any-return]
        out = slow_matmul(input, wt)
        return out if bias is None else add_tensor(out, bias)  # type: ignore[no-any-return]

    slow = guard(_LINEAR, general, kit.key_name)

    @guarded  # the fast path raises nothing (Note [Kernel errors] in _checks.py)
    def linear_forward(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        d = input._dtype
        dev = input._device
        if d in fast and weight._dtype is d and weight._device is dev:
            x, w = input._data, weight._data
            if w.ndim == 2 and x.ndim and x.shape[-1] == w.shape[1]:
                if bias is None:
                    return new(matmul_fn(x, w.T), d, dev, ks)
                b = bias._data
                if (
                    bias._dtype is d
                    and bias._device is dev
                    and (
                        b.shape == w.shape[:1]
                        or (x.ndim == 2 and b.shape == (x.shape[0], w.shape[0]))
                    )
                ):
                    r = matmul_fn(x, w.T)
                    add(r, b, out=r)  # fast_floats: the library writes out=
                    return new(r, d, dev, ks)
        return slow(input, weight, bias)  # type: ignore[no-any-return]

    return linear_forward


def _mask3(output_mask: Any) -> tuple[bool, bool, bool]:
    mask = tuple(bool(m) for m in output_mask)
    if len(mask) != 3:
        raise OpError(f"output_mask must have 3 elements, but got {len(mask)}")
    return mask


def addmm_inplace(kit: Kit, addmm: Kernel) -> Kernel:
    """``addmm_``: addmm's result, which must have self's shape, written into self."""

    def addmm_(
        self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Scalar = 1, alpha: Scalar = 1
    ) -> Tensor:
        r = addmm(self, mat1, mat2, beta=beta, alpha=alpha)
        if tuple(r._data.shape) != tuple(self._data.shape):
            raise OpError(
                f"Bad in-place call: input tensor size {list(self._data.shape)} and output "
                f"tensor size {list(r._data.shape)} should match"
            )
        kit.assign(self._data, kit.cast(r._data, kit.storage[self._dtype]))
        return self

    return addmm_


def build(kit: Kit) -> Kernels:
    fast = fast_kernels(kit)
    return {
        **fast,
        "addmm_": addmm_inplace(kit, fast["addmm"]),  # issue 29
        "bmm": bind(kit, bmm),
        "dot": bind(kit, dot),
        "linear_backward": linear_backward(kit),
        _LINEAR: linear_forward(kit),
    }
