"""torch.special, under torch's module name; the functions are the autograd layer's
(gradtool/engine/autograd/special.py). A name of torch's family the engine lacks (the
incomplete gamma functions, the orthogonal polynomials, ...: docs/limits.md says why) is a
clear missing-name error, never a wrong value."""
from .autograd.special import (__all__, bessel_j0, bessel_j1, digamma, entr, erf,  # noqa: F401
                               erfc, erfcx, erfinv, exp2, expit, expm1, gammaln, i0, i0e, i1,
                               i1e, log1p, log_ndtr, log_softmax, logit, logsumexp,
                               multigammaln, ndtr, ndtri, polygamma, psi, round, sinc,
                               softmax, xlog1py, xlogy, zeta)
from .errors import missing_attribute

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
