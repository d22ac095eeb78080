"""out= against torch: the value written, the dtype kept, the shape taken with torch's
warning, and torch's refusals. Tests marked parity, skipped without torch."""
import inspect
import re
import types
import warnings

import numpy as np
import pytest

import gradtool as gt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

CALLS = {
    "special_expm1": lambda lib, out: lib.special.expm1(lib.tensor([0.0, 1.0]), out=out),
    "special_i0e": lambda lib, out: lib.special.i0e(lib.tensor([0.5, 2.0]), out=out),
    "special_xlogy": lambda lib, out: lib.special.xlogy(lib.tensor([2.0, 0.0]), 3.0, out=out),
    "special_polygamma": lambda lib, out: lib.special.polygamma(2, lib.tensor([1.5]), out=out),
    "special_logsumexp": lambda lib, out: lib.special.logsumexp(lib.ones(2, 3), 1, out=out),
    "fftfreq": lambda lib, out: lib.fft.fftfreq(5, 0.5, out=out),
    "rfftfreq": lambda lib, out: lib.fft.rfftfreq(6, out=out),
    "chain_matmul": lambda lib, out: lib.chain_matmul(lib.ones(2, 3), lib.ones(3, 2), out=out),
}


# (multi_dot's out must have the result's dtype: a refusal, below)
CASES = [(n, s) for n in CALLS for s in ("empty", "wrong_shape", "double")
         if (n, s) != ("chain_matmul", "double")]


@pytest.mark.parametrize("name, start", CASES)
def test_out_is_written_as_torch_writes_it(name, start):
    seen = []
    for lib in (gt, torch):
        out = {"empty": lambda: lib.empty(0), "wrong_shape": lambda: lib.zeros(7),
               "double": lambda: lib.zeros(0, dtype=lib.float64)}[start]()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            returned = CALLS[name](lib, out)
        resized = [str(w.message).split(" (Triggered")[0] for w in caught
                   if "resized" in str(w.message)]
        seen.append((returned is out, str(out.dtype).split(".")[-1], tuple(out.shape),
                     out.numpy().copy(), resized))
    (mine, theirs) = seen
    assert mine[0] and theirs[0] and mine[1:3] == theirs[1:3] and mine[4] == theirs[4]
    np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-6)


def test_out_refusals_are_torchs():
    for make in (lambda lib: lib.special.expm1(lib.ones(2), out=lib.empty(2, dtype=lib.int64)),
                 lambda lib: lib.special.expm1(lib.ones(2, requires_grad=True),
                                               out=lib.empty(2)),
                 lambda lib: CALLS["chain_matmul"](lib, lib.zeros(0, dtype=lib.float64))):
        messages = []
        for lib in (gt, torch):
            with pytest.raises(RuntimeError) as info:
                make(lib)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


# ---- every function torch calls with out= (torch.X, torch.linalg.X, torch.fft.X)
def _inputs(lib):
    """The same values on either library: x, y (3, 4) in (0.1, 0.9), i, j integer, c bool,
    m a (4, 4) positive definite matrix, v a 4-vector, p probabilities."""
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.1, 0.9, (2, 3, 4)).astype(np.float32)
    m = rng.standard_normal((4, 4))
    m = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    t = lib.from_numpy
    return types.SimpleNamespace(
        x=t(x), y=t(y), m=t(m), v=t(m[0].copy()), b=t(np.stack([m, m + 1])),
        i=t(rng.integers(1, 9, (3, 4))), j=t(rng.integers(1, 4, (3, 4))), c=t(x > 0.5),
        index=t(np.array([2, 0])), sorted=t(np.sort(x[0])), z=t((x + 1j * y).astype(np.complex64)))


def _unary(name, of="x"):
    return lambda lib, t, **o: getattr(lib, name)(getattr(t, of), **o)


def _binary(name, of="x", other="y"):
    return lambda lib, t, **o: getattr(lib, name)(getattr(t, of), getattr(t, other), **o)


ALL_CALLS = {f"torch.{n}": _unary(n) for n in """abs acos acosh asin asinh atan atanh ceil
    conj_physical cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 fix floor frac i0 lgamma
    log log10 log1p log2 logit nan_to_num neg negative rad2deg reciprocal round rsqrt sgn sigmoid
    sign signbit sin sinc sinh sqrt square tan tanh trunc isneginf isposinf logical_not msort
    nonzero absolute arccos arccosh arcsin arcsinh arctan arctanh""".split()}
ALL_CALLS.update({f"torch.{n}": _binary(n) for n in """add atan2 copysign div divide eq
    float_power fmax fmin fmod ge greater greater_equal gt heaviside hypot le less less_equal
    logaddexp logaddexp2 logical_and logical_or logical_xor lt maximum minimum mul multiply ne
    nextafter not_equal pow remainder sub subtract floor_divide xlogy igamma igammac arctan2
    true_divide""".split()})
ALL_CALLS.update({f"torch.{n}": _binary(n, "i", "j") for n in """bitwise_and bitwise_or
    bitwise_xor bitwise_left_shift bitwise_right_shift gcd lcm""".split()})
