"""backward() and grad(): one iterative scheduler over the graph.

Everything ops share happens here once: checking each returned gradient's shape and dtype
against the input it belongs to, summing broadcast gradients back to that input's shape,
adding up gradients that reach a node along several paths, and accumulating into leaves.
"""
import functools
import sys
import threading
import weakref

import numpy as np

from . import forward_level
from . import anomaly, grad_mode, observers
from .dispatch import sync_view
from .errstate import ERRSTATE, QUIET
from .free_functions import stack
from .node import AccumulateGrad, GraphRoot, accumulator_of, type_name
from .ops import generic
from .tensor import Tensor
from .walk import count_dependencies, topological_order


_ndarray = np.ndarray


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


class _Running(threading.local):
    tasks = ()  # the backward passes running on this thread, innermost last


_running = _Running()


class _Task:
    """One backward pass: what queue_callback adds runs when it finishes."""

    def __init__(self, checkpoint_valid=True):
        self.callbacks = []
        # a reentrant checkpoint's backward needs the whole graph run: not so for
        # autograd.grad or backward(inputs=), which run only what leads to their inputs
        self.checkpoint_valid = checkpoint_valid


def current_task():
    return _running.tasks[-1] if _running.tasks else None


def queue_callback(fn):
    """Run fn() when the current backward pass finishes (torch's engine.queue_callback)."""
    if not _running.tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _running.tasks[-1].callbacks.append(fn)


def gradient_edge(t):
    """Where t's gradient enters the graph: (its grad_fn, output_nr), or its AccumulateGrad."""
    sync_view(t)
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    return (accumulator_of(t), 0)


def _root_grads(outputs, grad_outputs, create_graph, batched=False):
    """The gradients backward starts from, checked against the outputs; `batched`: each
    a batch of them (a leading batch dim)."""
    grads = list(_as_tuple(grad_outputs)) or [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outputs)} outputs")
    batch = _batch_size(grads) if batched else None
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if not isinstance(out, Tensor):
            raise TypeError(f"outputs[{i}] must be a Tensor, got {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._data.dtype.kind == "c":
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}".replace("gradtool.", "torch."))
            ones = np.ones_like(out._data)
            g = Tensor._wrap(ones if batch is None else
                             np.broadcast_to(ones, (batch,) + ones.shape).copy())
        elif not isinstance(g, Tensor):
            g = Tensor._wrap(np.asarray(g, dtype=out._data.dtype))
        if batch is not None:
            if g._data.shape[1:] != out._data.shape:
                raise RuntimeError(
                    f"If `is_grads_batched=True`, we interpret the first dimension of each "
                    f"grad_output as the batch dimension. The sizes of the remaining dimensions "
                    f"are expected to match the shape of corresponding output, but a mismatch "
                    f"was detected: grad_output[{i}] has a shape of "
                    f"{_size(g._data.shape[1:])} and output[{i}] has a shape of "
                    f"{_size(out._data.shape)}. If you only want some tensors in `grad_output` "
                    f"to be considered batched, consider using vmap.")
        elif g._data.shape != out._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{_size(g._data.shape)} and output[{i}] has a shape of "
                               f"{_size(out._data.shape)}.")
        if not create_graph:
            g = g.detach()
        result.append(g)
    return result


def _batch_size(grads):
    """The batch size of batched grad_outputs (None stands for a batch of ones)."""
    sizes = {np.shape(g)[0] if np.ndim(g) else None for g in grads if g is not None}
    if not sizes:
        raise RuntimeError("If `is_grads_batched=True`, grad_outputs must give a batch of "
                           "gradients for at least one output.")
    if None in sizes:
        raise RuntimeError("If `is_grads_batched=True`, each grad_output needs a batch "
                           "dimension, but a 0-d grad_output was given.")
    if len(sizes) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sorted(sizes)} for the mapped dimension")
    return sizes.pop()


