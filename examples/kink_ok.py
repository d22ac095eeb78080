"""The counterpart of broken_kink.py: the same functions, checked away from their kinks."""
import gradtool as gt

AT_ZERO = gt.tensor([-1.0, 0.5, 2.0], dtype=gt.float64, requires_grad=True)
WITH_TIE = gt.tensor([[1.0, 0.5], [0.75, -2.0]], dtype=gt.float64, requires_grad=True)


@gt.example(AT_ZERO)
def relu(x):
    return x.relu()


@gt.example(WITH_TIE)
def column_max(x):
    return x.max(dim=0).values
