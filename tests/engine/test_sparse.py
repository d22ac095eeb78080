"""Sparse COO tensors on dense storage (gradtool/engine/sparse.py): torch.sparse_coo_tensor,
the legacy torch.sparse.FloatTensor, Tensor.to_sparse, coalesce/indices/values/to_dense,
torch.sparse.mm and torch.spmm, with gradients reaching the values. The programs run on either
library: tests/parity/test_sparse.py compares them with torch."""
import numpy as np
import pytest

import gradtool as gt
from gradcheck_util import check_grads

INDICES = [[0, 1, 1, 0], [2, 0, 2, 2]]
VALUES = [3.0, 4.0, 5.0, 1.0]
MAT = np.arange(6.0).reshape(3, 2) - 2


def _coo(lib, values=None, size=(2, 3), **kwargs):
    return lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES) if values is None
                                 else values, size, **kwargs)


PROGRAMS = {
    "to_dense": lambda lib: [_coo(lib).to_dense()],
    "coalesce": lambda lib: [_coo(lib).coalesce().indices(), _coo(lib).coalesce().values(),
                             _coo(lib).coalesce().to_dense()],
    "raw_indices_values": lambda lib: [_coo(lib)._indices(), _coo(lib)._values()],
    "flags": lambda lib: [_coo(lib).is_sparse, _coo(lib).is_coalesced(),
                          _coo(lib).coalesce().is_coalesced(), _coo(lib).coalesce()._nnz(),
                          _coo(lib).sparse_dim(), _coo(lib).dense_dim(),
                          repr(_coo(lib).layout).split(".")[-1],
                          lib.zeros(2).is_sparse, tuple(_coo(lib).shape),
                          str(_coo(lib).dtype).split(".")[-1]],
    "inferred_size": lambda lib: [tuple(lib.sparse_coo_tensor(lib.tensor(INDICES),
                                                              lib.tensor(VALUES)).shape)],
    "integer_values": lambda lib: [lib.sparse_coo_tensor(lib.tensor(INDICES),
                                                         lib.tensor([1, 2, 3, 4]),
                                                         (2, 3)).to_dense()],
    "hybrid": lambda lib: [lib.sparse_coo_tensor(lib.tensor([[0, 2, 0]]), lib.tensor(
        [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), (3, 2)).coalesce().values()],
    "products": lambda lib: [lib.sparse.mm(_coo(lib), lib.tensor(MAT, dtype=lib.float32)),
                             lib.spmm(_coo(lib), lib.tensor(MAT, dtype=lib.float32)),
                             lib.mm(_coo(lib), lib.tensor(MAT, dtype=lib.float32))],
    "legacy": lambda lib: [lib.sparse.FloatTensor(lib.tensor(INDICES), lib.tensor(VALUES),
                                                  lib.Size([2, 3])).to_dense()],
    "to_sparse": lambda lib: (lambda s: [s.indices(), s.values(), s.is_coalesced()])(
        lib.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse()),
    "values_grad": lambda lib: (lambda v: [lib.autograd.grad(
        lib.sparse.mm(_coo(lib, v), lib.tensor(MAT, dtype=lib.float32)).sum(), v)[0]])(
        lib.tensor(VALUES, requires_grad=True)),
}
ERRORS = {
    "uncoalesced_indices": lambda lib: _coo(lib).indices(),
    "uncoalesced_values": lambda lib: _coo(lib).values(),
    "index_beyond_size": lambda lib: _coo(lib, size=(2, 2), check_invariants=True),
    "nnz_mismatch": lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor([1.0])),
}


def test_duplicates_add_up_and_coalesce_sorts():
    np.testing.assert_array_equal(PROGRAMS["to_dense"](gt)[0].numpy(), [[0, 0, 4], [4, 0, 5]])
    indices, values, _ = PROGRAMS["coalesce"](gt)
    np.testing.assert_array_equal(indices.numpy(), [[0, 1, 1], [2, 0, 2]])
    np.testing.assert_array_equal(values.numpy(), [4, 4, 5])
    assert PROGRAMS["flags"](gt)[:3] == [True, False, True]


def test_products_give_the_dense_products_and_gradients_reach_the_values():
    dense = np.array([[0, 0, 4], [4, 0, 5]])
    for out in PROGRAMS["products"](gt):
        np.testing.assert_allclose(out.numpy(), dense @ MAT)
    values = gt.tensor(VALUES, dtype=gt.float64, requires_grad=True)
    mat = gt.tensor(MAT, requires_grad=True)  # (float64, as the values)
    check_grads(lambda v, m: gt.sparse.mm(_coo(gt, v), m) ** 2, [values, mat], order=2)
    check_grads(lambda v: _coo(gt, v).coalesce().values() * 3, [values], order=2)


@pytest.mark.parametrize("name", ERRORS)
def test_refusals(name):
    with pytest.raises(RuntimeError):
        ERRORS[name](gt)
