"""A path of the gradient cut in the forward: normalising by a Python number.

`total.item()` turns the sum into a Python number, so the gradient leaves out the path
through the normalisation. gradcheck fails, and gradtool names the cut rather than a wrong
formula: diagnosis `gradient_cut`, with the `.item()` and its line (`gradtool inspect` shows
it too, before backward runs). `.detach()`, `.data`, a numpy round-trip and `no_grad()` cut
paths the same way."""
import gradtool


@gradtool.example((4,))
def normalized(x):
    e = x.exp()
    total = e.sum()
    return e / total.item()
