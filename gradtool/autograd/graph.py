"""torch.autograd.graph: the graph's node type and hooks on it."""
from .node import Node

__all__ = ["Node"]
