"""gradcheck and gradgradcheck with torch's parameters, defaults and verdicts, and the
GradcheckReport behind them.

torch stops at the first failed check; here every check runs (so the report covers every
output/input pair), then the verdict and the error message are torch's: the first failure
in torch's order. Errors raised by the user's code propagate as torch lets them, with
gradtool's diagnosis added as an exception note. The stages are here; the explanations
(precision, kinks, second order, wrong formula) in diagnose.py; custom-Function hazards in
hazards.py.

Evaluations of func: full mode 1 (with a graph, for the analytical side) + 2 per input
element; fast mode 1 + 2 per projection per input, whatever the inputs' sizes. Only a
failure costs more (a full-mode recheck, the float64 and kink probes)."""
import dataclasses
import functools
import sys
import warnings

import numpy as np

from ..autograd import engine, forward_ad, grad_mode
from ..autograd.creation import generator
from ..autograd.function import DelayedError
from ..autograd.tensor import Tensor
from ..autograd.walk import topological_order
from ..errors import GradtoolError
from . import analytical as A
from . import hazards
from . import numerical as N
from .diagnose import Diagnoses
from .report import (MAX_DIFFERING, Diagnosis, Failure, GradcheckReport, PairResult, compare,
                     entry)

FAST_PROJECTIONS = 3       # random (u, v) pairs in fast mode; torch uses one
FAST_SEED = 67280421310721  # fixed, as torch's own generator: checks are reproducible
# A fast-mode pair using more than this share of its tolerance is rechecked in full mode:
# a right gradient uses ~1e-5 of it in float64 (finite-difference error ~1e-10), while a
# wrong entry in a large Jacobian is diluted by the projections and can hide well below 1.
NEAR_PASS = 1e-3
_PROBE_SEED = 1234
_ONE = np.ones(1)  # fast mode's v for an output of one element
_CACHED_ELEMENTS = 1 << 16  # fast-mode directions kept for sizes up to this (512 KiB)

_NOT_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output "
    "multiple times gives different values, although analytical gradient matches numerical "
    "gradient.The tolerance for nondeterminism was {}.")
_UNDEFINED = ('Expected backward function to handle undefined output grads. Please look at '
              '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"')
_UNDEFINED_NONZERO = (
    "Expected all input grads to be undefined or zero when all output grads are undefined or "
    'zero. Please look at "Notes about undefined output gradients" in '
    '"tools/autograd/derivatives.yaml"')


class GradcheckError(RuntimeError, GradtoolError):
    """Raised by gradcheck and gradgradcheck when a check fails. `.report` is the
    GradcheckReport: every pair, every failure, every diagnosis."""

    def __init__(self, message, report=None):
        super().__init__(message)
        self.report = report


@dataclasses.dataclass(frozen=True)
class Options:
    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3
    nondet_tol: float = 0.0
    check_undefined_grad: bool = True
    check_grad_dtypes: bool = False
    fast_mode: bool = False
    fast_projections: int = FAST_PROJECTIONS
    check_forward_ad: bool = False
    check_backward_ad: bool = True


class _Stop(Exception):
    """The user's backward raised: no further check can run."""


