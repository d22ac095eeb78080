"""Forward-mode AD (autograd.forward_ad): torch's API, errors and semantics. The per-op jvp
formulas are proved by the op sweep (tests/engine/test_op_gradients.py); this file proves the
machinery around them: levels, dual tensors, views and in-place ops, custom Functions,
forward-over-reverse, functional and gradcheck's forward checks."""
import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.autograd import functional as F
from gradtool.checks import gradcheck_report

fwAD = gt.autograd.forward_ad


def t(values, **kw):
    return gt.tensor(values, dtype=gt.float64, **kw)


X = [0.5, -1.2, 2.0]
V = [1.0, 0.5, -2.0]


# ---------------- levels and dual tensors ----------------
def test_make_dual_outside_a_level_is_torchs_error():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(t(X), t(V))


def test_make_dual_checks_size_dtype_and_an_existing_tangent():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given "
                                               r"forward gradient is of size \[2\]"):
            fwAD.make_dual(t(X), t([1.0, 2.0]))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(t(X), gt.tensor([1, 2, 3]))
        with pytest.raises(ValueError, match="Expected primal to be floating point"):
            fwAD.make_dual(gt.tensor([1, 2, 3]), t(V))
        dual = fwAD.make_dual(t(X), t(V))
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same "
                                               "level 0"):
            fwAD.make_dual(dual, t(V))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(t(X), t(V), level=3)


def test_levels_do_not_nest_and_tangents_vanish_on_exit():
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        y = fwAD.make_dual(t(X), t(V)).exp()
        assert fwAD.unpack_dual(y).tangent is not None
    assert fwAD.unpack_dual(y).tangent is None
    assert fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level()


def test_unpack_dual_gives_a_named_pair_with_a_tangent_free_primal():
    x = t(X, requires_grad=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t(V))
        unpacked = fwAD.unpack_dual(dual)
        assert isinstance(unpacked, fwAD.UnpackedDualTensor)
        primal, tangent = unpacked
        assert unpacked.primal is primal and tangent.tolist() == V
        assert fwAD.unpack_dual(primal).tangent is None
        assert fwAD.unpack_dual(x) == (x, None)
        # make_dual is a view of its input: backward reaches x through it
        dual.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_ops_without_dual_inputs_get_no_tangent():
    with fwAD.dual_level():
        y = t(X).exp() + 1
        assert fwAD.unpack_dual(y).tangent is None


# ---------------- views and in-place ops ----------------
def test_views_share_their_tangent_with_the_base():
    with fwAD.dual_level():
        dual = fwAD.make_dual(t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 0.0], [0.0, 1.0]]))
        row = dual[1]
        assert fwAD.unpack_dual(row).tangent.tolist() == [0.0, 1.0]
        col = dual.t()[0]
        assert fwAD.unpack_dual(col).tangent.tolist() == [1.0, 0.0]


def test_inplace_op_updates_the_tangent():
    with fwAD.dual_level():
        y = fwAD.make_dual(t(X), t(V)) * 1
        y.mul_(y)  # y^2: tangent 2 y v
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent._data,
                                   2 * np.array(X) * np.array(V))


def test_inplace_write_through_a_view_reaches_the_base_tangent():
    """A base without a tangent gets one (zeros elsewhere) when a dual value is written
    into its view; the base's other views read it too."""
    with fwAD.dual_level():
        base = gt.zeros(2, 3, dtype=gt.float64)
        other_view = base[0]
        base[1].copy_(fwAD.make_dual(t(X), t(V)))
        assert fwAD.unpack_dual(base).tangent.tolist() == [[0.0, 0.0, 0.0], V]
        assert fwAD.unpack_dual(other_view).tangent.tolist() == [0.0, 0.0, 0.0]
        base[0].mul_(2)
        base[0].add_(fwAD.make_dual(t(X), t(V)))
        assert fwAD.unpack_dual(other_view).tangent.tolist() == V


def test_inplace_op_on_a_dual_view_updates_the_base_view_tangent():
    with fwAD.dual_level():
        y = fwAD.make_dual(t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 1.0], [1.0, 1.0]])) * 1
        y[0].mul_(3)
        assert fwAD.unpack_dual(y).tangent.tolist() == [[3.0, 3.0], [1.0, 1.0]]


