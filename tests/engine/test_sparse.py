"""Sparse COO tensors on dense storage (gradtool/engine/sparse.py): torch.sparse_coo_tensor,
the legacy torch.sparse.FloatTensor, Tensor.to_sparse, coalesce/indices/values/to_dense,
torch.sparse.mm and torch.spmm, with gradients reaching the values. The programs run on either
library: tests/parity/test_sparse.py compares them with torch."""
import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    "sparse_mask": lambda lib: (lambda m, c: [m._indices(), m._values(), m.is_coalesced(),
                                              m.to_dense(), c.indices(), c.values()])(
        (lib.arange(6.0).reshape(2, 3) + 1).sparse_mask(_coo(lib)),
        (lib.arange(6.0).reshape(2, 3) + 1).sparse_mask(_coo(lib).coalesce())),
    "spdiags": lambda lib: (lambda s: [s._indices(), s._values(), s.is_coalesced(),
                                       s.to_dense()])(lib.sparse.spdiags(
        lib.tensor([[1.0, 2, 3], [4, 5, 6]]), lib.tensor([0, -1]), (3, 3))),
    "spdiags_wide": lambda lib: [lib.sparse.spdiags(lib.tensor([[1.0, 2, 3], [4, 5, 6]]),
                                                    lib.tensor([0, 1]), (3, 4)).to_dense(),
                                 lib.sparse.spdiags(lib.tensor([1.0, 2, 3]), lib.tensor([0]),
                                                    (3, 3)).to_dense()],
    "sparse_sum": lambda lib: [lib.sparse.sum(_coo(lib)), lib.sparse.sum(_coo(lib), 0).indices(),
                               lib.sparse.sum(_coo(lib), 0).values(),
                               lib.sparse.sum(_coo(lib), (0, 1))],
    "sparse_addmm": lambda lib: [lib.sparse.addmm(lib.ones(2, 2), _coo(lib), lib.tensor(
        MAT, dtype=lib.float32), beta=2, alpha=0.5)],
    "softmax": lambda lib: [lib.sparse.softmax(_coo(lib), 1).values(),
                            lib.sparse.log_softmax(_coo(lib), 0).values(),
                            lib.sparse.softmax(_coo(lib), 1).indices()],
    "softmax_and_mask_grads": lambda lib: (lambda v, x: list(lib.autograd.grad(
        (lib.sparse.softmax(_coo(lib, v), 1).values() * lib.tensor([1.0, 2, 3])).sum()
        + (x.sparse_mask(_coo(lib).coalesce()).to_dense() * 2).sum(), (v, x))))(
        lib.tensor(VALUES, requires_grad=True), lib.ones(2, 3, requires_grad=True)),
}
ERRORS = {
    "uncoalesced_indices": lambda lib: _coo(lib).indices(),
    "uncoalesced_values": lambda lib: _coo(lib).values(),
    "index_beyond_size": lambda lib: _coo(lib, size=(2, 2), check_invariants=True),
    "nnz_mismatch": lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor([1.0])),
    "sparse_mask_sizes": lambda lib: lib.ones(1, 3).sparse_mask(_coo(lib)),
    "spdiags_duplicate_offsets": lambda lib: lib.sparse.spdiags(lib.ones(2, 3), lib.tensor(
        [0, 0]), (3, 3)),
    "spdiags_offsets_count": lambda lib: lib.sparse.spdiags(lib.ones(2, 3), lib.tensor([0]),
                                                            (3, 3)),
    "spdiags_strided": lambda lib: lib.sparse.spdiags(lib.ones(1, 3), lib.tensor([0]), (3, 3),
                                                      layout=lib.strided),
    "sparse_sum_of_dense": lambda lib: lib.sparse.sum(lib.ones(2, 2)),
    "sparse_sum_of_csr": lambda lib: lib.sparse.sum(lib.ones(2, 2).to_sparse_csr()),
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


