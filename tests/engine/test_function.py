"""Custom autograd.Function: torch's ctx API, and errors that name the Function and input."""
import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.autograd import Function, once_differentiable

from gradcheck_util import check_grads


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class MulAdd(Function):
    """x * y + c with a non-tensor argument c."""

    @staticmethod
    def forward(ctx, x, y, c):
        ctx.save_for_backward(x, y)
        ctx.c = c
        return x * y + c

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return (grad * y if ctx.needs_input_grad[0] else None,
                grad * x if ctx.needs_input_grad[1] else None,
                None)


def test_node_is_named_after_the_function_and_is_the_ctx():
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    assert type(y.grad_fn).__name__ == "CubeBackward"
    assert y.grad_fn.next_functions[0][0].variable is x


def test_custom_function_gradients_are_right_to_second_order():
    x = gt.randn(4, dtype=gt.float64, requires_grad=True)
    check_grads(Cube.apply, [x], order=2)
    y = gt.randn(4, dtype=gt.float64, requires_grad=True)
    check_grads(lambda a, b: MulAdd.apply(a, b, 2.0), [x, y], order=2)


def test_forward_runs_without_recording():
    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.recorded = (x * 2).requires_grad
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    x = gt.randn(2, requires_grad=True)
    y = Probe.apply(x)
    assert y.grad_fn.recorded is False and y.requires_grad


def test_needs_input_grad_and_none_for_inputs_without_grad():
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    y = gt.randn(3, dtype=gt.float64)
    out = MulAdd.apply(x, y, 1.0)
    assert out.grad_fn.needs_input_grad == (True, False, False)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.numpy())


def test_no_input_requires_grad_means_no_node():
    out = Cube.apply(gt.randn(3))
    assert out.grad_fn is None and not out.requires_grad


def test_wrong_number_of_gradients_names_the_function():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad
    x = gt.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function TooFewBackward returned an incorrect number "
                                           r"of gradients \(expected 2, got 1\)"):
        TooFew.apply(x, x).sum().backward()


def test_gradient_of_the_wrong_shape_names_the_function_and_input_index():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad, gt.ones(5)
    x = gt.randn(2, requires_grad=True)
    y = gt.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Function BadShapeBackward returned an invalid "
                                           r"gradient at index 1 - got \[5\] but expected shape "
                                           r"compatible with \[2\]"):
        BadShape.apply(x, y).sum().backward()