ALL_CALLS.update({
    "torch.bitwise_not": _unary("bitwise_not", "i"),
    "torch.ldexp": lambda lib, t, **o: lib.ldexp(t.x, t.j, **o),
    "torch.angle": _unary("angle", "z"),
    "torch.polar": lambda lib, t, **o: lib.polar(t.x, t.y, **o),
    "torch.complex": lambda lib, t, **o: lib.complex(t.x, t.y, **o),
    "torch.addbmm": lambda lib, t, **o: lib.addbmm(t.m, t.b, t.b, **o),
    "torch.addcdiv": lambda lib, t, **o: lib.addcdiv(t.x, t.x, t.y, value=0.5, **o),
    "torch.addcmul": lambda lib, t, **o: lib.addcmul(t.x, t.x, t.y, value=0.5, **o),
    "torch.addmm": lambda lib, t, **o: lib.addmm(t.m, t.m, t.m, beta=0.5, **o),
    "torch.addmv": lambda lib, t, **o: lib.addmv(t.v, t.m, t.v, **o),
    "torch.addr": lambda lib, t, **o: lib.addr(t.m, t.v, t.v, **o),
    "torch.baddbmm": lambda lib, t, **o: lib.baddbmm(t.b, t.b, t.b, **o),
    "torch.bmm": lambda lib, t, **o: lib.bmm(t.b, t.b, **o),
    "torch.mm": lambda lib, t, **o: lib.mm(t.m, t.m, **o),
    "torch.mv": lambda lib, t, **o: lib.mv(t.m, t.v, **o),
    "torch.matmul": lambda lib, t, **o: lib.matmul(t.x, t.m, **o),
    "torch.dot": lambda lib, t, **o: lib.dot(t.v, t.v, **o),
    "torch.vdot": lambda lib, t, **o: lib.vdot(t.v, t.v, **o),
    "torch.inner": lambda lib, t, **o: lib.inner(t.x, t.y, **o),
    "torch.outer": lambda lib, t, **o: lib.outer(t.v, t.v, **o),
    "torch.ger": lambda lib, t, **o: lib.ger(t.v, t.v, **o),
    "torch.kron": lambda lib, t, **o: lib.kron(t.x, t.y, **o),
    "torch.tensordot": lambda lib, t, **o: lib.tensordot(t.x, t.y, ([1], [1]), **o),
    "torch.cross": lambda lib, t, **o: lib.cross(t.x[:, :3], t.y[:, :3], dim=1, **o),
    "torch.matrix_power": lambda lib, t, **o: lib.matrix_power(t.m, 3, **o),
    "torch.all": lambda lib, t, **o: lib.all(t.c, 1, **o),
    "torch.any": lambda lib, t, **o: lib.any(t.c, 1, **o),
    "torch.amax": lambda lib, t, **o: lib.amax(t.x, 1, **o),
    "torch.amin": lambda lib, t, **o: lib.amin(t.x, 0, **o),
    "torch.aminmax": lambda lib, t, **o: lib.aminmax(t.x, dim=1, **o),
    "torch.max": lambda lib, t, **o: lib.max(t.x, 1, **o),
    "torch.min": lambda lib, t, **o: lib.min(t.x, 0, keepdim=True, **o),
    "torch.maximum": _binary("maximum"),
    "torch.mean": lambda lib, t, **o: lib.mean(t.x, 1, **o),
    "torch.nanmean": lambda lib, t, **o: lib.nanmean(t.x, 1, **o),
    "torch.median": lambda lib, t, **o: lib.median(t.x, 1, **o),
    "torch.nanmedian": lambda lib, t, **o: lib.nanmedian(t.x, 1, **o),
    "torch.mode": lambda lib, t, **o: lib.mode(t.i, 1, **o),
    "torch.kthvalue": lambda lib, t, **o: lib.kthvalue(t.x, 2, 1, **o),
    "torch.logsumexp": lambda lib, t, **o: lib.logsumexp(t.x, 1, **o),
    "torch.std": lambda lib, t, **o: lib.std(t.x, 1, **o),
    "torch.var": lambda lib, t, **o: lib.var(t.x, 1, **o),
    "torch.norm": lambda lib, t, **o: lib.norm(t.x, 2, 1, **o),
    "torch.quantile": lambda lib, t, **o: lib.quantile(t.x, 0.3, 1, **o),
    "torch.nanquantile": lambda lib, t, **o: lib.nanquantile(t.x, 0.3, 1, **o),
    "torch.cummax": lambda lib, t, **o: lib.cummax(t.x, 1, **o),
    "torch.cummin": lambda lib, t, **o: lib.cummin(t.x, 1, **o),
    "torch.cumprod": lambda lib, t, **o: lib.cumprod(t.x, 1, **o),
    "torch.cumsum": lambda lib, t, **o: lib.cumsum(t.x, 1, **o),
    "torch.logcumsumexp": lambda lib, t, **o: lib.logcumsumexp(t.x, 1, **o),
    "torch.sort": lambda lib, t, **o: lib.sort(t.x, 1, descending=True, **o),
    "torch.topk": lambda lib, t, **o: lib.topk(t.x, 2, **o),
    "torch.frexp": _unary("frexp"),
    "torch.clamp": lambda lib, t, **o: lib.clamp(t.x, 0.3, 0.6, **o),
    "torch.clip": lambda lib, t, **o: lib.clip(t.x, min=0.4, **o),
    "torch.lerp": lambda lib, t, **o: lib.lerp(t.x, t.y, 0.3, **o),
    "torch.renorm": lambda lib, t, **o: lib.renorm(t.x, 2, 0, 0.5, **o),
    "torch.where": lambda lib, t, **o: lib.where(t.c, t.x, t.y, **o),
    "torch.cat": lambda lib, t, **o: lib.cat([t.x, t.y], 1, **o),
    "torch.concat": lambda lib, t, **o: lib.concat([t.x, t.y], **o),
    "torch.concatenate": lambda lib, t, **o: lib.concatenate([t.x, t.y], 1, **o),
    "torch.stack": lambda lib, t, **o: lib.stack([t.x, t.y], 1, **o),
    "torch.hstack": lambda lib, t, **o: lib.hstack([t.x, t.y], **o),
    "torch.vstack": lambda lib, t, **o: lib.vstack([t.x, t.y], **o),
    "torch.row_stack": lambda lib, t, **o: lib.row_stack([t.x, t.y], **o),
    "torch.column_stack": lambda lib, t, **o: lib.column_stack([t.x, t.y], **o),
    "torch.dstack": lambda lib, t, **o: lib.dstack([t.x, t.y], **o),
    "torch.diag": lambda lib, t, **o: lib.diag(t.m, 1, **o),
    "torch.diff": lambda lib, t, **o: lib.diff(t.x, dim=1, **o),
    "torch.tril": lambda lib, t, **o: lib.tril(t.m, **o),
    "torch.triu": lambda lib, t, **o: lib.triu(t.m, 1, **o),
    "torch.gather": lambda lib, t, **o: lib.gather(t.x, 1, t.j, **o),
    "torch.index_select": lambda lib, t, **o: lib.index_select(t.x, 1, t.index, **o),
    "torch.masked_select": lambda lib, t, **o: lib.masked_select(t.x, t.c, **o),
    "torch.take_along_dim": lambda lib, t, **o: lib.take_along_dim(t.x, t.j, 1, **o),
    "torch.histc": lambda lib, t, **o: lib.histc(t.x, 4, 0, 1, **o),
    "torch.histogram": lambda lib, t, **o: lib.histogram(t.x, 4, **o),
    "torch.searchsorted": lambda lib, t, **o: lib.searchsorted(t.sorted, t.x, **o),
    "torch.bucketize": lambda lib, t, **o: lib.bucketize(t.x, t.sorted, **o),
    "torch.cholesky_inverse": lambda lib, t, **o: lib.cholesky_inverse(
        lib.linalg.cholesky(t.m), **o),
    "torch.cholesky_solve": lambda lib, t, **o: lib.cholesky_solve(
        t.m, lib.linalg.cholesky(t.m), **o),
    "torch.triangular_solve": lambda lib, t, **o: lib.triangular_solve(t.m, lib.triu(t.m), **o),
    "torch.lu_unpack": lambda lib, t, **o: lib.lu_unpack(*lib.linalg.lu_factor(t.m), **o),
    "torch.qr": lambda lib, t, **o: lib.qr(t.m, **o),
    "torch.svd": lambda lib, t, **o: lib.svd(t.m, **o),
    "torch.zeros": lambda lib, t, **o: lib.zeros(2, 3, **o),
    "torch.ones": lambda lib, t, **o: lib.ones(2, 3, **o),
    "torch.full": lambda lib, t, **o: lib.full((2, 3), 7, **o),
    "torch.empty": lambda lib, t, **o: lib.empty(2, 3, **o),
    "torch.eye": lambda lib, t, **o: lib.eye(3, **o),
    "torch.arange": lambda lib, t, **o: lib.arange(1, 7, 2, **o),
    "torch.range": lambda lib, t, **o: lib.range(1, 4, **o),
    "torch.linspace": lambda lib, t, **o: lib.linspace(0, 2, 5, **o),
    "torch.logspace": lambda lib, t, **o: lib.logspace(0, 2, 5, base=3.0, **o),
})
ALL_CALLS.update({f"torch.linalg.{n}": (lambda n: lambda lib, t, **o: getattr(lib.linalg, n)(
    t.m, **o))(n)
                  for n in """cholesky cholesky_ex det eigh eigvalsh inv inv_ex lu lu_factor
                  lu_factor_ex matrix_norm matrix_rank pinv qr slogdet svd svdvals cond
                  norm vector_norm""".split()})
