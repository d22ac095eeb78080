"""Indexing against torch: every form of index (ints beside lists, bools, None, Ellipsis,
ranges, 0-d and mask tensors, full slices) read with __getitem__ and written with
__setitem__ (a number, a 0-d tensor, a broadcast tensor): the result's shape and values, the
nodes it records, and the gradient. Tests marked parity, skipped without torch; the plain
tests of torch's rules are in tests/engine/test_torch_rules.py."""
import warnings

import numpy as np
import pytest

import gradtool as gt
from tests.engine.test_torch_rules import node_names

try:
    import torch
except ImportError:  # every test here skips
    torch = None

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(torch is None, reason="torch is not installed")]


INDEXES = ["[0, :, [1, 0]]", "[:, 0, [1, 0]]", "[[1, 0], :, 0]", "[[1, 0], :, [1, 0]]",
           "[None, 0, :, [1, 0]]", "[..., 0, [1, 0]]", "[0, ..., [1, 0]]", "[True]", "[False]",
           "[0, True]", "[[[1], [0]], 0, [1, 0]]", "[1:, [0, 2], None, 0]",
           "[lib.tensor(0), :, [1, 0]]", "[lib.tensor([0]), :, 1]", "[x.detach() > 3]",
           "[:, x.detach()[0, :, 0] > 3]", "[...]", "[:, :]", "[:]", "[0:2, 1:]", "[[0, 1]]",
           "[[0, slice(None)]]", "[lib.tensor(True)]", "[:, -3:]", "[:, 0:100]", "[range(2), 1, [0, 3]]",
           "[:, range(3), range(3)]", "[[range(2), 1]]",
           "[x.detach()[:, :, 0] > 3, [1]]", "[x.detach()[:, :, 0] > 3, 1:3]"]


def run_index(lib, index, set_value=None):
    x = lib.arange(24.0, dtype=lib.float64).view(2, 3, 4).requires_grad_()
    y = x * 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if set_value is None:
            out = eval("y" + index, {"lib": lib, "x": x, "y": y, "slice": slice})
        else:
            exec("y" + index + " = v", {"lib": lib, "x": x, "y": y, "slice": slice,
                                        "v": set_value(lib)})
            out = y
    (out * lib.arange(float(out.numel()), dtype=lib.float64).view(out.shape)).sum().backward()
    return tuple(out.shape), out.detach().numpy().copy(), node_names(out), x.grad.numpy()


@pytest.mark.parametrize("index", INDEXES)
def test_getitem_matches_torch(index):
    mine, theirs = run_index(gt, index), run_index(torch, index)
    assert mine[0] == theirs[0] and mine[2] == theirs[2]
    assert np.array_equal(mine[1], theirs[1]) and np.array_equal(mine[3], theirs[3])


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("value", [lambda lib: 0.5, lambda lib: lib.tensor(7.0, dtype=lib.float64),
                                   lambda lib: lib.tensor([[[2.0]]], dtype=lib.float64)],
                         ids=["number", "0-d", "ones-shaped"])
def test_setitem_matches_torch(index, value):
    mine, theirs = run_index(gt, index, value), run_index(torch, index, value)
    assert mine[2] == theirs[2]
    assert np.array_equal(mine[1], theirs[1]) and np.array_equal(mine[3], theirs[3])


OUT_OF_BOUNDS = ["[[5]]", "[0, [7]]", "[[0], [7]]", "[[0, 1], [2, -9]]", "[:, [1], [9]]",
                 "[[True, False], [7]]", "[x.detach()[:, :, 0] > 3, [9]]"]


@pytest.mark.parametrize("index", OUT_OF_BOUNDS)
def test_out_of_bounds_message_matches_torch(index):
    """The dim in the message is counted among the index tensors, as torch counts it."""
    messages = []
    for lib in (gt, torch):
        with pytest.raises(IndexError) as raised:
            run_index(lib, index)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]
