"""Custom-Function hazards that torch never warns about, found by looking at the graph.

Each custom Function's backward is called directly (node.apply, with grads we choose) so a
finding names the Function and the input, not just "the Jacobian is wrong somewhere"."""
import inspect

import numpy as np

from ..engine.frames import is_gradtool, site_location
from .result import Diagnosis

_PROBE_SEED = 20240


def custom_nodes(E, outputs):
    """The custom Function nodes (ctx objects) in the graph behind `outputs` that the user
    wrote (not the engine's own, as torch.utils.checkpoint's)."""
    roots = [o.grad_fn for o in outputs if E.is_tensor(o) and o.grad_fn is not None]
    return [n for n in E.custom_nodes(roots) if not engines_own(E, n._forward_cls)]


def engines_own(E, cls):
    """Whether a Function's backward is the engine's own code (torch.utils.checkpoint's
    CheckpointFunction, gradtool's): the user did not write it and cannot fix it."""
    if custom_op_name(cls) is not None:  # a custom op's: its backward is the user's
        return False
    code = getattr(inspect.unwrap(cls.backward), "__code__", None)
    filename = code.co_filename if code is not None else ""
    return is_gradtool(filename) or filename.startswith(E.own_dirs)


def function_name(node):
    return node._forward_cls.__name__


def custom_op_name(cls):
    """The "ns::op" of the custom op whose generated Function `cls` is, or None."""
    from ..adapters import custom_op_of
    op = custom_op_of(cls)
    return op._qualname if op is not None else None


def _forward_of(node):
    """Where a Function's forward is, as a message names it (a custom op's setup_context)."""
    op = custom_op_name(node._forward_cls)
    return f"custom op {op}'s setup_context" if op else f"{function_name(node)}.forward"


def stored_on_ctx(E, node):
    """Diagnoses for tensors kept as ctx attributes instead of through save_for_backward."""
    names = [name for name, value in E.ctx_attributes(node).items()
             if _holds_tensor(E, value)]
    if not names:
        return []
    attrs = ", ".join(f"ctx.{n}" for n in names)
    return [Diagnosis(
        "ctx_stored_tensor", "warning",
        f"{_forward_of(node)} keeps tensors on ctx directly ({attrs}) instead of "
        f"ctx.save_for_backward(...): an in-place change to them before backward then goes "
        f"unnoticed (saved tensors raise torch's 'modified by an inplace operation' error), "
        f"they are not freed after backward, and an output kept this way holds its own graph "
        f"alive.", {"function": function_name(node), "attributes": names},
        location=_setup_context_site(node))]


def _setup_context_site(node):
    """The line of a custom op's setup_context (where it stores on ctx), or None."""
    from ..adapters import custom_op_of
    op = custom_op_of(node._forward_cls)
    fn = inspect.unwrap(op._setup_context_fn) if op is not None and \
        op._setup_context_fn is not None else None
    code = getattr(fn, "__code__", None)
    return site_location((code.co_filename, code.co_firstlineno)) if code else None


def _holds_tensor(E, value):
    """A tensor, or a list, tuple or dict with a tensor among its items."""
    items = value.values() if isinstance(value, dict) else \
        value if isinstance(value, (list, tuple)) else (value,)
    return any(E.is_tensor(v) for v in items)


def _random_grads(E, node, rng, scale=1.0, requires_grad=False):
    grads = []
    for meta in E.grad_output_meta(node):
        if meta is None or np.dtype(meta[1]).kind != "f":
            grads.append(None)
            continue
        g = E.wrap((scale * rng.standard_normal(meta[0])).astype(meta[1]), like=meta[2])
        grads.append(g.requires_grad_() if requires_grad else g)
    return grads


def _sums_to(shape, grad_shape):
    """Whether the engine can sum a gradient of grad_shape down to shape (broadcasting)."""
    if len(shape) > len(grad_shape):
        return False
    return all(s == 1 or s == g for s, g in zip(reversed(shape), reversed(grad_shape)))


def _arrays(E, result):
    # (float64, or complex128 for complex gradients)
    return [None if not E.is_tensor(g) else np.asarray(
        E.array(g), dtype=np.result_type(E.numpy_dtype(g), np.float64)) for g in result]


