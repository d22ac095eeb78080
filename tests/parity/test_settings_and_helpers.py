"""Small torch-level names real files use, against torch itself: the float32 matmul
precision setting, torch.random.fork_rng, the deprecated torch.testing.assert_allclose and
Tensor.data_ptr's offsets for views."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402

pytestmark = pytest.mark.parity


@pytest.fixture
def precision_restored():
    saved = gt.get_float32_matmul_precision(), torch.get_float32_matmul_precision()
    yield
    gt.set_float32_matmul_precision(saved[0])
    torch.set_float32_matmul_precision(saved[1])


def test_float32_matmul_precision_is_stored_as_torchs(precision_restored):
    for lib in (gt, torch):
        assert lib.get_float32_matmul_precision() == "highest"
        lib.set_float32_matmul_precision("medium")
        assert lib.get_float32_matmul_precision() == "medium"
    caught = []
    for lib in (gt, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.set_float32_matmul_precision("low")
        # (torch's C++ warning ends with where it was triggered inside torch)
        caught.append([str(w.message).partition(" (Triggered internally")[0] for w in seen])
        assert lib.get_float32_matmul_precision() == "medium"
    assert caught[0] == caught[1] and caught[0]


def test_float32_matmul_precision_changes_no_number(precision_restored):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(
        np.float32)
    products = []
    for setting in ("highest", "medium"):
        gt.set_float32_matmul_precision(setting)
        products.append((gt.tensor(a) @ gt.tensor(b)).numpy())
    np.testing.assert_array_equal(*products)


@pytest.mark.parametrize("enabled", [True, False])
def test_fork_rng_restores_the_generator_as_torchs(enabled):
    for lib in (gt, torch):
        lib.manual_seed(3)
        with lib.random.fork_rng(enabled=enabled):
            inside = lib.rand(2)
        after = lib.rand(2)
        assert (inside.tolist() == after.tolist()) == enabled


def test_fork_rng_refuses_a_cuda_device_as_torchs_cpu_build():
    errors = []
    for lib in (gt, torch):
        with pytest.raises(AssertionError) as error:
            with lib.random.fork_rng(devices=[0]):
                pass
        errors.append(str(error.value))
        with lib.random.fork_rng(devices=[]):
            pass
    assert errors[0] == errors[1]


@pytest.mark.parametrize("actual, expected", [
    ([1.0], [1.0 + 5e-5]), ([1.0], [1.001]), (np.array([1.0]), [1.000001]),
    ([1.0, np.nan], [1.0, np.nan]), ([3], [3]), ([3], [4]), ([1.0], [1.5]),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_assert_allclose_warns_and_decides_as_torchs(actual, expected, dtype):
    outcomes = []
    for lib in (gt, torch):
        a = lib.tensor(actual, dtype=getattr(lib, dtype)) if isinstance(actual[0], float) \
            else lib.tensor(actual)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                lib.testing.assert_allclose(a, expected)
                message = None
            except AssertionError as error:
                message = str(error)
        outcomes.append((message, [(w.category, str(w.message)) for w in seen]))
    assert outcomes[0] == outcomes[1]


def test_data_ptr_offsets_of_views_as_torchs():
    offsets = []
    for lib in (gt, torch):
        x = lib.zeros(4, 3, dtype=lib.float64)
        views = [x[1], x[:, 1], x.t(), x[2:, 1:], x.view(-1)[5:], x.to(lib.float32)]
        assert x.data_ptr() > 0 and lib.tensor([]).data_ptr() == 0
        offsets.append([v.data_ptr() - x.data_ptr() for v in views[:-1]]
                       + [views[-1].data_ptr() != x.data_ptr()])
    assert offsets[0] == offsets[1]
