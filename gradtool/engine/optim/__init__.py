"""gradtool.optim: torch.optim's SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, RAdam,
ASGD, Rprop, LBFGS and SparseAdam on the gradtool engine, and lr_scheduler."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .adaptive import Adadelta, Adagrad, RMSprop
from .more import ASGD, LBFGS, Adamax, RAdam, Rprop, SparseAdam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "RAdam",
           "ASGD", "Rprop", "LBFGS", "SparseAdam", "lr_scheduler"]


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
