"""True reasons for a failed check that are not a wrong formula: a random forward, a backward
that is not reentrant, a deliberate surrogate gradient. Each reads a failed check's state
(gradcheck._Check) and returns the pairs it explains; each costs evaluations only then. Each is
registered on its kind (diagnoses.KINDS), which says when it runs."""
import inspect
import sys

import numpy as np

from ..engine import frames
from .wording import count
from .analytical import as_arrays, max_difference, vjp
from .diagnoses import explains
from .numerical import as_tuple
from .result import Diagnosis, compare

# what draws random numbers, as its function's name (gradtool's, torch's, numpy's)
RANDOM_CALLS = {"randn", "rand", "randint", "randn_like", "rand_like", "randint_like",
                "normal", "normal_", "uniform_", "bernoulli", "bernoulli_", "dropout",
                "multinomial", "randperm", "exponential_", "random_", "poisson", "standard_normal",
                "uniform", "choice", "permutation", "shuffle"}


@explains("random_forward")
def random_forward(check, failing):
    """Two forwards at the same inputs differ by more than central differences can bear: the
    forward is random, so f(x + h) - f(x - h) measures the noise, not the slope."""
    if not failing:
        return set(), []
    ev, o = check.ev, check.opts
    again = ev.values()
    spread, where = 0.0, None
    for k, (a, b) in enumerate(zip(check.base, again)):
        if a is None or b is None or a.shape != b.shape or not a.size:
            continue
        with np.errstate(invalid="ignore"):
            diff = np.nan_to_num(np.abs(a - b), nan=0.0)
        if diff.max() > spread:
            spread, where = float(diff.max()), (k, int(np.argmax(diff)))
    # the noise alone moves a central difference by up to spread / (2 eps)
    if spread / (2 * o.eps) <= o.atol:
        return set(), []
    site = random_site(lambda: ev.values())
    line = f" (it draws at {frames.site_location(site)})" if site else ""
    return {(p.output_index, p.input_index) for p in failing}, [Diagnosis(
        "random_forward", "error",
        f"the forward is random: two calls at the same inputs differ by up to {spread:.3g} "
        f"(output {where[0]}){line}, so central differences measure the noise "
        f"(about {spread / (2 * o.eps):.3g} for a step of {o.eps:g}), not the slope.",
        {"max_difference": spread, "output_position": where[0]},
        location=frames.site_location(site))]


def random_site(call):
    """(file, line, function) of the user's code where `call()` first draws random numbers
    (a profile hook sees gradtool's, torch's and numpy's random functions), or None."""
    found = []

    def profile(frame, event, arg):
        if found:
            return
        if event == "call":
            name, origin = frame.f_code.co_name, frame.f_back
        elif event == "c_call":
            name, origin = getattr(arg, "__name__", ""), frame
        else:
            return
        if name in RANDOM_CALLS and origin is not None:
            site = frames.user_site(origin, also=_library_dirs())
            if site is not None:
                found.append(site)
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        call()
    except Exception:  # noqa: BLE001 - only looking: the check met this call's errors already
        pass
    finally:
        sys.setprofile(previous)
    return found[0] if found else None


def _library_dirs():
    return tuple(d for d in frames.library_dirs() if d != frames.GRADTOOL_DIR)


@explains("backward_not_reentrant")
def backward_not_reentrant(check, failing):
    """On a fresh graph, a first backward that matches central differences and a second one
    (same graph, same grad_output) that does not: the formula is right, the backward changes
    state it needs (an in-place op on what it saved). The hazard probe names that state."""
    reverse = [p for p in failing if p.ad == "reverse"]
    if not reverse:
        return set(), []
    E, o = check.E, check.opts
    mutated = check.report.diagnoses_of("backward_not_reentrant")  # seen by the hazard probe
    with E.enable_grad():
        outs = [x for x in as_tuple(check.ev.call()) if E.is_tensor(x) and x.requires_grad]
    rng = np.random.default_rng(7)
    w = [rng.uniform(0.5, 1.5, tuple(t.shape)) for t in outs]
    xs = check.diff_inputs
    try:  # copies: a backward may return the very tensor it modifies next time
        first = [np.array(g) for g in as_arrays(E, vjp(E, outs, xs, w), xs)]
        second = [np.array(g) for g in as_arrays(E, vjp(E, outs, xs, w), xs)]
    except Exception:  # noqa: BLE001 - a backward that raises the second time: torch's error
        return set(), []
    expected = [sum(check.numerical[p][opos] @ wi.ravel()
                    for opos, wi in zip(check.out_positions, w)
                    if check.numerical[p][opos] is not None)
                for p in check.diff_positions if p in check.numerical]
    if len(expected) != len(xs):
        return set(), []
    close = lambda got: all(compare(np.reshape(e, -1), g.ravel(), o.atol, o.rtol)[0]  # noqa
                            for e, g in zip(expected, got))
    explained = {(p.output_index, p.input_index) for p in reverse}
    confirmed = close(first) and not close(second)
    spread = max_difference(first, second)
    if mutated:  # the probe saw backward change state it reads: that explains the failure
        for d in mutated:
            d.severity = "error"
            if confirmed:
                d.message += (f" On a fresh graph the first backward agrees with central "
                              f"differences and the second differs by up to {spread:.3g}: "
                              f"the formula is right, the backward is not reentrant.")
        return explained, []
    if not confirmed:
        return set(), []
    return explained, [Diagnosis(
        "backward_not_reentrant", "error",
        f"backward is not reentrant: on a fresh graph the first backward agrees with central "
        f"differences, a second one with the same grad_output differs by up to {spread:.3g}. "
        f"The formula is right; backward changes state it reads (an in-place op on a saved "
        f"value, a counter), and gradcheck runs backward many times on one graph.",
        {"max_difference": spread})]


