"""nn.ModuleList, nn.ModuleDict, Identity / Flatten / Unflatten and nn.utils, against
hand-checked names, numpy and the equivalent Sequential.

Gradients for the clipping tests are set by hand (``p.grad = ...``), so only the tests that
call ``backward()`` need the autograd plugin. Weights come from numpy, never from a seed, so
no test depends on or changes the global random state.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import utils
from tests import needs


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


def require_autograd() -> None:
    needs.autograd()
    if "no_grad" not in vars(tp):
        pytest.skip("the autograd plugin is installed but not loaded")


def set_linear(layer: nn.Linear, w: np.ndarray, b: np.ndarray) -> nn.Linear:
    layer.load_state_dict({"weight": tp.tensor(w), "bias": tp.tensor(b)})
    return layer


# --- ModuleList -----------------------------------------------------------------------------


def test_module_list_indexing_and_len():
    l0, l1, l2 = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    ml = nn.ModuleList([l0, l1, l2])
    assert len(ml) == 3 and list(ml) == [l0, l1, l2]
    assert ml[0] is l0 and ml[-1] is l2 and ml[-3] is l0
    head = ml[:2]
    assert isinstance(head, nn.ModuleList) and list(head) == [l0, l1]
    assert [n for n, _ in head.named_children()] == ["0", "1"]
    assert list(ml[::-2]) == [l2, l0] and [n for n, _ in ml[::-2].named_children()] == ["0", "1"]
    assert len(nn.ModuleList()) == 0 and len(nn.ModuleList(None)) == 0
    assert l1 in ml and nn.ReLU() not in ml


def test_module_list_registers_children_in_state_dict_and_parameters():
    ml = nn.ModuleList([nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1, bias=False)])
    assert list(ml.state_dict()) == ["0.weight", "0.bias", "2.weight"]
    assert [n for n, _ in ml.named_parameters()] == ["0.weight", "0.bias", "2.weight"]
    assert len(list(ml.parameters())) == 3

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])

    net = Net()
    assert list(net.state_dict()) == [
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
        "blocks.1.bias",
    ]
    assert [n for n, _ in net.named_modules()] == ["", "blocks", "blocks.0", "blocks.1"]
    net.eval()
    assert not any(m.training for m in net.blocks)
    net.load_state_dict({k: tp.zeros_like(v) for k, v in net.state_dict().items()})
    assert all(a(p).max() == 0 for p in net.parameters())


def test_module_list_setitem_delitem_renumber():
    mods = [nn.Linear(1, 1) for _ in range(5)]
    ml = nn.ModuleList(mods)
    new = nn.Tanh()
    ml[-1] = new
    assert ml[4] is new and [n for n, _ in ml.named_children()][-1] == "4"
    del ml[1]
    assert list(ml) == [mods[0], mods[2], mods[3], new]
    assert list(ml._modules) == ["0", "1", "2", "3"]
    del ml[::2]
    assert list(ml) == [mods[2], new]
    assert list(ml._modules) == ["0", "1"]
    assert list(ml.state_dict()) == ["0.weight", "0.bias"]


def test_module_list_append_extend_insert_pop():
    l0, l1, l2, l3 = (nn.Linear(1, 1) for _ in range(4))
    ml = nn.ModuleList()
    assert ml.append(l0) is ml
    assert ml.extend([l1, l2]) is ml
    ml.insert(1, l3)
    assert list(ml) == [l0, l3, l1, l2]
    ml.insert(-1, nn.ReLU())  # before the last one, as list.insert does
    assert isinstance(ml[3], nn.ReLU) and ml[4] is l2
    ml.insert(100, nn.Tanh())  # past the end: appended
    assert isinstance(ml[-1], nn.Tanh)
    assert list(ml._modules) == [str(i) for i in range(6)]
    assert isinstance(ml.pop(), nn.Tanh) and ml.pop(0) is l0
    assert [type(m) for m in ml] == [nn.Linear, nn.Linear, nn.ReLU, nn.Linear] and ml[3] is l2
    taken = ml.pop(slice(0, 2))
    assert isinstance(taken, nn.ModuleList) and list(taken) == [l3, l1]
    assert len(ml) == 2 and list(ml._modules) == ["0", "1"]
    ml.extend(m for m in (l0,))  # any iterable, generators included
    assert ml[-1] is l0


def test_module_list_add_and_iadd():
    l0, l1, l2 = (nn.Linear(1, 1) for _ in range(3))
    ml = nn.ModuleList([l0])
    both = ml + nn.ModuleList([l1, l2])
    assert isinstance(both, nn.ModuleList) and list(both) == [l0, l1, l2]
    assert list(ml) == [l0]  # + makes a new list
    same = ml
    ml += [l1]
    assert ml is same and list(ml) == [l0, l1]
    assert [n for n, _ in both.named_parameters()] == [
        "0.weight",
        "0.bias",
        "1.weight",
        "1.bias",
        "2.weight",
        "2.bias",
    ]


def test_module_list_repr():
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.ModuleList([nn.ReLU(), nn.Tanh()])) == (
        "ModuleList(\n  (0): ReLU()\n  (1): Tanh()\n)"
    )


def test_module_list_errors():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    with pytest.raises(TypeError, match="ModuleList: element 1 is a function, not a Module"):
        nn.ModuleList([nn.ReLU(), tp.relu])
    with pytest.raises(
        TypeError, match=r"ModuleList: element 1 is a int, not a Module \(or None\)"
    ):
        ml.extend([None, 3])
    assert len(ml) == 2  # nothing added
    with pytest.raises(
        TypeError,
        match=r"ModuleList can only be extended \(extend, \+, \+=\) "
        r"by an iterable of Modules, not a Linear",
    ):
        nn.ModuleList(nn.Linear(1, 1))
    with pytest.raises(TypeError, match="ModuleList can only be extended .* not a int"):
        ml + 3
    with pytest.raises(TypeError, match="ModuleList.append: got a str, not a Module"):
        ml.append("relu")
    with pytest.raises(TypeError, match="ModuleList.insert: got a int, not a Module"):
        ml.insert(0, 1)
    with pytest.raises(TypeError, match="ModuleList.insert: the index must be an integer, not str"):
        ml.insert("0", nn.ReLU())
    with pytest.raises(TypeError, match=r"ModuleList.__setitem__: got a Tensor, not a Module"):
        ml[0] = tp.zeros(1)
    with pytest.raises(TypeError, match="ModuleList does not support slice assignment"):
        ml[0:1] = [nn.ReLU()]
    with pytest.raises(TypeError, match="ModuleList indices must be integers or slices, not str"):
        ml["0"]
    for bad in (2, -3):
        with pytest.raises(
            IndexError, match=f"index {bad} is out of range for a ModuleList of length 2"
        ):
            ml[bad]
    with pytest.raises(IndexError, match="index 2 is out of range for a ModuleList of length 2"):
        ml[2] = nn.ReLU()
    with pytest.raises(IndexError, match="index -5 is out of range for a ModuleList of length 2"):
        del ml[-5]
    with pytest.raises(IndexError, match="index -1 is out of range for a ModuleList of length 0"):
        nn.ModuleList().pop()
    assert len(ml) == 2  # the failed calls changed nothing
    with pytest.raises(
        NotImplementedError,
        match='Module \\[ModuleList\\] is missing the required "forward" function',
    ):
        ml(tp.zeros(1))


def test_module_list_model_trains_as_the_equivalent_sequential():
    require_autograd()
    rng = np.random.default_rng(0)
    w0, b0 = rng.normal(size=(4, 3)), rng.normal(size=4)
    w1, b1 = rng.normal(size=(2, 4)), rng.normal(size=2)
    x = tp.tensor(rng.normal(size=(5, 3)))
    y = tp.tensor([0, 1, 1, 0, 1])

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList(
                [
                    set_linear(nn.Linear(3, 4, dtype=tp.float64), w0, b0),
                    nn.Tanh(),
                    set_linear(nn.Linear(4, 2, dtype=tp.float64), w1, b1),
                ]
            )

        def forward(self, x: tp.Tensor) -> tp.Tensor:
            for layer in self.layers:
                x = layer(x)
            return x

    net = Net()
    seq = nn.Sequential(
        set_linear(nn.Linear(3, 4, dtype=tp.float64), w0, b0),
        nn.Tanh(),
        set_linear(nn.Linear(4, 2, dtype=tp.float64), w1, b1),
    )
    # the ModuleList's own state dict has Sequential's keys
    assert list(net.layers.state_dict()) == list(seq.state_dict())
    loss_fn = nn.CrossEntropyLoss()
    for model in (net, seq):
        opt = tp.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
        for _ in range(2):
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
    for (name, p), q in zip(net.named_parameters(), seq.parameters(), strict=True):
        assert p is not q
        np.testing.assert_allclose(a(p.grad), a(q.grad), rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(a(p), a(q), rtol=1e-12, err_msg=name)
    assert not np.allclose(a(net.layers[0].weight), w0)  # the steps did move the weights


# --- ModuleDict -----------------------------------------------------------------------------


def test_module_dict_mapping_behaviour():
    enc, act, dec = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    md = nn.ModuleDict({"enc": enc, "act": act})
    assert len(md) == 2 and list(md) == ["enc", "act"]
    assert md["enc"] is enc and md.enc is enc
    assert "act" in md and "dec" not in md and 0 not in md
    md["dec"] = dec
    assert list(md.keys()) == ["enc", "act", "dec"]
    assert list(md.values()) == [enc, act, dec]
    assert list(md.items()) == [("enc", enc), ("act", act), ("dec", dec)]
    new_act = nn.Tanh()
    md["act"] = new_act  # replacing keeps the position
    assert list(md.items()) == [("enc", enc), ("act", new_act), ("dec", dec)]
    del md["act"]
    assert list(md) == ["enc", "dec"]
    assert md.pop("enc") is enc and list(md) == ["dec"]
    md.clear()
    assert len(md) == 0 and list(md.parameters()) == []


def test_module_dict_construction_and_update():
    l0, l1, l2 = (nn.Linear(1, 1) for _ in range(3))
    from_pairs = nn.ModuleDict([("b", l0), ["a", l1]])
    assert list(from_pairs.items()) == [("b", l0), ("a", l1)]  # insertion order, not sorted
    from_od = nn.ModuleDict(OrderedDict([("x", l0)]))
    copy = nn.ModuleDict(from_pairs)
    assert list(copy.items()) == [("b", l0), ("a", l1)]
    from_od.update({"y": l1, "x": l2})
    assert list(from_od.items()) == [("x", l2), ("y", l1)]
    from_od.update(iter([("z", l0)]))
    assert list(from_od) == ["x", "y", "z"]
    assert len(nn.ModuleDict()) == 0 and len(nn.ModuleDict(None)) == 0


def test_module_dict_state_dict_keys():
    class Heads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.trunk = nn.Linear(2, 2)
            self.heads = nn.ModuleDict({"cls": nn.Linear(2, 3), "reg": nn.Linear(2, 1, bias=False)})

        def forward(self, x: tp.Tensor, head: str) -> tp.Tensor:
            return self.heads[head](self.trunk(x))

    m = Heads()
    assert list(m.state_dict()) == [
        "trunk.weight",
        "trunk.bias",
        "heads.cls.weight",
        "heads.cls.bias",
        "heads.reg.weight",
    ]
    assert m(tp.zeros(4, 2), "cls").shape == (4, 3) and m(tp.zeros(4, 2), "reg").shape == (4, 1)
    assert repr(m.heads) == (
        "ModuleDict(\n"
        "  (cls): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (reg): Linear(in_features=2, out_features=1, bias=False)\n"
        ")"
    )


def test_module_dict_errors():
    md = nn.ModuleDict({"a": nn.ReLU()})
    with pytest.raises(TypeError, match="ModuleDict keys must be strings, got a int: 1"):
        md[1] = nn.ReLU()
    with pytest.raises(
        TypeError, match="ModuleDict: the value for key 'b' is a function, not a Module"
    ):
        md["b"] = tp.relu
    for bad in ("a.b", ""):
        with pytest.raises(
            KeyError, match=f"ModuleDict keys cannot be empty or contain a dot, got {bad!r}"
        ):
            md[bad] = nn.ReLU()
    for bad in ("train", "keys", "training"):
        with pytest.raises(
            KeyError,
            match=f"ModuleDict: the key {bad!r} is the name of a "
            "ModuleDict attribute or method; use another key",
        ):
            nn.ModuleDict({bad: nn.ReLU()})
    for call in (lambda: md["zz"], lambda: md.pop("zz"), lambda: md.__delitem__("zz")):
        with pytest.raises(KeyError, match="ModuleDict has no module under the key 'zz'"):
            call()
    with pytest.raises(
        TypeError,
        match="ModuleDict.update should be called with a mapping or "
        "an iterable of \\(key, module\\) pairs, but got a int",
    ):
        md.update(3)
    with pytest.raises(
        TypeError,
        match="ModuleDict.update: element 1 should be a \\(key, module\\) pair, but is a str",
    ):
        md.update([("c", nn.ReLU()), "d"])
    with pytest.raises(
        ValueError, match="ModuleDict.update: element 0 has length 3; 2 is required"
    ):
        md.update([("c", nn.ReLU(), nn.Tanh())])
    with pytest.raises(
        TypeError, match=r"the value for key 'd' is a int, not a Module \(or None\)"
    ):
        md.update({"c": nn.ReLU(), "d": 3})
    assert list(md) == ["a"]  # every entry is checked before any is stored
    with pytest.raises(
        NotImplementedError,
        match='Module \\[ModuleDict\\] is missing the required "forward" function',
    ):
        md(tp.zeros(1))


# --- Identity, Flatten, Unflatten -----------------------------------------------------------


def test_identity():
    x = tp.randn(2, 3)
    m = nn.Identity(54, unused="argument", dropout=0.1)
    assert m(x) is x
    assert repr(m) == "Identity()" and list(m.parameters()) == []


def test_flatten_against_numpy():
    x = tp.tensor(np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5))
    xn = a(x)
    for kwargs, shape in [
        ({}, (2, 60)),
        ({"start_dim": 0}, (120,)),
        ({"start_dim": 1, "end_dim": 2}, (2, 12, 5)),
        ({"start_dim": -2}, (2, 3, 20)),
    ]:
        y = nn.Flatten(**kwargs)(x)
        assert y.shape == shape
        np.testing.assert_array_equal(a(y), xn.reshape(shape))
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Flatten(0, 2)) == "Flatten(start_dim=0, end_dim=2)"


def test_unflatten_against_numpy():
    x = tp.tensor(np.arange(2 * 12 * 5, dtype=np.float32).reshape(2, 12, 5))
    xn = a(x)
    for dim, sizes, shape in [
        (1, (3, 4), (2, 3, 4, 5)),
        (1, [2, -1, 3], (2, 2, 2, 3, 5)),
        (-1, (5, 1), (2, 12, 5, 1)),
        (0, (1, 2), (1, 2, 12, 5)),
    ]:
        y = nn.Unflatten(dim, sizes)(x)
        assert y.shape == shape
        np.testing.assert_array_equal(a(y), xn.reshape(shape))
    flat = nn.Flatten()(x)
    np.testing.assert_array_equal(a(nn.Unflatten(1, (12, 5))(flat)), xn)
    assert repr(nn.Unflatten(1, (3, 4))) == "Unflatten(dim=1, unflattened_size=(3, 4))"
    assert repr(nn.Unflatten(1, [3, 4])) == "Unflatten(dim=1, unflattened_size=[3, 4])"


def test_unflatten_errors():
    with pytest.raises(
        TypeError, match="Unflatten: unflattened_size must be a tuple or list of ints, but is a int"
    ):
        nn.Unflatten(1, 12)
    with pytest.raises(
        TypeError,
        match="Unflatten: unflattened_size must be a tuple or list of "
        "ints, but element 1 is a float",
    ):
        nn.Unflatten(1, (3, 4.0))
    x = tp.zeros(2, 12)
    # the forward is tp.unflatten, with PyTorch's messages
    with pytest.raises(
        RuntimeError,
        match=r"unflatten: Provided sizes \[5, 2\] don't multiply up "
        r"to the size of dim 1 \(12\) in the input tensor",
    ):
        nn.Unflatten(1, (5, 2))(x)
    with pytest.raises(RuntimeError, match=r"Provided sizes \[-1, 5\] don't multiply up"):
        nn.Unflatten(1, (-1, 5))(x)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        nn.Unflatten(1, (-1, -1))(x)
    with pytest.raises(RuntimeError, match="the unspecified dimension size -1 can be any value"):
        nn.Unflatten(1, (0, -1))(tp.zeros(2, 0))
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of "
        r"\[-2, 1\], but got 2\)",
    ):
        nn.Unflatten(2, (1, 2))(x)


def test_flatten_in_a_sequential_with_gradients():
    require_autograd()
    rng = np.random.default_rng(1)
    w, b = rng.normal(size=(2, 6)), rng.normal(size=2)
    xn = rng.normal(size=(4, 2, 3))
    model = nn.Sequential(
        nn.Flatten(), set_linear(nn.Linear(6, 2, dtype=tp.float64), w, b), nn.Unflatten(1, (2, 1))
    )
    y = model(tp.tensor(xn))
    assert y.shape == (4, 2, 1)
    y.sum().backward()
    np.testing.assert_allclose(a(model[1].weight.grad), np.ones((4, 2)).T @ xn.reshape(4, 6))


# --- nn.utils: clip_grad_norm_, clip_grad_value_ --------------------------------------------


def grads_problem(seed: int = 0, scale: float = 1.0):
    """Three float64 parameters with hand-set gradients, one without; and the numpy grads."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    grads = [scale * rng.normal(size=s) for s in shapes]
    params = [tp.zeros(list(s), dtype=tp.float64) for s in shapes]
    for p, g in zip(params, grads, strict=True):
        p.grad = tp.tensor(g)
    params.append(tp.zeros(5, dtype=tp.float64))  # grad None: skipped
    return params, grads


