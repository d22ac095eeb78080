"""Backward semantics, named after what each test proves (torch.autograd's documented rules)."""
import gc
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradtool.engine.autograd.node import AccumulateGrad


def f64(*values, requires_grad=True):
    return gt.tensor(values, dtype=gt.float64, requires_grad=requires_grad)


# ---------------- graph structure ----------------
def test_nodes_are_named_as_torch_names_them():
    x = gt.randn(3, requires_grad=True)
    assert type((x + 1).grad_fn).__name__ == "AddBackward0"
    assert (x * 2).grad_fn.name() == "MulBackward0"
    assert x.exp().grad_fn.name() == "ExpBackward0"
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.sum(0).grad_fn.name() == "SumBackward1"
    assert (gt.randn(2, 3, requires_grad=True) @ gt.randn(3, 2)).grad_fn.name() == "MmBackward0"
    assert x.pow(2).grad_fn.name() == "PowBackward0"
    assert x.abs().pow(x).grad_fn.name() == "PowBackward1"
    assert x[0].grad_fn.name() == "SelectBackward0"
    assert x[1:].grad_fn.name() == "SliceBackward0"
    assert repr(x.exp().grad_fn).startswith("<ExpBackward0 object at 0x")


def test_next_functions_lead_to_the_leaf_accumulator():
    x = gt.randn(3, requires_grad=True)
    c = gt.randn(3)
    y = x * c
    (acc, nr), (none, _) = y.grad_fn.next_functions
    assert isinstance(acc, AccumulateGrad) and acc.variable is x and nr == 0
    assert none is None
    assert acc.next_functions == ()
    # one accumulator per leaf, shared by every op that uses it
    z = x.exp()
    assert z.grad_fn.next_functions[0][0] is acc


def test_saved_values_are_exposed_under_torchs_names():
    x = gt.randn(5, requires_grad=True)
    y = x.pow(2)
    assert x.equal(y.grad_fn._saved_self)
    assert y.grad_fn._saved_exponent == 2
    e = x.exp()
    assert e.grad_fn._saved_result.equal(e)
    s = x.sum(0)
    assert s.grad_fn._saved_dim == (0,) and s.grad_fn._saved_keepdim is False
    assert s.grad_fn._saved_self_sym_sizes == (5,)
    w = gt.randn(5, requires_grad=True)
    m = x * w
    assert m.grad_fn._saved_self is x and m.grad_fn._saved_other is w
    assert "_saved_self" in dir(m.grad_fn) and "_raw_saved_self" in dir(m.grad_fn)
    with pytest.raises(AttributeError):
        m.grad_fn._saved_nothing


def test_a_node_saves_only_what_inputs_that_require_grad_need():
    x = gt.randn(3, requires_grad=True)
    c = gt.randn(3)
    y = x * c  # only x requires grad: its formula needs `other`, not `self`
    assert y.grad_fn._saved_other is c
    # as torch: the attribute exists on every MulBackward0, None when not saved this time
    assert y.grad_fn._saved_self is None and y.grad_fn._raw_saved_self is None
    assert y.grad_fn.saved_values().keys() == {"other"}


def test_a_node_lists_every_saved_attribute_of_its_class_and_no_other():
    x = gt.randn(3, requires_grad=True)
    node = (x * gt.randn(3)).grad_fn
    assert sorted(a for a in dir(node) if a.startswith(("_saved", "_raw_saved"))) == [
        "_raw_saved_other", "_raw_saved_self", "_saved_other", "_saved_self"]
    assert not any(a.startswith("_saved") for a in dir(x.exp().sum().grad_fn)
                   if a != "_saved_self_sym_sizes")
    # gradtool's own bookkeeping has no _saved name: cat's input sizes, to()'s dtype
    cat = gt.cat([x, x]).grad_fn
    assert [a for a in dir(cat) if a.startswith("_saved")] == ["_saved_dim"]
    assert [a for a in dir(x.to(gt.float64).grad_fn) if a.startswith("_saved")] == []


