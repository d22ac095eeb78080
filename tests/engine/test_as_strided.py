"""torch.as_strided over a tensor's storage: a view of the memory (writes go through, the
base's version counter), starting at the input's storage_offset unless told, refused past the
end of the storage; as_strided_ and as_strided_scatter. Its gradient is a sweep case
(test_op_gradients.py: as_strided_view); the comparison with torch is
tests/parity/test_as_strided.py, which runs the programs here."""
import numpy as np
import pytest

import gradtool as gt

# programs over a float64 arange(12) (requires_grad), compared with torch's values and gradients
PROGRAMS = {
    "windows_overlap": lambda lib, x: x.as_strided((3, 3), (1, 2), 1),
    "offset_of_a_view": lambda lib, x: x[2:8].as_strided((2, 2), (3, 1)),
    "offset_given": lambda lib, x: lib.as_strided(x.view(3, 4), (2,), (5,), 3),
    "zero_strides": lambda lib, x: x.as_strided((2, 3), (0, 4), 2),
    "copy": lambda lib, x: lib.as_strided_copy(x, (2, 2), (2, 1), 4),
    "scatter": lambda lib, x: lib.as_strided_scatter(x * 1, (x[:3] * 2), (3,), (4,), 1),
    "of_a_transposed_input": lambda lib, x: x.view(3, 4).t().as_strided((3,), (4,), 1),
}
# calls refused as torch refuses them (the same type and words)
ERRORS = {
    "past_the_storage": lambda lib: lib.arange(12.).as_strided((3, 3), (4, 1), 5),
    "sizes_and_strides_differ": lambda lib: lib.arange(12.).as_strided((3, 3), (4,)),
    "negative_offset": lambda lib: lib.arange(12.).as_strided((2,), (1,), -1),
}


def test_a_strided_view_shares_the_inputs_memory_and_version():
    x = gt.zeros(6)
    view = x.as_strided((2,), (2,), 1)
    assert view._base is x
    view.add_(1)
    assert x.tolist() == [0, 1, 0, 1, 0, 0] and x._version == view._version == 1


def test_a_view_input_is_read_from_its_own_storage_offset():
    x = gt.arange(12.)
    middle = x[2:8]
    assert middle.as_strided((2,), (3,)).tolist() == [2.0, 5.0]
    assert middle.as_strided((2,), (3,), 0).tolist() == [0.0, 3.0]  # (offset in the storage)


def test_overlapping_windows_sum_their_gradients():
    x = gt.arange(6., dtype=gt.float64).requires_grad_()
    y = x.as_strided((2, 3), (1, 1))  # element 1 and 2 read twice
    y.sum().backward()
    assert x.grad.tolist() == [1, 2, 2, 1, 0, 0]
    assert y.grad_fn.name() == "AsStridedBackward0"
    assert (y.grad_fn._saved_size, y.grad_fn._saved_stride,
            y.grad_fn._saved_storage_offset) == ((2, 3), (1, 1), 0)


@pytest.mark.parametrize("name", ["past_the_storage", "sizes_and_strides_differ",
                                  "negative_offset"])
def test_refusals(name):
    with pytest.raises(RuntimeError):
        ERRORS[name](gt)


def test_as_strided_in_place_takes_the_new_geometry_of_the_same_memory():
    x = gt.arange(6.)
    assert x.as_strided_((2, 2), (1, 2)) is x
    assert x.tolist() == [[0.0, 2.0], [1.0, 3.0]]


def test_as_strided_scatter_gradients_are_central_differences():
    x = gt.randn(12, dtype=gt.float64, requires_grad=True)
    src = gt.randn(3, dtype=gt.float64, requires_grad=True)
    assert gt.autograd.gradcheck(lambda a, b: gt.as_strided_scatter(a, b, (3,), (4,), 1),
                                 (x, src))


def test_as_strided_scatter_writes_into_a_copy():
    x = gt.zeros(5)
    out = gt.as_strided_scatter(x, gt.ones(2), (2,), (2,), 1)
    assert out.tolist() == [0, 1, 0, 1, 0] and x.tolist() == [0] * 5
    np.testing.assert_array_equal(gt.Tensor.as_strided_scatter(x, gt.ones(1), (1,), (1,)).numpy(),
                                  [1, 0, 0, 0, 0])
