"""torch-level names about dtypes and printing: the default dtype (set_default_dtype,
get_default_dtype, set_default_tensor_type) and what follows it, promote_types,
is_floating_point, typename, set_printoptions, and the removed names (torch.symeig,
Tensor.reinforce) answering with torch's message. The programs run on either library: the
parity tests (tests/parity/test_default_dtype_and_names.py) compare them with torch."""
import warnings

import pytest

import gradtool as gt


@pytest.fixture(autouse=True)
def default_dtype_restored():
    yield
    gt.set_default_dtype(gt.float32)
    gt.set_printoptions(profile="default")


def _name(dtype):
    return str(dtype).split(".")[-1]


def _under_default(lib, dtype, program):
    lib.set_default_dtype(dtype)
    try:
        return program()
    finally:
        lib.set_default_dtype(lib.float32)


def _legacy_default(lib, t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.set_default_tensor_type(t)
    try:
        return _name(lib.get_default_dtype()), _name(lib.zeros(1).dtype)
    finally:
        lib.set_default_dtype(lib.float32)


def _printed(lib, values, **options):
    lib.set_printoptions(**options)
    try:
        return repr(lib.tensor(values))
    finally:
        lib.set_printoptions(profile="default")


PROGRAMS = {
    "default": lambda lib: _name(lib.get_default_dtype()),
    "float64_default": lambda lib: _under_default(lib, lib.float64, lambda: [_name(d) for d in (
        lib.get_default_dtype(), lib.zeros(2).dtype, lib.tensor([1.5]).dtype,
        lib.arange(3.0).dtype, lib.randn(2).dtype, (lib.arange(3) / 2).dtype,
        lib.tensor([1j]).dtype, lib.nn.Linear(2, 2).weight.dtype, lib.full((2,), 1.0).dtype,
        (lib.ones(2, dtype=lib.float32) * 2.5).dtype)]),
    "float16_default": lambda lib: _under_default(lib, lib.float16, lambda: [
        _name(lib.zeros(1).dtype), _name(lib.tensor([0.5]).dtype)]),
    "legacy_class": lambda lib: _legacy_default(lib, lib.DoubleTensor),
    "legacy_name": lambda lib: _legacy_default(lib, "torch.DoubleTensor"),
    "promote_types": lambda lib: [_name(lib.promote_types(a, b)) for a, b in (
        (lib.int64, lib.float16), (lib.uint8, lib.int8), (lib.bool, lib.int32),
        (lib.float32, lib.complex64), (lib.float64, lib.complex64), (lib.int32, lib.int32))],
    "is_floating_point": lambda lib: [lib.is_floating_point(lib.zeros(1, dtype=d)) for d in (
        lib.float16, lib.float32, lib.float64, lib.int64, lib.bool, lib.complex64)],
    "typename": lambda lib: [lib.typename(lib.zeros(1, dtype=d)) for d in (
        lib.float32, lib.float64, lib.int64, lib.uint8, lib.bool)] + [
        lib.typename(3), lib.typename(len), lib.typename([1])],
    "clamp_min_max": lambda lib: [lib.clamp_min(lib.arange(5.0), 2).tolist(),
                                  lib.clamp_max(lib.arange(5.0), 2).tolist()],
    "printoptions_precision": lambda lib: _printed(lib, [1.23456, 2.5], precision=2),
    "printoptions_sci_mode": lambda lib: _printed(lib, [1.5, 2.5], sci_mode=True),
    "printoptions_short": lambda lib: _printed(lib, [1.23456], profile="short"),
    "printoptions_threshold": lambda lib: _printed(lib, list(range(10)), threshold=5,
                                                   edgeitems=2),
}
ERRORS = {
    "integer_default": lambda lib: lib.set_default_dtype(lib.int64),
    "cuda_tensor_type": lambda lib: _legacy_default(lib, "torch.cuda.FloatTensor"),
    "integer_tensor_type": lambda lib: _legacy_default(lib, lib.LongTensor),
    "symeig": lambda lib: lib.symeig(lib.eye(2)),
    "reinforce": lambda lib: lib.zeros(2).reinforce(1.0),
}


def test_the_default_dtype_is_float32_and_can_be_changed():
    assert PROGRAMS["default"](gt) == "float32"
    assert PROGRAMS["float64_default"](gt) == ["float64"] * 6 + ["complex128", "float64",
                                                                 "float64", "float32"]
    assert PROGRAMS["float16_default"](gt)[0] == "float16"
    assert PROGRAMS["legacy_class"](gt) == ("float64", "float64")


def test_set_default_tensor_type_warns_that_it_is_deprecated():
    with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
        gt.set_default_tensor_type(gt.DoubleTensor)
    assert gt.get_default_dtype() is gt.float64


def test_promote_types_typename_and_is_floating_point():
    assert PROGRAMS["promote_types"](gt) == ["float16", "int16", "int32", "complex64",
                                             "complex128", "int32"]
    assert PROGRAMS["is_floating_point"](gt) == [True, True, True, False, False, False]
    assert PROGRAMS["typename"](gt) == ["torch.FloatTensor", "torch.DoubleTensor",
                                        "torch.LongTensor", "torch.ByteTensor",
                                        "torch.BoolTensor", "int", "len", "list"]


def test_print_options_change_how_tensors_print():
    assert PROGRAMS["printoptions_precision"](gt) == "tensor([1.23, 2.50])"
    assert "e+00" in PROGRAMS["printoptions_sci_mode"](gt)
    assert "..." in PROGRAMS["printoptions_threshold"](gt)


@pytest.mark.parametrize("name", ERRORS)
def test_refusals(name):
    with pytest.raises((RuntimeError, TypeError)):
        ERRORS[name](gt)
