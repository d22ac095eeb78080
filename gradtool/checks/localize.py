"""Where a gradient goes wrong: each custom Function call of a target's forward checked on its
own, at the inputs it received there, with the target's tolerances; the first wrong node in
backward order is the one to blame. Also the central differences a target is checked against
when its Functions declare surrogate gradients (`@gradtool.surrogate`)."""
import collections
import dataclasses
from typing import Optional

import gradtool.adapters as engines

from ..adapters.trace import detached_copy
from ..capture.loader import parameter_names, tensor_slots, user_error
from ..capture.specs import declared_surrogate
from ..engine.frames import site_location
from .hazards import custom_op_name, engines_own
from .gradcheck import gradcheck_report
from .result import Diagnosis, GradcheckReport


# What a node's own check may find that is no wrong formula of its backward: the target's
# headline is then that finding, with this advice (None: the kind's own).
NOT_THE_FORMULA = {
    "surrogate_gradient": "declare it with @gradtool.surrogate(...) if the surrogate is meant; "
                          "fix its backward if it is not",
    "precision": None}


@dataclasses.dataclass
class Localized:
    """The first custom Function node whose own check fails (node None: every one passed)."""
    node: Optional[str]            # snapshot id, e.g. "n7"
    name: Optional[str]            # the node's name, e.g. SoftsignBackward
    function: Optional[str]        # the Function class
    location: Optional[str]        # file:line of the call in the user's code
    module: Optional[str]          # the module call it sits in, e.g. model.3
    report: Optional[GradcheckReport]  # the node's own check
    checked: int                   # how many calls were checked
    called: Optional[str] = None   # what the user called: Name.apply, or the op (mul)
    raised: Optional[str] = None   # why its check could not run: what replaying it raised

    def as_diagnosis(self):
        """The target's diagnosis: the node to blame, or that every custom node passes."""
        if self.node is None:
            return Diagnosis(
                "custom_functions_pass", "info",
                f"each of the {self.checked} node(s) checked passes when checked on its own at "
                f"the inputs it received: the error is in how they are composed, or in a "
                f"built-in op used outside its domain (a kink, a NaN).",
                {"checked": self.checked})
        reason = self.reason()
        where = f" at {self.location}" if self.location else ""
        inside = f" in {self.module}" if self.module else ""
        details = {"node": self.node, "function": self.function, "module": self.module,
                   "checked": self.checked}
        why = self._first_error()
        if why is not None and why.kind in NOT_THE_FORMULA:
            # a deliberate surrogate, or rounding: the node's own reason is the target's
            return Diagnosis(
                why.kind, "error",
                f"{self.called}{where}{inside} ({self.node} {self.name}), checked on its own "
                f"at the inputs it received: {why.message}", {**why.details, **details},
                NOT_THE_FORMULA[why.kind] or why.advice, why.location or self.location)
        return Diagnosis(
            "wrong_node", "error",
            f"the first wrong node in backward order is {self.node} {self.name}: "
            f"{self.called}{where}{inside}, checked on its own at the inputs it "
            f"received, fails" + (f": {reason}" if reason else "."),
            details, location=self.location)

    def reason(self):
        """Why the node's own check fails: its first error, or what its replay or its
        backward raised ("" when its check says no more)."""
        if self.raised:
            return self.raised
        why = self._first_error()
        if why is not None:
            return f"{why.kind}: {why.message}"
        if self.report.exception is not None:
            return user_error(self.report.exception, "its backward").args[0]
        return ""

    def _first_error(self):
        return None if self.report is None else next(
            (d for d in self.report.diagnoses if d.severity == "error"), None)

    def wrong_inputs(self):
        """The labels of the inputs whose gradient its own check finds wrong."""
        pairs = self.report.pairs if self.report is not None else ()
        return list(dict.fromkeys(self.report.input_label(p) for p in pairs
                                  if not (p.recheck or p).passed))


def localize(capture, every_node=False, **options):
    """Localized for a captured target: its custom Function calls in backward order (with
    `every_node`, its built-in ops' nodes too: `--localize all`, which needs a capture that
    recorded them), each gradchecked on its own (gradcheck_report's `options`) until one
    fails. None when there is nothing to check."""
    calls = ordered_calls(capture, every_node)
    if not calls:
        return None
    for n, (node_id, call) in enumerate(calls, 1):
        raised = None
        try:
            report = check_call(call, **options)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the replay raised: that node's finding
            report, raised = None, user_error(e, f"replaying {_called(call)}").args[0]
        if raised is not None or (report is not None and not report.passed):
            info = capture.snapshot.by_id[node_id]
            module = info.module_path[-1][1] if info.module_path else info.module
            function = call.cls.__name__ if hasattr(call, "cls") else call.name
            located = Localized(node_id, info.name, function, site_location(call.site), module,
                                report, n, _called(call), raised)
            why = located._first_error()
            wrong = located.wrong_inputs()
            info.problem = (f"✗ {located.function}: {why.kind} (checked on its own)"
                            if why is not None and why.kind in NOT_THE_FORMULA else
                            f"✗ {located.function}.backward is wrong" +
                            (f" for {', '.join(wrong)}" if wrong else "") + " (checked on its own)")
            capture.localized = located  # (the explorer's panel of the node shows its check)
            return located
    return Localized(None, None, None, None, None, None, len(calls))