def clip_norm_np(grads, max_norm, norm_type):
    flat = np.concatenate([g.ravel() for g in grads])
    if norm_type == math.inf:
        total = np.abs(flat).max()
    else:
        total = (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    coef = min(max_norm / (total + 1e-6), 1.0)
    return total, [g * coef for g in grads]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0, "inf", 2])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_against_numpy(norm_type, max_norm):
    params, grads = grads_problem()
    p_np = math.inf if norm_type == "inf" else float(norm_type)
    want_total, want = clip_norm_np(grads, max_norm, p_np)
    total = utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
    assert total.shape == () and total.dtype == tp.float64
    np.testing.assert_allclose(a(total), want_total, rtol=1e-12)
    for p, w in zip(params, want, strict=False):
        np.testing.assert_allclose(a(p.grad), w, rtol=1e-12)
    assert getattr(params[-1], "grad", None) is None  # never set


def test_clip_grad_norm_within_bound_leaves_grads_as_they_are():
    params, grads = grads_problem()
    total = utils.clip_grad_norm_(iter(params), max_norm=1e6)  # a generator works
    for p, g in zip(params, grads, strict=False):
        np.testing.assert_array_equal(a(p.grad), g)  # multiplied by exactly 1
    want_total, _ = clip_norm_np(grads, 1e6, 2.0)
    np.testing.assert_allclose(a(total), want_total, rtol=1e-12)


