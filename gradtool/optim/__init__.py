"""gradtool.optim: torch.optim's SGD, Adam and AdamW on the gradtool engine."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
