"""The diagnoses: why a gradcheck failed, beyond torch's verdict.

Run after every check stage, on the check's state (see gradcheck._Check): float32 precision
(redo the numerical side in float64), non-differentiable points (five-point stencils at the
worst entries), a backward that cannot be differentiated twice (gradgradcheck), and else a
wrong formula. Each step is registered on its kind (diagnoses.KINDS, @explains; more in
reasons.py) and they run in registry order. Each costs evaluations of func only when there is
something to explain."""
import contextlib
import linecache

import numpy as np

from ..engine import frames
from .wording import count, plural
from . import hazards, kinks
from . import reasons  # (its steps register themselves on their kinds)
from .diagnoses import KINDS, explains
from .numerical import as_tuple, jacobian_wrt, stencil_wrt
from .result import Diagnosis, compare, element_index

# Said where the float64 recheck clears a low-precision failure, or cannot run; the CLI
# replaces it with the line to add for the target it checked.
REFERENCE_ADVICE = ("A kernel meant for this precision is judged against a float64 reference: "
                    "gradtool.testing.assert_matches_reference(fn, reference_fn, inputs), or "
                    "@gradtool.reference(reference_fn) on a gradtool gradcheck target.")


def diagnose(check):
    """Explain the verdict, the likeliest root cause first: each kind's step (in registry
    order) explains some failing pairs and the later ones look only at the rest."""
    check.ev.phase = "diagnosis"
    r = check.report
    failing = [p.recheck if p.mode == "fast" and p.recheck is not None else p
               for p in r.pairs if not p.passed]
    failing = [p for p in failing if p is not None and p.numerical is not None]
    explained = set()
    for kind in KINDS.values():
        if kind.explains is None or check.order not in kind.orders:
            continue
        if kind.trusts_forward and r.diagnoses_of("random_forward"):
            continue  # (noise makes every probe meaningless)
        pairs, found = kind.explains(check, [p for p in failing if _key(p) not in explained])
        explained.update(pairs)
        r.diagnoses.extend(found)
    if not r.passed:  # hazards torch passes silently: when the check fails, likely why
        for d in r.diagnoses:
            if KINDS[d.kind].escalates and d.severity == "warning" and \
                    "numerical_max" not in d.details:
                d.severity = "error"
    r.diagnoses.sort(key=lambda d: {"error": 0, "warning": 1, "info": 2}[d.severity])


def _key(pair):
    return pair.output_index, pair.input_index


@explains("wrong_gradient")
def wrong_formula(check, failing):
    """What nothing else explains: a wrong formula (wrong_jvp for forward-mode pairs)."""
    found = []
    for p in failing:
        w = p.worst
        forward = p.ad == "forward"  # the jvp disagrees, not the backward
        found.append(Diagnosis(
            "wrong_jvp" if forward else "wrong_gradient", "error",
            f"the {'forward-mode (jvp)' if forward else 'analytical'} gradient of "
            f"{_output_name(check, p)} with respect to "
            f"{check.labels[p.input_position]} is wrong where the function is smooth: "
            f"at input "
            f"element {list(w['input_element'])}, output element "
            f"{list(w['output_element'])} it is {w['analytical']:.6g}, central "
            f"differences give {w['numerical']:.6g} ({count(p.n_differing, 'entry', grouped=False)} "
            f"{plural(p.n_differing, 'differs')}).",
            {"output_index": p.output_index, "input_index": p.input_index, **w}))
    return {_key(p) for p in failing}, found


@explains("input_modified_in_forward")
def _modified_inputs(check, failing):
    """An input the forward modified explains the mismatches on it (its finite differences
    start from a different point each time)."""
    modified = {d.details["input"]
                for d in check.report.diagnoses_of("input_modified_in_forward")}
    return {_key(p) for p in failing if p.input_position in modified}, []


@explains("ignores_grad_output")
def _ignored_grad_output(check, failing):
    """A backward that ignores grad_output explains every mismatch."""
    return ({_key(p) for p in failing} if check.report.diagnoses_of("ignores_grad_output")
            else set()), []


