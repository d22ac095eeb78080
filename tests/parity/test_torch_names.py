"""The names real PyTorch files use, against torch: legacy and factory forms (shape, dtype
and values), the typed tensor classes under isinstance, and the device API. Tests marked
parity, skipped without torch."""
import warnings

import numpy as np
import pytest

import gradtool as gt

pytestmark = pytest.mark.parity


def _described(t):
    return (tuple(t.shape), str(t.dtype).split(".")[-1])


LEGACY = {
    "Tensor_sizes": lambda lib: lib.Tensor(2, 3),
    "Tensor_data": lambda lib: lib.Tensor([1, 2]),
    "Tensor_empty": lambda lib: lib.Tensor(),
    "Tensor_size_object": lambda lib: lib.Tensor(lib.Size([4])),
    "FloatTensor_sizes": lambda lib: lib.FloatTensor(3),
    "FloatTensor_data": lambda lib: lib.FloatTensor([[1, 2], [3, 4]]),
    "LongTensor_data": lambda lib: lib.LongTensor([1.7, -2.2]),
    "DoubleTensor_data": lambda lib: lib.DoubleTensor([0.5]),
    "BoolTensor_data": lambda lib: lib.BoolTensor([1, 0]),
    "new_sizes": lambda lib: lib.ones(2, dtype=lib.float64).new(3, 1),
    "new_data": lambda lib: lib.ones(2, dtype=lib.int32).new([5, 6]),
    "new_empty": lambda lib: lib.ones(2).new(),
    "zeros_size": lambda lib: lib.zeros(size=(2, 3)),
    "ones_size": lambda lib: lib.ones(size=[4], dtype=lib.float64),
    "empty_size": lambda lib: lib.empty(size=(1, 2)),
    "randn_size": lambda lib: lib.randn(size=(2,)),
    "rand_size": lambda lib: lib.rand(size=(3, 1)),
    "range": lambda lib: lib.range(1, 4),
    "range_step": lambda lib: lib.range(0, 1, 0.25, dtype=lib.float64),
    "cat_axis": lambda lib: lib.cat([lib.ones(2, 1), lib.zeros(2, 1)], axis=1),
    "stack_axis": lambda lib: lib.stack([lib.ones(2), lib.zeros(2)], axis=1),
    "flip_dims": lambda lib: lib.arange(6).view(2, 3).flip(dims=(0, 1)),
    "flip_function": lambda lib: lib.flip(lib.arange(4), dims=[0]),
}


VALUES_DEFINED = {"Tensor_data", "FloatTensor_data", "LongTensor_data", "DoubleTensor_data",
                  "BoolTensor_data", "new_data", "zeros_size", "ones_size", "range",
                  "range_step", "cat_axis", "stack_axis", "flip_dims", "flip_function"}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_and_factory_forms_match_torch(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range's deprecation, on both
        mine, theirs = LEGACY[name](gt), LEGACY[name](torch)
    assert _described(mine) == _described(theirs)
    if name in VALUES_DEFINED:
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_typed_tensor_classes_answer_isinstance_by_dtype_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (gt, torch):
        assert isinstance(lib.zeros(2), lib.FloatTensor)
        assert not isinstance(lib.zeros(2, dtype=lib.float64), lib.FloatTensor)
        assert isinstance(lib.zeros(2, dtype=lib.int64), lib.LongTensor)


def test_device_api_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (gt, torch):
        d = lib.device("cpu")
        assert (repr(d), str(d), d.type, d.index) == ("device(type='cpu')", "cpu", "cpu", None)
        assert lib.ones(1).device == d and lib.device("cuda", 2).index == 2
    assert str(gt.device("cuda:1")) == str(torch.device("cuda:1"))


def test_the_module_methods_gradtool_names_as_missing_are_torchs_it_lacks():
    """gradtool's Module says "does not provide torch.nn.Module.X" for exactly torch's public
    names it lacks; any other missing attribute is the user's, as on torch."""
    torch = pytest.importorskip("torch")
    from gradtool.engine.nn.module import TORCH_METHODS_NOT_HERE
    torchs = {n for n in dir(torch.nn.Module) if not n.startswith("_")}
    gradtools = {n for n in dir(gt.nn.Module) if not n.startswith("_")}
    assert TORCH_METHODS_NOT_HERE == torchs - gradtools