def probe_backward(E, node, atol, rtol, nondet_tol):
    """Call the Function's backward with random grad_outputs g (twice), 2g and 0, and check
    what it returns: a gradient (not None) for every input that needs one, of the input's
    shape and dtype, linear in grad_output, and the same twice. Diagnoses, one per finding."""
    name = function_name(node)
    rng = np.random.default_rng(_PROBE_SEED)
    g = _random_grads(E, node, rng)
    state = _backward_state(E, node)
    versions = {label: E.version(t) for label, t in state}
    try:
        with E.no_grad():
            r1 = E.call_backward(node, g)
            changed = [(label, t) for label, t in state if E.version(t) != versions[label]]
            r1b = E.call_backward(node, g)
            r2 = E.call_backward(node, [None if x is None else x * 2 for x in g])
            r0 = E.call_backward(node, [None if x is None else x * 0 for x in g])
    except Exception:  # the check itself will meet (and report) whatever went wrong here
        return []
    if not all(r is None or E.is_tensor(r) for r in r1 + r1b + r2 + r0):
        return []  # not gradients at all (an array, a string): the engine says so
    found = [_not_reentrant(E, name, changed)] if changed else []
    for (child, _), i, meta, res in zip(node.next_functions, E.edge_positions(node),
                                        E.edge_meta(node), r1):
        if child is None:
            continue  # (i: edges are tensor arguments, named by their argument)
        where = {"function": name, "input": i}
        if res is None:
            found.append(Diagnosis(
                "grad_none_for_input", "warning",
                f"{name}.backward returns None for input {i}, which requires grad: the engine "
                f"treats it as a zero gradient, which is right only if the outputs do not "
                f"depend on that input.", where))
            continue
        shape, dtype = meta
        if res.shape != tuple(shape):
            summed = _sums_to(tuple(shape), tuple(res.shape))
            found.append(Diagnosis(
                "grad_wrong_shape", "warning" if summed else "error",
                f"{name}.backward returns a gradient of shape {list(res.shape)} for input {i} "
                f"of shape {list(shape)}: " + (
                    "the engine sums it down to the input's shape (as torch does), which hides "
                    "a backward that broadcasts by mistake." if summed else
                    "the engine rejects it."),
                {**where, "shape": list(res.shape), "expected": list(shape)}))
        if E.dtype_name(res) != np.dtype(dtype).name:
            found.append(Diagnosis(
                "grad_wrong_dtype", "warning",
                f"{name}.backward returns a {E.dtype_name(res)} gradient for input {i}, which "
                f"is {np.dtype(dtype)}: the engine casts it silently (as torch does), and any "
                f"precision lost on the way is lost for good.",
                {**where, "dtype": E.dtype_name(res), "expected": str(np.dtype(dtype))}))
    found += _linearity(name, *(_arrays(E, r) for r in (r1, r1b, r2, r0)),
                        atol, rtol, nondet_tol)
    return found


def _backward_state(E, node):
    """(label, tensor) for what backward may read: ctx attributes and saved tensors."""
    state = []
    for attr, value in E.ctx_attributes(node).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        state += [(f"ctx.{attr}" + (f"[{k}]" if len(values) > 1 else ""), v)
                  for k, v in enumerate(values) if E.is_tensor(v)]
    try:
        saved = node.saved_tensors
    except Exception:  # noqa: BLE001 - freed or modified: the check reports that itself
        saved = ()
    state += [(f"saved_tensors[{k}]", t) for k, t in enumerate(saved) if E.is_tensor(t)]
    return state


def _not_reentrant(E, name, changed):
    """backward modified what it reads in place: a second backward sees other values."""
    labels = ", ".join(label for label, _ in changed)
    site = next((s for s in (E.inplace_site(t) for _, t in changed) if s is not None), None)
    where = site_location(site)
    return Diagnosis(
        "backward_not_reentrant", "warning",
        f"{name}.backward modifies {labels} in place{f' at {where}' if where else ''}: the "
        f"first backward is right, every later one (gradcheck's, a retain_graph=True "
        f"backward, a second loss) starts from the modified value.",
        {"function": name, "modified": [label for label, _ in changed]},
        advice="compute out of place (grad = grad * grad_output, not grad *= grad_output)",
        location=where)