# ====================================== public API ======================================
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of `func` at `inputs` (a Tensor or a tuple of them) against
    central differences, for every input that is a float tensor requiring grad.

    torch.autograd.gradcheck's parameters, defaults and verdict: True, or on failure
    GradcheckError (with raise_exception, else False). The error's message is torch's
    (the failing output/input pair with both Jacobians) followed by gradtool's diagnosis,
    and its `.report` holds the whole GradcheckReport. Use float64 inputs: the defaults
    assume them. `check_batched_grad` and `masked` are accepted with nothing more to check:
    gradtool's batched backward (is_grads_batched) runs the nodes it has no batched formula
    for, a custom Function's included, one element at a time, so no backward can break it
    (the op table's batched formulas are checked by gradtool's own tests), and there are no
    sparse tensors. `check_forward_ad` checks the Jacobian computed in forward mode (one jvp
    per input element, as torch) against the same central differences, after the backward
    checks (only it, with check_backward_ad=False). `check_batched_forward_grad` is accepted
    with nothing more to check: gradtool has no vmap, so tangents are never batched."""
    _forward_ad_flags(check_forward_ad, check_backward_ad, check_batched_grad,
                      check_batched_forward_grad)
    report = gradcheck_report(
        func, inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        fast_mode=fast_mode, check_forward_ad=check_forward_ad,
        check_backward_ad=check_backward_ad)
    return _verdict(report, raise_exception)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of the function (inputs, grad_outputs) ->
    autograd.grad(func(inputs), inputs, grad_outputs, create_graph=True), as torch's
    gradgradcheck does. grad_outputs default to random tensors in [-1, 1) drawn from
    gradtool's generator (seed it with gradtool.manual_seed). Same verdicts as torch;
    the diagnosis names a backward that is @once_differentiable or detaches.
    `check_fwd_over_rev` checks that function's Jacobian in forward mode: dual tensors
    through autograd.grad(create_graph=True)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or "
                             "check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev "
                             "to be True")
    report = gradgradcheck_report(
        func, inputs, grad_outputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev)
    return _verdict(report, raise_exception)


def gradcheck_report(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, nondet_tol=0.0,
                     check_undefined_grad=True, check_grad_dtypes=False, fast_mode=False,
                     fast_projections=FAST_PROJECTIONS, check_forward_ad=False,
                     check_backward_ad=True):
    """gradcheck's work, returned as a GradcheckReport instead of a verdict. Errors of the
    user's forward propagate; an error of a backward (or jvp) is kept in `report.exception`."""
    opts = Options(eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                   fast_mode, fast_projections, check_forward_ad, check_backward_ad)
    return _Check(func, inputs, opts).run()


def gradgradcheck_report(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                         nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                         fast_mode=False, fast_projections=FAST_PROJECTIONS,
                         check_forward_ad=False, check_backward_ad=True):
    """gradgradcheck's work as a GradcheckReport (order 2). Its inputs are func's inputs
    followed by the grad_outputs, labelled so."""
    inputs = N.as_tuple(inputs)
    setup_calls = 0
    if grad_outputs is None:
        outputs = [o for o in N.as_tuple(func(*inputs))
                   if isinstance(o, Tensor) and o.requires_grad]
        setup_calls = 1
        grad_outputs = tuple(_random_grad_output(o) for o in outputs)
    grad_outputs = N.as_tuple(grad_outputs)
    opts = Options(eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                   fast_mode, fast_projections, check_forward_ad, check_backward_ad)
    labels = ([f"input {i}" for i in range(len(inputs))] +
              [f"grad_output {i}" for i in range(len(grad_outputs))])
    check = _Check(_first_order(func, inputs, grad_outputs), inputs + grad_outputs, opts,
                   order=2, labels=labels, first_order=(func, inputs))
    report = check.run()
    if setup_calls:
        report.evaluations = {"setup": setup_calls, **report.evaluations,
                              "total": report.evaluations["total"] + setup_calls}
    return report


