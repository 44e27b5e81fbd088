"""The derivative formulas of the standard operators (tensorplug_autograd/formulas/).

* the table against native_functions.yaml: every non-composite functional overload has a
  formula or is marked non-differentiable, formulas name real tensor arguments;
* ``gradcheck`` (float64 finite differences, the oracle) of every differentiable overload on
  the OpInfo samples of tensorplug.testing.opinfo, of its in-place variants on clones, and
  ``gradgradcheck`` of one sample per overload;
* the points PyTorch defines by convention (ties, kinks, zeros), checked by value;
* outputs that never require grad, and ``out=`` refusing inputs that require grad.

The gradcheck cases run on every loaded backend device, as the op tests do
(``tests/needs.py``): cpu and cuda (marked ``gpu``) every sample, a third-party backend such
as the example ``foo`` the first sample of each overload.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import tensorplug as tp
from tensorplug import Tensor
from tensorplug.testing import has_special_functions, has_strides
from tensorplug.testing.opinfo import DT, OPS_BY_NAME, OpInfo, SampleInput
from tests import needs

needs.autograd()

from tensorplug_autograd import formulas as F  # noqa: E402
from tensorplug_autograd.inplace_views import INPLACE_VIEWS  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    "ignore:Mean of empty slice:RuntimeWarning",  # the CPU forward of mean on empty samples
    "ignore:invalid value encountered:RuntimeWarning",  # where() masks a 0 * inf branch
)

YAML_PATH = (
    Path(__file__).resolve().parents[2] / "core" / "src" / "tensorplug" / "native_functions.yaml"
)

# --- the yaml ---------------------------------------------------------------------------------


def _entries() -> dict[str, dict[str, Any]]:
    return {e["func"].split("(", 1)[0]: e for e in yaml.safe_load(YAML_PATH.read_text())}


ENTRIES = _entries()


def _is_cia(key: str) -> bool:
    return "CompositeImplicitAutograd" in (ENTRIES[key].get("dispatch") or {})


def _functional_of(key: str) -> str | None:
    """``add_.Tensor`` -> ``add.Tensor``, ``add.out`` -> ``add.Tensor``, if that is a
    non-composite overload of the yaml (the variant then reuses its formula); else None.
    An in-place overload pairs with the functional one of its arguments (``pow_.Scalar`` ->
    ``pow.Tensor_Scalar``)."""
    name, _, overload = key.partition(".")
    if "out" in ENTRIES[key].get("tags", []):
        candidates = [f"{name}.Tensor", name]
    elif name.endswith("_") and not name.startswith("_"):
        base = name[:-1]
        candidates = [f"{base}.{overload}" if overload else base, f"{base}.Tensor_{overload}"]
        candidates = [c for c in candidates if c in ENTRIES and _arguments(c) == _arguments(key)]
    else:
        return None
    for c in candidates:
        if c in ENTRIES and not _is_cia(c):
            return c
    return None


def _arguments(key: str) -> list[tuple[str, Any, bool]]:
    return [(a.name, a.type, a.kwarg_only) for a in _schema(key).arguments]


def _schema(key: str) -> Any:
    name, _, overload = key.partition(".")
    return getattr(getattr(tp.ops.aten, name), overload or "default")._schema


def _needs_entry(key: str) -> bool:
    return not _is_cia(key) and _functional_of(key) is None


def _zero_gradient_inplace(key: str) -> bool:
    """An in-place op whose functional form is not differentiable yet whose old values get a
    zero gradient, as derivatives.yaml gives ``eq_``: it has an entry of its own."""
    functional = _functional_of(key)
    return functional in F.NON_DIFFERENTIABLE and key in F.FORMULAS


def _formula_names(key: str) -> set[str]:
    names: set[str] = set()
    for k in F.FORMULAS[key]:
        names.update(k if isinstance(k, tuple) else (k,))
    return names


# backward kernels that, as in PyTorch, have no derivative of their own: a second backward
# through them raises (the autograd plugin's NotImplemented node; tests/nn/test_attention.py)
# the fused recurrent cells' backward kernels likewise: their forward formulas recompute the
# gradients with public ops when the backward records a graph (double backward), so these
# kernels never run where a graph is recorded
NO_FORMULA = {
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_thnn_fused_lstm_cell_backward_impl",
    "_thnn_fused_gru_cell_backward",
    "floor_divide_.Tensor",  # derivatives.yaml has none: backward raises, as PyTorch's
    # the storage ops: their own Autograd kernel refuses what PyTorch refuses (resizing a tensor
    # that requires grad, a leaf in place); a backward pass reaching them raises, as PyTorch's
    # (tensorplug_autograd.kernels.STORAGE_OPS)
    "resize_",
    "set_",
    "set_.source_Tensor",
    "set_.source_Tensor_storage_offset",
}


def test_every_overload_has_a_formula_or_is_nondifferentiable() -> None:
    missing = [k for k in ENTRIES if _needs_entry(k) and k not in F.FORMULAS]
    missing = [k for k in missing if k not in F.NON_DIFFERENTIABLE and k not in NO_FORMULA]
    # the in-place views record their view op instead (Note [In-place views])
    missing = [k for k in missing if k not in INPLACE_VIEWS]
    assert not missing, f"overloads with neither a formula nor a NON_DIFFERENTIABLE mark: {missing}"


def test_no_entry_is_both_differentiable_and_not() -> None:
    assert not set(F.FORMULAS) & F.NON_DIFFERENTIABLE


def test_entries_name_real_noncomposite_overloads() -> None:
    for key in [*F.FORMULAS, *F.NON_DIFFERENTIABLE, *F.OUTPUT_DIFFERENTIABILITY]:
        assert key in ENTRIES, f"{key}: not an overload of native_functions.yaml"
        assert not _is_cia(key), f"{key} is CompositeImplicitAutograd: autograd sees its parts"
        assert _needs_entry(key) or _zero_gradient_inplace(key), (
            f"{key} reuses {_functional_of(key)}'s formula: no entry"
        )


def test_formulas_name_tensor_arguments_of_the_schema() -> None:
    for key in F.FORMULAS:
        args = {a.name: a for a in _schema(key).arguments}
        for name in _formula_names(key):
            assert name in args, f"{key}: formula for {name!r}, not an argument of its schema"
            assert args[name].tensor_kind is not None, f"{key}: {name!r} is not a tensor"


def test_output_differentiability_matches_the_returns() -> None:
    for key, flags in F.OUTPUT_DIFFERENTIABILITY.items():
        assert key in F.FORMULAS, key
        assert len(flags) == len(_schema(key).returns), key


# --- samples -> gradcheck calls ---------------------------------------------------------------


class Arg:
    """A placeholder for the k-th tensor gradcheck perturbs."""

    def __init__(self, k: int) -> None:
        self.k = k


def _tensor(a: np.ndarray, device: str = "cpu") -> Tensor:
    return tp.tensor(a.copy(), device=device)


def _prepare(
    key: str, sample: SampleInput, diff_names: set[str], device: str = "cpu"
) -> tuple[list[Tensor], tuple[Any, ...], dict[str, Any]]:
    """The sample as (leaves that require grad, args and kwargs holding :class:`Arg`s)."""
    leaves: list[Tensor] = []
    positional = [a.name for a in _schema(key).positional]

    def convert(x: Any, diff: bool) -> Any:
        if isinstance(x, np.ndarray):
            t = _tensor(x, device)
            if diff and t.dtype.is_floating_point:
                leaves.append(t.requires_grad_())
                return Arg(len(leaves) - 1)
            return t
        if isinstance(x, list):
            return [convert(v, diff) for v in x]
        if isinstance(x, DT):
            return getattr(tp, x.name)
        return x

    args = tuple(
        convert(x, positional[i] in diff_names if i < len(positional) else False)
        for i, x in enumerate(sample.args)
    )
    kwargs = {k: convert(v, k in diff_names) for k, v in sample.kwargs.items()}
    if device != "cpu" and "device" not in kwargs and "device" in _argument_names(key):
        kwargs["device"] = device
    return leaves, args, kwargs


def _argument_names(key: str) -> set[str]:
    return {a.name for a in _schema(key).arguments}


def _fill(x: Any, leaves: tuple[Tensor, ...]) -> Any:
    if isinstance(x, Arg):
        return leaves[x.k]
    if isinstance(x, list):
        return [_fill(v, leaves) for v in x]
    return x


def _caller(
    info: OpInfo, args: tuple[Any, ...], kwargs: dict[str, Any], inplace: bool
) -> Callable[..., Any]:
    op = info.aten()  # the overload itself, so its own formula runs

    flags = F.OUTPUT_DIFFERENTIABILITY.get(info.name)

    def call(*leaves: Tensor) -> Any:
        a = [_fill(x, leaves) for x in args]
        kw = {k: _fill(v, leaves) for k, v in kwargs.items()}
        if inplace:  # in place on a clone: the leaf itself must not be modified
            a[0] = a[0].clone()
        out = op(*a, **kw)
        if flags is None:
            return out
        kept = tuple(o for o, f in zip(out, flags, strict=True) if f)  # (floats too: lse)
        return kept[0] if len(kept) == 1 else kept

    return call


# (op, sample) -> why the sample is left out of gradcheck. Keep it short.
EXCLUDED = {
    ("binary_cross_entropy", "saturated_clamped"): "self is 0 and 1 there: log is clamped, "
    "the loss is not differentiable, and x - eps leaves the domain",
    ("threshold_backward", "ties"): "self sits on the threshold: a step, x +- eps crosses it",
    ("threshold_backward", "nan_input"): "NaN input: finite differences are NaN",
    ("threshold_backward", "nonfinite_grad"): "inf gradient: finite differences are NaN",
    ("gelu_backward", "nonfinite"): "infinite and NaN input: finite differences are NaN",
    ("median", "nan"): "NaN input: finite differences are NaN",
    ("median", "empty"): "the median of no elements is NaN",
    ("median.dim", "nan"): "NaN input: finite differences are NaN",
    ("sort", "nan"): "NaN input: finite differences are NaN",
    ("linalg_vector_norm", "zero_row_p3"): "the norm's gradient jumps at 0; its subgradient "
    "there is pinned in tests/ops/test_sorting.py",
    ("unbind.int", "empty"): "no outputs: nothing to differentiate",
    ("cummax", "nan"): "NaN input: finite differences are NaN",
    ("cummin", "nan"): "NaN input: finite differences are NaN",
    ("kthvalue", "nan"): "NaN input: finite differences are NaN",
    ("aminmax", "nan"): "NaN input: finite differences are NaN",
    # linear algebra: inputs that must be Hermitian (finite differences of one triangle
    # cannot see that), derivatives PyTorch does not define, complex outputs; each gradchecked
    # as PyTorch's OpInfo does in tests/linalg/test_linalg_autograd.py
    **{
        (op, s): "reads one triangle of a Hermitian input: gradchecked on A + A^H in tests/linalg"
        for op, samples in (
            ("linalg_cholesky_ex", ("pd", "pd_batched", "upper")),
            ("_linalg_eigh", ("pd", "upper_batched")),
        )
        for s in samples
    },
    ("_linalg_eigh", "values_only"): "compute_v=False: PyTorch's derivative needs the vectors",
    ("_linalg_svd", "values_only"): "compute_uv=False: PyTorch's derivative needs U and V",
    ("_linalg_svd", "full"): "U's columns past min(m, n) are not determined by A; PyTorch's "
    "gradcheck uses U[..., :k] (tests/linalg)",
    ("linalg_qr", "complete"): "mode='complete' with more rows than columns: PyTorch raises",
    ("linalg_eig", "3x3"): "eigenvectors up to a phase: gradchecked on eigenvalues and |vectors| "
    "in tests/complex/cases.py",
    ("linalg_eig", "batched"): "eigenvectors up to a phase: gradchecked on eigenvalues and "
    "|vectors| in tests/complex/cases.py",
    ("geqrf", "tall"): "no derivative in PyTorch: backward raises",
    ("linalg_ldl_factor_ex", "symmetric"): "no derivative in PyTorch: backward raises",
    ("linalg_ldl_solve", "symmetric"): "no derivative in PyTorch: backward raises",
    **{
        (op, "halves"): "exact halves sit on rounding's steps: x +- eps crosses them"
        for op in ("round", "round_", "round.decimals", "round_.decimals")
    },
    **{(op, "nan"): "NaN input: finite differences are NaN" for op in ("fmax", "fmin")},
    **{
        (op, "signs"): "a zero divisor: NaN, finite differences too"
        for op in ("fmod.Tensor", "fmod_.Tensor")
    },
    **{(op, "domain_ends"): "0, 1 and outside [0, 1]: inf and NaN" for op in ("logit", "logit_")},
    **{
        (op, "signed_zeros"): "other is +-0 and self 0 there: x +- eps flips the sign"
        for op in ("copysign.Tensor", "copysign_.Tensor")
    },
    **{
        (op, "infinities"): "infinite inputs: finite differences are NaN"
        for op in ("logaddexp", "logaddexp2")
    },
    ("nanmedian", "all_nan"): "only NaN: the result is NaN",
    ("mode", "nan"): "repeated values: x +- eps breaks the tie that makes the mode",
    ("frexp.Tensor", "specials"): "0, infinities and powers of two, where the exponent steps",
    ("special_entr", "special_points"): "0 and -1: entr's derivative is -inf and undefined",
    ("angle", "signs"): "NaN input, and 0 where angle steps from pi to 0",
    **{
        (op, "special_points"): "x = 0: sinc's gradient is pinned to 0 there (PyTorch's "
        "sinc_backward), so its second derivative is 0, not -pi^2 / 3"
        for op in ("sinc", "sinc_")
    },
    **{
        (op, sample): "NaN and infinite inputs: finite differences are NaN"
        for op in ("nan_to_num", "nan_to_num_")
        for sample in ("nonfinite", "nonfinite_values", "nonfinite_kw")
    },
}
# ops whose formula calls a backward kernel that, as in PyTorch, has no derivative of its own
NO_DOUBLE_BACKWARD = {"_scaled_dot_product_flash_attention_for_cpu"}
# (op, sample) -> gradcheck options where the default float64 ones cannot resolve the op
OPTIONS: dict[tuple[str, str], dict[str, float]] = {
    ("_to_copy", "to_float32"): {"eps": 1e-3},  # float32 output rounds a 1e-6 step away
    ("_to_copy", "to_float16"): {"eps": 0.1, "atol": 0.02, "rtol": 0.02},
}


def _samples(info: OpInfo) -> Iterator[SampleInput]:
    if info.kind == "random":  # zero formulas (normal, bernoulli, uniform_...): each call draws
        return  # anew, so finite differences are noise; test_random_ops_have_zero_gradients
    rng = np.random.default_rng(zlib.crc32(f"{info.name}-grad".encode()))
    seen: set[str] = set()
    for s in info.sample_inputs("float64", rng):
        if s.name in seen:  # the generators repeat a name now and then; keep the first
            continue
        seen.add(s.name)
        if (info.name, s.name) not in EXCLUDED:
            yield s


def _inplace_variants() -> dict[str, str]:
    """In-place overload -> the formula it runs under (its own, or its functional's)."""
    out = {}
    for key in ENTRIES:
        if "inplace" not in ENTRIES[key].get("tags", []) or _is_cia(key):
            continue
        functional = _functional_of(key) or key
        if functional in F.FORMULAS:
            out[key] = functional
        elif key in F.FORMULAS:  # its own entry (_zero_gradient_inplace)
            out[key] = key
    return out


INPLACE = _inplace_variants()
FUNCTIONAL = sorted(k for k in F.FORMULAS if k not in INPLACE)


def _cases() -> Iterator[Any]:
    for key in FUNCTIONAL:
        for s in _samples(OPS_BY_NAME[key]):
            yield pytest.param(key, key, s, id=f"{key}-{s.name}")


def _inplace_cases() -> Iterator[Any]:
    for key, formula in sorted(INPLACE.items()):
        for s in _samples(OPS_BY_NAME[key]):
            yield pytest.param(key, formula, s, id=f"{key}-{s.name}")


def _run_gradcheck(
    key: str, formula: str, sample: SampleInput, device: str, *, second: bool = False
) -> None:
    info = OPS_BY_NAME[key]
    if info.needs_special and not has_special_functions(device):
        pytest.skip(f"the {device} backend has no special-function namespace")
    if info.needs_strides and not has_strides(device):
        pytest.skip(f"the {device} backend has no strides")
    leaves, args, kwargs = _prepare(key, sample, _differentiable_names(formula), device)
    call = _caller(info, args, kwargs, inplace=key in INPLACE)
    if not leaves:
        pytest.skip("no floating-point input the formula differentiates")
    options = OPTIONS.get((key, sample.name), {})
    check = tp.autograd.gradgradcheck if second else tp.autograd.gradcheck
    assert check(call, tuple(leaves), **options)


def _differentiable_names(key: str) -> set[str]:
    """The inputs ``key``'s formulas differentiate: inputs PyTorch has no derivative for
    (igamma's self, whose backward raises) stay constant in the checks."""
    return {
        n for n in _formula_names(key)
        if not getattr(F.FORMULAS[key].get(n), "not_implemented", False)
    }  # fmt: skip


def _on_devices(cases: Iterator[Any]) -> list[Any]:
    return needs.device_params(list(cases), lambda p: p.values[0])


@pytest.mark.parametrize(("key", "formula", "sample", "device"), _on_devices(_cases()))
def test_gradcheck(key: str, formula: str, sample: SampleInput, device: str) -> None:
    _run_gradcheck(key, formula, sample, device)


@pytest.mark.parametrize(("key", "formula", "sample", "device"), _on_devices(_inplace_cases()))
def test_gradcheck_inplace(key: str, formula: str, sample: SampleInput, device: str) -> None:
    _run_gradcheck(key, formula, sample, device)


# backward kernels whose own formula is a long composite (Note [Grid sampler double backward]):
# gradgradcheck of them is a third derivative, minutes on the shared machine; gradcheck checks
# their formula, and tests/nn/test_resample_torch.py compares it with PyTorch's
THIRD_ORDER_SKIPPED = {"grid_sampler_2d_backward", "grid_sampler_3d_backward"}


def _gradgrad_cases() -> Iterator[Any]:
    for key in FUNCTIONAL:
        if key in NO_DOUBLE_BACKWARD or key in THIRD_ORDER_SKIPPED:
            continue
        for s in _samples(OPS_BY_NAME[key]):
            dtype = s.kwargs.get("dtype")
            integral = isinstance(dtype, DT) and not getattr(tp, dtype.name).is_floating_point
            if (key, s.name) not in OPTIONS and not integral:  # int results: no 2nd order
                yield pytest.param(key, key, s, id=f"{key}-{s.name}")


@pytest.mark.parametrize(("key", "formula", "sample", "device"), _on_devices(_gradgrad_cases()))
def test_gradgradcheck(key: str, formula: str, sample: SampleInput, device: str) -> None:
    _run_gradcheck(key, formula, sample, device, second=True)


@pytest.mark.parametrize(("key", "formula", "sample", "device"), _on_devices(_inplace_cases()))
def test_gradgradcheck_inplace(key: str, formula: str, sample: SampleInput, device: str) -> None:
    _run_gradcheck(key, formula, sample, device, second=True)


def test_exclusions_name_real_samples() -> None:
    for op, sample in [*EXCLUDED, *OPTIONS]:
        rng = np.random.default_rng(0)
        names = {s.name for s in OPS_BY_NAME[op].sample_inputs("float64", rng)}
        assert sample in names, f"EXCLUDED/OPTIONS name {op} sample {sample!r}, which is gone"


# --- values at the points PyTorch defines by convention ---------------------------------------


def f64(values: Any, requires_grad: bool = True) -> Tensor:
    return tp.tensor(values, dtype=tp.float64, requires_grad=requires_grad)


def grad_of(fn: Callable[..., Tensor], *inputs: Tensor) -> tuple[Any, ...]:
    out = fn(*inputs)
    grads = tp.autograd.grad(out.sum(), list(inputs))
    return tuple(g.tolist() for g in grads)


def test_max_and_amax_share_the_gradient_among_ties() -> None:
    x = f64([1.0, 3.0, 3.0, 2.0])
    assert grad_of(tp.max, x) == ([0.0, 0.5, 0.5, 0.0],)
    assert grad_of(tp.min, f64([1.0, 1.0, 4.0])) == ([0.5, 0.5, 0.0],)
    m = f64([[1.0, 5.0, 5.0], [2.0, 2.0, 2.0]])
    third = 1 / 3
    assert grad_of(lambda t: tp.amax(t, 1), m) == ([[0.0, 0.5, 0.5], [third, third, third]],)


def test_max_dim_gives_the_gradient_to_the_selected_index() -> None:
    x = f64([[1.0, 4.0, 4.0], [3.0, 0.0, 1.0]])
    assert grad_of(lambda t: tp.max(t, 1).values, x) == ([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],)


def test_maximum_and_minimum_split_ties_half_half() -> None:
    a, b = f64([1.0, 2.0, 3.0]), f64([1.0, 5.0, 0.0])
    assert grad_of(tp.maximum, a, b) == ([0.5, 0.0, 1.0], [0.5, 1.0, 0.0])
    assert grad_of(tp.minimum, a, b) == ([0.5, 1.0, 0.0], [0.5, 0.0, 1.0])


def test_kinks_use_pytorchs_subgradients() -> None:
    x = f64([-1.0, 0.0, 2.0])
    assert grad_of(tp.abs, x) == ([-1.0, 0.0, 1.0],)  # sign(0) = 0
    assert grad_of(tp.relu, x) == ([0.0, 0.0, 1.0],)  # relu'(0) = 0
    # clamp passes the gradient on its bounds
    assert grad_of(lambda t: tp.clamp(t, 0.0, 2.0), x) == ([0.0, 1.0, 1.0],)
    lo, hi = f64([0.0, 0.0, 0.0]), f64([1.0, 1.0, 1.0])
    assert grad_of(lambda t, a, b: tp.clamp(t, a, b), x, lo, hi) == (
        [0.0, 1.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0],
    )


def test_piecewise_constant_ops_give_zero_gradients_not_none() -> None:
    x, y = f64([1.5, -2.5]), f64([2.0, 0.5])
    assert grad_of(tp.sign, x) == ([0.0, 0.0],)
    for mode in ("trunc", "floor"):
        assert grad_of(lambda a, b: tp.div(a, b, rounding_mode=mode), x, y) == (
            [0.0, 0.0],
            [0.0, 0.0],
        )
    assert grad_of(lambda t: t.clone().fill_(3.0), x) == ([0.0, 0.0],)


def test_pow_with_exponent_zero_has_zero_gradient() -> None:
    x = f64([0.0, 2.0])
    assert grad_of(lambda t: tp.pow(t, 0), x) == ([0.0, 0.0],)
    e = f64([0.0, 1.0])
    # d/dx x**e is 0 where e == 0 (also at x == 0); d/de 0**e is 0 for e >= 0
    assert grad_of(tp.pow, x, e) == ([0.0, 1.0], [0.0, 2.0 * np.log(2.0)])


def test_exact_gelu_at_zero() -> None:
    """Its formula reads Phi(x) off the result as result / x, except at 0."""
    x = f64([0.0, -0.0, 1.0])
    assert grad_of(tp.gelu, x)[0][:2] == [0.5, 0.5]
    assert tp.autograd.gradcheck(tp.gelu, (x,))
    assert tp.autograd.gradgradcheck(tp.gelu, (x,))


def test_prod_with_zeros() -> None:
    assert grad_of(tp.prod, f64([2.0, 0.0, 3.0])) == ([0.0, 6.0, 0.0],)
    assert grad_of(tp.prod, f64([2.0, 0.0, 0.0])) == ([0.0, 0.0, 0.0],)
    m = f64([[2.0, 0.0, 3.0], [1.0, 2.0, 4.0]])
    assert grad_of(lambda t: tp.prod(t, 1), m) == ([[0.0, 6.0, 0.0], [8.0, 4.0, 2.0]],)
    # prod is multilinear, so finite differences are exact at zeros too
    for values in ([[2.0, 0.0, 3.0], [0.0, 0.0, 1.5]], [[0.5, -1.0, 0.0], [1.0, 2.0, 3.0]]):
        t = f64(values)
        assert tp.autograd.gradcheck(tp.prod, (t,))
        assert tp.autograd.gradcheck(lambda a: tp.prod(a, 1), (t,))
        assert tp.autograd.gradgradcheck(lambda a: tp.prod(a, 0, keepdim=True), (t,))


def test_expand_sums_back_to_the_input_shape() -> None:
    x = f64([[1.0], [2.0]])
    (g,) = tp.autograd.grad(x.expand([3, 2, 4]).sum(), [x])
    assert g.shape == (2, 1) and g.tolist() == [[12.0], [12.0]]


def test_cat_does_not_save_its_inputs() -> None:
    """cat reads only the input shapes: changing an input afterwards is fine, as in PyTorch."""
    a, b = f64([1.0, 2.0]), f64([3.0])
    a2 = a * 1
    y = tp.cat([a2, b])
    with tp.no_grad():
        a2.add_(1.0)
    y.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [1.0]


def test_cat_gives_skipped_1d_empty_inputs_an_empty_gradient() -> None:
    a, e = f64([[1.0, 2.0], [3.0, 4.0]]), f64([])
    (ga, ge) = tp.autograd.grad(tp.cat([e, a, e], 1).sum(), [a, e])
    assert ga.tolist() == [[1.0, 1.0], [1.0, 1.0]] and ge.shape == (0,)
    assert tp.autograd.gradcheck(lambda u, v: tp.cat([u, v], -1), (e, a))


def test_matmul_broadcast_and_vector_cases() -> None:
    rng = np.random.default_rng(1)
    for sa, sb in (((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 1, 2, 3), (4, 3, 2))):
        a, b = f64(rng.standard_normal(sa).tolist()), f64(rng.standard_normal(sb).tolist())
        assert tp.autograd.gradcheck(tp.matmul, (a, b))


# --- outputs that never require grad; out= --------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: x == y,
        lambda x, y: x < 1.0,
        lambda x, y: tp.logical_and(x, y),
        lambda x, y: tp.argmax(x),
        lambda x, y: tp.argmin(x, 0),
        lambda x, y: tp.floor_divide(x, y),
        lambda x, y: x // 2.0,
        lambda x, y: x.detach(),
        lambda x, y: x.to(tp.int64),
        lambda x, y: tp.max(x, 0).indices,
        lambda x, y: tp.zeros_like(x),
    ],
    ids=[
        "eq",
        "lt_scalar",
        "logical_and",
        "argmax",
        "argmin",
        "floor_divide",
        "floor_divide_scalar",
        "detach",
        "to_int64",
        "max_dim_indices",
        "zeros_like",
    ],
)
def test_nondifferentiable_outputs_do_not_require_grad(fn: Callable[..., Tensor]) -> None:
    x, y = f64([1.0, -2.0, 3.0]), f64([2.0, 2.0, 2.0])
    out = fn(x, y)
    assert not out.requires_grad
    assert out.grad_fn is None