def test_a_node_saves_scalars_and_outputs_whichever_inputs_require_grad():
    x, y = gt.randn(3, requires_grad=True), gt.randn(3)
    assert (x + y).grad_fn._saved_alpha == 1  # read by other's formula only
    assert (y.sub(x, alpha=2)).grad_fn._saved_alpha == 2
    assert (2 - x).grad_fn._saved_alpha == 1  # RsubBackward1
    mm = gt.randn(2, 3) @ gt.randn(3, 4, requires_grad=True)
    assert mm.grad_fn._saved_self_sym_sizes == (2, 3)
    assert mm.grad_fn._saved_self_sym_strides == ()  # strides: saved for the input's formula
    assert mm.grad_fn._saved_mat2 is None


def test_saving_an_output_makes_no_reference_cycle():
    x = gt.randn(3, requires_grad=True)
    y = x.exp()
    node = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert node() is None  # freed by reference counting alone
    finally:
        gc.enable()


# ---------------- backward ----------------
def test_gradients_accumulate_across_backward_calls():
    x = f64(1.0, 2.0)
    (x * x).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_gradients_of_a_reused_tensor_sum_over_paths():
    x = f64(3.0)
    y = x * x
    z = y + y * x  # dz/dx = 2x + 3x^2
    z.backward()
    assert x.grad.item() == pytest.approx(2 * 3 + 3 * 9)


def test_non_scalar_output_needs_a_gradient():
    x = gt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_vector_jacobian_product_with_gradient_argument():
    x = f64(1.0, 2.0, 3.0)
    (x * x).backward(gt.tensor([1.0, 0.1, 0.01], dtype=gt.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.4, 0.06])


def test_gradient_of_the_wrong_shape_is_refused():
    x = gt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        (x * 2).backward(gt.ones(4))


def test_backward_on_a_tensor_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does "
                                           "not have a grad_fn"):
        gt.ones(2).sum().backward()


def test_second_backward_through_a_freed_graph_raises_torchs_message():
    x = gt.randn(3, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = f64(1.0, 2.0)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy())


def test_saved_values_are_freed_after_backward():
    x = gt.randn(3, requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_result
    # non-tensor saved values stay readable, as in torch
    s = x.sum(0)
    s.backward()
    assert s.grad_fn._saved_dim == (0,)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(-3, 3), min_size=3, max_size=3),
       number=st.floats(0.5, 2), alpha=st.sampled_from([1, 2.5]))
def test_a_nodes_lean_backward_on_arrays_gives_its_formulas_gradients(values, number, alpha):
    """OpNode.apply's path for array gradients (each formula called with the saved values it
    reads: none, one, or several) agrees with the general evaluation of the same formulas."""
    x = gt.tensor(values, dtype=gt.float64, requires_grad=True)
    w = gt.tensor([number, -number, 1.5], dtype=gt.float64, requires_grad=True)
    results = [x.add(w, alpha=alpha), x * number, x * w, x / w, x.tanh(), x.exp(), x.clone()]
    grad = np.linspace(-1.0, 2.0, 3)
    for r in results:
        node = r.grad_fn
        assert node.spec.grad_first is not None  # (the lean path runs)
        lean, general = node.apply([grad]), node._apply([grad], None)
        assert len(lean) == len(general) == len(node.next_functions)
        for a, b in zip(lean, general):
            assert (a is None) == (b is None)
            if a is not None:
                assert type(a) is np.ndarray
                np.testing.assert_array_equal(a, b)


def test_graph_that_saves_nothing_can_be_backwarded_twice():
    x = f64(1.0, 2.0)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_autograd_grad_returns_instead_of_accumulating():
    x = f64(2.0)
    (g,) = gt.autograd.grad(x ** 3, x)
    assert g.item() == 12.0
    assert x.grad is None


def test_autograd_grad_unused_input():
    x, y = f64(1.0), f64(2.0)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        gt.autograd.grad(x * 2, [x, y])
    gx, gy = gt.autograd.grad(x * 2, [x, y], allow_unused=True)
    assert gx.item() == 2.0 and gy is None
    gx, gy = gt.autograd.grad(x * 2, [x, y], materialize_grads=True)
    assert gy.item() == 0.0