@explains("surrogate_gradient")
def surrogate_patterns(check, failing):
    """A Function's backward that is a deliberate surrogate, recognised from the two Jacobians:
    a flat forward with a non-zero backward (straight-through, surrogate spikes), a constant
    multiple of the true gradient (reversal, scaling), or the true gradient clipped or masked.
    Only for checks of one Function on its own (check.function)."""
    cls = check.function
    if cls is None:
        return set(), []
    o, found, explained = check.opts, {}, set()
    nonlinear = bool(check.report.diagnoses_of("nonlinear_in_grad_output"))
    for p in failing:
        if p.ad != "reverse" or p.numerical is None:
            continue
        pattern = classify(p.numerical, p.analytical, o.atol, o.rtol, o.eps)
        if pattern is not None and pattern[0] == "scaled" and nonlinear:
            # one-hot rows are all 1: a clip to ±t looks like t x; nonlinearity tells them apart
            t = abs(pattern[1])
            pattern = ("clipped", t, f"the forward is the identity and backward clips the "
                                     f"gradient (a unit gradient comes back as {pattern[1]:g}; "
                                     f"backward is not linear in grad_output)")
        if pattern is not None:
            explained.add((p.output_index, p.input_index))
            found.setdefault(pattern[0], (pattern, p))
    diagnoses = []
    for (kind, value, text), p in found.values():
        declare = ('@gradtool.surrogate("straight_through")' if kind == "straight_through"
                   else f'@gradtool.surrogate("scaled", {value:g})' if kind == "scaled"
                   else "@gradtool.surrogate(smooth_fn) (backward = the true gradient of "
                        "smooth_fn)")
        where = class_location(cls)
        at = f" on class {cls.__name__}" + (f" ({where})" if where else "")
        meant = (f"If that is meant, declare it: {declare}{at}, and gradtool checks that "
                 f"instead." if kind != "pass_through" else
                 f"If it is meant and backward does not depend on grad_output's sign, declare "
                 f"it: {declare}{at}; one that does is the gradient of no function and "
                 f"cannot be declared. If it is not meant, fix the backward.")
        diagnoses.append(Diagnosis(
            "surrogate_gradient", "error",
            f"{cls.__name__}.backward is not the true gradient of its forward but a surrogate: "
            f"{text} (output {p.output_index}, {check.labels[p.input_position]}). {meant}",
            {"pattern": kind, "value": value, "function": cls.__name__,
             "output_index": p.output_index, "input_index": p.input_index},
            location=where))
    return explained, diagnoses


def detached_straight_through(check, cut, failing, keys):
    """A cut that is a straight-through estimator written with detach (`x + (q(x) -
    x).detach()`, a round_pass): on every pair it cuts the forward is flat (or clamped) and
    backward passes the gradient. The surrogate_gradient Diagnosis, or None."""
    o = check.opts
    pairs = [p for p in failing if (p.output_index, p.input_index) in keys and p.ad == "reverse"]
    found = [classify(p.numerical, p.analytical, o.atol, o.rtol, o.eps) for p in pairs]
    if cut.details.get("cut") not in ("detach", "data") or not found or \
            any(f is None or f[0] != "straight_through" for f in found):
        return None
    return Diagnosis(
        "surrogate_gradient", "error",
        f"{cut.message.split(':')[0]} to make a straight-through estimator: {found[0][2]}. If "
        f"that is meant, write it as an autograd.Function whose backward returns the "
        f"gradient and declare it: @gradtool.surrogate(\"straight_through\") on that class, "
        f"and gradtool checks that instead; if it is not, keep the value in the graph.",
        {"pattern": "straight_through", "cut": cut.details["cut"],
         "inputs": cut.details["inputs"]},
        "declare it with @gradtool.surrogate(\"straight_through\") on an autograd.Function "
        "if the surrogate is meant; keep the value in the graph if it is not", cut.location)