def _size(shape):
    return f"gradtool.Size({list(shape)})"


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Sum the gradients of `tensors` (weighted by grad_tensors) into the leaves' .grad."""
    outputs = _as_tuple(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    inputs = _as_tuple(inputs)
    if inputs and any(not t._requires_grad for t in inputs):
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    retain = create_graph if retain_graph is None else retain_graph
    grads = _root_grads(outputs, grad_tensors, create_graph)
    for t in inputs:  # as torch: a non-leaf in inputs= retains its grad, which fills .grad
        if not t.is_leaf:
            t.retain_grad()
    run(outputs, grads, retain, create_graph, inputs or None, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs, returned (not accumulated)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    retain = create_graph if retain_graph is None else retain_graph
    if is_grads_batched:
        grads = _root_grads(outputs, grad_outputs, create_graph, batched=True)
        result = _batched_grad(outputs, grads, inputs, retain, create_graph)
    else:
        grads = _root_grads(outputs, grad_outputs, create_graph)
        result = run(outputs, grads, retain, create_graph, inputs, accumulate=False)
    for i, g in enumerate(result):
        if g is None:
            if materialize_grads:
                zeros = np.zeros_like(inputs[i]._data)
                if is_grads_batched:
                    zeros = np.zeros((grads[0].shape[0],) + zeros.shape, zeros.dtype)
                result[i] = Tensor._wrap(zeros)
                result[i]._requires_grad = create_graph  # so a higher order can go on
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   f"been used in the graph. Set allow_unused=True if this is "
                                   f"the desired behavior.")
    return tuple(result)


def _batched_grad(outputs, grads, inputs, retain_graph, create_graph):
    """grad() for a batch of grad_outputs: each input's gradients, stacked. One backward pass
    over batched arrays (nodes without batched formulas take one element at a time) when
    nothing needs to see single gradients or record; otherwise one pass per element."""
    batch = grads[0].shape[0]
    if batch == 0:  # an empty batch of gradients
        return [Tensor._wrap(np.zeros((0,) + inp._data.shape, inp._data.dtype))
                for inp in inputs]
    if not (create_graph or anomaly.enabled or observers.watching() or _has_hooks(outputs)):
        return run(outputs, [g._data for g in grads], retain_graph, False, inputs,
                   accumulate=False, batch=batch)
    per_element = [run(outputs, [g[b] for g in grads], retain_graph or b < batch - 1,
                       create_graph, inputs, accumulate=False) for b in range(batch)]
    return [_stack_batch(column, inp) for column, inp in zip(zip(*per_element), inputs)]


def _stack_batch(grads, inp):
    if all(g is None for g in grads):
        return None
    zeros = Tensor._wrap(np.zeros_like(inp._data))
    return stack([zeros if g is None else g for g in grads])


def _has_hooks(outputs):
    """Whether a hook (or retain_grad) is set anywhere in the graph behind outputs."""
    for node in topological_order([t._grad_fn or accumulator_of(t) for t in outputs]):
        if node._hooks is not None or (type(node) is AccumulateGrad and node.variable._hooks):
            return True
    return False


def run(outputs, root_grads, retain_graph, create_graph, inputs, accumulate, batch=None):
    """Execute the graph from `outputs`. With `inputs`, run only what leads to them and return
    the gradient reaching each; with accumulate, sum into leaves (only `inputs`' if given).
    With `batch`, root_grads are arrays with a leading batch dim of that size, and so is every
    gradient on the way (no hooks, no recording: see _batched_grad)."""
    root_edges = [gradient_edge(t) for t in outputs]
    root = GraphRoot(root_edges, root_grads, [(t._data.shape, t._data.dtype) for t in outputs])
    counts = count_dependencies([root])
    captures = needed = reached = None
    if inputs is not None:
        captures, needed, reached = _plan(root, inputs, dict(counts), accumulate)
    prev_mode = grad_mode.state.grad_enabled
    grad_mode.state.grad_enabled = create_graph  # backward formulas record only if asked
    task = _Task(checkpoint_valid=inputs is None)
    _running.tasks = _running.tasks + (task,)
    try:
        # Documented conventions such as sqrt'(0) = inf are results, not accidents: no warnings.
        quiet = ERRSTATE.set(QUIET)
        if batch is not None:  # the formulas' ops count dims after the batch dim
            generic.batch.lead = 1
        try:
            captured = _execute(root, counts, needed, reached, captures, len(inputs or ()),
                                retain_graph, create_graph, accumulate, batch)
        finally:
            ERRSTATE.reset(quiet)
            generic.batch.lead = 0
        for callback in task.callbacks:
            callback()
        return captured
    finally:
        _running.tasks = _running.tasks[:-1]
        grad_mode.state.grad_enabled = prev_mode


def _plan(root, inputs, counts, accumulate):
    """What runs when only `inputs` matter, as torch's engine decides: the nodes leading to
    them run (`needed`; backward(inputs=) runs the inputs' own nodes too); autograd.grad
    only reads the gradient reaching each input's node (`captures`: (node, output_nr) ->
    positions in inputs), after its tensor hooks, and does not run that node. `reached`:
    every node the pass visits. Uses up `counts` (the graph's dependency counts)."""
    captures = {}
    for i, t in enumerate(inputs):
        captures.setdefault(gradient_edge(t), []).append(i)
    targets = {node for node, _ in captures}
    needed = set()
    for node in reversed(topological_order([root], counts)):
        if (accumulate and node in targets) or any(
                c in needed or c in targets for c, _ in node.next_functions):
            needed.add(node)
    return (None if accumulate else captures), needed, needed | targets


def _execute(root, counts, needed, reached, captures, n_inputs, retain_graph, create_graph,
             accumulate, batch):
    # Recording nothing, gradients travel as numpy arrays between the nodes that take them
    # (ops with array formulas): a Tensor is made only where one is handed out (hooks,
    # other nodes, leaves, autograd.grad's results).
    # (with a dual level active, gradients stay Tensors so that they carry tangents:
    # forward-over-reverse without create_graph, as torch)
    on_arrays = not create_graph and not anomaly.enabled and forward_level.active is None
    captured = [None] * n_inputs
    buffers = {}          # node -> gradients of its outputs, summed as they arrive
    sums = {}             # id -> an array in a buffer that this pass made by adding: no one
    # else holds it, so the next gradient for that slot is added into it (a weight used at
    # every step of a loop gets one array, not one per step)
    # ids of arrays a leaf must not keep as they are: the caller's grad_outputs, and those
    # already stored as some leaf's .grad
    given_to_leaves = {id(_data(g)) for g in root.grads if g is not None}
    ready = [root]
    while ready:
        node = ready.pop()
        grads = buffers.pop(node, None)  # only nodes some gradient reached have a buffer
        if sums and grads is not None:  # handed on now: others may hold them from here
            for g in grads:
                sums.pop(id(g), None)
        hooks = node._hooks
        is_leaf = type(node) is AccumulateGrad
        # hooks on the tensor first (a leaf's, or a non-leaf's and retain_grad), then the node's
        if is_leaf:
            if grads is not None and node.variable._hooks:
                grads = [_through_hooks(node.variable._hooks, _as_tensors(grads)[0])]
        elif hooks is not None and (hooks.tensor_pre or hooks.retains_grad):
            grads = _run_tensor_pre_hooks(hooks, _as_tensors(grads or []))
        if captures is not None and grads is not None:
            _capture(captures, captured, node, grads)
        if needed is not None and node not in needed:
            continue  # an input of autograd.grad: its gradient is read, its node does not run
        if hooks is not None:
            if hooks.pre:
                grads = _run_node_hooks(hooks.pre, _as_tensors(grads or []))
            if grads is not None and not any(g is not None for g in grads):
                grads = None
        if is_leaf:
            if accumulate and grads is not None and grads[0] is not None:
                accumulate_into_leaf(node.variable, grads[0], create_graph, given_to_leaves)
                if POST_ACCUMULATE_HOOKS:
                    _run_post_accumulate_hooks(node.variable)
            if hooks is not None and hooks.post and grads is not None:
                _run_node_hooks(hooks.post, [], tuple(_as_tensors(grads)))
            continue
        edges = node.next_functions
        takes_arrays = node.takes_arrays
        if grads is not None or node is root:
            grads = grads or []
            if batch is not None:
                out = (node.apply_batched(grads) if node.batches else
                       _apply_per_element(node, grads, batch))
            else:
                if on_arrays and not takes_arrays:
                    grads = _as_tensors(grads)
                # (a partial, not a lambda: a closure would make this loop's locals cells)
                out = (observers.backward_node(node, functools.partial(node.apply, grads))
                       if observers.subscribers else node.apply(grads))
            if anomaly.enabled and anomaly.check_nan:
                anomaly.check_gradients(node, out)
            if len(out) != len(edges):
                _wrong_count(node, out)
            if hooks is not None and hooks.post:
                # post hooks see the gradients as the inputs get them (summed to their
                # shapes, cast to their dtypes), as torch's validate_outputs runs first
                out = _run_node_hooks(hooks.post, _validated(node, out, edges, batch),
                                      tuple(grads))
        else:  # no gradient reached it: its inputs get none from it
            out = [None] * len(edges)
        saved = node._for_backward  # {}: nothing to free; None: a node may keep them elsewhere
        if not retain_graph and (saved or saved is None) and node.saves_tensors:
            node.release_saved()
        metas = node._input_meta
        for i, (child, nr) in enumerate(edges):
            if child is None:
                continue
            g = out[i]
            if g is not None:
                data = (g._data if type(g) is Tensor else
                        g if takes_arrays and type(g) is _ndarray else None)
                shape, dtype = metas[i]
                if batch is not None:
                    shape = (batch,) + shape
                if data is None or data.shape != shape or data.dtype is not dtype:
                    g = validate_gradient(node, i, g, batch)
                    data = g if type(g) is np.ndarray else g._data
                if on_arrays:
                    g = data
                buf = buffers.get(child)
                if buf is None:
                    buffers[child] = [g] if nr == 0 else [None] * nr + [g]
                elif nr >= len(buf):
                    buf.extend([None] * (nr - len(buf)) + [g])
                else:
                    held = buf[nr]
                    if held is None:
                        buf[nr] = g
                    elif id(held) in sums:
                        np.add(held, g, out=held)
                    else:
                        held = buf[nr] = _add(held, g)
                        if type(held) is _ndarray:
                            sums[id(held)] = held
            left = counts[child] - 1
            counts[child] = left
            if left == 0 and (reached is None or child in reached):
                ready.append(child)
    return captured


def _validated(node, out, edges, batch):
    """`out` as the inputs get it (out of _execute: a comprehension there would make the
    loop's locals closure cells)."""
    return [g if g is None or edge[0] is None else validate_gradient(node, i, g, batch)
            for i, (g, edge) in enumerate(zip(out, edges))]


def _add(a, b):
    """The sum of two gradients of one output (Tensors, or arrays: 0-d arrays add up to a
    numpy scalar, made an array again)."""
    total = a + b
    return np.asarray(total) if isinstance(total, np.generic) else total


def _as_tensors(grads):
    """Gradients as Tensors, for everything that is not a node taking arrays."""
    wrap = Tensor._wrap
    return [wrap(g) if type(g) is np.ndarray else g for g in grads]


def _capture(captures, captured, node, grads):
    """autograd.grad's inputs: keep the gradient arriving at each one's edge."""
    for nr, g in enumerate(grads):
        for i in captures.get((node, nr), ()):
            captured[i] = Tensor._wrap(g) if type(g) is np.ndarray else g


def _wrong_count(node, out):
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                       f"(expected {len(node.next_functions)}, got {len(out)})")