def test_clip_grad_norm_single_tensor_and_no_grads():
    p = tp.zeros(2)
    p.grad = tp.tensor([3.0, 4.0])
    total = utils.clip_grad_norm_(p, 1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(a(p.grad), np.array([3.0, 4.0]) / (5.0 + 1e-6), rtol=1e-6)
    zero = utils.clip_grad_norm_([tp.zeros(2), tp.zeros(3)], 1.0)
    assert zero.shape == () and zero.item() == 0.0
    assert utils.clip_grad_norm_([], 1.0).item() == 0.0
    empty = tp.zeros(0)
    empty.grad = tp.zeros(0)
    assert utils.clip_grad_norm_([empty], 1.0, norm_type="inf").item() == 0.0


def test_clip_grad_norm_half_precision_and_mixed_dtypes():
    # the sum of squares, 2e5, is past float16's largest value; the norm, 447.2, is not
    p = tp.zeros(2000, dtype=tp.float16)
    p.grad = tp.full([2000], 10.0, dtype=tp.float16)
    total = utils.clip_grad_norm_(p, 1.0)
    assert total.dtype == tp.float16
    assert total.item() == pytest.approx(math.sqrt(2e5), rel=1e-3)
    np.testing.assert_allclose(a(p.grad).astype(np.float64), 10 / math.sqrt(2e5), rtol=1e-3)
    q, r = tp.zeros(2), tp.zeros(2, dtype=tp.float64)
    q.grad, r.grad = tp.tensor([3.0, 0.0]), tp.tensor([0.0, 4.0], dtype=tp.float64)
    total = utils.clip_grad_norm_([q, r], 10.0)
    assert total.dtype == tp.float64 and total.item() == pytest.approx(5.0)


def test_clip_grad_norm_nonfinite():
    params, _ = grads_problem()
    params[1].grad = tp.tensor([1.0, math.nan, 0.0, 0.0], dtype=tp.float64)
    before = [a(p.grad).copy() for p in params[:3]]
    with pytest.raises(
        RuntimeError,
        match="The total norm of order 2.0 for gradients from "
        "`parameters` is non-finite, so it cannot be clipped. "
        "To disable this error .* `error_if_nonfinite=False`",
    ):
        utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    for p, b in zip(params, before, strict=False):  # nothing was scaled
        np.testing.assert_array_equal(a(p.grad), b)
    total = utils.clip_grad_norm_(params, 1.0)  # as in PyTorch: scaled by the nan coefficient
    assert math.isnan(total.item()) and np.isnan(a(params[0].grad)).all()


def test_clip_grad_norm_bad_norm_type():
    for bad in (0, -1.0, "-inf"):
        with pytest.raises(ValueError, match="clip_grad_norm_: norm_type must be positive or inf"):
            utils.clip_grad_norm_([], 1.0, norm_type=bad)


def test_clip_grad_value_against_numpy():
    params, grads = grads_problem(scale=2.0)
    assert utils.clip_grad_value_(params, 0.75) is None
    for p, g in zip(params, grads, strict=False):
        np.testing.assert_array_equal(a(p.grad), np.clip(g, -0.75, 0.75))
    assert getattr(params[-1], "grad", None) is None  # never set
    p = tp.zeros(3)
    p.grad = tp.tensor([-2.0, 0.5, 3.0])
    utils.clip_grad_value_(p, 1)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]


