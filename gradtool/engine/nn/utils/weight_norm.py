"""nn.utils.weight_norm and remove_weight_norm (torch's older spelling, still common): a
module's weight becomes g * v / ||v||, recomputed before each forward from two parameters,
`<name>_g` (the norms, over every dim but `dim`) and `<name>_v` (the direction). The graph is
the composite (norm, div, mul), where torch runs one fused op (_weight_norm); the gradients
of g and v are the same."""
from ..parameter import Parameter


def norm_except_dim(v, pow=2, dim=0):
    """The p-norm of v over every dim but `dim`, shaped to broadcast against v (dim=-1 or
    None: over all of v)."""
    if dim is None or dim == -1:
        return v.norm(pow)
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    return v.norm(pow, dim=others, keepdim=True) if others else v.abs()


class _WeightNorm:
    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute_weight(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparameterise module.<name> as g * v / ||v|| (norms over every dim but `dim`)."""
    import warnings
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    if name in getattr(module, "_weight_norm_handles", {}):
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
    weight = getattr(module, name)
    norm = _WeightNorm(name, dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, norm.compute_weight(module))
    if "_weight_norm_handles" not in module.__dict__:
        module.__dict__["_weight_norm_handles"] = {}
    module._weight_norm_handles[name] = (norm, module.register_forward_pre_hook(norm))
    return module


def remove_weight_norm(module, name="weight"):
    """Make module.<name> one parameter again, with the value g * v / ||v|| has now."""
    handles = getattr(module, "_weight_norm_handles", {})
    if name not in handles:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    norm, handle = handles.pop(name)
    weight = norm.compute_weight(module).detach()
    handle.remove()
    delattr(module, name)
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    module.register_parameter(name, Parameter(weight))
    return module
