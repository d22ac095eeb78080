"""`functorch`, torch.func's old home: the same transforms under their old names."""
from ..errors import NotInEngineError, missing_attribute
from . import functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap
from .functional_call import stack_module_state

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "vjp", "vmap", "combine_state_for_ensemble"]


def combine_state_for_ensemble(models):
    """functorch's (fmodel, params, buffers) for an ensemble; the stateless module is the first
    model run by functional_call (make_functional's FunctionalModule is not provided)."""
    params, buffers = stack_module_state(models)
    model = models[0]
    names = (list(params), list(buffers))

    def fmodel(params, buffers, *args, **kwargs):
        return functional_call(model, ({n: p for n, p in zip(names[0], params)},
                                       {n: b for n, b in zip(names[1], buffers)}), args, kwargs)
    return fmodel, tuple(params.values()), tuple(buffers.values())


def make_functional(model, disable_autograd_tracking=False):
    raise NotInEngineError("functorch.make_functional (functorch's old API; use "
                           "torch.func.functional_call)")


make_functional_with_buffers = make_functional


__getattr__ = missing_attribute("functorch")  # a functorch name gradtool lacks: a clear error
