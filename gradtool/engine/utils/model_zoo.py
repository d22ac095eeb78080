"""torch.utils.model_zoo: the old name of torch.hub's downloader."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401

from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
