"""torch.distributions.distribution.Distribution: the base of every distribution, and the one
place where arguments and values are validated (against a class's arg_constraints and
support), with torch's messages."""
import warnings

from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """batch_shape and event_shape; sample() draws without a graph, rsample() through one."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__  # (on, as torch's, unless Python runs with -O)

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()

    def _validate_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          f"`arg_constraints = {{}}` or initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # (a constraint of other arguments: not checkable)
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue  # (the parametrisation not given: computed from the one given)
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} to satisfy "
                                 f"the constraint {constraint!r}, but found invalid values:\n"
                                 f"{_formatted(value)}")

    def expand(self, batch_shape, _instance=None):
        """The same distribution with its parameters expanded to batch_shape (no copy, no
        new validation)."""
        new = self._get_checked_instance(type(self), _instance)
        batch_shape = Size(batch_shape)
        new.__dict__.update(self.__dict__)
        for param in self.arg_constraints:
            if param in self.__dict__:
                value = self.__dict__[param]
                event = tuple(value.shape[len(self._batch_shape):])
                setattr(new, param, value.expand(tuple(batch_shape) + event))
        new._batch_shape = batch_shape
        return new

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """A value scored by log_prob, cdf or icdf: a tensor whose rightmost dims are the
        event's, that broadcasts with the batch, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), Size(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          f"validation. Please initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({support!r}) of "
                             f"the distribution {self!r}, but found invalid values:\n"
                             f"{_formatted(value)}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                f"__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        shown = [name for name in self.arg_constraints if name in self.__dict__]
        args = ", ".join(f"{name}: {_shown(self.__dict__[name])}" for name in shown)
        return f"{type(self).__name__}({args})"


def _formatted(value):
    """A tensor as torch's f-strings write it: a 0-d one as its number."""
    return value.item() if value.dim() == 0 else value


def _shown(value):
    return value if value.numel() == 1 else value.size()


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
