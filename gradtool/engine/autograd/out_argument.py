"""`out=`: a function's result written into a tensor the caller gives, as torch writes it:
the result's dtype must cast to out's (or, for the functions in DTYPE_RULES, meet their rule),
out takes the result's shape (a warning if it had elements of another shape), and no input
may require grad while grad mode is on (torch's out= functions are not differentiable). Some
functions torch writes otherwise: see WRITTEN_BY."""
import collections
import functools
import warnings

import numpy as np

from . import dtypes
from .grad_mode import is_grad_enabled, no_grad
from .node import Node
from .tensor import Tensor


def written_to(out, result, op_name, rules=None):
    """out holding result (returned), or result itself when out is None. rules: the
    function's rows of DTYPE_RULES (rules_of), if it has any."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{op_name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _refuse_grad(op_name, (result,), (out,))
    _check_dtype(out, result, op_name, rules)
    return _write(out, result)


def _refuse_grad(op_name, results, outs):
    op_name = _KERNEL_NAMES.get(op_name, op_name)
    if any(r.requires_grad for r in results) or (
            is_grad_enabled() and any(o.requires_grad for o in outs)):
        raise RuntimeError(f"{op_name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")


# what each kind of DTYPE_RULES lets out be, given the result's dtype
_ALLOWS = {
    "same": lambda source, target: target == source,
    "cast": lambda source, target: dtypes.can_cast(source, target),
    "float": lambda source, target: target.kind in "fV" or source.kind not in "fV",
    "float_or_complex": lambda source, target: target.kind in "fcV",
    "real": lambda source, target: target.kind != "c",
    "bool": lambda source, target: target.kind == "b" or target == np.uint8,
    "any": lambda source, target: True,
}
_ERRORS = {"": RuntimeError, "TypeError": TypeError, "NotImplementedError": NotImplementedError}


def _check_dtype(out, result, op_name, rules):
    source, target = result._data.dtype, out._data.dtype
    for kind, message in rules or (_CASTING,):
        kind, _, error = kind.partition("-")
        if _ALLOWS[kind](source, target):
            continue
        names, c_names = dtypes.LEGACY_TYPE_NAMES, dtypes.C_TYPE_NAMES
        short = op_name.partition("_")[2] if op_name.startswith(("linalg_", "fft_")) else op_name
        raise _ERRORS[error](message.format(
            want=names[source.name], got=names[target.name], want_c=c_names[source.name],
            got_c=c_names[target.name], short=short, dotted=op_name.replace("linalg_", "linalg."),
            out_int32=source == np.int32, want_t=_tensor_type(source),
            got_t=_tensor_type(target)))


def _tensor_type(dtype):
    """A dtype as torch's older messages name tensors of it: torch.FloatTensor, where it has
    such a class, or the type's name (CPUBoolType, CPUComplexFloatType)."""
    name = dtypes.LEGACY_TYPE_NAMES[dtype.name]
    return f"CPU{name}Type" if dtype.kind in "bc" else f"torch.{name}Tensor"


_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {had}, which does not "
    "match the required output shape {required}. This behavior is deprecated, and in a future "
    "PyTorch release outputs will not be resized unless they have zero elements. You can "
    "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
    "t.resize_(0).")


def _write(out, result, warn=True, seen_as=None):
    """out resized to result's shape and holding result's values."""
    _resize(out, result, warn, seen_as)
    with no_grad():
        out.copy_(result)
    return out


def _resize(out, result, warn=True, seen_as=None):
    """out resized to result's shape (warned of, unless `warn` is False, when it had elements).
    seen_as(out): (out's shape, the shape) as torch's warning names them, where torch resizes
    to another shape first (kthvalue: the shape with keepdim)."""
    if out.shape != result.shape:
        had, required = seen_as(out) if seen_as else (list(out.shape), list(result.shape))
        if out._data.size and warn and had != required:
            warnings.warn(_RESIZE_WARNING.format(had=had, required=required), UserWarning,
                          stacklevel=6)
        out.resize_(result.shape)
        out._version_counter[0] -= 1  # (torch counts the write into out, not the resize)


