"""What a row of the op table is, and how its node runs: OpSpec, OpNode, save plans and
jvp rules. The table itself is derivatives.py.

As in PyTorch's derivatives.yaml, a formula's parameter names say what it needs, and so what
the node saves in the forward pass:
  grad / grads      the gradient of the output (of every output, for multi-output ops)
  self, other, ...  tensor inputs, saved as `_saved_self`, `_saved_other`, ...
  result            the op's output, saved as `_saved_result` (kept without a reference cycle)
  dim, keepdim, ... the op's non-tensor arguments, saved as `_saved_dim`, ...
  self_sym_sizes, self_sym_numel, self_sym_strides, self_scalar_type, tensors_args_sizes,
  source_dim, bias_sym_sizes_opt
                    facts about an input, recorded at forward time
A node saves only what the formulas of inputs that require grad need (as torch does).
Inputs that are not differentiable are declared so with NON_DIFFERENTIABLE.

Each formula is written once, with the ops of `generic` (see there): on arrays, on Tensors
(gradients of gradients) and, for rows marked `batches`, on a batch of gradients at once
(is_grads_batched: gradcheck's Jacobians in one backward pass); other rows' nodes take a
batch one element at a time.

Forward mode (autograd.forward_ad): every row declares its `jvp`, the output's tangent from
the inputs' (derivatives.yaml's `result:`). Where it follows from the backward formulas, the
row names the rule and the machinery derives it (JVP_RULES):
  "elementwise"  J is diagonal, so J.v = v^T.J: each backward formula with `grad` := the
                 input's tangent, summed over the inputs (kinks as backward's)
  "linear"       the op itself applied to the tangents (views give views of the tangent)
  "bilinear"     linear in each input alone: the op with one input swapped for its tangent,
                 summed over the inputs (mm, matmul, ...)
  "reduction"    each output reads one slice: (backward(ones) * tangent) summed over `dim`
Otherwise a formula: its parameters are the backward formulas' names, plus `<input>_t` for
the inputs' tangents (zeros where an input has none).
"""
import inspect

import numpy as np

from .. import grad_mode
from ..dtypes import BFLOAT16
from ..dispatch import call, derived, make_node, own_code
from ..free_functions import stack
from ..node import RELEASED, Node, SavedIndices, SavedTensor, exposed_attributes
from ..tensor import Tensor
from .generic import constant, ones_like, zeros_like

NON_DIFFERENTIABLE = "non_differentiable"
MANY = "many"  # an op returning a sequence of outputs whose length depends on its arguments
_DERIVED = ("_sym_sizes", "_sym_sizes_opt", "_sym_numel", "_sym_strides", "_scalar_type",
            "_args_sizes", "_dim", "_sym_argsize_0", "_sym_argsize_1", "_sym_argsize_2",
            "_sym_argsize_minus_2", "_sym_argsize_minus_1")
_UNEXPOSED = ("_scalar_type", "_args_sizes")  # facts torch's nodes keep without a _saved_ name
_state = grad_mode.state


def _hooked(saved):
    """Whether a saved-tensor hook packed any of these saved values."""
    return any(type(v) is SavedTensor and v._unpack_hook is not None for v in saved.values())


def _unpacked(saved, owner):
    """A saved tensor unpacked (its hook run) into a SavedTensor that holds the result."""
    tensor = saved.unpack(owner)
    held = SavedTensor.__new__(SavedTensor)
    held._tensor, held._data, held.is_output, held._freed = tensor, None, False, False
    held._packed = held._unpack_hook = None
    held._version_counter = tensor._version_counter
    held.saved_version = tensor._version_counter[0]
    return held


