"""The *_copy ops (view_copy, transpose_copy, unbind_copy, ...): the view's values in memory of
their own, under one node named after the view's (TransposeBackward0_copy) whose gradient is
the view's, checked against central differences. Their comparison with torch:
tests/parity/test_copies.py."""
import numpy as np
import pytest

import gradtool as gt

# each copy op as a program of one float64 input of the given shape
PROGRAMS = {
    "view_copy": ((3, 4), lambda lib, x: lib.view_copy(x, [2, 6])),
    "transpose_copy": ((3, 4), lambda lib, x: lib.transpose_copy(x, 0, 1)),
    "permute_copy": ((2, 3, 4), lambda lib, x: lib.permute_copy(x, [2, 0, 1])),
    "expand_copy": ((3, 1), lambda lib, x: lib.expand_copy(x, [2, 3, 4])),
    "diagonal_copy": ((3, 4), lambda lib, x: lib.diagonal_copy(x, 1)),
    "select_copy": ((3, 4), lambda lib, x: lib.select_copy(x, 1, -1)),
    "slice_copy": ((3, 4), lambda lib, x: lib.slice_copy(x, 1, 1, 4, 2)),
    "narrow_copy": ((3, 4), lambda lib, x: lib.narrow_copy(x, 0, 1, 2)),
    "squeeze_copy": ((3, 1, 4), lambda lib, x: lib.squeeze_copy(x)),
    "squeeze_copy_dim": ((3, 1, 4), lambda lib, x: lib.squeeze_copy(x, 1)),
    "unsqueeze_copy": ((3, 4), lambda lib, x: lib.unsqueeze_copy(x, -1)),
    "t_copy": ((3, 4), lambda lib, x: lib.t_copy(x)),
    "alias_copy": ((3, 4), lambda lib, x: lib.alias_copy(x)),
    "unfold_copy": ((3, 5), lambda lib, x: lib.unfold_copy(x, 1, 2, 2)),
    "unbind_copy": ((3, 4), lambda lib, x: lib.unbind_copy(x, 1)),
    "split_copy": ((5, 4), lambda lib, x: lib.split_copy(x, 2)),
    "split_with_sizes_copy": ((5, 4), lambda lib, x: lib.split_with_sizes_copy(x, [1, 4])),
    "view_as_real_copy": ((3, 4), lambda lib, x: lib.view_as_real_copy(
        lib.complex(x, x * 2))),
}


NODE_NAMES = {
    "view_copy": "ViewBackward0_copy", "transpose_copy": "TransposeBackward0_copy",
    "permute_copy": "PermuteBackward0_copy", "expand_copy": "ExpandBackward0_copy",
    "diagonal_copy": "DiagonalBackward0_copy", "select_copy": "SelectBackward0_copy",
    "slice_copy": "SliceBackward0_copy", "narrow_copy": "NarrowCopyBackward0",
    "squeeze_copy": "SqueezeBackward0_copy", "squeeze_copy_dim": "SqueezeBackward1_copy",
    "unsqueeze_copy": "UnsqueezeBackward0_copy", "t_copy": "TBackward0_copy",
    "alias_copy": "AliasBackward0_copy", "unfold_copy": "UnfoldBackward0_copy",
    "unbind_copy": "UnbindBackward0_copy", "split_copy": "SplitBackward0_copy",
    "split_with_sizes_copy": "SplitWithSizesBackward0_copy",
    "view_as_real_copy": "ViewAsRealBackward0_copy",
}


def _outputs(value):
    return [value] if isinstance(value, gt.Tensor) else list(value)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_copy_holds_the_views_values_in_memory_of_its_own(name):
    shape, program = PROGRAMS[name]
    x = gt.randn(*shape, dtype=gt.float64)
    before = x.clone()
    for out in _outputs(program(gt, x)):
        assert out._base is None and out.is_contiguous()
        out.add_(1)  # (writing to the copy leaves the input as it was)
    assert gt.equal(x, before)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_copy_records_one_node_named_after_the_views_and_its_gradient_is_right(name):
    shape, program = PROGRAMS[name]
    x = gt.randn(*shape, dtype=gt.float64, requires_grad=True)
    outs = _outputs(program(gt, x))
    node = outs[0].grad_fn
    assert all(o.grad_fn is node for o in outs)
    assert node.name() == NODE_NAMES.get(name, "")
    assert gt.autograd.gradcheck(lambda t: tuple(_outputs(program(gt, t))), (x,))
    assert gt.autograd.gradgradcheck(lambda t: tuple(_outputs(program(gt, t))), (x,))


def test_the_views_themselves_keep_their_nodes_and_memory():
    x = gt.randn(3, 4, requires_grad=True)
    gt.transpose_copy(x, 0, 1)
    view = x.transpose(0, 1)
    assert view.grad_fn.name() == "TransposeBackward0" and view._base is x


def test_detach_copy_is_a_copy_whose_node_refuses_backward_as_torchs():
    x = gt.ones(2, requires_grad=True)
    y = gt.detach_copy(x)
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::detach_copy is not implemented"):
        y.sum().backward()
    np.testing.assert_array_equal(gt.detach_copy(gt.tensor([1, 2])).numpy(), [1, 2])


def test_a_copy_refuses_what_its_view_refuses_in_the_views_words():
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        gt.t_copy(gt.ones(2, 2, 2))
    with pytest.raises(IndexError, match="select\\(\\): index 5 out of range"):
        gt.select_copy(gt.ones(2, 3), 1, 5)


def test_the_copies_write_into_out():
    out = gt.empty(0)
    assert gt.transpose_copy(gt.ones(2, 3), 0, 1, out=out) is out and out.shape == (3, 2)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        gt.view_copy(gt.ones(6), [2, 3], out=gt.empty(0, dtype=gt.float64))
