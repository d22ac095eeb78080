"""What torch.compile gives for a module (gradtool/engine/compiler.py), and the checks of its
settings that Module.compile shares."""
from .module import Module

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# the backend names torch 2.13 registers (torch._dynamo.list_backends(exclude_tags=()))
_BACKENDS = frozenset((
    "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
    "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
    "cudagraphs", "eager", "eager_debug", "eager_noexcept", "inductor", "invoke_subgraph",
    "openxla", "openxla_eval", "pre_dispatch_eager", "ts", "tvm"))


class InvalidBackend(RuntimeError):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


def check_settings(backend, mode, options):
    """torch.compile's checks of its settings, before it compiles anything."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise InvalidBackend(backend)


class OptimizedModule(Module):
    """A compiled module: the original as `_orig_mod`, its attributes read through."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)  # its own parameters, buffers and modules
        except AttributeError:
            original = self.__dict__.get("_modules", {}).get("_orig_mod")
            if original is None:
                raise
            return getattr(original, name)