def _apply_per_element(node, grads, batch):
    """A node with no batched formulas, in a batched backward: applied to each element of the
    batch in turn, its gradients checked and stacked."""
    one = (lambda g: g) if node.takes_arrays else Tensor._wrap
    per_element = []
    generic.batch.lead = 0  # one element at a time: no batch dim
    try:
        for b in range(batch):
            out = node.apply([None if g is None else one(g[b, ...]) for g in grads])
            if len(out) != len(node.next_functions):
                _wrong_count(node, out)
            per_element.append([None if g is None else _data(validate_gradient(node, i, g))
                                for i, g in enumerate(out)])
    finally:
        generic.batch.lead = 1
    stacked = []
    for column in zip(*per_element):
        given = next((g for g in column if g is not None), None)
        stacked.append(None if given is None else np.stack(
            [np.zeros_like(given) if g is None else g for g in column]))
    return stacked  # (never an empty batch: _batched_grad answers that itself)


def _data(g):
    return g if type(g) is np.ndarray else g._data


def validate_gradient(node, i, g, batch=None):
    """Check a returned gradient (a Tensor, or an array from a node taking arrays) against
    input i's shape and dtype; unbroadcast and cast. With `batch`, g is a batch of them."""
    on_array = type(g) is np.ndarray and (node.takes_arrays or batch is not None)
    if not on_array and not isinstance(g, Tensor):
        raise TypeError(f"function {node.name()} returned a gradient of type "
                        f"{type(g).__name__} at index {i}, expected a Tensor or None")
    shape, dtype = node._input_meta[i]
    data = g if on_array else g._data
    got = data.shape if batch is None else data.shape[1:]
    if got != shape:
        if not _expandable(shape, got):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                               f"{i} - got {list(got)} but expected shape compatible "
                               f"with {list(shape)}")
        g = generic.sum_to(g, shape)
        data = g if on_array else g._data
    if data.dtype != dtype:
        if dtype.kind not in "fcV" or data.dtype.kind not in "fcV":
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                               f"{i} - expected dtype {dtype} but got {data.dtype}")
        # (a real input's gradient is the real part of a complex one: torch's handle_r_to_c)
        g = generic.to(g, dtype)
    return g


