"""torch.as_strided and its kin against torch: values, gradients, node names and refusals,
with the programs of tests/engine/test_as_strided.py. Tests marked parity, skipped without
torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine.test_as_strided import ERRORS, PROGRAMS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _run(lib, name):
    x = lib.arange(12, dtype=lib.float64).requires_grad_()
    out = PROGRAMS[name](lib, x)
    (grad,) = lib.autograd.grad((out * out).sum(), x)
    return out.detach().numpy(), type(out.grad_fn).__name__, grad.numpy()


@pytest.mark.parametrize("name", PROGRAMS)
def test_values_gradients_and_nodes_are_torchs(name):
    (value, node, grad), (their_value, their_node, their_grad) = (_run(lib, name)
                                                                  for lib in (gt, torch))
    np.testing.assert_array_equal(value, their_value)
    if name != "scatter":  # (torch's as_strided_scatter fails torch's own gradcheck with a
        # storage_offset: the engine's gradient is checked by central differences instead, in
        # tests/engine/test_as_strided.py; its node is torch's one AsStridedScatterBackward0,
        # here a copy written through a view)
        np.testing.assert_array_equal(grad, their_grad)
        assert node == their_node


@pytest.mark.parametrize("name", ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)
