"""gradtool.utils: torch.utils.data (datasets and an in-process DataLoader) and
torch.utils.checkpoint."""
from . import checkpoint, data, hooks

from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
