"""torch's rules where differential fuzzing (tests/parity/test_fuzz_parity.py) found gradtool
following numpy or its own: indexing (where indexed dims go, which node each form records,
__setitem__'s fill_/copy_/index_put_), double backward through relu, softmax of empty dims,
what a second backward finds freed, and the memory layout of results. Each behaviour has a
plain test of torch's documented result here; its comparison with torch itself is in
tests/parity (test_indexing.py, test_backward.py, test_memory_layout.py, test_inplace.py)."""
import numpy as np
import pytest

import gradtool as gt


def node_names(t):
    """The chain of grad_fn names from t down its first edges, to the leaf (excluded)."""
    names, fn = [], t.grad_fn
    while fn is not None and fn.name().removeprefix("torch::autograd::") != "AccumulateGrad":
        names.append(fn.name().removeprefix("torch::autograd::"))
        fn = fn.next_functions[0][0]
    return names


# ------------------------------ indexing: shapes and gradients ------------------------------
def test_int_beside_list_index_is_a_select_so_the_list_dim_stays_in_place():
    x = gt.arange(24.0).view(2, 3, 4).requires_grad_()
    y = x[0, :, [1, 0]]
    assert y.shape == (3, 2)  # numpy would give (2, 3)
    assert y.tolist() == [[1.0, 0.0], [5.0, 4.0], [9.0, 8.0]]
    assert node_names(y) == ["IndexBackward0", "SelectBackward0"]
    y.backward(gt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    expected = np.zeros((2, 3, 4))
    expected[0, :, 1], expected[0, :, 0] = [1, 3, 5], [2, 4, 6]
    assert np.array_equal(x.grad.numpy(), expected)


def test_zero_dim_int_tensor_index_is_a_select():
    x = gt.arange(24.0).view(2, 3, 4)
    assert x[gt.tensor(0), :, [1, 0]].shape == (3, 2)


def test_non_adjacent_tensor_indices_put_the_indexed_dims_first():
    x = gt.arange(24.0).view(2, 3, 4)
    assert x[[1, 0], :, [1, 0]].shape == (2, 3)
    assert x[:, [0, 2], [1, 0]].shape == (2, 2)


def test_bool_index_adds_a_dim_kept_or_emptied():
    x = gt.ones(2, 3, requires_grad=True)
    assert x[True].shape == (1, 2, 3) and x[False].shape == (0, 2, 3)
    assert x[0, True].shape == (1, 3)
    assert node_names(x[True]) == ["IndexBackward0", "UnsqueezeBackward0"]


def test_list_holding_a_slice_or_sequence_indexes_as_a_tuple():
    x = gt.arange(6.0).view(2, 3)
    assert x[[0, slice(None)]].tolist() == [0.0, 1.0, 2.0]
    assert x[[[1], [0]]].tolist() == [3.0]
    assert x[[1, 0]].shape == (2, 3)  # a list of ints is one tensor index


def test_range_indexes_as_the_sequence_of_ints_it_spells():
    # the PyTorch nn tutorial's nll: input[range(n), target]
    x = gt.arange(6.0).view(2, 3).requires_grad_()
    picked = x[range(2), gt.tensor([2, 0])]
    assert picked.tolist() == [2.0, 3.0] and picked.grad_fn.name() == "IndexBackward0"
    picked.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    assert x[range(0)].shape == (0, 3)
    y = gt.zeros(2, 3)
    y[range(2), [1, 2]] = 1.0
    assert y.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_index_put_of_another_dtype_is_refused():
    y = gt.zeros(3, dtype=gt.float64)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
        y[[0]] = gt.tensor([1.0], dtype=gt.float32)
    y[[0]] = 1.0  # a number takes y's dtype
    assert y.tolist() == [1.0, 0.0, 0.0]


def test_out_of_range_index_is_refused_unless_nothing_is_read():
    x = gt.ones(1, 4, 3)
    assert x[0, 6:, None, ..., [3, -2]].shape == (0, 1, 2)  # an empty result reads nothing
    # torch counts the dim among the index tensors (numpy would say "axis 2")
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[0, :, [3]]


def test_mask_of_two_dims_then_an_index_tensor():
    """A 2-d mask covers two dims; the index after it addresses the third."""
    x = gt.arange(24.0).view(2, 3, 4).requires_grad_()
    mask = gt.tensor([[True, False, True], [False, True, True]])
    picked = x[mask, [1]]
    assert picked.tolist() == [1.0, 9.0, 17.0, 21.0]
    picked.sum().backward()
    assert x.grad.sum().item() == 4.0 and x.grad[0, 2].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert x[mask, 1:3].shape == (4, 2)
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 2 with size 4"):
        x[mask, [9]]


def test_float_index_tensor_is_refused():
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        gt.ones(3)[gt.tensor([0.0])]


def test_setitem_through_int_and_list_writes_torchs_elements_and_gradients():
    x = gt.zeros(2, 3, 4, requires_grad=True)
    v = gt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    y = x * 1.0
    y[0, :, [1, 0]] = v
    expected = np.zeros((2, 3, 4))
    expected[0, :, 1], expected[0, :, 0] = [1, 3, 5], [2, 4, 6]
    assert np.array_equal(y.detach().numpy(), expected)
    (y * gt.arange(24.0).view(2, 3, 4)).sum().backward()
    assert v.grad.tolist() == [[1.0, 0.0], [5.0, 4.0], [9.0, 8.0]]
    assert x.grad.numpy()[0, :, :2].sum() == 0 and x.grad.numpy()[1].sum() == sum(range(12, 24))


# ------------------------------ indexing: node names ------------------------------
@pytest.mark.parametrize("index, names", [
    ((Ellipsis,), ["AliasBackward0"]),
    ((slice(None), slice(None)), ["AliasBackward0"]),
    ((slice(None), slice(0, 100)), ["AliasBackward0"]),
    ((slice(-3, None),), ["SliceBackward0"]),
    ((None,), ["UnsqueezeBackward0"]),
])
def test_full_range_items_in_a_tuple_record_no_slice(index, names):
    x = gt.ones(2, 3, requires_grad=True)
    assert node_names(x[index]) == names


def test_a_lone_full_slice_is_a_slice_backward():
    x = gt.ones(2, 3, requires_grad=True)
    assert node_names(x[:]) == ["SliceBackward0"]
    assert node_names(x[0:2]) == ["SliceBackward0"]


@pytest.mark.parametrize("index, value, names", [
    (Ellipsis, 1.0, ["FillBackward3", "MulBackward0"]),
    (slice(None), "ones(3)", ["CopyBackwards", "MulBackward0"]),
    ((slice(None), slice(None)), "ones(2, 3)", ["CopyBackwards", "MulBackward0"]),
    (0, 1.0, ["CopySlices", "MulBackward0"]),
    ([0, 1], 1.0, ["IndexPutBackward0", "MulBackward0"]),
    ((0, [0, 1]), 1.0, ["CopySlices", "MulBackward0"]),
    (False, 1.0, ["MulBackward0"]),
])
def test_setitem_records_torchs_node(index, value, names):
    y = gt.ones(2, 3, requires_grad=True) * 1.0
    y[index] = gt.ones(*map(int, value[5:-1].split(","))) if isinstance(value, str) else value
    assert node_names(y) == names


def test_fill_with_a_tensor_gives_the_value_its_gradient():
    x = gt.zeros(2, 3, requires_grad=True) * 1.0
    v = gt.tensor(2.0, requires_grad=True)
    x.fill_(v)
    assert x.grad_fn.name() == "FillBackward3"
    (x * gt.arange(6.0).view(2, 3)).sum().backward()
    assert v.grad.item() == 15.0


# ------------------------------ gradients ------------------------------
def test_relu_gradient_is_differentiable_and_its_gradient_is_zero():
    x = gt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    g, = gt.autograd.grad(x.relu().sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "ThresholdBackwardBackward0"
    g2, = gt.autograd.grad(g.sum(), x)
    assert g2.tolist() == [0.0, 0.0, 0.0]


def test_in_place_relu_gradient_is_differentiable():
    x = gt.tensor([1.0, -2.0], requires_grad=True)
    g, = gt.autograd.grad((x * 1.0).relu_().sum(), x, create_graph=True)
    assert g.requires_grad


@pytest.mark.parametrize("op", [lambda x: x * 2, lambda x: x / 2, lambda x: 2 * x])
def test_second_backward_through_a_product_with_a_number_raises(op):
    x = gt.ones(3, requires_grad=True)
    y = op(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


@pytest.mark.parametrize("op", [lambda x: x + 2, lambda x: -x, lambda x: x.view(3, 1).t()])
def test_second_backward_through_a_node_that_saved_no_tensor_works(op):
    x = gt.ones(3, requires_grad=True)
    y = op(x).sum()
    y.backward()
    y.backward()
    assert x.grad.abs().tolist() == [2.0, 2.0, 2.0]


def test_double_backward_through_an_in_place_op_on_a_view():
    x = gt.tensor([[1.0, 4.0], [9.0, 16.0]], requires_grad=True)
    y = x * 1.0
    y[0].sqrt_()
    g, = gt.autograd.grad(y.sum(), x, create_graph=True)
    h, = gt.autograd.grad(g.sum(), x)
    assert np.allclose(h.numpy(), [[-0.25, -1 / 32], [0.0, 0.0]])


# ------------------------------ empty tensors, reductions, shapes ------------------------------
@pytest.mark.parametrize("shape, dim", [((0, 3), 0), ((0, 3), 1), ((2, 0), 1)])
def test_softmax_and_log_softmax_of_empty_tensors(shape, dim):
    x = gt.zeros(*shape, requires_grad=True)
    assert x.softmax(dim).shape == shape
    x.log_softmax(dim).sum().backward()
    assert x.grad.shape == shape


def test_logsumexp_over_an_empty_dim_is_minus_infinity():
    assert gt.zeros(0).logsumexp(0).item() == -np.inf


def test_max_and_amax_over_an_empty_dim_raise_index_error():
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim -1 to have"):
        gt.zeros(2, 0).amax(-1)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 1 to have"):
        gt.zeros(2, 0).max(-1)


def test_amax_gradient_spreads_a_nan_to_every_element_as_torch():
    x = gt.tensor([1.0, 3.0, 2.0], requires_grad=True)
    x.amax(0).backward(gt.tensor(float("nan")))
    assert np.isnan(x.grad.numpy()).all()


def test_flatten_of_a_one_dim_tensor_is_the_tensor_itself():
    x = gt.ones(3)
    assert x.flatten() is x


def test_reshape_of_a_non_contiguous_viewable_tensor_is_a_reshape_alias():
    x = gt.ones(2, 2, requires_grad=True) * 1.0
    assert x.reshape(4).grad_fn.name() == "ViewBackward0"
    assert x[:, :1].reshape(2).grad_fn.name() == "ReshapeAliasBackward0"
    assert x.t().reshape(4).grad_fn.name() == "UnsafeViewBackward0"


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
def test_var_gradient_of_one_element_is_nan_not_an_error():
    x = gt.ones(1, requires_grad=True, dtype=gt.float64)
    x.var(0).backward()
    assert np.isnan(x.grad.item())


# ------------------------------ memory layout of results ------------------------------
def test_elementwise_result_keeps_a_permuted_inputs_layout_so_view_fails_as_in_torch():
    x = gt.randn(2, 3)
    for result in (x.t().exp(), x.t() + 1, x.t() * gt.randn(3, 2), x.t().clone()):
        assert not result.is_contiguous()
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            result.view(-1)
    assert (gt.randn(3, 2) + x.t()).view(-1).shape == (6,)  # the first operand decides


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2), (0, 1)])
def test_addmm_by_a_transposed_weight_is_the_plain_product_laid_out_in_c_order(beta, alpha):
    from gradtool.engine.autograd.ops import kernels
    rng = np.random.default_rng(0)
    for rows, taken in ((32, True), (33, False)):  # at the rule's bound, and past it
        x = rng.standard_normal((rows, 256)).astype(np.float32)
        weight = rng.standard_normal((512, 256)).astype(np.float32)
        bias = rng.standard_normal(512).astype(np.float32)
        assert kernels.by_transposed_product(x, weight.T) is taken
        out = kernels.addmm(bias, x, weight.T, beta, alpha)
        general = alpha * np.matmul(x, weight.T) + (beta * bias if beta else 0)
        assert out.dtype == np.float32 and out.flags.c_contiguous
        np.testing.assert_allclose(out, general, rtol=1e-5, atol=1e-4)
    linear = gt.nn.functional.linear(gt.tensor(x[:32]), gt.tensor(weight), gt.tensor(bias))
    assert linear.is_contiguous() and linear.view(-1).shape == (32 * 512,)