def check_factory_dtype(dtype, out):
    """A factory's dtype, when given, must be out's."""
    if dtype is not None and dtype != out.dtype:
        names = dtypes.LEGACY_TYPE_NAMES
        raise RuntimeError(f"dtype {names[dtypes.to_numpy_dtype(dtype).name]} does not match "
                           f"dtype of out parameter ({names[out._data.dtype.name]})")


def written_as_arange_writes(out, result):
    """torch's arange(out=) and what it writes through it (fftfreq): out keeps its shape when
    it has as many elements as the result; otherwise it becomes 1-d, with arange's own
    warning when it had elements."""
    if out.numel() == result.numel():
        result = result.reshape(out.shape)
    elif out.numel():
        warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is "
                      f"{out.numel()} which does not match the computed number of elements "
                      f"{result.numel()}. Note that this may occur as a result of rounding "
                      f"error. The out tensor will be resized to a tensor of shape "
                      f"({result.numel()},).", UserWarning, stacklevel=5)
    return _write(out, result, warn=False)


# the kernel torch's function runs, whose name its refusal of out= with grad gives
_KERNEL_NAMES = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
    "argsort": "sort", "true_divide": "div", "frobenius_norm": "norm",
    "gammainc": "igamma", "gammaincc": "igammac", "multigammaln": "mvlgamma",
    "clip": "clamp", "column_stack": "cat", "concat": "cat", "concatenate": "cat",
    "cross": "linalg_cross", "diff": "sub", "divide": "div", "dstack": "cat", "fix": "trunc",
    "float_power": "pow", "hstack": "cat", "kron": "mul", "msort": "sort", "multiply": "mul",
    "nanmean": "nansum", "negative": "neg", "norm": "linalg_vector_norm", "row_stack": "cat",
    "square": "pow", "subtract": "sub", "take_along_dim": "gather", "vstack": "cat",
    "linalg_matmul": "matmul", "linalg_multi_dot": "mm", "linalg_solve": "_linalg_solve_ex",
    "linalg_solve_ex": "_linalg_solve_ex", "linalg_vecdot": "sum", "lu_solve": "linalg_lu_solve",
    "fft_fft": "_fft_r2c", "fft_rfft": "_fft_r2c", "fft_rfft2": "_fft_r2c",
    "fft_rfftn": "_fft_r2c", "fft_hfft": "_fft_c2r", "fft_irfft": "_fft_c2r",
    "fft_fft2": "_fft_c2c", "fft_fftn": "_fft_c2c", "fft_ifft2": "_fft_c2c",
    "fft_ifftn": "_fft_c2c", "fft_ihfft2": "_fft_c2c", "fft_ihfftn": "_fft_c2c"}