def test_torch_sparse_functions_of_coo_tensors():
    """sparse_mask, spdiags, sparse.sum and sparse.softmax: values and gradients."""
    np.testing.assert_array_equal(PROGRAMS["spdiags"](gt)[-1].numpy(),
                                  [[1, 0, 0], [4, 2, 0], [0, 5, 3]])
    total, indices, values, all_dims = PROGRAMS["sparse_sum"](gt)
    assert (total.item(), indices.tolist(), values.tolist()) == (13.0, [[0, 2]], [4.0, 9.0])
    np.testing.assert_allclose(PROGRAMS["softmax"](gt)[0].numpy(),  # rows (4) and (4, 5)
                               [1, 1 / (1 + np.e), 1 / (1 + 1 / np.e)], rtol=1e-6)
    values = gt.tensor(VALUES, dtype=gt.float64, requires_grad=True)
    check_grads(lambda v: gt.sparse.softmax(_coo(gt, v), 1).values(), [values], order=2)
    check_grads(lambda v: gt.sparse.log_softmax(_coo(gt, v), 0).values(), [values])
    x = gt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    check_grads(lambda x: x.sparse_mask(_coo(gt).coalesce()).values() ** 2, [x], order=2)
    check_grads(lambda x: x.sparse_mask(_csr(gt)).to_dense() ** 2, [x])
    diagonals = gt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    check_grads(lambda d: gt.sparse.spdiags(d, gt.tensor([0, 1]), (3, 4)).to_dense() ** 2,
                [diagonals])


# ---- compressed layouts (CSR, CSC, BSR, BSC): gradtool/engine/autograd/sparse_compressed.py
CROW, COL, CSR_VALUES = [0, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0]  # DENSE's
DENSE = [[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]
MAT_B = [[1.0, 0.0], [0.0, 5.0], [0.0, 0.0]]  # (DENSE @ MAT_B: one structural element)
BATCHED = [[[1.0, 0.0], [0.0, 2.0]], [[0.0, 3.0], [4.0, 0.0]]]


def _csr(lib, values=None, size=(2, 3), **kwargs):
    return lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor(COL), lib.tensor(CSR_VALUES)
                                 if values is None else values, size, **kwargs)


def _bsr(lib, values=None):
    return lib.sparse_bsr_tensor(lib.tensor([0, 1, 2]), lib.tensor([0, 1]), lib.arange(
        8.0).reshape(2, 2, 2) if values is None else values)


def compressed_parts(t):
    """What a compressed tensor is made of, as plain Python and numpy (either library)."""
    layout = repr(t.layout).split(".")[-1]
    compressed, plain = (t.crow_indices(), t.col_indices()) if layout in (
        "sparse_csr", "sparse_bsr") else (t.ccol_indices(), t.row_indices())
    return (layout, tuple(t.shape), str(t.dtype).split(".")[-1], t._nnz(), compressed.tolist(),
            plain.tolist(), t.values().detach().numpy(), t.to_dense().detach().numpy())


def _grads(lib, fn, *inputs):
    """fn's gradients with respect to inputs, densely (their layouts compared apart)."""
    grads = lib.autograd.grad(fn(*inputs), inputs)
    return [g.to_dense() for g in grads]


def _leaf_grad(lib, fn):
    leaf = _csr(lib, lib.tensor(CSR_VALUES, dtype=lib.float64), requires_grad=True)
    fn(lib, leaf).sum().backward()
    return [leaf.grad.to_dense(), leaf.is_leaf]


def _mat(lib, shape=(3, 2), requires_grad=False):
    return lib.tensor(np.arange(float(np.prod(shape))).reshape(shape) - 2, dtype=lib.float64,
                      requires_grad=requires_grad)


