"""nn.parallel.DistributedDataParallel over the engine's process group, a world of one
process: each gradient is averaged over one replica, so it is the module's own; the wrapper
calls the module, keeps it as `.module` (its state_dict keys start "module.", as torch's),
and checks its arguments as torch's does."""
import contextlib

from ... import distributed as dist
from ..module import Module


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        super().__init__()
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None or output_device is not None:  # the engine's are on the CPU
            devices = {p.device for p in module.parameters()}
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments "
                             f"only work with single-device/multiple-device GPU modules or CPU "
                             f"modules, but got device_ids {device_ids}, output_device "
                             f"{output_device}, and module parameters {devices}.")
        self.process_group = process_group or dist._world()
        self.module, self.dim = module, dim
        self.device_ids, self.output_device = None, None
        self.broadcast_buffers, self.find_unused_parameters = broadcast_buffers, \
            find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate without being averaged across processes: with one process
        that is what they do anyway."""
        old, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        yield  # (uneven inputs need several processes)


__all__ = ["DistributedDataParallel"]


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
