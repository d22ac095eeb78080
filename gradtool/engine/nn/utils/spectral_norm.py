"""nn.utils.spectral_norm and remove_spectral_norm (torch's hook form): a module's weight is
divided by its largest singular value, estimated before each forward by power iteration on
the buffers `<name>_u` and `<name>_v` (updated in training mode only), from the parameter
`<name>_orig`, as torch's."""
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter

_CONV_TRANSPOSE = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")


class SpectralNorm:
    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = (name, n_power_iterations,
                                                                  dim, eps)

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():  # the buffers move in place, as torch's normalize(out=...)
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparameterise module.<name> as <name>_orig / sigma (its spectral norm, estimated by
    power iteration). dim: the output dim (1 for transposed convolutions, else 0)."""
    if dim is None:
        dim = 1 if type(module).__name__ in _CONV_TRANSPOSE else 0
    handles = module.__dict__.setdefault("_spectral_norm_handles", {})
    if name in handles:
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter "
                           f"{name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    with no_grad():
        h, w = fn.reshape_weight_to_matrix(weight).shape
        u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
        v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    handles[name] = (fn, module.register_forward_pre_hook(fn))
    return module


def remove_spectral_norm(module, name="weight"):
    handles = module.__dict__.get("_spectral_norm_handles", {})
    if name not in handles:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    fn, handle = handles.pop(name)
    handle.remove()
    fn.remove(module)
    return module


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
