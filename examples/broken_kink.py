"""Gradients checked exactly at a non-differentiable point.

relu at 0 and a tie in max(dim) have no derivative: the left and right derivatives differ,
central differences report their average, and the analytical value is a convention (relu'(0)
is 0; max sends the gradient to the index it returns). gradcheck fails there, but the
formulas are right. gradtool gradcheck: diagnosis `non_differentiable_point`, with the left
and right derivatives. The inputs below put the functions on their kinks."""
import gradtool as gt

AT_ZERO = gt.tensor([-1.0, 0.0, 2.0], dtype=gt.float64, requires_grad=True)
WITH_TIE = gt.tensor([[1.0, 0.5], [1.0, -2.0]], dtype=gt.float64, requires_grad=True)


@gt.example(AT_ZERO)
def relu(x):
    return x.relu()


@gt.example(WITH_TIE)
def column_max(x):
    return x.max(dim=0).values
