"""The numerical side: calling the user's function (counted) and finite differences.

Inputs are perturbed in place through their arrays, as torch perturbs `input.data`: the
function sees the very tensors it was given (closures and gradgradcheck rely on that), and
no version counter moves. Every value read back is copied to float64."""
import collections
import contextlib

import numpy as np


def as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


class Evaluator:
    """Calls func(*inputs), counting the calls by phase ("base", "numerical", ...). `E` is
    the engine (engines.gradtool's or engines.torch's) of the inputs."""

    def __init__(self, E, func, inputs, numerical_func=None):
        self.E = E
        self.func = func
        # what central differences differentiate: func, or the function whose true gradient
        # a declared surrogate backward should give (specs.Surrogate)
        self.numerical_func = numerical_func or func
        self.inputs = inputs
        self.counts = collections.Counter()
        self.phase = "base"
        # Finite differences need no graph, and building one doubles their cost: they run
        # under no_grad unless the first one shows that func needs grad mode itself (it
        # calls autograd.grad, as gradgradcheck's function does).
        self._needs_grad = None
        self.last_dtypes = ()  # numpy dtypes of the float outputs of the last evaluation

    def call(self, inputs=None):
        """func's raw result, under the caller's grad mode."""
        self.counts[self.phase] += 1
        return self.func(*(self.inputs if inputs is None else inputs))

    def call_with(self, *inputs):
        """call() with the inputs as arguments (for helpers that call func(*inputs))."""
        return self.call(inputs)

    def values(self, inputs=None):
        """numerical_func's outputs as float64 arrays (None for outputs that are not float
        tensors), without building a graph when it allows it."""
        def call():
            self.counts[self.phase] += 1
            return self.numerical_func(*(self.inputs if inputs is None else inputs))
        if self._needs_grad:
            out = call()
        elif self._needs_grad is False:
            with self.E.no_grad():
                out = call()
        else:
            try:
                with self.E.no_grad():
                    out = call()
                self._needs_grad = False
            except RuntimeError:
                out = call()
                self._needs_grad = True
        values, dtypes = [], []
        for o in as_tuple(out):  # a plain loop: this runs 2 * numel times in full mode
            if self.is_float_tensor(o):
                array = self.E.array(o)
                values.append(np.array(array, dtype=np.float64))  # a copy: o may alias an input
                dtypes.append(array.dtype)
            else:
                values.append(None)
        self.last_dtypes = tuple(dtypes)
        return tuple(values)

    def totals(self):
        return {**self.counts, "total": sum(self.counts.values())}

    def is_float_tensor(self, x):
        return self.E.is_tensor(x) and x.is_floating_point()

    def as_float64(self, o):
        """A float tensor's values as a new float64 array (a copy: o may alias an input that
        is about to be perturbed); None for anything else."""
        return np.array(self.E.array(o), dtype=np.float64) if self.is_float_tensor(o) else None

    @contextlib.contextmanager
    def in_float64(self, inputs):
        """The inputs themselves with every float tensor's values cast to float64 in place
        (`.data`, restored after): the point the function is checked at, free of float32
        rounding. In place, not copies: a module's parameters are read from the module."""
        kept = {id(x): (x, x.data) for x in inputs
                if self.is_float_tensor(x) and self.E.dtype_name(x) != "float64"}
        try:
            for x, data in kept.values():
                x.data = self.E.leaf(self.E.array(data).astype(np.float64), False, x.device)
            yield inputs
        finally:
            for x, data in kept.values():
                x.data = data


def _check_same(a, b, eps, flat=None, shape=()):
    """torch's neighbourhood check: perturbing an input (at flat index `flat` of an input of
    `shape`, if given) must not change outputs' shapes."""
    for x, y in zip(a, b):
        if (x is None) != (y is None) or (x is not None and x.shape != y.shape):
            idx = None if flat is None else np.unravel_index(flat, shape) if shape else ()
            on_index = f"on index {idx} " if idx is not None else ""
            raise AssertionError(
                f"Expected `func` to return outputs with the same shape when inputs are "
                f"perturbed {on_index}by {eps}, but got: shapes "
                f"{None if x is None else list(x.shape)} and "
                f"{None if y is None else list(y.shape)}.")


def jacobian_wrt(ev, inputs, position, eps, base):
    """Central differences with respect to inputs[position], one element at a time
    (2 * numel evaluations): one (numel, output numel) matrix per output of `base` (the
    outputs at the unperturbed point; None for outputs that are not float). Also, per input
    element, the second differences |f(x+h) + f(x-h) - 2 f(x)| / h (max over outputs): zero
    up to rounding where f is smooth and h * f'' small, large at a kink."""
    data = ev.E.writable(inputs[position])
    n = data.size
    # f(x - h e_k) and f(x + h e_k) as rows k; the arithmetic is done once at the end, not
    # per element (for small outputs its per-call overhead would cost more than f itself)
    lo = [None if f0 is None else np.empty((n, f0.size)) for f0 in base]
    hi = [None if f0 is None else np.empty((n, f0.size)) for f0 in base]
    for k in range(n):
        orig = data.flat[k]
        data.flat[k] = orig - eps
        a = ev.values(inputs)
        data.flat[k] = orig + eps
        b = ev.values(inputs)
        data.flat[k] = orig
        _check_same(a, b, eps, k, data.shape)
        for rows_lo, rows_hi, x, y in zip(lo, hi, a, b):
            if rows_lo is not None:
                rows_lo[k] = x.reshape(-1)
                rows_hi[k] = y.reshape(-1)
    second = np.zeros(n)
    jacobians = []
    for rows_lo, rows_hi, f0 in zip(lo, hi, base):
        if rows_lo is None:
            jacobians.append(None)
            continue
        if f0.size:
            sums = rows_lo + rows_hi
            sums -= 2 * f0.reshape(-1)
            # fmax: a NaN second difference leaves the other outputs' maximum (0 if none)
            np.fmax(second, np.abs(sums, out=sums).max(axis=1) / eps, out=second)
            del sums
        rows_hi -= rows_lo  # in place: the Jacobian takes rows_hi's memory
        rows_hi /= 2 * eps
        jacobians.append(rows_hi)
    return jacobians, second


def directional_wrt(ev, inputs, position, u, eps):
    """Central difference along direction u (unit norm, input's shape) of inputs[position]:
    J u for every output, from 2 evaluations whatever the input's size."""
    data = ev.E.writable(inputs[position])
    orig, step = data.copy(), eps * u
    data[...] = orig - step
    a = ev.values(inputs)
    data[...] = orig + step
    b = ev.values(inputs)
    data[...] = orig
    _check_same(a, b, eps)
    return [None if x is None else ((y - x) / (2 * eps)).ravel() for x, y in zip(a, b)]


def stencil_wrt(ev, inputs, position, k, h):
    """f at x + s * h * e_k for s = -2..2 (5 evaluations): {s: outputs}."""
    data = ev.E.writable(inputs[position])
    orig = data.flat[k]
    values = {}
    for s in (-2, -1, 0, 1, 2):
        data.flat[k] = orig + s * h
        values[s] = ev.values(inputs)
    data.flat[k] = orig
    return values