def test_max_dim_values_require_grad_and_indices_do_not() -> None:
    values, indices = tp.max(f64([[1.0, 2.0], [4.0, 3.0]]), 1)
    assert values.requires_grad and not indices.requires_grad


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_out_variants_refuse_inputs_that_require_grad(name: str) -> None:
    fn = getattr(tp, name)
    x, y = f64([1.0, 2.0]), f64([3.0, 4.0], requires_grad=False)
    out = tp.zeros([2], dtype=tp.float64)
    with pytest.raises(RuntimeError) as info:
        fn(x, y, out=out)
    msg = str(info.value)
    assert "functions with out=... arguments don't support automatic differentiation" in msg
    assert "but one of the arguments requires grad" in msg
    # without grad, out= works
    with tp.no_grad():
        assert fn(x, y, out=out) is out
    assert fn(x.detach(), y, out=out) is out


def test_random_ops_have_zero_gradients() -> None:
    """PyTorch's derivatives.yaml: normal's mean and std and bernoulli's p get zero gradients
    (the draws are not reparameterized), and the in-place fills zero the old values' gradient
    as fill_ does; the output still has a grad_fn, as in PyTorch."""
    mean = tp.zeros(4, dtype=tp.float64, requires_grad=True)
    std = tp.ones(4, dtype=tp.float64, requires_grad=True)
    p = tp.full([4], 0.5, dtype=tp.float64, requires_grad=True)
    outs = [
        tp.normal(mean, std),
        tp.normal(mean, 2.0),
        tp.normal(1.0, std),
        tp.bernoulli(p),
        tp.bernoulli(p, 0.5),
    ]
    for fill in ("uniform_", "normal_", "exponential_", "bernoulli_"):
        outs.append(getattr(mean * 1, fill)())
    for out in outs:
        assert out.requires_grad and out.grad_fn is not None
    grads = tp.autograd.grad(sum(o.sum() for o in outs), [mean, std, p])
    for g in grads:
        assert g.tolist() == [0.0] * 4
    assert not tp.multinomial(p, 2).requires_grad
    assert not tp.randperm(3).requires_grad
