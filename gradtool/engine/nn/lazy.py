"""torch.nn.modules.lazy's LazyModuleMixin: a module whose parameters (UninitializedParameter)
and buffers (UninitializedBuffer) take their shapes from the first input. Its first forward
runs initialize_parameters (a forward pre-hook), then the module becomes cls_to_become
(LazyLinear a Linear, ...); loading a state_dict materialises them too (Module.load_state_dict)."""
import itertools

from .parameter import Buffer, is_lazy


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module (not its children) is uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class _LazyNormBase(LazyModuleMixin):
    """The lazy batch and instance norms: num_features from the first input's dim 1; weight,
    bias and running statistics uninitialized until then (affine and track_running_stats
    on by default, as torch's lazy norms)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        from ..autograd import creation, dtypes
        from .parameter import UninitializedBuffer, UninitializedParameter
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = Buffer(creation.tensor(0, dtype=dtypes.int64))

    def reset_parameters(self):  # torch's _NormBase.reset_parameters, once initialized
        from . import init
        if self.has_uninitialized_params() or self.num_features == 0:
            return
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            for name in ("weight", "bias", "running_mean", "running_var"):
                if is_lazy(getattr(self, name, None)):
                    getattr(self, name).materialize((self.num_features,))
            self.reset_parameters()