@explains("grad_none_for_input")
def _none_gradients(check, failing):
    """A Function's backward returning None for an input is right where that input's true
    gradient is 0 (central differences say so): info; an error only where it is not."""
    if check.function is None or check.opts.fast_mode:
        return set(), []
    for d in check.report.diagnoses_of("grad_none_for_input"):
        node = next((n for n in check.nodes if hazards.function_name(n) ==
                     d.details.get("function")), None)
        positions = list(check.E.edge_positions(node)) if node is not None else []
        if d.details.get("input") not in positions:
            continue
        numerical = check.numerical.get(positions.index(d.details["input"]))
        if numerical is None:
            continue
        largest = max((float(np.abs(j).max(initial=0.0)) for j in numerical if j is not None),
                      default=0.0)
        d.details["numerical_max"] = largest
        if largest <= check.opts.atol:
            d.severity = "info"
            d.message += " Here it is right: central differences give 0 for that input too."
        else:
            d.severity = "error"
            d.message += (f" Here it is wrong: central differences give gradients up to "
                          f"{largest:.3g} for that input.")
    return set(), []


@explains("non_finite_output")
def non_finite(check, failing):
    """NaN or Inf made by the forward (log of a negative number, ...): the mismatches
    where either side is not finite come from there, not from a wrong formula."""
    causes = [c for c in check.causes if c.kind == "non_finite_output"]
    bad = {_key(p) for p in failing
           if not (np.all(np.isfinite(p.numerical)) and np.all(np.isfinite(p.analytical)))}
    if not (causes and bad):
        return set(), []
    return bad, [Diagnosis(c.kind, "error", c.message + ": gradients there are NaN or Inf, "
                           "so the check cannot pass at this point", c.details, c.advice,
                           c.location) for c in causes]


@explains("round_off")
def round_off(check, failing):
    """Floating-point round-off: where the outputs are large next to the change a step
    of eps makes (x.sum() + 1e9), central differences keep few digits. A failing pair is
    explained when each mismatch lies within that rounding noise."""
    eps = check.opts.eps
    found, explained = [], set()
    for p in failing:
        if _key(p) in explained:  # (its reverse- and forward-mode pairs)
            continue
        f0 = check.base[check.out_positions[p.output_index]]
        dtype = check.E.numpy_dtype(check.outputs[p.output_index])
        # |f| * machine epsilon on each of f(x+h) and f(x-h), divided by 2h
        noise = 2 * np.finfo(dtype).eps * np.abs(f0).ravel() / (2 * eps)
        allowed = check.opts.atol + check.opts.rtol * np.abs(p.numerical)
        diff = np.abs(p.analytical - p.numerical)
        differs = diff > allowed
        if not differs.any() or not np.all(diff[differs] <= 4 * noise[None, :].repeat(
                diff.shape[0], 0)[differs] + allowed[differs]):
            continue
        explained.add(_key(p))
        found.append((p, float(np.abs(f0).max()), dtype))
    if not found:
        return set(), []
    p, size, dtype = max(found, key=lambda x: x[1])
    return explained, [Diagnosis(
        "round_off", "error",
        f"floating-point round-off, not the formula: output {p.output_index} is as "
        f"large as {size:.3g}, and a step of {eps:g} changes it by less than its own "
        f"{np.dtype(dtype).name} rounding error ({np.finfo(dtype).eps * size:.2g}), so "
        f"central differences lose their digits. Check with a larger --eps (e.g. "
        f"{min(1e-2, eps * 1e3):g}), with float64 throughout, or without the large "
        f"constant offset.",
        {"output_index": p.output_index, "max_abs_output": size, "eps": eps})]


@explains("gradient_cut")
def cuts(check, failing):
    """A failing pair whose input's path was cut in the forward (no_grad, detach(),
    .item(), numpy, .data): the analytical gradient misses that path."""
    explained, found = set(), []
    for cause in check.causes:
        if cause.kind != "gradient_cut":
            continue
        cut = {_key(p) for p in failing
               if check.labels[p.input_position] in cause.details.get("inputs", ())}
        trick = reasons.detached_straight_through(check, cause, failing, cut - explained)
        if trick is not None:
            explained.update(cut)
            found.append(trick)
        elif cut - explained:
            explained.update(cut)
            found.append(Diagnosis(
                cause.kind, "error", cause.message + " (the analytical gradient leaves "
                "that path out; central differences see it)", cause.details, cause.advice,
                cause.location))
    return explained, found