ALL_CALLS.update({
    "torch.linalg.cross": lambda lib, t, **o: lib.linalg.cross(t.x[:, :3], t.y[:, :3], **o),
    "torch.linalg.matmul": lambda lib, t, **o: lib.linalg.matmul(t.x, t.m, **o),
    "torch.linalg.matrix_power": lambda lib, t, **o: lib.linalg.matrix_power(t.m, 2, **o),
    "torch.linalg.multi_dot": lambda lib, t, **o: lib.linalg.multi_dot([t.x, t.m, t.m], **o),
    "torch.linalg.solve": lambda lib, t, **o: lib.linalg.solve(t.m, t.x.T, **o),
    "torch.linalg.solve_ex": lambda lib, t, **o: lib.linalg.solve_ex(t.m, t.x.T, **o),
    "torch.linalg.solve_triangular": lambda lib, t, **o: lib.linalg.solve_triangular(
        lib.triu(t.m), t.x.T, upper=True, **o),
    "torch.linalg.tensorinv": lambda lib, t, **o: lib.linalg.tensorinv(t.m, 1, **o),
    "torch.linalg.tensorsolve": lambda lib, t, **o: lib.linalg.tensorsolve(t.m, t.v, **o),
    "torch.linalg.vecdot": lambda lib, t, **o: lib.linalg.vecdot(t.x, t.y, **o),
})
ALL_CALLS.update({
    "torch.cholesky": lambda lib, t, **o: lib.cholesky(t.m, **o),
    "torch.geqrf": lambda lib, t, **o: lib.geqrf(t.m, **o),
    "torch.orgqr": lambda lib, t, **o: lib.orgqr(*lib.geqrf(t.m), **o),
    "torch.ormqr": lambda lib, t, **o: lib.ormqr(*lib.geqrf(t.m), t.x.T, **o),
    "torch.lu_solve": lambda lib, t, **o: lib.lu_solve(t.x.T, *lib.linalg.lu_factor(t.m), **o),
    "torch.linalg.householder_product": lambda lib, t, **o: lib.linalg.householder_product(
        *lib.geqrf(t.m), **o),
    "torch.linalg.ldl_factor": lambda lib, t, **o: lib.linalg.ldl_factor(t.m, **o),
    "torch.linalg.ldl_factor_ex": lambda lib, t, **o: lib.linalg.ldl_factor_ex(t.m, **o),
    "torch.linalg.ldl_solve": lambda lib, t, **o: lib.linalg.ldl_solve(
        *lib.linalg.ldl_factor(t.m), t.x.T, **o),
    "torch.linalg.lu_solve": lambda lib, t, **o: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(t.m), t.x.T, **o),
})
ALL_CALLS.update({f"torch.fft.{n}": (lambda n: lambda lib, t, **o: getattr(lib.fft, n)(t.x, **o))(n)
                  for n in """fft fft2 fftn hfft ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft rfft
                  rfft2 rfftn""".split()})
