"""Every built-in op in one table: its forward (numpy) and one derivative per input.

As in PyTorch's derivatives.yaml, a formula's parameter names say what it needs, and so what
the node saves in the forward pass:
  grad / grads      the gradient of the output (of every output, for multi-output ops)
  self, other, ...  tensor inputs, saved as `_saved_self`, `_saved_other`, ...
  result            the op's output, saved as `_saved_result` (kept without a reference cycle)
  dim, keepdim, ... the op's non-tensor arguments, saved as `_saved_dim`, ...
  self_sym_sizes, self_sym_numel, self_sym_strides, self_scalar_type, tensors_args_sizes,
  source_dim
                    facts about an input, recorded at forward time
A node saves only what the formulas of inputs that require grad need (as torch does).
Formulas are written with gradtool ops, so gradients of gradients come for free.
Inputs that are not differentiable are declared so with NON_DIFFERENTIABLE.

A backward that records nothing (no create_graph) needs no Tensors: a row may declare
`on_arrays`, formulas that run on the numpy arrays directly, with the same parameters and the
same math: `True` when its formulas are plain arithmetic and run unchanged on arrays, or
{input: formula} spelled for arrays. The op sweep checks both: first order on arrays, second
order through the Tensor formulas.

autograd.grad(..., is_grads_batched=True) runs a batch of gradients through the graph at once
(it makes functional.jacobian/hessian with vectorize=True one backward pass): a row may declare
`on_batches`, array formulas whose `grad` has a leading batch dim (sizes and dims are still
one element's): `True` when its array formulas broadcast over it unchanged (elementwise
rows), or {input: formula}. Nodes of other rows take part one batch element at a time. The
op sweep checks these against the array formulas, element by element.

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
from .. import tensor as _tensor  # bound late: tensor.py imports this table
from ..node import Node, SavedTensor
from . import formulas as F
from . import kernels as K

NON_DIFFERENTIABLE = "non_differentiable"
MANY = "many"  # an op returning a sequence of outputs whose length depends on its arguments
_DERIVED = ("_sym_sizes", "_sym_numel", "_sym_strides", "_scalar_type", "_args_sizes",
            "_dim")
_UNEXPOSED = ("_scalar_type", "_args_sizes")  # facts torch's nodes keep without a _saved_ name
_state = grad_mode.state


class OpNode(Node):
    """The grad_fn of a built-in op: evaluates its spec's formulas on the saved values."""

    __slots__ = ("_output_meta", "_args")
    spec = None

    def apply(self, grads):
        """The inputs' gradients from the outputs': Tensors from Tensors, or, recording
        nothing, arrays from arrays (the engine's path: see `takes_arrays`)."""
        spec = self.spec
        if spec.multi_output:  # zeros for outputs without a gradient, or None if the row
            # tells them apart (as torch's undefined gradients: no term, no graph)
            grads = F.materialize(grads, self._output_meta, spec.undefined_grads)
        if spec.variadic:  # one formula gives the gradients of every tensor in the list
            all_grads = self._evaluate(spec.formula_list[0], grads)
            return [g if child is not None else None
                    for g, (child, _) in zip(all_grads, self.next_functions)]
        # Arrays come from the engine recording nothing; Tensors, from anyone (and the
        # Tensor formulas carry tangents while a dual level is active: forward-over-reverse)
        as_arrays = type(grads[0]) is np.ndarray
        if not as_arrays and (spec.array_formulas is None or _state.grad_enabled
                              or _tensor._dual_level is not None):
            return [None if child is None else self._evaluate(formula, grads)
                    for (child, _), formula in zip(self.next_functions, spec.formula_list)]
        # Recording nothing: the row's array formulas, on the arrays
        out = self._apply_arrays(spec.array_formulas, grads[0] if as_arrays else grads[0]._data)
        return out if as_arrays else [None if g is None else _tensor.Tensor._wrap(g)
                                      for g in out]

    def release_saved(self):
        """Free the saved tensors; a number saved in a tensor input's place (x * 2's `other`)
        is a tensor to torch (a wrapped number), freed too, so a second backward fails."""
        saved = self._kept
        if not saved:
            return
        inputs = self.spec.inputs
        for name, value in saved.items():
            if type(value) is SavedTensor:
                value.release()
            elif name in inputs:
                saved[name] = SavedTensor.released()

    def apply_batched(self, grads):
        """apply() for a batch of gradients (arrays with a leading batch dim), recording
        nothing: the engine calls it for rows with `on_batches`."""
        spec = self.spec
        if spec.variadic:  # one formula: the gradients of every tensor in the list
            (fn, names), = spec.batch_formulas
            all_grads = fn(grads[0], *(self._kept[name] for name in names))
            return [g if child is not None else None
                    for g, (child, _) in zip(all_grads, self.next_functions)]
        return self._apply_arrays(spec.batch_formulas, grads[0])

    def _apply_arrays(self, formulas, grad):
        saved = self._kept
        out = []
        for (child, _), (fn, names) in zip(self.next_functions, formulas):
            if child is None:
                out.append(None)
                continue
            if names:  # what it reads after grad, saved tensors as their arrays
                args = [grad]
                for name in names:
                    v = saved[name]
                    args.append(v.unpack_array(self) if type(v) is SavedTensor else v)
                g = fn(*args)
            else:
                g = fn(grad)
            # a numpy scalar, from 0-d arrays, is made an array again
            out.append(g if type(g) is np.ndarray else np.asarray(g))
        return out

    def _evaluate(self, formula, grads):
        fn, params = formula
        saved = self._kept
        args = []
        for p in params:
            if p == "grad":
                args.append(grads[0])
            elif p == "grads":
                args.append(grads)
            else:
                v = saved[p]
                args.append(v.unpack(self) if type(v) is SavedTensor else v)
        return fn(*args)


