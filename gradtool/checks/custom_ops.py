"""The check of a custom op (torch.library.custom_op) beyond its gradients: torch's opcheck
read into findings, one per mistake, each at the user's line (the kernel, the fake kernel,
the write, setup_context or backward), and gradtool's own probes of what torch does not
check (a declared mutation never made, setup_context and backward disagreeing on what is
saved).

opcheck runs on the engine in use: gradtool's own (gradtool/engine/library.py, whose
messages are torch's) or torch's, so one reading of its messages serves both. Where torch
itself raises (an output aliasing an input at the call, a backward without autograd), the
gradients cannot be checked: the op's findings are the failed check."""
import dataclasses
import inspect
import re

import numpy as np

from .. import adapters as engines
from ..engine import frames
from ..capture.loader import forward_error, make_inputs
from .diagnoses import Diagnosis
from .result import Failure, GradcheckReport

# torch raises at the call or at backward, or each call starts from another point (a write
# into an input): no gradient can be checked
BLOCKING = ("output_aliases_input", "no_autograd", "undeclared_mutation",
            "backward_reads_unsaved")

_MUTATED = re.compile(r"Argument (\w+) is not defined as mutable but was mutated")


@dataclasses.dataclass
class OpCheck:
    """What the check of a custom op found: its diagnoses, opcheck's verdict per test
    ("SUCCESS" or the exception's text), and whether its gradients can be checked."""
    diagnoses: list
    results: dict
    differentiable: bool  # an output requires grad on the target's inputs

    @property
    def blocks_gradcheck(self):
        return any(d.kind in BLOCKING for d in self.diagnoses) or not self.differentiable

    def failure(self):
        """The Failure the op's first error makes of a check, or None."""
        error = next((d for d in self.diagnoses if d.severity == "error"), None)
        if error is None:
            return None
        test = error.details.get("test")  # torch's words where opcheck failed, else gradtool's
        return Failure("opcheck", f"opcheck(op, ...): {test} failed with "
                                  f"{error.details['torch_message']}" if test else error.message)

    def add_to(self, report, op=None):
        """Into the gradient check's report: the findings first (they name the op's own
        mistakes), and a failure for the first error. A wrong gradient is the backward's
        (registered with register_autograd): its line is the place to look."""
        backward = _source(getattr(op, "_backward_fn", None))
        for d in report.diagnoses:
            if d.kind == "wrong_gradient" and d.location is None and backward:
                d.location = _site(backward)
        report.diagnoses[:0] = self.diagnoses
        failure = self.failure()
        if failure is not None:
            report.failures.insert(0, failure)

    def report(self, names):
        """The report of an op whose gradients were not checked: its findings alone."""
        report = GradcheckReport(order=1, mode="opcheck", options={}, inputs=[
            {"position": i, "label": n} for i, n in enumerate(names)], outputs=[])
        self.add_to(report)
        if not self.differentiable and not any(d.kind in BLOCKING for d in self.diagnoses):
            report.diagnoses.append(Diagnosis(
                "output_no_grad", "info",
                "the op returns no output that requires grad on these inputs (it mutates, or "
                "its outputs are not differentiable): there is no gradient to check, only its "
                "opcheck", {}))
        return report


def check_op(target, seed, shape, device=None):
    """OpCheck of a custom op target, on its seeded inputs (fresh copies for each run)."""
    E = engines.current()
    op = target.obj

    def fresh():
        args, kwargs = make_inputs(target, seed, shape, device)
        return tuple(args), kwargs
    args, kwargs = fresh()
    _callable_on(E, op, target, shape, fresh)
    results = E.opcheck(op, args, kwargs)
    diagnoses, kinds = [], set()
    for test, outcome in results.items():
        if isinstance(outcome, str):
            continue
        d = _from_opcheck(E, op, target, test, outcome, fresh)
        if d.kind == "opcheck_failed" and kinds:
            continue  # (a later test failing for a reason already found: torch's aot test
            #          fails on a wrong fake kernel too)
        if d.kind not in kinds:
            kinds.add(d.kind)
            diagnoses.append(d)
    diagnoses += _declared_mutations_unused(E, op, target, fresh)
    differentiable = False
    if not kinds & set(BLOCKING):
        differentiable = _differentiable(E, op, fresh)
        if differentiable and op._backward_fn is not None:
            diagnoses += _saved_probe(E, op, target, fresh)
    if any(d.kind == "backward_reads_unsaved" for d in diagnoses):  # says why opcheck failed
        diagnoses = [d for d in diagnoses if d.kind != "opcheck_failed"]
    order = {"error": 0, "warning": 1, "info": 2}
    diagnoses.sort(key=lambda d: order[d.severity])
    return OpCheck(diagnoses, {k: v if isinstance(v, str) else f"{type(v).__name__}: {v}"
                               for k, v in results.items()}, differentiable)


