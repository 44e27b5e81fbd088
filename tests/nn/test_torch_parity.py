"""tensorplug.nn and tensorplug.optim where a differential run against PyTorch found them to
differ: each test pins PyTorch's behaviour (values as closed forms or numpy, messages as text)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn
from tests.needs import needs_autograd


def a(t: tp.Tensor) -> np.ndarray:
    return np.asarray(tp.detach(t).numpy())


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.seq = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
        self.register_buffer("buf", tp.zeros(2))
        self.register_buffer("empty", None)
        self.plain = tp.zeros(1)


# --- Module -----------------------------------------------------------------------------------


def test_state_dict_prefix_is_prepended_as_given():
    # torch: the prefix carries its own dot ("model."), as load_state_dict's recursion passes it
    assert list(Net().state_dict(prefix="model.")) == [
        "model.buf",
        "model.fc.weight",
        "model.fc.bias",
        "model.seq.0.weight",
        "model.seq.0.bias",
    ]
    assert list(nn.Linear(1, 1).state_dict(prefix="x_")) == ["x_weight", "x_bias"]


def test_get_submodule_get_parameter_get_buffer():
    net = Net()
    assert net.get_submodule("") is net
    assert net.get_submodule("seq.0") is net.seq[0]
    assert net.get_parameter("seq.0.weight") is net.seq[0].weight
    assert net.get_buffer("buf") is net.buf
    assert net.get_buffer("empty") is None
    with pytest.raises(AttributeError, match="^Sequential has no attribute `5`$"):
        net.get_submodule("seq.5")
    with pytest.raises(AttributeError, match="^`weight` is not an nn.Module$"):
        net.get_submodule("fc.weight")
    with pytest.raises(AttributeError, match="^Linear has no attribute `foo`$"):
        net.get_parameter("fc.foo")
    with pytest.raises(AttributeError, match="^`buf` is not an nn.Parameter$"):
        net.get_parameter("buf")
    with pytest.raises(AttributeError, match="^`weight` is not a buffer$"):
        net.get_buffer("fc.weight")
    with pytest.raises(AttributeError, match="^`plain` is not a buffer$"):
        net.get_buffer("plain")


def test_half_bfloat16_and_non_blocking():
    m = nn.Linear(2, 2)
    assert m.half() is m and m.weight.dtype == tp.float16 and m.bias.dtype == tp.float16
    assert m.bfloat16().weight.dtype == tp.bfloat16
    assert m.to("cpu", tp.float32, non_blocking=True).weight.dtype == tp.float32


def test_load_state_dict_messages_in_pytorch_order():
    net = Net()
    sd = dict(net.state_dict())
    del sd["fc.bias"]
    sd["extra"] = tp.zeros(1)
    sd["seq.0.weight"] = tp.zeros(7)
    with pytest.raises(RuntimeError) as ei:
        net.load_state_dict(sd)
    assert str(ei.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "fc.bias".\n'
        '\tUnexpected key(s) in state_dict: "extra".\n'
        "\tsize mismatch for seq.0.weight: copying a param with shape [7] from checkpoint, "
        "the shape in current model is [2, 4]."
    )
    with pytest.raises(TypeError, match="^Expected state_dict to be dict-like, got list.$"):
        net.load_state_dict([("buf", tp.zeros(2))])  # type: ignore[arg-type]


def test_incompatible_keys_repr():
    net = Net()
    assert repr(net.load_state_dict(net.state_dict())) == "<All keys matched successfully>"
    sd = dict(net.state_dict())
    del sd["buf"]
    assert repr(net.load_state_dict(sd, strict=False)) == (
        "IncompatibleKeys(missing_keys=['buf'], unexpected_keys=[])"
    )


def test_reassigning_keeps_the_registration_order():
    seq = nn.Sequential(nn.Linear(1, 1), nn.ReLU(), nn.Linear(1, 1))
    seq[0] = nn.Linear(1, 1)
    lin = nn.Linear(1, 1)
    lin.weight = nn.Parameter(tp.zeros(1, 1))
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in lin.named_parameters()] == ["weight", "bias"]
    assert list(lin.state_dict()) == ["weight", "bias"]


# --- containers -------------------------------------------------------------------------------


def test_module_list_keeps_none_placeholders():
    lin = nn.Linear(1, 1)
    ml = nn.ModuleList([nn.ReLU(), None, lin])
    assert len(ml) == 3 and ml[1] is None and list(ml)[1] is None
    assert [n for n, _ in ml.named_children()] == ["0", "2"]
    assert list(ml.state_dict()) == ["2.weight", "2.bias"]
    assert repr(ml) == (
        "ModuleList(\n  (0): ReLU()\n  (1): None\n"
        "  (2): Linear(in_features=1, out_features=1, bias=True)\n)"
    )
    ml.append(None)
    ml[0] = None
    ml.insert(0, None)
    assert list(ml) == [None, None, None, lin, None]
    with pytest.raises(
        TypeError, match=r"^ModuleList.append: got a int, not a Module \(or None\)$"
    ):
        ml.append(3)  # type: ignore[arg-type]


def test_module_dict_keeps_none_placeholders():
    md = nn.ModuleDict({"a": nn.ReLU(), "c": None})
    assert len(md) == 2 and md["c"] is None and list(md) == ["a", "c"]
    assert repr(md) == "ModuleDict(\n  (a): ReLU()\n  (c): None\n)"
    md["a"] = None
    md.update({"z": None})
    assert list(md.items()) == [("a", None), ("c", None), ("z", None)]
    assert list(md.state_dict()) == [] and list(md.children()) == []


def test_sequential_list_methods():
    r, t, s = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    seq = nn.Sequential(r, t)
    seq[-1] = s
    assert list(seq) == [r, s]
    seq.insert(1, t)
    assert list(seq) == [r, t, s] and list(seq._modules) == ["0", "1", "2"]
    seq.insert(-1, r)  # before the last, as list.insert
    assert list(seq) == [r, t, r, s]
    del seq[0]
    assert list(seq) == [t, r, s] and list(seq._modules) == ["0", "1", "2"]
    del seq[1:]
    assert list(seq) == [t]
    assert seq.extend([r, s]) is seq and list(seq) == [t, r, s]
    assert seq.pop(0) is t and list(seq) == [r, s] and list(seq._modules) == ["0", "1"]
    assert list(seq.pop(slice(1, None))) == [s]
    both = nn.Sequential(r) + nn.Sequential(t)
    assert type(both) is nn.Sequential and list(both) == [r, t]
    same = both
    both += nn.Sequential(s)
    assert both is same and list(both) == [r, t, s]
    with pytest.raises(
        ValueError,
        match="^add operator supports only objects of Sequential class, but list is given.$",
    ):
        both + [r]  # type: ignore[operator]
    with pytest.raises(IndexError, match="^Index out of range: 4$"):
        both.insert(4, r)
    with pytest.raises(IndexError, match="index 3 is out of range for a Sequential of length 3"):
        both[3] = r
    with pytest.raises(TypeError, match="^Sequential indices must be integers or slices, not str$"):
        both["0"]  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"^cannot assign 'int' as child module '0'"):
        both[0] = 3  # type: ignore[assignment]


def test_sequential_renumbers_named_children_on_delete():
    from collections import OrderedDict

    seq = nn.Sequential(OrderedDict([("enc", nn.ReLU()), ("act", nn.Tanh()), ("out", nn.ReLU())]))
    seq[1] = nn.Sigmoid()  # replaced in place, under its name
    assert list(seq._modules) == ["enc", "act", "out"]
    del seq[0]
    assert list(seq._modules) == ["0", "1"]  # as in PyTorch


def test_sequential_indexes_none_placeholders_by_position():
    seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
    seq[1] = None
    assert len(seq) == 3 and seq[1] is None and isinstance(seq[2], nn.Sigmoid)
    assert list(seq[1:]._modules) == ["1", "2"]
    with pytest.raises(TypeError, match="'NoneType' object is not callable"):
        seq(tp.zeros(1))  # as in PyTorch: a placeholder is not skipped


# --- Embedding, LayerNorm -----------------------------------------------------------------------


def test_embedding_from_pretrained():
    table = tp.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    emb = nn.Embedding.from_pretrained(table)
    assert repr(emb) == "Embedding(3, 2)" and emb.padding_idx is None
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(a(emb(tp.tensor([2, 0]))), [[5.0, 6.0], [1.0, 2.0]])
    tp.detach(emb.weight).add_(1.0)  # shared with the table, not copied (as in PyTorch)
    assert table[0, 0].item() == 2.0
    padded = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=-1)
    assert padded.padding_idx == 2 and repr(padded) == "Embedding(3, 2, padding_idx=2)"
    np.testing.assert_array_equal(a(padded.weight[2]), [6.0, 7.0])  # the padding row is kept
    with pytest.raises(
        ValueError,
        match=r"embeddings are expected to be 2-dimensional, got "
        r"shape \[3\]",
    ):
        nn.Embedding.from_pretrained(tp.zeros(3))
    with pytest.raises(
        ValueError,
        match=r"the shape of _weight, \[2, 2\], does not match "
        r"num_embeddings and embedding_dim \(3, 3\)",
    ):
        nn.Embedding(3, 3, _weight=tp.zeros(2, 2))


@needs_autograd
def test_embedding_freeze_and_requires_grad():
    assert nn.Embedding(3, 2).weight.requires_grad
    assert not nn.Embedding(3, 2, _freeze=True).weight.requires_grad
    assert nn.Embedding.from_pretrained(tp.zeros(3, 2), freeze=False).weight.requires_grad


@needs_autograd
def test_embedding_scale_grad_by_freq_with_padding():
    emb = nn.Embedding(5, 3, padding_idx=0, scale_grad_by_freq=True)
    assert repr(emb) == "Embedding(5, 3, padding_idx=0, scale_grad_by_freq=True)"
    emb(tp.tensor([[0, 2, 2], [2, 1, 0]])).sum().backward()
    # row 2 occurs three times and gets 3 / 3; the padding row gets nothing
    np.testing.assert_array_equal(a(emb.weight.grad), [[0] * 3, [1] * 3, [1] * 3, [0] * 3, [0] * 3])


def test_embedding_max_norm_renormalizes_the_rows_looked_up():
    w = tp.tensor([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0], [6.0, 8.0, 0.0]])
    emb = nn.Embedding(3, 3, max_norm=1.0, _weight=w)
    assert repr(emb) == "Embedding(3, 3, max_norm=1.0)"
    out = emb(tp.tensor([0, 0, 1]))
    scaled = np.array([3.0, 4.0, 0.0]) / (5.0 + 1e-7)
    np.testing.assert_allclose(a(out), [scaled, scaled, [0.3, 0.4, 0.0]], rtol=1e-6)
    # in place in the table; row 2 was not looked up and keeps its norm of 10
    np.testing.assert_allclose(a(w), [scaled, [0.3, 0.4, 0.0], [6.0, 8.0, 0.0]], rtol=1e-6)
    l1 = nn.functional.embedding(tp.tensor([2]), w, max_norm=7.0, norm_type=1.0)
    np.testing.assert_allclose(a(l1), [[3.0, 4.0, 0.0]], rtol=1e-6)  # |6| + |8| = 14 -> 7
    assert repr(nn.Embedding(2, 2, norm_type=1.0)) == "Embedding(2, 2, norm_type=1.0)"


def test_embedding_padding_idx_and_sparse_checks():
    w = tp.ones(5, 2)
    with pytest.raises(
        ValueError,
        match=r"padding_idx must be within num_embeddings \(5\), "
        "got 7",
    ):
        nn.functional.embedding(tp.tensor([0]), w, padding_idx=7)
    with pytest.raises(ValueError, match="got -6"):
        nn.functional.embedding(tp.tensor([0]), w, padding_idx=-6)
    with pytest.raises(NotImplementedError, match="sparse=True asks for sparse gradients"):
        nn.Embedding(3, 2, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse=True asks for sparse gradients"):
        nn.functional.embedding(tp.tensor([0]), w, sparse=True)


def test_layer_norm_repr_names_bias():
    assert repr(nn.LayerNorm(4)) == (
        "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"
    )
    assert repr(nn.LayerNorm([3, 4], bias=False)) == (
        "LayerNorm((3, 4), eps=1e-05, elementwise_affine=True, bias=False)"
    )
    assert repr(nn.LayerNorm(4, elementwise_affine=False)) == (
        "LayerNorm((4,), eps=1e-05, elementwise_affine=False, bias=False)"
    )


# --- nn.utils ---------------------------------------------------------------------------------


def test_parameters_to_vector_wants_one_device():
    try:
        other = tp.ones(2, device="foo")  # the example backend, when installed
    except Exception:
        pytest.skip("needs a second backend (tensorplug-foo)")
    here = tp.ones(3)
    message = (
        "^Found two parameters on different devices, this is currently not supported. "
        r"\(devices: cpu, foo; move the parameters to one device first\)$"
    )
    with pytest.raises(TypeError, match=message):
        nn.utils.parameters_to_vector([here, other])
    with pytest.raises(TypeError, match=message):
        nn.utils.vector_to_parameters(tp.zeros(5), [other, here])
    assert str(nn.utils.parameters_to_vector([other, other]).device) == "foo"


# --- optim ------------------------------------------------------------------------------------


def test_optimizer_takes_named_parameters():
    lin = nn.Linear(2, 1)
    opt = tp.optim.SGD(lin.named_parameters(), lr=0.5, momentum=0.9)
    assert opt.param_groups[0]["params"] == [lin.weight, lin.bias]
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    lin.weight.grad = tp.ones(1, 2)
    lin.bias.grad = tp.ones(1)
    before = a(lin.weight).copy()
    opt.step()
    np.testing.assert_allclose(a(lin.weight), before - 0.5)
    saved = opt.state_dict()
    assert saved["param_groups"][0]["param_names"] == ["weight", "bias"]
    assert saved["param_groups"][0]["params"] == [0, 1] and list(saved["state"]) == [0, 1]
    assert "    param_names: ['weight', 'bias']" in repr(opt).splitlines()
    adam = tp.optim.Adam([{"params": lin.named_parameters(), "lr": 0.1}])
    assert adam.param_groups[0]["param_names"] == ["weight", "bias"]


def test_optimizer_groups_all_named_or_none():
    lin = nn.Linear(2, 1)
    with pytest.raises(
        ValueError,
        match="^all optimizer params should be with/without names. Some param names are missing$",
    ):
        tp.optim.SGD([("weight", lin.weight), lin.bias], lr=0.1)
    named = tp.optim.SGD([("weight", lin.weight)], lr=0.1)
    with pytest.raises(ValueError, match="cannot add param group without names to the optimizer"):
        named.add_param_group({"params": [lin.bias]})
    plain = tp.optim.SGD([lin.weight], lr=0.1)
    with pytest.raises(ValueError, match="cannot add param group with names to the optimizer"):
        plain.add_param_group({"params": [("bias", lin.bias)]})


def test_optimizers_accept_foreach_and_check_betas():
    p = nn.Parameter(tp.zeros(2))
    assert tp.optim.SGD([p], lr=0.1, foreach=False).param_groups[0]["lr"] == 0.1
    assert tp.optim.Adam([p], foreach=True).param_groups[0]["lr"] == 1e-3
    with pytest.raises(
        ValueError,
        match=r"^Invalid betas: expected a pair \(beta1, beta2\), "
        r"got \(0.9,\)$",
    ):
        tp.optim.Adam([p], betas=(0.9,))  # type: ignore[arg-type]


# --- losses and dropout (composites) ---------------------------------------------------------


def test_cross_entropy_takes_probabilities_only_from_a_target_shaped_like_the_input():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], np.float32)
    p = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], np.float32)
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    got = nn.functional.cross_entropy(tp.tensor(x), tp.tensor(p))
    np.testing.assert_allclose(a(got), -(logp * p).sum(1).mean(), rtol=1e-6)
    # any other shape holds class indices: nll_loss's checks decide, not a broadcast in mul
    with pytest.raises(RuntimeError, match="nll_loss") as err:
        nn.functional.cross_entropy(tp.tensor(x), tp.tensor(p[:, :2]))
    assert "size of tensor" not in str(err.value)
    with pytest.raises(
        RuntimeError,
        match="Expected floating point type for target with class probabilities, got Long",
    ):
        nn.functional.cross_entropy(tp.tensor(x), tp.zeros([2, 3], dtype=tp.int64))


def test_dropout_of_integers():
    ints = tp.tensor([1, 2, 3])
    assert a(nn.functional.dropout(ints, 0.0)).tolist() == [1, 2, 3]
    assert a(nn.functional.dropout(ints, 0.5, training=False)).tolist() == [1, 2, 3]
    zeros = nn.functional.dropout(ints, 1.0)  # PyTorch: zeros of the input's dtype
    assert zeros.dtype is tp.int64 and a(zeros).tolist() == [0, 0, 0]
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        nn.functional.dropout(ints, 0.5)
    with pytest.raises(RuntimeError, match="output type Bool"):
        nn.Dropout(0.3)(tp.tensor([True, False]))
