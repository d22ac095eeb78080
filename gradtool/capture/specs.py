"""What a user declares about their code: inputs that fit a function (`@gradtool.example`
specs) and deliberate surrogate gradients (`@gradtool.surrogate`)."""
import dataclasses
import inspect
import math
import sys

from ..engine.autograd import grad_mode
from ..engine.frames import user_site


# ------------------------------------------------------------------ input specs
@dataclasses.dataclass(frozen=True)
class InputSpec:
    """An argument gradtool generates (seeded): a float64 tensor of `shape` drawn as `kind`
    says, or a constant. `requires_grad` for the float tensors unless no_grad(shape)."""
    kind: str                 # randn | positive | uniform | integers | constant
    shape: tuple = ()
    low: float = 0.0
    high: float = 1.0
    value: object = None
    requires_grad: bool = True

    def __repr__(self):
        args = {"positive": f"{self.shape}", "uniform": f"{self.shape}, {self.low}, {self.high}",
                "integers": f"{self.shape}, {self.high}", "constant": repr(self.value),
                "randn": f"{self.shape}"}[self.kind]
        name = "no_grad" if self.kind == "randn" and not self.requires_grad else self.kind
        return f"gradtool.{name}({args})"

    def draw(self, rng):
        """The value as a numpy array (or the constant itself)."""
        if self.kind == "constant":
            return self.value
        if self.kind == "positive":  # |randn| kept away from 0, where log, sqrt, 1/x blow up
            return abs(rng.standard_normal(self.shape)) + 0.1
        if self.kind == "uniform":
            return rng.uniform(self.low, self.high, self.shape)
        if self.kind == "integers":
            return rng.integers(0, self.high, self.shape)
        return rng.standard_normal(self.shape)


def _shape(shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"a shape holds sizes >= 0, like (2, 3) (got {shape})")
    return shape


def positive(shape):
    """A float64 tensor of `shape` with values in (0.1, ~4): for log, sqrt, 1/x, std."""
    return InputSpec("positive", _shape(shape))


def uniform(shape, low, high):
    """A float64 tensor of `shape` uniform in [low, high)."""
    if not low < high:
        raise ValueError(f"gradtool.uniform: low must be below high (got {low}, {high})")
    return InputSpec("uniform", _shape(shape), low=float(low), high=float(high))


def integers(shape, high):
    """An int64 tensor of `shape` with values in [0, high): indices, class labels."""
    return InputSpec("integers", _shape(shape), high=int(high), requires_grad=False)


def constant(value):
    """A value passed as it is (a number, a string, a tensor that must not be checked)."""
    return InputSpec("constant", value=value, requires_grad=False)


class no_grad(grad_mode.no_grad):
    """torch's `no_grad` (a context manager and decorator), and, called with a shape,
    `gradtool.no_grad(shape)`: a float64 randn input of that shape that does not require grad
    (gradcheck leaves it alone)."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and (isinstance(args[0], int) or (
                isinstance(args[0], tuple) and all(isinstance(n, int) for n in args[0]))):
            return InputSpec("randn", _shape(args[0]), requires_grad=False)
        return super().__new__(cls, *args, **kwargs)


# ------------------------------------------------------------------ surrogate gradients
@dataclasses.dataclass
class Surrogate:
    """The gradient a Function's backward is meant to give instead of its forward's true one:
    `straight_through` (the gradient of the identity, on the first argument), `scaled` (scale
    times the true gradient) or `smooth` (the true gradient of `fn`, called with forward's
    arguments)."""
    kind: str
    scale: float = 1.0
    fn: object = None
    location: tuple = None    # (file, line) of the @gradtool.surrogate(...) that declares it

    def describe(self):
        if self.kind == "straight_through":
            return "straight-through: the gradient of the identity"
        if self.kind == "scaled":
            return f"{self.scale:g} x the true gradient"
        return f"the true gradient of {getattr(self.fn, '__name__', 'the declared function')}"

    def local(self, forward):
        """The function whose true gradient the backward should give: forward(*args) is the
        Function's own (applied) forward."""
        if self.kind == "straight_through":
            return lambda x, *args, **kwargs: x.clone()
        if self.kind == "scaled":
            return lambda *args, **kwargs: forward(*args, **kwargs) * self.scale
        return self.fn


def surrogate(kind, scale=None):
    """Declare on an autograd.Function that its backward is a deliberate surrogate, so gradtool
    checks it against what was meant instead of the true gradient:
    `@gradtool.surrogate("straight_through")`, `@gradtool.surrogate("scaled", c)` (gradient
    reversal: c = -lambda) or `@gradtool.surrogate(smooth_fn)` (backward = the true gradient
    of smooth_fn, which takes forward's arguments)."""
    site = user_site(sys._getframe(1))
    location = (site[0], site[1]) if site else None
    if callable(kind) and not isinstance(kind, str):
        declared = Surrogate("smooth", fn=kind, location=location)
    elif kind == "straight_through" and scale is None:
        declared = Surrogate("straight_through", location=location)
    elif kind == "scaled" and isinstance(scale, (int, float)) and math.isfinite(scale):
        declared = Surrogate("scaled", float(scale), location=location)
    else:
        raise ValueError('gradtool.surrogate takes "straight_through", ("scaled", c) with a '
                         f'finite number c, or a function (got {kind!r}, {scale!r})')

    def decorate(cls):
        if not inspect.isclass(cls) or not hasattr(cls, "backward"):
            raise TypeError("@gradtool.surrogate decorates an autograd.Function class")
        cls.__gradtool_surrogate__ = declared
        return cls
    return decorate


def declared_surrogate(cls):
    """The Surrogate a Function class declares (its own, not a base class's), or None."""
    return vars(cls).get("__gradtool_surrogate__") if inspect.isclass(cls) else None
