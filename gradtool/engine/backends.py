"""gradtool.backends: the flags scripts set or ask about; no accelerator is available."""
import types

from .errors import missing_attribute, namespace_module

mps = namespace_module(f"{__name__}.mps", dict(is_available=lambda: False,
                                                is_built=lambda: False))
# torch.backends.cudnn.deterministic = True and friends are accepted and change nothing
cudnn = namespace_module(f"{__name__}.cudnn", dict(enabled=False, deterministic=False,
                                                    benchmark=False, is_available=lambda: False,
                                                    allow_tf32=True))
# torch.backends.mkldnn.enabled = False: the float32 LSTM composed of ops, as torch's
mkldnn = namespace_module(f"{__name__}.mkldnn", dict(enabled=True, is_available=lambda: True))
# the TF32 and reduced-precision switches training scripts set: accepted, with torch's
# defaults, and they change nothing (the engine computes in numpy on the CPU)
cuda = namespace_module(f"{__name__}.cuda", dict(
    matmul=types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                 allow_bf16_reduced_precision_reduction=True),
    is_built=lambda: False))

__path__ = []  # a package to the import system: `import torch.backends.cudnn` finds its namespace
__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