class OpNode(Node):
    """The grad_fn of a built-in op: evaluates its spec's formulas on the saved values."""

    __slots__ = ("_output_meta", "_args")
    spec = None
    takes_arrays = True  # its formulas map arrays to arrays (generic ops)

    def apply(self, grads):
        """The inputs' gradients from the outputs': Tensors from Tensors (recording if grad
        mode is on), or arrays from arrays (the engine's path when nothing records)."""
        spec = self.spec
        if spec.reads_saved_twice and _hooked(self._for_backward):
            return self._apply_unpacking_once(grads)
        plain = spec.grad_first
        grad = grads[0]
        if plain is None or type(grad) is not np.ndarray or grad.dtype is BFLOAT16:
            return self._apply(grads, None)
        # the engine's hot path (first order, one output): _apply's work, spelled lean
        saved = self._for_backward
        out = []
        for (child, _), (fn, names) in zip(self.next_functions, plain):
            if child is None:
                out.append(None)
                continue
            if fn is None:  # (a formula handing the gradient on as it is: see _passes_grad)
                out.append(grad)
                continue
            if len(names) == 1:  # (most formulas: a plain call, no list, no fn(*args))
                v = saved[names[0]]
                g = fn(grad, v.unpack_array(self) if type(v) is SavedTensor else v)
            elif names:
                args = [grad]
                for name in names:
                    v = saved[name]
                    args.append(v.unpack_array(self) if type(v) is SavedTensor else v)
                g = fn(*args)
            else:
                g = fn(grad)
            out.append(g if type(g) is np.ndarray or g is None else np.asarray(g))
        return out

    def _apply_unpacking_once(self, grads):
        """apply(), each saved tensor packed by a hook unpacked once for all its formulas."""
        saved = self._for_backward
        self._for_backward = {name: _unpacked(v, self) if type(v) is SavedTensor and
                              v._unpack_hook is not None else v for name, v in saved.items()}
        try:
            return self.apply(grads)
        finally:
            self._for_backward = saved

    def apply_batched(self, grads):
        """apply() for a batch of gradients (arrays with a leading batch dim), recording
        nothing: the engine calls it for rows marked `batches` (see generic)."""
        return self._apply(grads, grads[0].shape[0])

    def _apply(self, grads, batch_size):
        spec = self.spec
        if spec.multi_output:  # zeros for outputs without a gradient, or None if the row
            # tells them apart (as torch's undefined gradients: no term, no graph)
            grads = list(grads) + [None] * (len(self._output_meta) - len(grads))
            given = next(g for g in grads if g is not None)
            if not spec.undefined_grads:
                grads = [g if g is not None or meta is None else constant(np.zeros(*meta), given)
                         for g, meta in zip(grads, self._output_meta)]
        else:
            given = grads[0]
        as_arrays = type(given) is np.ndarray
        if as_arrays and given.dtype is BFLOAT16:  # as torch's kernels: in float32 (sums of
            # broadcast gradients too), each input's gradient rounded once (engine.py casts)
            grads = [g if g is None else g.astype(np.float32) for g in grads]
        if spec.one_formula:  # it gives the gradients of every input (tensor in the list)
            out = self._evaluate(spec.formula_list[0], grads, as_arrays, batch_size)
            out = [g if child is not None else None
                   for g, (child, _) in zip(out, self.next_functions)]
        else:
            out = [None if child is None else self._evaluate(formula, grads, as_arrays,
                                                             batch_size)
                   for (child, _), formula in zip(self.next_functions, spec.formula_list)]
        if as_arrays:  # (a numpy scalar, from 0-d arrays, is made an array again)
            for i, g in enumerate(out):
                if type(g) is not np.ndarray and g is not None:
                    out[i] = g = np.asarray(g)
                if batch_size is not None and g is not None and g.shape[:1] != (batch_size,):
                    out[i] = np.broadcast_to(g, (batch_size,) + g.shape[1:])  # (constant)
        return out

    def release_saved(self):
        """Free the saved tensors; a number saved in a tensor input's place (x * 2's `other`)
        is a tensor to torch (a wrapped number), freed too, so a second backward fails."""
        saved = self._for_backward
        if not saved:
            return
        inputs = self.spec.inputs
        for name, value in saved.items():
            if type(value) is SavedTensor:
                value.release()
            elif name in inputs:
                saved[name] = RELEASED

    def _evaluate(self, formula, grads, as_arrays, batch_size):
        fn, params = formula
        saved = self._for_backward
        args = []
        for p in params:
            if p == "grad" or p == "grads":
                args.append(grads[0] if p == "grad" else grads)
                continue
            v = saved[p]
            if type(v) is SavedTensor:
                if not as_arrays:
                    v = v.unpack(self)
                else:
                    v = v.unpack_array(self)
                    if v.dtype is BFLOAT16:  # (in float32, as the gradients: see _apply)
                        v = v.astype(np.float32)
                    if batch_size is not None:  # a batch dim of size 1: see generic
                        v = v[None]
            args.append(v)
        return fn(*args)