COMPRESSED = {
    "csr": lambda lib: [_csr(lib)],
    "csr_inferred_size": lambda lib: [lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor(COL),
                                                            lib.tensor(CSR_VALUES))],
    "csr_dtype_and_lists": lambda lib: [lib.sparse_csr_tensor(CROW, COL, CSR_VALUES, (2, 5),
                                                              dtype=lib.float64)],
    "csr_int32_indices": lambda lib: [lib.sparse_csr_tensor(
        lib.tensor(CROW, dtype=lib.int32), lib.tensor(COL, dtype=lib.int32),
        lib.tensor([1, 2, 3]), (2, 3), check_invariants=True)],
    "csr_hybrid": lambda lib: [lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor(COL),
                                                     lib.tensor([[1.0, 2], [2, 3], [3, 4]]))],
    "csc": lambda lib: [lib.sparse_csc_tensor(lib.tensor(CROW), lib.tensor(COL),
                                              lib.tensor(CSR_VALUES))],
    "bsr": lambda lib: [_bsr(lib), lib.sparse_bsr_tensor(lib.tensor([0, 1, 2]), lib.tensor(
        [0, 1]), lib.arange(8.0).reshape(2, 2, 2), (4, 6))],
    "bsc": lambda lib: [lib.sparse_bsc_tensor(lib.tensor([0, 1, 2]), lib.tensor([0, 1]),
                                              lib.arange(8.0).reshape(2, 2, 2))],
    "compressed_named_layout": lambda lib: [lib.sparse_compressed_tensor(
        lib.tensor(CROW), lib.tensor(COL), lib.tensor(CSR_VALUES), (3, 2),
        layout=lib.sparse_csc)],
    "empty": lambda lib: [lib.zeros(2, 3).to_sparse_csr(), lib.sparse_csr_tensor(
        lib.tensor([0, 0, 0]), lib.tensor([], dtype=lib.int64), lib.tensor([]))],
    "to_csr_csc": lambda lib: [lib.tensor(DENSE).to_sparse_csr(),
                               lib.tensor(DENSE).to_sparse_csc(),
                               lib.tensor(DENSE).to_sparse(layout=lib.sparse_csr),
                               lib.tensor([[0, 1], [2, 0]]).to_sparse_csc()],
    "to_bsr_bsc": lambda lib: [lib.tensor(DENSE).to_sparse_bsr((1, 1)),
                               lib.tensor(DENSE).to_sparse_bsc((1, 3)),
                               lib.ones(4, 4).to_sparse_bsr(2),
                               lib.tensor(DENSE).to_sparse(layout=lib.sparse_bsr,
                                                           blocksize=(2, 1))],
    "batched_and_dense_dims": lambda lib: [lib.tensor(BATCHED).to_sparse_csr(),
                                           lib.tensor(BATCHED).to_sparse_csc(),
                                           lib.ones(2, 3, 2).to_sparse_csr(dense_dim=1)],
    "between_layouts": lambda lib: [lib.tensor(DENSE).to_sparse().to_sparse_csr(),
                                    _bsr(lib).to_sparse_bsc(2), _bsr(lib).to_sparse_bsr(2),
                                    lib.tensor(DENSE).to_sparse_csc().to_sparse_bsr((2, 1)),
                                    lib.tensor(DENSE).to_sparse_csc().to_sparse_csr(),
                                    _csr(lib).to_sparse_csr(), _csr(lib).to_sparse_bsr(1),
                                    _csr(lib).to_sparse(layout=lib.sparse_csc)],
    "elementwise": lambda lib: [_csr(lib) * 2, 3 * _csr(lib), _csr(lib) + _csr(lib),
                                _csr(lib) * _csr(lib), -_csr(lib), _csr(lib).sin(),
                                _csr(lib).abs(), _csr(lib).relu(), lib.sqrt(_csr(lib)),
                                lib.nn.functional.relu(_csr(lib)), _csr(lib).tanh(),
                                _csr(lib).isnan(), _bsr(lib).sin(),
                                _csr(lib) + lib.tensor(DENSE).to_sparse_csr(),
                                lib.ones(2, 3) * _csr(lib), lib.mul(_csr(lib), 2),
                                lib.add(_csr(lib), _csr(lib), alpha=2),
                                _csr(lib) * _csr(lib).to_sparse_csc(), _csr(lib).erfinv(),
                                _csr(lib).fix()],
    "in_place": lambda lib: [_csr(lib).mul_(2), _csr(lib).sin_(), _csr(lib).zero_(),
                             _csr(lib).neg_(), _bsr(lib).abs_()],
    "sparse_products": lambda lib: [
        lib.tensor(DENSE).to_sparse_csr() @ lib.tensor(MAT_B).to_sparse_csr(),
        lib.mm(lib.tensor(DENSE).to_sparse_csc(), lib.tensor(MAT_B).to_sparse_csc()),
        lib.sparse.mm(lib.tensor(DENSE).to_sparse_csr(), lib.tensor(MAT_B).to_sparse_csr()),
        lib.tensor(DENSE).to_sparse_csc().matmul(lib.tensor(MAT_B).to_sparse_csr())],
    "transposes": lambda lib: [_csr(lib).t(), _csr(lib).transpose(0, 1), _bsr(lib).t()],
    "pickled": lambda lib: [pickle.loads(pickle.dumps(_bsr(lib))), pickle.loads(pickle.dumps(
        _csr(lib, lib.tensor(CSR_VALUES, dtype=lib.float64)).to_sparse_csc()))],
    "casts": lambda lib: [_csr(lib).double(), _csr(lib).to(lib.float64), _csr(lib).clone(),
                          _csr(lib).detach()],
    "sum_keepdim": lambda lib: [_csr(lib).sum(0, keepdim=True), _csr(lib).sum(1, keepdim=True)],
    "sparse_mask": lambda lib: [(lib.arange(6.0).reshape(2, 3) + 1).sparse_mask(_csr(lib)),
                                (lib.arange(6.0).reshape(2, 3) + 1).sparse_mask(
                                    lib.tensor(DENSE).to_sparse_csc())],
    "spdiags": lambda lib: [lib.sparse.spdiags(lib.tensor([[1.0, 2, 3], [4, 5, 6]]), lib.tensor(
        [0, 1]), (3, 4), layout=lib.sparse_csr), lib.sparse.spdiags(
            lib.tensor([[1.0, 2, 3], [4, 5, 6]]), lib.tensor([0, -1]), (3, 3),
            layout=lib.sparse_csc)],
    "sampled_addmm": lambda lib: [lib.sparse.sampled_addmm(
        _csr(lib, lib.tensor(CSR_VALUES, dtype=lib.float64)), _mat(lib, (2, 4)),
        _mat(lib, (4, 3)), beta=0.5, alpha=2)],
}
# programs whose results are dense (or plain Python)
DENSE_RESULTS = {
    "flags": lambda lib: [_csr(lib).is_sparse, _csr(lib).is_sparse_csr,
                          lib.tensor(DENSE).to_sparse_csc().is_sparse_csr,
                          lib.ones(2).is_sparse_csr, _csr(lib).sparse_dim(),
                          _csr(lib).dense_dim(), _csr(lib).dim(), _csr(lib).numel(),
                          _csr(lib).layout == lib.sparse_csr, repr(lib.sparse_bsc),
                          lib.ones(2, 2, 2).to_sparse_csr(dense_dim=1).dense_dim()],
    "products": lambda lib: [_csr(lib) @ _mat(lib).float(), lib.mm(_csr(lib), _mat(lib).float()),
                             lib.sparse.mm(_csr(lib), _mat(lib).float()),
                             lib.matmul(_csr(lib), lib.ones(3)),
                             lib.mv(_csr(lib), lib.ones(3)),
                             lib.addmm(lib.ones(2, 2), _csr(lib), _mat(lib).float()),
                             lib.tensor(DENSE).to_sparse_csc() @ _mat(lib).float(),
                             _bsr(lib) @ lib.ones(4, 2)],
    "sums": lambda lib: [_csr(lib).sum(), lib.sum(_bsr(lib)), _csr(lib).sum(dtype=lib.float64)],
    "values_gradients": lambda lib: _grads(lib, lambda v, m: (lib.sparse.mm(
        _csr(lib, v), m) ** 2).sum() + lib.mv(_csr(lib, v), m[:, 0]).sum() + lib.addmm(
        m[:2], _csr(lib, v), m).sum() + _csr(lib, v).to_dense().sum() * 3, lib.tensor(
        CSR_VALUES, dtype=lib.float64, requires_grad=True), _mat(lib, requires_grad=True)),
    "dense_gradients": lambda lib: _grads(lib, lambda d: (d.to_sparse_csr() @ _mat(lib)).sum()
                                          + (d.to_sparse_csc().values() * lib.tensor(
                                              [1.0, 2, 3], dtype=lib.float64)).sum()
                                          + (d.to_sparse_bsr((1, 3)).to_dense() * 5).sum()
                                          + d.to_sparse_csr().to_dense().sum(),
                                          lib.tensor(DENSE, dtype=lib.float64,
                                                     requires_grad=True)),
    "sampled_addmm_gradients": lambda lib: _grads(
        lib, lambda a, b: (lib.sparse.sampled_addmm(_csr(lib, lib.tensor(
            CSR_VALUES, dtype=lib.float64)), a, b).values() * lib.tensor(
                [1.0, -2, 3], dtype=lib.float64)).sum(),
        _mat(lib, (2, 4), requires_grad=True), _mat(lib, (4, 3), requires_grad=True)),
    "values_gradient_with_requires_grad": lambda lib: _grads(
        lib, lambda v: (_csr(lib, v, requires_grad=True) @ _mat(lib)).sum(), lib.tensor(
            CSR_VALUES, dtype=lib.float64, requires_grad=True)),
    "leaf_gradient_mm": lambda lib: _leaf_grad(lib, lambda lib, c: c @ _mat(lib)),
    "leaf_gradient_sparse_mm": lambda lib: _leaf_grad(lib, lambda lib, c: lib.sparse.mm(
        c, _mat(lib))),
    "leaf_gradient_to_dense": lambda lib: _leaf_grad(lib, lambda lib, c: c.to_dense() * 2),
    "leaf_gradient_sum": lambda lib: _leaf_grad(lib, lambda lib, c: c.sum()),
    "to_coo": lambda lib: (lambda s: [s.indices(), s.values(), s.is_coalesced()])(
        lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor(COL), lib.tensor([0.0, 2, 3]),
                              (2, 3)).to_sparse_coo()),
    "blocked_and_csc_to_coo": lambda lib: [
        x for s in (_bsr(lib).to_sparse(), lib.tensor(DENSE).to_sparse_csc().to_sparse_coo())
        for x in (s._indices(), s._values(), s.is_coalesced())],
    "indices_dtypes": lambda lib: [str(lib.tensor(DENSE).to_sparse_csr().crow_indices().dtype),
                                   str(COMPRESSED["csr_int32_indices"](lib)[0].col_indices()
                                       .dtype)],
}
# torch's dispatcher refuses these with a long message; its first sentence is the engine's
NO_KERNEL = {
    "softmax_of_csr": lambda lib: lib.sparse.softmax(_csr(lib), 1),
    "log_softmax_of_csc": lambda lib: lib.sparse.log_softmax(_csr(lib).to_sparse_csc(), 1),
    "softmax_of_dense": lambda lib: lib.sparse.softmax(lib.ones(2, 2), 1),
    "sampled_addmm_of_dense": lambda lib: lib.sparse.sampled_addmm(lib.ones(2, 3),
                                                                   lib.ones(2, 2), lib.ones(2, 3)),
    "sampled_addmm_of_coo": lambda lib: lib.sparse.sampled_addmm(lib.ones(2, 3).to_sparse(),
                                                                 lib.ones(2, 2), lib.ones(2, 3)),
    "mean_of_csr": lambda lib: _csr(lib).mean(),
    "softmax_method_of_csc": lambda lib: _csr(lib).to_sparse_csc().softmax(1),
    "functional_softmax_of_csr": lambda lib: lib.nn.functional.softmax(_csr(lib), 1),
    "view_of_csr": lambda lib: _csr(lib).view(3, 2),
    "norm_of_bsr": lambda lib: _bsr(lib).norm(),
    "max_of_csr": lambda lib: lib.max(_csr(lib)),
    "sparse_mask_of_dense": lambda lib: lib.ones(2, 3).sparse_mask(lib.ones(2, 3)),
}
COMPRESSED_ERRORS = {
    "crow_start": lambda lib: lib.sparse_csr_tensor(lib.tensor([1, 2, 3]), lib.tensor(COL),
                                                    lib.tensor(CSR_VALUES), (2, 3),
                                                    check_invariants=True),
    "crow_end": lambda lib: lib.sparse_csr_tensor(lib.tensor([0, 2, 2]), lib.tensor(COL),
                                                  lib.tensor(CSR_VALUES), (2, 3),
                                                  check_invariants=True),
    "crow_length": lambda lib: _csr(lib, size=(3, 3), check_invariants=True),
    "col_range": lambda lib: _csr(lib, size=(2, 2), check_invariants=True),
    "col_unsorted": lambda lib: lib.sparse_csr_tensor(lib.tensor(CROW), lib.tensor([2, 0, 1]),
                                                      lib.tensor(CSR_VALUES), (2, 3),
                                                      check_invariants=True),
    "nnz": lambda lib: _csr(lib, lib.tensor([1.0, 2.0]), check_invariants=True),
    "index_dtypes": lambda lib: lib.sparse_csr_tensor(lib.tensor(CROW, dtype=lib.int32),
                                                      lib.tensor(COL), lib.tensor(CSR_VALUES),
                                                      check_invariants=True),
    "float_indices": lambda lib: lib.sparse_csr_tensor(lib.tensor([0.0, 2, 3]), lib.tensor(
        [0.0, 2, 1]), lib.tensor(CSR_VALUES), (2, 3), check_invariants=True),
    "dimensionality": lambda lib: _csr(lib, size=(6,), check_invariants=True),
    "index_dims": lambda lib: lib.sparse_csr_tensor(lib.tensor([CROW]), lib.tensor(COL),
                                                    lib.tensor(CSR_VALUES), (1, 2, 3),
                                                    check_invariants=True),
    "scalar_indices": lambda lib: lib.sparse_csr_tensor(lib.tensor(0), lib.tensor(0),
                                                        lib.tensor(1.0)),
    "bsr_values": lambda lib: lib.sparse_bsr_tensor(lib.tensor(CROW), lib.tensor(COL),
                                                    lib.tensor(CSR_VALUES), (2, 3),
                                                    check_invariants=True),
    "bsr_divisible": lambda lib: lib.sparse_bsr_tensor(lib.tensor([0, 1, 2]), lib.tensor(
        [0, 1]), lib.arange(8.0).reshape(2, 2, 2), (4, 5), check_invariants=True),
    "no_layout": lambda lib: lib.sparse_compressed_tensor(lib.tensor(CROW), lib.tensor(COL),
                                                          lib.tensor(CSR_VALUES), (2, 3)),
    "strided_layout": lambda lib: lib.sparse_compressed_tensor(
        lib.tensor(CROW), lib.tensor(COL), lib.tensor(CSR_VALUES), (2, 3), layout=lib.strided),
    "integer_requires_grad": lambda lib: _csr(lib, lib.tensor([1, 2, 3]), requires_grad=True),
    "blocksize_divides": lambda lib: lib.ones(4, 4).to_sparse_bsr((3, 3)),
    "blocksize_missing": lambda lib: lib.ones(2, 2).to_sparse(layout=lib.sparse_bsr),
    "batches_differ": lambda lib: lib.tensor([[[1.0, 0], [0, 0]], [[1, 1], [0, 0]]])
    .to_sparse_csr(),
    "coo_3d": lambda lib: lib.ones(2, 2, 2).to_sparse().to_sparse_csr(),
    "dense_crow": lambda lib: lib.ones(2, 2).crow_indices(),
    "dense_col": lambda lib: lib.ones(2, 2).col_indices(),
    "dense_ccol": lambda lib: lib.ones(2, 2).ccol_indices(),
    "dense_row": lambda lib: lib.ones(2, 2).row_indices(),
    "dense_values": lambda lib: lib.ones(2, 2).values(),
    "dense_indices": lambda lib: lib.ones(2, 2).indices(),
    "dense_coalesce": lambda lib: lib.ones(2, 2).coalesce(),
    "csr_indices": lambda lib: _csr(lib).indices(),
    "csr_is_coalesced": lambda lib: _csr(lib).is_coalesced(),
    "csr_ccol": lambda lib: _csr(lib).ccol_indices(),
    "csc_crow": lambda lib: lib.eye(2).to_sparse_csc().crow_indices(),
    "coo_crow": lambda lib: lib.eye(2).to_sparse().crow_indices(),
    "csr_strides": lambda lib: _csr(lib).stride(),
    "bsr_strides": lambda lib: _bsr(lib).stride(),
    "csr_is_contiguous": lambda lib: _csr(lib).is_contiguous(),
    "csc_contiguous": lambda lib: _csr(lib).to_sparse_csc().contiguous(),
    "csr_deepcopy": lambda lib: copy.deepcopy(_csr(lib)),
    "csr_numpy": lambda lib: _csr(lib).numpy(),
    "csc_numpy": lambda lib: lib.eye(2).to_sparse_csc().numpy(),
    "csr_exp": lambda lib: _csr(lib).exp(),
    "csc_cos": lambda lib: lib.eye(2).to_sparse_csc().cos(),
    "csr_sub": lambda lib: _csr(lib) - _csr(lib),
    "csr_div": lambda lib: _csr(lib) / 2,
    "csr_pow": lambda lib: _csr(lib) ** 2,
    "csr_sigmoid": lambda lib: _csr(lib).sigmoid(),
    "csr_log2": lambda lib: lib.log2(_csr(lib)),
    "blocked_product": lambda lib: _bsr(lib) @ _bsr(lib),
    "product_with_coo": lambda lib: _csr(lib) @ lib.tensor(MAT_B).to_sparse(),
    "csr_clamp": lambda lib: _csr(lib).clamp(0, 1),
    "csr_reshape": lambda lib: _csr(lib).reshape(3, 2),
    "csc_flatten": lambda lib: _csr(lib).to_sparse_csc().flatten(),
    "csr_unsqueeze": lambda lib: _csr(lib).unsqueeze(0),
    "mul_shapes": lambda lib: _csr(lib) * lib.eye(2).to_sparse_csr(),
    "sum_dim": lambda lib: _csr(lib).sum(0),
    "add_shapes": lambda lib: _csr(lib) + lib.eye(2).to_sparse_csr(),
    "add_csc_to_csr": lambda lib: _csr(lib) + _csr(lib).to_sparse_csc(),
    "mm_shapes": lambda lib: lib.mm(_csr(lib), lib.ones(2, 2)),
    "sparse_mm_shapes": lambda lib: lib.sparse.mm(_csr(lib), lib.ones(2, 2)),
    "mv_shapes": lambda lib: lib.mv(_csr(lib), lib.ones(2)),
    "sampled_addmm_shapes": lambda lib: lib.sparse.sampled_addmm(_csr(lib), lib.ones(2, 4),
                                                                 lib.ones(5, 3)),
    "to_dense_dtype": lambda lib: _csr(lib).to_dense(lib.float64),
    "sampled_addmm_csc": lambda lib: lib.sparse.sampled_addmm(lib.tensor(DENSE).to_sparse_csc(),
                                                              lib.ones(2, 2), lib.ones(2, 3)),
    "bsr_to_csr": lambda lib: _bsr(lib).to_sparse_csr(),
    "bsc_to_csc": lambda lib: _bsr(lib).to_sparse_bsc(2).to_sparse_csc(),
    "bsr_blocksize_changed": lambda lib: _bsr(lib).to_sparse_bsr(1),
    "csr_dense_dim_given": lambda lib: _csr(lib).to_sparse_csr(dense_dim=0),
    "to_sparse_both": lambda lib: lib.ones(2, 2).to_sparse(1, layout=lib.sparse_csr),
}