def test_autograd_grad_input_that_does_not_require_grad():
    x = f64(1.0)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        gt.autograd.grad(x * 2, [f64(1.0, requires_grad=False)])


def test_autograd_grad_of_an_intermediate_tensor():
    x = f64(2.0)
    y = x * 3
    z = y * y
    (gy,) = gt.autograd.grad(z, y)
    assert gy.item() == 2 * 6.0


def test_autograd_grad_skips_what_does_not_lead_to_the_inputs():
    x, w = f64(1.0), f64(2.0)
    seen = []
    branch = (w * 5).exp()
    branch.grad_fn.register_prehook(lambda g: seen.append("w-branch"))
    gt.autograd.grad((x * 2 + branch).sum(), x)
    assert seen == []


def test_backward_inputs_restricts_accumulation():
    x, w = f64(1.0), f64(2.0)
    (x * w).backward(inputs=[x])
    assert x.grad.item() == 2.0 and w.grad is None


def test_autograd_backward_with_several_roots():
    x = f64(1.0, 2.0)
    a, b = x * 2, x * x
    gt.autograd.backward([a.sum(), b.sum()])
    assert x.grad.tolist() == [4.0, 6.0]
    y = f64(1.0)
    gt.autograd.backward([y * 2, y * 3], [gt.tensor([1.0], dtype=gt.float64),
                                         gt.tensor([10.0], dtype=gt.float64)])
    assert y.grad.item() == 32.0


def test_broadcast_gradients_come_back_in_each_inputs_shape():
    a = gt.randn(3, 1, dtype=gt.float64, requires_grad=True)
    b = gt.randn(4, dtype=gt.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    np.testing.assert_allclose(a.grad.numpy()[:, 0], np.full(3, b.detach().numpy().sum()))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, a.detach().numpy().sum()))


def test_float32_leaf_gets_float32_grad_even_through_float64_ops():
    a = gt.randn(3, requires_grad=True)
    b = gt.randn(3, dtype=gt.float64)
    (a * b).sum().backward()
    assert a.grad.dtype is gt.float32


def test_leaf_grads_never_share_memory():
    x, y = f64(1.0, 2.0), f64(3.0, 4.0)
    (x + y).sum().backward()
    x.grad.numpy()[0] = 100.0
    assert y.grad.tolist() == [1.0, 1.0]
    z = f64(1.0, 2.0)
    z.sum().backward()  # expand of a scalar: a read-only broadcast view must not become .grad
    z.grad.numpy()[0] = 5.0
    assert z.grad.tolist() == [5.0, 1.0]


@pytest.mark.parametrize("through", [lambda x: x, lambda x: x * 1, lambda x: x + 0,
                                     lambda x: x.view(2, 1)[:, 0]])
def test_leaf_grad_never_shares_memory_with_the_callers_grad_output(through):
    """As torch: x.grad is not the grad_output passed to backward (or a view of it)."""
    x, g = f64(1.0, 2.0), f64(1.0, 1.0).detach()
    through(x).backward(g)
    g.add_(1)
    assert x.grad.tolist() == [1.0, 1.0]


def test_leaf_grad_keeps_a_fresh_buffer_without_copying_it():
    """A gradient the engine alone holds (here a transposed view of mm's result) becomes
    .grad as it is, as torch steals a buffer whose use count is 1: no copy per weight."""
    from gradtool.engine.autograd import engine
    w, x = gt.randn(4, 3, requires_grad=True), gt.randn(5, 3)
    arrived = []
    real = engine.accumulate_into_leaf

    def spy(leaf, g, *args):
        arrived.append(g if isinstance(g, np.ndarray) else g._data)
        return real(leaf, g, *args)
    engine.accumulate_into_leaf = spy
    try:
        (x @ w.t()).relu().sum().backward()
    finally:
        engine.accumulate_into_leaf = real
    assert arrived[0].base is not None and np.shares_memory(w.grad.numpy(), arrived[0])


