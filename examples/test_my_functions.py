"""gradtool inside a project's own tests: `pytest examples/test_my_functions.py`.

gradtool.testing's assertions pass silently or fail with the report `gradtool gradcheck`
prints; the `gradcheck` fixture and marker come from gradtool's pytest plugin, installed with
gradtool. `gradtool gradcheck examples/test_my_functions.py` checks the same Function (test
functions are pytest's, not gradtool targets)."""
import pytest

import gradtool as torch
from gradtool.frontends.testing import assert_close, assert_gradcheck, assert_gradgradcheck


class SmoothAbs(torch.autograd.Function):
    """sqrt(x^2 + eps): |x| made differentiable at 0."""

    @staticmethod
    def forward(ctx, x):
        y = torch.sqrt(x * x + 1e-3)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, y = ctx.saved_tensors
        return grad_y * x / y


def smooth_l1(x, w):
    return (SmoothAbs.apply(x) * w).sum()


def make_input(*shape, seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


def test_forward_matches_the_closed_form():
    x = make_input(5)
    assert_close(SmoothAbs.apply(x), torch.sqrt(x * x + 1e-3))


def test_gradient_with_the_assertion():
    assert_gradcheck(SmoothAbs.apply, (make_input(5),))


def test_second_order_with_the_assertion():
    assert_gradgradcheck(smooth_l1, (make_input(4), make_input(4, seed=1)))


def test_gradient_with_the_fixture(gradcheck):
    gradcheck(smooth_l1, (make_input(4), make_input(4, seed=1)))
    gradcheck.gradgrad(SmoothAbs.apply, (make_input(3),))


@pytest.mark.gradcheck(fast_mode=True, atol=1e-6)
def test_large_input_in_fast_mode(gradcheck):
    gradcheck(SmoothAbs.apply, (make_input(50, 40),))  # 2,000 elements: fast mode is cheaper