def _linearity(name, r1, r1b, r2, r0, atol, rtol, nondet_tol):
    pairs = [(a, b, c, d) for a, b, c, d in zip(r1, r1b, r2, r0) if a is not None]
    if not pairs:
        return []
    close = lambda x, y: x.shape == y.shape and np.allclose(x, y, rtol, atol)  # noqa: E731
    nonzero_at_zero = any(np.any(d != 0) for *_, d in pairs)
    ignores = all(close(a, c) for a, _, c, _ in pairs) and any(np.any(a != 0) for a, *_ in pairs)
    found = []
    if ignores:
        found.append(Diagnosis(
            "ignores_grad_output", "error",
            f"{name}.backward ignores grad_output: it returns the same gradients for "
            f"grad_output g and 2g (and nonzero ones for g = 0). It must return "
            f"grad_output times the local derivative (the vector-Jacobian product).",
            {"function": name}))
    elif nonzero_at_zero or not all(close(2 * a, c) for a, _, c, _ in pairs):
        found.append(Diagnosis(
            "nonlinear_in_grad_output", "warning",
            f"{name}.backward is not linear in grad_output: backward(2g) != 2 backward(g)"
            + (" and backward(0) != 0" if nonzero_at_zero else "") + ". A vector-Jacobian "
            "product is linear in the vector.", {"function": name}))
    spread = max(float(np.max(np.abs(a - b), initial=0.0)) for a, b, *_ in pairs)
    if spread > nondet_tol:
        found.append(Diagnosis(
            "nondeterministic_backward", "warning",
            f"{name}.backward returns different gradients for the same grad_output (they "
            f"differ by up to {spread:.3g}; nondet_tol is {nondet_tol}).",
            {"function": name, "max_difference": spread}))
    return found


def modified_inputs(E, inputs, versions_before, nodes):
    """Diagnoses for inputs whose version moved while func ran: modified in place, which no
    Function may do to a leaf without ctx.mark_dirty (and then torch refuses), and which
    makes every later evaluation of func start from a different point."""
    found = []
    for position, (x, before) in enumerate(zip(inputs, versions_before)):
        after = E.version(x) if before is not None else None
        if after == before:
            continue
        culprits = []
        if x.requires_grad:
            edge = E.gradient_edge(x)[0]
            culprits = [n for n in nodes if any(c is edge for c, _ in n.next_functions)
                        and not any(d is x for d in E.dirty(n))]
        who = (" and ".join(f"{function_name(n)}.forward" for n in culprits) if culprits
               else "func")
        found.append(Diagnosis(
            "input_modified_in_forward", "warning",
            f"{who} modified input {position} in place (its version went from {before} to "
            f"{after}) without ctx.mark_dirty: autograd does not know the input changed, "
            f"and each evaluation of func starts from a different point, so finite "
            f"differences are meaningless.",
            {"input": position, "functions": [function_name(n) for n in culprits],
             "version_before": before, "version_after": after}))
    return found


def is_once_differentiable(E, node):
    backward = node._forward_cls.backward
    return getattr(backward, "__code__", None) is E.once_differentiable_code


def double_backward_findings(E, node):
    """Why the gradient computed by this Function's backward cannot be differentiated again:
    @once_differentiable, a result that does not require grad under create_graph, or a
    saved tensor the result's graph never reaches (detached inside backward)."""
    name = function_name(node)
    if is_once_differentiable(E, node):
        return [Diagnosis(
            "once_differentiable", "error",
            f"{name}.backward is decorated @once_differentiable: it runs without recording a "
            f"graph, so its result cannot be differentiated again and gradgradcheck cannot "
            f"pass. Write backward with differentiable gradtool ops and drop the decorator.",
            {"function": name})]
    rng = np.random.default_rng(_PROBE_SEED)
    try:
        with E.enable_grad():
            result = E.call_backward(node, _random_grads(E, node, rng, requires_grad=True))
            saved = [t for t in node.saved_tensors if E.is_tensor(t) and t.requires_grad]
    except Exception:
        return []
    found = []
    detached = [i for (child, _), i, r in zip(node.next_functions, E.edge_positions(node), result)
                if child is not None and E.is_tensor(r) and not r.requires_grad]
    if detached:
        found.append(Diagnosis(
            "backward_detaches", "error",
            f"{name}.backward returns gradients that do not require grad for input(s) "
            f"{detached} even when asked for a graph (create_graph=True): it computes them "
            f"outside autograd (.detach(), .data, .numpy(), no_grad), so their own gradient "
            f"is taken as zero.", {"function": name, "inputs": detached}))
    roots = [r.grad_fn for r in result if E.is_tensor(r) and r.grad_fn is not None]
    reached = set(E.topological_order(roots))
    lost = [k for k, t in enumerate(saved) if E.gradient_edge(t)[0] not in reached]
    if lost and not detached:
        found.append(Diagnosis(
            "backward_detaches", "error",
            f"{name}.backward does not differentiate through saved tensor(s) {lost}: the "
            f"gradient it returns does not depend on them in the graph (a .detach(), .data or "
            f"no_grad inside backward), so second derivatives through them come out as zero.",
            {"function": name, "saved_tensors": lost}))
    return found
