"""Saved tensors and the hooks that pack them: `gradtool inspect` lists every _saved_*
value, its memory, and whether hooks hold it (packed) instead of the graph.

    gradtool inspect examples/saved_hooks.py
"""
import gradtool
import gradtool as torch


@gradtool.example((5,))
def plain(x):
    return (x.sin() * x.exp()).sum()


@gradtool.example((5,))
def spilled_to_disk(x):
    with torch.autograd.graph.save_on_disk():
        y = x.sin() * x.exp()   # every tensor saved here lives in a temporary file
    return y.sum()


@gradtool.example((5,))
def counted_by_hooks(x):
    packed = []

    def pack(t):
        packed.append(t.shape)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = x.pow(3)
    return y.sum()
