"""In-place operations and the tensors backward needs. `gradtool inspect` finds a saved
tensor modified in place before backward runs, and names the line that modified it.

    gradtool inspect examples/inplace_trouble.py
"""
import gradtool


@gradtool.example((4,))
def overwrites_saved_output(x):
    y = x.exp()      # ExpBackward0 saves its result y
    y += 1           # in place: y is now at version 1, backward needs version 0
    return y.sum()


@gradtool.example((4,))
def out_of_place(x):
    y = x.exp()
    y = y + 1        # a new tensor: what ExpBackward0 saved is untouched
    return y.sum()


@gradtool.example((4,))
def write_through_a_view(x):
    buf = gradtool.zeros(6, dtype=gradtool.float64)
    buf[1:5] = x * 2          # copy_ into a view: the base's history becomes CopySlices
    buf[0] = x[0] ** 2
    return (buf * buf).sum()