_CASTING = ("cast", "result type {want} can't be cast to the desired output type {got}")
# torch's other checks of out's dtype, with its words, as (kind, message, functions): "same"
# wants the result's dtype itself, "float" a floating one for a floating result,
# "float_or_complex" either, "real" no complex one, "bool" a bool one (or torch's older
# uint8), "cast" the casting rule, "any" takes every dtype ("-TypeError",
# "-NotImplementedError": raised as that, not as a RuntimeError). In the message, {want} and
# {got} are the result's and out's dtypes (legacy names, C++ names with _c, tensor types with
# _t), {short} the function's name, {dotted} its name as torch.linalg.X spells it, {out_int32}
# whether the result is int32. A function in several rows meets each, in the rows' order;
# `name.field` is the rule of one result of a tuple (checked before the others, in the rows'
# order: torch checks frexp's mantissa first, median's indices).
DTYPE_RULES = [
    ("cast", "matrix_power: Expected result to be safely castable from {want} dtype, but got "
     "result with dtype {got}", "matrix_power linalg_matrix_power"),
    ("same", 'Expected out tensor to have dtype {want_c}, but got {got_c} instead',
     "alias_copy as_strided_copy detach_copy diagonal_copy expand_copy permute_copy "
     "select_copy slice_copy squeeze_copy t_copy transpose_copy unfold_copy unsqueeze_copy "
     "view_copy view_as_real_copy view_as_complex_copy argmax argmin argsort "
     "frobenius_norm index_add index_copy isin log_softmax scatter scatter_add "
     "slice_scatter slogdet softmax addmm addmv aminmax baddbmm bmm cross diag gather "
     "inverse linalg_cholesky linalg_cholesky_ex linalg_cross linalg_det linalg_eigh "
     "linalg_eigvalsh linalg_inv linalg_inv_ex linalg_lu linalg_lu_factor "
     "linalg_lu_factor_ex linalg_matmul linalg_qr linalg_slogdet linalg_solve "
     "linalg_solve_ex linalg_svd linalg_svdvals linalg_vector_norm lu_unpack matmul max "
     "linalg_ldl_factor linalg_ldl_factor_ex linalg_ldl_solve linalg_lu_solve lu_solve "
     "min mm msort norm qr renorm sort svd take_along_dim topk triangular_solve tril triu "
     "matrix_power linalg_matrix_power split_with_sizes_copy unbind_copy"),
    ("same", 'Found dtype {got} but expected {want}',
     "absolute clamp_max abs bitwise_not ceil clamp clip conj_physical fix floor frac neg "
     "negative round sgn sign trunc"),
    ("same", 'expected scalar_type {want} but found {got}',
     "cummax cummin logcumsumexp"),
    ("same", 'expected scalar type {want} but found {got}',
     "spmm linalg_solve_triangular"),
    ("same", 'result dtype {got} does not match input dtype {want}',
     "dot vdot"),
    ("same", "Expected object of scalar type {want} but got scalar type {got} for argument 'out'",
     "complex polar"),
    ("same", '{short} expects a complex output tensor, but got {got}',
     "fft_fft fft_fftn fft_ifft fft_ihfft fft_ihfftn fft_rfft fft_rfftn"),
    ("same", 'fftn expects a complex output tensor, but got {got}',
     "fft_fft2 fft_ifft2 fft_ifftn"),
    ("same", 'rfftn expects a complex output tensor, but got {got}',
     "fft_rfft2"),
    ("same", 'ihfftn expects a complex output tensor, but got {got}',
     "fft_ihfft2"),
    ("cast", '{dotted}: Expected result to be safely castable from {want} dtype, but got result '
     'with dtype {got}',
     "cholesky_inverse cholesky_solve linalg_cond linalg_pinv"),
    ("cast", '{short}: Expected result to be safely castable from {want} dtype, but got result '
     'with dtype {got}',
     "linalg_tensorinv linalg_tensorsolve cholesky"),
    ("cast", "torch.geqrf: Expected a to be safely castable from {want} dtype, but got a with "
     "dtype {got}", "geqrf"),
    ("cast", "torch.linalg.householder_product: Expected result to be safely castable from "
     "{want} dtype, but got result with dtype {got}", "linalg_householder_product orgqr"),
    ("same", "torch.ormqr: Expected input and result to have the same dtype, but input has "
     "dtype{want} and result has dtype {got}", "ormqr"),
    ("same", 'linalg.{short} expected out tensor dtype {want} but got: {got}',
     "linalg_matrix_norm linalg_norm"),
    ("same", 'multi_dot(): expected out tensor to have dtype {want_c} but got {got_c}',
     "chain_matmul linalg_multi_dot"),
    ("same", 'quantile() out tensor must be same dtype as the input tensor',
     "nanquantile quantile"),
    ("same", '{short}(): self and result must have the same scalar type',
     "index_select masked_select"),
    ("same", 'nan_to_num: dtype of out: {got} should be same as input: {want}',
     "nan_to_num"),
    ("same", 'tensordot: Expected the output tensor to have dtype {want}, but got an output tensor'
     ' with dtype {got}',
     "inner tensordot"),
    ("same", 'torch.histogram: input tensor and hist tensor should have the same dtype, but got '
     'input {want_c} and hist {got_c}',
     "histc histogram"),
    ("same", 'self and mat2 must have the same dtype, but got {got} and {want}',
     "addbmm"),
    ("same", 'addmv input tensors must have the same dtype, but got {got}, {want}, and {want}',
     "mv"),
    ("bool", '{short} only supports bool tensor for result, got: {got}', "all any"),
    ("same", '{short} does not support non-boolean outputs.',
     "isneginf isposinf signbit"),
    ("same", "Expected the dtype for input and out to match, but got {want} for input's dtype and "
     "{got} for out's dtype.",
     "amax amin"),
    ("same", 'linalg.vecdot: Expected out of dtype{want} but found {got}',
     "linalg_vecdot"),
    ("same", 'multinomial expects Long tensor out, got: {got}',
     "multinomial"),
    ("same", 'nonzero: Expected out tensor to have scalar type Long but got scalar type{got}',
     "nonzero"),
    ("same", "Expected out type to be {want} but got {got}", "where"),
    ("float_or_complex", "logsumexp(): Expected floating point type for result tensor, but "
     "got: {got}", "logsumexp"),
    ("same", "the output given to float_power has dtype {got} but the operation's result "
     "requires dtype {want}", "float_power"),
    ("cast", "torch.{dotted}: Expected eigenvalues to be safely castable from {want} dtype, "
     "but got eigenvalues with dtype {got}", "linalg_eig linalg_eigvals"),
    ("same", "expected scalar type '{want}' but got '{got}' for values output", "mode"),
    ("same", "output values must be of same type as input", "kthvalue"),
    ("cast-TypeError", "torch.cat(): input types can't be cast to the desired output type {got}",
     "cat column_stack concat concatenate dstack hstack row_stack stack vstack"),
    ("float", '{short} expects a floating point output tensor, but got {got}',
     "fft_hfft fft_hfftn fft_irfft fft_irfftn"),
    ("float", 'hfftn expects a floating point output tensor, but got {got}',
     "fft_hfft2"),
    ("float", 'irfftn expects a floating point output tensor, but got {got}',
     "fft_irfft2"),
    ("same", "take(): self and out expected to have the same dtype, but got self.dtype = {want} "
     "and out.dtype = {got}", "take"),
    ("same", "linalg.matrix_norm expected out tensor dtype {want} but got: {got}", "nuclear_norm"),
    ("same", "Expected self.dtype() == output.dtype() to be true, but got false.  (Could this "
     "error message be improved?  If so, please report an enhancement request to PyTorch.)",
     "narrow_copy"),
    ("real", "heaviside is not yet implemented for complex tensors.", "heaviside"),
    ("same", "heaviside is not yet implemented for tensors with different dtypes.", "heaviside"),
    ("cast", "torch.linalg.lstsq: Expected solution to be safely castable from {want} dtype, but "
     "got solution with dtype {got}", "linalg_lstsq"),
    # (torch's words name the input's dtype twice)
    ("cast", "mvlgamma: result type {want} can't be cast to the desired output type {want}",
     "mvlgamma multigammaln"),
    # (torch 2.13 then fails its own internal assertion for an out of another dtype it could
    # cast to, a bug of torch's: the engine writes the cast values, as for mul)
    ("cast", "ldexp can't be cast to the desired output type {got}", "ldexp"),
    ("same", "torch.frexp() expects mantissa to have dtype {want_c} but got {got_c}",
     "frexp.mantissa"),
    ("same", "torch.frexp() expects exponent to have int dtype but got {got_c}", "frexp.exponent"),
    ("same", "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
     "{got_t} instead (while checking arguments for median)",
     "median.indices nanmedian.indices"),
    ("same", "Expected tensor for 'values' to have the same type as tensor for argument #2 "
     "'self'; but type {got_t} does not equal {want_t} (while checking arguments for median)",
     "median.values nanmedian.values"),
    ("same", "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
     "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
     "dtype {got} and out_int32 flag is {out_int32}", "searchsorted"),
    # a draw and a factorization written in out's own dtype
    ("real-NotImplementedError", "\"bernoulli_tensor_cpu_self_\" not implemented for '{got}'",
     "bernoulli"),
    ("any", "", "lu"),
    # kernels run in out's dtype, which torch has no kernel for
    ("float_or_complex-NotImplementedError", "\"normal_kernel_cpu\" not implemented for '{got}'",
     "normal"),
    ("float-NotImplementedError", "\"nansum_cpu\" not implemented for '{got}'", "nansum nanmean"),
    (*_CASTING, "std var"),
    ("real-NotImplementedError", "\"std_cpu\" not implemented for '{got}'", "std var"),
    ("cast", "torch.{dotted}: Expected result to be safely castable from {want} dtype, but got "
     "result with dtype {got}", "linalg_matrix_rank"),
]
_RULES_OF = collections.defaultdict(list)
for _kind, _message, _names in DTYPE_RULES:
    for _name in _names.split():
        _RULES_OF[_name].append((_kind, _message))
