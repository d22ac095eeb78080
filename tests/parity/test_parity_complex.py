"""Parity with PyTorch on complex numbers: every case of the op sweep's complex section
(tests/engine/test_op_gradients.py, COMPLEX_CASES) through gradtool and torch on the same inputs and
complex cotangents (values, gradients and their dtypes, gradients of gradients, node names and
`_saved_*` names); dtype inference and promotion; printing; refusals; gradcheck's verdicts.
Skipped when torch is not installed."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import gradtool as gt  # noqa: E402
from tests.engine import test_op_gradients as sweep  # noqa: E402
from gradtool.checks.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from tests.parity.test_parity_torch import as_torch  # noqa: E402

pytestmark = pytest.mark.parity
CASES = sweep.COMPLEX_CASES
IDS = sweep.COMPLEX_IDS
# torch's ComplexBackward0 saves real and imag, which its formulas do not read (gradtool's
# saves what its formulas read: nothing)
KNOWN_SAVED_DIFFERENCES = {"complex_from_parts"}


def build_both(case, rng):
    """The case's inputs for each library: its constants (lu_solve's pivots) as tensors that
    need no gradient."""
    mine, theirs = [], []
    for item in case.make(rng):
        constant = isinstance(item, sweep.Const)
        a = np.asarray(item.value if constant else item)
        mine.append(gt.tensor(a, requires_grad=not constant))
        theirs.append(torch.tensor(a, requires_grad=not constant))
    return mine, theirs


def run(lib, fn, inputs, seed):
    """(outputs, grads, grads of grads, grad_fn) for complex cotangents drawn from seed."""
    rng = np.random.default_rng(seed)
    outs = [o for o in ((lambda r: r if isinstance(r, tuple) else (r,))(fn(*inputs)))]
    cots = [rng.standard_normal(tuple(o.shape)) + (1j * rng.standard_normal(tuple(o.shape))
                                                   if o.is_complex() else 0) for o in outs]
    inputs = [x for x in inputs if x.requires_grad]
    grads = lib.autograd.grad(outs, inputs, [lib.tensor(c).to(o.dtype)
                                             for c, o in zip(cots, outs)], create_graph=True)
    total = sum((g.abs() ** 2).sum() for g in grads if g.requires_grad)
    second = (lib.autograd.grad(total, inputs, allow_unused=True)
              if isinstance(total, lib.Tensor) else [None] * len(inputs))
    return outs, grads, second


def values(t):
    return None if t is None else t.detach().resolve_conj().numpy() if hasattr(
        t, "resolve_conj") else t.detach().numpy()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_complex_case_matches_torch(case):
    mine_in, theirs_in = build_both(case, np.random.default_rng(21))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mine = run(gt, case.fn, mine_in, 5)
        theirs = run(torch, as_torch(case.fn), theirs_in, 5)
    for what, a_list, b_list in zip(("output", "grad", "second-order grad"), mine, theirs):
        for k, (a, b) in enumerate(zip(a_list, b_list)):
            if a is None or b is None:
                assert a is None or not np.any(values(a)), f"{what} {k}"
                assert b is None or not np.any(values(b)), f"{what} {k}"
                continue
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{what} {k}"
            np.testing.assert_allclose(values(a), values(b), rtol=1e-9, atol=1e-11,
                                       err_msg=f"{case.id}: {what} {k}")


def _node_names(fn):
    name = fn.name().removeprefix("torch::autograd::")
    below = [f.name().removeprefix("torch::autograd::") for f, _ in fn.next_functions
             if f is not None]
    saved = sorted(a for a in dir(fn) if a.startswith("_saved_"))
    return name, below, saved


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_complex_case_records_torchs_nodes(case):
    """The output's node has torch's name and `_saved_*` names, and so have the nodes one
    level down."""
    mine_in, theirs_in = build_both(case, np.random.default_rng(21))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mine, theirs = case.fn(*mine_in), as_torch(case.fn)(*theirs_in)
    if isinstance(mine, tuple):  # (several outputs: the first one's node)
        mine, theirs = mine[0], theirs[0]
    a, b = _node_names(mine.grad_fn), _node_names(theirs.grad_fn)
    if case.id in KNOWN_SAVED_DIFFERENCES:
        a, b = a[:2], b[:2]
    assert a == b
    for (fa, _), (fb, _) in zip(mine.grad_fn.next_functions, theirs.grad_fn.next_functions):
        if fa is not None and fb is not None:
            assert _node_names(fa)[::2] == _node_names(fb)[::2]


SCALARS = [2, 2.5, 1j, 1 + 0.5j]
DTYPES = ["float32", "float64", "complex64", "complex128", "int64", "float16"]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES + SCALARS),
       zero_dim=st.booleans(), op=st.sampled_from(["add", "mul", "div", "sub"]))
def test_complex_promotion_matches_torch(a, b, zero_dim, op):
    """The result dtype of real and complex tensors, 0-d tensors and Python scalars, as
    torch's type promotion gives it (but for torch's complex32, which numpy has not: float16
    with a complex operand is complex64 in gradtool, README Limits)."""
    assume(not ("float16" in (a, b) and (isinstance(b, complex) or "complex" in f"{a}{b}")))

    def operands(lib):
        x = lib.ones(2, dtype=getattr(lib, a))
        if isinstance(b, str):
            y = lib.ones(() if zero_dim else 2, dtype=getattr(lib, b))
        else:
            y = b
        return x, y
    dtypes = []
    for lib in (gt, torch):
        x, y = operands(lib)
        dtypes.append(str(getattr(x, op)(y).dtype).split(".")[-1])
    assert dtypes[0] == dtypes[1]


@pytest.mark.parametrize("data", [[1 + 2j, 3], [1.0, 2j], [[1, 2j], [0.5, 1]], 1j, [True, 1j],
                                  np.array([1j]), np.array([1j], dtype=np.complex64)],
                         ids=str)
def test_complex_inference_matches_torch(data):
    assert str(gt.tensor(data).dtype).split(".")[-1] == str(torch.tensor(data).dtype).split(".")[-1]


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1 + 2j, -3 + 0.5j, 0.2 - 1j]),
    lambda lib: lib.tensor([[1e-5 + 2j, 1000 - 3j]], dtype=lib.complex128),
    lambda lib: lib.tensor([1.0 + 0j, 2j], requires_grad=True),
    lambda lib: lib.tensor(3 - 4j),
    lambda lib: lib.tensor([float("nan") + 1j, -0.0 - 2.5j]),
])
def test_complex_repr_matches_torch(make):
    assert repr(make(gt)).replace("gradtool.", "torch.") == repr(make(torch))


@pytest.mark.parametrize("op", [lambda lib, z: z.relu(), lambda lib, z: z.max(),
                                lambda lib, z: z.max(0), lambda lib, z: z.min(),
                                lambda lib, z: z.clamp(min=0),
                                lambda lib, z: z.sign(), lambda lib, z: lib.maximum(z, z),
                                lambda lib, z: lib.view_as_complex(z.real),
                                lambda lib, z: lib.complex(z.real, z.imag.float()),
                                lambda lib, z: z.real.imag, lambda lib, z: lib.view_as_real(z.abs()),
                                lambda lib, z: (z * z).sum().backward(),
                                lambda lib, z: float(z[0].detach()),
                                lambda lib, z: z < z, lambda lib, z: z.detach() >= 1,
                                lambda lib, z: z.argmax(), lambda lib, z: z.argmin(0),
                                lambda lib, z: z.sort(), lambda lib, z: z.topk(1),
                                lambda lib, z: z.real > z,
                                lambda lib, z: z.real.to(lib.int64).requires_grad_()])
def test_complex_refusals_in_torchs_words(op):
    """Where torch refuses a complex value, gradtool refuses it with torch's message."""
    messages = []
    for lib in (gt, torch):
        z = lib.tensor([1 + 2j, -1 + 0.5j], dtype=lib.complex128, requires_grad=True)
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            op(lib, z)
        messages.append(str(info.value).replace("gradtool.", "torch."))
    assert messages[0] == messages[1]


