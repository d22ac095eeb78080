"""The LU factorisation's names (torch.lu, Tensor.lu, torch.lu_unpack, torch.linalg.lu_factor,
lu_factor_ex, lu) and the typed storages (torch.ByteStorage, ...) that legacy constructors
view. The programs run on either library: tests/parity/test_lu_and_storages.py compares them
with torch."""
import pickle
import warnings

import numpy as np
import pytest

import gradtool as gt

A = np.array([[1.0, 2.0, 0.5], [4.0, -1.0, 2.0], [0.5, 3.0, 1.0]])
WIDE = np.array([[0.0, 2.0, 1.0, -1.0], [3.0, 1.0, 0.5, 2.0], [1.0, 1.0, 1.0, 0.0]])


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _lu_gradients(lib):
    """Gradients through linalg.lu's L and U (lu_factor's node and lu_unpack's here, torch's
    one LinalgLuBackward0) and through lu_factor's LU: square, wide and tall."""
    grads = []
    for X in (A, WIDE, WIDE.T.copy()):
        x = lib.tensor(X, requires_grad=True)
        P, L, U = lib.linalg.lu(x)
        grads.append(lib.autograd.grad((L * L).sum() + (U * U).sum(), x)[0])
        grads.append(lib.autograd.grad((lib.linalg.lu_factor(x).LU ** 3).sum(), x)[0])
    return grads


PROGRAMS = {
    "torch_lu": lambda lib: list(_quiet(lambda: lib.lu(lib.tensor(A)))),
    "tensor_lu_infos": lambda lib: list(lib.tensor(A).lu(get_infos=True)),
    "lu_unpack": lambda lib: list(lib.lu_unpack(*lib.tensor(A).lu())),
    "lu_unpack_wide": lambda lib: list(lib.lu_unpack(*lib.linalg.lu_factor(lib.tensor(WIDE)))),
    "lu_unpack_tall": lambda lib: list(lib.lu_unpack(*lib.linalg.lu_factor(
        lib.tensor(WIDE.T.copy())))),
    "lu_batched": lambda lib: list(lib.linalg.lu(lib.tensor(np.stack([A, A[::-1].copy()])))),
    "lu_factor_ex_singular": lambda lib: list(lib.linalg.lu_factor_ex(
        lib.tensor([[1.0, 2.0], [2.0, 4.0]]))),
    "lu_unpack_gradient": lambda lib: (lambda LU: list(lib.autograd.grad(
        sum((t * t).sum() for t in lib.lu_unpack(LU, lib.tensor(A).lu()[1])[1:]), LU)))(
        lib.tensor(A, requires_grad=True)),
    "lu_gradients": lambda lib: _lu_gradients(lib),
    "byte_storage": lambda lib: [lib.ByteTensor(lib.ByteStorage.from_buffer(
        pickle.dumps([1, 2]))), list(lib.ByteStorage([1, 2, 3])), len(lib.ByteStorage(4)),
        lib.FloatStorage([1.5, 2.5]).tolist(),
        lib.ByteTensor(lib.ByteStorage.from_buffer(b"abcdef")).view(2, 3)],
}
ERRORS = {
    "lu_without_pivoting": lambda lib: lib.linalg.lu_factor(lib.tensor(A), pivot=False),
    "lu_of_a_vector": lambda lib: lib.linalg.lu_factor(lib.tensor([1.0, 2.0])),
}


def test_the_factors_multiply_back_to_the_matrix():
    P, L, U = PROGRAMS["lu_unpack"](gt)
    np.testing.assert_allclose((P @ L @ U).numpy(), A, atol=1e-14)
    for name in ("lu_unpack_wide", "lu_unpack_tall"):
        P, L, U = PROGRAMS[name](gt)
        assert np.allclose((P @ L @ U).numpy(), WIDE if name.endswith("wide") else WIDE.T)
    assert PROGRAMS["lu_factor_ex_singular"](gt)[2].item() == 2


def test_torch_lu_warns_that_it_is_deprecated():
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        gt.lu(gt.tensor(A))


def test_a_complex_lu_pivots_as_lapack_and_records_its_node():
    """A complex LU pivots on |Re| + |Im| (LAPACK's izamax) and is differentiable (its
    gradients are sweep cases)."""
    LU, pivots = gt.tensor(A * (1 + 1j), requires_grad=True).lu()
    assert LU.dtype == gt.complex128 and pivots.tolist() == [2, 3, 3]
    assert LU.grad_fn.name() == "LinalgLuFactorExBackward0"
    # |3 + 0j| = 3 > |2 + 2j| = 2.83, but LAPACK's measure gives 4 > 3: row 1 is the pivot
    assert gt.linalg.lu_factor(gt.tensor([[3, 0], [2 + 2j, 1]])).pivots.tolist() == [2, 2]


def test_a_byte_tensor_views_a_storage_of_a_buffer():
    tensor = PROGRAMS["byte_storage"](gt)[0]
    assert pickle.loads(bytes(tensor.tolist())) == [1, 2] and tensor.dtype is gt.uint8


@pytest.mark.parametrize("name", ERRORS)
def test_refusals(name):
    with pytest.raises(RuntimeError):
        ERRORS[name](gt)