# ---------------- kinks: forward mode follows backward's conventions ----------------
@pytest.mark.parametrize("fn, values, expected", [
    (lambda x: x.relu(), [-1.0, 0.0, 2.0], [0.0, 0.0, 1.0]),
    (lambda x: x.abs(), [-2.0, 0.0, 3.0], [-1.0, 0.0, 1.0]),
    (lambda x: x.clamp(-0.5, 0.5), [-1.0, -0.5, 0.5], [0.0, 1.0, 1.0]),
    (lambda x: gt.maximum(x, t([-1.0, 0.0, 3.0])), [-1.0, 1.0, 3.0], [0.5, 1.0, 0.5]),
    (lambda x: x.max().reshape(1), [3.0, 1.0, 3.0], None),
], ids=["relu", "abs", "clamp", "maximum_tie", "max_tie"])
def test_kinks_as_torch(fn, values, expected):
    with fwAD.dual_level():
        out = fn(fwAD.make_dual(t(values), gt.ones(3, dtype=gt.float64)))
        tangent = fwAD.unpack_dual(out).tangent.tolist()
    if expected is None:  # max over a tie: the mean of the tied tangents (torch's evenly_read)
        expected = [1.0]
    assert tangent == expected


# ---------------- custom Functions ----------------
class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x_t * 3 * x ** 2


class NoJvp(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_function_jvp_reads_save_for_forward():
    with fwAD.dual_level():
        y = Cube.apply(fwAD.make_dual(t(X), t(V)))
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent._data,
                                   3 * np.array(X) ** 2 * np.array(V))


def test_function_without_jvp_meeting_a_dual_tensor_is_torchs_error():
    with fwAD.dual_level():
        NoJvp.apply(t(X))  # no dual input: no jvp needed
        with pytest.raises(NotImplementedError, match="You must implement the jvp function "
                                                      "for custom autograd.Function to use it "
                                                      "with forward mode AD."):
            NoJvp.apply(fwAD.make_dual(t(X), t(V)))


def test_function_jvp_returning_the_wrong_shape_is_an_error():
    class Bad(Cube):
        @staticmethod
        def jvp(ctx, x_t):
            return x_t.sum()
    with fwAD.dual_level(), pytest.raises(RuntimeError, match="forward gradient that has a "
                                                             "different size"):
        Bad.apply(fwAD.make_dual(t(X), t(V)))


# ---------------- forward-over-reverse ----------------
def test_forward_over_reverse_gives_hessian_vector_products():
    """The gradient of sum(x^3) is 3x^2; its tangent along v is 6 x v."""
    x = t(X, requires_grad=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t(V))
        (g,) = gt.autograd.grad((dual ** 3).sum(), x, create_graph=True)
        np.testing.assert_allclose(fwAD.unpack_dual(g).tangent._data,
                                   6 * np.array(X) * np.array(V))


# ---------------- functional ----------------
def test_functional_jvp_runs_in_forward_mode():
    calls = []
    real = gt.autograd.ops.derivatives.OpSpec.tangent

    def tangent(spec, *a):
        calls.append(spec.name)
        return real(spec, *a)
    gt.autograd.ops.derivatives.OpSpec.tangent = tangent
    try:
        out, jv = F.jvp(lambda x: x.sin() * x, t(X), t(V))
    finally:
        gt.autograd.ops.derivatives.OpSpec.tangent = real
    assert {"sin", "mul"} <= set(calls)
    x, v = np.array(X), np.array(V)
    np.testing.assert_allclose(jv._data, (np.cos(x) * x + np.sin(x)) * v)
    assert not out.requires_grad and not jv.requires_grad


