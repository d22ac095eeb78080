"""The --json documents, and the one encoder every JSON gradtool writes goes through.

Versioned: `schema` names the document type and its version (README, "JSON"); fields are only
ever added within a version. Version 2: diagnostics of inspect and gradcheck share one shape
({kind, severity, message, advice, location, details}, snake_case kinds); a target that raises
is reported in its place ({..., "error": {...}}); gradcheck targets carry "reports", one per
order checked; pairs say how many differing entries they leave out. gradcheck version 3: each
target has a "reference" section (null without a reference check; see reference_dict) and
tensors carry their "device". A run over several files is one gradtool.files/1 document: each
file's own document (as a run of that file alone writes it, plus "error": null or the file's
error), and a summary (files_document)."""
import dataclasses
import functools
import json
import math
import operator

from ..adapters import device_name, dtype_name
from ..adapters.records import SavedInfo
from ..engine.frames import location, site_location

INSPECT_SCHEMA = "gradtool.inspect/2"
GRADCHECK_SCHEMA = "gradtool.gradcheck/3"
AGAINST_SCHEMA = "gradtool.against/1"
FILES_SCHEMA = "gradtool.files/1"  # a run over several files: their documents and a summary
SMALL_JACOBIAN = 400   # entries; larger Jacobians go to JSON as their differing entries only