_RULES_OF = dict(_RULES_OF)
_ROW_OF = {name: i for i, (_, _, names) in reversed(list(enumerate(DTYPE_RULES)))
           for name in names.split()}


def rules_of(op_name):
    """The function's rows of DTYPE_RULES ((kind, message) each), or None."""
    return _RULES_OF.get(op_name)


# torch 2.13's functions that take out= (their signatures, read from torch: a parity test
# keeps this list whole); each namespace gives the keyword to those it has (given_out)
TAKE_OUT = {
    "torch": """abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr alias_copy all
        amax amin aminmax angle any arange arccos arccosh arcsin arcsinh arctan arctan2
        arctanh argmax argmin argsort as_strided_copy asin asinh atan atan2 atanh baddbmm
        bernoulli bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
        bitwise_xor bmm bucketize cat ccol_indices_copy ceil chain_matmul cholesky
        cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip col_indices_copy
        column_stack complex concat concatenate conj_physical copysign cos cosh cross
        crow_indices_copy cummax cummin cumprod cumsum deg2rad detach_copy diag diagonal_copy
        diff digamma div divide dot dsmm dstack empty eq erf erfc erfinv exp exp2 expand_copy
        expm1 eye fix float_power floor floor_divide fmax fmin fmod frac frexp frobenius_norm
        full gather gcd ge geqrf ger greater greater_equal gt hardshrink hash_tensor heaviside
        histc histogram histogramdd hsmm hspmm hstack hypot i0 igamma igammac index_add
        index_copy index_select indices_copy inner inverse isin isneginf isposinf kron
        kthvalue lcm ldexp le lerp less less_equal lgamma linspace log log10 log1p log2
        log_softmax logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or
        logical_xor logit logspace logsumexp lstsq lt lu lu_solve lu_unpack masked_select
        matmul matrix_power matrix_rank max maximum mean median min minimum
        mkldnn_adaptive_avg_pool2d mm mode msort mul multinomial multiply mv mvlgamma
        nan_to_num nanmean nanmedian nanquantile nansum narrow_copy ne neg negative nextafter
        nonzero norm normal not_equal nuclear_norm ones orgqr ormqr outer permute_copy polar
        polygamma pow prod qr quantile rad2deg rand randint randn randperm range reciprocal
        remainder renorm round row_indices_copy row_stack rsqrt scatter scatter_add
        searchsorted select_copy sgn sigmoid sign signbit sin sinc sinh slice_copy
        slice_scatter slogdet softmax solve sort split_copy split_with_sizes_copy spmm sqrt
        square squeeze_copy sspaddmm stack std sub subtract sum svd symeig t_copy take
        take_along_dim tan tanh tensordot threshold topk transpose_copy triangular_solve tril
        triu true_divide trunc unbind_copy unfold_copy unsqueeze_copy values_copy var vdot
        view_as_complex_copy view_as_real_copy view_copy vstack where xlogy zeros""",
    "torch.linalg": """cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh
        householder_product inv inv_ex ldl_factor ldl_factor_ex ldl_solve lstsq lu lu_factor
        lu_factor_ex lu_solve matmul matrix_norm matrix_power matrix_rank multi_dot norm pinv
        qr slogdet solve solve_ex solve_triangular svd svdvals tensorinv tensorsolve vecdot
        vector_norm""",
    "torch.fft": """fft fft2 fftfreq fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn
        irfft irfft2 irfftn rfft rfft2 rfftfreq rfftn""",
}
# factories: with out= and no dtype, the result takes out's dtype (torch.arange(3, out=int64));
# so do sums and products, which then sum in that dtype (their rules compare out with the input)
_FACTORIES = frozenset("arange empty eye full linspace logspace ones rand randint randn randperm "
                       "range zeros".split())
