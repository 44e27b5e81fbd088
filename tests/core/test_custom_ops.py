# ruff: noqa: UP007, UP037, UP045 - the hints are written as PyTorch's examples write them
"""tp.library's modern API (core/src/tensorplug/_custom_ops.py, _opcheck.py): custom_op with the
schema inferred from type hints, register_fake / register_kernel / register_autograd, and
opcheck passing, and failing on purpose, check by check. Schemas are compared with what
PyTorch 2.13's torch.library.infer_schema gives for the same functions (SymInt written int)."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Optional

import pytest

import tensorplug as tp
from tensorplug import Tensor
from tests.needs import HAS_AUTOGRAD, needs_autograd

np = pytest.importorskip("numpy")
Number = typing.Union[int, float, bool]  # torch.types.Number, as PyTorch writes it


# --- infer_schema ---------------------------------------------------------------------------


def f1(x: Tensor) -> Tensor: ...
def f2(x: Tensor, y: float, n: int = 2, flag: bool = False, name: str = "mean") -> Tensor: ...
def f3(
    x: Optional[Tensor],
    xs: list[Tensor],
    ys: list[Optional[Tensor]],
    s: Sequence[int],
    o: Optional[list[int]] = None,
) -> list[Tensor]: ...
def f4(
    x: Tensor,
    *,
    alpha: Number = 1,
    dt: Optional[tp.dtype] = None,
    dev: Optional[tp.device] = None,
) -> tuple[Tensor, Tensor]: ...
def f5(x: Tensor, out: Tensor) -> None: ...
def f6(a: Tensor, b: list[Tensor], c: int) -> int: ...
def f7(x: Tensor, p: float = 1e-05, q: int = -1) -> Number: ...
def f8(x: "Tensor", k: "int") -> "Tensor": ...
def f9(x: Tensor | None, ws: list[float] | None = None) -> bool: ...


@pytest.mark.parametrize(
    ("fn", "mutates", "expected"),
    [
        (f1, (), "(Tensor x) -> Tensor"),
        (f2, (), '(Tensor x, float y, int n=2, bool flag=False, str name="mean") -> Tensor'),
        (f3, (), "(Tensor? x, Tensor[] xs, Tensor?[] ys, int[] s, int[]? o=None) -> Tensor[]"),
        (f4, (), "(Tensor x, *, Scalar alpha=1, ScalarType? dt=None, Device? dev=None) -> "
                 "(Tensor, Tensor)"),
        (f5, {"out"}, "(Tensor x, Tensor(a1!) out) -> ()"),
        (f6, "unknown", "(Tensor(a0!) a, Tensor(a1!)[] b, int c) -> int"),
        (f7, (), "(Tensor x, float p=1e-05, int q=-1) -> Scalar"),
        (f8, (), "(Tensor x, int k) -> Tensor"),
        (f9, (), "(Tensor? x, float[]? ws=None) -> bool"),
    ],
)  # fmt: skip
def test_infer_schema_as_pytorch(fn, mutates, expected):
    assert tp.library.infer_schema(fn, mutates_args=mutates) == expected
    named = tp.library.infer_schema(fn, mutates_args=mutates, op_name="g")
    assert named == "g" + expected
    tp.schema.parse(named)  # and the strict grammar takes it


def g_no_hint(x, y: int) -> Tensor: ...
def g_bad_type(x: Tensor, y: dict) -> Tensor: ...
def g_varargs(*xs: Tensor) -> Tensor: ...
def g_no_return(x: Tensor): ...
def g_bad_return(x: Tensor) -> dict: ...
def g_dtype_default(x: Tensor, dt: tp.dtype = tp.float32) -> Tensor: ...
def g_int(x: Tensor, n: int) -> Tensor: ...


@pytest.mark.parametrize(
    ("fn", "mutates", "what"),
    [
        (g_no_hint, (), "Parameter x must have a type annotation."),
        (g_bad_type, (), "Parameter y has unsupported type dict. The valid types are: Tensor, "),
        (g_varargs, (), "positional-only arguments, *args and **kwargs are not supported."),
        (g_no_return, (), "No return type annotation was provided. Please add one."),
        (g_bad_return, (), "Return has unsupported type dict. The valid types are: None, Tensor"),
        (g_dtype_default, (), "Parameter dt has an unsupported default value tensorplug.float32"),
        (g_int, {"n"}, "Parameter n is in mutates_args but only Tensors or collections of "
                       "Tensors can be mutated."),
        (g_int, {"m"}, "['m'] in mutates_args were not found in the custom op's signature."),
        (g_int, "all", "mutates_args must be the names of the arguments the function writes, "
                       "or 'unknown', not the string 'all'."),
    ],
)  # fmt: skip
def test_infer_schema_errors(fn, mutates, what):
    with pytest.raises(ValueError) as e:
        tp.library.infer_schema(fn, mutates_args=mutates)
    assert str(e.value).startswith(f"infer_schema({fn.__qualname__}): {what}")
    assert "Got func with signature (" in str(e.value)


def test_infer_schema_refuses_hints_that_do_not_evaluate():
    def f(x: "Tensr") -> "Tensor": ...  # noqa: F821

    with pytest.raises(ValueError) as e:
        tp.library.infer_schema(f, mutates_args=())
    assert str(e.value).startswith(
        "infer_schema(test_infer_schema_refuses_hints_that_do_not_evaluate.<locals>.f): its type "
        "hint 'Tensr' does not evaluate (NameError: name 'Tensr' is not defined); every name in "
        "the hints must be importable from the function's module."
    )


# --- custom_op ------------------------------------------------------------------------------


def test_custom_op_round_trip(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::numpy_mul", mutates_args=(), lib=lib)
        def numpy_mul(x: Tensor, y: float) -> Tensor:
            """x times y, through numpy."""
            return tp.tensor(x.numpy(force=True) * y, device=x.device)

        assert isinstance(numpy_mul, tp.library.CustomOpDef)
        assert numpy_mul.name == f"{ns}::numpy_mul" and numpy_mul.__name__ == "numpy_mul"
        assert numpy_mul.__doc__ == "x times y, through numpy."
        assert str(numpy_mul.op.schema) == f"{ns}::numpy_mul(Tensor x, float y) -> Tensor"
        assert numpy_mul.op is getattr(tp.ops, ns).numpy_mul.default
        assert repr(numpy_mul) == f"<CustomOpDef({ns}::numpy_mul): {numpy_mul.op.schema}>"
        x = np.array([1.0, -2.0, 3.5], np.float32)
        np.testing.assert_allclose(numpy_mul(tp.tensor(x), 2.0).numpy(), x * 2.0)
        np.testing.assert_allclose(numpy_mul(tp.tensor(x), y=0.5).numpy(), x * 0.5)
        table = tp.dispatcher.dispatch_table(numpy_mul.op)
        assert table["CPU"] == "CompositeExplicitAutograd" and table["Meta"] == "Meta"
        no_fake = numpy_mul.op.kernel_for(int(tp.keys.keyset("Meta")))  # until register_fake
        with pytest.raises(RuntimeError) as e:
            no_fake(tp.tensor(x), 2.0)
        assert str(e.value) == (
            f"{ns}::numpy_mul.default has no fake kernel, so it cannot run on Meta tensors (Note "
            "[Fake kernels]): register one with @numpy_mul.register_fake, a function of the same "
            "arguments that returns outputs of the right shapes and dtypes without reading data"
        )
        with pytest.raises(TypeError, match=rf"{ns}::numpy_mul.default\(\): argument 'y'"):
            numpy_mul(tp.tensor(x), "two")
    assert not hasattr(getattr(tp.ops, ns), "numpy_mul")  # closing the library removed it


def test_custom_op_with_explicit_schema_tags_and_device_types(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        def twice(x, n):
            return tp.mul(x, 2 * n)

        op = tp.library.custom_op(f"{ns}::twice", twice, mutates_args=(), device_types="cpu",
                                  schema="(Tensor x, int n=1) -> Tensor", tags="pointwise", lib=lib)  # fmt: skip
        assert str(op.op.schema) == f"{ns}::twice(Tensor x, int n=1) -> Tensor"
        assert op.op.tags == ("pointwise",)
        owner = f"{__name__}:test_custom_op_with_explicit_schema_tags_and_device_types"
        assert tp.dispatcher.registrations(op.op) == {"CPU": owner, "Meta": owner}  # the library's
        assert op(tp.ones(2)).tolist() == [2.0, 2.0]
        for bad in ("twice(Tensor x) -> Tensor", f"{ns}::(Tensor x) -> Tensor"):
            with pytest.raises(ValueError) as e:
                tp.library.custom_op(f"{ns}::other", twice, mutates_args=(), schema=bad, lib=lib)
            assert str(e.value) == (
                f"custom_op('{ns}::other'): schema= is the part after the name, such as "
                f"'(Tensor x, int n) -> Tensor'; got {bad!r}"
            )
        with pytest.raises(tp.SchemaError, match="unknown type 'Tensr'"):
            tp.library.custom_op(f"{ns}::bad", twice, mutates_args=(), schema="(Tensr x) -> Tensor", lib=lib)  # fmt: skip
        with pytest.raises(ValueError, match="the name must look like 'namespace::name'"):
            tp.library.custom_op("no_namespace", twice, mutates_args=())
        with pytest.raises(tp.RegistrationError) as e:
            tp.library.custom_op(f"{ns}::tw2", twice, mutates_args=(), device_types="tpu",
                                 schema="(Tensor x, int n=1) -> Tensor", lib=lib)  # fmt: skip
        assert str(e.value).startswith(
            f"{ns}::tw2: unknown device type 'tpu'; the device types are "
        )


def test_custom_op_without_lib_lives_in_its_own_fragment(ns):
    @tp.library.custom_op(f"{ns}::neg_copy", mutates_args=())
    def neg_copy(x: Tensor) -> Tensor:
        return tp.neg(x)

    try:
        assert neg_copy.lib.kind == "FRAGMENT" and neg_copy.lib.ns == ns
        assert neg_copy.lib.owner == (
            f"{__name__}:test_custom_op_without_lib_lives_in_its_own_fragment.<locals>.neg_copy"
        )
        assert neg_copy(tp.ones(1)).tolist() == [-1.0]
    finally:
        neg_copy.lib.close()
    assert not hasattr(getattr(tp.ops, ns), "neg_copy")


def test_mutating_custom_op_bumps_the_version_and_has_a_trivial_fake(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::sin_", mutates_args={"x"}, device_types="cpu", lib=lib)
        def sin_(x: Tensor) -> None:
            np.sin(x.numpy(), out=x.numpy())

        assert str(sin_.op.schema) == f"{ns}::sin_(Tensor(a0!) x) -> ()"
        x = tp.tensor([0.5, 1.0])
        v = x._version
        assert sin_(x) is None
        np.testing.assert_allclose(x.numpy(), np.sin([0.5, 1.0]).astype(np.float32))
        assert x._version == v + 1
        assert tp.dispatcher.dispatch_table(sin_.op)["Meta"] == "Meta"  # returns nothing
        assert tp.library.opcheck(sin_, (tp.randn(3),))["test_faketensor"] == "SUCCESS"


def test_outputs_of_a_custom_op_may_not_alias_its_inputs(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::same", mutates_args=(), lib=lib)
        def same(x: Tensor) -> Tensor:
            return x.view([-1])

        with pytest.raises(RuntimeError) as e:
            same(tp.ones(2, 2))
    assert str(e.value).startswith(
        f"{ns}::same.default (implemented by test_outputs_of_a_custom_op_may_not_alias_its_inputs"
        f".<locals>.same in {__name__}): the output of a custom operator must not be one of its "
        "inputs or a view of one."
    )


def test_factory_custom_op_takes_its_backend_from_the_device_argument(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::three", mutates_args=(), device_types="cpu", lib=lib)
        def three(device: tp.device) -> Tensor:
            return tp.full([3], 3.0, device=device)

        assert three("cpu").tolist() == [3.0, 3.0, 3.0]
        assert three(device=tp.device("cpu")).device.type == "cpu"
        assert tp.dispatcher.dispatch_table(three.op)["BackendSelect"] == "BackendSelect"
        with pytest.raises(tp.DispatchError, match=f"Could not run '{ns}::three.default' with arguments from the 'CUDA' backend"):  # fmt: skip
            three("cuda")


# --- register_fake, register_kernel, register_autograd --------------------------------------


def test_register_fake_is_the_meta_kernel(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::rowsum", mutates_args=(), lib=lib)
        def rowsum(x: Tensor) -> Tensor:
            return tp.tensor(x.numpy().sum(axis=1))

        @rowsum.register_fake
        def _(x):
            return x.new_empty([x.shape[0]])

        assert tp.dispatcher.dispatch_table(rowsum.op)["Meta"] == "Meta"
        fake = rowsum.op.kernel_for(int(tp.keys.keyset("Meta")))
        assert fake(tp.ones(4, 3)).shape == (4,)  # on a real tensor: no Meta tensors yet

        # the free-standing form, by name; allow_override=False refuses a second one
        def other(x):
            return x.new_empty([x.shape[0], 1])

        with pytest.raises(tp.RegistrationError) as e:
            tp.library.register_fake(f"{ns}::rowsum", other, lib=lib, allow_override=False)
        assert str(e.value) == (
            f"register_fake: {ns}::rowsum.default already has a fake (Meta) kernel, from "
            f"{__name__}:test_register_fake_is_the_meta_kernel; pass "
            "allow_override=True to replace it"
        )
        tp.library.register_fake(f"{ns}::rowsum", lib=lib)(other)
        assert rowsum.op.kernel_for(int(tp.keys.keyset("Meta")))(tp.ones(4, 3)).shape == (4, 1)
        with pytest.warns(DeprecationWarning, match="impl_abstract was renamed to tp.library.register_fake"):  # fmt: skip
            tp.library.impl_abstract(f"{ns}::rowsum", other, lib=lib)
        with pytest.raises(tp.RegistrationError, match=f"register_fake: no operator named '{ns}::nothing'"):  # fmt: skip
            tp.library.register_fake(f"{ns}::nothing", other)


def test_register_fake_on_a_library_operator(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("rows(Tensor x) -> Tensor")
        lib.impl("rows", lambda x: tp.ones(x.shape[0]), "CPU")

        @tp.library.register_fake(f"{ns}::rows", lib=lib)
        def _(x):
            return tp.empty(x.shape[0], device=x.device)

        assert tp.dispatcher.registrations(f"{ns}::rows")["Meta"] == (
            f"{__name__}:test_register_fake_on_a_library_operator"
        )
        assert tp.library.opcheck(getattr(tp.ops, ns).rows, (tp.ones(2, 5),))["test_faketensor"] == "SUCCESS"  # fmt: skip


def test_register_kernel_per_device_type(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::which", mutates_args=(), lib=lib)
        def which(x: Tensor) -> Tensor:
            return tp.zeros(1)

        @which.register_kernel("cpu")
        def _(x):
            return tp.ones(1)

        assert which(tp.ones(2)).tolist() == [1.0]  # the CPU kernel wins over the default
        table = tp.dispatcher.dispatch_table(which.op)
        assert table["CPU"] == "CPU" and table["CUDA"] == "CompositeExplicitAutograd"
        tp.library.register_kernel(which, "cpu", lambda x: tp.full([1], 2.0))  # replaces it
        assert which(tp.ones(2)).tolist() == [2.0]

        lib.define("plain(Tensor x) -> Tensor")
        tp.library.register_kernel(f"{ns}::plain", ["cpu", "cuda"], lambda x: "k", lib=lib)
        assert set(tp.dispatcher.registrations(f"{ns}::plain")) == {"CPU", "CUDA"}
        with pytest.raises(tp.RegistrationError, match="a kernel for key 'CPU' is already registered"):  # fmt: skip
            tp.library.register_kernel(f"{ns}::plain", "cpu", lambda x: "again", lib=lib)


@needs_autograd
def test_register_autograd_gives_the_gradient(ns):
    with tp.Library(ns, "FRAGMENT") as lib:

        @tp.library.custom_op(f"{ns}::numpy_sin", mutates_args=(), lib=lib)
        def numpy_sin(x: Tensor) -> Tensor:
            return tp.tensor(np.sin(x.numpy(force=True)))

        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        numpy_sin.register_autograd(backward, setup_context=setup_context)
        x = tp.tensor([0.1, 0.7, -1.2], dtype=tp.float64, requires_grad=True)
        (g,) = tp.autograd.grad(numpy_sin(x).sum(), x)
        xs = np.array([0.1, 0.7, -1.2])
        h = 1e-6  # central finite differences of the numpy function
        np.testing.assert_allclose(
            g.numpy(), (np.sin(xs + h) - np.sin(xs - h)) / (2 * h), rtol=1e-6
        )
        assert tp.dispatcher.dispatch_table(numpy_sin.op)["AutogradCPU"] == "Autograd"


# --- opcheck --------------------------------------------------------------------------------


def _numpy_mul(ns, lib, *, fake=True, autograd=True):
    @tp.library.custom_op(f"{ns}::numpy_mul", mutates_args=(), lib=lib)
    def numpy_mul(x: Tensor, y: float) -> Tensor:
        return tp.tensor(x.numpy(force=True) * y, device=x.device)

    if fake:

        @numpy_mul.register_fake
        def _(x, y):
            return tp.empty_like(x)

    if autograd and HAS_AUTOGRAD:

        def setup_context(ctx, inputs, output):
            ctx.y = inputs[1]

        numpy_mul.register_autograd(lambda ctx, g: (g * ctx.y, None), setup_context=setup_context)
    return numpy_mul


def test_opcheck_passes_and_names_each_check(ns):
    with tp.Library(ns, "FRAGMENT") as lib:
        numpy_mul = _numpy_mul(ns, lib)
        result = tp.library.opcheck(numpy_mul, (tp.randn(3), 3.14))
        assert result == {
            "test_schema": "SUCCESS",
            "test_autograd_registration": "SKIPPED: no input requires grad; pass inputs that do "
            "to run this check",
            "test_faketensor": "SUCCESS",
        }
        assert tp.library.opcheck(numpy_mul.op, (tp.randn(2, 3),), {"y": 2.0},
                                  test_utils="test_schema") == {"test_schema": "SUCCESS"}  # fmt: skip
        x = tp.ones(3)
        tp.library.opcheck(numpy_mul, (x, 2.0))
        assert x.tolist() == [1.0, 1.0, 1.0] and x._version == 0  # the checks ran on copies
        if HAS_AUTOGRAD:
            xg = tp.randn(1, 10, requires_grad=True)
            assert tp.library.opcheck(numpy_mul, (xg, 1.234), test_utils="ALL") == {
                "test_schema": "SUCCESS",
                "test_autograd_registration": "SUCCESS",
                "test_faketensor": "SUCCESS",
            }
            assert xg.grad is None


def test_opcheck_of_standard_operators():
    # a CompositeImplicitAutograd op decomposes on every key, Meta included
    assert tp.library.opcheck(tp.ops.aten.special_expit.default, (tp.randn(3),)) == {
        "test_schema": "SUCCESS",
        "test_autograd_registration": "SKIPPED: no input requires grad; pass inputs that do to "
        "run this check",
        "test_faketensor": "SUCCESS",
    }
    assert tp.library.opcheck(tp.ops.aten.add_.Tensor, (tp.ones(2), tp.ones(2)),
                              test_utils=["test_schema"]) == {"test_schema": "SUCCESS"}  # fmt: skip
    assert tp.library.opcheck(tp.ops.aten.view.default, (tp.ones(4), [2, 2]),
                              test_utils=["test_schema"]) == {"test_schema": "SUCCESS"}  # fmt: skip
    # the standard operators' Meta kernels come with the core's Meta backend (docs/meta.md)
    r = tp.library.opcheck(tp.ops.aten.sin.default, (tp.ones(2),), raise_exception=False)
    assert r["test_faketensor"] == "SUCCESS"
    r = tp.library.opcheck(tp.ops.aten.mm.default, (tp.ones(2, 3), tp.ones(3, 4)))
    assert r["test_faketensor"] == "SUCCESS"


def _fails(op, args, check, kwargs=None, error=AssertionError):
    with pytest.raises(tp.library.OpCheckError) as e:
        tp.library.opcheck(op, args, kwargs, test_utils=[check])
    name = op.op.name if hasattr(op, "op") else op.name
    prefix = f"opcheck({name}): {check} failed: "
    assert str(e.value).startswith(prefix)
    assert type(e.value.__cause__) is error
    return str(e.value)[len(prefix) :]


def test_opcheck_schema_catches_undeclared_writes_and_aliases(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("scale(Tensor x) -> Tensor")
        lib.define("ident(Tensor x) -> Tensor")
        lib.define("flat(Tensor x) -> Tensor")
        lib.define("flat_ok(Tensor(a) x) -> Tensor(a)")

        def scale(x):
            x.mul_(2)  # writes x, which the schema does not mark (a!)
            return x.clone()

        lib.impl("scale", scale, "CPU")
        lib.impl("ident", lambda x: x, "CPU")
        lib.impl("flat", lambda x: x.view([-1]), "CPU")
        lib.impl("flat_ok", lambda x: x.view([-1]), "CPU")
        ops = getattr(tp.ops, ns)
        assert _fails(ops.scale.default, (tp.ones(2),), "test_schema") == (
            f"the argument 'x' is not marked written (a!) in the schema '{ns}::scale(Tensor x) "
            "-> Tensor', but the operator changed it"
        )
        assert _fails(ops.ident.default, (tp.ones(2),), "test_schema") == (
            "outputs[0] is the argument 'x', which the schema does not mark written: return a "
            "new tensor, or annotate both, as in 'Tensor(a!) x' and '-> Tensor(a!)'"
        )
        assert _fails(ops.flat.default, (tp.ones(2, 2),), "test_schema") == (
            "outputs[0] aliases the argument 'x' (a view of it), but the schema does not say so: "
            "annotate both with one alias set, as in 'Tensor(a) x' and '-> Tensor(a)', or return "
            "a copy"
        )
        assert tp.library.opcheck(ops.flat_ok.default, (tp.ones(2, 2),), test_utils="test_schema")
        nan = tp.tensor([float("nan"), 1.0])  # NaN stays NaN: not a change
        assert tp.library.opcheck(ops.flat_ok.default, (nan,), test_utils="test_schema")


def test_opcheck_faketensor_catches_missing_and_wrong_fake_kernels(ns):
    with tp.Library(ns, "FRAGMENT") as lib:
        numpy_mul = _numpy_mul(ns, lib, fake=False)  # its fake kernel says it has none
        assert _fails(numpy_mul, (tp.randn(3), 2.0), "test_faketensor", error=RuntimeError) == (
            f"{ns}::numpy_mul.default has no fake kernel, so it cannot run on Meta tensors (Note "
            "[Fake kernels]): register one with @numpy_mul.register_fake, a function of the same "
            "arguments that returns outputs of the right shapes and dtypes without reading data"
        )
        lib.define("plain(Tensor x) -> Tensor")  # an operator of a Library: nothing for Meta
        lib.impl("plain", lambda x: x.clone(), "CompositeExplicitAutograd")
        assert _fails(getattr(tp.ops, ns).plain.default, (tp.randn(3),), "test_faketensor") == (
            "it has no fake kernel (its Meta entry is CompositeExplicitAutograd): register one "
            f"that computes the outputs' shapes and dtypes without reading data, with "
            f"tp.library.register_fake('{ns}::plain.default', fn) (or @op.register_fake for "
            "a custom op)"
        )
        numpy_mul.register_fake(lambda x, y: tp.empty(x.shape[0] + 1))
        assert _fails(numpy_mul, (tp.randn(3), 2.0), "test_faketensor") == (
            "outputs: the fake kernel gives shape (4,), the kernel (3,)"
        )
        numpy_mul.register_fake(lambda x, y: tp.empty_like(x, dtype=tp.float64))
        assert _fails(numpy_mul, (tp.randn(3), 2.0), "test_faketensor") == (
            "outputs: the fake kernel gives dtype tensorplug.float64, the kernel tensorplug.float32"
        )
        numpy_mul.register_fake(lambda x, y: (tp.empty_like(x),))
        assert _fails(numpy_mul, (tp.randn(3), 2.0), "test_faketensor") == (
            "outputs: the fake kernel gives tuple, the kernel a Tensor"
        )
        numpy_mul.register_fake(lambda x, y: tp.empty(x.shape))  # on cpu: meta inputs run it
        assert _fails(numpy_mul, (tp.randn(3), 2.0), "test_faketensor") == (
            "outputs: the fake kernel gives a tensor on cpu for Meta inputs; make its outputs on "
            "the inputs' device (tp.empty(..., device=x.device), tp.empty_like(x))"
        )
        numpy_mul.register_fake(lambda x, y: tp.empty_like(x))
        assert tp.library.opcheck(numpy_mul, (tp.randn(3), 2.0))["test_faketensor"] == "SUCCESS"


@needs_autograd
def test_opcheck_autograd_registration_catches_a_fallthrough(ns):
    with tp.Library(ns, "FRAGMENT") as lib:
        numpy_mul = _numpy_mul(ns, lib, autograd=False)
        x = tp.randn(3, requires_grad=True)
        # without a formula the autograd plugin's fallback makes backward raise: allowed
        assert tp.library.opcheck(numpy_mul, (x, 2.0), test_utils="test_autograd_registration")
        lib.impl(numpy_mul.op, tp.library.fallthrough_kernel, "Autograd")  # drops gradients
        assert _fails(numpy_mul, (x, 2.0), "test_autograd_registration") == (
            "its inputs require grad, but its AutogradCPU entry falls through to the backend "
            "kernel: the outputs would not require grad and gradients would be lost without an "
            f"error. Register a derivative with tp.library.register_autograd('{ns}::numpy_mul."
            "default', backward, setup_context=...) or an 'Autograd' kernel; for an operator "
            "without one, tp.autograd.autograd_not_implemented_fallback() makes backward raise "
            "instead"
        )


def test_opcheck_without_raising_returns_the_errors(ns):
    with tp.Library(ns, "FRAGMENT") as lib:
        numpy_mul = _numpy_mul(ns, lib, fake=False)
        result = tp.library.opcheck(numpy_mul, (tp.randn(3), 2.0), raise_exception=False)
        assert result["test_schema"] == "SUCCESS"
        assert isinstance(result["test_faketensor"], RuntimeError)
        assert "has no fake kernel" in str(result["test_faketensor"])


def test_opcheck_argument_errors(ns):
    with pytest.raises(ValueError) as e:
        tp.library.opcheck(tp.ops.aten.sin.default, (tp.ones(1),), test_utils=["test_aot_dispatch_dynamic"])  # fmt: skip
    assert str(e.value) == (
        "opcheck(op, ..., test_utils=['test_aot_dispatch_dynamic']): unknown check(s) "
        "['test_aot_dispatch_dynamic']; the checks are test_schema, test_autograd_registration, "
        "test_faketensor (PyTorch's test_aot_dispatch_dynamic needs a compiler, which "
        "tensorplug does not have)"
    )
    with pytest.raises(ValueError) as e:
        tp.library.opcheck(tp.ops.aten.add, (tp.ones(1), tp.ones(1)))
    assert str(e.value).startswith(
        "opcheck: aten::add has 3 overloads (Tensor, Scalar, out); pass one"
    )
    assert tp.library.opcheck(tp.ops.aten.sin_, (tp.ones(1),), test_utils="test_schema")
    with pytest.raises(ValueError, match=r"op must be a custom op \(tp.library.custom_op\)"):
        tp.library.opcheck(tp.sin, (tp.ones(1),))
