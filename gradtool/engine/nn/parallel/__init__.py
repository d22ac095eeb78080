"""torch.nn.parallel: DataParallel (on a machine without GPUs, the module's own call) and
DistributedDataParallel over the engine's one-process group."""
from . import distributed  # noqa: F401
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
