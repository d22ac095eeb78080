"""Reference checks for low-precision code: a target run in float32, bfloat16 or
float16 against its reference run in float64, as kernel authors check fused kernels by hand.

For each dtype, the target's outputs and the gradients of its inputs and parameters (for one
seeded random grad_output) are compared with the float64 reference's. The error allowed each
tensor is `factor` times the error the reference itself makes in that dtype, plus a floor of
a few ulps of the dtype (for tensors the reference computes exactly): a kernel may round, but
not much worse than the plain code it replaces. All runs share one point: inputs,
parameters and grad_outputs are rounded to every dtype checked (a value exact in bfloat16
and float16 is exact in float32 and float64), so one float64 reference run serves every
dtype. Cost: that run, then per dtype one run of the target and one of the reference, each a
forward and a backward."""
import dataclasses
import functools
import inspect
import math

import numpy as np

import gradtool.adapters as engines
from ..engine.errors import GradtoolError
from ..engine import frames

DEFAULT_FACTOR = 2.0
FLOOR_ULPS = 4  # the floor: this many ulps of the dtype at the tensor's largest reference value
LOW_DTYPES = ("float32", "bfloat16", "float16")
_GRAD_OUTPUT_SEED = 2718


class ReferenceError(GradtoolError):
    """The reference check cannot judge: the reference or the target raised, refused a dtype,
    returned another structure, or gave NaN where its reference value is finite. `location` is
    the user's (file, line) it names."""

    def __init__(self, message, location=None, details=""):
        super().__init__(message)
        self.location = location
        self.details = details


@dataclasses.dataclass
class Comparison:
    """One tensor (an output, or an input's or parameter's gradient) in one dtype."""
    name: str                 # "output 0", "grad of x", "grad of model.weight"
    dtype: str
    shape: tuple
    max_abs_error: float      # |target in dtype - reference in float64|, largest
    reference_error: float    # |reference in dtype - reference in float64|, largest
    tolerance: float          # factor * reference_error + floor
    passed: bool
    worst: dict               # index, target, reference (float64) and reference_low values
    errors: np.ndarray = dataclasses.field(default=None, repr=False)  # per element, for heatmaps

    @property
    def ratio(self):
        """How many times the reference's own error the target's is (inf: the reference is
        exact and the target is not)."""
        if self.reference_error > 0:
            return self.max_abs_error / self.reference_error
        return 0.0 if self.max_abs_error == 0 else math.inf


@dataclasses.dataclass
class ReferenceReport:
    target: str               # names as the report shows them
    reference: str
    dtypes: list
    factor: float
    comparisons: list = dataclasses.field(default_factory=list)
    evaluations: dict = dataclasses.field(default_factory=dict)

    @property
    def passed(self):
        return all(c.passed for c in self.comparisons)

    @property
    def failed(self):
        return [c for c in self.comparisons if not c.passed]


def declare(ref_fn):
    """@gradtool.reference(ref_fn): the plain code a function or autograd.Function is checked
    against in low precision (`gradtool gradcheck --dtypes ...`). ref_fn takes the target's
    arguments and returns the same structure of tensors."""
    if not callable(ref_fn):
        raise TypeError(f"@gradtool.reference takes the reference function, got "
                        f"{type(ref_fn).__name__}")

    def decorate(target):
        target.__gradtool_reference__ = ref_fn
        return target
    return decorate


def declared(obj):
    """The reference declared on a function or Function class, or None."""
    return vars(obj).get("__gradtool_reference__") if hasattr(obj, "__dict__") else None


def default_dtypes(inputs):
    """float32, or the inputs' own float dtype when it is lower (float16, bfloat16)."""
    E = engines.of(inputs)
    own = {E.dtype_name(x) for x in inputs if E.is_tensor(x) and x.is_floating_point()}
    low = [d for d in ("float16", "bfloat16") if d in own]
    return low or ["float32"]