def test_reductions_softmax_and_contiguous_give_contiguous_results():
    x = gt.randn(2, 3, 4).permute(2, 0, 1)
    for result in (x.sum(1), x.sum(1, keepdim=True), x.amax(2), x.var(2), x.logsumexp(2),
                   x.softmax(1), x.log_softmax(1), x.masked_fill(x > 0, 0.0), x.contiguous()):
        assert result.is_contiguous()
        result.view(-1)


# ---------------- double backward at 0 (a differential fuzz of double backward) ----------------
def double_backward_at_zero(lib):
    """(first-order gradients, whether each requires grad, second-order gradients) of
    elu (out of place and in place) and prod over one-element slices, at inputs holding 0."""
    out = []
    for f in (lambda x: lib.nn.functional.elu(x * 1.0, alpha=1.5),
              lambda x: lib.nn.functional.elu(x * 1.0, alpha=1.5, inplace=True),
              lambda x: x.view(3, 1).prod(-1, keepdim=True),
              lambda x: x[1].prod(),
              lambda x: x[1:2].prod(0)):
        x = lib.tensor([-1.0, 0.0, 0.5], dtype=lib.float64, requires_grad=True)
        y = f(x)
        (g,) = lib.autograd.grad((y * lib.arange(1.0, y.numel() + 1, dtype=lib.float64)
                                  .view(y.shape)).sum(), x, create_graph=True)
        h = lib.autograd.grad(g.sum(), x)[0].numpy().tolist() if g.requires_grad else None
        out.append((g.detach().numpy().tolist(), g.requires_grad, h))
    return out


