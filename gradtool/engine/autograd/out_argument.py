"""`out=`: a function's result written into a tensor the caller gives, as torch writes it:
the result's dtype must cast to out's (or, for the functions in DTYPE_RULES, be out's), out
takes the result's shape (a warning if it had elements of another shape), and no input may
require grad while grad mode is on (torch's out= functions are not differentiable)."""
import collections
import functools
import warnings

from . import dtypes
from .grad_mode import is_grad_enabled, no_grad
from .tensor import Tensor


def written_to(out, result, op_name, rule=None, warn_resize=True):
    """out holding result (returned), or result itself when out is None. rule: the
    function's row of DTYPE_RULES, if it has one."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{op_name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _refuse_grad(op_name, (result,), (out,))
    _check_dtype(out, result, op_name, rule)
    return _write(out, result, warn_resize)


def _refuse_grad(op_name, results, outs):
    op_name = _KERNEL_NAMES.get(op_name, op_name)
    if any(r.requires_grad for r in results) or (
            is_grad_enabled() and any(o.requires_grad for o in outs)):
        raise RuntimeError(f"{op_name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")


def _check_dtype(out, result, op_name, rule):
    source, target = result._data.dtype, out._data.dtype
    kind, message = rule or _CASTING
    kind, _, error = kind.partition("-")
    if (target == source if kind == "same" else target.kind in "fV" if kind == "float"
            else dtypes.can_cast(source, target)):
        return
    names, c_names = dtypes.LEGACY_TYPE_NAMES, dtypes.C_TYPE_NAMES
    short = op_name.partition("_")[2] if op_name.startswith(("linalg_", "fft_")) else op_name
    raise (TypeError if error == "TypeError" else RuntimeError)(message.format(
        want=names[source.name], got=names[target.name], want_c=c_names[source.name],
        got_c=c_names[target.name], short=short, dotted=op_name.replace("linalg_", "linalg.")))


def _write(out, result, warn=True):
    if out.shape != result.shape:
        if out._data.size and warn:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                f"with t.resize_(0).", UserWarning, stacklevel=4)
        out.resize_(result.shape)
    with no_grad():
        out.copy_(result)
    return out


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
# wants the result's dtype itself, "float" a floating one, "cast" the casting rule ("-TypeError":
# raised as a TypeError, not a RuntimeError). In the
# message, {want} and {got} are the result's and out's dtypes (legacy names, C++ names
# with _c), {short} the function's name, {dotted} its name as torch.linalg.X spells it.
DTYPE_RULES = [
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
     "min mm msort norm qr renorm sort svd take_along_dim topk triangular_solve tril triu"),
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
    ("same", '{short} only supports bool tensor for result, got: {got}',
     "all any"),
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
    ("float", "logsumexp(): Expected floating point type for result tensor, but got: {got}",
     "logsumexp"),
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
]
_RULE_OF = {name: (kind, message) for kind, message, names in DTYPE_RULES
            for name in names.split()}


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
# so do sums and products, which then sum in that dtype
_FACTORIES = frozenset("arange empty eye full linspace logspace ones rand randint randn randperm "
                       "range zeros".split())
_DTYPE_OF_OUT = _FACTORIES | {"sum", "prod", "nansum", "cumsum", "cumprod"}
# the view ops' copies, whose out torch writes by a recorded copy_ (never refused)
_COPIED_WITH_HISTORY = frozenset("alias_copy as_strided_copy detach_copy diagonal_copy "
                                 "expand_copy permute_copy select_copy slice_copy squeeze_copy "
                                 "t_copy transpose_copy unfold_copy unsqueeze_copy view_copy "
                                 "view_as_real_copy view_as_complex_copy".split())
# (out resized without torch's deprecation warning)
_RESIZED_SILENTLY = (_FACTORIES - {"arange"}) | {"addbmm", "bernoulli", "multinomial", "lu",
                                                    "spmm"}


def given_out(namespace, module):
    """Gives each function of `namespace` (a module's globals) that torch's `module` calls with
    out= the keyword, unless it takes one of its own: the function runs as without out, then
    its result is written into out (tuples of results into tuples of tensors)."""
    prefix = {"torch": "", "torch.linalg": "linalg_", "torch.fft": "fft_"}[module]
    for name in TAKE_OUT[module].split():
        fn = namespace.get(name)
        if fn is None or "out" in _parameters(fn):
            continue
        op_name = prefix + name
        namespace[name] = _taking_out(fn, op_name, op_name in _DTYPE_OF_OUT, _RULE_OF.get(op_name),
                                      op_name not in _RESIZED_SILENTLY,
                                      op_name in _COPIED_WITH_HISTORY)


def _parameters(fn):
    code = getattr(fn, "__code__", None)
    return () if code is None else code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _taking_out(fn, op_name, dtype_of_out, rule, warn_resize, copied_with_history=False):
    def with_out(*args, out=None, **kwargs):
        if out is None:  # (the common call costs this one frame, nothing else)
            return fn(*args, **kwargs)
        if dtype_of_out and isinstance(out, Tensor) and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype
        if copied_with_history and isinstance(out, Tensor):  # (torch's view_copy & co.
            # copy_ into out, recorded: differentiable, never refused)
            result = fn(*args, **kwargs)
            _check_dtype(out, result, op_name, rule)
            if out.shape != result.shape:
                _write(out, result.detach(), warn_resize)
            return out.copy_(result)
        return _written_all(out, fn(*args, **kwargs), op_name, rule, warn_resize)
    with_out.__name__ = with_out.__qualname__ = fn.__name__
    with_out.__doc__ = fn.__doc__
    return with_out


def _written_all(out, result, op_name, rule, warn_resize):
    """written_to for one result, or for each of a tuple of results (a named tuple comes
    back as torch's `<name>_out`, holding the out tensors)."""
    if isinstance(result, Tensor):
        return written_to(out, result, op_name, rule, warn_resize)
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{op_name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != len(result):
        raise RuntimeError(f"{op_name}(): expected {len(result)} out tensors, but got "
                           f"{len(out)}")
    _refuse_grad(op_name, result, out)
    for o, r in zip(out, result):
        _check_dtype(o, r, op_name, rule)
    written = tuple(_write(o, r, warn_resize) for o, r in zip(out, result))
    fields = getattr(type(result), "_fields", None)
    return written if fields is None else _out_tuple(op_name, fields)(*written)


@functools.lru_cache(maxsize=None)
def _out_tuple(name, fields):
    return collections.namedtuple(f"{name}_out", fields)