ALL_CALLS.update({f"torch.fft.{n}": (lambda n: lambda lib, t, **o: getattr(lib.fft, n)(t.z, **o))(n)
                  for n in "hfft2 hfftn irfft2 irfftn".split()})


ALL_CALLS.update({
    "torch.polygamma": lambda lib, t, **o: lib.polygamma(1, t.x, **o),
    "torch.mvlgamma": lambda lib, t, **o: lib.mvlgamma(t.x + 2, 2, **o),
    "torch.chain_matmul": lambda lib, t, **o: lib.chain_matmul(t.m, t.m, **o),
    "torch.lu": lambda lib, t, **o: lib.lu(t.m, **o),
    "torch.inverse": lambda lib, t, **o: lib.inverse(t.m, **o),
    "torch.argmax": lambda lib, t, **o: lib.argmax(t.x, 1, **o),
    "torch.argmin": lambda lib, t, **o: lib.argmin(t.x, **o),
    "torch.argsort": lambda lib, t, **o: lib.argsort(t.x, stable=True, dim=1, **o),
    "torch.clamp_max": lambda lib, t, **o: lib.clamp_max(t.x, 0.5, **o),
    "torch.clamp_min": lambda lib, t, **o: lib.clamp_min(t.x, t.y, **o),
    "torch.frobenius_norm": lambda lib, t, **o: lib.frobenius_norm(t.x, (0, 1), **o),
    "torch.nuclear_norm": lambda lib, t, **o: lib.nuclear_norm(t.m, **o),
    "torch.index_add": lambda lib, t, **o: lib.index_add(t.x, 1, t.index, t.y[:, :2], **o),
    "torch.index_copy": lambda lib, t, **o: lib.index_copy(t.x, 1, t.index, t.y[:, :2], **o),
    "torch.isin": lambda lib, t, **o: lib.isin(t.i, t.j, **o),
    "torch.softmax": lambda lib, t, **o: lib.softmax(t.x, 1, **o),
    "torch.log_softmax": lambda lib, t, **o: lib.log_softmax(t.x, 0, **o),
    "torch.sum": lambda lib, t, **o: lib.sum(t.x, 1, **o),
    "torch.nansum": lambda lib, t, **o: lib.nansum(t.x, 0, **o),
    "torch.prod": lambda lib, t, **o: lib.prod(t.x, 1, **o),
    "torch.scatter": lambda lib, t, **o: lib.scatter(t.x, 1, t.j, t.y, **o),
    "torch.scatter_add": lambda lib, t, **o: lib.scatter_add(t.x, 1, t.j, t.y, **o),
    "torch.slice_scatter": lambda lib, t, **o: lib.slice_scatter(t.x, t.y[:, :2], 1, 0, 2,
                                                                 **o),
    "torch.slogdet": lambda lib, t, **o: lib.slogdet(t.m, **o),
    "torch.spmm": lambda lib, t, **o: lib.spmm(t.m.to_sparse(), t.m, **o),
    "torch.take": lambda lib, t, **o: lib.take(t.x, t.index, **o),
    "torch.linalg.lstsq": lambda lib, t, **o: lib.linalg.lstsq(t.m, t.x.T, **o),
    # the *_copy ops (their own behaviour: tests/parity/test_copies.py)
    "torch.view_copy": lambda lib, t, **o: lib.view_copy(t.x, [4, 3], **o),
    "torch.transpose_copy": lambda lib, t, **o: lib.transpose_copy(t.x, 0, 1, **o),
    "torch.permute_copy": lambda lib, t, **o: lib.permute_copy(t.x, [1, 0], **o),
    "torch.expand_copy": lambda lib, t, **o: lib.expand_copy(t.v, [2, 4], **o),
    "torch.diagonal_copy": lambda lib, t, **o: lib.diagonal_copy(t.m, 1, **o),
    "torch.select_copy": lambda lib, t, **o: lib.select_copy(t.x, 1, 2, **o),
    "torch.slice_copy": lambda lib, t, **o: lib.slice_copy(t.x, 1, 1, 4, 2, **o),
    "torch.narrow_copy": lambda lib, t, **o: lib.narrow_copy(t.x, 1, 1, 2, **o),
    "torch.squeeze_copy": lambda lib, t, **o: lib.squeeze_copy(t.x[:1], **o),
    "torch.unsqueeze_copy": lambda lib, t, **o: lib.unsqueeze_copy(t.x, 1, **o),
    "torch.t_copy": lambda lib, t, **o: lib.t_copy(t.x, **o),
    "torch.alias_copy": lambda lib, t, **o: lib.alias_copy(t.x, **o),
    "torch.as_strided_copy": lambda lib, t, **o: lib.as_strided_copy(t.x, (2, 2), (1, 2), 1,
                                                                     **o),
    "torch.detach_copy": lambda lib, t, **o: lib.detach_copy(t.x, **o),
    "torch.unfold_copy": lambda lib, t, **o: lib.unfold_copy(t.x, 1, 2, 1, **o),
    "torch.unbind_copy": lambda lib, t, **o: lib.unbind_copy(t.x, 1, **o),
    "torch.split_copy": lambda lib, t, **o: lib.split_copy(t.x, 2, 1, **o),
    "torch.split_with_sizes_copy": lambda lib, t, **o: lib.split_with_sizes_copy(t.x, [1, 3], 1,
                                                                                 **o),
    "torch.view_as_real_copy": lambda lib, t, **o: lib.view_as_real_copy(t.z, **o),
    "torch.view_as_complex_copy": lambda lib, t, **o: lib.view_as_complex_copy(
        lib.stack([t.x, t.y], -1), **o),
    "torch.indices_copy": lambda lib, t, **o: lib.indices_copy(t.m.to_sparse(), **o),
    "torch.values_copy": lambda lib, t, **o: lib.values_copy(t.m.to_sparse(), **o),
    "torch.linalg.eig": lambda lib, t, **o: lib.linalg.eig(t.m, **o),
    "torch.linalg.eigvals": lambda lib, t, **o: lib.linalg.eigvals(t.m, **o),
    "torch.fft.fftfreq": lambda lib, t, **o: lib.fft.fftfreq(5, 0.5, **o),
    "torch.fft.rfftfreq": lambda lib, t, **o: lib.fft.rfftfreq(6, **o),
    # draws: their shapes and dtypes are compared, not their values
    "torch.bernoulli": lambda lib, t, **o: lib.bernoulli(t.x, **o),
    "torch.multinomial": lambda lib, t, **o: lib.multinomial(t.x, 2, **o),
    "torch.normal": lambda lib, t, **o: lib.normal(t.x, t.y, **o),
    "torch.rand": lambda lib, t, **o: lib.rand(2, 3, **o),
    "torch.randn": lambda lib, t, **o: lib.randn(2, 3, **o),
    "torch.randint": lambda lib, t, **o: lib.randint(0, 5, (2, 3), **o),
    "torch.randperm": lambda lib, t, **o: lib.randperm(5, **o),
})
DRAWS = {"torch.bernoulli", "torch.multinomial", "torch.normal", "torch.rand", "torch.randn",
         "torch.randint", "torch.randperm", "torch.empty"}