def _callable_on(E, op, target, shape, fresh):
    """The op must run on the inputs gradtool made (else a UserCodeError at the user's line,
    with how to give others, as for any target); torch's refusal of an aliasing output is a
    finding, not that."""
    args, kwargs = fresh()
    try:
        with E.no_grad():
            op(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the user's kernel may raise anything
        if not _aliasing(str(e)):
            raise forward_error(target, e, shape, args) from None


def _aliasing(text):
    return "must not also be an input to this custom operator" in text or \
        "is not defined to alias output" in text


def _from_opcheck(E, op, target, test, exc, fresh):
    """The finding behind one failed opcheck test, from its exception's words."""
    text = str(exc)
    said = f"(opcheck's {test}: {type(exc).__name__}: {text})"
    details = {"test": test, "torch_message": text}
    name = op._qualname
    if _aliasing(text):
        return Diagnosis("output_aliases_input", "error",
                         f"{name}'s kernel returns an input (or a view of one): torch raises "
                         f"at every call {said}", details,
                         location=_site(_return_site(engines.op_kernel(op)) or _kernel(op)))
    mutated = _MUTATED.search(text)
    if mutated:
        arg = mutated.group(1)
        details["argument"] = arg
        return Diagnosis("undeclared_mutation", "error",
                         f"{name}'s kernel changes `{arg}`, which mutates_args does not "
                         f"declare {said}", details,
                         location=_site(_write_site(E, op, arg, fresh) or _kernel(op)))
    if "no autograd formula was registered" in text or \
            "does not have an autograd kernel defined at an autograd key" in text:
        return Diagnosis("no_autograd", "error",
                         f"{name} is called on an input that requires grad and returns a "
                         f"differentiable output, but no autograd formula is registered: "
                         f"torch raises at backward {said}", details,
                         location=(frames.location(target.filename, target.lineno)))
    if type(exc).__name__ == "MetadataMismatchError":
        reason = getattr(exc, "reason", text).partition("mismatched tensor metadata: ")[2] \
            or text
        details["mismatch"] = reason
        return Diagnosis("fake_kernel_mismatch", "error",
                         f"{name}'s fake kernel does not describe its kernel's output on the "
                         f"same inputs: {reason} (real first, fake second) {said}", details,
                         location=_site(_source(op._abstract_fn)))
    if "There was no fake impl registered" in text or \
            type(exc).__name__ == "UnsupportedOperatorException":
        return Diagnosis("no_fake_kernel", "error",
                         f"{name} has no fake kernel {said}", details,
                         location=(frames.location(target.filename, target.lineno)))
    where = frames.user_frames(exc.__traceback__)
    return Diagnosis("opcheck_failed", "error", f"{name}: opcheck's {test} failed with "
                     f"{type(exc).__name__}: {text}", details,
                     location=frames.location(where[-1].filename, where[-1].lineno)
                     if where else frames.location(target.filename, target.lineno))


def _kernel(op):
    return _source(engines.op_kernel(op))


def _source(fn):
    """(filename, line) where fn is defined, or None."""
    if fn is None:
        return None
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else None


def _return_site(fn):
    """(filename, line) of a function's one `return` statement, or None (none, several, or
    no source)."""
    import ast
    import textwrap
    fn = inspect.unwrap(fn)
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    return (fn.__code__.co_filename, first + returns[0].lineno - 1) if len(returns) == 1 \
        else None


def _site(where):
    return frames.site_location(where) if where else None


def _tensor_arguments(op, args, kwargs):
    """(argument name, tensor) for the op's tensor arguments (in lists too)."""
    E = engines.current()
    names = [a.name for a in op._opoverload._schema.arguments]
    values = list(args) + [kwargs.get(n) for n in names[len(args):]]
    found = []
    for n, v in zip(names, values):
        for t in v if isinstance(v, (list, tuple)) else [v]:
            if E.is_tensor(t):
                found.append((n, t))
    return found


def _call_quietly(E, op, args, kwargs):
    """The op's result on these arguments without a graph, or None if it raises (opcheck
    has said why)."""
    try:
        with E.no_grad():
            return op(*args, **kwargs)
    except Exception:  # noqa: BLE001 - the user's kernel may raise anything
        return None


def _write_site(E, op, arg, fresh):
    """Where the kernel wrote into `arg` (the engine records the line of an in-place op;
    torch does not), or None."""
    args, kwargs = fresh()
    tensors = [t for n, t in _tensor_arguments(op, args, kwargs) if n == arg]
    before = [E.version(t) for t in tensors]
    _call_quietly(E, op, args, kwargs)
    for t, version in zip(tensors, before):
        if E.version(t) != version:
            return E.inplace_site(t)
    return None


def _declared_mutations_unused(E, op, target, fresh):
    """gradtool's probe: an argument in mutates_args whose values the kernel never changes."""
    mutable = set(engines.mutated_arguments(op))
    if not mutable:
        return []
    args, kwargs = fresh()
    named = [(n, t) for n, t in _tensor_arguments(op, args, kwargs) if n in mutable]
    before = [np.array(E.array(t), copy=True) for _, t in named]
    _call_quietly(E, op, args, kwargs)
    unchanged = {}
    for (n, t), old in zip(named, before):
        new = E.array(t)
        same = np.array_equal(old, new, equal_nan=old.dtype.kind in "fc")
        unchanged[n] = unchanged.get(n, True) and same
    return [Diagnosis("declared_mutation_unused", "warning",
                      f"{op._qualname} declares `{n}` in mutates_args, but its kernel never "
                      f"changes it (on these inputs)", {"argument": n},
                      location=frames.location(target.filename, target.lineno))
            for n, same in unchanged.items() if same]


def _differentiable(E, op, fresh):
    """Whether the op, called with grad on these inputs, returns an output requiring grad."""
    args, kwargs = fresh()
    try:
        with E.enable_grad():
            result = op(*args, **kwargs)
    except Exception:  # noqa: BLE001 - opcheck has said why
        return False
    outputs = result if isinstance(result, (list, tuple)) else [result]
    return any(E.is_tensor(o) and o.requires_grad for o in outputs)


class _Ctx:
    """The op's ctx as backward sees it, with its saved tensors replaced at will and every
    read of a name ctx lacks recorded."""

    def __init__(self, ctx, saved):
        vars(self).update(_ctx=ctx, _saved=saved, _missing=[], _read_saved=False)

    @property
    def saved_tensors(self):
        vars(self)["_read_saved"] = True
        return self._saved

    saved_variables = saved_tensors

    def __getattr__(self, name):
        try:
            return getattr(self._ctx, name)
        except AttributeError:
            self._missing.append(name)
            raise


def _saved_probe(E, op, target, fresh):
    """gradtool's probe of setup_context and backward: backward's result is the same whatever
    a saved tensor holds (saved for nothing), or backward reads what was never saved."""
    args, kwargs = fresh()
    with E.enable_grad():
        result = op(*args, **kwargs)
    outputs = [o for o in (result if isinstance(result, (list, tuple)) else [result])
               if E.is_tensor(o)]
    ctx = next((o.grad_fn for o in outputs if o.requires_grad), None)
    if ctx is None:
        return []
    grads = [E.uniform_like(o, 0.5, 1.5) for o in outputs]
    try:
        saved = tuple(ctx.saved_tensors)
    except Exception:  # noqa: BLE001 - a ctx whose saved tensors are gone
        return []
    backward = op._backward_fn

    def run(values):
        probe = _Ctx(ctx, values)
        try:
            with E.no_grad():
                grads_in = backward(probe, *grads)
        except Exception as e:  # noqa: BLE001 - the user's backward may raise anything
            return probe, e
        grads_in = grads_in if isinstance(grads_in, tuple) else (grads_in,)
        flat = [g for item in grads_in  # (a List[Tensor] argument's: a list of gradients)
                for g in (item if isinstance(item, list) else [item])]
        return probe, [None if not E.is_tensor(g) else np.array(E.array(g), copy=True)
                       for g in flat]
    probe, base = run(saved)
    if isinstance(base, Exception):
        where = frames.user_frames(base.__traceback__)
        at = frames.location(where[-1].filename, where[-1].lineno) if where else \
            _site(_source(backward))
        if probe._missing:
            what = f"ctx.{probe._missing[0]}, which setup_context never set"
        elif probe._read_saved and isinstance(base, (ValueError, IndexError)):
            what = (f"{'no' if not saved else 'more'} saved tensors than setup_context saved "
                    f"({len(saved)})")
        else:
            return []  # an error of another kind: the gradient check reports it
        return [Diagnosis("backward_reads_unsaved", "error",
                          f"{op._qualname}'s backward reads {what} "
                          f"({type(base).__name__}: {base})", {}, location=at)]
    found = []
    names = dict((id(t), n) for n, t in _tensor_arguments(op, args, kwargs))
    rng_low, rng_high = -3.0, 3.0
    for i, t in enumerate(saved):
        if not E.is_tensor(t) or E.dtype_name(t) not in ("float64", "float32", "float16",
                                                          "bfloat16"):
            continue
        values = list(saved)
        values[i] = E.uniform_like(t, rng_low, rng_high)
        _, changed = run(tuple(values))
        if isinstance(changed, Exception):
            continue
        if all((a is None and b is None) or (a is not None and b is not None and
                                             np.array_equal(a, b, equal_nan=True))
               for a, b in zip(base, changed)):
            label = names.get(id(t)) or ("the output" if any(t is o for o in outputs)
                                         else f"saved_tensors[{i}]")
            found.append(Diagnosis(
                "saved_unused", "warning",
                f"{op._qualname}'s setup_context saves {label} (saved_tensors[{i}], shape "
                f"{list(t.shape)}), which backward never uses: its result is the same whatever "
                f"that tensor holds", {"index": i},
                location=_site(_source(op._setup_context_fn))))
    return found
