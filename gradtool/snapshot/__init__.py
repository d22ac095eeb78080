"""A frozen picture of one backward graph, and the diagnostics read from it."""
from .capture import Capture, capture
from .graph import GraphSnapshot, take_snapshot

__all__ = ["Capture", "capture", "GraphSnapshot", "take_snapshot"]