_DTYPE_OF_OUT = _FACTORIES | {"sum", "prod", "nansum", "cumsum", "cumprod"}
# (out resized without torch's deprecation warning)
_RESIZED_SILENTLY = (_FACTORIES - {"arange"}) | {"addbmm", "bernoulli", "multinomial", "lu",
                                                    "spmm", "narrow_copy"}
# the order torch resizes a tuple's outs in, where it is not the results' order
_RESIZE_ORDER = {"histogram": (1, 0), "linalg_eigh": (1, 0), "svd": (0, 2, 1),
                 "linalg_svd": (0, 2, 1)}
# torch runs sort for argsort: an input that requires grad is refused, though the indices
# argsort returns have no gradient
_REFUSED_FOR_THE_INPUT = frozenset({"argsort"})

# How torch writes out where it does not refuse inputs that require grad, writes a list, or
# resizes out by its own rule:
# "history": by a recorded copy_ of the result (the view ops' copies, composites);
# "not_implemented": out gets the result's history under a node NotImplemented, whose backward
#   raises torch's error naming the kernel (below) that torch's autograd does not implement;
# "list": each of a list of outs resized to its result, the results' history not recorded
#   (returns None, as torch);
# "copied_into_list": each of a list of outs, kept as it is, takes its result by copy_ (its
#   broadcasting and casting), recorded nowhere (returns None, as torch);
# "as_arange": see written_as_arange_writes
WRITTEN_BY = {
    **dict.fromkeys("alias_copy as_strided_copy detach_copy diagonal_copy expand_copy "
                    "permute_copy select_copy slice_copy squeeze_copy t_copy transpose_copy "
                    "unfold_copy unsqueeze_copy view_copy view_as_real_copy view_as_complex_copy "
                    "inner tensordot quantile nanquantile".split(), "history"),
    **dict.fromkeys("conj_physical fft_ifft fft_ihfft heaviside softmax log_softmax "
                    "slice_scatter linalg_ldl_solve floor_divide".split(), "not_implemented"),
    "split_with_sizes_copy": "list", "unbind_copy": "list", "split_copy": "copied_into_list",
    "arange": "as_arange"}