@explains("precision")
def precision(check, failing):
    """Non-float64 inputs or outputs: redo the numerical side on float64 copies of the
    inputs (and, if func still computes in low precision, with the step suited to that
    precision, eps^(1/3)) to tell rounding from a wrong formula."""
    low_in = [f"{check.labels[p]} is {check.E.dtype_name(x)}"
              for p, x in zip(check.diff_positions, check.diff_inputs)
              if check.E.dtype_name(x) != "float64"]
    low_out = [f"output {i} is {check.E.dtype_name(t)}" for i, t in zip(check.out_positions,
                                                                check.outputs)
               if check.E.dtype_name(t) != "float64"]
    if not low_in and not low_out:
        return _computed_inside(check, failing)
    what = _first_few(low_in or low_out)
    details = {"inputs": low_in, "outputs": low_out}
    if not failing:
        return set(), [Diagnosis(
            "precision", "warning",
            f"{what}: gradcheck's tolerances assume float64, so this check passes or "
            f"fails by the luck of rounding. Check with float64 inputs.", details)]
    everything = {_key(p) for p in failing}
    eps, how = check.opts.eps, "With the inputs in float64"
    try:
        with check.ev.in_float64(check.inputs) as inputs64:
            worst = recheck_on(check, inputs64, failing, eps)
            low = [d for d in check.ev.last_dtypes if d != np.float64]
            if worst is None and low:  # func computes in low precision whatever its inputs
                eps = float(np.finfo(min(low, key=lambda d: d.itemsize)).eps) ** (1 / 3)
                how = (f"With the inputs in float64 and a step of {eps:.1e} suited to "
                       f"{low[0]} arithmetic")
                worst = recheck_on(check, inputs64, failing, eps)
    except Exception as e:  # noqa: BLE001 - a kernel that cannot run in float64
        from ..capture.loader import describe_exception
        # (e.g. float32 data the file holds meets the float64 parameters): at the inputs as
        # they are, with the step suited to their precision
        lowest = min((check.E.array(x).dtype for x in check.diff_inputs),
                     key=lambda d: d.itemsize)
        eps = float(np.finfo(lowest).eps) ** (1 / 3)
        worst = recheck_on(check, check.inputs, failing, eps)
        if worst is not None:
            return everything, [Diagnosis(
                "precision", "error",
                f"{what}: precision, not the formula, limits this check. The function "
                f"cannot run in float64 ({describe_exception(e).splitlines()[0]}), but with "
                f"a step of {eps:.1e} suited to {lowest} arithmetic the numerical Jacobians "
                f"agree with the analytical ones (max abs error {worst:.3g}). "
                f"{REFERENCE_ADVICE}", {**details, "eps": eps, "max_abs_error": worst})]
        return everything, [Diagnosis(
            "precision", "error",
            f"{what}, and the function cannot run in float64 to tell rounding from a wrong "
            f"formula ({describe_exception(e).splitlines()[0]}). {REFERENCE_ADVICE}",
            {**details, "float64_error": describe_exception(e)})]
    if worst is None:
        return set(), [Diagnosis(
            "precision", "warning",
            f"{what}, but the mismatch remains with the inputs in float64: it is not (only) "
            f"rounding.", details)]
    return everything, [Diagnosis(
        "precision", "error",
        f"{what}: precision, not the formula, limits this check. {how} the numerical "
        f"Jacobians agree with the analytical ones (max abs error {worst:.3g}). Check "
        f"with float64 inputs and float64 arithmetic. {REFERENCE_ADVICE}",
        {**details, "eps": eps, "max_abs_error": worst})]


# machine epsilon of each precision a float64 function may compute in inside
_EPSILON = {"float32": 2.0 ** -23, "complex64": 2.0 ** -23, "bfloat16": 2.0 ** -7,
            "float16": 2.0 ** -10}


def casts_inside(check):
    """The ops of one call of func whose float result is less precise than their inputs
    (x.float() in a float64 function), as trace events with their sites; kept on the check."""
    if check.casts is None:
        E, trace = check.E, check.E.trace(None)
        try:
            with E.enable_grad(), trace:
                check.ev.call()
        except Exception:  # noqa: BLE001 - only looking: the check met this call's errors
            pass
        check.casts = [e for e in trace.events if e.cast is not None]
    return check.casts


