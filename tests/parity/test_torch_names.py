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


# ---- names added after the census of real files (docs/census.md): values, dtypes and nodes
def _census_form(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [(str(o.dtype).split(".")[-1], tuple(o.shape), o.detach().numpy().tolist(),
             None if o.grad_fn is None else o.grad_fn.name()) for o in outs]
# (each a tuple: dtype, shape, values, node)


CENSUS_NAMES = {
    "constants": lambda lib, x: lib.tensor([lib.pi, lib.e, lib.inf]),
    "square": lambda lib, x: lib.square(x),
    "multiply_subtract": lambda lib, x: x.multiply(2).subtract(x, alpha=0.5),
    "comparisons": lambda lib, x: (x.less(0), x.greater_equal(0), x.not_equal(x)),
    "casts": lambda lib, x: (x.byte(), x.char(), x.short()),
    "repeat_interleave": lambda lib, x: x.repeat_interleave(2, dim=1),
    "repeat_interleave_flat": lambda lib, x: lib.repeat_interleave(x, 2),
    "repeat_interleave_counts": lambda lib, x: x.repeat_interleave(lib.tensor([1, 0, 2]), 1),
    "unique": lambda lib, x: lib.unique(x.round(), return_inverse=True, return_counts=True),
    "unique_dim": lambda lib, x: lib.cat([x, x]).round().unique(dim=0),
    "vstack": lambda lib, x: lib.vstack([x[0], x]),
    "hstack": lambda lib, x: lib.hstack([x, x]),
    "hstack_1d": lambda lib, x: lib.hstack([x[0], x[1]]),
    "qr": lambda lib, x: lib.qr(x.T @ x + lib.eye(3, dtype=x.dtype)),
    "floor_ceil_int": lambda lib, x: (lib.floor(x.long()), x.long().ceil()),
    "median_nan": lambda lib, x: tuple(lib.cat([x, x[:1] / 0 * 0]).median(0)) + (
        (x / 0 * 0).median(),),
    "isclose": lambda lib, x: (lib.isclose(x, x + 1e-9), x.isclose(x * 1.1, rtol=0.05),
                               lib.isclose(x / 0, x / 0, equal_nan=True)),
    "sizes": lambda lib, x: lib.tensor([x.element_size(), x.ndimension(), x.is_sparse,
                                        x.itemsize]),
}


@pytest.mark.parametrize("name", sorted(CENSUS_NAMES))
def test_census_names_are_torchs(name):
    torch = pytest.importorskip("torch")
    x = np.array([[1.2, -0.4, 2.6], [0.7, -1.9, 0.1]])
    seen = []
    for lib in (gt, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.qr's deprecation
            seen.append(_census_form(CENSUS_NAMES[name](lib, lib.tensor(x, requires_grad=True))))
    for mine, theirs in zip(*seen):
        if name.startswith("unique"):  # torch's Unique2Backward0 only refuses a backward
            theirs = theirs[:3] + (None,)
        assert mine[0::3] == theirs[0::3] and mine[1] == theirs[1]
        np.testing.assert_allclose(np.array(mine[2], float), np.array(theirs[2], float),
                                   rtol=1e-12, atol=1e-14)


def test_the_deprecated_spellings_warn_as_torchs():
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):  # (torch's warns once)
        gt.qr(gt.eye(2))
    for lib in (gt, torch):
        with pytest.warns(FutureWarning, match="`nn.init.kaiming_normal` is now deprecated"):
            lib.nn.init.kaiming_normal(lib.empty(2, 2))
        with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
            lib.nn.utils.clip_grad_norm([lib.zeros(1, requires_grad=True)], 1.0)


CUDA_CALLS = [("empty_cache", ()), ("memory_allocated", ()), ("max_memory_allocated", ()),
              ("memory_reserved", ()), ("max_memory_reserved", ()), ("synchronize", ()),
              ("get_device_name", ()), ("get_device_properties", (0,))]


@pytest.mark.parametrize("name, args", CUDA_CALLS, ids=[n for n, _ in CUDA_CALLS])
def test_cuda_calls_answer_as_torch_without_cuda(name, args):
    """On a machine without CUDA (torch's CPU build here): the same value or the same error."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch has CUDA here")
    seen = []
    for lib in (gt, torch):
        try:
            seen.append(("value", getattr(lib.cuda, name)(*args)))
        except Exception as exc:  # noqa: BLE001 (the error is what is compared)
            seen.append((type(exc).__name__, str(exc)))
    assert seen[0] == seen[1]


def test_distributions_submodules_hold_torchs_classes():
    torch = pytest.importorskip("torch")
    import torch.distributions.categorical  # noqa: F401 (torch's are modules to import)
    import torch.distributions.kl  # noqa: F401
    import torch.distributions.normal  # noqa: F401
    for lib in (gt, torch):
        assert lib.distributions.normal.Normal is lib.distributions.Normal
        assert lib.distributions.categorical.Categorical is lib.distributions.Categorical
        assert lib.distributions.kl.kl_divergence is lib.distributions.kl_divergence


@pytest.mark.parametrize("name", ["get_rank", "get_world_size", "barrier", "all_reduce"])
def test_distributed_without_a_process_group_raises_torchs_error(name):
    torch = pytest.importorskip("torch")
    import torch.distributed  # noqa: F401 (torch's is a module to import)
    seen = []
    for lib in (gt, torch):
        assert not lib.distributed.is_initialized()
        args = (lib.ones(1),) if name == "all_reduce" else ()
        with pytest.raises(ValueError) as caught:
            getattr(lib.distributed, name)(*args)
        seen.append(str(caught.value))
    assert seen[0] == seen[1]


def test_the_tf32_switches_have_torchs_defaults_and_can_be_set():
    torch = pytest.importorskip("torch")
    import torch.backends.cuda  # noqa: F401
    for flag in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(gt.backends.cuda.matmul, flag) == getattr(torch.backends.cuda.matmul, flag)
    assert gt.backends.cudnn.allow_tf32 == torch.backends.cudnn.allow_tf32
    gt.backends.cuda.matmul.allow_tf32 = True  # accepted (and changes nothing)
    gt.backends.cuda.matmul.allow_tf32 = False


@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "HalfTensor", "ByteTensor"])
def test_cuda_typed_classes_are_torchs_without_cuda(name):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch has CUDA here")
    seen = []
    for lib in (gt, torch):
        cls = getattr(lib.cuda, name)
        with pytest.raises(TypeError) as caught:
            cls(2)
        seen.append((cls.__name__, str(cls.dtype).split(".")[-1], isinstance(lib.ones(1), cls),
                     str(caught.value)))
    assert seen[0] == seen[1]