class OpSpec:
    """One row of the table. `inputs` (keyword arguments, in order) are the tensor inputs,
    each a formula or NON_DIFFERENTIABLE; `args` the non-tensor arguments."""

    # `spec`, not `self`: "self" is the name of most ops' first input, passed by keyword
    def __init__(spec, name, node_name, forward, *, args=(), outputs=("result",),
                 nondiff_outputs=(), variadic=False, promotes_dtype=True, view=False,
                 on_arrays=None, on_batches=None, jvp=None, hidden=(), undefined_grads=False,
                 **inputs):
        spec.name = name
        spec.view = view  # the output shares memory (and the version counter) with input 0
        spec.promotes_dtype = promotes_dtype  # int inputs give float32 results, as in torch
        spec.promotion = None  # or "promote"/"float": see _promoting below
        spec.promoted_args = ()
        spec.dtype_check = 0
        spec.forward = forward
        spec.args = tuple(args)
        spec.outputs = outputs
        spec.multi_output = outputs == MANY or len(outputs) > 1
        spec.nondiff_outputs = tuple(nondiff_outputs)
        spec.variadic = variadic
        spec.undefined_grads = undefined_grads  # `grads` keeps None for outputs without one
        spec.inputs = tuple(inputs)
        spec.formulas = {}
        for input_name, formula in inputs.items():
            if formula is NON_DIFFERENTIABLE:
                continue
            params = tuple(inspect.signature(formula).parameters)
            for p in params:
                if spec._source(p) is None:
                    raise TypeError(f"{node_name}: formula for {input_name!r} uses unknown "
                                    f"name {p!r}")
            spec.formulas[input_name] = (formula, params)
        spec.diff_inputs = tuple(n for n in spec.inputs if n in spec.formulas)
        spec.diff_positions = tuple(spec.inputs.index(n) for n in spec.diff_inputs)
        spec.formula_list = tuple(spec.formulas[n] for n in spec.diff_inputs)
        spec.array_formulas = spec._array_formulas(node_name, on_arrays, "on_arrays")
        spec.batch_formulas = (spec.array_formulas if on_batches is True else
                               spec._array_formulas(node_name, on_batches, "on_batches"))
        if spec.multi_output and on_batches is not None or (
                on_batches is True and spec.array_formulas is None):
            raise TypeError(f"{node_name}: on_batches needs one output, and on_arrays to "
                            f"reuse (True)")
        spec.all_differentiable = spec.diff_inputs == spec.inputs
        spec.result_differentiable = outputs == MANY or outputs[0] not in nondiff_outputs
        # torch's node exposes each value its formulas read as _saved_<name>, None (strides:
        # ()) when this call did not save it; gradtool's own helpers (`hidden`) stay private
        names = dict.fromkeys(p for _, params in spec.formula_list for p in params
                              if p not in ("grad", "grads"))
        exposed = {n: () if n.endswith("_sym_strides") else None for n in names
                   if n not in hidden and not n.endswith(_UNEXPOSED)}
        spec.node_class = type(node_name, (OpNode,), {
            "__slots__": (), "spec": spec, "_exposed": exposed,
            "_exposed_tensors": frozenset(n for n in exposed if spec._is_tensor(n)),
            "saves_tensors": any(spec._source(n)[0] in ("input", "output") for n in names),
            "_arg_index": {n: i for i, n in enumerate(spec.args) if n in exposed},
            "takes_arrays": spec.array_formulas is not None and not spec.multi_output,
            "batches": spec.batch_formulas is not None})
        spec.jvp = spec._jvp_formula(node_name, jvp)
        # what to save, for each mask of the differentiable inputs that require grad
        spec.save_plans = tuple(spec._save_plan(mask)
                                for mask in range(1 << len(spec.formula_list)))

    def __repr__(self):
        return f"<op {self.name} -> {self.node_class.__name__}>"

    def _array_formulas(self, node_name, spelled, option):
        """The row's formulas for arrays (`on_arrays`) or batches of them (`on_batches`),
        aligned with formula_list, as (fn, the names it reads after `grad`), or None."""
        if spelled is None:
            return None
        if (self.variadic and option == "on_arrays") or (
                spelled is not True and set(spelled) != set(self.diff_inputs)):
            raise TypeError(f"{node_name}: {option} needs a formula for each of "
                            f"{self.diff_inputs}")
        formulas = []
        for input_name, (fn, params) in zip(self.diff_inputs, self.formula_list):
            if spelled is not True:  # spelled for arrays, reading the same values
                fn = spelled[input_name]
                if tuple(inspect.signature(fn).parameters) != params:
                    raise TypeError(f"{node_name}: the {option} formula for {input_name!r} "
                                    f"must take the Tensor formula's parameters {params}")
            if params[0] != "grad" or "grads" in params:
                raise TypeError(f"{node_name}: array formulas take `grad` first (one output)")
            formulas.append((fn, params[1:]))
        return tuple(formulas)

    def _jvp_formula(self, node_name, jvp):
        """The row's jvp as (fn or rule name, the names it reads), checked like formulas."""
        if jvp is None or jvp in JVP_RULES:
            return jvp and (jvp, ())
        params = tuple(inspect.signature(jvp).parameters)
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
            out = (_batched_linear(self, tangents[0], results[0], args) if fn == "linear"
                   and not self.variadic and len(tangents) == 1 else None)
            return out if out is not None else _one_at_a_time(
                self, inputs, args, arrays, results, tangents, batch)
        if fn == "linear":
            out = _tensor.call(self, self._with_tangents(inputs, tangents, zeros=True), args)
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
                    total = _add(total, _tensor.call(self, swapped, args))
            return total
        value = _Values(self, inputs, args, arrays, results)
        if fn == "elementwise":
            total = None
            ndim = results[0]._data.ndim
            for name, formula in zip(self.diff_inputs, self.formula_list):
                t = tangents[self.inputs.index(name)]
                if t is not None:
                    if batch is not None:  # the batch dim first, the input's dims right-aligned
                        t = t.reshape((batch,) + (1,) * (ndim + 1 - t._data.ndim)
                                      + t._data.shape[1:])
                    total = _add(total, value.call(formula, t))
            if any(total is t for t in tangents):  # (x + 1): its own tangent, not x's
                total = total.clone()
            return _like(total, results[0], batch)
        if fn == "reduction":  # one differentiable input, `self`
            ones = F.ones_like(results[0])
            dim = value.get("dim") if "dim" in self.args else None
            ndim = arrays[0].ndim
            dim = tuple(range(ndim)) if dim is None else dim
            if batch is not None:  # counted from the end: the batch dim stays out of it
                dim = tuple(d % ndim - ndim for d in ((dim,) if isinstance(dim, int) else dim))
            keepdim = bool(value.get("keepdim")) if "keepdim" in self.args else False
            g = value.call(self.formula_list[0], ones)
            return (g * tangents[0]).sum(dim, keepdim=keepdim)
        for name in self.diff_inputs:  # a formula: zeros for the inputs without a tangent
            value.known[name + "_t"] = tangents[self.inputs.index(name)]
        out = fn(*(value.get(p) for p in params))
        if isinstance(out, list):  # one tangent per output (var_mean, ...)
            return [None if o is None else _like(o, r) for o, r in zip(out, results)]
        return _like(out, results[0])

    def _with_tangents(self, inputs, tangents, zeros):
        """`inputs` with each differentiable input swapped for its tangent (or zeros)."""
        if self.variadic:
            return ([t if t is not None else F.zeros_like(x)
                     for x, t in zip(inputs[0], tangents)],)
        out = list(inputs)
        for i in self.diff_positions:
            t = tangents[i]
            x = inputs[i]
            out[i] = t if t is not None else (
                F.zeros_like(x) if isinstance(x, _tensor.Tensor) else 0)
        return out

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

    def _is_tensor(self, name):
        """Saved as a tensor by torch (index ops keep their indices as a list of tensors)."""
        return self._source(name)[0] in ("input", "output") or name == "indices"

    def _save_plan(self, mask):
        """(name, kind, where) of each value to save when the differentiable inputs flagged
        in `mask` require grad: what their formulas read, and (as torch) outputs and facts
        about the inputs other than strides whichever inputs require grad. (Arguments torch
        saves always are read from the node's `_args` when not saved here.)"""
        names = []
        for bit, (fn, params) in enumerate(self.formula_list):
            names.extend(p for p in params if p not in ("grad", "grads") and (
                mask >> bit & 1 or self._source(p)[0] == "output" or (
                    self._source(p)[0] == "derived" and not p.endswith("_sym_strides"))))
        return tuple((n,) + self._source(n) for n in dict.fromkeys(names))


JVP_RULES = ("elementwise", "linear", "bilinear", "reduction")


class _Values:
    """The values a jvp formula reads, by name, at forward time."""

    def __init__(self, spec, inputs, args, arrays, results):
        self.spec, self.inputs, self.args, self.arrays, self.results = (
            spec, inputs, args, arrays, results)
        self.known = {}

    def get(self, name):
        if name in self.known:
            v = self.known[name]
            if v is None and name.endswith("_t"):  # an input without a tangent: zeros
                x = self.inputs[self.spec.inputs.index(name[:-2])]
                v = F.zeros_like(x) if isinstance(x, _tensor.Tensor) else 0
            return v
        kind, where = self.spec._source(name)
        if kind == "input":
            return self.inputs[where]
        if kind == "arg":
            return self.args[where]
        if kind == "output":
            return self.results[where]
        return derived(self.arrays[where[0]], where[1])

    def call(self, formula, grad):
        fn, params = formula
        return fn(*(grad if p == "grad" else self.get(p) for p in params))


def _add(total, t):
    return t if total is None else total + t


def _like(t, result, batch=None):
    """A tangent in its output's shape and dtype (a broadcast input's tangent is expanded),
    after `batch` tangents' leading dim when batched."""
    if not isinstance(t, _tensor.Tensor):
        t = F.zeros_like(result) + t
    if t._data.dtype != result._data.dtype:
        t = t.to(result._data.dtype)
    shape = result._data.shape if batch is None else (batch,) + result._data.shape
    return t if t._data.shape == shape else t.expand(shape)


