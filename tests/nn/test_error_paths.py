"""Error paths of tensorplug.nn and tensorplug.optim that the behaviour tests do not reach:
each test triggers one error and checks its message."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug import nn, optim
from tests import needs


def test_sequential_insert_refuses_what_is_not_a_module():
    seq = nn.Sequential(nn.ReLU())
    with pytest.raises(
        TypeError,
        match="^Sequential.insert: module should be of type Module, but got a int; pass a Module$",
    ):
        seq.insert(0, 3)
    assert len(seq) == 1


def test_sequential_in_place_add_refuses_what_is_not_a_sequential():
    seq = nn.Sequential(nn.ReLU())
    with pytest.raises(
        ValueError,
        match="^add operator supports only objects of Sequential class, but list is given.$",
    ):
        seq += [nn.ReLU()]
    assert len(seq) == 1


def test_optimizer_refuses_a_non_leaf_tensor():
    needs.autograd()
    w = tp.ones(2, requires_grad=True)
    with pytest.raises(
        ValueError,
        match=r"^can't optimize a non-leaf Tensor; pass the leaf tensors it is computed from, or "
        r"a detached copy: t\.detach\(\)\.requires_grad_\(\)$",
    ):
        optim.SGD([w * 2], lr=0.1)