# ====================================== the check ======================================
class _Check(Diagnoses):
    """One gradcheck: its state, its stages (torch's order), then its diagnoses."""

    def __init__(self, func, inputs, opts, *, order=1, labels=None, first_order=None):
        self.opts = opts
        self.order = order
        self.inputs = N.as_tuple(inputs)
        self.labels = labels or [f"input {i}" for i in range(len(self.inputs))]
        self.first_order = first_order   # gradgradcheck: the (func, inputs) differentiated
        self.ev = N.Evaluator(func, self.inputs)
        self.numerical = {}              # input position -> [per output: (n_in, n_out)]
        self.second = {}                 # input position -> second differences per element
        self.rows = {}                   # output index -> [per diff input: (n_in, n_out)]
        # One output of one element (a scalar loss): the stages run backward with grad_output
        # 1 twice, which is what the grad_output probe would run for w = 1; they keep the two
        # results (arrays per diff input) here for it.
        self.unit_grads = None

    # ---------------- stages ----------------
    def run(self):
        o = self.opts
        self.diff_positions = _check_inputs(self.inputs)
        self.diff_inputs = [self.inputs[p] for p in self.diff_positions]
        versions = [x._version if isinstance(x, Tensor) else None for x in self.inputs]
        outs = N.as_tuple(self.ev.call())
        self.base = tuple(N.as_float64(x) for x in outs)
        self.out_positions = [i for i, x in enumerate(outs)
                              if isinstance(x, Tensor) and x.requires_grad]
        self.outputs = [outs[i] for i in self.out_positions]
        self.report = report = GradcheckReport(
            order=self.order, mode="fast" if o.fast_mode else "full",
            options=dict(vars(o)), inputs=self._describe(self.inputs, self.labels),
            outputs=self._describe(outs, [f"output {i}" for i in range(len(outs))]))
        self._probe_hazards(versions)
        self.ev.phase = "numerical"
        try:
            if not self.outputs:
                self._no_differentiable_outputs()
            elif o.check_backward_ad:
                if o.fast_mode:
                    self._fast()
                else:
                    self._full()
                self._grad_output_checks()
                self._undefined_grad_checks()
            if self.outputs and o.check_forward_ad:
                self._forward_mode()
        except _Stop:
            pass
        self._diagnose()
        report.evaluations = self.ev.totals()
        return report

    def _probe_hazards(self, versions):
        nodes = hazards.custom_nodes(self.outputs) if self.order == 1 else []
        self.report.diagnoses += hazards.modified_inputs(self.inputs, versions, nodes)
        o = self.opts
        for node in nodes:
            self.report.diagnoses += hazards.stored_on_ctx(node)
            self.report.diagnoses += hazards.probe_backward(node, o.atol, o.rtol, o.nondet_tol)
        self.nodes = nodes

    def _full(self):
        o = self.opts
        for p in self.diff_positions:
            self.numerical[p], self.second[p] = N.jacobian_wrt(self.ev, self.inputs, p, o.eps,
                                                               self.base)
        for i, (opos, out) in enumerate(zip(self.out_positions, self.outputs)):
            rows, sizes_ok, types_ok = self._backward(A.jacobian_rows, out, self.diff_inputs)
            again, _, _ = self._backward(A.jacobian_rows, out, self.diff_inputs)
            self.rows[i] = rows
            self._attributes(i, sizes_ok, types_ok, A.max_difference(rows, again))
            if sizes_ok and self._scalar_loss():
                self.unit_grads = [[r.reshape(x.shape) for r, x in zip(rs, self.diff_inputs)]
                                   for rs in (rows, again)]
            for j, p in enumerate(self.diff_positions):
                pair = self._pair(i, j, self.numerical[p][opos], rows[j])
                self.report.pairs.append(pair)
                if not pair.passed:
                    self._fail("jacobian_mismatch", self._mismatch(pair), i, j)

    def _forward_mode(self):
        """torch's check_forward_ad: the Jacobian from one jvp per input element (the other
        inputs without tangent), against the central differences, input by input."""
        o = self.opts
        for j, p in enumerate(self.diff_positions):
            if p not in self.numerical:
                self.numerical[p], self.second[p] = N.jacobian_wrt(
                    self.ev, self.inputs, p, o.eps, self.base)
            columns = self._backward(self._jvp_columns, p)
            for i, opos in enumerate(self.out_positions):
                pair = self._pair(i, j, self.numerical[p][opos], columns[i])
                pair.ad = "forward"
                self.report.pairs.append(pair)
                if not pair.passed:
                    self._fail("jacobian_mismatch", self._mismatch(pair), i, j)

    def _jvp_columns(self, p):
        """d outputs / d inputs[p] in forward mode, in torch's (input numel, output numel)
        layout, one array per differentiable output."""
        x = self.inputs[p]
        detached = [t.detach() if isinstance(t, Tensor) else t for t in self.inputs]
        rows = [np.zeros((x.numel(), out.numel())) for out in self.outputs]
        basis = np.zeros(x.numel(), dtype=x._data.dtype)
        phase, self.ev.phase = self.ev.phase, "forward_ad"
        for k in range(x.numel()):
            basis[k] = 1
            with forward_ad.dual_level():
                duals = list(detached)
                duals[p] = forward_ad.make_dual(detached[p], Tensor._wrap(
                    basis.reshape(x._data.shape).copy()))
                outs = N.as_tuple(self.ev.call(duals))
                for row, opos in zip(rows, self.out_positions):
                    t = forward_ad.tangent_of(outs[opos])
                    if t is not None:
                        row[k] = np.asarray(t._data, dtype=np.float64).reshape(-1)
            basis[k] = 0
        self.ev.phase = phase
        return rows

    def _attributes(self, i, sizes_ok, types_ok, spread):
        """torch's checks of the analytical side of output i, in torch's order."""
        o = self.opts
        if not types_ok and o.check_grad_dtypes:
            self._fail("grad_dtype", "Gradient has dtype mismatch", i)
        if not sizes_ok:
            self._fail("grad_size", "Analytical gradient has incorrect size", i)
        if spread > o.nondet_tol:
            self._fail("not_reentrant", _NOT_REENTRANT.format(o.nondet_tol), i)
            named = self.report.diagnoses_of("nondeterministic_backward")
            if named:  # a custom Function's backward was found to be the culprit
                named[0].severity = "error"
                return
            self.report.diagnoses.append(Diagnosis(
                "nondeterministic_backward", "error",
                f"two backward passes with the same grad_output gave gradients for output {i} "
                f"that differ by up to {spread:.3g}, more than nondet_tol={o.nondet_tol}: "
                f"backward is nondeterministic (random numbers, or a reduction whose order "
                f"varies). If that is expected, pass nondet_tol above {spread:.3g}.",
                {"output_index": i, "max_difference": spread}))

    def _fast(self):
        """torch's fast mode with fast_projections (u, v) pairs: per projection, J u from 2
        evaluations per input and v^T J from one backward per output (one for all
        projections when the output has one element); torch's checks of the analytical side
        on the first."""
        o = self.opts
        projections = {}
        grads = {}  # output index -> v^T J per diff input, as arrays
        directions = _fast_directions(tuple(x.numel() for x in self.diff_inputs),
                                      tuple(out.numel() for out in self.outputs),
                                      o.fast_projections)
        for k, (us, vs) in enumerate(directions):
            us_l1 = [np.abs(u).sum() for u in us]
            jus = [N.directional_wrt(self.ev, self.inputs, p, u.reshape(x.shape), o.eps)
                   for p, u, x in zip(self.diff_positions, us, self.diff_inputs)]
            for i, (opos, out, v) in enumerate(zip(self.out_positions, self.outputs, vs)):
                if i not in grads or v is not _ONE:  # one backward per v (_fast_directions)
                    grads[i] = self._fast_vjp(i, v, reentrancy=k == 0)
                v_l1 = np.abs(v).sum()
                for j, (u, u_l1, ju) in enumerate(zip(us, us_l1, jus)):
                    n = float(v @ ju[opos])
                    a = float(grads[i][j].ravel() @ u)
                    tol = o.atol * u_l1 * v_l1 + o.rtol * abs(n)
                    ratio = abs(a - n) / tol if tol else (0.0 if a == n else np.inf)
                    projections.setdefault((i, j), []).append(
                        {"numerical": n, "analytical": a, "tolerance": float(tol),
                         "ratio": float(ratio) if ratio == ratio else float("inf")})
        # torch compares input by input, then output by output
        for j in range(len(self.diff_inputs)):
            for i in range(len(self.outputs)):
                self._fast_pair(i, j, projections[(i, j)])

    def _fast_vjp(self, i, v, reentrancy):
        """v^T J of output i, as arrays. With reentrancy, backward runs twice and the result
        is checked as torch checks its one projection: sizes, dtypes, the same twice."""
        o, xs = self.opts, self.diff_inputs
        g = self._backward(A.vjp, (self.outputs[i],), xs, (v,))
        arrays = A.as_arrays(g, xs)
        if reentrancy:
            again = A.as_arrays(self._backward(A.vjp, (self.outputs[i],), xs, (v,)), xs)
            sizes_ok = all(x is None or x.shape == d.shape for x, d in zip(g, xs))
            types_ok = all(x is None or x.dtype == d.dtype for x, d in zip(g, xs))
            spread = A.max_difference(arrays, again)
            if spread > o.nondet_tol or not sizes_ok or (not types_ok and o.check_grad_dtypes):
                self._attributes(i, sizes_ok, types_ok, spread)
            if sizes_ok and self._scalar_loss():
                self.unit_grads = [arrays, again]
        return arrays

    def _scalar_loss(self):
        """One differentiable output, of one element."""
        return len(self.outputs) == 1 and self.outputs[0].numel() == 1

    def _fast_pair(self, i, j, projections):
        worst = max(projections, key=lambda p: p["ratio"])
        failed = worst["ratio"] > 1
        errors = [abs(p["analytical"] - p["numerical"]) for p in projections]
        rel = [e / abs(p["numerical"]) for e, p in zip(errors, projections) if p["numerical"]]
        pair = PairResult(i, j, self.out_positions[i], self.diff_positions[j], "fast",
                          not failed, max(errors), max(rel, default=0.0),
                          projections=projections)
        self.report.pairs.append(pair)
        if failed or worst["ratio"] > NEAR_PASS:
            pair.recheck = self._recheck(i, j)
        if failed:
            self._fail("jacobian_mismatch", self._fast_mismatch(pair, worst), i, j)
        elif pair.recheck is not None and not pair.recheck.passed:  # a near-pass, failing
            pair.passed = False
            self._fail("jacobian_mismatch", self._mismatch(
                pair.recheck, "fast mode nearly passed; gradtool's full-mode recheck"), i, j)

    def _recheck(self, i, j):
        """Pair (i, j) in full mode: 2 * numel evaluations of func, i's Jacobian rows."""
        p = self.diff_positions[j]
        if p not in self.numerical:
            phase, self.ev.phase = self.ev.phase, "recheck"
            self.numerical[p], self.second[p] = N.jacobian_wrt(self.ev, self.inputs, p,
                                                               self.opts.eps, self.base)
            self.ev.phase = phase
        if i not in self.rows:
            self.rows[i] = self._backward(A.jacobian_rows, self.outputs[i], self.diff_inputs)[0]
        return self._pair(i, j, self.numerical[p][self.out_positions[i]], self.rows[i][j])

    def _no_differentiable_outputs(self):
        """torch: with no differentiable output the numerical Jacobian must be zero."""
        o = self.opts
        nonzero = False
        if o.fast_mode:
            [(us, _)] = _fast_directions(tuple(x.numel() for x in self.diff_inputs), (), 1)
            for p, x, u in zip(self.diff_positions, self.diff_inputs, us):
                ju = N.directional_wrt(self.ev, self.inputs, p, u.reshape(x.shape), o.eps)
                nonzero |= any(j is not None and j.size and np.abs(j).max() > o.nondet_tol
                               for j in ju)
        else:
            for p in self.diff_positions:
                self.numerical[p], _ = N.jacobian_wrt(self.ev, self.inputs, p, o.eps,
                                                      self.base)
                nonzero |= any(j is not None and np.any(j != 0) for j in self.numerical[p])
        if nonzero:
            self._fail("nonzero_numerical", "Numerical gradient for function expected to be "
                                            "zero")

    def _grad_output_checks(self):
        """torch's test that backward is multiplied by grad_output (zero in, zero out), and
        gradtool's with a grad_output w (random, or 1 for a scalar loss): backward(2w) =
        2 backward(w), the same twice."""
        if not self.outputs:
            return
        o, outs, xs = self.opts, self.outputs, self.diff_inputs
        zero = self._backward(A.vjp, outs, xs, [np.zeros(t.shape) for t in outs])
        at_zero = any(g is not None and g._data.any() for g in zero)
        for g, x in zip(zero, xs):
            if g is None:
                continue
            problem = ("backward not multiplied by grad_output" if g._data.any()
                       else "grad is incorrect type" if g.dtype != x.dtype
                       else "grad is incorrect size" if g.shape != x.shape else None)
            if problem:
                self._fail("grad_output", problem)
                break
        if self.unit_grads is not None:  # w = 1, already run twice by the stage
            w, (g1, g1b) = [np.ones(outs[0].shape)], self.unit_grads
        else:
            rng = np.random.default_rng(_PROBE_SEED)
            w = [rng.uniform(0.5, 1.5, t.shape) * rng.choice((-1.0, 1.0), t.shape)
                 for t in outs]
            g1 = A.as_arrays(self._backward(A.vjp, outs, xs, w), xs)
            g1b = A.as_arrays(self._backward(A.vjp, outs, xs, w), xs)
        g2 = A.as_arrays(self._backward(A.vjp, outs, xs, [2 * x for x in w]), xs)
        close = lambda a, b: _all_close(a, b, o.rtol, o.atol)  # noqa: E731
        found = {d.kind for d in self.report.diagnoses}
        if at_zero and close(g1, g2) and "ignores_grad_output" not in found:
            self.report.diagnoses.append(Diagnosis(
                "ignores_grad_output", "error",
                "backward ignores grad_output: it returns the same gradients for a "
                "grad_output w and for 2w, and nonzero ones for a zero grad_output. It must "
                "return grad_output times the local derivative.", {}))
        elif not close([2 * x for x in g1], g2) and not found & {"ignores_grad_output",
                                                                   "nonlinear_in_grad_output"}:
            self.report.diagnoses.append(Diagnosis(
                "nonlinear_in_grad_output", "warning",
                "backward is not linear in grad_output: backward(2w) != 2 backward(w) for a "
                "grad_output w.", {}))
        spread = A.max_difference(g1, g1b)
        if spread > o.nondet_tol and not found & {"nondeterministic_backward"}:
            self.report.diagnoses.append(Diagnosis(
                "nondeterministic_backward", "warning",
                f"two backward passes with the same random grad_output differ by up to "
                f"{spread:.3g} (nondet_tol={o.nondet_tol}); torch's check, which uses one-hot "
                f"grad_outputs, can miss this.", {"max_difference": spread}))

    def _undefined_grad_checks(self):
        """torch's check_undefined_grad, for what this engine can express: one output's
        gradient left undefined at a time (when there are several), and custom Functions
        that set_materialize_grads(False) called with no gradient at all."""
        if not self.opts.check_undefined_grad or not self.outputs:
            return
        xs = self.diff_inputs
        cases = [lambda k=k: A.vjp([t for i, t in enumerate(self.outputs) if i != k], xs,
                                   [np.zeros(t.shape) for i, t in enumerate(self.outputs)
                                    if i != k])
                 for k in range(len(self.outputs))] if len(self.outputs) > 1 else []
        cases += [lambda n=n: n.apply([None] * len(n._output_meta))
                  for n in self.nodes if not n._materialize_grads]
        for case in cases:
            try:
                grads = self._backward(case, catch=RuntimeError)
            except RuntimeError:
                self._fail("undefined_grad", _UNDEFINED)
                return
            if any(isinstance(g, Tensor) and not np.all(g._data == 0) for g in grads):
                self._fail("undefined_grad", _UNDEFINED_NONZERO)
                return

    # ---------------- helpers of the stages ----------------
    def _backward(self, fn, *args, catch=()):
        """Run an analytical computation; an error of the user's backward ends the checks
        (kept as report.exception unless the check has already failed, which torch would
        have reported first)."""
        try:
            return fn(*args)
        except catch:
            raise
        except Exception as e:  # noqa: BLE001 - the user's code may raise anything
            if not self.report.failures:
                self.report.exception = e
            raise _Stop from e

    def _fail(self, kind, message, output_index=None, input_index=None):
        self.report.failures.append(Failure(kind, message, output_index, input_index))

    def _pair(self, i, j, numerical, analytical):
        o = self.opts
        ok, max_abs, max_rel, violation = compare(numerical, analytical, o.atol, o.rtol)
        shapes = (tuple(self.diff_inputs[j].shape), tuple(self.outputs[i].shape))
        describe = lambda k: entry(k, numerical.shape, *shapes, numerical, analytical)  # noqa
        order = np.argsort(-violation, axis=None, kind="stable")
        n_diff = int((violation > 1).sum())
        return PairResult(
            i, j, self.out_positions[i], self.diff_positions[j], "full", ok, max_abs, max_rel,
            worst=describe(order[0]) if violation.size else None, numerical=numerical,
            analytical=analytical, differing=[describe(k) for k in order[:min(n_diff, MAX_DIFFERING)]],
            n_differing=n_diff)

    def _mismatch(self, pair, found_by=None):
        """torch's message for a Jacobian mismatch, with its dtypes."""
        out, x = self.outputs[pair.output_index], self.diff_inputs[pair.input_index]
        numerical = Tensor._wrap(pair.numerical.astype(out._data.dtype))
        analytical = Tensor._wrap(pair.analytical.astype(x._data.dtype))
        mode = "computed with forward mode " if pair.ad == "forward" else ""
        head = (f"Jacobian {mode}mismatch for output {pair.output_index:d} with respect to "
                f"input {pair.input_index:d}")
        if found_by:
            head += f" (found by {found_by})"
        return f"{head},\nnumerical:{numerical!r}\nanalytical:{analytical!r}\n"

    def _fast_mismatch(self, pair, worst):
        full = pair.recheck
        scalar = lambda v: Tensor._wrap(np.asarray(v))  # noqa: E731
        msg = (f"Jacobian mismatch for output {pair.output_index:d} with respect to input "
               f"{pair.input_index:d},\nnumerical:{scalar(worst['numerical'])!r}\n"
               f"analytical:{scalar(worst['analytical'])!r}\n\n"
               "The above quantities relating the numerical and analytical jacobians are "
               "computed \nin fast mode (v^T J u for random unit vectors u and v). Below, we "
               "recompute numerical and analytical jacobians in slow mode:\n\n"
               f"Numerical:\n {Tensor._wrap(full.numerical)!r}\n"
               f"Analytical:\n{Tensor._wrap(full.analytical)!r}\n\n"
               f"The max per-element difference (slow mode) is: {full.max_abs_error}.\n")
        if full.passed:
            msg += ("\nFast gradcheck failed but element-wise differences are small: the check "
                    "passes in slow mode (fast_mode=False).")
        return msg

    def _describe(self, values, labels):
        return [{"position": i, "label": label, "kind": type(v).__name__,
                 "shape": list(v.shape) if isinstance(v, Tensor) else None,
                 "dtype": v.dtype.name if isinstance(v, Tensor) else None,
                 "requires_grad": bool(isinstance(v, Tensor) and v.requires_grad)}
                for i, (v, label) in enumerate(zip(values, labels))]