# the kernel whose derivative torch's NotImplemented node names, where it is not the function
_NOT_IMPLEMENTED_KERNELS = {"fft_ifft": "conj_physical", "fft_ihfft": "conj_physical"}
# torch's name for a list of outs of the wrong length
_LIST_OUT_NAMES = {"split_copy": "split_copy_Tensor_out()",
                   "split_with_sizes_copy": "split_with_sizes_copy_out",
                   "unbind_copy": "unbind_copy_int_out"}


def given_out(namespace, module):
    """Gives each function of `namespace` (a module's globals) that torch's `module` calls with
    out= the keyword, unless it takes one of its own: the function runs as without out, then
    its result is written into out (tuples of results into tuples of tensors)."""
    prefix = {"torch": "", "torch.linalg": "linalg_", "torch.fft": "fft_"}[module]
    for name in TAKE_OUT[module].split():
        fn = namespace.get(name)
        if fn is None or "out" in _parameters(fn):
            continue
        namespace[name] = _taking_out(fn, prefix + name)


def _parameters(fn):
    code = getattr(fn, "__code__", None)
    return () if code is None else code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _taking_out(fn, op_name):
    def with_out(*args, out=None, **kwargs):
        if out is None:  # (the common call costs this one frame, nothing else)
            return fn(*args, **kwargs)
        return _called_with_out(fn, op_name, args, kwargs, out)
    with_out.__name__ = with_out.__qualname__ = fn.__name__
    with_out.__doc__ = fn.__doc__
    return with_out


