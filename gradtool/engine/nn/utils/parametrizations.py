"""nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as parametrizations
(nn.utils.parametrize), torch's newer spelling of nn.utils.weight_norm / spectral_norm:
`module.parametrizations.weight.original0` (g) and `original1` (v) for weight_norm,
`...weight.original` and the power iteration's `_u`, `_v` buffers for spectral_norm,
`...weight.original` and the trivialization's `base` buffer for orthogonal."""
from enum import Enum, auto

from .... import engine as _torch  # torch.cat, eye, matrix_exp, geqrf, linalg: loaded on use
from ...autograd.grad_mode import no_grad
from ...autograd.tensor import Tensor
from .. import functional as F
from ..module import Module
from . import parametrize
from .weight_norm import norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eps = 10.0 * n * _torch.finfo(Q.dtype).eps  # torch's tolerance: loose enough, not too loose
    return _torch.allclose(Q.mH @ Q, _torch.eye(k, dtype=Q.dtype), atol=eps)


def _make_orthogonal(A):
    """The Q of A = QR (A tall, maybe complex) with diag(R) real and non-negative."""
    X, tau = _torch.geqrf(A)
    Q = _torch.linalg.householder_product(X, tau)
    # X's diagonal is R's (always real): flip the columns whose R entry is negative
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """An orthogonal (unitary) matrix from an unconstrained one: exp or the Cayley map of
    a skew-symmetric matrix built from its lower triangle, or a product of Householder
    reflectors; with use_trivialization, times a stored orthogonal `base`, so that the
    original starts at zero and the optimiser moves around the current point."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        # complex or rectangular reflectors cannot give every unitary matrix (too few
        # parameters), and their tau cannot be recovered from the reflectors alone
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:  # work on a tall matrix
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # n*k - k(k-1)/2 parameters are enough
            if n != k:  # embed into a square matrix
                X = _torch.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _torch.matrix_exp(A)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^-1
                Id = _torch.eye(n, dtype=A.dtype)
                Q = _torch.linalg.solve(_torch.add(Id, A, alpha=-0.5),
                                        _torch.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:  # X is real: complex householder is refused above
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _torch.linalg.householder_product(A, tau)
            # X's diagonal holds the signs (1 or -1): not differentiated, hence the int cast
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            # without a base only householder has an inverse: the reflectors of Q's QR
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential "
                    "or the Cayley parametrizations when use_trivialization=False.")
            A, tau = _torch.geqrf(Q)
            # diag(R) > 0 picks one of the QR decompositions (Q = (-Q)(-I) is another);
            # LAPACK gives tau exactly 0 where it skips a reflection
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q into a full n x n orthogonal matrix
            N = _torch.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(_torch.cat([Q, N], dim=-1))
        self.base = Q
        # -I, as householder(zeros) == eye reads the signs from the diagonal
        neg_Id = _torch.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Reparametrize module.<name> (a matrix or a batch) as an orthogonal or unitary matrix;
    the map defaults to matrix_exp for square or complex weights, householder otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square_or_complex = weight.size(-2) == weight.size(-1) or weight.is_complex()
        orthogonal_map = "matrix_exp" if square_or_complex else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """g * v / ||v|| (norms over every dim but `dim`). Torch runs one fused op
    (_weight_norm); here the composite (norm, div, mul): the same values and gradients."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize module.<name> as g * v / ||v||; a state_dict of the older weight_norm
    (`<name>_g`, `<name>_v`) still loads."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)
    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value of the weight (as a matrix, `dim`
    first) estimated by power iteration, one more step per training-mode access."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):  # (torch writes into _u and _v: out=)
                self._u = F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps)
                self._v = F.normalize(weight_mat.H.mv(self._u), dim=0, eps=self.eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / u.conj().dot(weight_mat.mv(v))  # (torch: vdot, one VdotBackward0)

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize module.<name> as weight / sigma (dim 1 for transposed convolutions)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a name torch has here and the engine lacks