def test_chain_of_100000_ops_backward_is_iterative():
    x = gt.tensor(1.0, dtype=gt.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_non_leaf_grad_access_warns_and_retain_grad_fills_it():
    x = f64(1.0, 2.0)
    y = x * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad.tolist() == [4.0, 8.0]
    assert x.retains_grad is False


# ---------------- higher order ----------------
def test_create_graph_gives_derivatives_of_any_order():
    x = f64(2.0)
    y = x ** 4
    derivs = []
    g = y
    for _ in range(4):
        (g,) = gt.autograd.grad(g, x, create_graph=True)
        derivs.append(g.item())
    assert derivs == [4 * 8.0, 12 * 4.0, 24 * 2.0, 24.0]


def test_double_backward_through_backward_accumulates_into_leaf():
    x = f64(3.0)
    (gx,) = gt.autograd.grad(x.sin() * x, x, create_graph=True)
    gx.backward()  # d2/dx2 (x sin x) = 2 cos x - x sin x
    assert x.grad.item() == pytest.approx(2 * np.cos(3.0) - 3.0 * np.sin(3.0))


def test_backward_with_create_graph_leaves_a_differentiable_grad():
    x = f64(1.5)
    (x ** 3).backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    (g2,) = gt.autograd.grad(x.grad, x)
    assert g2.item() == pytest.approx(6 * 1.5)


# ---------------- hooks ----------------
def test_tensor_hook_sees_and_can_replace_the_gradient():
    x = f64(1.0, 2.0)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [30.0, 30.0]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_hook_on_a_non_leaf_changes_what_flows_upstream():
    x = f64(1.0)
    y = x * 2
    y.register_hook(lambda g: g * 0.5)
    (y * 4).backward()
    assert x.grad.item() == 4.0  # 4 * 0.5 * 2


def test_hook_on_a_tensor_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        gt.ones(2).register_hook(lambda g: g)


def test_node_hooks_and_prehooks():
    x = f64(2.0)
    y = x * x
    calls = []
    y.grad_fn.register_prehook(lambda grad_outputs: calls.append(("pre", grad_outputs[0].item())))

    def post(grad_inputs, grad_outputs):
        calls.append(("post", grad_inputs[0].item(), grad_outputs[0].item()))
        return (grad_inputs[0] * 0 + 1, grad_inputs[1])
    y.grad_fn.register_hook(post)
    (y * 5).backward()
    assert calls == [("pre", 5.0), ("post", 10.0, 5.0)]
    assert x.grad.item() == 1.0 + 10.0


def test_node_metadata_is_a_dict():
    y = gt.randn(2, requires_grad=True) * 2
    y.grad_fn.metadata["module"] = "layer1"
    assert y.grad_fn.metadata == {"module": "layer1"}


# ---------------- tensors and dtypes ----------------
@pytest.mark.parametrize("make", [lambda: gt.tensor([1, 2], requires_grad=True),
                                  lambda: gt.tensor([True], requires_grad=True),
                                  lambda: gt.arange(3).requires_grad_()])
def test_integer_and_bool_tensors_refuse_requires_grad(make):
    # (torch's factories say "Only ... and complex dtype", requires_grad_() "only ... dtype")
    with pytest.raises(RuntimeError, match="nly Tensors of floating point (and complex )?dtype "
                                           "can require gradients"):
        make()


def test_default_dtypes_follow_torch():
    assert gt.tensor([1.0, 2.0]).dtype is gt.float32
    assert gt.tensor([1, 2]).dtype is gt.int64
    assert gt.tensor([True]).dtype is gt.bool
    assert gt.randn(2).dtype is gt.float32
    assert gt.tensor(np.zeros(2)).dtype is gt.float64  # numpy's dtype is kept
    assert (gt.tensor([1, 2]) / 2).dtype is gt.float32
    assert gt.tensor([1, 2]).exp().dtype is gt.float32
    assert (gt.tensor([1.0], dtype=gt.float16) * 2.5).dtype is gt.float16
    assert gt.float is gt.float32 and gt.double is gt.float64 and gt.long is gt.int64


def test_results_of_integer_dtype_never_require_grad():
    x = gt.randn(3, requires_grad=True)
    assert not x.long().requires_grad
    assert not x.argmax().requires_grad
    assert not (x > 0).requires_grad
    assert not x.max(0).indices.requires_grad


def test_numpy_refuses_a_tensor_that_requires_grad():
    x = gt.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().shape == (2,)


def test_from_numpy_shares_memory():
    a = np.zeros(3)
    t = gt.from_numpy(a)
    a[0] = 7
    assert t[0].item() == 7


def test_repr_matches_torchs_layout():
    assert repr(gt.ones(2, 2, requires_grad=True)) == (
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)")
    x = gt.ones(2, 2, requires_grad=True)
    assert repr((x + 2) * 3) == "tensor([[9., 9.],\n        [9., 9.]], grad_fn=<MulBackward0>)"
    assert repr(gt.tensor(27.0)) == "tensor(27.)"
    assert repr(gt.tensor([-580.36751, 1696.181, -281.38782, -480.09164])) == (
        "tensor([-580.3675, 1696.1810, -281.3878, -480.0916])")
    assert repr(gt.tensor([204.8, 2048.0, 0.2048, 1024.0])) == (
        "tensor([2.0480e+02, 2.0480e+03, 2.0480e-01, 1.0240e+03])")
    assert repr(gt.tensor([1.5], dtype=gt.float64)) == "tensor([1.5000], dtype=gradtool.float64)"
    assert repr(gt.tensor(True)) == "tensor(True)"
    assert repr(gt.tensor([0.0, 0.0])) == "tensor([0., 0.])"
    assert repr(gt.tensor([1, 2, 3])) == "tensor([1, 2, 3])"
    assert repr(gt.zeros(0)) == "tensor([])"
    assert repr(gt.zeros(2, 3).shape) == "gradtool.Size([2, 3])"


def test_a_zero_dim_tensor_formats_as_its_number():
    """f-strings and format() of a 0-d tensor give the number, with its format spec, as torch's
    (messages that interpolate a parameter read "df=0.5"); other tensors print, and refuse a
    spec."""
    assert f"{gt.tensor(0.5)}" == "0.5" and f"{gt.tensor(2.0, dtype=gt.float64):.3f}" == "2.000"
    assert f"{gt.tensor(3)}" == "3" and f"{gt.tensor([0.5])}" == "tensor([0.5000])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(gt.tensor([2.5]), ".2f")


def test_repr_of_values_spanning_the_whole_float_range_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (hi / lo overflowed: a RuntimeWarning)
        assert repr(gt.tensor([1e308, 1e-300, 2.0], dtype=gt.float64)) == (
            "tensor([1.0000e+308, 1.0000e-300,  2.0000e+00], dtype=gradtool.float64)")


def test_repr_summarises_large_tensors():
    text = repr(gt.arange(2000))
    assert "..." in text and text.startswith("tensor([   0,    1,    2,")


def test_factory_functions_honour_requires_grad_under_no_grad():
    with gt.no_grad():
        for t in (gt.zeros(2, requires_grad=True), gt.ones(2, requires_grad=True),
                  gt.randn(2, requires_grad=True), gt.tensor([1.0], requires_grad=True),
                  gt.full((2,), 3.0, requires_grad=True), gt.rand(2, requires_grad=True),
                  gt.linspace(0, 1, 3, requires_grad=True), gt.eye(2, requires_grad=True)):
            assert t.requires_grad and t.is_leaf


def test_manual_seed_makes_random_factories_reproducible():
    gt.manual_seed(3)
    a = gt.randn(4)
    gt.manual_seed(3)
    assert a.equal(gt.randn(4))


def test_shape_errors_are_torchs():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 0"):
        gt.ones(3) + gt.ones(4)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        gt.ones(2, 3) @ gt.ones(4, 5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        gt.ones(2).sum(3)


def test_changing_requires_grad_of_a_non_leaf_is_refused():
    y = gt.randn(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables"):
        y.requires_grad = False


def test_detach_shares_data_and_stops_gradients():
    x = f64(1.0, 2.0)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), x.detach().numpy())
    assert d._version_counter is x._version_counter


# ---------------- grad modes ----------------
def test_no_grad_context_and_decorator():
    x = gt.tensor([1.0], requires_grad=True)
    with gt.no_grad():
        assert not (x * 2).requires_grad
        assert not gt.is_grad_enabled()
    assert gt.is_grad_enabled()

    @gt.no_grad()
    def doubler(t):
        return t * 2
    assert not doubler(x).requires_grad

    @gt.no_grad
    def doubler_bare(t):
        return t * 2
    assert not doubler_bare(x).requires_grad


def test_enable_grad_inside_no_grad():
    x = gt.tensor([1.0], requires_grad=True)
    with gt.no_grad():
        with gt.enable_grad():
            y = x * 2
    assert y.requires_grad
    y.backward()
    assert x.grad.item() == 2.0

    @gt.enable_grad()
    def doubler(t):
        return t * 2
    with gt.no_grad():
        assert doubler(x).requires_grad


def test_set_grad_enabled_as_call_context_and_decorator():
    x = gt.tensor([1.0], requires_grad=True)
    with gt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    try:
        gt.set_grad_enabled(False)
        assert not (x * 2).requires_grad
        gt.set_grad_enabled(True)
        assert (x * 2).requires_grad
    finally:
        gt.set_grad_enabled(True)

    @gt.set_grad_enabled(False)
    def f(t):
        return t * 2
    assert not f(x).requires_grad and gt.is_grad_enabled()


def test_grad_mode_is_thread_local_and_new_threads_start_enabled():
    seen = {}

    def worker():
        seen["enabled"] = gt.is_grad_enabled()
        x = gt.ones(1, requires_grad=True)
        seen["recorded"] = (x * 2).requires_grad
    with gt.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == {"enabled": True, "recorded": True}


def test_a_thread_under_no_grad_or_inference_mode_leaves_another_recording():
    """The common path reads one count of threads whose grad mode is not the default, and
    each thread's own state only while it is not 0: a thread held inside no_grad,
    inference_mode and saved_tensors_hooks changes nothing for the thread that records."""
    from gradtool.engine.autograd import grad_mode
    entered, done = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with gt.no_grad(), gt.inference_mode(), gt.autograd.graph.saved_tensors_hooks(
                lambda t: seen.setdefault("packed_by", "worker"), lambda t: t):
            entered.set()
            done.wait(30)
            x = gt.ones(1, requires_grad=True)
            seen["worker"] = ((x * 2).requires_grad, gt.ones(1).is_inference())
    before = grad_mode.threads_off_default
    t = threading.Thread(target=worker)
    t.start()
    assert entered.wait(30)
    try:
        assert grad_mode.threads_off_default == before + 1
        x = gt.ones(3, requires_grad=True)
        y = (x * 2).tanh()  # tanh saves its result: with the worker's hooks, were they shared
        assert gt.is_grad_enabled() and not gt.is_inference_mode_enabled()
        assert y.requires_grad and y.grad_fn.name() == "TanhBackward0"
        assert not y.is_inference() and "packed_by" not in seen
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh(2.0) ** 2), rtol=1e-6)
    finally:
        done.set()
        t.join()
    assert seen == {"worker": (False, True)}
    assert grad_mode.threads_off_default == before