def test_elu_second_derivative_at_zero_is_zero_and_prod_of_one_zero_is_linear():
    elu, elu_, prod_column, prod_scalar, prod_one = double_backward_at_zero(gt)
    for g, requires_grad, h in (elu, elu_):
        assert g == [1.5 * np.exp(-1.0), 3.0, 3.0]  # elu'(0) is the exponential side: alpha
        assert requires_grad and h == [1.5 * np.exp(-1.0), 0.0, 0.0]  # elu''(0) = 0
    # a product over one element holding 0 passes grad as is: nothing to differentiate again
    for g, requires_grad, h in (prod_column, prod_scalar, prod_one):
        assert not requires_grad and h is None


def test_index_select_and_index_copy_take_a_0d_index_as_one_slice():
    x = gt.randn(4, 3, dtype=gt.float64, requires_grad=True)
    picked = x.index_select(0, gt.tensor(2))
    assert picked.shape == (1, 3) and gt.equal(picked[0], x[2])
    picked.sum().backward()
    assert x.grad.sum(1).tolist() == [0.0, 0.0, 3.0, 0.0]
    out = gt.zeros(4).index_copy_(0, gt.tensor(1), gt.tensor([5.0]))
    assert out.tolist() == [0.0, 5.0, 0.0, 0.0]