def parse_dtypes(text):
    """'float32,bfloat16' -> ['float32', 'bfloat16'], each a low-precision float dtype."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    wrong = [n for n in names if n not in LOW_DTYPES]
    if not names or wrong:
        raise GradtoolError(f"--dtypes takes {', '.join(LOW_DTYPES)} separated by commas "
                            f"(got {text!r})")
    return list(dict.fromkeys(names))


def reference_report(fn, ref, inputs, *, dtypes=None, factor=DEFAULT_FACTOR, names=None,
                     parameters=(), seed=0, where=None):
    """Check fn against ref (same arguments, same structure of outputs) in each of `dtypes`
    (default: default_dtypes). `inputs`: fn's arguments (tensors and other values); float
    tensors are cast to each dtype, those requiring grad get gradients. `parameters`: (name,
    tensor) of module parameters fn and ref read, cast with them. `names`: the inputs' names;
    `where`: (name, file, line) of fn for the report and messages (default: fn's own).
    Raises ReferenceError when the check cannot judge."""
    if not (isinstance(factor, (int, float)) and factor > 0 and math.isfinite(factor)):
        raise GradtoolError(f"the factor must be a finite number > 0 (got {factor})")
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    E = engines.of(inputs)
    dtypes = list(dtypes) if dtypes else default_dtypes(inputs)
    for d in dtypes:
        if d not in LOW_DTYPES:
            raise GradtoolError(f"the reference check runs in {', '.join(LOW_DTYPES)} "
                                f"(got {d!r})")
    names = list(names or []) + [f"input {i}" for i in range(len(names or []), len(inputs))]
    check = _Check(E, fn, ref, inputs, names, list(parameters), dtypes, factor, seed)
    if where is not None:
        check.target_site = tuple(where)
    return check.run()


class _Check:
    def __init__(self, E, fn, ref, inputs, names, parameters, dtypes, factor, seed):
        self.E, self.fn, self.ref = E, fn, ref
        self.target_site, self.ref_site = site(fn), site(ref)
        self.inputs, self.names, self.parameters = inputs, names, parameters
        self.dtypes, self.factor, self.seed = dtypes, factor, seed
        self.floats = [i for i, x in enumerate(inputs) if E.is_tensor(x) and x.is_floating_point()]
        # the common point: every float value rounded to every dtype checked
        self.points = {i: _on_grid(E.array(inputs[i]), dtypes) for i in self.floats}
        self.param_points = [_on_grid(E.array(p), dtypes) for _, p in parameters]
        self.evaluations = {}

    def run(self):
        report = ReferenceReport(self.target_site[0], self.ref_site[0], self.dtypes, self.factor)
        exact64 = self._run(self.ref, "float64", None)
        self._check_finite(exact64)
        for dtype in self.dtypes:
            target = self._run(self.fn, dtype, exact64)
            reference = self._run(self.ref, dtype, exact64)
            for k, (name, exact) in enumerate(exact64[2]):
                sides = (exact, target[2][k][1], reference[2][k][1])
                if all(s is None for s in sides):  # a gradient no side has: not reached
                    continue
                shape = next(s.shape for s in sides if s is not None)
                report.comparisons.append(self._compare(
                    name, dtype, *(np.zeros(shape) if s is None else s for s in sides)))
        report.evaluations = {**self.evaluations, "total": sum(self.evaluations.values())}
        return report

    # ---------------- running fn or ref in one dtype ----------------
    def _run(self, fn, dtype, expected):
        """fn's outputs and gradients in `dtype`: (output tensors, wrt names, [(name, float64
        array)] for outputs then gradients). `expected`: the float64 reference's run, whose
        structure fn must match (None: this is that run, which draws the grad_outputs)."""
        E = self.E
        who = self.ref_site if fn is self.ref else self.target_site
        args = list(self.inputs)
        for i in self.floats:
            x = self.inputs[i]
            args[i] = E.leaf(self.points[i], x.requires_grad, x.device, dtype)
        wrt_names = [self.names[i] for i in self.floats if self.inputs[i].requires_grad]
        wrt = [args[i] for i in self.floats if self.inputs[i].requires_grad]
        kept = [p.data for _, p in self.parameters]
        try:
            for (_, p), point in zip(self.parameters, self.param_points):
                p.data = E.leaf(point, False, p.device, dtype)
            try:
                with E.enable_grad():
                    outputs = flatten(E, fn(*args))
                    values = [(f"output {k}", _host(E, o)) for k, o in enumerate(outputs)]
                    if expected is None:
                        self.grad_outputs = _grad_outputs(outputs, self.seed, self.dtypes)
                    else:
                        self._same_structure(who, dtype, outputs, expected[0])
                    grads = self._gradients(outputs, wrt + [p for _, p in self.parameters])
                    values += [(f"grad of {n}", g) for n, g in zip(
                        wrt_names + [n for n, _ in self.parameters], grads)]
            except ReferenceError:
                raise
            except Exception as e:  # noqa: BLE001 - the user's code may raise anything
                raise _raised(who, dtype, e) from None
        finally:
            for (_, p), data in zip(self.parameters, kept):
                p.data = data
        key = f"{'reference' if fn is self.ref else 'target'} {dtype}"
        self.evaluations[key] = self.evaluations.get(key, 0) + 1
        return outputs, wrt_names, values

    def _gradients(self, outputs, wrt):
        """Gradients (float64 arrays; None where the graph does not reach) of the outputs
        that require grad, weighted by the common grad_outputs."""
        E = self.E
        pairs = [(o, g) for o, g in zip(outputs, self.grad_outputs)
                 if g is not None and o.requires_grad]
        if not pairs or not wrt:
            return [None for _ in wrt]
        grads = E.grad([o for o, _ in pairs], wrt, [E.wrap(g, like=o) for o, g in pairs],
                       allow_unused=True)
        return [None if g is None else _host(E, g) for g in grads]

    def _same_structure(self, who, dtype, outputs, expected):
        name = who[0]
        if len(outputs) != len(expected):
            raise ReferenceError(
                f"{name} returns {len(outputs)} tensor(s) in {dtype} where the reference "
                f"{self.ref_site[0]} returns {len(expected)} in float64: a reference returns "
                f"the same structure of tensors as its target", self.ref_site[1:])
        for k, (o, e) in enumerate(zip(outputs, expected)):
            if tuple(o.shape) != tuple(e.shape):
                raise ReferenceError(
                    f"output {k} of {name} has shape {list(o.shape)} in {dtype}, the "
                    f"reference {self.ref_site[0]}'s has shape {list(e.shape)} in float64: "
                    f"a reference returns tensors of its target's shapes", self.ref_site[1:])

    def _check_finite(self, exact64):
        for name, values in exact64[2]:
            if values is not None and not np.all(np.isfinite(values)):
                k = int(np.flatnonzero(~np.isfinite(values.ravel()))[0])
                raise ReferenceError(
                    f"the reference {self.ref_site[0]} gives {values.flat[k]} for {name} at "
                    f"{_index(k, values.shape)} in float64: the reference must be finite "
                    f"where the check judges the target (pick inputs in its domain)",
                    self.ref_site[1:])

    # ---------------- comparing ----------------
    def _compare(self, name, dtype, exact, target, reference):
        if target.shape != exact.shape:
            raise ReferenceError(
                f"{self.target_site[0]} gives {name} of shape {list(target.shape)} in {dtype}, "
                f"the reference {list(exact.shape)}", self.target_site[1:])
        target_error = np.abs(target - exact)
        ref_max = float(np.abs(reference - exact).max(initial=0.0))
        if not math.isfinite(ref_max):
            k = int(np.flatnonzero(~np.isfinite(reference - exact))[0])
            raise ReferenceError(
                f"the reference {self.ref_site[0]} gives {reference.flat[k]} for {name} at "
                f"{_index(k, exact.shape)} in {dtype} (float64: {exact.flat[k]:.6g}): {dtype} "
                f"cannot hold this computation at these inputs, so no error can be allowed "
                f"against it; pick smaller inputs or drop {dtype} from --dtypes",
                self.ref_site[1:])
        scale = float(np.abs(exact).max(initial=0.0))
        floor = FLOOR_ULPS * _ulp_epsilon(dtype) * scale
        tolerance = self.factor * ref_max + floor
        k = int(np.argmax(target_error)) if target_error.size else 0  # a NaN's if any
        max_abs = float(target_error.flat[k]) if target_error.size else 0.0
        if math.isnan(max_abs):  # NaN counts as the worst error (and fails)
            max_abs = math.inf
        worst = {"index": _index(k, exact.shape) if exact.size else [],
                 "target": float(target.flat[k]) if exact.size else None,
                 "reference": float(exact.flat[k]) if exact.size else None,
                 "reference_low": float(reference.flat[k]) if exact.size else None}
        return Comparison(name, dtype, tuple(exact.shape), max_abs, ref_max, tolerance,
                          bool(max_abs <= tolerance), worst, target_error)


def flatten(E, result):
    """The tensors a function returned: a tensor, or tensors in tuples, lists and dicts."""
    if E.is_tensor(result):
        return [result]
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in flatten(E, item)]
    return []


def site(fn):
    """(name, file, line) of a function or of the Function class whose .apply it is."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    owner = getattr(fn, "__self__", None)
    obj = owner if isinstance(owner, type) else inspect.unwrap(fn)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    try:
        return name, inspect.getsourcefile(obj) or "<unknown>", inspect.getsourcelines(obj)[1]
    except (TypeError, OSError):
        return name, "<unknown>", 0