def test_compressed_tensors_hold_their_dense_values():
    np.testing.assert_array_equal(compressed_parts(_csr(gt))[-1], DENSE)
    layout, shape, _, nnz, crow, col, values, dense = compressed_parts(
        gt.tensor(DENSE).to_sparse_csc())
    assert (layout, shape, nnz, crow, col) == ("sparse_csc", (2, 3), 3, [0, 1, 1, 3], [0, 0, 1])
    np.testing.assert_array_equal(values, [1, 2, 3])
    np.testing.assert_array_equal(compressed_parts(_bsr(gt))[-1][:2], [[0, 1, 0, 0],
                                                                      [2, 3, 0, 0]])
    for t in [r for program in COMPRESSED.values() for r in program(gt)]:
        parts = compressed_parts(t)
        indices = [gt.tensor(p, dtype=gt.int64) for p in parts[4:6]]
        back = getattr(gt, f"{parts[0]}_tensor")(*indices, t.values().detach(), t.shape)
        np.testing.assert_array_equal(back.to_dense().numpy(), parts[-1])


def test_compressed_products_and_sums_are_the_dense_ones():
    dense, mat = np.array(DENSE), np.arange(6.0).reshape(3, 2) - 2
    mm, mm_function, sparse_mm, matvec, mv, addmm, csc_mm, bsr_mm = DENSE_RESULTS[
        "products"](gt)
    for out in (mm, mm_function, sparse_mm, csc_mm):
        np.testing.assert_allclose(out.numpy(), dense @ mat)
    for out in (matvec, mv):
        np.testing.assert_allclose(out.numpy(), dense.sum(1))
    np.testing.assert_allclose(addmm.numpy(), 1 + dense @ mat)
    np.testing.assert_allclose(bsr_mm.numpy(), [[1, 1], [5, 5], [9, 9], [13, 13]])
    total, bsr_total, as_double = DENSE_RESULTS["sums"](gt)
    assert (total.item(), bsr_total.item(), as_double.dtype) == (6.0, 28.0, gt.float64)
    by_column = COMPRESSED["sum_keepdim"](gt)[0]
    assert compressed_parts(by_column)[3:6] == (2, [0, 2], [0, 2])  # (column 1 has none)


