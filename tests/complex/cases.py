"""Complex autograd cases written over a framework module ``ns`` (``torch`` or ``tensorplug``):
the same source runs in PyTorch (tools/gen_complex_grads.py, and the tests where torch is
installed) and in tensorplug (tests/complex/test_complex_autograd.py).

Each case is a function of complex (or real) tensors and the specs of its inputs; inputs and
output gradients come from numpy with a seed per case (:func:`inputs`, :func:`grad_outputs`),
so both frameworks differentiate the same function at the same point along the same direction.
Functions of eigen- and singular vectors read only what the gauge leaves fixed (``abs``, or
the product that rebuilds the matrix).

Also a small spectral model (rfft, a complex weight per mode, irfft: the Fourier layer of a
Fourier neural operator) and its SGD training run (:func:`train_spectral`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

# An input spec: ("c", shape) complex normal; ("r", shape) real normal; ("pos", shape) real in
# [0.5, 1.5); ("wc", n) a well-conditioned complex n x n matrix (normal + 3 I); ("pd", n) a
# Hermitian positive definite one (B B^H + I).
Spec = tuple[str, Any]
Case = tuple[Callable[..., Any], tuple[Spec, ...]]


def _herm(x: Any) -> Any:
    return (x + x.mH) / 2


def _svd_rebuilt(ns: ModuleType, x: Any) -> Any:
    u, s, vh = ns.linalg.svd(x, full_matrices=False)
    return (u * s.to(u.dtype).unsqueeze(-2)) @ vh


def _qr_abs(ns: ModuleType, x: Any) -> Any:
    q, r = ns.linalg.qr(x)
    return q.abs(), r.abs()


C3: Spec = ("c", (3,))
CASES: dict[str, Case] = {
    # pointwise: arithmetic and holomorphic functions
    "add": (lambda ns, x, y: ns.add(x, y, alpha=2 - 1j), (C3, C3)),
    "sub": (lambda ns, x, y: ns.sub(x, y), (C3, C3)),
    "mul": (lambda ns, x, y: x * y, (C3, C3)),
    "mul_real_complex": (lambda ns, x, y: x * y, (("r", (3,)), C3)),
    "mul_scalar": (lambda ns, x: x * (0.5 + 2j), (C3,)),
    "div": (lambda ns, x, y: x / y, (C3, C3)),
    "pow_scalar": (lambda ns, x: x**3, (C3,)),
    "pow_tensor": (lambda ns, x, y: x**y, (C3, C3)),
    "neg": (lambda ns, x: -x, (C3,)),
    "exp": (lambda ns, x: ns.exp(x), (C3,)),
    "log": (lambda ns, x: ns.log(x), (C3,)),
    "sqrt": (lambda ns, x: ns.sqrt(x), (C3,)),
    "rsqrt": (lambda ns, x: ns.rsqrt(x), (C3,)),
    "reciprocal": (lambda ns, x: ns.reciprocal(x), (C3,)),
    "sin": (lambda ns, x: ns.sin(x), (C3,)),
    "cos": (lambda ns, x: ns.cos(x), (C3,)),
    "tan": (lambda ns, x: ns.tan(x), (C3,)),
    "sinh": (lambda ns, x: ns.sinh(x), (C3,)),
    "cosh": (lambda ns, x: ns.cosh(x), (C3,)),
    "tanh": (lambda ns, x: ns.tanh(x), (C3,)),
    "sigmoid": (lambda ns, x: ns.sigmoid(x), (C3,)),
    "asin": (lambda ns, x: ns.asin(x), (C3,)),
    "acos": (lambda ns, x: ns.acos(x), (C3,)),
    "atan": (lambda ns, x: ns.atan(x), (C3,)),
    "asinh": (lambda ns, x: ns.asinh(x), (C3,)),
    "acosh": (lambda ns, x: ns.acosh(x), (C3,)),
    "atanh": (lambda ns, x: ns.atanh(x), (C3,)),
    "log1p": (lambda ns, x: ns.log1p(x), (C3,)),
    "expm1": (lambda ns, x: ns.expm1(x), (C3,)),
    "square": (lambda ns, x: ns.square(x), (C3,)),
    "log2": (lambda ns, x: ns.log2(x), (C3,)),
    "log10": (lambda ns, x: ns.log10(x), (C3,)),
    "exp2": (lambda ns, x: ns.exp2(x), (C3,)),
    "rpow": (lambda ns, x: 2.5**x, (C3,)),
    "addcmul": (lambda ns, a, x, y: ns.addcmul(a, x, y, value=0.5), (C3, C3, C3)),
    "addcdiv": (lambda ns, a, x, y: ns.addcdiv(a, x, y, value=2), (C3, C3, C3)),
    "lerp": (lambda ns, a, b, w: ns.lerp(a, b, w), (C3, C3, C3)),
    "where": (lambda ns, x, y: ns.where(x.real > 0, x, y), (C3, C3)),
    # complex to real, real to complex, and the views
    "abs": (lambda ns, x: ns.abs(x), (C3,)),
    "angle": (lambda ns, x: ns.angle(x), (C3,)),
    "sgn": (lambda ns, x: ns.sgn(x), (C3,)),
    "conj": (lambda ns, x: ns.conj(x) * x, (C3,)),
    "conj_physical": (lambda ns, x: ns.conj_physical(x), (C3,)),
    "real_imag": (lambda ns, x: ns.real(x) * ns.imag(x), (C3,)),
    "view_as_real": (lambda ns, x: ns.view_as_real(x), (C3,)),
    "view_as_complex": (lambda ns, x: ns.view_as_complex(x), (("r", (3, 2)),)),
    "complex": (lambda ns, x, y: ns.complex(x, y), (("r", (3,)), ("r", (3,)))),
    "polar": (lambda ns, x, y: ns.polar(x, y), (("pos", (3,)), ("r", (3,)))),
    "to_complex": (lambda ns, x: x.to(ns.complex128) * (1 + 2j), (("r", (3,)),)),
    # reductions
    "sum": (lambda ns, x: x.sum(0), (("c", (2, 3)),)),
    "mean": (lambda ns, x: x.mean(), (("c", (2, 3)),)),
    "prod": (lambda ns, x: x.prod(1), (("c", (2, 3)),)),
    "cumsum": (lambda ns, x: x.cumsum(0), (C3,)),
    "cumprod": (lambda ns, x: x.cumprod(0), (("c", (4,)),)),
    "var": (lambda ns, x: x.var(1), (("c", (2, 3)),)),
    "shape_and_index": (
        lambda ns, x: ns.cat([x, x.flip(0)]).reshape(2, -1)[:, ::2].t(),
        (("c", (4,)),),
    ),
    # products
    "mm": (lambda ns, x, y: ns.mm(x, y), (("c", (2, 3)), ("c", (3, 2)))),
    "bmm": (lambda ns, x, y: ns.bmm(x, y), (("c", (2, 2, 3)), ("c", (2, 3, 2)))),
    "matmul": (lambda ns, x, y: ns.matmul(x, y), (("c", (2, 2, 3)), ("c", (3, 2)))),
    "matmul_vec": (lambda ns, x, y: ns.matmul(x, y), (("c", (2, 3)), C3)),
    "dot": (lambda ns, x, y: ns.dot(x, y), (C3, C3)),
    "vdot": (lambda ns, x, y: ns.vdot(x, y), (C3, C3)),
    "einsum": (lambda ns, x, y: ns.einsum("bij,jk->bik", x, y), (("c", (2, 2, 3)), ("c", (3, 2)))),
    "outer": (lambda ns, x, y: ns.outer(x, y), (C3, ("c", (2,)))),
    "kron": (lambda ns, x, y: ns.kron(x, y), (("c", (2, 2)), ("c", (2, 1)))),
    "tensordot": (lambda ns, x, y: ns.tensordot(x, y, 1), (("c", (2, 3)), ("c", (3, 2)))),
    "trace": (lambda ns, x: ns.trace(x), (("c", (3, 3)),)),
    "addmm": (
        lambda ns, a, x, y: ns.addmm(a, x, y, beta=1 + 1j, alpha=0.5 - 2j),
        (("c", (2, 2)), ("c", (2, 3)), ("c", (3, 2))),
    ),
    "linear": (
        lambda ns, x, w, b: ns.nn.functional.linear(x, w, b),
        (("c", (2, 3)), ("c", (4, 3)), ("c", (4,))),
    ),
    # FFTs
    "fft": (lambda ns, x: ns.fft.fft(x), (("c", (5,)),)),
    "ifft_ortho": (lambda ns, x: ns.fft.ifft(x, norm="ortho"), (("c", (4,)),)),
    "fft2": (lambda ns, x: ns.fft.fft2(x), (("c", (2, 3)),)),
    "rfft": (lambda ns, x: ns.fft.rfft(x), (("r", (5,)),)),
    "rfft_even_forward": (lambda ns, x: ns.fft.rfft(x, norm="forward"), (("r", (6,)),)),
    "irfft": (lambda ns, x: ns.fft.irfft(x), (("c", (4,)),)),
    "irfft_n": (lambda ns, x: ns.fft.irfft(x, n=7), (("c", (4,)),)),
    "rfftn": (lambda ns, x: ns.fft.rfftn(x), (("r", (2, 4)),)),
    "irfftn": (lambda ns, x: ns.fft.irfftn(x), (("c", (2, 3)),)),
    "hfft": (lambda ns, x: ns.fft.hfft(x), (("c", (4,)),)),
    "ihfft": (lambda ns, x: ns.fft.ihfft(x), (("r", (5,)),)),
    "stft": (
        lambda ns, x: ns.stft(
            x, 8, hop_length=4, window=ns.hann_window(8, dtype=ns.float64), return_complex=True
        ),
        (("r", (16,)),),
    ),
    "istft": (
        lambda ns, x: ns.istft(x, 8, hop_length=4, window=ns.hann_window(8, dtype=ns.float64)),
        (("c", (5, 5)),),
    ),
    # linear algebra
    "solve": (lambda ns, a, b: ns.linalg.solve(a, b), (("wc", 3), ("c", (3, 2)))),
    "inv": (lambda ns, a: ns.linalg.inv(a), (("wc", 3),)),
    "det": (lambda ns, a: ns.linalg.det(a), (("wc", 3),)),
    "slogdet": (lambda ns, a: ns.linalg.slogdet(a), (("wc", 3),)),
    "cholesky": (lambda ns, a: ns.linalg.cholesky(_herm(a)), (("pd", 3),)),
    "eigh": (
        lambda ns, a: (lambda w, v: (w, v.abs()))(*ns.linalg.eigh(_herm(a))),
        (("pd", 3),),
    ),
    "eigvalsh": (lambda ns, a: ns.linalg.eigvalsh(_herm(a)), (("pd", 3),)),
    "svd": (lambda ns, a: _svd_rebuilt(ns, a), (("wc", 3),)),
    "svdvals": (lambda ns, a: ns.linalg.svdvals(a), (("wc", 3),)),
    "qr": (lambda ns, a: _qr_abs(ns, a), (("c", (3, 2)),)),
    "pinv": (lambda ns, a: ns.linalg.pinv(a), (("c", (3, 2)),)),
    "eigvals": (lambda ns, a: ns.linalg.eigvals(a), (("wc", 3),)),
    "eig": (
        lambda ns, a: (lambda w, v: (w, v.abs()))(*ns.linalg.eig(a)),
        (("wc", 3),),
    ),
    "eig_real_input": (
        lambda ns, a: (lambda w, v: (w, v.abs()))(*ns.linalg.eig(a)),
        (("r", (3, 3)),),
    ),
    "matrix_exp": (lambda ns, a: ns.linalg.matrix_exp(a * 0.3), (("c", (2, 2)),)),
    "vector_norm": (lambda ns, x: ns.linalg.vector_norm(x), (("c", (4,)),)),
    "vector_norm_p": (
        lambda ns, x: tuple(ns.linalg.vector_norm(x, p, dim=1) for p in (1, 3, 0.5, float("inf"))),
        (("c", (2, 3)),),
    ),
    "matrix_norm": (lambda ns, a: ns.linalg.matrix_norm(a), (("c", (3, 3)),)),
    "cross": (lambda ns, x, y: ns.linalg.cross(x, y), (C3, C3)),
    "lu_solve": (
        lambda ns, a, b: ns.linalg.lu_solve(*ns.linalg.lu_factor(a), b),
        (("wc", 3), ("c", (3, 2))),
    ),
    "lstsq": (lambda ns, a, b: ns.linalg.lstsq(a, b).solution, (("c", (4, 2)), ("c", (4, 1)))),
    "solve_triangular": (
        lambda ns, a, b: ns.linalg.solve_triangular(a.triu(), b, upper=True),
        (("wc", 3), ("c", (3, 2))),
    ),
}

# gradgradcheck runs on these (PyTorch supports their double backward)
SECOND_ORDER = (
    "mul", "div", "exp", "log", "sin", "tanh", "sqrt", "abs", "angle", "sgn", "polar", "complex",
    "view_as_real", "prod", "mm", "matmul", "fft", "rfft", "irfft", "inv", "det", "solve",
)  # fmt: skip


def _seed(name: str, salt: int) -> int:
    return zlib.crc32(f"{name}/{salt}".encode())


def _array(rng: np.random.Generator, spec: Spec) -> np.ndarray:
    kind, size = spec
    if kind == "r":
        return rng.standard_normal(size)
    if kind == "pos":
        return rng.random(size) + 0.5
    shape = (size, size) if kind in ("wc", "pd") else size
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if kind == "wc":
        return z + 3 * np.eye(size)
    if kind == "pd":
        return z @ z.conj().T + np.eye(size)
    return z


def input_arrays(name: str) -> list[np.ndarray]:
    """The inputs of case ``name``, float64 or complex128."""
    rng = np.random.default_rng(_seed(name, 0))
    return [_array(rng, spec) for spec in CASES[name][1]]


def grad_output_arrays(name: str, outputs: list[np.ndarray]) -> list[np.ndarray]:
    """One gradient per output, like it (complex for complex outputs)."""
    rng = np.random.default_rng(_seed(name, 1))
    out = []
    for o in outputs:
        g = rng.standard_normal(o.shape)
        if np.iscomplexobj(o):
            g = g + 1j * rng.standard_normal(o.shape)
        out.append(g)
    return out


def as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def run(ns: ModuleType, name: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Case ``name`` in framework ``ns``: its outputs and the gradients of its inputs for
    :func:`grad_output_arrays`, as numpy arrays."""
    fn = CASES[name][0]
    xs = [ns.tensor(a).requires_grad_() for a in input_arrays(name)]
    outs = as_tuple(fn(ns, *xs))
    outs_np = [o.detach().resolve_conj().numpy() for o in outs]
    gos = [ns.tensor(g) for g in grad_output_arrays(name, outs_np)]
    grads = ns.autograd.grad(list(outs), xs, gos, allow_unused=True)
    return outs_np, [
        np.zeros(x.shape) if g is None else g.detach().resolve_conj().numpy()
        for x, g in zip(xs, grads, strict=True)
    ]


