"""dtypes against torch: what each one-input op gives an integer tensor, the result dtype of
binary ops for every pair of dtypes (0-d or not) and with Python and numpy scalars, the dtype
torch.tensor infers from nested data, new_* factories, and finfo/iinfo. Tests marked parity,
skipped without torch. The plain tests of the same rules are in tests/engine
(test_op_gradients.py, test_fidelity_semantics.py, test_backward.py, test_api.py)."""
import itertools
import warnings

import numpy as np
import pytest

import gradtool as gt
from tests.engine.test_backward import INFERRED_DTYPES
from tests.engine.test_op_gradients import UNARY_METHODS

pytestmark = pytest.mark.parity


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("name", UNARY_METHODS)
def test_one_input_ops_give_torchs_dtype_for_integer_inputs(name):
    torch = pytest.importorskip("torch")
    try:
        theirs = getattr(torch.tensor([1, 2, 3]), name)()
    except NotImplementedError as refused:  # (frac: torch has no integer kernel)
        with pytest.raises(NotImplementedError) as ours:
            getattr(gt.tensor([1, 2, 3]), name)()
        assert str(ours.value) == str(refused)
        return
    mine = getattr(gt.tensor([1, 2, 3]), name)()
    assert str(mine.dtype).rpartition(".")[2] == str(theirs.dtype).rpartition(".")[2]
    # (atol: where the value is 0 (sinc at the integers), torch's float32 kernel leaves
    # -2.8e-8, the engine's float64 one 3.9e-17)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)


def _name(dtype):
    return str(dtype).split(".")[-1]


_DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "bool"]
_BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
           "maximum": lambda a, b: a.maximum(b), "pow": lambda a, b: a ** b}


def _operand(lib, dtype, zero_dim):
    value = True if dtype == "bool" else (3 if dtype.startswith("int") else 1.5)
    return lib.tensor(value if zero_dim else [value, value], dtype=getattr(lib, dtype))


@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum", "pow"])
def test_binary_result_dtypes_match_torch_for_every_pair(op, torch):
    fn = _BINARY[op]
    for (da, za), (db, zb) in itertools.product(
            itertools.product(_DTYPES, [False, True]), repeat=2):
        try:
            want = _name(fn(_operand(torch, da, za), _operand(torch, db, zb)).dtype)
        except RuntimeError:
            continue  # torch refuses (bool ** bool): not compared
        got = _name(fn(_operand(gt, da, za), _operand(gt, db, zb)).dtype)
        assert got == want, (op, da, "0-d" if za else "", db, "0-d" if zb else "")


def test_scalar_operand_dtypes_match_torch(torch):
    ops = [lambda a, s: a + s, lambda a, s: s * a, lambda a, s: a / s, lambda a, s: s / a,
           lambda a, s: a ** s, lambda a, s: a.clamp(min=s)]
    for dtype, scalar, fn in itertools.product(_DTYPES, [2, 2.5, np.float64(2.5)], ops):
        try:
            want = _name(fn(_operand(torch, dtype, False), scalar).dtype)
        except RuntimeError:
            continue
        assert _name(fn(_operand(gt, dtype, False), scalar).dtype) == want, (dtype, scalar)


def test_tensor_dtype_inference_matches_torch():
    torch = pytest.importorskip("torch")
    for data, _ in INFERRED_DTYPES:
        ours = gt.tensor(eval(data, {"np": np, "M": gt})).dtype
        theirs = torch.tensor(eval(data, {"np": np, "M": torch})).dtype
        assert str(ours).split(".")[1] == str(theirs).split(".")[1], data


def test_new_tensor_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (gt, torch):
        x = lib.ones(2, dtype=lib.float64)
        kinds = [str(t.dtype).split(".")[-1] for t in (
            x.new_tensor([1, 2]), x.new_zeros(2), x.new_full((1,), 2), x.new_ones(1),
            x.new_zeros(2, dtype=lib.int32))]
        assert kinds == ["float64", "float64", "float64", "float64", "int32"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gt.ones(2).new_tensor([1.5]).dtype == gt.float32


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", "complex64",
                                   "complex128"])
def test_finfo_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    mine, theirs = gt.finfo(getattr(gt, dtype)), torch.finfo(getattr(torch, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(mine, field) == pytest.approx(getattr(theirs, field), rel=1e-6), field
    assert mine.dtype == theirs.dtype and gt.finfo().eps == torch.finfo().eps


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    mine, theirs = gt.iinfo(getattr(gt, dtype)), torch.iinfo(getattr(torch, dtype))
    assert (mine.bits, mine.min, mine.max, mine.dtype) == \
        (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    with pytest.raises(TypeError):
        gt.iinfo(gt.float32)


# values that tell the dtype a comparison runs in: 0.1 rounds differently in float32 and
# float64 (and in bfloat16), 2**24 + 1 is no float32
_COMPARED = {"float32": [0.1, 0.2, 16777216.0], "float64": [0.1, 0.2, 16777216.0],
             "bfloat16": [0.1, 0.2, 0.3], "int64": [16777217, 0, 1], "int32": [16777217, 0, 1],
             "bool": [True, False, True]}
_OTHERS = [0.1, 16777216.0, 16777217, True, np.float64(0.1)] + [
    (dtype, zero_dim) for dtype in _COMPARED for zero_dim in (True, False)]


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("dtype", _COMPARED)
def test_comparisons_run_in_torchs_common_dtype(op, dtype, torch):
    def compared(lib, other, in_place):
        if isinstance(other, tuple):
            values = _COMPARED[other[0]]
            other = lib.tensor(values[0] if other[1] else values, dtype=getattr(lib, other[0]))
        x = lib.tensor(_COMPARED[dtype], dtype=getattr(lib, dtype))
        try:
            out = getattr(x, op + "_")(other) if in_place else getattr(lib, op)(x, other)
        except RuntimeError as e:
            return str(e)
        return out.tolist(), _name(out.dtype)
    for other, in_place in itertools.product(_OTHERS, (False, True)):
        assert compared(gt, other, in_place) == compared(torch, other, in_place), (other, in_place)
