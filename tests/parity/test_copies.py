"""The *_copy ops against torch: values, node names, gradients and gradients of gradients, with
the programs of tests/engine/test_copies.py. Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine.test_copies import PROGRAMS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _run(lib, name, array):
    x = lib.tensor(array, requires_grad=True)
    outs = PROGRAMS[name][1](lib, x)
    outs = [outs] if isinstance(outs, lib.Tensor) else list(outs)
    total = sum((o * o).sum() if not o.is_complex() else (o.real * o.real).sum() for o in outs)
    (grad,) = lib.autograd.grad(total, x, create_graph=True)
    (second,) = lib.autograd.grad((grad * grad).sum(), x)
    return ([o.detach().numpy() for o in outs], [o.grad_fn.name() for o in outs],
            grad.detach().numpy(), second.numpy())


@pytest.mark.parametrize("name", PROGRAMS)
def test_copies_are_torchs(name):
    array = np.random.default_rng(5).standard_normal(PROGRAMS[name][0])
    (values, nodes, grad, second), (their_values, their_nodes, their_grad, their_second) = (
        _run(lib, name, array) for lib in (gt, torch))
    assert nodes == their_nodes
    for a, b in zip(values, their_values):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(grad, their_grad, rtol=1e-12)
    np.testing.assert_allclose(second, their_second, rtol=1e-12)


def test_detach_copy_is_torchs():
    for lib in (gt, torch):
        y = lib.detach_copy(lib.ones(2, requires_grad=True))
        assert y.requires_grad and type(y.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::detach_copy is not "
                                               "implemented"):
            y.sum().backward()