def _batched_linear(spec, t, result, args):
    """The shape ops and sums, on a batch of tangents at once (None for the others)."""
    name, shape, ndim = spec.name, (t._data.shape[0],) + result._data.shape, t._data.ndim - 1
    if name in ("view", "reshape", "squeeze", "unsqueeze"):
        return t.reshape(shape)
    if name in ("sum", "mean"):  # all dims, or `dim` counted from the end
        dims = args[0] if args else range(ndim)
        return getattr(t, name)(tuple(d % ndim - ndim for d in dims),
                                keepdim=bool(args and args[1]))
    if name == "expand":  # the input's dims right-aligned, after the batch dim
        return t.reshape((shape[0],) + (1,) * (len(shape) - 1 - ndim) + t._data.shape[1:]
                         ).expand(shape)
    if name == "t" and ndim < 2:
        return t
    if name in ("transpose", "permute", "t"):
        dims = {"t": (1, 0)}.get(name) or (
            args[0] if name == "permute" else _swapped(ndim, *args))
        return t.permute((0,) + tuple(d % ndim + 1 for d in dims))
    return None


def _swapped(ndim, dim0, dim1):
    dims = list(range(ndim))
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return dims


def _one_at_a_time(spec, inputs, args, arrays, results, tangents, batch):
    """A batched tangent for a row that cannot broadcast over the batch: each of the `batch`
    tangents by itself, stacked."""
    outs = [spec.tangent(inputs, args, arrays, results,
                         [None if t is None else t[b] for t in tangents])
            for b in range(batch)]
    if isinstance(outs[0], (list, tuple)):  # several outputs: stack each one's tangents
        return [None if o[0] is None else _tensor.stack(list(o), 0) for o in zip(*outs)]
    return _tensor.stack(outs, 0)