def _called_with_out(fn, op_name, args, kwargs, out):
    rules = _RULES_OF.get(op_name)
    if op_name in _RULES_OF_THE_CALL:
        rules = _RULES_OF_THE_CALL[op_name](rules, *args, **kwargs)
    if op_name in _DTYPE_OF_OUT and isinstance(out, Tensor):
        dtype = kwargs.get("dtype")
        if op_name in _FACTORIES:
            check_factory_dtype(dtype, out)
        if rules and args and isinstance(args[0], Tensor):
            _check_dtype(out, args[0], op_name, rules)
        if dtype is None:
            kwargs["dtype"] = out.dtype
    if (op_name in _REFUSED_FOR_THE_INPUT and is_grad_enabled() and isinstance(out, Tensor)
            and args[0].requires_grad):
        _refuse_grad(op_name, args[:1], ())
    written_by = WRITTEN_BY.get(op_name)
    if written_by in ("list", "copied_into_list"):
        return _written_into_list(out, fn, args, kwargs, op_name, rules,
                                  written_by == "list")
    result = fn(*args, **kwargs)
    if written_by == "history" and isinstance(out, Tensor):
        _check_dtype(out, result, op_name, rules)
        _resize(out, result, op_name not in _RESIZED_SILENTLY)
        return out.copy_(result)
    if written_by == "not_implemented" and isinstance(out, Tensor):
        kernel = _NOT_IMPLEMENTED_KERNELS.get(op_name, op_name)
        if is_grad_enabled() and out.requires_grad:  # (refused by torch's fallback, which
            # names the kernel as the dispatcher does)
            _refuse_grad(f"aten::{kernel}", (), (out,))
        if result.requires_grad:
            _check_dtype(out, result, op_name, rules)
            _write(out, result.detach(), op_name not in _RESIZED_SILENTLY)
            return _with_history_not_implemented(out, result, kernel)
    if written_by == "as_arange" and isinstance(out, Tensor):
        _refuse_grad(op_name, (result,), (out,))
        _check_dtype(out, result, op_name, rules)
        return written_as_arange_writes(out, result)
    seen_as = _SEEN_AS.get(op_name)
    return _written_all(out, result, op_name, rules, op_name not in _RESIZED_SILENTLY,
                        seen_as and seen_as(*args, **kwargs))


def _matrix_power_rules(rules, input, n):
    """torch copies the identity or the input into out for n = 0 and 1 (the casting rule
    alone); other powers write matmul's out, which must have the result's dtype."""
    return rules[:1] if n in (0, 1) else rules


_RULES_OF_THE_CALL = {"matrix_power": _matrix_power_rules,
                      "linalg_matrix_power": _matrix_power_rules}


