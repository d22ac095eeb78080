"""gradtool.backends: the flags scripts set or ask about; no accelerator is available."""
import types

mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
# torch.backends.cudnn.deterministic = True and friends are accepted and change nothing
cudnn = types.SimpleNamespace(enabled=False, deterministic=False, benchmark=False,
                              is_available=lambda: False)
# torch.backends.mkldnn.enabled = False: the float32 LSTM composed of ops, as torch's
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: True)

# the TF32 and reduced-precision switches training scripts set: accepted, with torch's
# defaults, and they change nothing (the engine computes in numpy on the CPU)
cudnn.allow_tf32 = True
cuda = types.SimpleNamespace(
    matmul=types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                 allow_bf16_reduced_precision_reduction=True),
    is_built=lambda: False)