def test_gradient_that_is_not_a_tensor_names_the_function_and_index():
    class BadType(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return np.ones(2)
    x = gt.randn(2, requires_grad=True)
    with pytest.raises(TypeError, match="BadTypeBackward returned a gradient of type ndarray at "
                                        "index 0"):
        BadType.apply(x).sum().backward()


def test_gradient_for_a_non_tensor_input_is_refused():
    class GradForNumber(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad
    x = gt.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position "
                                           "2, but the corresponding forward input was not a "
                                           "Variable"):
        GradForNumber.apply(x, 3.0).sum().backward()


def test_broadcastable_gradient_is_summed_to_the_input_shape():
    class Expand(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad.expand(3, 2)  # broadcastable to x's (2,): summed, as torch
    x = gt.randn(2, requires_grad=True)
    Expand.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_mark_non_differentiable_outputs():
    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            order = gt.tensor(np.argsort(x.detach().numpy()))
            values = x[order]
            ctx.mark_non_differentiable(order)
            ctx.save_for_backward(order)
            return values, order

        @staticmethod
        def backward(ctx, grad_values, grad_order):
            (order,) = ctx.saved_tensors
            return gt.zeros_like(grad_values).scatter(0, order, grad_values)
    x = gt.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, order = SortWithIndex.apply(x)
    assert values.requires_grad and not order.requires_grad
    (values * gt.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]


def test_materialize_grads():
    seen = {}

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, ga, gb):
            seen["gb"] = gb
            return ga + (0 if gb is None else gb * 2), None
    x = gt.randn(2, requires_grad=True)
    a, _ = Two.apply(x, True)
    a.sum().backward()
    assert isinstance(seen["gb"], gt.Tensor) and seen["gb"].tolist() == [0.0, 0.0]
    a, _ = Two.apply(x, False)
    a.sum().backward()
    assert seen["gb"] is None


def test_setup_context_style():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad
    x = gt.tensor([3.0], requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.item() == 6.0


def test_saving_the_output_and_returning_an_input():
    class ExpKeep(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    check_grads(ExpKeep.apply, [x], order=2)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward"


def test_once_differentiable_refuses_double_backward():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad
    x = gt.tensor([3.0], requires_grad=True)
    # the incoming gradient 2*y requires grad, so the backward's result must be guarded
    (g,) = gt.autograd.grad((Sq.apply(x) ** 2).sum(), x, create_graph=True)
    assert g.item() == 2 * 9.0 * 6.0
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()
    x.grad = None
    Sq.apply(x).sum().backward()  # a single backward is fine
    assert x.grad.item() == 6.0


def test_save_for_backward_refuses_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument "
                                        "0 is of type int"):
        Bad.apply(gt.randn(2, requires_grad=True))


def test_saved_tensors_are_freed_after_backward():
    x = gt.randn(2, requires_grad=True)
    y = Cube.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors


def test_graph_walk_visits_a_node_once_when_two_outputs_of_it_are_roots():
    """The PyTorch docs' MyCube returns (x ** 3, 3 x ** 2) from one node: a walk from both
    outputs must still reach the leaf (counting the node twice left it waiting forever)."""
    from gradtool.engine.autograd.walk import topological_order

    class CubeAndDerivative(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3, 3 * x ** 2

        @staticmethod
        def backward(ctx, grad, grad_dx):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2 + grad_dx * 6 * x

    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    result, dx = CubeAndDerivative.apply(x)
    order = topological_order([result.grad_fn, dx.grad_fn])
    assert order == [result.grad_fn, result.grad_fn.next_functions[0][0]]


class ScaleShift(Function):
    """x * k + y: a non-tensor argument between two tensors."""

    @staticmethod
    def forward(ctx, x, k, y):
        ctx.save_for_backward(x, y)
        ctx.k = k
        return x * k + y

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None, grad


class ScaleShiftSetup(Function):
    @staticmethod
    def forward(x, k, y):
        return x * k + y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None, grad


@pytest.mark.parametrize("fn", [ScaleShift, ScaleShiftSetup], ids=["ctx", "setup_context"])
def test_custom_node_has_an_edge_per_tensor_argument_only(fn):
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    y = gt.randn(3, dtype=gt.float64)
    node = fn.apply(x, 2.0, y).grad_fn
    # the int argument has no edge; y, which needs no grad, has (None, 0)
    assert len(node.next_functions) == 2
    assert node.next_functions[0][0].variable is x and node.next_functions[1] == (None, 0)
    assert node.needs_input_grad == (True, False, False)
    y.requires_grad_()
    fn.apply(x, 2.0, y).sum().backward()
    assert x.grad.tolist() == [2.0] * 3 and y.grad.tolist() == [1.0] * 3


def test_custom_node_exposes_saved_tensors_and_ctx_attributes_not_saved_names():
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    y = gt.randn(3, dtype=gt.float64)
    node = ScaleShift.apply(x, 2.0, y).grad_fn
    assert node.saved_tensors[0] is x and node.saved_tensors[1] is y
    assert node.k == 2.0
    assert len(node._raw_saved_tensors) == 2
    assert not any(a.startswith("_saved") for a in dir(node))
    with pytest.raises(AttributeError):
        node._saved_0


def test_custom_node_repr_has_torchs_form_with_gradtools_module():
    x = gt.randn(3, requires_grad=True)
    node = Cube.apply(x).grad_fn
    assert repr(node) == f"<gradtool.autograd.function.CubeBackward object at {id(node):#x}>"


def test_a_gradient_for_an_input_that_needs_none_is_ignored():
    class Both(Function):  # returns both gradients whatever needs_input_grad says
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y, grad * x
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    y = gt.randn(3, dtype=gt.float64)
    assert gt.autograd.gradcheck(Both.apply, (x, y))
    Both.apply(x, y).sum().backward()
    assert x.grad.equal(y) and y.grad is None


def test_once_differentiable_results_hang_off_an_error_node_of_fresh_leaves():
    class Pair(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            return grad * 2, None
    x = gt.tensor([3.0], requires_grad=True)
    y = Pair.apply(x, 2)
    (g,) = gt.autograd.grad((y * y).sum(), x, create_graph=True)
    node = g.grad_fn
    assert type(node).__name__ == "Error" and node.name() == "Error"
    # one edge per result of backward: a fresh leaf for the gradient, None for the None
    assert len(node.next_functions) == 2 and node.next_functions[1] == (None, 0)
    leaf = node.next_functions[0][0].variable
    assert leaf.is_leaf and leaf.equal(g) and leaf is not g


def mark_dirty_docstring_example(lib):
    """torch's FunctionCtx.mark_dirty example: forward changes its input through .numpy()."""
    class Inplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()  # shares memory with x: numpy's += bumps no version
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    a = lib.tensor(1.0, requires_grad=True, dtype=lib.double).clone()
    b = a * a  # saves a at version 0
    Inplace.apply(a)
    version = a._version
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
        b.backward()
    return version, str(error.value).split(". ")[0]


def test_mark_dirty_bumps_the_version_so_a_tensor_saved_before_fails_backward():
    version, message = mark_dirty_docstring_example(gt)
    assert version == 1
    assert "is at version 1; expected version 0 instead" in message