def test_a_thread_that_ends_inside_no_grad_is_not_counted_after_it():
    from gradtool.engine.autograd import grad_mode
    before = grad_mode.threads_off_default
    t = threading.Thread(target=lambda: gt.no_grad().__enter__())  # never exited
    t.start()
    t.join()
    gc.collect()
    assert grad_mode.threads_off_default == before
    with gt.no_grad():
        assert grad_mode.threads_off_default == before + 1 and not gt.is_grad_enabled()
        assert not (gt.ones(1, requires_grad=True) * 2).requires_grad
    assert grad_mode.threads_off_default == before and gt.is_grad_enabled()


def test_grad_mode_restored_after_an_exception():
    with pytest.raises(ValueError):
        with gt.no_grad():
            raise ValueError
    assert gt.is_grad_enabled()


def test_backward_runs_formulas_without_recording_unless_create_graph():
    x = f64(1.0)
    seen = []
    x.register_hook(lambda g: seen.append(g.requires_grad))
    (x * x).backward()
    assert seen == [False]


# torch's dtypes for nested data: Python floats are float32, ints int64; numpy scalars and
# Tensors keep theirs; a float type wins over an int type.
INFERRED_DTYPES = [
    ("[1, 2.0]", "float32"), ("[[1, 2], [3, 4.5]]", "float32"), ("3", "int64"),
    ("[True, False]", "bool"), ("[]", "float32"), ("np.float64(1.0)", "float64"),
    ("[np.float64(1.0), 2.0]", "float64"), ("[np.float32(1.0), 2.0]", "float32"),
    ("[np.int32(1), 2]", "int64"), ("[np.int32(1), np.int32(2)]", "int32"),
    ("[np.float16(1), 2]", "float16"), ("[M.tensor(1.0, dtype=M.float64)]", "float64"),
    ("[np.uint8(1), True]", "uint8")]


