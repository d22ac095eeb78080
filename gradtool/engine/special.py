"""torch.special, under torch's module name; the functions are the autograd layer's
(gradtool/engine/autograd/special.py). A name of torch's family the engine lacks (the
incomplete gamma functions, the orthogonal polynomials, ...: docs/limits.md says why) is a
clear missing-name error, never a wrong value."""
from .autograd.special import (  # noqa: F401
    __all__, airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t, chebyshev_polynomial_u,
    chebyshev_polynomial_v, chebyshev_polynomial_w, digamma, entr, erf, erfc, erfcx, erfinv,
    exp2, expit, expm1, gammaln, hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1, i1e,
    laguerre_polynomial_l, legendre_polynomial_p, log1p, log_ndtr, log_softmax, logit,
    logsumexp, modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
    multigammaln, ndtr, ndtri, polygamma, psi, round, scaled_modified_bessel_k0,
    scaled_modified_bessel_k1, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w, sinc, softmax,
    spherical_bessel_j0, xlog1py, xlogy, zeta)
from .errors import missing_attribute

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