@pytest.mark.parametrize("name", COMPRESSED_ERRORS)
def test_compressed_refusals(name):
    with pytest.raises((RuntimeError, TypeError, IndexError)):
        COMPRESSED_ERRORS[name](gt)


@pytest.mark.parametrize("name", NO_KERNEL)
def test_what_torch_has_no_kernel_for_is_refused(name):
    with pytest.raises(NotImplementedError, match="^Could not run 'aten::"):
        NO_KERNEL[name](gt)


def test_gradients_reach_the_values_and_the_dense_operands():
    values = gt.tensor(CSR_VALUES, dtype=gt.float64, requires_grad=True)
    mat = _mat(gt, requires_grad=True)
    check_grads(lambda v, m: gt.sparse.mm(_csr(gt, v), m) ** 2, [values, mat], order=2)
    check_grads(lambda v, m: gt.addmm(m[:2], _csr(gt, v), m).sin(), [values, mat])
    check_grads(lambda v: (_csr(gt, v) * 3 + _csr(gt, v).sin()).values(), [values])
    check_grads(lambda v: _csr(gt, v).t().to_dense() ** 2, [values])
    dense = gt.tensor(DENSE, dtype=gt.float64, requires_grad=True)
    check_grads(lambda d: d.to_sparse_bsc((1, 3)).values() ** 2, [dense])
    full = gt.tensor(np.array(DENSE) - 0.5, requires_grad=True)  # (no zero: the pattern stays)
    check_grads(lambda d: d.to_sparse_csr().to_dense() * d, [full], order=2)
    a, b = _mat(gt, (2, 4), requires_grad=True), _mat(gt, (4, 3), requires_grad=True)
    check_grads(lambda a, b: gt.sparse.sampled_addmm(_csr(gt, values), a, b).values() ** 2,
                [a, b], order=2)