def derived(value, suffix):
    """A fact about an input recorded at forward time (value is the input's array(s))."""
    if suffix == "_sym_sizes":
        return value.shape
    if suffix == "_sym_numel":
        return value.size
    if suffix == "_sym_strides":  # in elements, as torch's
        return tuple(s // value.itemsize for s in value.strides)
    if suffix == "_scalar_type":
        return value.dtype
    if suffix == "_dim":
        return value.ndim
    return [a.shape for a in value]  # _args_sizes of a list input


op = OpSpec
ND = NON_DIFFERENTIABLE

# ======================= elementwise, one input =======================
NEG = op("neg", "NegBackward0", np.negative, jvp="elementwise", on_arrays=True, on_batches=True,
         self=lambda grad: -grad)
ABS = op("abs", "AbsBackward0", np.abs, jvp="elementwise",
         self=lambda grad, self: grad * self.sign(),
         on_batches=True, on_arrays=dict(self=lambda grad, self: grad * np.sign(self)))
SIGN = op("sign", "SignBackward0", np.sign, jvp="elementwise", self=lambda grad: F.zeros_like(grad))
EXP = op("exp", "ExpBackward0", np.exp, jvp="elementwise", on_arrays=True, on_batches=True,
         self=lambda grad, result: grad * result)
LOG = op("log", "LogBackward0", np.log, jvp="elementwise", on_arrays=True, on_batches=True,
         self=lambda grad, self: grad / self)
LOG1P = op("log1p", "Log1PBackward0", np.log1p, jvp="elementwise", on_arrays=True, on_batches=True,
           self=lambda grad, self: grad / (self + 1))
EXPM1 = op("expm1", "Expm1Backward0", np.expm1, jvp="elementwise", on_arrays=True, on_batches=True,
           self=lambda grad, result: grad * (result + 1))
SQRT = op("sqrt", "SqrtBackward0", np.sqrt, jvp="elementwise", on_arrays=True, on_batches=True,
          self=lambda grad, result: grad / (2 * result))
RECIPROCAL = op("reciprocal", "ReciprocalBackward0", K.reciprocal, jvp="elementwise",
                on_arrays=True,
                on_batches=True, self=lambda grad, result: -grad * result * result)
RSQRT = op("rsqrt", "RsqrtBackward0", K.rsqrt, jvp="elementwise", on_arrays=True, on_batches=True,
           self=lambda grad, result: -0.5 * grad * result ** 3)
SIN = op("sin", "SinBackward0", np.sin, jvp="elementwise",
         self=lambda grad, self: grad * self.cos(),
         on_batches=True, on_arrays=dict(self=lambda grad, self: grad * np.cos(self)))
COS = op("cos", "CosBackward0", np.cos, jvp="elementwise",
         self=lambda grad, self: -grad * self.sin(),
         on_batches=True, on_arrays=dict(self=lambda grad, self: -grad * np.sin(self)))
TAN = op("tan", "TanBackward0", np.tan, jvp="elementwise", on_arrays=True, on_batches=True,
         self=lambda grad, result: grad * (1 + result * result))
TANH = op("tanh", "TanhBackward0", np.tanh, jvp="elementwise", on_arrays=True, on_batches=True,
          self=lambda grad, result: grad * (1 - result * result))
SIGMOID = op("sigmoid", "SigmoidBackward0", K.sigmoid, jvp="elementwise",
             on_arrays=True, on_batches=True,
             self=lambda grad, result: grad * result * (1 - result))
# relu'(0) = 0: the gradient passes only where the output is positive; through
# threshold_backward, as torch, so the gradient is differentiable (in `result`, with
# derivative zero) and a second order gives zeros, not an error.
RELU = op("relu", "ReluBackward0", K.relu,
          jvp="elementwise",
           self=lambda grad, result: F.threshold_backward(grad, result, 0),
           on_arrays=dict(self=lambda grad, result: K.where(result > 0, grad, 0)),
           on_batches=True)
# clamp passes the gradient at the bounds themselves (torch: min <= x <= max).
CLAMP = op("clamp", "ClampBackward1", K.clamp, jvp="elementwise", args=("min", "max"),
           self=lambda grad, self, min, max: F.clamp_backward(grad, self, min, max))
CLAMP_MIN = op("clamp_min", "ClampMinBackward0", K.clamp,
               jvp="elementwise", args=("min", "max"),
               self=lambda grad, self, min: F.clamp_backward(grad, self, min, None))
CLONE = op("clone", "CloneBackward0", K.clone,
           jvp="linear", args=("memory_format",), on_arrays=True,
           on_batches=True,
           self=lambda grad: grad)
# Ops that overwrite their input entirely (used in place): no gradient flows to what was there.
COPY = op("copy_", "CopyBackwards", K.copy, jvp="elementwise",
          self=lambda grad: F.zeros_like(grad),
          src=lambda grad: grad)
FILL = op("fill_", "FillBackward2", K.fill,
          jvp="elementwise", args=("value",), self=lambda grad: F.zeros_like(grad))
FILL_TENSOR = op("fill_", "FillBackward3", K.fill_tensor,
                 jvp=lambda value_t: value_t, self=lambda grad: F.zeros_like(grad),
                 value=lambda grad: grad.sum())
ZERO = op("zero_", "ZeroBackward0", K.zero,
          jvp="elementwise", self=lambda grad: F.zeros_like(grad))
NORMAL = op("normal_", "NormalBackward0", K.normal,
            jvp="elementwise", args=("mean", "std", "generator"),
            self=lambda grad: F.zeros_like(grad))
UNIFORM = op("uniform_", "UniformBackward0", K.uniform, jvp="elementwise",
             args=("low", "high", "generator"),
             self=lambda grad: F.zeros_like(grad))
TO_COPY = op("to", "ToCopyBackward0", K.to_dtype, jvp="linear",
             args=("dtype",), promotes_dtype=False,
             self=lambda grad, self_scalar_type: grad.to(self_scalar_type))

# ======================= elementwise, two inputs (broadcasting) =======================
# Gradients come back in the broadcast shape; the engine sums them to each input's shape.
ADD = op("add", "AddBackward0", K.add, jvp="elementwise",
         args=("alpha",), on_arrays=True, on_batches=True,
         self=lambda grad: grad,
         other=lambda grad, alpha: F.scale(grad, alpha))
SUB = op("sub", "SubBackward0", K.sub, jvp="elementwise",
         args=("alpha",), on_arrays=True, on_batches=True,
         self=lambda grad: grad,
         other=lambda grad, alpha: F.scale(grad, -alpha))
RSUB = op("rsub", "RsubBackward1", K.rsub,
          jvp="elementwise", args=("other", "alpha"), on_arrays=True,
           on_batches=True, self=lambda grad, alpha: F.scale(grad, -alpha))
MUL = op("mul", "MulBackward0", K.mul,
         jvp="elementwise", on_arrays=True, on_batches=True,
         self=lambda grad, other: grad * other,
         other=lambda grad, self: grad * self)
DIV = op("div", "DivBackward0", K.div,
         jvp="elementwise", on_arrays=True, on_batches=True,
         self=lambda grad, other: grad / other,
         other=lambda grad, self, other: -grad * self / (other * other))
POW = op("pow", "PowBackward0", np.power, jvp="elementwise", args=("exponent",),
         self=lambda grad, self, exponent: F.pow_backward(grad, self, exponent),
         on_arrays=dict(self=lambda grad, self, exponent: K.pow_backward(grad, self, exponent)),
         on_batches=True)
POW_TENSOR = op("pow", "PowBackward1", np.power, jvp="elementwise",
                self=lambda grad, self, exponent: F.pow_backward_self(grad, self, exponent),
                exponent=lambda grad, self, exponent, result:
                    F.pow_backward_exponent(grad, self, exponent, result))
POW_SCALAR_BASE = op("pow", "PowBackward2", K.pow_scalar_base, jvp="elementwise", args=("self",),
                     exponent=lambda grad, self, exponent, result:
                         F.pow_backward_exponent(grad, self, exponent, result))
# Ties split the gradient in half between the two inputs, as torch does.
MAXIMUM = op("maximum", "MaximumBackward0", K.maximum,
             jvp="elementwise",
             self=lambda grad, self, other: F.tie_split(grad, self, other, self < other),
             other=lambda grad, self, other: F.tie_split(grad, self, other, self > other))
MINIMUM = op("minimum", "MinimumBackward0", K.minimum,
             jvp="elementwise",
             self=lambda grad, self, other: F.tie_split(grad, self, other, self > other),
             other=lambda grad, self, other: F.tie_split(grad, self, other, self < other))
WHERE = op("where", "WhereBackward0", K.where, jvp="elementwise",
           condition=ND,
           self=lambda grad, condition: F.where(condition, grad, 0),
           other=lambda grad, condition: F.where(condition, 0, grad),
           on_arrays=dict(self=lambda grad, condition: K.where(condition, grad, 0),
                          other=lambda grad, condition: K.where(condition, 0, grad)),
           on_batches=True)
MASKED_FILL = op("masked_fill", "MaskedFillBackward0", K.masked_fill, jvp="elementwise",
                 args=("value",),
                 self=lambda grad, mask: grad.masked_fill(mask, 0),
                 mask=ND)

# ======================= matrix products =======================
MM = op("mm", "MmBackward0", np.matmul, jvp="bilinear",
        self=lambda grad, mat2, self_sym_sizes, self_sym_strides:
            F.mm_mat1_backward(grad, mat2, self_sym_sizes, self_sym_strides),
        mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides:
            F.mm_mat2_backward(grad, self, mat2_sym_sizes, mat2_sym_strides),
        on_arrays=dict(
            self=lambda grad, mat2, self_sym_sizes, self_sym_strides:
                K.mm_mat1_backward(grad, mat2, self_sym_sizes, self_sym_strides),
            mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides:
                K.mm_mat2_backward(grad, self, mat2_sym_sizes, mat2_sym_strides)),
        on_batches=dict(  # matmul broadcasts over the batch dim
            self=lambda grad, mat2, self_sym_sizes, self_sym_strides: grad @ mat2.T,
            mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides: self.T @ grad))
# Linear's node: bias + input @ weight.t(), the product's backward as mm's
ADDMM = op("addmm", "AddmmBackward0", K.addmm, args=("beta", "alpha"),
           jvp=lambda self_t, mat1_t, mat2_t, mat1, mat2, beta, alpha: F.scale(self_t, beta)
               + F.scale(mat1_t.mm(mat2) + mat1.mm(mat2_t), alpha),
           self=lambda grad, beta: F.scale(grad, beta),
           mat1=lambda grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha: F.scale(
               F.mm_mat1_backward(grad, mat2, mat1_sym_sizes, mat1_sym_strides), alpha),
           mat2=lambda grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha: F.scale(
               F.mm_mat2_backward(grad, mat1, mat2_sym_sizes, mat2_sym_strides), alpha),
           on_arrays=dict(
               self=lambda grad, beta: F.scale(grad, beta),
               mat1=lambda grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha: F.scale(
                   K.mm_mat1_backward(grad, mat2, mat1_sym_sizes, mat1_sym_strides), alpha),
               mat2=lambda grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha: F.scale(
                   K.mm_mat2_backward(grad, mat1, mat2_sym_sizes, mat2_sym_strides), alpha)),
           on_batches=dict(
               self=lambda grad, beta: F.scale(grad, beta),
               mat1=lambda grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha:
                   F.scale(grad @ mat2.T, alpha),
               mat2=lambda grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha:
                   F.scale(mat1.T @ grad, alpha)))
MV = op("mv", "MvBackward0", np.matmul, jvp="bilinear",
        self=lambda grad, vec: grad.unsqueeze(1) * vec,
        vec=lambda grad, self: self.t().mv(grad))
DOT = op("dot", "DotBackward0", np.dot, jvp="bilinear",
         self=lambda grad, tensor: grad * tensor,
         tensor=lambda grad, self: grad * self)
BMM = op("bmm", "BmmBackward0", np.matmul, jvp="bilinear",
         self=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
         mat2=lambda grad, self: self.transpose(1, 2).bmm(grad))

# ======================= reductions =======================
SUM = op("sum", "SumBackward0", K.sum_all, jvp="linear",
         self=lambda grad, self_sym_sizes: grad.expand(self_sym_sizes),
         on_arrays=dict(self=lambda grad, self_sym_sizes: np.broadcast_to(grad, self_sym_sizes)),
         on_batches=dict(self=lambda grad, self_sym_sizes: K.expand_batch(grad, self_sym_sizes)))
SUM_DIM = op("sum", "SumBackward1", K.sum_dim, jvp="linear", args=("dim", "keepdim"),
             self=lambda grad, self_sym_sizes, dim, keepdim:
                 F.sum_backward(grad, self_sym_sizes, dim, keepdim),
             on_arrays=dict(self=lambda grad, self_sym_sizes, dim, keepdim:
                 K.sum_backward(grad, self_sym_sizes, dim, keepdim)),
             on_batches=dict(self=lambda grad, self_sym_sizes, dim, keepdim: K.sum_backward(
                 grad, K.batch_sizes(grad, self_sym_sizes), K.batch_dims(dim), keepdim)))
# (the array formula divides before broadcasting: the same quotients, one pass fewer)
MEAN = op("mean", "MeanBackward0", K.mean_all, jvp="linear",
          self=lambda grad, self_sym_sizes, self_sym_numel:
              grad.expand(self_sym_sizes) / self_sym_numel,
          on_arrays=dict(self=lambda grad, self_sym_sizes, self_sym_numel:
              np.broadcast_to(grad / self_sym_numel, self_sym_sizes)),
          on_batches=dict(self=lambda grad, self_sym_sizes, self_sym_numel:
              K.expand_batch(grad / self_sym_numel, self_sym_sizes)))
# (self_sym_numel: torch's mean_backward reads it for an empty dim list; saved as torch does)
MEAN_DIM = op("mean", "MeanBackward1", K.mean_dim,
              jvp="linear", args=("dim", "keepdim"),
              self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim:
                  F.mean_backward(grad, self_sym_sizes, dim, keepdim),
              on_arrays=dict(self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim:
                  K.mean_backward(grad, self_sym_sizes, dim, keepdim)),
              on_batches=dict(self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim:
                  K.mean_backward(grad, K.batch_sizes(grad, self_sym_sizes),
                                  K.batch_dims(dim), keepdim)))
VAR = op("var", "VarBackward0", K.var,
         jvp="reduction", args=("dim", "correction", "keepdim"),
         self=lambda grad, self, dim, correction, keepdim:
             F.var_backward(grad, self, dim, correction, keepdim))
STD = op("std", "StdBackward0", K.std, jvp="reduction", args=("dim", "correction", "keepdim"),
         self=lambda grad, self, dim, correction, keepdim, result:
             F.std_backward(grad, self, dim, correction, keepdim, result))
PROD = op("prod", "ProdBackward0", K.prod_all, jvp="reduction",
          self=lambda grad, self, result: F.prod_backward(grad, self, result, None, False))
PROD_DIM = op("prod", "ProdBackward1", K.prod_dim, jvp="reduction", args=("dim", "keepdim"),
              self=lambda grad, self, dim, keepdim, result:
                  F.prod_backward(grad, self, result, dim, keepdim))
# Full reductions spread the gradient evenly over ties; max(dim) sends it to the returned index.
MAX = op("max", "MaxBackward1", K.max_all, jvp="reduction",
         self=lambda grad, self, result: F.evenly_distribute_backward(grad, self, result))
MIN = op("min", "MinBackward1", K.min_all, jvp="reduction",
         self=lambda grad, self, result: F.evenly_distribute_backward(grad, self, result))
MAX_DIM = op("max", "MaxBackward0", K.max_dim, jvp="reduction", args=("dim", "keepdim"),
             outputs=("result", "indices"), nondiff_outputs=("indices",),
             self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                 F.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim))
