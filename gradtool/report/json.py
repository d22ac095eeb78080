"""The --json documents. Versioned: `schema` names the document type and its version; fields
are only ever added within a version."""
import dataclasses
import json
import math

INSPECT_SCHEMA = "gradtool.inspect/1"
GRADCHECK_SCHEMA = "gradtool.gradcheck/1"


def clean(value):
    """JSON has no NaN or Inf: they become the strings "nan", "inf", "-inf"."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return clean(dataclasses.asdict(value))
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return clean(value.item())
    return value


def _tensor_summary(name, value):
    if hasattr(value, "shape"):
        fn = value.grad_fn
        return {"name": name, "shape": list(value.shape), "dtype": value.dtype.name,
                "requires_grad": value.requires_grad,
                "grad_fn": fn.name() if fn is not None else None}
    return {"name": name, "value": repr(value)}


def snapshot_dict(snap):
    nodes = []
    for n in snap.nodes:
        nodes.append({
            "id": n.id, "name": n.name, "kind": n.kind, "label": n.label, "module": n.module,
            "site": n.site,
            "parents": n.n_parents,
            "next_functions": [{"node": c, "output_nr": nr} for c, nr in n.edges],
            "outputs": {str(k): {"shape": list(v[0]), "dtype": v[1]}
                        for k, v in sorted(n.outputs.items())},
            "saved": [_saved_dict(s) for s in n.saved],
            "leaf": clean(n.leaf) if n.leaf else None,
        })
    return {"nodes": nodes, "outputs": clean(snap.outputs),
            "saved_total_bytes": snap.saved_total_bytes}


def _saved_dict(s):
    d = clean(s)
    d.pop("array_id", None)
    d["modified"] = s.modified
    return d


def inspect_document(file_spec, seed, shape, captures):
    return clean({
        "schema": INSPECT_SCHEMA,
        "file": file_spec, "seed": seed, "shape": list(shape),
        "targets": [{
            "name": c.target.name, "kind": c.target.kind,
            "location": f"{c.target.filename}:{c.target.lineno}",
            "inputs": [_tensor_summary(n, v) for n, v in c.inputs],
            "outputs": [_tensor_summary(o.name or f"output {o.index}", t)
                        for o, t in zip(c.snapshot.outputs, c.outputs)],
            "graph": snapshot_dict(c.snapshot),
            "backward_error": c.backward_error,
            "diagnostics": [d.to_dict() for d in c.diagnostics],
        } for c in captures],
    })


def dumps(document):
    return json.dumps(document, indent=2, allow_nan=False)


def gradcheck_document(file_spec, seed, shape, results):
    return clean({
        "schema": GRADCHECK_SCHEMA,
        "file": file_spec, "seed": seed, "shape": list(shape),
        "passed": all(r.passed for _, r in results),
        "targets": [{
            "name": t.name, "kind": t.kind, "location": f"{t.filename}:{t.lineno}",
            "input_names": getattr(r, "input_names", []),
            "passed": r.passed,
            "report": r.to_dict(),
        } for t, r in results],
    })