def test_a_compressed_leafs_gradient_reaches_only_what_torch_says():
    """Through sparse.mm and to_dense torch's gradient is masked to the specified elements;
    through mm, matmul and sum it is the dense one."""
    masked = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    grad, is_leaf = DENSE_RESULTS["leaf_gradient_to_dense"](gt)
    assert is_leaf
    np.testing.assert_array_equal(grad.numpy(), 2 * masked)
    np.testing.assert_array_equal(DENSE_RESULTS["leaf_gradient_sum"](gt)[0].numpy(),
                                  np.ones((2, 3)))
    sparse_mm, dense_mm = (DENSE_RESULTS[f"leaf_gradient_{n}"](gt)[0].numpy()
                           for n in ("sparse_mm", "mm"))
    np.testing.assert_array_equal(sparse_mm, dense_mm * masked)


@st.composite
def sparse_matrices(draw):
    """A small matrix with zeros in it (optionally a batch of them), a compressed layout and,
    for the blocked ones, a blocksize that divides it."""
    batch = draw(st.sampled_from([(), (2,)]))
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    cells = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, -2.5, 3.0]),
                          min_size=rows * cols, max_size=rows * cols))
    dense = np.broadcast_to(np.array(cells).reshape(rows, cols), batch + (rows, cols)).copy()
    layout = draw(st.sampled_from(["csr", "csc", "bsr", "bsc"]))
    divisors = [[d for d in range(1, n + 1) if n % d == 0] for n in (rows, cols)]
    block = tuple(draw(st.sampled_from(d)) for d in divisors)
    return dense, layout, block