def _passes_grad(formula):
    """Whether a formula is `lambda grad: grad` (add's self, clone's, ...): OpNode.apply's
    lean path hands the gradient on without calling it (a Python call per node saved)."""
    code = getattr(formula, "__code__", None)
    return code is not None and code.co_code == _PASS.co_code and \
        code.co_varnames == _PASS.co_varnames and not formula.__defaults__


_PASS = (lambda grad: grad).__code__


class IndexOpNode(OpNode):
    """The node of a row taking `indices` (x[idx], index_put): the index tensors saved with
    them (node.SavedIndices) are checked before backward reads them, and freed after it."""

    __slots__ = ()
    saves_tensors = True

    def _indices(self):
        indices = (self._for_backward or {}).get("indices")
        return indices if type(indices) is SavedIndices else None

    def apply(self, grads):
        indices = self._indices()
        if indices is not None:
            indices.check(self)
        return OpNode.apply(self, grads)

    def apply_batched(self, grads):
        indices = self._indices()
        if indices is not None:
            indices.check(self)
        return OpNode.apply_batched(self, grads)

    def release_saved(self):
        OpNode.release_saved(self)
        indices = self._indices()
        if indices is not None:  # (the nodes of its gradient share them: they keep theirs)
            self._for_backward["indices"] = indices.released()


def _in_place_twin(spec, node_name, jvp, batches, inputs):
    """The row's in-place form with a node of its own (in_place_node): its formulas are the
    row's given the result for `self` and told so (self_is_result=True); where a formula
    cannot do without the input (no self_is_result), torch leaves the derivative
    unimplemented, and so does the twin."""
    name = spec.name + "_"
    if all(f is NON_DIFFERENTIABLE or "self_is_result" in inspect.signature(f).parameters
           for f in inputs.values()):
        return OpSpec(name, node_name, spec.forward, args=spec.args, jvp=jvp, batches=batches,
                      **{n: _reading_result(f) for n, f in inputs.items()})

    def no_derivative(grad):
        raise RuntimeError(f"the derivative for 'inplace version of {spec.name}' is not "
                           f"implemented.")
    twin = OpSpec(name, node_name, spec.forward, args=spec.args, jvp=no_forward_ad(name, "self"),
                  self=no_derivative)
    twin.derivative_implemented = False
    return twin