def test_clip_grad_norm_after_backward():
    require_autograd()
    rng = np.random.default_rng(2)
    layers = nn.ModuleList(
        [
            set_linear(
                nn.Linear(3, 3, dtype=tp.float64), rng.normal(size=(3, 3)), rng.normal(size=3)
            )
            for _ in range(2)
        ]
    )
    x = tp.tensor(rng.normal(size=(4, 3)))
    for layer in layers:
        x = layer(x)
    (x * x).sum().backward()
    grads = [a(p.grad).copy() for p in layers.parameters()]
    want_total, want = clip_norm_np(grads, 0.1, 2.0)
    total = utils.clip_grad_norm_(layers.parameters(), 0.1)
    assert not total.requires_grad
    np.testing.assert_allclose(a(total), want_total, rtol=1e-12)
    for p, w in zip(layers.parameters(), want, strict=True):
        np.testing.assert_allclose(a(p.grad), w, rtol=1e-12)
        assert p.is_leaf and p.grad.grad_fn is None


# --- nn.utils: parameters_to_vector, vector_to_parameters ------------------------------------


def test_parameters_vector_round_trip():
    rng = np.random.default_rng(3)
    net = nn.Sequential(
        set_linear(nn.Linear(3, 2, dtype=tp.float64), rng.normal(size=(2, 3)), rng.normal(size=2)),
        nn.ReLU(),
        nn.Linear(2, 1, bias=False, dtype=tp.float64),
    )
    vec = utils.parameters_to_vector(net.parameters())
    want = np.concatenate([a(p).ravel() for p in net.parameters()])
    assert vec.shape == (6 + 2 + 2,)
    np.testing.assert_array_equal(a(vec), want)
    params_before = list(net.parameters())
    new = rng.normal(size=10)
    utils.vector_to_parameters(tp.tensor(new), net.parameters())
    assert list(net.parameters()) == params_before  # copied in place, not replaced
    np.testing.assert_array_equal(a(net[0].weight), new[:6].reshape(2, 3))
    np.testing.assert_array_equal(a(net[0].bias), new[6:8])
    np.testing.assert_array_equal(a(net[2].weight), new[8:].reshape(1, 2))
    np.testing.assert_array_equal(a(utils.parameters_to_vector(net.parameters())), new)


