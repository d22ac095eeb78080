"""gradtool.cuda.amp: torch.cuda.amp's older spellings of gradtool.amp (no-ops without CUDA)."""
import functools

from ..amp import GradScaler, custom_bwd, custom_fwd
from ..amp import autocast as _autocast

autocast = functools.partial(_autocast, "cuda")

from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