def test_forward_mode_jacobian_and_hessian_match_reverse_mode():
    def f(x):
        return (x.unsqueeze(1) * t([1.0, 2.0])).tanh()

    def s(x):
        return (x.sin() * x).sum() ** 2
    x = t(X)
    np.testing.assert_allclose(F.jacobian(f, x, vectorize=True, strategy="forward-mode")._data,
                               F.jacobian(f, x)._data, rtol=1e-12)
    np.testing.assert_allclose(
        F.hessian(s, x, vectorize=True, outer_jacobian_strategy="forward-mode")._data,
        F.hessian(s, x)._data, rtol=1e-12, atol=1e-14)


# ---------------- gradcheck ----------------
class WrongJvp(Cube):
    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x_t * 2 * x ** 2


def test_gradcheck_check_forward_ad_catches_a_wrong_jvp_with_torchs_message():
    x = t(X, requires_grad=True)
    assert gt.autograd.gradcheck(WrongJvp.apply, (x,))  # backward alone is right
    with pytest.raises(gt.autograd.GradcheckError,
                       match="^Jacobian computed with forward mode mismatch for output 0 with "
                             "respect to input 0,\nnumerical:"):
        gt.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True)
    assert not gt.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True,
                                     check_backward_ad=False, raise_exception=False)
    assert gt.autograd.gradcheck(Cube.apply, (x,), check_forward_ad=True,
                                 check_batched_forward_grad=True)


def test_gradcheck_forward_flags_as_torch():
    x = t(X, requires_grad=True)
    with pytest.raises(AssertionError, match="Expected at least one of check_forward_ad or "
                                             "check_backward_ad"):
        gt.autograd.gradcheck(Cube.apply, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="requires check_forward_ad to be True"):
        gt.autograd.gradcheck(Cube.apply, (x,), check_batched_forward_grad=True)
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        gt.autograd.gradcheck(NoJvp.apply, (x,), check_forward_ad=True)


def test_gradcheck_forward_ad_tangent_reaches_what_the_function_reads_in_place():
    """The input itself carries the tangent during check_forward_ad: a module's parameter the
    function reads from the module (not from its arguments), and a function that calls
    autograd.grad on its input, are checked (torch's detached dual reaches neither)."""
    lin = gt.nn.Linear(3, 2).double()
    x = t(X, requires_grad=True)
    assert gt.autograd.gradcheck(lambda x, w: lin(x).tanh(), (x, lin.weight),
                                 check_forward_ad=True)
    report = gradcheck_report(lambda x, w: lin(x).tanh(), (x, lin.weight),
                              check_forward_ad=True, check_backward_ad=False)
    assert report.passed and [p.ad for p in report.pairs] == ["forward"] * 2

    def gradient_norm(x):
        (g,) = gt.autograd.grad((x.sin() * x ** 2).sum(), x, create_graph=True)
        return (g * g).sum()
    assert gt.autograd.gradcheck(gradient_norm, (x,), check_forward_ad=True)


def test_gradgradcheck_check_fwd_over_rev():
    x = t(X, requires_grad=True)
    assert gt.autograd.gradgradcheck(lambda x: (x.sin() * x ** 2).softmax(0), (x,),
                                     check_fwd_over_rev=True)
    assert gt.autograd.gradgradcheck(lambda x: (x.sin() * x ** 2).softmax(0), (x,),
                                     check_fwd_over_rev=True, check_rev_over_rev=False,
                                     check_undefined_grad=False)


# ---------------- batched forward grads, the tangent slot ----------------
def test_check_batched_forward_grad_catches_a_jvp_that_differs_when_batched():
    """A jvp that keeps state on ctx between calls is right for one tangent and wrong for the
    second of a batch (as under torch's vmap, the batch reaches jvp one tangent at a time):
    torch's batched-forward message."""
    class Noisy(Cube):
        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            ctx.calls = getattr(ctx, "calls", 0) + 1
            return x_t * 3 * x ** 2 + (ctx.calls - 1)

    x = t(X, requires_grad=True)
    assert gt.autograd.gradcheck(Noisy.apply, (x,), check_forward_ad=True)
    with pytest.raises(gt.autograd.GradcheckError,
                       match="For output 0 and input 0:\n\ngradcheck failed while testing "
                             "batched gradient computation with forward-mode AD"):
        gt.autograd.gradcheck(Noisy.apply, (x,), check_forward_ad=True,
                              check_batched_forward_grad=True)


