"""torch.distributions.exp_family.ExponentialFamily: densities exp(<t(x), theta> - F(theta)
+ k(x)); the entropy (and the KL between two members of one family) follows from the log
normaliser F by autograd (Bregman divergence)."""
from .. import autograd
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = autograd.grad(log_normalizer.sum(), params, create_graph=True)
        result = result + log_normalizer
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(
                tuple(self._batch_shape) + (-1,)).sum(-1)
        return result


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