class _Square:
    """z -> z^2 as a custom Function of `lib`, with or without the conj torch's convention
    asks for."""

    @staticmethod
    def make(lib, conj):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                z, = ctx.saved_tensors
                return g * ((2 * z).conj() if conj else 2 * z)
        return Square


@pytest.mark.parametrize("conj", [True, False], ids=["right", "forgets_conj"])
@pytest.mark.parametrize("fast", [False, True], ids=["full", "fast"])
def test_complex_gradcheck_verdicts_match_torch(conj, fast):
    """gradtool's gradcheck on either engine gives torch's verdict on a right and a wrong
    complex Function, with torch's words for the part of the output that failed."""
    verdicts, heads = [], []
    for lib, check in ((torch, torch.autograd.gradcheck), (torch, gradcheck), (gt, gradcheck)):
        z = lib.tensor([1 + 2j, 0.5 - 0.7j], dtype=lib.complex128, requires_grad=True)
        fn = _Square.make(lib, conj).apply
        try:
            verdicts.append(check(fn, (z,), fast_mode=fast))
        except Exception as e:  # noqa: BLE001 - torch's GradcheckError, gradtool's
            # the first failure torch reports, in torch's words (gradtool adds the input's part)
            heads.append(str(e).split(" with respect to input 0")[0])
            verdicts.append(False)
    assert verdicts == [conj] * 3
    assert heads == [] if conj else heads == ["While considering the imaginary part of complex "
                                               "outputs only, Jacobian mismatch for output 0"] * 3