def _computed_inside(check, failing):
    """Float64 in and out, but a step inside computes in lower precision: central
    differences at this eps measure its rounding. Rechecked with the step suited to it."""
    casts = casts_inside(check) if failing else []
    if not casts:
        return set(), []
    low = max((e.cast[1] for e in casts), key=lambda d: _EPSILON.get(d, 0.0))
    first = next(e for e in casts if e.cast[1] == low)
    where = frames.site_location(first.site)
    code = linecache.getline(*first.site[:2]).split("#")[0].strip() if first.site else ""
    more = f" ({len(casts) - 1} more such ops)" if len(casts) > 1 else ""
    eps = check.opts.eps
    size = max((float(np.abs(b).max(initial=0.0)) for b in check.base if b is not None),
               default=1.0) or 1.0
    head = (f"the inputs and outputs are float64, but the function computes in {low} inside: "
            f"`{code or first.op}` ({where or 'an unknown line'}) makes {low} from "
            f"{first.cast[0]}"
            f"{more}. Central differences with a step of {eps:g} measure its rounding (about "
            f"{_EPSILON.get(low, 1e-3) * size / eps:.2g} here), not the slope")
    details = {"casts": [{"op": e.op, "from": e.cast[0], "to": e.cast[1],
                          "location": frames.site_location(e.site)} for e in casts]}
    step = _EPSILON.get(low, 1e-3) ** (1 / 3)
    worst = recheck_on(check, check.inputs, failing, step)
    if worst is None:
        return set(), [Diagnosis(
            "precision", "warning",
            f"{head}; with a step of {step:.1e} suited to {low} the mismatch remains, so it is "
            f"not only rounding.", {**details, "eps": step}, location=where)]
    return {_key(p) for p in failing}, [Diagnosis(
        "precision", "error",
        f"{head}. With a step of {step:.1e} suited to {low} arithmetic the numerical Jacobians "
        f"agree with the analytical ones (max abs error {worst:.3g}): precision, not the "
        f"formula, limits this check. {REFERENCE_ADVICE}",
        {**details, "eps": step, "max_abs_error": worst}, location=where)]


def _first_few(facts, few=3):
    """'a is float32, b is float32, c is float32 and 26 more': a model's parameters would
    fill the screen (the JSON's details keep them all)."""
    shown = ", ".join(facts[:few])
    return shown if len(facts) <= few + 1 else f"{shown} and {len(facts) - few} more"


def recheck_on(check, inputs, failing, eps):
    """Max abs error of the failing pairs' analytical Jacobians against central
    differences of func at `inputs`, or None if any pair still fails."""
    base = check.ev.values(inputs)
    worst = 0.0
    numerical = {}
    for p in failing:
        pos = check.diff_positions[p.input_index]
        if pos not in numerical:
            numerical[pos] = jacobian_wrt(check.ev, inputs, pos, eps, base)[0]
        ok, max_abs, _, _ = compare(numerical[pos][check.out_positions[p.output_index]],
                                    p.analytical, check.opts.atol, check.opts.rtol)
        if not ok:
            return None
        worst = max(worst, max_abs)
    return worst