# ====================================== helpers ======================================
def _verdict(report, raise_exception):
    if report.exception is not None:
        notes = [f"[{d.severity}] {d.kind}: {d.message}" for d in report.diagnoses
                 if d.severity != "info"]
        if notes and hasattr(report.exception, "add_note"):
            report.exception.add_note("gradtool diagnosis:\n  - " + "\n  - ".join(notes))
        raise report.exception
    if report.passed:
        return True
    if raise_exception:
        raise GradcheckError(report.message(), report)
    return False


def _check_inputs(inputs):
    """torch's checks of gradcheck's inputs; the positions of those that require grad."""
    positions = []
    for idx, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x.dtype.name != "float64":
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                          f"floating point or complex. This check will likely fail if all the "
                          f"inputs are not of double precision floating point or complex. ",
                          stacklevel=_caller_level())
        data = x._data
        if any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck "
                               f"only supports inputs that are non-overlapping to be able to "
                               f"compute the numerical gradients correctly. You should call "
                               f".contiguous on the input before passing it to gradcheck.")
        if not data.flags.writeable:
            raise RuntimeError(f"The {idx}th input's memory is read-only, so gradcheck cannot "
                               f"perturb it. You should call .clone() on the input before "
                               f"passing it to gradcheck.")
        positions.append(idx)
    if not positions:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    return positions