def classify(numerical, analytical, atol, rtol, eps):
    """(pattern, value, words) for a Jacobian pair that looks like a deliberate surrogate, or
    None: `straight_through` (the forward is flat where it is not jumping; backward is not
    zero), and for a forward that is the identity: `scaled` (analytical = c x numerical),
    `clipped` (to ±t) or `masked`."""
    n, a = np.asarray(numerical), np.asarray(analytical)
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(a))):
        return None
    jump = np.abs(n) > 0.05 / eps     # the step crossed a discontinuity: (f(x+h)-f(x-h)) / 2h
    flat = (np.abs(n) <= atol) | jump
    if flat.all() and np.any(np.abs(a[~jump]) > atol):
        nonzero = np.abs(a) > atol
        return ("straight_through", None,
                "the forward is flat (its true gradient is 0 at every point checked"
                + (f", with {int(jump.sum())} jump(s)" if jump.any() else "") + f") while "
                f"backward gives non-zero gradients ({count(int(nonzero.sum()), 'entry', grouped=False)}, up to "
                f"{np.abs(a).max():.3g}): a straight-through estimator or surrogate gradient")
    square = n.shape[0] == n.shape[1]
    if square and not compare(np.eye(n.shape[0]), n, atol, rtol)[0]:
        return _passes_where_flat(n, a, flat, atol, rtol)
    # the other patterns are layers whose forward is the identity (a wrong constant factor in
    # the backward of any other function is a wrong formula, not a declared intent)
    if not square:
        return None
    c = float(np.trace(a) / n.shape[0])
    if abs(c - 1) > 10 * rtol and compare(c * n, a, atol, rtol)[0]:
        c = float(f"{c:.6g}")
        return ("scaled", c, f"the forward is the identity and backward multiplies the gradient "
                             f"by {c:g}: backward = {c:g} x the true gradient (a gradient "
                             f"{'reversal' if c < 0 else 'scaling'} layer)")
    differs = compare(n, a, atol, rtol)[3] > 1
    if np.all(np.abs(a[differs]) <= atol):
        return ("masked", None, f"the forward is the identity and backward sets "
                                f"{int(differs.sum())} of {n.shape[0]} gradients to 0 (the true "
                                f"gradient, masked)")
    bound = np.abs(a[differs])
    if np.allclose(bound, bound[0], rtol=rtol, atol=atol) and \
            np.all(np.sign(a[differs]) == np.sign(n[differs])) and \
            np.all(bound < np.abs(n[differs])):
        t = float(f"{bound[0]:.6g}")
        return ("clipped", t, f"the forward is the identity and backward clips the gradient to "
                              f"±{t:g} ({count(int(differs.sum()), 'entry', grouped=False)} clipped)")
    return None


def _passes_where_flat(n, a, flat, atol, rtol):
    """A clamp (or another saturating op) whose backward lets the gradient through where the
    forward is flat: the forward is the identity or flat at each entry, and the Jacobians
    differ only at flat entries, where backward gives 1. `straight_through` when it does so at
    every flat entry (a clamp straight-through), `pass_through` when only at some (where the
    gradient points back into range, as a ClampWithGrad's)."""
    diagonal = np.eye(n.shape[0], dtype=bool)
    ones = np.abs(n - 1) <= atol + rtol
    differs = compare(n, a, atol, rtol)[3] > 1
    if not (np.all(flat | (ones & diagonal)) and differs.any() and np.all(differs <= diagonal)
            and np.all(flat[differs]) and np.all(np.abs(a[differs] - 1) <= atol + rtol)):
        return None
    saturated = int((flat & diagonal).sum())
    if int(differs.sum()) == saturated:
        return ("straight_through", None,
                f"the forward is flat at {saturated} of {count(n.shape[0], 'entry', grouped=False)} (clamped, or "
                f"saturated) and the identity elsewhere, while backward passes the gradient "
                f"through everywhere: a clamp straight-through estimator")
    return ("pass_through", None,
            f"the forward is flat at {saturated} of {count(n.shape[0], 'entry', grouped=False)} (clamped, or "
            f"saturated) and the identity elsewhere, while backward passes the gradient "
            f"through at {int(differs.sum())} of those: a pass-through surrogate (as a "
            f"ClampWithGrad's, which lets the gradient through where it points back into "
            f"range)")


def class_location(cls):
    """'file:line' of a class's definition (its first decorator), or None."""
    try:
        lines, start = inspect.getsourcelines(cls)
        return frames.location(inspect.getsourcefile(cls), start)
    except (OSError, TypeError):
        return None