def test_complex_gradgradcheck_matches_torch():
    """Second order on complex inputs, real and complex outputs: torch's verdicts."""
    for fn in (lambda z: z.exp() * z.conj(), lambda z: (z.abs() ** 3).sum(),
               lambda z: z.sigmoid().angle()):
        for lib in (gt, torch):
            z = lib.tensor([0.3 + 0.8j, -0.5 + 0.2j], dtype=lib.complex128,
                           requires_grad=True)
            assert gradgradcheck(fn, (z,))
            if lib is torch:
                assert torch.autograd.gradgradcheck(fn, (z,))


def test_complex_gradgradcheck_finds_a_wrong_second_order():
    """A backward right at first order whose own derivative is wrong (it detaches z in the
    complex term) fails gradgradcheck, as torch's."""
    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z ** 3

            @staticmethod
            def backward(ctx, g):
                z, = ctx.saved_tensors
                return g * (3 * z.detach() ** 2).conj()
        return Cube
    for lib in (gt, torch):
        z = lib.tensor([0.3 + 0.8j, -0.5 + 0.2j], dtype=lib.complex128, requires_grad=True)
        assert gradcheck(make(lib).apply, (z,))
        with pytest.raises((GradcheckError, RuntimeError)):
            gradgradcheck(make(lib).apply, (z,))
        if lib is torch:
            with pytest.raises(RuntimeError):
                torch.autograd.gradgradcheck(make(lib).apply, (z,))


@pytest.mark.parametrize("actual, expected", [
    ([1 + 2j, 3 - 1j], [1 + 2.001j, 3 - 1j]), ([1 + 2j], [1 + 2.0000001j]),
    ([1 + 2j], [1 + 2j])], ids=["far", "near", "equal"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_assert_close_matches_torch(actual, expected, dtype):
    """testing.assert_close on complex tensors: torch's default tolerances for the dtype (those
    of its real counterpart), torch's verdict and message head."""
    outcomes = []
    for lib, check in ((gt, gt.testing.assert_close), (torch, torch.testing.assert_close)):
        a, e = (lib.tensor(v, dtype=getattr(lib, dtype)) for v in (actual, expected))
        try:
            check(a, e)
            outcomes.append(None)
        except AssertionError as error:
            outcomes.append(str(error).split("\n")[:3])
    assert outcomes[0] == outcomes[1]