def ordered_calls(capture, every_node=False):
    """(node id, FunctionCall or OpCall) for each recorded custom Function call (and with
    `every_node` each built-in op), in backward order."""
    ids = getattr(capture.snapshot, "node_ids", {})
    E = engines.current()
    recorded = [c for c in capture.trace.function_calls if not engines_own(E, c.cls)] + (
        list(capture.trace.op_calls) if every_node else [])
    calls = [(ids[c.node], c) for c in recorded if c.node in ids]
    return sorted(calls, key=lambda item: int(item[0][1:]))


def _called(call):
    """What the user called: a Function's `Name.apply`, or the op's name."""
    if not hasattr(call, "cls"):
        return call.name
    op = custom_op_name(call.cls)
    return f"custom op {op}" if op else f"{call.cls.__name__}.apply"


def check_op(call, **options):
    """gradcheck_report of one built-in op on its own, at copies of the inputs it received.
    None when no input needs a gradient."""
    inputs = tuple(detached_copy(t) for t in call.inputs)
    if not any(t.requires_grad and (t.is_floating_point() or t.is_complex()) for t in inputs):
        return None
    return gradcheck_report(lambda *tensors: call.replay(tensors), inputs,
                            names=[f"input {i}" for i in range(len(inputs))], **options)


def check_call(call, **options):
    """gradcheck_report of one Function call (or, for an OpCall, one op) on its own, at copies
    of the inputs it received, against its declared surrogate if it has one. None when no
    input needs a gradient."""
    if not hasattr(call, "cls"):
        return check_op(call, **options)
    E = engines.of(list(call.args) + list(call.kwargs.values()))
    slots, arguments = tensor_slots(E.is_tensor, call.args, call.kwargs)
    inputs = tuple(detached_copy(call.args[key] if where == "arg" else call.kwargs[key])
                   for where, key, _ in slots)
    if not any(t.requires_grad and (t.is_floating_point() or t.is_complex()) for t in inputs):
        return None

    def apply(*tensors):
        args, kwargs = arguments(tensors)
        return call.cls.apply(*args, **kwargs)
    if _in_place(apply, inputs):
        # ctx.mark_dirty on a leaf that requires grad is refused (by torch too): an in-place
        # Function is checked as torch's gradcheck users check one, on a clone of its inputs
        in_place = apply

        def apply(*tensors):
            return in_place(*(t.clone() for t in tensors))
    declared = declared_surrogate(call.cls)
    numerical = None
    if declared is not None:
        local = declared.local(call.cls.apply)

        def numerical(*tensors):
            args, kwargs = arguments(tensors)
            return local(*args, **kwargs)
    names = parameter_names(call.cls)
    labels = [names[key] if where == "arg" and key < len(names) else str(key)
              for where, key, _ in slots]
    return gradcheck_report(apply, inputs, names=labels, function=call.cls,
                            numerical_func=numerical, declared=declared, **options)


def declared_numerical(func, calls):
    """(numerical func, description) when some recorded Function calls declare surrogates:
    func with each such call replaced by its surrogate linearised at the inputs it received,
    f(x0) + s(x) - s(x0), so central differences give the gradient the author meant. (None,
    None) when nothing is declared."""
    declared = collections.defaultdict(list)
    for call in calls:
        if declared_surrogate(call.cls) is not None:
            declared[call.cls].append(call)
    if not declared:
        return None, None

    def numerical(*tensors):
        originals = {cls: vars(cls).get("apply") for cls in declared}
        seen = collections.Counter()

        def linearised(cls):
            apply = cls.apply
            local = declared_surrogate(cls).local(apply)

            def apply_declared(*args, **kwargs):
                k, seen[cls] = seen[cls], seen[cls] + 1
                if k >= len(declared[cls]):  # the forward took another path: the real one
                    return apply(*args, **kwargs)
                c = declared[cls][k]
                return _add(apply(*c.args, **c.kwargs), local(*args, **kwargs),
                            local(*c.args, **c.kwargs))
            return staticmethod(apply_declared)
        try:
            for cls in declared:
                cls.apply = linearised(cls)
            return func(*tensors)
        finally:
            for cls, original in originals.items():
                if original is None:
                    del cls.apply
                else:
                    cls.apply = original
    described = "; ".join(f"{cls.__name__}: {declared_surrogate(cls).describe()}"
                          for cls in declared)
    return numerical, described


def _add(base, at, at_base):
    if isinstance(base, tuple):
        return tuple(b + (x - y) for b, x, y in zip(base, at, at_base))
    return base + (at - at_base)


def _in_place(apply, inputs):
    """Whether the Function returns one of its inputs itself: modified in place and marked
    dirty (run once on clones, which are not leaves, so that it may)."""
    clones = tuple(t.clone() for t in inputs)
    outputs = apply(*clones)
    return any(o is c for o in (outputs if isinstance(outputs, tuple) else (outputs,))
               for c in clones)