def _caller_level():
    """warnings' stacklevel of the first frame outside this package (the user's call)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith(__package__):
        frame, level = frame.f_back, level + 1
    return level


def _forward_ad_flags(check_forward_ad, check_backward_ad, check_batched_grad,
                      check_batched_forward_grad):
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")


def _first_order(func, inputs, grad_outputs):
    """torch's gradgradcheck function: (inputs..., grad_outputs...) -> the gradients of func
    at inputs weighted by grad_outputs, with a graph (create_graph=True)."""
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_go = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def first_order_gradients(*args):
        with grad_mode.enable_grad():  # it differentiates, whatever mode it is called in
            input_args = tuple(x.requires_grad_() if i in diff_in else x
                               for i, x in enumerate(args[:len(args) - n_out]))
            outputs = [o for o in N.as_tuple(func(*input_args))
                       if isinstance(o, Tensor) and o.requires_grad]
            gos = tuple(x.requires_grad_() if i in diff_go else x
                        for i, x in enumerate(args[len(args) - n_out:]))
            wrt = tuple(x for i, x in enumerate(input_args) if i in diff_in)
            grads = engine.grad(outputs, wrt, gos, create_graph=True, allow_unused=True)
            grads = tuple(g for g in grads if g is not None)
        _cut_once_differentiable(grads)
        return grads
    return first_order_gradients


def _cut_once_differentiable(grads):
    """torch hangs a once_differentiable backward's results on an error node whose inputs are
    detached copies: autograd.grad finds no path to the real inputs (zero gradients; only
    .backward() reaching the copies raises). gradtool's error node is wired to the incoming
    gradients instead, so autograd.grad raises; cut those edges to get torch's verdict (a
    Jacobian mismatch, all zero) for gradgradcheck."""
    roots = [g.grad_fn for g in grads if g.grad_fn is not None]
    for node in topological_order(roots):
        if isinstance(node, DelayedError):
            node.next_functions = tuple((None, 0) for _ in node.next_functions)


def _random_grad_output(out):
    dtype = out._data.dtype if out.is_floating_point() else np.dtype(np.float64)
    values = generator().uniform(-1.0, 1.0, out.shape).astype(dtype)
    return Tensor._wrap(values).requires_grad_()


def _all_close(xs, ys, rtol, atol):
    """np.allclose(x, y) for every pair (its rule: |x - y| <= atol + rtol * |y| where y is
    finite, else x == y), without its overhead, which this small check would pay per call."""
    with np.errstate(invalid="ignore"):  # inf - inf
        return all(((np.abs(x - y) <= atol + rtol * np.abs(y)) & np.isfinite(y) | (x == y))
                   .all() for x, y in zip(xs, ys))


@functools.lru_cache(maxsize=16)
def _cached_directions(in_sizes, out_sizes, count):
    return _draw_directions(in_sizes, out_sizes, count)


def _fast_directions(in_sizes, out_sizes, count):
    """Fast mode's random directions for inputs and outputs of these sizes: per projection,
    (a unit u per input, a unit v per output). An output of one element has one unit
    direction up to sign: its v is 1 in every projection (torch's v is positive too), so
    its v^T J is the same in all of them and one backward serves them all. The directions
    are fixed by FAST_SEED, so for small sizes they are drawn once and kept (drawing them
    costs as much as a backward pass of a small function)."""
    small = (sum(in_sizes) + sum(out_sizes)) * count <= _CACHED_ELEMENTS
    return (_cached_directions if small else _draw_directions)(in_sizes, out_sizes, count)


def _draw_directions(in_sizes, out_sizes, count):
    rng = np.random.default_rng(FAST_SEED)
    directions = []
    for _ in range(count):
        us = tuple(_unit(rng.standard_normal(n)) for n in in_sizes)
        vs = tuple(_ONE if n == 1 else _unit(rng.standard_normal(n)) for n in out_sizes)
        for a in us + vs:
            a.flags.writeable = False  # shared by every check of these sizes
        directions.append((us, vs))
    return tuple(directions)


def _unit(v):
    norm = np.linalg.norm(v)
    return v / norm if norm else v
