"""torch's draws for torch.distributions' Gamma and Dirichlet families and their gradients
(torch._standard_gamma and friends: rows of the op table, which free_functions cannot reach
at import)."""
from . import creation, dtypes
from .dispatch import call
from .ops import derivatives as table

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad"]


def _standard_gamma(input, generator=None):
    return call(table.STANDARD_GAMMA, (input,), (creation.generator(generator),))


def _sample_dirichlet(input, generator=None):
    return call(table.SAMPLE_DIRICHLET, (input,), (creation.generator(generator),))


def _one_dtype(*tensors):
    """torch's kernels of several tensors that take no promotion: the first's dtype or refuse."""
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"Found dtype {dtypes.LEGACY_TYPE_NAMES[t._data.dtype.name]} but "
                               f"expected {dtypes.LEGACY_TYPE_NAMES[tensors[0]._data.dtype.name]}")


def _standard_gamma_grad(self, output):
    _one_dtype(self, output)
    return call(table.STANDARD_GAMMA_GRAD, (self, output))


def _dirichlet_grad(x, alpha, total):
    _one_dtype(x, alpha, total)
    return call(table.DIRICHLET_GRAD, (x, alpha, total))
