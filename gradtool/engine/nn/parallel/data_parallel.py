"""nn.DataParallel on a machine without CUDA devices, which is every machine the engine runs
on: torch's wrapper then calls the wrapped module itself, and so does this one. The wrapped
module is the attribute `module` (its state_dict keys start "module.", as torch's)."""
from ..module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module, self.dim = module, dim
        self.device_ids, self.output_device = [], None  # (no CUDA devices to spread over)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


__all__ = ["DataParallel", "data_parallel"]


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional form spreads a call over the GPUs: without one it has no device type to
    spread over and raises, as torch's does."""
    raise RuntimeError("device type could not be determined")


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