MODULES = {"torch": "", "torch.linalg": "linalg.", "torch.fft": "fft."}


def _function(lib, name):
    module, _, short = name.rpartition(".")
    return getattr(lib if module == "torch" else getattr(lib, module[6:]), short)


_BUILTIN = type(torch.exp)


def _takes_out_in_torch(fn):
    """What torch says of out=: a Python function's signature, a builtin's argument parser
    (asked with an out it refuses: its message names out, or lists the signatures), and
    the documented signature."""
    documented = re.search(r"\bout=None|\bout \((Tensor|tuple|List)", fn.__doc__ or "")
    if not isinstance(fn, _BUILTIN):
        try:
            parameters = inspect.signature(fn).parameters
        except (ValueError, TypeError):
            return documented is not None
        return "out" in parameters or documented is not None and any(
            p.kind == p.VAR_KEYWORD for p in parameters.values())
    x = torch.rand(2, 3)
    for args in ((1.5j,), (x,), (x, 1), (x, x), (x, 0, torch.tensor([0]), x), (x, 0, 1),
                 (x, [1, 0]), (x, 0, 0, 1), (x, [2], [1])):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(*args, out=1.5j)
        except TypeError as e:
            if "unexpected keyword argument 'out'" in str(e):
                return documented is not None
            if "argument 'out'" in str(e) or re.search(r"\bout = None", str(e)):
                return True
        except Exception:  # noqa: BLE001 (arguments it refuses for another reason)
            pass
    return documented is not None


@pytest.mark.parametrize("module", MODULES)
def test_the_list_of_functions_with_out_is_torchs(module):
    from gradtool.engine.autograd.out_argument import TAKE_OUT
    namespace = torch if module == "torch" else getattr(torch, module[6:])
    functions = {n: getattr(namespace, n) for n in dir(namespace) if not n.startswith("_")}
    assert set(TAKE_OUT[module].split()) == {
        n for n, fn in functions.items()
        if callable(fn) and not isinstance(fn, type) and _takes_out_in_torch(fn)} - DOCS_ONLY


# torch's docs show out= for these, but its argument parser refuses it (as the engine does)
DOCS_ONLY = {"std_mean", "var_mean"}


@pytest.mark.parametrize("name", sorted(DOCS_ONLY))
def test_out_is_refused_where_torch_documents_it_but_refuses_it(name):
    for lib in (gt, torch):
        with pytest.raises(TypeError):
            getattr(lib, name)(lib.ones(3), 0, out=(lib.empty(0), lib.empty(0)))


@pytest.mark.parametrize("module", MODULES)
def test_every_function_torch_calls_with_out_takes_it_and_is_compared(module):
    from gradtool.engine.autograd.out_argument import TAKE_OUT
    engine = {f"{module}.{n}": getattr(gt if module == "torch" else getattr(gt, module[6:]), n,
                                       None) for n in TAKE_OUT[module].split()}
    engine = {name: fn for name, fn in engine.items() if fn is not None}  # (torch's error
    # names the others)
    assert [n for n, fn in engine.items() if "out" not in inspect.signature(fn).parameters] == []
    assert sorted(set(engine) - set(ALL_CALLS) - {"torch.symeig"}) == []  # (removed from
    # torch: it raises, out or not)


def _plain(value):
    return [(str(v.dtype).split(".")[-1], tuple(v.shape), v.detach().numpy().copy())
            for v in value]


def _refusal(e):
    """An exception as compared: its type and message (of a refusal by torch's dispatcher, the
    first sentence, which names the op and the backend; the rest lists torch's build)."""
    message = str(e)
    if message.startswith("Could not run 'aten::"):
        message = message[:message.index(" backend.") + len(" backend.")]
    return type(e).__name__, message