def converted(lib, dense, layout, block):
    """dense in the layout, by to_sparse_<layout> (the blocked ones with block)."""
    method = getattr(lib.tensor(dense), f"to_sparse_{layout}")
    return method(block) if layout.startswith("b") else method()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(sparse_matrices())
def test_any_matrix_converts_and_rebuilds_and_multiplies_as_dense(case):
    dense, layout, block = case
    t = converted(gt, dense, layout, block)
    name, shape, _, nnz, compressed, plain, values, back = compressed_parts(t)
    np.testing.assert_array_equal(back, dense)
    assert (name, shape) == (f"sparse_{layout}", dense.shape)
    indices = [gt.tensor(i, dtype=gt.int64) for i in (compressed, plain)]
    rebuilt = getattr(gt, f"sparse_{layout}_tensor")(*indices, t.values(), t.shape,
                                                     check_invariants=True)
    np.testing.assert_array_equal(rebuilt.to_dense().numpy(), dense)
    if dense.ndim == 2:
        mat = np.arange(dense.shape[1] * 2.0).reshape(-1, 2)
        np.testing.assert_allclose((t @ gt.tensor(mat)).numpy(), dense @ mat)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(sparse_matrices())
def test_save_and_load_keep_the_compressed_layout(tmp_path_factory, case):
    """gradtool.save writes a compressed tensor as torch does (its indices and values, rebuilt
    by torch._utils._rebuild_sparse_tensor), and load (weights only) rebuilds it."""
    t = converted(gt, *case)
    path = tmp_path_factory.mktemp("saved") / "t.pt"
    gt.save({"t": t}, path)
    back = gt.load(path)["t"]
    parts, back_parts = compressed_parts(t), compressed_parts(back)
    assert back_parts[:6] == parts[:6]
    for x, y in zip(back_parts[6:], parts[6:]):
        np.testing.assert_array_equal(x, y)
