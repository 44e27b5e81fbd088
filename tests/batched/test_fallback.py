"""The Batched fallback (operators of any namespace without a rule) and custom rules through
tp.library.register_vmap, against Python loops."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp

pytest.importorskip("tensorplug_batched")
if "batched" not in tp.plugins.loaded_names():
    pytest.skip("needs the tensorplug-batched plugin loaded", allow_module_level=True)


def perf_warnings(record):
    return [str(w.message) for w in record if "performance drop" in str(w.message)]


def test_fallback_loops_stacks_and_warns_once(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("scale_rows(Tensor x, float k) -> Tensor")
        lib.impl("scale_rows", lambda x, k: x * k + x.sum(), "CPU")
        op = getattr(tp.ops, ns).scale_rows
        x = tp.randn(3, 4)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            got = tp.vmap(lambda r: op(r, 2.0))(x)
            again = tp.vmap(lambda r: op(r, 2.0), in_dims=1)(x)
        want = tp.stack([op(x[i], 2.0) for i in range(3)])
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        want1 = tp.stack([op(x[:, j], 2.0) for j in range(4)])
        np.testing.assert_allclose(again.numpy(), want1.numpy(), rtol=1e-6)
        assert perf_warnings(record) == [
            "There is a performance drop because we have not yet implemented the batching rule "
            f"for {ns}::scale_rows.default. Please file us an issue on GitHub so that we can "
            "prioritize its implementation (or give the operator a rule with "
            "tp.library.register_vmap)."
        ]


def test_fallback_with_unbatched_tensors_and_nested_levels(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("mix(Tensor a, Tensor b) -> Tensor")
        lib.impl("mix", lambda a, b: a * 2 - b, "CPU")
        op = getattr(tp.ops, ns).mix
        x, y = tp.randn(2, 3, 4), tp.randn(4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = tp.vmap(tp.vmap(op, in_dims=(0, None)), in_dims=(0, None))(x, y)
        np.testing.assert_allclose(got.numpy(), (x * 2 - y).numpy(), rtol=1e-6)


def test_fallback_inplace_tuple_and_list_returns(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("double_(Tensor(a!) x) -> Tensor(a!)")
        lib.define("stats(Tensor x) -> (Tensor, Tensor)")
        lib.define("halves(Tensor x) -> Tensor[]")
        lib.impl("double_", lambda x: x.mul_(2), "CPU")
        lib.impl("stats", lambda x: (x.sum(), x.amax()), "CPU")
        lib.impl("halves", lambda x: [x[:2].clone(), x[2:].clone()], "CPU")
        ops = getattr(tp.ops, ns)
        x = tp.randn(3, 4)
        y = x.clone()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = tp.vmap(ops.double_)(y)
            s, m = tp.vmap(ops.stats)(x)
            h = tp.vmap(ops.halves)(x)
        np.testing.assert_allclose(y.numpy(), (x * 2).numpy())
        np.testing.assert_allclose(out.numpy(), (x * 2).numpy())
        np.testing.assert_allclose(s.numpy(), x.sum(1).numpy(), rtol=1e-6)
        np.testing.assert_allclose(m.numpy(), x.amax(1).numpy())
        assert [t.shape for t in h] == [(3, 2), (3, 2)]
        tp.vmap(lambda r: ops.double_(tp.zeros(4)) + r)(x)  # nothing batched is written: fine
        lib.define("acc_(Tensor(a!) x, Tensor y) -> Tensor(a!)")
        lib.impl("acc_", lambda x, y: x.add_(y), "CPU")
        with pytest.raises(
            RuntimeError, match=rf"^vmap: inplace arithmetic.*\({ns}::acc_.default\)$"
        ):
            tp.vmap(lambda r: ops.acc_(tp.zeros(4), r))(x)


def test_fallback_refuses_non_tensor_results(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("count(Tensor x) -> int")
        lib.impl("count", lambda x: 3, "CPU")
        op = getattr(tp.ops, ns).count
        with pytest.raises(RuntimeError) as e, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tp.vmap(lambda r: r * op(r))(tp.randn(3, 4))
        assert str(e.value) == (
            f"Batching rule not implemented for {ns}::count.default. We could not generate a "
            "fallback."
        )


def test_composite_ops_decompose_without_warning(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("softplus2(Tensor x) -> Tensor")
        lib.impl("softplus2", lambda x: (x.exp() + 1).log() * 2, "CompositeImplicitAutograd")
        op = getattr(tp.ops, ns).softplus2
        x = tp.randn(3, 4)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            got = tp.vmap(op)(x)
        assert perf_warnings(record) == []
        np.testing.assert_allclose(got.numpy(), op(x).numpy(), rtol=1e-6)


def test_register_vmap_gives_a_custom_op_its_rule(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("scale(Tensor x, float k) -> Tensor")
        lib.impl("scale", lambda x, k: x * k, "CPU")
        seen = []

        @tp.library.register_vmap(f"{ns}::scale", lib=lib)
        def scale_vmap(info, in_dims, x, k):
            seen.append((info.batch_size, info.randomness, in_dims))
            return x * k, in_dims[0]

        op = getattr(tp.ops, ns).scale
        x = tp.randn(3, 4)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            got = tp.vmap(lambda r: op(r, 3.0), in_dims=1, randomness="same")(x)
        assert perf_warnings(record) == []
        np.testing.assert_allclose(got.numpy(), (x * 3).T.numpy(), rtol=1e-6)
        assert seen == [(4, "same", (1, None))]
        assert tp.dispatcher.registrations(f"{ns}::scale")["Batched"].endswith(
            "test_register_vmap_gives_a_custom_op_its_rule"
        )
    # closing the library removed the rule with the op
    assert tp.func.register_vmap is not None


def test_register_vmap_out_dims_none_and_lists(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("first_and_norm(Tensor[] xs) -> (Tensor, Tensor)")
        lib.impl("first_and_norm", lambda xs: (xs[0] + 0, tp.tensor(1.0)), "CPU")

        def rule(info, in_dims, xs):
            assert in_dims == ([0, None],)
            return (xs[0] + 0, tp.tensor(1.0)), (0, None)

        tp.library.register_vmap(f"{ns}::first_and_norm", rule, lib=lib)
        op = getattr(tp.ops, ns).first_and_norm
        x, y = tp.randn(3, 2), tp.randn(2)
        a, b = tp.vmap(lambda r: op([r, y]))(x)
        np.testing.assert_allclose(a.numpy(), x.numpy())
        assert b.shape == (3,) and b.tolist() == [1.0, 1.0, 1.0]
