"""torch.version: the build the engine stands for, torch's CPU build (no CUDA, no ROCm)."""
__version__ = "2.13.0+cpu"
cuda = hip = rocm = xpu = None
debug = False
git_version = "unknown"  # (the engine is no build of torch's sources)

from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
