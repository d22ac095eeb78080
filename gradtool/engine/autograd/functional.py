"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp.

Same arguments, results, output structure (a Tensor for a Tensor, tuples for tuples, a
tuple of tuples for tuple outputs and inputs) and strict-mode errors as torch. jvp runs in
forward mode (dual tensors; strict=True, or a dual level already active, takes torch's
double-backward trick instead); hvp uses the double-backward trick, as torch's does.
`vectorize=True` computes all the rows of a reverse-mode Jacobian in one backward pass
(autograd.grad with is_grads_batched=True), and all the columns of a forward-mode one in one
forward pass (forward_ad.batched: tangents with a batch dim, where torch uses vmap)."""
import numpy as np

from . import forward_level
from . import forward_ad, grad_mode
from .engine import grad as _grad
from .free_functions import stack
from .tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---------------- shared steps (as torch names them) ----------------
def _as_tuple(inp, arg_name, fn_name):
    """(whether inp was a tuple, inp as a tuple of Tensors)."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}" if is_tuple
                     else f"the given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Undo _as_tuple on a result: unwrap the levels that were not tuples."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """New tensor objects for the inputs: differentiable views with create_graph (gradients
    then flow back to the originals), detached copies of the reference otherwise."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


_REQUIRES_GRAD_MESSAGES = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."),
}


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_REQUIRES_GRAD_MESSAGES[input_type].format(i=i))


def _outputs_of(func, inputs, strict, fn_name):
    """func(*inputs): (whether it returned a tuple, its outputs as one), refused when strict
    and an output does not require grad."""
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_tuple, outputs


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """autograd.grad that skips outputs which are None or do not require grad (no output
    left: no gradient at all) and never complains about unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _grad([o for o, _ in kept], list(inputs), [g for _, g in kept],
                 retain_graph=retain_graph, create_graph=create_graph, allow_unused=True,
                 is_grads_batched=is_grads_batched)


_ZERO_FILL_MESSAGES = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """None gradients become zeros of the reference's shape (or, when strict, an error)."""
    res = ()
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_FILL_MESSAGES[stage].format(i=i))
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res += (g,)
    return res


def _zeros_like(t, requires_grad=False):
    return Tensor._wrap(np.zeros_like(t._data)).requires_grad_(requires_grad)


def _v_or_default(v, inputs_or_outputs, is_tuple, create_graph, what, fn_name):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs_or_outputs, is_tuple)
        return v
    if len(inputs_or_outputs) != 1 or inputs_or_outputs[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if {what} a single Tensor with a "
                           f"single element.")
    return None


def _single_output(outputs, is_outputs_tuple, fn_name):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           f"contain a single element")


