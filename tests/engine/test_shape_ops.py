"""torch's composite shape ops on the engine (autograd/composites.py): their values against
numpy's equivalents over random shapes, and vander's gradient (torch's own backward refuses:
tests/parity/test_shape_ops.py) against its closed form and central differences."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradcheck_util import check_grads

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


@SETTINGS
@given(size=st.integers(0, 9), sections=st.integers(1, 5), seed=st.integers(0, 99))
def test_tensor_split_sections_as_numpy_array_split(size, sections, seed):
    x = np.random.default_rng(seed).standard_normal((2, size))
    pieces = gt.tensor(x).tensor_split(sections, dim=1)
    want = np.array_split(x, sections, axis=1)
    assert [p.shape[1] for p in pieces] == [w.shape[1] for w in want]
    for p, w in zip(pieces, want):
        np.testing.assert_array_equal(p.numpy(), w)


@SETTINGS
@given(indices=st.lists(st.integers(-2, 8), max_size=4), seed=st.integers(0, 99))
def test_tensor_split_indices_as_numpy_array_split(indices, seed):
    x = np.random.default_rng(seed).standard_normal(6)
    pieces = gt.tensor(x).tensor_split(indices)
    want = np.array_split(x, indices)
    assert [p.numpy().tolist() for p in pieces] == [w.tolist() for w in want]


@SETTINGS
@given(n=st.integers(0, 4), length=st.integers(1, 5), seed=st.integers(0, 99))
def test_diff_as_numpy_diff(n, length, seed):
    x = np.random.default_rng(seed).standard_normal((3, length))
    np.testing.assert_allclose(gt.diff(gt.tensor(x), n).numpy(), np.diff(x, n), rtol=1e-12)


def test_tensordot_and_kron_as_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 5))
    np.testing.assert_allclose(gt.tensordot(gt.tensor(a), gt.tensor(b), ([1, 2], [1, 0])).numpy(),
                               np.tensordot(a, b, ([1, 2], [1, 0])), rtol=1e-12)
    c, d = rng.standard_normal((2, 3)), rng.standard_normal(4)
    np.testing.assert_allclose(gt.kron(gt.tensor(c), gt.tensor(d)).numpy(), np.kron(c, d))


def test_combinations_and_indices_as_itertools_and_numpy():
    x = gt.tensor([1.0, 2.0, 3.0, 4.0])
    assert gt.combinations(x, 3).tolist() == [[1, 2, 3], [1, 2, 4], [1, 3, 4], [2, 3, 4]]
    assert gt.combinations(x[:2], with_replacement=True).tolist() == [[1, 1], [1, 2], [2, 2]]
    assert gt.tril_indices(3, 2).tolist() == [list(r) for r in np.tril_indices(3, 0, 2)]
    assert gt.triu_indices(2, 3, 1).tolist() == [list(r) for r in np.triu_indices(2, 1, 3)]


def test_vander_gradient_is_the_powers_derivative():
    x = gt.tensor([0.5, -1.5, 2.0], dtype=gt.float64, requires_grad=True)
    v = np.random.default_rng(1).standard_normal((3, 4))
    (gt.vander(x, 4) * gt.tensor(v)).sum().backward()
    powers = np.arange(3, -1, -1)  # highest first
    xs = x.detach().numpy()[:, None]
    want = (v * powers * xs ** np.maximum(powers - 1, 0)).sum(1)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
    check_grads(lambda t: gt.vander(t, 4, increasing=True), [x.detach().requires_grad_()],
                order=2)