def test_parameters_to_vector_is_differentiable():
    require_autograd()
    p, q = nn.Parameter(tp.ones(2, 2)), nn.Parameter(tp.ones(3))
    vec = utils.parameters_to_vector([p, q])
    (vec * tp.arange(7.0)).sum().backward()
    assert p.grad.tolist() == [[0.0, 1.0], [2.0, 3.0]] and q.grad.tolist() == [4.0, 5.0, 6.0]


def test_vector_to_parameters_errors():
    params = [tp.zeros(2, 2), tp.zeros(3)]
    with pytest.raises(
        TypeError, match="vector_to_parameters: vec must be a tensorplug.Tensor, not a list"
    ):
        utils.vector_to_parameters([0.0] * 7, params)
    with pytest.raises(
        ValueError,
        match=r"vector_to_parameters: vec must be 1-d, but has shape "
        r"\[7, 1\]",
    ):
        utils.vector_to_parameters(tp.zeros(7, 1), params)
    for n in (6, 8):
        with pytest.raises(
            ValueError,
            match=f"vector_to_parameters: vec has {n} elements, but the parameters have 7 in all",
        ):
            utils.vector_to_parameters(tp.ones(n), params)
    assert all(a(p).max() == 0 for p in params)  # nothing was copied


# --- the package ----------------------------------------------------------------------------