MIN_DIM = op("min", "MinBackward0", K.min_dim, jvp="reduction", args=("dim", "keepdim"),
             outputs=("result", "indices"), nondiff_outputs=("indices",),
             self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                 F.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim))
AMAX = op("amax", "AmaxBackward0", K.amax, jvp="reduction", args=("dim", "keepdim"),
          self=lambda grad, self, dim, keepdim, result:
              F.amax_backward(grad, self, result, dim, keepdim))
AMIN = op("amin", "AminBackward0", K.amin, jvp="reduction", args=("dim", "keepdim"),
          self=lambda grad, self, dim, keepdim, result:
              F.amax_backward(grad, self, result, dim, keepdim))
LOGSUMEXP = op("logsumexp", "LogsumexpBackward0", K.logsumexp, jvp="reduction",
               args=("dim", "keepdim"),
               self=lambda grad, self, dim, keepdim, result:
                   F.logsumexp_backward(grad, self, result, dim, keepdim))
# torch 2's norm is linalg.vector_norm: it saves ord and dim (None: all)
NORM = op("norm", "LinalgVectorNormBackward0", K.norm, args=("ord", "dim", "keepdim"),
          jvp=lambda self_t, self, ord, dim, keepdim, result:
              F.norm_jvp(self_t, self, result, ord, dim, keepdim),
          self=lambda grad, self, ord, dim, keepdim, result:
              F.norm_backward(grad, self, result, ord, dim, keepdim))
SOFTMAX = op("softmax", "SoftmaxBackward0", K.softmax, args=("dim",),
             jvp=lambda self_t, result, dim: result * (self_t - (self_t * result).sum(dim, True)),
             self=lambda grad, result, dim: result * (grad - (grad * result).sum(dim, True)),
             on_arrays=dict(self=lambda grad, result, dim:
                 result * (grad - (grad * result).sum(dim, keepdims=True))),
             on_batches=dict(self=lambda grad, result, dim:
                 result * (grad - (grad * result).sum(dim + 1, keepdims=True))))
LOG_SOFTMAX = op("log_softmax", "LogSoftmaxBackward0", K.log_softmax, args=("dim",),
                 jvp=lambda self_t, result, dim: self_t - (self_t * result.exp()).sum(dim, True),
                 self=lambda grad, result, dim: grad - result.exp() * grad.sum(dim, True),
                 on_arrays=dict(self=lambda grad, result, dim:
                     grad - np.exp(result) * grad.sum(dim, keepdims=True)),
                 on_batches=dict(self=lambda grad, result, dim:
                     grad - np.exp(result) * grad.sum(dim + 1, keepdims=True)))

# ======================= shapes =======================
# for a batch of gradients: reshape to a batch of the input's sizes
_RESHAPE_BATCH = dict(self=lambda grad, self_sym_sizes:
                      grad.reshape(K.batch_sizes(grad, self_sym_sizes)))
_RESHAPE_DIM_BATCH = dict(self=lambda grad, self_sym_sizes, dim:
                          grad.reshape(K.batch_sizes(grad, self_sym_sizes)))
