"""The cast cache (Note [Cast cache]): a float32 leaf that requires grad is cast once per
outermost region; casts are counted as calls of aten::_to_copy."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from needs import autocast, autograd

import tensorplug as tp

autocast()
autograd()

CAST = "aten::_to_copy.default"


def leaf(*shape: int) -> Any:
    return tp.randn(list(shape)).requires_grad_()


def test_a_weight_is_cast_once_per_region(op_counts: Any) -> None:
    w, x = leaf(4, 4), tp.randn([3, 4])
    with tp.autocast("cpu"):
        y1 = x @ w
        assert op_counts[CAST] == 2  # x and w
        y2 = x @ w
        assert op_counts[CAST] == 3  # x again (it is not a leaf that requires grad); w cached
        y3 = tp.nn.functional.linear(x, w)
        assert op_counts[CAST] == 4  # linear uses the same cached copy of w
    with tp.autocast("cpu"):  # a new outermost region: the cache was dropped
        x @ w
    assert op_counts[CAST] == 6
    expected = x.to(tp.bfloat16) @ w.detach().to(tp.bfloat16)
    for y in (y1, y2):
        assert y.dtype is tp.bfloat16
        np.testing.assert_array_equal(y.detach().float().numpy(), expected.float().numpy())
    assert y3.dtype is tp.bfloat16


def test_nested_regions_share_the_outermost_cache(op_counts: Any) -> None:
    w, x = leaf(2, 2), tp.randn([2, 2])
    with tp.autocast("cpu"):
        x @ w
        with tp.autocast("cpu"):
            x @ w
        x @ w  # the inner exit kept the cache
    assert op_counts[CAST] == 4  # x three times, w once


def test_cache_enabled_false_casts_every_time(op_counts: Any) -> None:
    w, x = leaf(2, 2), tp.randn([2, 2])
    with tp.autocast("cpu", cache_enabled=False):
        x @ w
        x @ w
    assert op_counts[CAST] == 4


def test_only_leaves_that_require_grad_are_kept(op_counts: Any) -> None:
    w = leaf(2, 2)
    h = w * 2  # not a leaf
    plain = tp.randn([2, 2])  # does not require grad
    with tp.autocast("cpu"):
        h @ plain
        h @ plain
    assert op_counts[CAST] == 4
    half = tp.randn([2, 2], dtype=tp.float16).requires_grad_()
    op_counts.clear()
    with tp.autocast("cpu"):  # a float16 leaf is cast to bfloat16 each time: only float32 is kept
        half @ half
        half @ half
    assert op_counts[CAST] == 4  # both operands, both calls


def test_an_in_place_change_invalidates_the_entry(op_counts: Any) -> None:
    w, x = leaf(2, 2), tp.ones([2, 2])
    with tp.autocast("cpu"):
        before = x @ w
        with tp.no_grad():
            w.add_(1.0)  # an optimizer step inside the region
        after = x @ w
        assert op_counts[CAST] == 4  # w cast again
        with tp.no_grad():
            w[0].fill_(5.0)  # through a view: the version counter is shared
        through_view = x @ w
        assert op_counts[CAST] == 6
    # the product changed by x @ ones: the new weights were used
    diff = (after.detach().float() - before.detach().float()).numpy()
    np.testing.assert_allclose(diff, np.full((2, 2), 2.0), atol=0.05)
    expected = x.to(tp.bfloat16) @ w.detach().to(tp.bfloat16)
    np.testing.assert_array_equal(through_view.detach().float().numpy(), expected.float().numpy())


def test_another_dtype_in_a_nested_region_is_not_served_the_first_cast() -> None:
    w, x = leaf(2, 2), tp.randn([2, 2])
    with tp.autocast("cpu", dtype=tp.bfloat16):
        assert (x @ w).dtype is tp.bfloat16
        with tp.autocast("cpu", dtype=tp.float16):
            assert (x @ w).dtype is tp.float16
        assert (x @ w).dtype is tp.bfloat16


def test_each_thread_has_its_own_cache(op_counts: Any) -> None:
    w, x = leaf(2, 2), tp.randn([2, 2])
    counts: list[int] = []

    def worker() -> None:
        with tp.dispatch.include("AmpTestCount"), tp.autocast("cpu"):
            x @ w
            counts.append(op_counts[CAST])

    with tp.autocast("cpu"):
        x @ w  # caches w in this thread
        t = threading.Thread(target=worker)
        t.start()
        t.join(10)
    assert counts == [4]  # the worker cast w (and x) itself


def test_clear_autocast_cache(op_counts: Any) -> None:
    w, x = leaf(2, 2), tp.randn([2, 2])
    with tp.autocast("cpu"):
        x @ w
        tp.clear_autocast_cache()
        x @ w
    assert op_counts[CAST] == 4