def _raised(who, dtype, exc):
    from ..capture.loader import user_error
    name, filename, lineno = who
    error = user_error(exc, f"{name} in {dtype}")
    message = str(error)
    if error.location is None:
        message += f" ({frames.location(filename, lineno, relative=False)})"
    if dtype != "float64" and _refuses_dtype(exc):
        message += (f"; {name} does not run in {dtype}: leave it out of --dtypes")
    return ReferenceError(message, error.location or (filename, lineno), error.details)


def _refuses_dtype(exc):
    text = str(exc).lower()
    return any(w in text for w in ("half", "bfloat16", "float16", "dtype", "not implemented"))


def _host(E, t):
    return np.asarray(E.array(t), dtype=np.float64)


def _index(k, shape):
    return [int(i) for i in np.unravel_index(k, shape)] if shape else []


_EPSILON = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
            "float64": 2.0 ** -52}  # the gap between 1 and the next value: one ulp at 1


def _ulp_epsilon(dtype):
    return _EPSILON[dtype]


def _round_to(values, dtype):
    """values (float64) rounded to the nearest `dtype` value, as float64."""
    if dtype == "bfloat16":  # round-to-nearest-even on the top 16 bits of float32
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    with np.errstate(over="ignore"):
        return values.astype(dtype).astype(np.float64)


def _on_grid(values, dtypes):
    """values rounded until exact in every dtype. A float16 or bfloat16 value is a float32
    value, and a bfloat16 value in float16's normal range a float16 value: float16 then
    bfloat16 is exact in all but for values beyond float16's range, rounded again."""
    order = [d for d in ("float16", "bfloat16") if d in dtypes] or ["float32"]
    grid = np.array(values, dtype=np.float64)
    for _ in range(4):
        for d in order:
            grid = _round_to(grid, d)
        if len(order) == 1 or np.array_equal(_round_to(grid, "float16"), grid):
            return grid
    return grid


def _grad_outputs(outputs, seed, dtypes):
    """One seeded standard-normal grad_output per float output (None for others), on the
    grid."""
    rng = np.random.default_rng([_GRAD_OUTPUT_SEED, seed])
    return [_on_grid(rng.standard_normal(tuple(o.shape)), dtypes)
            if o.is_floating_point() else None for o in outputs]