def test_tensor_constructor_and_parameters_unaffected_by_the_tangent_slot():
    """Tensor(data) copies the new tensor's state: the tangent slot, unset, is left out."""
    assert gt.Tensor([1.0, 2.0]).tolist() == [1.0, 2.0]
    assert gt.nn.Parameter(gt.ones(2)).requires_grad
    with fwAD.dual_level():
        assert fwAD.unpack_dual(gt.Tensor([1.0])).tangent is None


def test_writing_into_a_result_never_changes_the_input_tangent():
    """y = x + 1 has x's tangent as its own value, not x's tangent itself: writing through a
    view of y leaves x's tangent alone."""
    with fwAD.dual_level():
        x = fwAD.make_dual(t(X), t(V))
        y = x + 1
        y[0].mul_(2)
        assert fwAD.unpack_dual(x).tangent.tolist() == V
        assert fwAD.unpack_dual(y).tangent.tolist() == [2 * V[0]] + V[1:]


# ---------------- torch's behaviour on the rest of the API ----------------
def test_dual_level_is_also_a_decorator():
    @fwAD.dual_level()
    def tangent_of_double(x, v):
        return fwAD.unpack_dual(fwAD.make_dual(x, v) * 2).tangent
    np.testing.assert_allclose(tangent_of_double(t(X), t(V))._data, 2 * np.array(V))
    with pytest.raises(RuntimeError, match="no level exists"):  # the level has exited
        fwAD.make_dual(t(X), t(V))


def test_inference_mode_computes_no_tangent_but_no_grad_does():
    with fwAD.dual_level():
        dual = fwAD.make_dual(t(X), t(V))
        with gt.inference_mode():
            assert fwAD.unpack_dual(dual * 2).tangent is None
            assert fwAD.unpack_dual(Cube.apply(dual)).tangent is None
        with gt.no_grad():
            assert fwAD.unpack_dual(dual * 2).tangent is not None


def test_repr_of_a_dual_tensor_names_its_tangent():
    with fwAD.dual_level():
        dual = fwAD.make_dual(t([1.0, 2.0]), t([1.0, 0.0]))
        assert repr(dual) == ("tensor([1., 2.], dtype=gradtool.float64,\n"
                              "       tangent=tensor([1., 0.], dtype=gradtool.float64))")
    assert repr(dual) == "tensor([1., 2.], dtype=gradtool.float64)"  # the level exited


class TwoOutputs(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2 * 3

    @staticmethod
    def jvp(ctx, x_t):
        return x_t * 2  # one tangent for two outputs


def test_jvp_returning_the_wrong_number_of_tangents_is_torchs_error():
    with fwAD.dual_level(), pytest.raises(
            RuntimeError, match=r"^Function's jvp returned an invalid number of forward "
                                r"gradients \(expected 2 but got 1\)$"):
        TwoOutputs.apply(fwAD.make_dual(t(X), t(V)))


def test_fast_mode_forward_ad_mismatch_says_fast_mode():
    x = t(X, requires_grad=True)
    with pytest.raises(gt.autograd.GradcheckError) as error:
        gt.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True,
                              check_backward_ad=False, fast_mode=True)
    message = str(error.value)
    assert message.startswith("Jacobian computed with forward mode mismatch for output 0 "
                              "with respect to input 0,\nnumerical:tensor(")
    assert "computed \nin fast mode" in message and "in slow mode" in message
    assert gt.autograd.gradcheck(Cube.apply, (x,), check_forward_ad=True, fast_mode=True)


def test_forward_over_reverse_without_create_graph_gives_the_gradient_its_tangent():
    """grad of sum(x^3) is 3x^2, with tangent 6 x v: the Hessian-vector product, though the
    gradient itself records no graph."""
    x = t(X, requires_grad=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t(V))
        for wrt in (dual, x):
            (g,) = gt.autograd.grad((dual ** 3).sum(), wrt)
            assert not g.requires_grad
            np.testing.assert_allclose(fwAD.unpack_dual(g).tangent._data,
                                       6 * np.array(X) * np.array(V))