# --- a spectral model -------------------------------------------------------------------------

CHANNELS, MODES, LENGTH, BATCH = 2, 3, 8, 4


def spectral_model(torch: ModuleType) -> Any:
    """The Fourier layer of a Fourier neural operator: the rfft of each channel, its lowest
    ``modes`` bins mixed across channels by a complex weight, the irfft, plus a real
    pointwise linear map; a ``tanh`` between two such layers."""
    nn = torch.nn

    class SpectralConv1d(nn.Module):
        def __init__(self, channels: int, modes: int) -> None:
            super().__init__()
            self.modes = modes
            self.weight = nn.Parameter(torch.zeros(channels, channels, modes, dtype=torch.cfloat))

        def forward(self, x: Any) -> Any:
            n = x.shape[-1]
            xf = torch.fft.rfft(x)
            mixed = torch.einsum("bim,iom->bom", xf[..., : self.modes], self.weight)
            full = torch.zeros(x.shape[0], self.weight.shape[1], n // 2 + 1, dtype=torch.cfloat)
            full[..., : self.modes] = mixed
            return torch.fft.irfft(full, n=n)

    class FourierBlock(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.spectral1 = SpectralConv1d(CHANNELS, MODES)
            self.pointwise1 = nn.Linear(CHANNELS, CHANNELS)
            self.spectral2 = SpectralConv1d(CHANNELS, MODES)

        def forward(self, x: Any) -> Any:
            h = self.spectral1(x) + self.pointwise1(x.transpose(1, 2)).transpose(1, 2)
            return self.spectral2(torch.tanh(h))

    return FourierBlock()


def initial_spectral_state(torch: ModuleType, model: Any) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    state = {}
    for k, v in model.state_dict().items():
        shape = tuple(v.shape)
        if v.dtype == torch.cfloat:
            a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * 0.5
            state[k] = torch.tensor(a.astype(np.complex64))
        else:
            state[k] = torch.tensor((rng.standard_normal(shape) * 0.5).astype(np.float32))
    return state


def train_spectral(torch: ModuleType, steps: int = 6, lr: float = 0.05) -> tuple[list[float], Any]:
    """SGD on the MSE to a fixed target; returns the losses and the trained model."""
    model = spectral_model(torch)
    model.load_state_dict(initial_spectral_state(torch, model))
    rng = np.random.default_rng(11)
    x = torch.tensor(rng.standard_normal((BATCH, CHANNELS, LENGTH)).astype(np.float32))
    target = torch.tensor(rng.standard_normal((BATCH, CHANNELS, LENGTH)).astype(np.float32))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses, model