@explains("non_differentiable_point")
def non_differentiable_points(check, failing):
    """Probe the worst mismatched input elements (and, for passing float64 checks, the
    elements whose second differences look like a kink) with the five-point stencil. A
    failing pair is explained when every probed mismatch in it is a kink."""
    o = check.opts
    if check.casts:
        return set(), []  # func computes in low precision inside: stencils show rounding
    all_float64 = all(check.E.dtype_name(x) == "float64" for x in check.diff_inputs)
    # (on float32 inputs the stencils run at their float64 values: cast in place, restored)
    at_float64 = contextlib.nullcontext() if all_float64 else check.ev.in_float64(check.inputs)
    elements = {}  # (input index, element) -> whether a failing pair mismatches there
    for p in failing:
        per_element = compare(p.numerical, p.analytical, o.atol, o.rtol)[3].max(axis=1)
        for k in np.argsort(-per_element)[:kinks.MAX_PROBED_ELEMENTS]:
            if per_element[k] > 1:
                elements[(p.input_index, int(k))] = True
    float64_out = all(check.E.dtype_name(t) == "float64" for t in check.outputs)
    if all_float64 and float64_out and not check.opts.fast_mode:
        for j, ks in kink_suspects(check).items():
            for k in ks:
                elements.setdefault((j, k), False)
    points, info_points, unexplained = [], [], set()
    with at_float64:
        for (j, k), failing_here in sorted(elements.items()):
            pos = check.diff_positions[j]
            values = stencil_wrt(check.ev, check.inputs, pos, k, o.eps)
            if any(d != np.float64 for d in check.ev.last_dtypes):
                return set(), []  # func computes in low precision: stencils show rounding
            for i, opos in enumerate(check.out_positions):
                if i not in check.rows or pos not in check.numerical:
                    continue
                est = kinks.one_sided({s: v[opos].ravel() for s, v in values.items()}, o.eps)
                analytical = check.rows[i][j][k]
                # at float64 values, the stencil's own central difference is the reference
                numerical = (check.numerical[pos][opos][k] if all_float64
                             else est["central"])
                kink, side = kinks.classify(est, analytical, o.atol, o.rtol)
                bad = ~(np.abs(analytical - numerical) <= o.atol + o.rtol * np.abs(numerical))
                if failing_here and np.any(bad & ~kink):
                    unexplained.add((i, j))
                for m in np.flatnonzero(kink):
                    point = {"output_index": i, "input_index": j,
                             "input_element": element_index(k, check.diff_inputs[j].shape),
                             "output_element": element_index(m, check.outputs[i].shape),
                             "left": float(est["left"][m]), "right": float(est["right"][m]),
                             "numerical": float(numerical[m]),
                             "analytical": float(analytical[m]), "side": str(side[m])}
                    (points if failing_here and bad[m] else info_points).append(point)
    explained, found = set(), []
    if points:
        explained = {(p["output_index"], p["input_index"]) for p in points} - unexplained
        found.append(Diagnosis("non_differentiable_point", "error", kinks.describe(points),
                               {"points": points}))
    if info_points:
        found.append(Diagnosis(
            "non_differentiable_point", "info",
            "the check passes, but " + kinks.describe(info_points).replace(
                "the mismatch is at a non-differentiable point: ", ""),
            {"points": info_points}))
    return explained, found


def kink_suspects(check):
    """Full-mode elements whose second differences exceed what smoothness allows."""
    o = check.opts
    suspects = {}
    for j, p in enumerate(check.diff_positions):
        second = check.second.get(p)
        if second is None or not second.size:
            continue
        scale = max((np.abs(m).max(axis=1) for m in check.numerical[p] if m is not None
                     and m.size), key=len, default=np.zeros_like(second))
        with np.errstate(divide="ignore", invalid="ignore"):  # zero tolerances
            score = np.nan_to_num(second / (o.atol + o.rtol * scale), nan=0.0)
        ks = [int(k) for k in np.argsort(-score)[:kinks.MAX_PROBED_ELEMENTS]
              if score[k] > 1]
        if ks:
            suspects[j] = ks
    return suspects


@explains("once_differentiable")
def second_order(check, failing):
    """gradgradcheck failed: look at the custom Functions of the differentiated function
    for a backward that is @once_differentiable or detaches (which explains the pairs
    whose analytical Jacobian is all zero), and at the forward's saved_detached causes."""
    r = check.report
    if r.passed:
        return set(), []
    func, inputs = check.first_order
    with check.E.enable_grad():
        check.ev.counts["diagnosis"] += 1
        outs = [o for o in as_tuple(func(*inputs)) if check.E.is_tensor(o)]
    zero_jacobian = (any(f.kind == "nonzero_numerical" for f in r.failures) or
                     any(not p.passed and p.analytical is not None and
                         not np.any(p.analytical) for p in r.pairs))
    detached = [c for c in check.causes if c.kind == "saved_detached"]
    found = [Diagnosis(c.kind, "error", c.message, c.details, c.advice, c.location)
             for c in detached] if zero_jacobian else []
    found += [d for node in hazards.custom_nodes(check.E, outs)
              for d in hazards.double_backward_findings(check.E, node)
              if d.kind == "once_differentiable" or zero_jacobian or "inputs" in d.details]
    if not found:
        return set(), []
    return {_key(p) for p in r.pairs if not p.passed and p.analytical is not None
            and not np.any(p.analytical)}, found


def _output_name(check, pair):
    """"output 0", or the part of a complex output ("imaginary part of output 0")."""
    if check.parts is None:
        return f"output {pair.output_index}"
    return check.report.outputs[pair.output_position]["label"]