def clean(value):
    """Anything gradtool reports as strict JSON values: dataclasses as dicts, numpy arrays as
    lists, numpy scalars as numbers, NaN and Inf as the strings "nan", "inf", "-inf"."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)  # "nan", "inf" or "-inf"
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return clean(dataclasses.asdict(value))
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars
        return clean(value.tolist())
    return value


class OneLineEach:
    """A long list in a document (a graph's nodes): `line(item)`, the JSON text of an element
    on one line, for each of `items`, written as it is made, so that a 100,000-node graph is
    written in seconds and never held whole, as values or as text."""

    def __init__(self, items, line):
        self.items, self.line = items, line


def chunks(document):
    """The document's JSON text in pieces, written as they come (never one string): indented
    by two spaces as json's `indent=2`, except a OneLineEach list, one element per line.
    `document` is one of the *_document()s below: clean() values (strict JSON, so encoding
    cannot fail half-way), and the OneLineEach lines (one_line() cleans what they hold)."""
    return _indented(document, "\n")


def _indented(value, newline):
    inner = newline + "  "
    if isinstance(value, dict) and value:
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + inner + _ONE_LINE.encode(key) + ": "
            yield from _indented(item, inner)
        yield newline + "}"
    elif isinstance(value, (list, tuple)) and value:
        yield "["
        for i, item in enumerate(value):
            yield "," if i else ""
            yield inner
            yield from _indented(item, inner)
        yield newline + "]"
    elif isinstance(value, OneLineEach):
        first = True
        for item in value.items:
            yield ("[" if first else ",") + inner + value.line(item)
            first = False
        yield "[]" if first else newline + "]"
    else:
        yield _ONE_LINE.encode(value)


# the C encoder (json's Python encoder, which indent= needs, is 15x slower); default= turns
# numpy values and dataclasses into JSON values, as clean() does
_ONE_LINE = json.JSONEncoder(allow_nan=False, separators=(", ", ": "), default=clean)


def one_line(value):
    """`value` as JSON on one line, as clean() would make it."""
    try:
        return _ONE_LINE.encode(value)
    except ValueError:  # a NaN or Inf inside: the strings clean() makes of them
        return _ONE_LINE.encode(clean(value))


def _tensor_summary(name, value):
    if hasattr(value, "shape"):
        fn = value.grad_fn
        return {"name": name, "shape": list(value.shape), "dtype": dtype_name(value),
                "device": device_name(value),
                "requires_grad": value.requires_grad,
                "grad_fn": fn.name() if fn is not None else None}
    return {"name": name, "value": repr(value)}


def snapshot_dict(snap):
    """The graph; its nodes made one at a time as they are written (OneLineEach)."""
    return {"nodes": OneLineEach(snap.nodes, node_line), "outputs": snap.outputs,
            "saved_total_bytes": snap.saved_total_bytes}


def node_line(n):
    """One node's JSON text, on one line."""
    head = one_line({
        "id": n.id, "name": n.name, "kind": n.kind, "label": n.label, "module": n.module,
        "site": n.site, "problem": n.problem,
        "parents": n.n_parents,
        "next_functions": [{"node": c, "output_nr": nr} for c, nr in n.edges],
        "outputs": {str(k): {"shape": v[0], "dtype": v[1]} for k, v in sorted(n.outputs.items())},
    })
    saved = ", ".join([_saved_line(_saved_values(s)) if s.is_tensor else
                       _constant_saved_line(_saved_values(s)) for s in n.saved])
    leaf = "null" if n.leaf is None else one_line(dataclasses.asdict(n.leaf))
    return f'{head[:-1]}, "saved": [{saved}], "leaf": {leaf}}}'


_SAVED_FIELDS = tuple(f.name for f in dataclasses.fields(SavedInfo) if f.name != "array_id")
_SAVED_KEYS = _SAVED_FIELDS + ("modified",)
_saved_values = operator.attrgetter(*_SAVED_KEYS)


def _saved_line(values):
    return one_line(dict(zip(_SAVED_KEYS, values)))


# A non-tensor saved value (a dim, a scalar, None) recurs at node after node: its text is made
# once. (Tensors' are not: their floats may be 0.0 and -0.0, equal as keys, not as text.)
_constant_saved_line = functools.lru_cache(maxsize=1024)(_saved_line)


def diagnosis_dict(d):
    return {"kind": d.kind, "severity": d.severity, "message": d.message,
            "advice": d.advice, "location": d.location, "details": d.details}


def _shape_fields(shape):
    """"shape": the default --shape; "shapes": the per-parameter ones, when given."""
    named = dict(getattr(shape, "named", ()))
    return {"shape": list(shape), **({"shapes": {n: list(s) for n, s in named.items()}}
                                     if named else {})}


def target_head(target):
    return {"name": target.name, "kind": target.kind,
            "location": location(target.filename, target.lineno, relative=False)}


def error_dict(error):
    """A target that raised (a UserCodeError): the paragraph, the user's line and frames."""
    return {"message": str(error),
            "location": site_location(getattr(error, "location", None), relative=False),
            "traceback": getattr(error, "details", "") or None}


def inspect_document(file_spec, seed, shape, results):
    """results: per target, a Capture or a TargetError."""
    return _document(INSPECT_SCHEMA, file_spec, seed, shape, results, {}, lambda c: {
        "inputs": [_tensor_summary(n, v) for n, v in c.inputs],
        "outputs": [_tensor_summary(o.name or f"output {o.index}", t)
                    for o, t in zip(c.snapshot.outputs, c.outputs)],
        "graph": snapshot_dict(c.snapshot),
        "backward_error": c.backward_error,
        "diagnostics": [diagnosis_dict(d) for d in c.diagnostics]})


def _document(schema, file_spec, seed, shape, results, failed, fields, verdict=None, **head):
    """A command's document: per target its head, then `fields(result)` (`failed` and its
    error for a target that raised); `verdict` names the field that is true when it is true
    of every target."""
    targets = [{**target_head(r.target), **failed, "error": error_dict(r.error)}
               if hasattr(r, "error") else {**target_head(r.target), **fields(r), "error": None}
               for r in results]
    verdicts = {verdict: all(t[verdict] for t in targets)} if verdict else {}
    return clean({"schema": schema, "file": file_spec, "seed": seed, **_shape_fields(shape),
                  **head, **verdicts, "targets": targets})


def pair_dict(pair, report):
    d = {k: getattr(pair, k) for k in (
        "output_index", "input_index", "output_position", "input_position", "mode", "ad",
        "passed", "max_abs_error", "max_rel_error", "worst", "n_differing", "differing",
        "projections")}
    # names as the text report shows them: the user's parameter, gradgradcheck's gradient
    d["input_name"] = report.input_label(pair)
    d["output_name"] = report.output_label(pair)
    d["differing_omitted"] = pair.n_differing - len(pair.differing)
    if pair.numerical is not None:
        small = pair.numerical.size <= SMALL_JACOBIAN
        d["jacobian_shape"] = list(pair.numerical.shape)
        d["numerical"] = pair.numerical if small else None
        d["analytical"] = pair.analytical if small else None
    d["recheck"] = None if pair.recheck is None else pair_dict(pair.recheck, report)
    return clean(d)


def gradcheck_report_dict(report):
    """A GradcheckReport as JSON values."""
    return clean({
        "passed": report.passed, "order": report.order, "mode": report.mode,
        "options": report.options, "inputs": report.inputs, "outputs": report.outputs,
        "pairs": [pair_dict(p, report) for p in report.pairs],
        "failures": [dataclasses.asdict(f) for f in report.failures],
        "diagnoses": [diagnosis_dict(d) for d in report.diagnoses],
        "evaluations": report.evaluations,
        "declared": report.declared,
        "localized": _localized_dict(report.localized),
        # a backward that raised: with the user's line when the CLI found it
        "error": None if report.exception is None else
        str(getattr(report, "user_error", None) or describe(report.exception)),
    })


def reference_dict(report):
    """A ReferenceReport as JSON values: per tensor and dtype, the errors, their ratio, the
    tolerance, the worst element and the verdict."""
    return clean({
        "passed": report.passed, "target": report.target, "reference": report.reference,
        "dtypes": report.dtypes, "factor": report.factor, "evaluations": report.evaluations,
        "tensors": [{"name": c.name, "dtype": c.dtype, "shape": list(c.shape),
                     "max_abs_error": c.max_abs_error, "reference_error": c.reference_error,
                     "ratio": c.ratio, "tolerance": c.tolerance, "worst": c.worst,
                     "passed": c.passed} for c in report.comparisons]})


def _localized_dict(located):
    """The first wrong custom Function node (node null: each one passed on its own)."""
    if located is None:
        return None
    return {"node": located.node, "name": located.name, "function": located.function,
            "location": located.location, "module": located.module,
            "checked": located.checked,
            "report": None if located.report is None else gradcheck_report_dict(located.report)}


def describe(exc):
    from ..capture.loader import describe_exception
    return describe_exception(exc)


def gradcheck_document(file_spec, seed, shape, results):
    """results: per target, a TargetCheck (its reports, one per order) or a
    TargetError."""
    return _document(GRADCHECK_SCHEMA, file_spec, seed, shape, results, {"passed": False},
                     lambda r: {
                         "input_names": r.input_names, "passed": r.passed,
                         "reports": [gradcheck_report_dict(rep) for rep in r.reports],
                         "reference": reference_dict(r.reference) if r.reference is not None
                         else {"passed": False, "error": error_dict(r.reference_error)}
                         if r.reference_error is not None else None},
                     "passed")


def against_document(file_spec, seed, shape, order, results):
    """results: per target, an AgainstResult (checks/against.py) or a TargetError."""
    return _document(AGAINST_SCHEMA, file_spec, seed, shape, results, {"agree": False},
                     lambda r: {"agree": r.passed, "compared": r.compared,
                                "differences": [dataclasses.asdict(d) for d in r.differences]},
                     "agree", order=order, engines=["gradtool", "torch"])


def file_error_document(kind, file_spec, seed, shape, order, message, location=None,
                        traceback=None):
    """The document of a file that could not be run (in a run over several files): the
    head of its command's document, no targets, and the file's error."""
    if kind == "against":
        document = against_document(file_spec, seed, shape, order, [])
        document["agree"] = False
    elif kind == "inspect":
        document = inspect_document(file_spec, seed, shape, [])
    else:
        document = gradcheck_document(file_spec, seed, shape, [])
        document["passed"] = False
    return {**document, "error": clean({"message": message, "location": location,
                                        "traceback": traceback or None})}


def files_document(command, documents, skipped, summary):
    """A run over several files: `documents`, each file's own (in the order run), the files
    of folders that had no targets (`skipped`), and the totals (`summary`: files, targets,
    passed, failed, errors, skipped, interrupted, exit_code)."""
    return clean({"schema": FILES_SCHEMA, "command": command,
                  "passed": summary["exit_code"] == 0 and not summary["interrupted"],
                  "summary": summary, "documents": documents, "skipped": skipped})
