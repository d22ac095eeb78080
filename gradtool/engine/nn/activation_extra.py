"""More of torch.nn's activation modules (torch.nn.modules.activation): each calls its
functional twin, whose gradient is a row of the op table where torch has a node of its own
(Hardtanh, ReLU6, Hardsigmoid, Hardswish, Mish, LogSigmoid, PReLU, SELU, GLU) and the
composite torch computes otherwise (Softsign, Tanhshrink, Softmin)."""
from . import functional as F
from .module import Module
from .parameter import Parameter
from ..autograd import creation


class Hardtanh(Module):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _Elementwise(Module):
    """An activation with no parameters but `inplace` (some have not even that)."""

    function = None
    takes_inplace = True

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        fn = type(self).function
        return fn(input, inplace=self.inplace) if self.takes_inplace else fn(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(_Elementwise):
    """relu6(x + 3) / 6."""
    function = staticmethod(F.hardsigmoid)


class Hardswish(_Elementwise):
    """x * relu6(x + 3) / 6."""
    function = staticmethod(F.hardswish)


class Mish(_Elementwise):
    """x * tanh(softplus(x))."""
    function = staticmethod(F.mish)


class SELU(_Elementwise):
    """scale * elu(x, alpha), torch's constants."""
    function = staticmethod(F.selu)


class _NoArguments(_Elementwise):
    takes_inplace = False

    def __init__(self):
        super().__init__(False)


class LogSigmoid(_NoArguments):
    """log(sigmoid(x))."""
    function = staticmethod(F.logsigmoid)


class Softsign(_NoArguments):
    """x / (1 + |x|)."""
    function = staticmethod(F.softsign)


class Tanhshrink(_NoArguments):
    """x - tanh(x)."""
    function = staticmethod(F.tanhshrink)


class Softmin(Module):
    """softmax(-x) along dim."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along dim."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class PReLU(Module):
    """x where x > 0, else weight * x: a learnt slope, one for all channels or one per
    channel (num_parameters), starting at `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(creation.full((num_parameters,), init, dtype=dtype,
                                              device=device))

    def reset_parameters(self):
        from . import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Threshold(Module):
    """x where x > threshold, else value."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Leaky ReLU with a random slope from U(lower, upper) for each element in training, their
    mean in eval mode."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class _Shrink(Module):
    function = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self).function(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""
    function = staticmethod(F.hardshrink)


class Softshrink(_Shrink):
    """x shrunk towards 0 by lambd, 0 on [-lambd, lambd]."""
    function = staticmethod(F.softshrink)


__all__ = ["Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "SELU", "LogSigmoid",
           "Softsign", "Tanhshrink", "Softmin", "GLU", "PReLU", "Threshold", "CELU", "RReLU",
           "Hardshrink", "Softshrink"]
