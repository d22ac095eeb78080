"""The examples of the notes in shared/seeds/ (torch.autograd's documentation), run with
`import gradtool as torch`. Printed values are asserted where the notes show them."""
import numpy as np
import pytest

import gradtool as torch


def test_legendre_polynomial_function():
    class LegendrePolynomial(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            """
            ctx is a context object that can be used
            to stash information for backward computation.
            """
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.double, requires_grad=True)
    y = LegendrePolynomial.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), 0.5 * (5 * x.detach().numpy() ** 3
                                                          - 3 * x.detach().numpy()))
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * (5 * x.detach().numpy() ** 2 - 1))


def test_saved_self_of_pow():
    x = torch.randn(5, requires_grad=True)
    y = x.pow(2)
    assert x.equal(y.grad_fn._saved_self)  # True


def test_saved_self_and_other_and_accumulate_grad_variable():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    c = a * b
    assert c.grad_fn._saved_self is a and c.grad_fn._saved_other is b
    assert c.grad_fn.next_functions[0][0].variable is a  # variable: only on AccumulateGrad


def test_relu_subgradient_at_zero_is_zero():
    x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_tutorial_gradients():
    x = torch.ones(2, 2, requires_grad=True)
    assert repr(x) == "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"
    y = x + 2
    assert repr(y) == "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)"
    assert repr(y.grad_fn).startswith("<AddBackward0 object at")
    z = y * y * 3
    out = z.mean()
    assert repr(z) == "tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>)"
    assert repr(out) == "tensor(27., grad_fn=<MeanBackward0>)"

    a = torch.randn(2, 2)
    a = ((a * 4) / (a - 1))
    assert a.requires_grad is False
    a.requires_grad_(True)
    assert a.requires_grad is True
    b = (a * a).sum()
    assert repr(b.grad_fn).startswith("<SumBackward0 object at")

    out.backward()
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_tutorial_vector_jacobian_product():
    x = torch.randn(4, requires_grad=True)
    y = x * 2
    doublings = 1
    while y.data.norm() < 1000:
        y = y * 2
        doublings += 1
    v = torch.tensor([0.1, 1.0, 0.0001, 0.5], dtype=torch.float)
    y.backward(v)
    np.testing.assert_allclose(x.grad.numpy(), v.numpy() * 2.0 ** doublings, rtol=1e-6)

    assert x.requires_grad is True
    assert (x ** 2).requires_grad is True
    with torch.no_grad():
        assert (x ** 2).requires_grad is False
    y = x.detach()
    assert y.requires_grad is False
    assert repr(x.eq(y).all()) == "tensor(True)"


def test_no_grad_example():
    x = torch.tensor([1.], requires_grad=True)
    with torch.no_grad():
        y = x * 2
    assert y.requires_grad is False

    @torch.no_grad()
    def doubler(x):
        return x * 2
    z = doubler(x)
    assert z.requires_grad is False


def test_enable_grad_example():
    x = torch.tensor([1.], requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
    assert y.requires_grad is True
    y.backward()
    assert x.grad.tolist() == [2.0]

    @torch.enable_grad()
    def doubler(x):
        return x * 2
    with torch.no_grad():
        z = doubler(x)
    assert z.requires_grad is True


def test_set_grad_enabled_example():
    # The note writes torch.tensor([1], ...): an integer tensor, which torch itself refuses
    # to let require grad. gradtool refuses it with torch's message; the example is meant
    # with a float tensor.
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        torch.tensor([1], requires_grad=True)
    x = torch.tensor([1.], requires_grad=True)
    is_train = False
    with torch.set_grad_enabled(is_train):
        y = x * 2
    assert y.requires_grad is False
    try:
        torch.set_grad_enabled(True)
        y = x * 2
        assert y.requires_grad is True
        torch.set_grad_enabled(False)
        y = x * 2
        assert y.requires_grad is False
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()


def test_inference_mode_example():
    x = torch.tensor([1.], requires_grad=True)
    with torch.inference_mode():
        y = x * 2
    assert y.requires_grad is False

    @torch.inference_mode()
    def doubler(x):
        return x * 2
    z = doubler(x)
    assert z.requires_grad is False
    assert not torch.is_inference_mode_enabled()


def test_exp_function_example():
    from gradtool.engine.autograd import Function

    class Exp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result

    input = torch.randn(3, dtype=torch.double, requires_grad=True)
    output = Exp.apply(input)
    output.sum().backward()
    np.testing.assert_allclose(input.grad.numpy(), np.exp(input.detach().numpy()))


def test_autograd_backward_and_grad_signatures():
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    torch.autograd.backward(y, grad_tensors=torch.ones(3), retain_graph=False,
                            create_graph=False)
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    w = torch.randn(3, requires_grad=True)
    (gx,) = torch.autograd.grad(outputs=(x * 3).sum(), inputs=x, grad_outputs=None,
                                retain_graph=None, create_graph=False, only_inputs=True,
                                allow_unused=False)
    assert gx.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(RuntimeError):
        torch.autograd.grad((x * 3).sum(), [x, w])