def _written_all(out, result, op_name, rules, warn_resize, seen_as=None):
    """written_to for one result, or for each of a tuple of results (a named tuple comes
    back as torch's `<name>_out`, holding the out tensors)."""
    if isinstance(result, Tensor):
        if out is not None and not isinstance(out, Tensor):
            raise TypeError(f"{op_name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        _refuse_grad(op_name, (result,), (out,))
        _check_dtype(out, result, op_name, rules)
        return _write(out, result, warn_resize, seen_as)
    _check_list(out, result, op_name)
    _refuse_grad(op_name, result, out)
    fields = getattr(type(result), "_fields", None)
    for i in _order(op_name, fields, len(result)):
        _check_dtype(out[i], result[i], op_name, rules if fields is None else _RULES_OF.get(
            f"{op_name}.{fields[i]}", rules))
    for i in _RESIZE_ORDER.get(op_name, range(len(result))):
        _write(out[i], result[i], warn_resize, seen_as)
    written = tuple(out)
    return written if fields is None else _out_tuple(op_name, fields)(*written)


def _check_list(out, result, op_name):
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{op_name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != len(result):
        if op_name in _LIST_OUT_NAMES:
            raise RuntimeError(f"{_LIST_OUT_NAMES[op_name]} expected an out= argument of size "
                               f"{len(result)}, got size {len(out)}")
        raise RuntimeError(f"{op_name}(): expected {len(result)} out tensors, but got "
                           f"{len(out)}")


def _order(op_name, fields, count):
    """The order torch checks a tuple's outs' dtypes in: those with rules of their own first."""
    if fields is None:
        return range(count)
    return sorted(range(count), key=lambda i: _ROW_OF.get(f"{op_name}.{fields[i]}", len(
        DTYPE_RULES)))


def _written_into_list(out, fn, args, kwargs, op_name, rules, resized):
    """torch's copies with several results write a list of outs and return None: resized
    to each result (dtype checked), or copied into as they are (any dtype, the shapes
    broadcast); no history either way, and only unbind_copy refuses an out that requires
    grad (before it counts the outs)."""
    with no_grad():
        results = fn(*args, **kwargs)
    if op_name == "unbind_copy" and isinstance(out, (tuple, list)):
        _refuse_grad(op_name, (), [o for o in out if isinstance(o, Tensor)])
    _check_list(out, results, op_name)
    for o, r in zip(out, results):
        if resized:
            _check_dtype(o, r, op_name, rules)
            _write(o, r)
        else:
            with no_grad():
                o.copy_(r)
    return None


def _kthvalue_seen_as(input, k, dim=-1, keepdim=False):
    return functools.partial(_seen_with_keepdim, input, dim, keepdim, False)


def _mode_seen_as(input, dim=-1, keepdim=False):
    return functools.partial(_seen_with_keepdim, input, dim, keepdim, True)


def _seen_with_keepdim(input, dim, keepdim, always, out):
    """(out's shape, the result's shape) as torch's resize warning names them for kthvalue and
    mode: torch resizes to the result's shape with keepdim, inserting the reduced dim into
    out's shape first (mode always, kthvalue when out has one dim less than the input)."""
    dim = dim % max(input.dim(), 1)
    required = list(input.shape)
    if required:
        required[dim] = 1
    had = list(out.shape)
    if not keepdim and (always or len(had) == input.dim() - 1) and dim <= len(had):
        had.insert(dim, 1)
    return had, required


_SEEN_AS = {"kthvalue": _kthvalue_seen_as, "mode": _mode_seen_as}


class _NotImplemented(Node):
    """torch's node for an out= or an in-place op whose derivative its autograd does not
    implement: its backward raises torch's error naming the op (`what`)."""

    __slots__ = ("what",)

    def apply(self, grad_outputs):
        raise RuntimeError(f"derivative for {self.what} is not implemented")


_NotImplemented.__name__ = _NotImplemented.__qualname__ = "NotImplemented"


def recorded_not_implemented(target, inputs, what):
    """target, just computed (or changed in place) from `inputs` by an op torch does not
    differentiate (floor_divide, set_), recorded as torch's: under a NotImplemented node
    whose backward raises, when an input requires grad; else nothing."""
    from .engine import gradient_edge
    from .inplace import rebase_history
    if not (is_grad_enabled() and any(t.requires_grad for t in inputs)):
        return target
    node = _NotImplemented(tuple(gradient_edge(t) if t.requires_grad else (None, 0)
                                 for t in inputs),
                           tuple((t._data.shape, t._data.dtype) for t in inputs))
    node.what = what
    rebase_history(target, node)
    return target


def _with_history_not_implemented(out, result, kernel):
    """out (already holding the result) recorded as the result was, under a NotImplemented
    node in place of the result's own (its edges, so a backward reaches it and raises); a
    result that is an input itself (conj_physical of real values) is the node's one edge."""
    from .engine import gradient_edge
    from .inplace import rebase_history
    if result.grad_fn is not None:
        edges, metas = result.grad_fn.next_functions, result.grad_fn._input_meta
    else:
        edges, metas = (gradient_edge(result),), ((result._data.shape, result._data.dtype),)
    node = _NotImplemented(edges, metas)
    node.what = f"aten::{kernel}"
    rebase_history(out, node)
    return out


@functools.lru_cache(maxsize=None)
def _out_tuple(name, fields):
    return collections.namedtuple(f"{name}_out", fields)
