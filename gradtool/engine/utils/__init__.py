"""gradtool.utils: torch.utils.data (datasets and an in-process DataLoader)."""
from . import data

from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error

from . import checkpoint  # noqa: E402,F401
