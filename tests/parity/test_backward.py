"""Backward's rules against torch: which first-order gradients are themselves differentiable
(and their gradients), which second backward finds its buffers freed, and double backward
at 0 (elu, products over one element). Tests marked parity, skipped without torch; the plain
tests are in tests/engine/test_torch_rules.py."""
import pytest

import gradtool as gt
from tests.engine.test_torch_rules import double_backward_at_zero

try:
    import torch
except ImportError:  # every test here skips
    torch = None

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(torch is None, reason="torch is not installed")]


SECOND_ORDER = ["x.relu()", "(x * 1.0).relu_()", "x.abs()", "x.clamp(-1, 1)", "x.max()",
                "lib.maximum(x, x * 0.5)", "x.sign()", "x.amax(0)", "x.clamp_min(0)",
                "lib.where(x > 0, x, x * 2)", "x.masked_fill(x > 0, 0.0)", "x.softmax(0)",
                "x * 2", "x[[0, 0]]", "x.expand(2, 3)"]


def first_order(lib, code):
    x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    g, = lib.autograd.grad(eval(code, {"lib": lib, "x": x}).sum(), x, create_graph=True)
    if not g.requires_grad:
        return False, None
    h, = lib.autograd.grad((g * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum(), x,
                           allow_unused=True)
    return True, None if h is None else h.detach().numpy(force=True).tolist()


@pytest.mark.parametrize("code", SECOND_ORDER)
def test_first_order_gradient_is_differentiable_where_torchs_is(code):
    assert first_order(gt, code) == first_order(torch, code)


TWICE = ["x * 2", "x / 2", "2 * x", "x + 2", "-x", "x.view(3, 1).t()", "x.exp()", "x - 1",
         "x.relu()", "x.pow(2)", "x.sum() * 3", "x[0] * 1"]


def backward_twice(lib, code):
    x = lib.ones(3, requires_grad=True)
    y = eval(code, {"x": x}).sum()
    y.backward()
    try:
        y.backward()
    except RuntimeError as e:
        return str(e)[:50]
    return x.grad.tolist()


@pytest.mark.parametrize("code", TWICE)
def test_second_backward_fails_where_torchs_does(code):
    assert backward_twice(gt, code) == backward_twice(torch, code)


def test_double_backward_at_zero_matches_torch():
    assert double_backward_at_zero(gt) == double_backward_at_zero(torch)