# ---------------- the public functions ----------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`, shaped like the
    inputs. v may be omitted when func returns a single element."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "vjp")
        v = _v_or_default(v, outputs, is_outputs_tuple, create_graph,
                          "the user-provided function returns", "vjp")
    result = _grad_along_v(outputs, inputs, v, inputs, strict, create_graph, "back")
    return _returned(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, shaped like the outputs, in forward
    mode. v may be omitted when the input is a single element. With create_graph, by torch's
    double-backward trick, so that the result's graph is torch's node for node."""
    if strict or create_graph or forward_level.active is not None:
        return _jvp_by_double_backward(func, inputs, v, create_graph, strict)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    inputs = _grad_preprocess(inputs, create_graph=False, need_graph=False)
    v = _v_or_default(v, inputs, is_inputs_tuple, False,
                      "the input to the user-provided function is", "jvp")
    if v is None:
        v = (Tensor._wrap(np.ones_like(inputs[0]._data)),)
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(x, t) for x, t in zip(inputs, v)]
        is_outputs_tuple, outputs = _outputs_of(func, duals, False, "jvp")
        result = tuple(forward_ad.tangent_of(o) for o in outputs)
    # an output without a tangent does not depend on the inputs: J v is zeros
    result = tuple(_zeros_like(o) if t is None else t for o, t in zip(outputs, result))
    return _returned(outputs, result, False, is_outputs_tuple, is_outputs_tuple)


def _jvp_by_double_backward(func, inputs, v, create_graph, strict):
    """jvp by torch's trick: backward u -> J^T u is linear, and its gradient with respect to
    u, weighted by v, is J v."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_default(v, inputs, is_inputs_tuple, create_graph,
                          "the input to the user-provided function is", "jvp")
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "jvp")
        # backward is linear in grad_outputs, so their value does not matter (zeros are safe)
        grad_outputs = tuple(_zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    result = _grad_along_v(grad_inputs, grad_outputs, v, outputs, strict, create_graph,
                           "back_trick")
    return _returned(outputs, result, create_graph, is_outputs_tuple, is_outputs_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j a tensor of shape
    out_i.shape + in_j.shape; a Tensor, a tuple (one level tupled) or a tuple of tuples
    indexed [output][input], as torch returns it."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".'
                             ' Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` '
                                      'and `strategy="forward-mode"` are not supported '
                                      'together (yet). Please either set `create_graph=False` '
                                      'or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and '
                               '`strategy="forward-mode"` are not supported together (yet). '
                               'Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian is only implemented for "
                                      "`vectorize=True`.")
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    return _jacobian(func, inputs, create_graph, strict, vectorize, strategy)


def _jacobian(func, inputs, create_graph, strict, vectorize, strategy, rows_per_pass=None):
    """jacobian() once its arguments are checked; `rows_per_pass` bounds the vectorized
    passes (None: all the rows in one)."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if strategy == "forward-mode":  # (func runs once, on the dual inputs, as torch's)
            is_outputs_tuple, jac = _forward_jacobian(func, inputs)
            return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "jacobian")
        if vectorize:
            jac = tuple(_vectorized_jacobian_of_output(out, inputs, create_graph, rows_per_pass)
                        for out in outputs)
        else:
            jac = tuple(_jacobian_of_output(i, out, inputs, create_graph, strict)
                        for i, out in enumerate(outputs))
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_of_output(i, out, inputs, create_graph, strict):
    """Rows of d out / d inputs, one backward per output element (one-hot grad_output)."""
    rows = tuple([] for _ in inputs)
    basis = np.zeros(out.numel(), dtype=out._data.dtype)
    for j in range(out.numel()):
        basis[j] = 1
        onehot = Tensor._wrap(basis.reshape(out.shape).copy())
        basis[j] = 0
        vj = _autograd_grad((out,), inputs, (onehot,), retain_graph=True,
                            create_graph=create_graph)
        for el_idx, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {el_idx}. This is not allowed in "
                                       f"strict mode.")
                g = _zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   f"create_graph=True.")
            row.append(g)
    return tuple(_rows(row, inp).view(tuple(out.shape) + tuple(inp.shape))
                 for row, inp in zip(rows, inputs))


def _rows(row, inp):
    if len(row) == 1:  # a scalar output (hessian's inner jacobian): no stack to go through
        return row[0]
    return stack(row, 0) if row else Tensor._wrap(np.zeros((0,) + tuple(inp.shape),
                                                           dtype=inp._data.dtype))


def _vectorized_jacobian_of_output(out, inputs, create_graph, rows_per_pass=None):
    """All the rows of d out / d inputs in one backward pass: the one-hot grad_outputs as one
    batch (the identity matrix); with `rows_per_pass` (no create_graph), in several passes
    of at most that many row elements each."""
    n = out.numel()
    widest = max([n] + [inp.numel() for inp in inputs])
    step = n if rows_per_pass is None else max(1, min(n, rows_per_pass // max(widest, 1)))
    if step >= n:
        vjs = _rows_by_batched_backward(out, inputs, 0, n, create_graph)
    else:
        passes = [_rows_by_batched_backward(out, inputs, start, min(start + step, n), False)
                  for start in range(0, n, step)]
        vjs = [Tensor._wrap(np.concatenate([p[i]._data for p in passes]))
               for i in range(len(inputs))]
    return tuple(g.view(tuple(out.shape) + tuple(inp.shape)) for g, inp in zip(vjs, inputs))


def _rows_by_batched_backward(out, inputs, start, stop, create_graph):
    """Rows start..stop of d out / d inputs (zeros for an input out does not depend on), by
    one backward pass over their one-hot grad_outputs."""
    rows = stop - start
    basis = np.zeros((rows, out.numel()), dtype=out._data.dtype)
    basis[np.arange(rows), np.arange(start, stop)] = 1
    basis = basis.reshape((rows,) + out._data.shape)
    vjs = _autograd_grad((out,), inputs, (Tensor._wrap(basis),), retain_graph=True,
                         create_graph=create_graph, is_grads_batched=True)
    return [Tensor._wrap(np.zeros((rows,) + inp._data.shape, inp._data.dtype))
            if g is None else g for g, inp in zip(vjs, inputs)]


def _forward_jacobian(func, inputs):
    """(whether func returned a tuple, its Jacobian's columns) by forward mode: one forward
    pass with the one-hot tangents of every input as one batch (forward_ad.batched; each
    input's block of the batch is zero for the others, as torch's vmap over its standard
    basis), with no graph recorded (as torch, create_graph is refused with forward mode)."""
    inputs = tuple(inp.detach() for inp in inputs)
    numels = [inp.numel() for inp in inputs]
    offsets = np.cumsum([0] + numels)
    tangents = [np.zeros((offsets[-1],) + inp._data.shape, inp._data.dtype)
                for inp in inputs]
    for j, (tangent, n) in enumerate(zip(tangents, numels)):  # input j's block: its identity
        tangent.reshape(offsets[-1], n)[offsets[j]:offsets[j + 1]] = np.eye(n)
    with grad_mode.no_grad():
        is_outputs_tuple, outputs, columns = _batched_jvp(func, inputs, tangents,
                                                          _checked_outputs)
    jac = []
    for out, cols in zip(outputs, columns):
        out = out._data
        cols = cols.reshape((offsets[-1],) + out.shape)
        jac.append(tuple(Tensor._wrap(np.ascontiguousarray(np.moveaxis(
            cols[offsets[j]:offsets[j + 1]], 0, -1)).reshape(out.shape + inp._data.shape))
            for j, inp in enumerate(inputs)))
    return is_outputs_tuple, tuple(jac)


def _checked_outputs(returned):
    return _as_tuple(returned, "outputs of the user-provided function", "jacobian")


def _as_outputs(returned):
    is_tuple = isinstance(returned, tuple)
    return is_tuple, returned if is_tuple else (returned,)


def batched_jvp(func, inputs, j, tangents):
    """J v for each v in `tangents` (a batch along dim 0, of inputs[j]'s shape), by one
    forward pass with batched tangents: per output of func, an array (batch,) + its shape."""
    tangents = [tangents if i == j else None for i in range(len(inputs))]
    return _batched_jvp(func, inputs, tangents, _as_outputs)[2]


def _batched_jvp(func, inputs, tangents, outputs_of):
    """(whether func returned a tuple, its outputs as one, J v for each v in the batch):
    `tangents` per input, a batch along dim 0 or None (no tangent). One forward pass (a plain
    call for an empty batch); `outputs_of` (_as_outputs, _checked_outputs) reads func's
    result. J v: per output, an array (batch,) + its shape."""
    size = len(next(t for t in tangents if t is not None))
    if not size:
        is_tuple, outputs = outputs_of(func(*inputs))
        return is_tuple, outputs, [np.zeros((0,) + o._data.shape, o._data.dtype)
                                   for o in outputs]
    with forward_ad.batched(size):
        duals = [inp if t is None else forward_ad.make_dual(inp, Tensor._wrap(t))
                 for inp, t in zip(inputs, tangents)]
        is_tuple, outputs = outputs_of(func(*duals))
        result = [forward_ad.tangent_of(o) for o in outputs]
    return is_tuple, outputs, [np.zeros((size,) + o._data.shape, o._data.dtype) if t is None
                               else t._data for o, t in zip(outputs, result)]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: a Tensor of shape in.shape + in.shape, or for
    tuple inputs a tuple of tuples indexed [i][j]."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        is_out_tuple, out = _outputs_of(func, inp, strict, "hessian")
        _single_output(out, is_out_tuple, "hessian")
        return out[0].squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":  # forward over reverse
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    def gradient(*inp):  # forward over reverse's inner function
        with grad_mode.enable_grad():
            return _gradient(func, inp, record=False)[1]

    if strict or create_graph or (outer_jacobian_strategy == "forward-mode" and not vectorize):
        res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                       vectorize=vectorize, strategy=outer_jacobian_strategy)
    elif outer_jacobian_strategy == "forward-mode":
        res = _jacobian(gradient, inputs, False, False, True, "forward-mode")
    else:  # with no strategy asked for, the rows by batched backward passes too, not one
        # pass each: the same Hessian, the fastest way, in passes of bounded memory
        res = _hessian_by_batched_rows(func, inputs, None if vectorize else _ROWS_PER_PASS)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _gradient(func, inputs, record=True):
    """(the inputs as func got them, the gradient of its single output with respect to them,
    recorded if `record`): hessian's inner jacobian where its graph is only a means (no
    strict, no create_graph), with func given the same views, and without the nodes that
    every row of the outer pass would go through for nothing (a view of each gradient, a 0-d
    output's squeeze). Forward over reverse needs only the gradient's tangents, which a
    backward pass carries without recording."""
    views = tuple(t.requires_grad_(True).view_as(t) for t in inputs)
    is_out_tuple, out = _outputs_of(func, views, False, "hessian")
    _single_output(out, is_out_tuple, "hessian")
    out = out[0] if out[0].dim() == 0 else out[0].squeeze()
    grads = _autograd_grad((out,), views, create_graph=record)
    return views, tuple(_zeros_like(v) if g is None else g for g, v in zip(grads, views))


def _hessian_by_batched_rows(func, inputs, rows_per_pass):
    """The Hessian by reverse over reverse, its rows by batched backward passes (at most
    `rows_per_pass` row elements each; None: one pass), without strict or create_graph: the
    gradient's rows are taken with respect to the views func got (their nodes not run)."""
    with grad_mode.enable_grad():
        inputs = _grad_preprocess(inputs, create_graph=False, need_graph=True)
        views, grads = _gradient(func, inputs)
        jac = tuple(_vectorized_jacobian_of_output(g, views, False, rows_per_pass)
                    for g in grads)
    return _grad_postprocess(jac, False)


# A batched backward pass carries each of its rows through every node: passes of at most
# this many row elements (rows x the larger of an output's and an input's size), 32 MB in
# float64, for the batches gradtool chooses itself
_ROWS_PER_PASS = 1 << 22


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function, shaped like the inputs."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs, outputs, is_outputs_tuple, v = _scalar_setup(
            func, inputs, v, create_graph, strict, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    result = _grad_along_v(jac, inputs, v, inputs, strict, create_graph, "double_back")
    return _returned(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function, shaped like the inputs, by the
    double-backward trick (for a symmetric Hessian it equals vhp)."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs, outputs, is_outputs_tuple, v = _scalar_setup(
            func, inputs, v, create_graph, strict, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(_zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    result = _grad_along_v(double_back, grad_jac, v, inputs, strict, create_graph,
                           "double_back_trick")
    return _returned(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


def _grad_along_v(outputs, inputs, v, like, strict, create_graph, stage):
    """The gradient of `outputs` with respect to `inputs` along v, recorded only with
    create_graph, missing gradients zeros shaped as `like` (refused when strict): vjp's and
    vhp's result, and the second half of the (double-)backward trick (`outputs` linear in
    the dummy `inputs`)."""
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        return _fill_in_zeros(grad_res, like, strict, create_graph, stage)


def _returned(outputs, result, create_graph, outputs_tuple, result_tuple):
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, outputs_tuple),
            _tuple_postprocess(result, result_tuple))


def _scalar_setup(func, inputs, v, create_graph, strict, fn_name):
    """vhp and hvp's common start: inputs prepared, v checked, func run and its single
    scalar output checked."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _v_or_default(v, inputs, is_inputs_tuple, create_graph,
                      "the input to the user-provided function is", fn_name)
    is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, fn_name)
    _single_output(outputs, is_outputs_tuple, fn_name)
    return is_inputs_tuple, inputs, outputs, is_outputs_tuple, v


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
