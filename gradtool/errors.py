"""Errors the library raises. Only the CLI prints; everything below it raises these."""


class GradtoolError(Exception):
    """Base class for gradtool's own errors."""