def no_forward_ad(op_name, first_input, listed=True):
    """The jvp of a row torch gives none (its not_implemented), raising torch's error; of an
    op torch's derivatives.yaml does not list at all (`listed=False`), its fallback's."""
    def no_jvp(tangent):
        if not listed:
            raise NotImplementedError(f"Trying to use forward AD with aten::{op_name} that "
                                      f"does not support it.")
        raise NotImplementedError(
            f"Trying to use forward AD with {op_name} that does not support it because it "
            f"has not been implemented yet.\nPlease file an issue to PyTorch at https://github"
            f".com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
            f"prioritize its implementation or submit a PR adding the implementation to "
            f"derivatives.yaml")
    no_jvp.__signature__ = inspect.Signature([inspect.Parameter(
        first_input + "_t", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return no_jvp


def _reading_result(formula):
    """An in-place twin's formula: the row's, given the result for `self` and told so."""
    if formula is NON_DIFFERENTIABLE:
        return formula
    signature = inspect.signature(formula)

    def in_place(*args):
        return formula(*args, self_is_result=True)
    in_place.__signature__ = signature.replace(parameters=[
        p.replace(name="result") if p.name == "self" else p
        for p in signature.parameters.values() if p.default is p.empty])
    return in_place


class OpSpec:
    """One row of the table. `inputs` (keyword arguments, in order) are the tensor inputs,
    each a formula or NON_DIFFERENTIABLE; `args` the non-tensor arguments."""

    derivative_implemented = True  # (False: torch's not_implemented twins, _in_place_twin)

    # `spec`, not `self`: "self" is the name of most ops' first input, passed by keyword
    def __init__(spec, name, node_name, forward, *, args=(), outputs=("result",),
                 nondiff_outputs=(), variadic=False, promotes_dtype=True, view=False,
                 batches=False, jvp=None, hidden=(), undefined_grads=False, promotion=None,
                 promoted_args=(), promotion_always=False, broadcasts=False,
                 writes_overlapping=False, reads_no_overlap=False, method=False, method_aliases=(),
                 function=False, in_place_node=None, batched_jvp=None, complex=False,
                 one_formula=False, once_differentiable=False, **inputs):
        spec.name = name
        # its formulas run an op torch does not differentiate (a node NotImplemented): the
        # first order works, a second one raises torch's error at that second backward
        spec.once_differentiable = once_differentiable
        # its formulas are torch's for complex values too (the conjugates written in); a
        # linear op with real coefficients (shapes, sums) needs none; others refuse complex
        spec.complex = complex or jvp == "linear"
        spec.view = view  # the output shares memory (and the version counter) with input 0
        spec.promotes_dtype = promotes_dtype  # int inputs give float32 results, as in torch
        # torch's type promotion (dtypes.result_type of the differentiable inputs and the
        # arguments `promoted_args`) gives the result's dtype: "promote"; "float" also makes
        # an integer result the default float dtype (true division, exp, ...)
        spec.promotion = promotion
        spec.promoted_args = tuple(args.index(a) for a in promoted_args)
        spec.broadcasts = broadcasts  # shape errors say which dims do not broadcast
        spec.writes_overlapping = writes_overlapping  # in place, may write to an expand
        spec.reads_no_overlap = reads_no_overlap  # in place, no input may share memory with
        # the target, even fully
        # a one-input op with no arguments: Tensor.<name>() and its in-place twin
        # Tensor.<name>_(), and gradtool.<name>(), are generated (with `method_aliases`)
        spec.method_names = ((name,) + tuple(method_aliases)) if method else ()
        # `function`: gradtool.<name>(input, ...) is input.<name>(...), a Tensor method that
        # parses its arguments (written in the Tensor class)
        spec.function_names = (name,) if function else ()
        spec.forward = forward
        # a kernels.rounded_once kernel: the kernel itself, which call runs on float64 tensors
        spec.as_is = getattr(forward, "as_is", None)
        spec.args = tuple(args)
        spec.outputs = outputs
        spec.multi_output = outputs == MANY or len(outputs) > 1
        spec.nondiff_outputs = tuple(nondiff_outputs)
        spec.variadic = variadic
        # one formula (every input's) gives the gradients of all the inputs at once, as a
        # derivatives.yaml line `input, weight0, ...: f(...)`; variadic rows are such too
        spec.one_formula = one_formula or variadic
        spec.undefined_grads = undefined_grads  # `grads` keeps None for outputs without one
        spec.inputs = tuple(inputs)
        spec.diff_inputs = tuple(n for n, f in inputs.items() if f is not NON_DIFFERENTIABLE)
        spec.diff_positions = tuple(spec.inputs.index(n) for n in spec.diff_inputs)
        formula_list = []
        sources = {}  # each name a formula reads -> _source's answer (asked once per name)
        for input_name in spec.diff_inputs:
            params = _required_parameters(inputs[input_name])  # (a default: in_place_node's flag)
            for p in params:
                if p not in sources:
                    sources[p] = spec._source(p)
                if sources[p] is None:
                    raise TypeError(f"{node_name}: formula for {input_name!r} uses unknown "
                                    f"name {p!r}")
            formula_list.append((inputs[input_name], params))
        spec.formula_list = tuple(formula_list)
        # formulas of one output that read `grad` first: (fn, what else they read), for
        # OpNode.apply's lean path
        spec.grad_first = None if spec.one_formula or spec.multi_output or any(
            params[0] != "grad" or "grads" in params for _, params in spec.formula_list
        ) else tuple((None if _passes_grad(fn) else fn, params[1:])
                     for fn, params in spec.formula_list)
        # a saved value two formulas read: unpacked once per backward of the node (as torch's
        # generated code does), so a saved-tensor unpack hook runs once for it
        read = [p for _, params in spec.formula_list for p in params
                if sources[p][0] in ("input", "output")]
        spec.reads_saved_twice = len(read) != len(set(read))
        if batches and spec.multi_output:
            raise TypeError(f"{node_name}: a batch of gradients runs through one output")
        spec.all_differentiable = spec.diff_inputs == spec.inputs
        spec.result_differentiable = outputs == MANY or outputs[0] not in nondiff_outputs
        # torch's node exposes each value its formulas read as _saved_<name>, None (strides:
        # ()) when this call did not save it; gradtool's own helpers (`hidden`) stay private
        names = dict.fromkeys(p for _, params in spec.formula_list for p in params
                              if p not in ("grad", "grads"))
        exposed = {n: () if n.endswith("_sym_strides") else None for n in names
                   if n not in hidden and not n.endswith(_UNEXPOSED)}
        # (torch's nodes keep index ops' indices as a list of tensors)
        exposed_tensors = frozenset(n for n in exposed if n == "indices" or sources[
            n][0] in ("input", "output"))
        base = IndexOpNode if "indices" in spec.args else OpNode
        # (apply and release_saved: this class's own copies, as make_node below)
        own = {} if base is IndexOpNode else {"apply": own_code(OpNode.apply),
                                              "release_saved": own_code(OpNode.release_saved)}
        spec.node_class = type(node_name, (base,), {**own,
            "__slots__": (), "spec": spec, "_exposed": exposed,
            "_exposed_tensors": exposed_tensors,
            "saves_tensors": base is IndexOpNode or any(
                sources[n][0] in ("input", "output") for n in names),
            "_arg_index": {n: i for i, n in enumerate(spec.args) if n in exposed},
            "batches": batches, **exposed_attributes(exposed, exposed_tensors)})
        spec.make_node = own_code(make_node)  # (its stores into nodes see this row's class)
        spec.jvp = spec._jvp_formula(node_name, jvp)
        # a batch of tangents through a shape op at once (formulas.batched_*); other rows
        # that cannot broadcast over the batch take one tangent at a time
        spec.batched_jvp = batched_jvp
        # what to save, for each mask of the differentiable inputs that require grad
        spec.save_plans = tuple(spec._save_plan(mask, sources)
                                for mask in range(1 << len(spec.formula_list)))
        spec.dtype_check = spec._dtype_check(promotion_always)
        # torch's in-place form of an op whose input is gone once overwritten (leaky_relu_,
        # elu_, asinh_): a node of its own
        spec.in_place = in_place_node and _in_place_twin(spec, in_place_node, jvp, batches, inputs)

    def __repr__(self):
        return f"<op {self.name} -> {self.node_class.__name__}>"

    def __call__(spec, *values):
        """The row as a function of its tensor inputs, then its arguments (how a formula runs
        another row): dispatched and recorded when an input is a Tensor, else its forward."""
        inputs = values[:len(spec.inputs)]
        for x in inputs:  # (a loop, not any(): no generator on the relu backward's path)
            if isinstance(x, Tensor):
                return call(spec, inputs, values[len(spec.inputs):])
        return spec.forward(*values)

    def _dtype_check(self, always):
        """When the forward asks dtypes.result_type for the result's dtype (call's fast
        check): 0 never; 1 or 2 when the first one or two inputs' dtype is not numpy's
        result's; 3 always (variadic, three inputs, arguments that promote an integer result
        numpy keeps: `promotion_always`)."""
        if self.promotion is None:
            return 0
        n = len(self.diff_positions)
        return 3 if always or self.variadic or n > 2 or self.diff_positions[0] else n

    def _jvp_formula(self, node_name, jvp):
        """The row's jvp as (fn or rule name, the names it reads), checked like formulas."""
        if jvp is None or jvp in JVP_RULES:
            return jvp and (jvp, ())
        params = _required_parameters(jvp, with_defaults=True)
        for p in params:
            if p in ("grad", "grads") or (self._source(p) is None and not (
                    p.endswith("_t") and p[:-2] in self.diff_inputs)):
                raise TypeError(f"{node_name}: jvp uses unknown name {p!r}")
        return jvp, params

    def tangent(self, inputs, args, arrays, results, tangents, batch=None):
        """The output's tangent (a list of them for MANY outputs) from the inputs' `tangents`
        (aligned with `inputs`; None where an input has none), by the row's jvp. With `batch`
        B, each tangent has a leading dim of B tangents (forward-mode Jacobians): elementwise
        and reduction rows broadcast over it, other rows take one tangent at a time."""
        fn, params = self.jvp
        if batch is not None and fn not in ("elementwise", "reduction"):
            if self.batched_jvp is not None:
                return self.batched_jvp(tangents[0], results[0], args)
            return _one_at_a_time(self, inputs, args, arrays, results, tangents, batch)
        if fn == "linear":  # the op on the tangents (zeros for the inputs without one)
            if self.variadic:
                swapped = ([_or_zeros(t, x) for x, t in zip(inputs[0], tangents)],)
            else:
                swapped = list(inputs)
                for i in self.diff_positions:
                    swapped[i] = _or_zeros(tangents[i], inputs[i])
            out = call(self, swapped, args)
            if self.nondiff_outputs:  # (nll_loss's total_weight): no tangent
                return [None if name in self.nondiff_outputs else o
                        for name, o in zip(self.outputs, out)]
            return out
        if fn == "bilinear":
            total = None
            for i, t in enumerate(tangents):
                if t is not None:
                    swapped = list(inputs)
                    swapped[i] = t
                    total = _add(total, call(self, swapped, args))
            return total

        def value(name):  # what a jvp formula reads, by name, at forward time
            if name.endswith("_t") and name[:-2] in self.diff_inputs:  # `<input>_t`
                i = self.inputs.index(name[:-2])
                return _or_zeros(tangents[i], inputs[i])
            kind, where = self._source(name)
            if kind == "derived":
                return derived(arrays[where[0]], where[1])
            return {"input": inputs, "arg": args, "output": results}[kind][where]

        def backward(formula, grad):  # a backward formula, run at forward time
            function, names = formula
            return function(*(grad if name == "grad" else value(name) for name in names))

        if fn == "elementwise":
            total = None
            ndim = results[0]._data.ndim
            for name, formula in zip(self.diff_inputs, self.formula_list):
                t = tangents[self.inputs.index(name)]
                if t is not None:
                    if batch is not None:  # the batch dim first, the input's dims right-aligned
                        t = t.reshape((batch,) + (1,) * (ndim + 1 - t._data.ndim)
                                      + t._data.shape[1:])
                    total = _add(total, backward(formula, t))
            if any(total is t for t in tangents):  # (x + 1): its own tangent, not x's
                total = total.clone()
            return _like(total, results[0], batch)
        if fn == "reduction":  # one differentiable input, `self`
            ones = ones_like(results[0])
            dim = value("dim") if "dim" in self.args else None
            ndim = arrays[0].ndim
            dim = tuple(range(ndim)) if dim is None else dim
            if batch is not None:  # counted from the end: the batch dim stays out of it
                dim = tuple(d % ndim - ndim for d in ((dim,) if isinstance(dim, int) else dim))
            keepdim = bool(value("keepdim")) if "keepdim" in self.args else False
            g = backward(self.formula_list[0], ones)
            return (g * tangents[0]).sum(dim, keepdim=keepdim)
        out = fn(*(value(p) for p in params))  # a formula
        if isinstance(out, list):  # one tangent per output (var_mean, ...)
            return [None if o is None else _like(o, r) for o, r in zip(out, results)]
        return _like(out, results[0])

    def _source(self, name):
        """Where a formula parameter's value comes from: (kind, detail) or None if unknown."""
        if name in ("grad", "grads"):
            return ("grad", None)
        if name in self.inputs:
            return ("input", self.inputs.index(name))
        if name in self.args:
            return ("arg", self.args.index(name))
        if name == "result" or (self.outputs != MANY and name in self.outputs):
            return ("output", 0 if name == "result" else self.outputs.index(name))
        for suffix in _DERIVED:
            if name.endswith(suffix) and name[:-len(suffix)] in self.inputs:
                return ("derived", (self.inputs.index(name[:-len(suffix)]), suffix))
        return None

    def _save_plan(self, mask, sources):
        """(name, kind, where) of each value to save when the differentiable inputs flagged
        in `mask` require grad: what their formulas read, and (as torch) outputs and facts
        about the inputs other than strides whichever inputs require grad. (Arguments torch
        saves always are read from the node's `_args` when not saved here.) `sources`: each
        name's _source."""
        names = []
        for bit, (fn, params) in enumerate(self.formula_list):
            names.extend(p for p in params if p not in ("grad", "grads") and (
                mask >> bit & 1 or sources[p][0] == "output" or (
                    sources[p][0] == "derived" and not p.endswith("_sym_strides"))))
        return tuple((n,) + sources[n] for n in dict.fromkeys(names))


JVP_RULES = ("elementwise", "linear", "bilinear", "reduction")
_PLAIN_ARGUMENTS = ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)


def _required_parameters(formula, with_defaults=False):
    """The names of a formula's parameters without a default (with_defaults: all of them),
    in order: read off a plain function's code (the table's 400 rows are built at every
    import, and inspect.signature was a fifth of that), inspect.signature's for anything
    else."""
    code = getattr(formula, "__code__", None)
    if (type(formula) is not type(_required_parameters) or code.co_kwonlyargcount
            or code.co_flags & ~_PLAIN_ARGUMENTS or "__signature__" in vars(formula)
            or hasattr(formula, "__wrapped__")):
        return tuple(n for n, p in inspect.signature(formula).parameters.items()
                     if with_defaults or p.default is p.empty)
    defaults = 0 if with_defaults else len(formula.__defaults__ or ())
    return code.co_varnames[:code.co_argcount - defaults]


def _add(total, t):
    return t if total is None else total + t


def _or_zeros(tangent, x):
    """An input's tangent, or zeros where it has none (0 for a number)."""
    if tangent is not None:
        return tangent
    return zeros_like(x) if isinstance(x, Tensor) else 0


def _like(t, result, batch=None):
    """A tangent in its output's shape and dtype (a broadcast input's tangent is expanded),
    after `batch` tangents' leading dim when batched."""
    if not isinstance(t, Tensor):
        t = zeros_like(result) + t
    if t._data.dtype != result._data.dtype:
        t = t.to(result._data.dtype)
    shape = result._data.shape if batch is None else (batch,) + result._data.shape
    return t if t._data.shape == shape else t.expand(shape)


def _one_at_a_time(spec, inputs, args, arrays, results, tangents, batch):
    """A batched tangent for a row that cannot broadcast over the batch: each of the `batch`
    tangents by itself, stacked."""
    outs = [spec.tangent(inputs, args, arrays, results,
                         [None if t is None else t[b] for t in tangents])
            for b in range(batch)]
    if isinstance(outs[0], (list, tuple)):  # several outputs: stack each one's tangents
        return [None if o[0] is None else stack(list(o), 0) for o in zip(*outs)]
    return stack(outs, 0)