def test_new_names_are_exported():
    import tensorplug.nn.utils

    assert tp.nn.utils is tensorplug.nn.utils is utils
    for name in ("ModuleList", "ModuleDict", "Identity", "Flatten", "Unflatten", "utils"):
        assert name in nn.__all__ and hasattr(nn, name)
    assert set(utils.__all__) == {
        "clip_grad_norm_",
        "clip_grad_value_",
        "clip_grads_with_norm_",
        "fuse_conv_bn_eval",
        "fuse_conv_bn_weights",
        "fuse_linear_bn_eval",
        "fuse_linear_bn_weights",
        "get_total_norm",
        "parameters_to_vector",
        "parametrizations",
        "parametrize",
        "remove_spectral_norm",
        "remove_weight_norm",
        "rnn",
        "spectral_norm",
        "stateless",
        "vector_to_parameters",
        "weight_norm",
    }


WITHOUT_AUTOGRAD = """
import tensorplug as tp
from tensorplug import nn
from tensorplug.nn.utils import clip_grad_norm_, clip_grad_value_
assert "autograd" not in tp.plugins.loaded_names()
net = nn.ModuleDict({"body": nn.ModuleList([nn.Flatten(), nn.Linear(4, 2)]), "out": nn.Identity()})
x = tp.zeros(3, 2, 2)
for layer in net["body"]:
    x = layer(x)
print(tuple(net["out"](x).shape))
for p in net.parameters():
    p.grad = tp.full(list(p.shape), 3.0)
print(round(clip_grad_norm_(net.parameters(), 1.0).item(), 4))
clip_grad_value_(net.parameters(), 0.01)
print(sorted({round(v, 6) for p in net.parameters() for v in p.grad.flatten(0).tolist()}))
"""


def test_containers_and_utils_without_autograd():
    env = dict(os.environ, TENSORPLUG_DISABLE_PLUGINS="autograd")
    r = subprocess.run(
        [sys.executable, "-c", WITHOUT_AUTOGRAD], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    # 10 gradients of 3: norm sqrt(90); scaled to norm 1 each is 3/sqrt(90) > 0.01
    assert r.stdout.splitlines() == ["(3, 2)", str(round(math.sqrt(90.0), 4)), "[0.01]"]