def _expandable(shape, target):
    return len(shape) <= len(target) and all(
        s == 1 or s == t for s, t in zip(reversed(shape), reversed(target)))


# One lock for every leaf's .grad: threads backpropagating into a shared leaf (or making its
# AccumulateGrad) see each other's sums, as torch's per-node mutex gives.
leaf_lock = threading.Lock()


def accumulate_into_leaf(leaf, g, create_graph, given_to_leaves):
    """leaf.grad += g (a Tensor, or an array when nothing records), as torch's AccumulateGrad:
    into the existing .grad in place, so a reference taken to it sees the sum; under
    create_graph a new, differentiable tensor (AddBackward0 over the old .grad; the first one
    a copy, CopyBackwards). A first .grad never shares memory with the caller's grad_outputs,
    another leaf's .grad or a read-only view."""
    data = g if type(g) is np.ndarray else g._data
    with leaf_lock:
        old = leaf._grad
        if create_graph and g._requires_grad:
            leaf._grad = (Tensor._wrap(np.empty_like(data)).copy_(g) if old is None
                          else old + g)
        elif old is None:
            if (id(data) in given_to_leaves or not data.flags.writeable or
                    (data.base is not None and sys.getrefcount(data.base) > 2)):
                data = data.copy()
            given_to_leaves.add(id(data))
            leaf._grad = Tensor._wrap(data)
        elif create_graph or not _owns(old._data):
            leaf._grad = old + Tensor._wrap(data)
        else:
            np.add(old._data, data, out=old._data, casting="same_kind")
            old._version_counter[0] += 1