VIEW = op("view", "ViewBackward0", K.view,
          jvp="linear", view=True, args=("size",), on_arrays=True,
          on_batches=_RESHAPE_BATCH,
          self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
RESHAPE_ALIAS = op("reshape", "ReshapeAliasBackward0", K.view,
                   jvp="linear", view=True, args=("size",),
                   on_arrays=True, on_batches=_RESHAPE_BATCH,
                   self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
UNSAFE_VIEW = op("reshape", "UnsafeViewBackward0", K.reshape,
                 jvp="linear", args=("size",), on_arrays=True,
                 on_batches=_RESHAPE_BATCH,
                 self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
SQUEEZE = op("squeeze", "SqueezeBackward0", K.squeeze, jvp="linear", view=True, args=("dim",),
             on_arrays=True, on_batches=_RESHAPE_BATCH,
             self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes))
# matmul's 1-D @ 2-D squeezes its mm's fresh result in place (squeeze_(0)): not a view
SQUEEZE_ = op("squeeze_", "SqueezeBackward4", K.squeeze, jvp="linear", args=("dim",),
              on_arrays=True, on_batches=_RESHAPE_DIM_BATCH,
              self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
# squeeze(int) and squeeze(tuple) save their dim (an int, a tuple) as torch's nodes do
SQUEEZE_DIM = op("squeeze", "SqueezeBackward1", K.squeeze,
                 jvp="linear", view=True, args=("dim",),
                 on_arrays=True, on_batches=_RESHAPE_DIM_BATCH,
                 self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
SQUEEZE_DIMS = op("squeeze", "SqueezeBackward2", K.squeeze,
                  jvp="linear", view=True, args=("dim",),
                  on_arrays=True, on_batches=_RESHAPE_DIM_BATCH,
                  self=lambda grad, self_sym_sizes, dim: grad.reshape(self_sym_sizes))
UNSQUEEZE = op("unsqueeze", "UnsqueezeBackward0", K.unsqueeze,
               jvp="linear", view=True, args=("dim",),
               on_arrays=True, on_batches=dict(self=lambda grad, dim: grad.squeeze(dim + 1)),
               self=lambda grad, dim: grad.squeeze(dim))
TRANSPOSE = op("transpose", "TransposeBackward0", K.transpose, jvp="linear",
               view=True, args=("dim0", "dim1"),
               self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1),
               on_arrays=dict(self=lambda grad, dim0, dim1: np.swapaxes(grad, dim0, dim1)),
               on_batches=dict(self=lambda grad, dim0, dim1:
                   np.swapaxes(grad, dim0 + 1, dim1 + 1)))
T = op("t", "TBackward0", np.transpose, jvp="linear", view=True, self=lambda grad: grad.t(),
       on_arrays=dict(self=lambda grad: grad.T),
       on_batches=dict(self=lambda grad: K.transpose_batch(grad)))
PERMUTE = op("permute", "PermuteBackward0", K.permute, jvp="linear", view=True, args=("dims",),
             self=lambda grad, dims: grad.permute(tuple(np.argsort(dims))),
             on_arrays=dict(self=lambda grad, dims: np.transpose(grad, np.argsort(dims))),
             on_batches=dict(self=lambda grad, dims:
                 np.transpose(grad, (0, *(np.argsort(dims) + 1)))))
EXPAND = op("expand", "ExpandBackward0", K.expand, jvp="linear", view=True, args=("size",),
            self=lambda grad, self_sym_sizes: F.sum_to(grad, self_sym_sizes),
            on_arrays=dict(self=lambda grad, self_sym_sizes: K.sum_to(grad, self_sym_sizes)),
            on_batches=dict(self=lambda grad, self_sym_sizes:
                K.sum_to(grad, self_sym_sizes, batched=True)))

# ======================= indexing, joining, splitting =======================
# x[...] and x[:, :]: a new tensor on the same memory, as torch
ALIAS = op("alias", "AliasBackward0", K.alias,
           jvp="linear", view=True, on_arrays=True, on_batches=True,
           self=lambda grad: grad)
SELECT = op("select", "SelectBackward0", K.select,
            jvp="linear", view=True, args=("dim", "index"),
            self=lambda grad, self_sym_sizes, dim, index:
                F.select_backward(grad, self_sym_sizes, dim, index))
SLICE = op("slice", "SliceBackward0", K.slice_, jvp="linear",
           view=True, args=("dim", "start", "end", "step"),
           self=lambda grad, self_sym_sizes, dim, start, end, step:
               F.slice_backward(grad, self_sym_sizes, dim, start, end, step))
DIAGONAL = op("diagonal", "DiagonalBackward0", K.diagonal, jvp="linear", view=True,
              args=("offset", "dim1", "dim2"),
              self=lambda grad, self_sym_sizes, offset, dim1, dim2:
                  F.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2),
              on_arrays=dict(self=lambda grad, self_sym_sizes, offset, dim1, dim2:
                  K.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2)))
AS_STRIDED = op("as_strided", "AsStridedBackward0", K.take_flat,
                jvp="linear", args=("size", "flat_indices"),
                hidden=("self_sym_sizes", "self_sym_numel", "flat_indices"),
                self=lambda grad, self_sym_sizes, self_sym_numel, flat_indices:
                    F.index_backward(grad, (self_sym_numel,), (flat_indices,))
                    .reshape(self_sym_sizes))
INDEX = op("index", "IndexBackward0", K.index, jvp="linear", args=("indices",),
           self=lambda grad, self_sym_sizes, indices:
               F.index_backward(grad, self_sym_sizes, indices))
# leaky_relu's backward as an op of its own, as torch's: differentiable in `self` (with
# derivative zero), so gradients of gradients require grad as torch's do
LEAKY_RELU_BACKWARD = op("leaky_relu_backward", "LeakyReluBackwardBackward0",
                         K.leaky_relu_backward, jvp="elementwise",
                         args=("negative_slope", "self_is_result"),
                         grad_output=lambda grad, self, negative_slope:
                             F.leaky_relu_backward(grad, self, negative_slope, False),
                         self=lambda grad: F.zeros_like(grad))
THRESHOLD_BACKWARD = op("threshold_backward", "ThresholdBackwardBackward0", K.threshold_backward,
                        jvp="elementwise",
                        args=("threshold",),
                        grad_output=lambda grad, self, threshold:
                            F.threshold_backward(grad, self, threshold),
                        self=lambda grad: F.zeros_like(grad))
SELECT_BACKWARD = op("select_backward", "SelectBackwardBackward0", K.select_backward,
                     jvp="linear",
                     args=("input_sizes", "dim", "index"),
                     grad_output=lambda grad, dim, index: grad.select(dim, index))
SLICE_BACKWARD = op("slice_backward", "SliceBackwardBackward0", K.slice_backward, jvp="linear",
                    args=("input_sizes", "dim", "start", "end", "step"),
                    grad_output=lambda grad, dim, start, end, step:
                        F.slice(grad, dim, start, end, step))
DIAGONAL_BACKWARD = op("diagonal_backward", "DiagonalBackwardBackward0", K.diagonal_backward,
                       jvp="linear", args=("input_sizes", "offset", "dim1", "dim2"),
                       grad_output=lambda grad, offset, dim1, dim2:
                           grad.diagonal(offset, dim1, dim2))
INDEX_BACKWARD = op("index_backward", "IndexBackwardBackward0", K.index_backward, jvp="linear",
                    args=("input_sizes", "indices"),
                    grad_output=lambda grad, indices: F.index(grad, indices))
INDEX_PUT = op("index_put", "IndexPutBackward0", K.index_put, jvp="linear",
               args=("indices", "accumulate"),
               self=lambda grad, indices, accumulate:
                   grad if accumulate else F.index_put(grad, indices, 0),
               values=lambda grad, indices: F.index(grad, indices))
GATHER = op("gather", "GatherBackward0", K.gather,
            jvp="linear", args=("dim", "sparse_grad"),
            self=lambda grad, self, dim, index, sparse_grad:
                F.scatter_add(F.zeros(self.shape, grad), dim, index, grad),
            index=ND)
SCATTER = op("scatter", "ScatterBackward0", K.scatter, jvp="linear", args=("dim",),
             self=lambda grad, dim, index: grad.scatter(dim, index, 0),
             index=ND,
             src=lambda grad, dim, index: grad.gather(dim, index))
SCATTER_ADD = op("scatter_add", "ScatterAddBackward0", K.scatter_add, jvp="linear", args=("dim",),
                 self=lambda grad: grad,
                 index=ND,
                 src=lambda grad, dim, index: grad.gather(dim, index))
CAT = op("cat", "CatBackward0", K.cat, jvp="linear", args=("dim",), variadic=True,
         on_batches=dict(tensors=lambda grad, tensors_args_sizes, dim: np.split(
             grad, np.cumsum([s[dim] for s in tensors_args_sizes])[:-1], axis=dim + 1)),
         tensors=lambda grad, tensors_args_sizes, dim:
             F.cat_backward(grad, tensors_args_sizes, dim))
STACK = op("stack", "StackBackward0", K.stack, jvp="linear", args=("dim",), variadic=True,
           on_batches=dict(tensors=lambda grad, dim: list(np.moveaxis(grad, dim + 1, 0))),
           tensors=lambda grad, dim: [grad.select(dim, i) for i in range(grad.shape[dim])])
UNBIND = op("unbind", "UnbindBackward0", K.unbind, jvp="linear",
            view=True, args=("dim",), outputs=MANY,
            self=lambda grads, dim: F.stack(grads, dim))
SPLIT = op("split", "SplitBackward0", K.split,
           jvp="linear", view=True, args=("split_size", "dim"), outputs=MANY,
           self=lambda grads, self_sym_sizes, split_size, dim: F.cat(grads, dim))
SPLIT_WITH_SIZES = op("split_with_sizes", "SplitWithSizesBackward0", K.split_with_sizes,
                      jvp="linear", view=True,
                      args=("split_sizes", "dim"), outputs=MANY,
                      self=lambda grads, self_sym_sizes, split_sizes, dim: F.cat(grads, dim))

# ======================= activations =======================
ERF = op("erf", "ErfBackward0", K.erf,
         jvp="elementwise", self=lambda grad, self: F.erf_backward(grad, self),
         on_arrays=dict(self=lambda grad, self:
             grad * (2 / np.sqrt(np.pi)) * np.exp(-self * self)), on_batches=True)
GELU = op("gelu", "GeluBackward0", K.gelu,
          jvp="elementwise", args=("approximate",), on_batches=True,
          self=lambda grad, self, approximate: F.gelu_backward(grad, self, approximate),
          on_arrays=dict(self=lambda grad, self, approximate:
              K.gelu_backward(grad, self, approximate)))
SILU = op("silu", "SiluBackward0", K.silu,
          jvp="elementwise", self=lambda grad, self: F.silu_backward(grad, self),
          on_arrays=dict(self=lambda grad, self: K.silu_backward(grad, self)), on_batches=True)
SOFTPLUS = op("softplus", "SoftplusBackward0", K.softplus,
              jvp="elementwise", args=("beta", "threshold"),
              self=lambda grad, self, beta, threshold:
                  F.softplus_backward(grad, self, beta, threshold),
              on_arrays=dict(self=lambda grad, self, beta, threshold:
                  K.softplus_backward(grad, self, beta, threshold)), on_batches=True)
# leaky_relu'(0) = negative_slope: the gradient passes whole only where x > 0 (as torch)
LEAKY_RELU = op("leaky_relu", "LeakyReluBackward0", K.leaky_relu,
                jvp="elementwise", args=("negative_slope",),
                self=lambda grad, self, negative_slope:
                    F.leaky_relu_backward(grad, self, negative_slope, False),
                on_arrays=dict(self=lambda grad, self, negative_slope:
                    np.where(self > 0, grad, grad * negative_slope)), on_batches=True)
# in place, the input is gone: the output's sign says which side it was on
LEAKY_RELU_ = op("leaky_relu_", "LeakyReluBackward1", K.leaky_relu,
                 jvp="elementwise", args=("negative_slope",),
                 self=lambda grad, result, negative_slope:
                     F.leaky_relu_backward(grad, result, negative_slope, True),
                 on_arrays=dict(self=lambda grad, result, negative_slope:
                     np.where(result > 0, grad, grad * negative_slope)), on_batches=True)
ELU = op("elu", "EluBackward0", K.elu,
         jvp="elementwise", args=("alpha", "scale", "input_scale"),
         self=lambda grad, self, alpha, scale, input_scale:
             F.elu_backward(grad, alpha, scale, input_scale, self=self),
         on_arrays=dict(self=lambda grad, self, alpha, scale, input_scale:
             K.elu_backward(grad, alpha, scale, input_scale, self=self)), on_batches=True)
ELU_ = op("elu_", "EluBackward1", K.elu,
          jvp="elementwise", args=("alpha", "scale", "input_scale"),
          self=lambda grad, result, alpha, scale, input_scale:
              F.elu_backward(grad, alpha, scale, input_scale, result=result),
          on_arrays=dict(self=lambda grad, result, alpha, scale, input_scale:
              K.elu_backward(grad, alpha, scale, input_scale, result=result)), on_batches=True)
BERNOULLI = op("bernoulli", "BernoulliBackward0", K.bernoulli,
               jvp="elementwise", args=("generator",),
               self=lambda grad: F.zeros_like(grad))

# ======================= losses (one node each, as torch's) =======================
# reduction is torch's enum: 0 none, 1 mean, 2 sum
MSE_LOSS = op("mse_loss", "MseLossBackward0", K.mse_loss, args=("reduction",),
              jvp=lambda self_t, target_t, self, target, reduction: F.reduce_loss(
                  F.mse_loss_backward(1, self, target, 0) * (self_t - target_t), reduction),
              self=lambda grad, self, target, reduction:
                  F.mse_loss_backward(grad, self, target, reduction),
              target=lambda grad, self, target, reduction:
                  -F.mse_loss_backward(grad, self, target, reduction),
              on_arrays=dict(self=lambda grad, self, target, reduction:
                                 K.mse_loss_backward(grad, self, target, reduction),
                             target=lambda grad, self, target, reduction:
                                 -K.mse_loss_backward(grad, self, target, reduction)))
SMOOTH_L1_LOSS = op("smooth_l1_loss", "SmoothL1LossBackward0", K.smooth_l1_loss,
                    jvp=lambda self_t, target_t, self, target, reduction, beta: F.reduce_loss(
                        F.smooth_l1_loss_backward(1, self, target, 0, beta) * (self_t - target_t),
                        reduction),
                    args=("reduction", "beta"),
                    self=lambda grad, self, target, reduction, beta:
                        F.smooth_l1_loss_backward(grad, self, target, reduction, beta),
                    target=lambda grad, self, target, reduction, beta:
                        -F.smooth_l1_loss_backward(grad, self, target, reduction, beta))
HUBER_LOSS = op("huber_loss", "HuberLossBackward0", K.huber_loss, args=("reduction", "delta"),
                jvp=lambda self_t, target_t, self, target, reduction, delta: F.reduce_loss(
                    F.huber_loss_backward(1, self, target, 0, delta) * (self_t - target_t),
                    reduction),
                self=lambda grad, self, target, reduction, delta:
                    F.huber_loss_backward(grad, self, target, reduction, delta),
                target=lambda grad, self, target, reduction, delta:
                    -F.huber_loss_backward(grad, self, target, reduction, delta))
BINARY_CROSS_ENTROPY = op(
    "binary_cross_entropy", "BinaryCrossEntropyBackward0", K.binary_cross_entropy,
    jvp=lambda self_t, target_t, self, target, weight, reduction: F.reduce_loss(
        F.binary_cross_entropy_backward(self_t, self, target, weight, 0)
        + F.binary_cross_entropy_target_backward(target_t, self, target, weight, 0), reduction),
    args=("reduction",),
    self=lambda grad, self, target, weight, reduction:
        F.binary_cross_entropy_backward(grad, self, target, weight, reduction),
    target=lambda grad, self, target, weight, reduction:
        F.binary_cross_entropy_target_backward(grad, self, target, weight, reduction),
    weight=ND)
BINARY_CROSS_ENTROPY_WITH_LOGITS = op(
    "binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
    K.binary_cross_entropy_with_logits, args=("reduction",),
    jvp=lambda self_t, target_t, self, target, weight, pos_weight, reduction: F.reduce_loss(
        F.bce_with_logits_backward(self_t, self, target, weight, pos_weight, 0)
        + F.bce_with_logits_target_backward(target_t, self, target, weight, pos_weight, 0),
        reduction),
    self=lambda grad, self, target, weight, pos_weight, reduction:
        F.bce_with_logits_backward(grad, self, target, weight, pos_weight, reduction),
    target=lambda grad, self, target, weight, pos_weight, reduction:
        F.bce_with_logits_target_backward(grad, self, target, weight, pos_weight, reduction),
    weight=ND, pos_weight=ND)
# nll_loss's second output is the total weight the mean divides by (saved, as torch)
_NLL = dict(jvp="linear", args=("reduction", "ignore_index"), outputs=("result", "total_weight"),
            nondiff_outputs=("total_weight",),
            self=lambda grad, self, target, weight, reduction, ignore_index, total_weight:
                F.nll_loss_backward(grad, self, target, weight, reduction, ignore_index,
                                    total_weight),
            target=ND, weight=ND)  # (inputs in the forward's order)
NLL_LOSS = op("nll_loss", "NllLossBackward0", K.nll_loss, **_NLL)
NLL_LOSS2D = op("nll_loss2d", "NllLoss2DBackward0", K.nll_loss, **_NLL)  # (N, C, H, W) inputs
# their backward, an op (its gradient is nll_loss of the gradient's gradient; none for self)
_NLL_BACKWARD = dict(jvp="linear", args=("reduction", "ignore_index"),
                     grad_output=lambda grad, target, weight, reduction, ignore_index:
                         F.nll_loss(grad, target, weight, reduction, ignore_index),
                     self=lambda grad: F.zeros_like(grad), target=ND, weight=ND, total_weight=ND)
NLL_LOSS_BACKWARD = op("nll_loss_backward", "NllLossBackwardBackward0", K.nll_loss_backward,
                       **_NLL_BACKWARD)
NLL_LOSS2D_BACKWARD = op("nll_loss2d_backward", "NllLoss2DBackwardBackward0",
                         K.nll_loss_backward, **_NLL_BACKWARD)
# mean (result1) and 1/std (result2) are outputs, saved; the formulas use them
NATIVE_LAYER_NORM = op(
    "native_layer_norm", "NativeLayerNormBackward0", K.native_layer_norm,
    jvp=lambda input_t, weight_t, bias_t, input, weight, normalized_shape, result1, result2:
        F.layer_norm_jvp(input_t, weight_t, bias_t, input, weight, normalized_shape, result1,
                         result2),
    args=("normalized_shape", "eps"), outputs=("result", "result1", "result2"),
    nondiff_outputs=("result1", "result2"),
    # torch's one formula for the three reads input, weight and bias: it saves all of them
    input=lambda grad, input, weight, bias, normalized_shape, result1, result2:
        F.layer_norm_backward_input(grad, input, weight, normalized_shape, result1, result2),
    weight=lambda grad, input, weight, bias, normalized_shape, result1, result2:
        F.layer_norm_backward_weight(grad, input, normalized_shape, result1, result2),
    bias=lambda grad, normalized_shape, bias: F.sum_to(grad, bias.shape))

# ======================= reductions with two results, scans =======================
VAR_MEAN = op("var_mean", "VarMeanBackward0", K.var_mean, args=("dim", "correction", "keepdim"),
              jvp=lambda self_t, self, dim, correction, keepdim, result0:
                  F.var_mean_jvp(self_t, self, dim, correction, keepdim, result0),
              outputs=("result0", "result1"), undefined_grads=True,
              self=lambda grads, self, dim, correction, keepdim:
                  F.var_mean_backward(grads, self, dim, correction, keepdim))
STD_MEAN = op("std_mean", "StdMeanBackward0", K.std_mean, args=("dim", "correction", "keepdim"),
              jvp=lambda self_t, self, dim, correction, keepdim, result0:
                  F.var_mean_jvp(self_t, self, dim, correction, keepdim, result0, std=True),
              outputs=("result0", "result1"), undefined_grads=True,
              self=lambda grads, self, dim, correction, keepdim, result0:
                  F.std_mean_backward(grads, self, dim, correction, keepdim, result0))
CUMSUM = op("cumsum", "CumsumBackward0", K.cumsum,
            jvp="linear", args=("dim",),
            self=lambda grad, dim: F.reverse_cumsum(grad, dim),
            on_arrays=dict(self=lambda grad, dim: K.reverse_cumsum(grad, dim)),
            on_batches=dict(self=lambda grad, dim: K.reverse_cumsum(grad, dim + 1)))
CUMPROD = op("cumprod", "CumprodBackward0", K.cumprod,
             args=("dim",),
             jvp=lambda self_t, self, dim, result: F.cumprod_jvp(self_t, self, dim, result),
             self=lambda grad, self, dim, result: F.cumprod_backward(grad, self, dim, result))

# ======================= reordering, repeating =======================
FLIP = op("flip", "FlipBackward0", K.flip,
          jvp="linear", args=("dims",),
          self=lambda grad, dims: grad.flip(dims),
          on_arrays=dict(self=lambda grad, dims: np.flip(grad, dims)),
          on_batches=dict(self=lambda grad, dims: np.flip(grad, K.batch_dims(dims))))
ROLL = op("roll", "RollBackward0", K.roll,
          jvp="linear", args=("shifts", "dims"),
          self=lambda grad, shifts, dims: grad.roll(tuple(-s for s in shifts), dims))
REPEAT = op("repeat", "RepeatBackward0", K.repeat,
            jvp="linear", args=("repeats",),
            self=lambda grad, repeats, self_sym_sizes:
                F.repeat_backward(grad, repeats, self_sym_sizes))
TRIU = op("triu", "TriuBackward0", K.triu,
          jvp="linear", args=("diagonal",), on_batches=True,
          self=lambda grad, diagonal: grad.triu(diagonal),
          on_arrays=dict(self=lambda grad, diagonal: np.triu(grad, diagonal)))
TRIL = op("tril", "TrilBackward0", K.tril,
          jvp="linear", args=("diagonal",), on_batches=True,
          self=lambda grad, diagonal: grad.tril(diagonal),
          on_arrays=dict(self=lambda grad, diagonal: np.tril(grad, diagonal)))
# transpose_ changes the tensor's own shape (see Tensor.transpose_)
TRANSPOSE_ = op("transpose_", "TransposeBackward1", K.transpose,
                jvp=lambda self_t, dim0, dim1: self_t.transpose(dim0, dim1), args=("dim0", "dim1"),
                self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1))