def _outcome(lib, name, make_out, requires_grad=False):
    """(what was raised, or None), (what came back: whether it is out, or the type of the
    tuple and whether it holds the outs, or None; out's values; the resize warnings):
    ALL_CALLS[name] run with out=make_out(each result)."""
    t = _inputs(lib)
    try:
        plain = ALL_CALLS[name](lib, t)
    except Exception as e:  # noqa: BLE001 (a call either library refuses, out or not)
        return _refusal(e), None
    single = isinstance(plain, lib.Tensor)
    outs = tuple(make_out(lib, r) for r in ((plain,) if single else plain))
    if requires_grad:
        t.x.requires_grad_()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            returned = ALL_CALLS[name](lib, t, out=outs[0] if single else outs)
        except Exception as e:  # noqa: BLE001 (either library's refusal, compared)
            return _refusal(e), None
    resized = [str(w.message).split(" (Triggered")[0] for w in caught if "resized" in
               str(w.message) or "number of elements in the out" in str(w.message)]
    came_back = None if returned is None else (returned is outs[0]) if single else (
        type(returned).__name__, all(a is b for a, b in zip(returned, outs)))
    return None, (came_back, _plain(outs), resized)


def _torchs_own_bug(error):
    """torch 2.13 fails its own internal assertion (ldexp into an out of a dtype it could cast
    to): the engine writes the result cast to out's dtype, as torch does for every other op."""
    return error is not None and "INTERNAL ASSERT FAILED" in error[1]


def _same(name, make_out, requires_grad=False):
    (mine_error, mine), (their_error, theirs) = (
        _outcome(lib, name, make_out, requires_grad) for lib in (gt, torch))
    if _torchs_own_bug(their_error):
        assert mine_error is None and len(mine[1]) == 1
        dtype, _, written = mine[1][0]
        expected = ALL_CALLS[name](torch, _inputs(torch)).detach().numpy()
        np.testing.assert_allclose(written, expected.astype(written.dtype), rtol=2e-5, atol=1e-6)
        return
    assert mine_error == their_error
    if mine is None:
        return
    assert mine[0] == theirs[0] and mine[2] == theirs[2]
    for (dtype, shape, a), (their_dtype, their_shape, b) in zip(mine[1], theirs[1]):
        assert (dtype, shape) == (their_dtype, their_shape)
        if name not in DRAWS:
                np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


NAMES = sorted(ALL_CALLS)


@pytest.mark.parametrize("name", NAMES)
def test_out_holds_torchs_result(name):
    _same(name, lambda lib, r: lib.empty(0, dtype=r.dtype))


@pytest.mark.parametrize("name", NAMES)
def test_out_of_another_dtype_is_cast_or_refused_as_torch(name):
    _same(name, lambda lib, r: lib.empty(r.shape, dtype=lib.float64))
    _same(name, lambda lib, r: lib.empty(r.shape, dtype=lib.int64))


@pytest.mark.parametrize("name", NAMES)
def test_out_of_any_other_dtype_is_cast_or_refused_as_torch(name):
    """bool, int32, float16 and complex64 outs (an op the engine lacks for complex values
    says so: a NotInEngineError, where torch computes)."""
    for dtype in ("bool", "int32", "float16", "complex64"):
        (mine_error, mine), (their_error, theirs) = (
            _outcome(lib, name, lambda lib, r: lib.empty(r.shape, dtype=getattr(lib, dtype)))
            for lib in (gt, torch))
        if mine_error and mine_error[0] == "NotInEngineError" and dtype == "complex64":
            continue
        if _torchs_own_bug(their_error):
            assert mine_error is None and mine[1][0][0] == dtype, dtype
            continue
        assert mine_error == their_error, dtype
        if mine is not None:
            assert mine[0] == theirs[0] and [p[:2] for p in mine[1]] == [p[:2] for p in theirs[1]]


@pytest.mark.parametrize("name", NAMES)
def test_out_of_another_shape_is_resized_with_torchs_warning(name):
    _same(name, lambda lib, r: lib.empty(7, dtype=r.dtype))


@pytest.mark.parametrize("name", NAMES)
def test_out_refuses_inputs_that_require_grad_as_torch(name):
    _same(name, lambda lib, r: lib.empty(0, dtype=r.dtype), requires_grad=True)


# ---- how torch writes out beyond the four checks above
def _history(lib, name):
    """out's history after ALL_CALLS[name] with x requiring grad: its node's name, the names of
    the nodes it leads to, out's version, and what its backward raises (or x's gradient)."""
    t = _inputs(lib)
    out = lib.empty(0, dtype=ALL_CALLS[name](lib, t).dtype)
    t.x.requires_grad_()
    ALL_CALLS[name](lib, t, out=out)
    node = out.grad_fn
    after = sorted(type(f).__name__ for f, _ in node.next_functions if f is not None)
    try:
        (out.abs() if out.is_complex() else out).sum().backward()
        outcome = t.x.grad.numpy().copy()
    except RuntimeError as e:
        outcome = str(e)
    return node.name().replace("torch::autograd::", ""), after, out._version, outcome


@pytest.mark.parametrize("name", """torch.inner torch.tensordot torch.quantile torch.nanquantile
    torch.conj_physical torch.fft.ifft torch.fft.ihfft torch.heaviside torch.softmax
    torch.log_softmax torch.slice_scatter torch.linalg.ldl_solve""".split())