def _owns(data):
    """Whether one tensor alone refers to `data` (called as _owns(tensor._data)), so writing
    into it changes no one else's tensor (a hook's, a Function's): torch's use_count check
    before it updates a gradient in place."""
    own, base = _ref_counts(data)
    return data.flags.writeable and own <= _SOLE[0] and base <= _SOLE[1]


def _ref_counts(data):
    return sys.getrefcount(data), 0 if data.base is None else sys.getrefcount(data.base)


# the counts _owns sees for an array one tensor holds (a view whose base it alone holds):
# measured, since they differ between Python versions
_holder = Tensor._wrap(np.empty(2)[1:])
_SOLE = (lambda data: _ref_counts(data))(_holder._data)
del _holder


def _run_tensor_pre_hooks(hooks, grads):
    """A non-leaf tensor's hooks (register_hook), then retain_grad's copy of the result."""
    for nr, fns in hooks.tensor_pre.items():
        if nr < len(grads) and grads[nr] is not None:
            grads[nr] = _through_hooks(fns, grads[nr])
    for nr, ref in hooks.retains_grad.items():
        t = ref()
        if t is not None and nr < len(grads) and grads[nr] is not None:
            g = grads[nr] if grad_mode.state.grad_enabled else grads[nr].detach()
            t._grad = g.clone() if t._grad is None else t._grad + g
    return grads


def _run_node_hooks(fns, grads, grad_outputs=None):
    """A node's pre-hooks, fn(grads), or with grad_outputs its post-hooks, fn(grads,
    grad_outputs) (grads: its grad_inputs); each may return new grads."""
    for fn in list(fns):
        new = fn(tuple(grads)) if grad_outputs is None else fn(tuple(grads), grad_outputs)
        if new is not None:
            grads = list(new)
    return grads


def _through_hooks(fns, grad):
    """A tensor's gradient through its hooks (Tensor.register_hook), each given the last's."""
    for fn in list(fns):
        new = fn(grad)
        if new is not None:
            _check_hook_result(fn, grad, new)
            grad = new
    return grad


def _check_hook_result(fn, grad, new):
    """torch's refusal of a hook's gradient of another size or type than the one it got."""
    name = getattr(fn, "__name__", type(fn).__name__)
    if isinstance(new, Tensor) and new._data.shape != grad._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if isinstance(new, Tensor) and new._data.dtype != grad._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                           f"{type_name(grad._data)} got {type_name(new._data)})")


# id(leaf) -> [hook(leaf)] run after its .grad was accumulated
# (Tensor.register_post_accumulate_grad_hook); an entry goes when its leaf does
POST_ACCUMULATE_HOOKS = {}


def post_accumulate_hooks_of(leaf):
    hooks = POST_ACCUMULATE_HOOKS.get(id(leaf))
    if hooks is None:
        hooks = POST_ACCUMULATE_HOOKS[id(leaf)] = []
        weakref.finalize(leaf, POST_ACCUMULATE_HOOKS.pop, id(leaf), None)
    return hooks


def _run_post_accumulate_hooks(leaf):
    for fn in list(POST_ACCUMULATE_HOOKS.get(id(leaf), ())):
        fn(leaf)