T_ = op("t_", "TBackward1", np.transpose, jvp=lambda self_t: self_t.t(),
        self=lambda grad: grad.t())

# ======================= selecting, sorting =======================
SORT = op("sort", "SortBackward0", K.sort,
          jvp=lambda self_t, dim, indices: self_t.gather(dim, indices), args=("dim", "descending"),
          outputs=("values", "indices"), nondiff_outputs=("indices",),
          self=lambda grad, dim, indices, self_sym_sizes:
              F.value_selecting_backward(grad, dim, indices, self_sym_sizes, True))
TOPK = op("topk", "TopkBackward0", K.topk,
          args=("k", "dim", "largest", "sorted"),
          jvp=lambda self_t, dim, indices: self_t.gather(dim, indices),
          outputs=("values", "indices"), nondiff_outputs=("indices",),
          self=lambda grad, dim, indices, self_sym_sizes:
              F.value_selecting_backward(grad, dim, indices, self_sym_sizes, True))
INDEX_SELECT = op("index_select", "IndexSelectBackward0", K.index_select,
                  jvp="linear", args=("dim",),
                  self=lambda grad, self_sym_sizes, dim, index:
                      F.index_select_backward(grad, self_sym_sizes, dim, index),
                  index=ND)
INDEX_ADD = op("index_add", "IndexAddBackward0", K.index_add,
               jvp="linear", args=("dim", "alpha"),
               self=lambda grad: grad,
               index=ND,
               source=lambda grad, dim, index, source, source_dim, alpha:
                   F.index_add_source_backward(grad, dim, index, source, source_dim, alpha))