def test_out_written_with_a_history_is_torchs(name):
    """Composites torch writes by a recorded copy_ (CopyBackwards, differentiable), and outs
    whose derivative torch's autograd lacks (NotImplemented, raising at backward)."""
    (*mine, my_outcome), (*theirs, their_outcome) = (_history(lib, name) for lib in (gt, torch))
    assert mine[0] == theirs[0] and mine[2] == theirs[2]
    if theirs[0] == "NotImplemented":  # (the node torch's out= builds over the result's edges;
        # the engine's may also name an input without grad, an edge to nothing, which torch's
        # leaves out)
        assert mine[1] == theirs[1]
    if isinstance(their_outcome, str):
        assert my_outcome == their_outcome
    else:
        np.testing.assert_allclose(my_outcome, their_outcome, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("name", """torch.inner torch.quantile torch.conj_physical torch.fft.ifft
    torch.heaviside torch.softmax torch.slice_scatter torch.linalg.ldl_solve""".split())
def test_an_out_that_requires_grad_is_refused_as_torch(name, grad_mode):
    """In grad mode: a leaf written in place (a recorded copy_), or torch's fallback naming
    the kernel (aten::softmax); without it, written."""
    seen = []
    for lib in (gt, torch):
        t = _inputs(lib)
        result = ALL_CALLS[name](lib, t)
        out = lib.empty(result.shape, dtype=result.dtype).requires_grad_()
        with lib.set_grad_enabled(grad_mode):
            seen.append(_made(lib, lambda lib: ALL_CALLS[name](lib, t, out=out)))
    assert seen[0] == seen[1]


def _resize_warnings(lib, make, *outs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            returned = make(lib, *outs)
        except Exception as e:  # noqa: BLE001 (compared)
            return _refusal(e)
    shapes = [tuple(o.shape) for o in outs]
    return (returned is None, shapes, [str(w.message).split(" (Triggered")[0] for w in caught])


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape", [(7,), (7, 2), (2, 2, 2), (7, 1, 1, 1), (0,), (3, 5), (3, 1, 5)])
@pytest.mark.parametrize("fn", ["kthvalue", "mode"])
def test_kthvalue_and_mode_warn_of_outs_resized_as_torch(fn, shape, keepdim):
    """torch resizes their outs to the shape with keepdim, inserting the reduced dim into an
    out's shape first (mode always, kthvalue when out has one dim less than the input)."""
    x = np.random.default_rng(0).integers(0, 3, (3, 4, 5)).astype(np.float32)
    args = {"kthvalue": (2, 1, keepdim), "mode": (1, keepdim)}[fn]
    seen = [_resize_warnings(
        lib, lambda lib, *o: getattr(lib, fn)(lib.from_numpy(x), *args, out=o),
        lib.empty(shape), lib.empty(shape, dtype=lib.int64)) for lib in (gt, torch)]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("shape", [(3,), (3, 1), (1, 3), (4,), (2, 2), (0,), (0, 5)])
@pytest.mark.parametrize("fn", ["arange", "fftfreq"])
def test_arange_keeps_an_out_of_as_many_elements_and_warns_in_its_own_words(fn, shape):
    make = {"arange": lambda lib, o: lib.arange(1, 7, 2, out=o),
            "fftfreq": lambda lib, o: lib.fft.fftfreq(3, out=o)}[fn]
    seen = [_resize_warnings(lib, make, lib.empty(shape)) for lib in (gt, torch)]
    assert seen[0][1:] == seen[1][1:]


FACTORIES = {
    "arange": lambda lib, **o: lib.arange(2, **o), "empty": lambda lib, **o: lib.empty(2, **o),
    "eye": lambda lib, **o: lib.eye(2, **o), "full": lambda lib, **o: lib.full((2,), 1.0, **o),
    "linspace": lambda lib, **o: lib.linspace(0, 1, 2, **o),
    "logspace": lambda lib, **o: lib.logspace(0, 1, 2, **o),
    "ones": lambda lib, **o: lib.ones(2, **o), "zeros": lambda lib, **o: lib.zeros(2, **o),
    "rand": lambda lib, **o: lib.rand(2, **o), "randn": lambda lib, **o: lib.randn(2, **o),
    "randint": lambda lib, **o: lib.randint(0, 3, (2,), **o),
    "randperm": lambda lib, **o: lib.randperm(2, **o), "range": lambda lib, **o: lib.range(0, 1, **o),
    "fft.fftfreq": lambda lib, **o: lib.fft.fftfreq(2, **o),
    "fft.rfftfreq": lambda lib, **o: lib.fft.rfftfreq(2, **o),
}


def _made(lib, make, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = make(lib, **kwargs)
        return str(result.dtype).split(".")[-1], tuple(result.shape)
    except Exception as e:  # noqa: BLE001 (compared)
        return _refusal(e)


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("dtype, out_dtype", [("float32", "float64"), ("int64", "float32"),
                                              ("float64", "float64"), (None, "int32")])
def test_a_factorys_dtype_must_be_its_outs(name, dtype, out_dtype):
    seen = [_made(lib, FACTORIES[name], out=lib.empty(0, dtype=getattr(lib, out_dtype)),
                  **({} if dtype is None else {"dtype": getattr(lib, dtype)}))
            for lib in (gt, torch)]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "float64",
                                   "complex64"])
def test_factories_make_the_dtypes_torchs_kernels_make(name, dtype):
    """rand and randn draw no integers, arange and range count in no complex numbers (nor
    bools); fftfreq's dtype is arange's, and out's when it is given."""
    seen = [(_made(lib, FACTORIES[name], dtype=getattr(lib, dtype)),
             _made(lib, FACTORIES[name], out=lib.empty(0, dtype=getattr(lib, dtype))))
            for lib in (gt, torch)]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("low, high", [(0, 256), (0, 257), (-1, 3), (-129, 0), (-128, 0),
                                       (0, 2), (1, 3)])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool", "int16", "float16"])
def test_randint_refuses_bounds_its_dtype_cannot_hold_as_torch(low, high, dtype):
    seen = [_made(lib, lambda lib: lib.randint(low, high, (2,), dtype=getattr(lib, dtype)))
            for lib in (gt, torch)]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("n, dtype", [(256, "uint8"), (257, "uint8"), (128, "int8"),
                                      (129, "int8"), (40000, "int16"), (2049, "float16"),
                                      (2050, "float16")])
def test_randperm_refuses_an_n_its_dtype_cannot_count_to_as_torch(n, dtype):
    seen = [_made(lib, lambda lib: lib.randperm(n, dtype=getattr(lib, dtype)))
            for lib in (gt, torch)]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", ["bool", "int64", "float16", "float64", "complex64"])
def test_bernoulli_draws_into_an_out_of_any_real_dtype(dtype):
    seen = [_made(lib, lambda lib: lib.bernoulli(_inputs(lib).x, out=lib.empty(
        0, dtype=getattr(lib, dtype)))) for lib in (gt, torch)]
    assert seen[0] == seen[1]


DTYPES = ["float32", "float64", "int32", "int64"]


@pytest.mark.parametrize("second", DTYPES)
@pytest.mark.parametrize("first", DTYPES)
@pytest.mark.parametrize("name", ["frexp", "median", "nanmedian"])
def test_the_outs_of_a_tuple_are_checked_in_torchs_order(name, first, second):
    """frexp's mantissa is checked before its exponent, median's indices before its values."""
    make = {"frexp": lambda lib, x, o: lib.frexp(x, out=o),
            "median": lambda lib, x, o: lib.median(x, 1, out=o),
            "nanmedian": lambda lib, x, o: lib.nanmedian(x, 1, out=o)}[name]
    seen = []
    for lib in (gt, torch):
        outs = (lib.empty(0, dtype=getattr(lib, first)), lib.empty(0, dtype=getattr(lib, second)))
        seen.append(_made(lib, lambda lib: make(lib, _inputs(lib).x, outs)[0]))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("out_int32", [False, True])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_searchsorted_wants_the_index_dtype_its_flag_names(dtype, out_int32):
    seen = [_made(lib, lambda lib: lib.searchsorted(
        _inputs(lib).sorted, _inputs(lib).x, out_int32=out_int32,
        out=lib.empty(0, dtype=getattr(lib, dtype)))) for lib in (gt, torch)]
    assert seen[0] == seen[1]


LISTS = {"split_copy": lambda lib, x, **o: lib.split_copy(x, 2, 1, **o),
         "split_with_sizes_copy": lambda lib, x, **o: lib.split_with_sizes_copy(x, [1, 3], 1,
                                                                                **o),
         "unbind_copy": lambda lib, x, **o: lib.unbind_copy(x, 1, **o)}


@pytest.mark.parametrize("requires", ["nothing", "x", "out"])
@pytest.mark.parametrize("count", [-1, 0, 1])
@pytest.mark.parametrize("name", LISTS)
def test_the_copies_with_several_results_write_a_list_of_outs_as_torch(name, count, requires):
    """torch writes each result into its out (split_copy by copy_, keeping out's shape; the
    others resized), returns None and records no history; a list of another length, or an
    out that requires grad where torch checks it, is refused in torch's words."""
    seen = []
    for lib in (gt, torch):
        x = _inputs(lib).x
        shapes = [tuple(r.shape) for r in LISTS[name](lib, x)]
        outs = [lib.empty(s) for s in shapes + shapes[:1]][:len(shapes) + count]
        if requires == "x":
            x.requires_grad_()
        elif requires == "out":
            outs[0].requires_grad_()
        try:
            returned = LISTS[name](lib, x, out=outs)
            seen.append([returned] + [(tuple(o.shape), o.grad_fn is None, o.requires_grad,
                                       o.detach().numpy().copy()) for o in outs])
        except Exception as e:  # noqa: BLE001 (compared)
            seen.append(_refusal(e))
    (mine, theirs) = seen
    if isinstance(theirs, tuple) or isinstance(mine, tuple):  # (refused)
        assert mine == theirs
        return
    assert mine[0] is None and theirs[0] is None and len(mine) == len(theirs)
    for (*written, values), (*their_written, their_values) in zip(mine[1:], theirs[1:]):
        assert written == their_written
        np.testing.assert_array_equal(values, their_values)


@pytest.mark.parametrize("name", LISTS)
def test_a_list_of_outs_is_not_a_tensor(name):
    messages = []
    for lib in (gt, torch):
        with pytest.raises(TypeError) as info:
            LISTS[name](lib, _inputs(lib).x, out=lib.empty(0))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("shape", [(0,), (7,), (1,), (3, 2), (2, 3, 2), (3, 1), (2,)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_copy_into_a_tensor_of_another_shape_broadcasts_or_refuses_as_torch(shape, dtype):
    def copied(lib):
        target = lib.zeros(shape, dtype=getattr(lib, dtype))
        target.copy_(lib.from_numpy(np.arange(1, 7, dtype=np.float32).reshape(3, 2)))
        return target.numpy().tolist()
    seen = [_made(lib, lambda lib: lib.tensor(copied(lib))) for lib in (gt, torch)]
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "float64"])
@pytest.mark.parametrize("fn", ["sum", "prod", "cumsum", "cumprod", "nansum"])
def test_sums_and_products_asked_for_in_a_dtype_keep_it_as_torch(fn, dtype):
    """What out= asks of them (they compute in out's dtype): a bool sum is any, a product all,
    an int32 sum stays int32; torch's scans have no bool kernel."""
    def made(lib):
        x = _inputs(lib).x * 4 - 2
        result = getattr(lib, fn)(x, 1, dtype=getattr(lib, dtype))
        return str(result.dtype).split(".")[-1], result.tolist()
    seen = [_made_values(lib, made) for lib in (gt, torch)]
    assert seen[0] == seen[1]


def _made_values(lib, made):
    try:
        return made(lib)
    except Exception as e:  # noqa: BLE001 (compared)
        return _refusal(e)