@pytest.mark.parametrize("data, dtype", INFERRED_DTYPES)
def test_tensor_infers_torchs_dtype(data, dtype):
    assert gt.tensor(eval(data, {"np": np, "M": gt})).dtype == getattr(gt, dtype)


# ---------------------------------- .grad accumulation ----------------------------------
def test_grad_accumulates_in_place_so_an_earlier_reference_sees_the_sum():
    x = gt.randn(3, requires_grad=True)
    (x * 2).sum().backward()
    kept = x.grad
    (x * 2).sum().backward()
    assert x.grad is kept and kept.tolist() == [4.0] * 3
    assert kept._version == 1  # an in-place add, as torch's AccumulateGrad does


def test_grad_under_create_graph_is_a_copy_then_a_new_sum_as_torch():
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    first = x.grad
    copy = first.grad_fn
    assert copy.name() == "CopyBackwards"
    assert copy.next_functions[0] == (None, 0)
    assert copy.next_functions[1][0].name() == "MulBackward0"
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad is not first and first.equal(3 * x.detach() ** 2)  # untouched
    add = x.grad.grad_fn
    assert add.name() == "AddBackward0" and add.next_functions[0][0] is copy
    assert x.grad.allclose(6 * x.detach() ** 2)


def test_accumulation_writes_into_no_tensor_a_hook_kept():
    kept = []
    x = gt.randn(3, requires_grad=True)
    for _ in range(2):
        y = x.clone()  # CloneBackward0 hands y's gradient array on to x as it is
        y.register_hook(kept.append)
        (y * 2).sum().backward()
    assert [k.tolist() for k in kept] == [[2.0] * 3] * 2 and x.grad.tolist() == [4.0] * 3


def _run_threads(fn, n=12):
    errors = []

    def guarded():
        try:
            fn()
        except Exception as e:  # pragma: no cover - the assertion below shows it
            errors.append(e)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=guarded) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(previous)
    assert errors == []


def test_concurrent_backward_into_shared_leaves_loses_no_accumulation():
    for _ in range(3):
        w = gt.ones(4, dtype=gt.float64, requires_grad=True)  # fresh: no AccumulateGrad yet

        def step():
            for _ in range(20):
                (w * 2 + w.sin() * 0).sum().backward()
        _run_threads(step)
        assert w.grad.tolist() == [12 * 20 * 2.0] * 4


def test_concurrent_grad_on_graphs_sharing_a_leaf_is_exact_and_raises_nothing():
    results = []
    for _ in range(3):
        w = gt.full((3,), 2.0, dtype=gt.float64, requires_grad=True)

        def step():
            for _ in range(20):
                results.append(gt.autograd.grad((w * w).sum(), w)[0].tolist())
        _run_threads(step)
    assert results == [[4.0] * 3] * (3 * 12 * 20)