# ======================= type promotion =======================
def _promoting(kind, *specs, args=(), always=False):
    """torch's type promotion (dtypes.result_type) gives these ops' result dtype from their
    differentiable inputs and the scalar arguments `args`: "promote"; "float" also makes an
    integer result the default float dtype (true division, exp, ...). The forward asks for
    it when an operand's dtype is not numpy's result's (`dtype_check` 1 or 2: the first one
    or two inputs), or `always` (3: variadic, three inputs, arguments that promote an
    integer result numpy keeps)."""
    for spec in specs:
        spec.promotion, spec.promoted_args = kind, tuple(spec.args.index(a) for a in args)
        n = len(spec.diff_positions)
        spec.dtype_check = 3 if always or spec.variadic or n > 2 or spec.diff_positions[0] else n


_promoting("promote", ADD, SUB, MUL, MAXIMUM, MINIMUM, WHERE, POW_TENSOR, CAT, STACK)
_promoting("promote", CLAMP, args=("min", "max"), always=True)
_promoting("promote", RSUB, args=("other",))
_promoting("promote", POW, args=("exponent",))
_promoting("promote", POW_SCALAR_BASE, args=("self",))
_promoting("float", DIV, EXP, LOG, LOG1P, EXPM1, SQRT, RSQRT, RECIPROCAL, SIN, COS, TAN, TANH,
           SIGMOID)

TABLE = {name: value for name, value in globals().items() if isinstance(value, OpSpec)}
