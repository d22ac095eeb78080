"""In-place ops, views and version counters: torch's semantics and its in-place
correctness checks, with messages that also say where the in-place op ran; which writes into
overlapping memory (an expand, an input sharing the output's memory) torch refuses; and an
in-place op refusing the broadcast shape its out-of-place form takes (masked_fill_). Their
comparison with torch itself is in tests/parity/test_inplace.py."""
import functools

import numpy as np
import pytest

import gradtool as gt

from gradcheck_util import check_grads


def f64(*shape, requires_grad=True, seed=0):
    rng = np.random.default_rng(seed)
    return gt.tensor(rng.standard_normal(shape), dtype=gt.float64, requires_grad=requires_grad)


INPLACE = {  # method -> (args, out-of-place equivalent)
    "add_": ((2.0,), lambda t: t + 2.0),
    "sub_": ((2.0,), lambda t: t - 2.0),
    "mul_": ((3.0,), lambda t: t * 3.0),
    "div_": ((4.0,), lambda t: t / 4.0),
    "pow_": ((2,), lambda t: t ** 2),
    "exp_": ((), lambda t: t.exp()),
    "clamp_": ((-0.5, 0.5), lambda t: t.clamp(-0.5, 0.5)),
    "relu_": ((), lambda t: t.relu()),
    "zero_": ((), lambda t: t * 0),
    "fill_": ((7.0,), lambda t: t * 0 + 7.0),
    "masked_fill_": ((None, 1.5), None),
    "copy_": ((None,), None),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_op_bumps_version_and_matches_out_of_place(name):
    args, reference = INPLACE[name]
    x = f64(4, requires_grad=False)
    before = x.clone()
    if name == "masked_fill_":
        args = (before > 0, 1.5)
        reference = lambda t: t.masked_fill(before > 0, 1.5)  # noqa: E731
    if name == "copy_":
        src = f64(4, requires_grad=False, seed=1)
        args, reference = (src,), (lambda t: src)
    assert x._version == 0
    out = getattr(x, name)(*args)
    assert out is x and x._version == 1
    np.testing.assert_allclose(x.numpy(), reference(before).numpy())


@pytest.mark.parametrize("name", ["add_", "mul_", "div_", "pow_", "exp_", "clamp_", "relu_",
                                  "sub_"])
def test_inplace_on_a_non_leaf_gives_the_right_gradient(name):
    args, reference = INPLACE[name]

    def inplace(x):
        y = x * 1.5
        getattr(y, name)(*args)
        return y
    x = f64(5)
    check_grads(inplace, [x], order=2)
    np.testing.assert_allclose(inplace(x).detach().numpy(), reference(x * 1.5).detach().numpy())


def test_augmented_assignment_is_in_place():
    x = f64(3)
    y = x * 2
    ref = id(y)
    y += 1
    y *= 3
    y -= 1
    y /= 2
    assert id(y) == ref and y._version == 4
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_node_names_of_inplace_ops_are_torchs():
    x = f64(3) * 1
    assert x.add_(1).grad_fn.name() == "AddBackward0"
    assert x.exp_().grad_fn.name() == "ExpBackward0"
    assert x.zero_().grad_fn.name() == "ZeroBackward0"
    assert x.copy_(f64(3)).grad_fn.name() == "CopyBackwards"


def test_inplace_on_a_leaf_that_requires_grad_raises_before_writing():
    x = f64(3)
    before = x.detach().clone()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being "
                                           "used in an in-place operation."):
        x[0].mul_(2)
    assert x.detach().equal(before) and x._version == 0


def test_inplace_on_a_leaf_under_no_grad_is_allowed():
    x = f64(3)
    with gt.no_grad():
        x.mul_(2)
    assert x._version == 1 and x.is_leaf and x.requires_grad


def test_illegal_inplace_ops_leave_the_tensor_unchanged():
    i = gt.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output "
                                           "type Long"):
        i.add_(0.5)
    assert i.tolist() == [1, 2, 3] and i._version == 0
    x = gt.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast "
                                           r"shape \[2, 3\]"):
        x.add_(gt.ones(2, 3))
    e = gt.zeros(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers "
                                           "to a single memory location"):
        e.add_(1)
    assert x.tolist() == [0.0, 0.0, 0.0]


def test_modifying_a_saved_tensor_makes_backward_raise_torchs_message_and_more():
    a = f64(3)
    b = a.exp()          # ExpBackward0 saves its result b
    b.add_(1)            # in-place on b: version 0 -> 1
    line = test_modifying_a_saved_tensor_makes_backward_raise_torchs_message_and_more \
        .__code__.co_firstlineno + 3
    with pytest.raises(RuntimeError) as info:
        b.sum().backward()
    message = str(info.value)
    assert ("one of the variables needed for gradient computation has been modified by an "
            "inplace operation: [gradtool.DoubleTensor [3]], which is output 0 of ExpBackward0, "
            "is at version 1; expected version 0 instead.") in message
    assert "saved for backward by ExpBackward0" in message
    assert f"test_inplace.py:{line}" in message


def test_modifying_a_saved_input_raises_too():
    x = f64(3)
    y = x * 1
    z = y * y  # saves y twice
    y.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        z.sum().backward()


def _index_writes(case):
    """The sweep case's inputs, and for each integer or bool constant (an index, a mask) a
    write into it that keeps it valid (its elements rolled, so a bool mask keeps its count)."""
    from tests.engine.test_op_gradients import build
    inputs, _ = build(case, np.random.default_rng(5))
    writes = [functools.partial(lambda t: t.copy_(t.flatten().roll(1).view(t.shape)), x)
              for x in inputs if isinstance(x, gt.Tensor) and not x.requires_grad
              and not (x.dtype.is_floating_point or x.dtype.is_complex) and x.dim()]
    return inputs, writes


def _first_order(outs, inputs):
    """The gradients for a cotangent of distinct values (a sum's ones would not tell a
    permuted index from the original)."""
    outs = [o for o in (outs if isinstance(outs, (tuple, list)) else (outs,))
            if o.dtype.is_floating_point]
    diff = [x for x in inputs if isinstance(x, gt.Tensor) and x.requires_grad]
    cotangents = [gt.arange(o.numel(), dtype=o.dtype).view(o.shape) for o in outs]
    return gt.autograd.grad(outs, diff, grad_outputs=cotangents, allow_unused=True)


def _cases_with_an_index():
    from tests.engine.test_op_gradients import CASES
    return [c for c in CASES if _index_writes(c)[1]]


@pytest.mark.parametrize("case", _cases_with_an_index(), ids=lambda c: c.id)
def test_an_index_written_after_the_forward_fails_the_backward_or_is_not_read(case):
    """Every sweep case taking an index or mask: writing into it after the forward makes the
    backward raise torch's in-place error (the row saved it, with its version), or leaves the
    gradient as it was (the row keeps nothing of it). Never a gradient of the new index."""
    inputs, _ = _index_writes(case)
    expected = _first_order(case.fn(*inputs), inputs)
    inputs, writes = _index_writes(case)
    outs = case.fn(*inputs)
    for write in writes:
        write()
    try:
        got = _first_order(outs, inputs)
    except RuntimeError as e:
        assert "has been modified by an inplace operation" in str(e), str(e)
        assert "is at version 1; expected version 0 instead" in str(e)
        return
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if g is not None:
            np.testing.assert_array_equal(g.numpy(), e.numpy())


def test_an_index_written_after_the_forward_is_named_as_torch_names_it():
    x = f64(3, 4)
    index, mask = gt.tensor([0, 2]), gt.tensor([True, False, True])
    picked, masked = x[index], x[mask]
    index.add_(1)
    mask.zero_()
    with pytest.raises(RuntimeError, match=r"^one of the variables needed for gradient "
                       r"computation has been modified by an inplace operation: "
                       r"\[gradtool.LongTensor \[2\]\] is at version 1; expected version 0"):
        picked.sum().backward()
    with pytest.raises(RuntimeError, match=r"inplace operation: \[CPUBoolType \[3\]\] is at "
                       r"version 1; expected version 0"):
        masked.sum().backward()


def test_an_index_is_freed_after_backward_as_the_other_saved_tensors():
    x = f64(3)
    y = x[gt.tensor([0, 1])]
    y.sum().backward(retain_graph=True)
    y.sum().backward()  # (retained once)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn._saved_indices


def test_inplace_on_an_input_saved_by_its_own_op_is_safe():
    # mul_ needs the old value of y for the other input's gradient: it keeps a copy
    x = f64(3)
    w = f64(3, seed=1)
    y = x * 1
    y.mul_(w)
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy())


def test_views_share_memory_and_version_counter():
    x = gt.zeros(2, 3)
    views = [x[0], x[:, 1:], x.view(6), x.t(), x.transpose(0, 1), x.unsqueeze(0), x.squeeze(),
             x.reshape(3, 2), x.permute(1, 0), x.expand(4, 2, 3), x.split(1)[1], x.T]
    for v in views:
        assert v._base is x and v._version_counter is x._version_counter
    x.add_(1)
    assert all(v._version == 1 for v in views)
    x[1] = 5.0
    assert views[0]._version == 2 and views[-1].tolist() == [[1.0, 5.0]] * 3
    views[0].mul_(3)  # a write through a view is visible in the base
    assert x[0].tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("views", [lambda t: t.split(2), lambda t: t.chunk(2),
                                   lambda t: t.unbind(0)])
def test_inplace_on_an_output_of_a_multi_view_op(views):
    """torch refuses this; gradtool allows it (README) and its gradient is right."""
    def fn(x):
        base = x * 1.5
        first, *rest = views(base)
        first.mul_(x[0])
        return sum(r.sum() for r in rest) + first.sum() + base.sum()
    check_grads(fn, [f64(4)], order=2)


def test_inplace_through_a_view_of_a_non_leaf_rewrites_the_base_history():
    def through_view(x):
        base = x * 2
        base[1:].mul_(x[:2])  # CopySlices: the view's region goes through MulBackward0
        return base
    x = f64(3)
    out = through_view(x)
    assert out.grad_fn.name() == "CopySlices"
    check_grads(through_view, [x], order=2)


def test_setitem_builds_gradients_like_torch():
    w = f64(2)

    def fill(w):
        buf = gt.zeros(4, dtype=gt.float64)
        buf[1] = w[0] * 3
        buf[2:] = w.exp()
        return buf
    out = fill(w)
    assert out.grad_fn.name() == "CopySlices"
    check_grads(fill, [w], order=2)

    def put(w):
        buf = w * 1
        buf[gt.tensor([0])] = w[1:] * 5  # advanced index: index_put_
        return buf
    assert put(w).grad_fn.name() == "IndexPutBackward0"
    check_grads(put, [w], order=2)


def test_views_regenerate_history_after_base_is_modified():
    x = f64(3)
    base = x * 1
    v = base[0]
    base.mul_(10)  # v was made before: its history now comes from the new base
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.backward()
    assert x.grad.tolist() == [10.0, 0.0, 0.0]


def test_inference_tensors():
    with gt.inference_mode():
        t = gt.ones(3)
        assert t.is_inference() and gt.is_inference_mode_enabled() and not gt.is_grad_enabled()
    assert not gt.ones(3).is_inference()
    w = gt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward. To "
                                           "work around you can make a clone"):
        (t * w).sum()
    (t + w).sum().backward()  # nothing saved: allowed, as in torch
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor "
                                           "outside InferenceMode is not allowed."):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        t.add_(1)
    c = t.clone()
    assert not c.is_inference()
    c.add_(1)
    with gt.inference_mode():
        t.add_(1)  # inside the mode it is fine
        with gt.inference_mode(False):
            assert gt.is_grad_enabled() and not gt.is_inference_mode_enabled()


def test_inference_mode_as_decorator():
    @gt.inference_mode()
    def f(x):
        return x * 2
    out = f(gt.ones(2, requires_grad=True))
    assert not out.requires_grad and out.is_inference()


def test_transpose_in_place_of_a_second_output_takes_the_gradient_as_its_new_nodes_output_0():
    """var_mean(x)[1].transpose_() keeps no trace of being output 1 (found by the fuzz, seed
    151: the gradient was routed to a slot TransposeBackward1 does not have)."""
    x0 = np.random.default_rng(0).standard_normal((1, 4, 3))
    grads = []
    for in_place in (True, False):
        x = gt.tensor(x0, requires_grad=True)
        t = gt.var_mean(x, -2)[1]
        t = t.transpose_(-2, 1) if in_place else t.transpose(-2, 1)
        g, = gt.autograd.grad((t * t).sum(), x, create_graph=True)
        grads.append(g.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], np.broadcast_to(2 * x0.mean(1, keepdims=True) / 4,
                                                         x0.shape))


# ---------------- writes into overlapping memory (found by differential fuzzing) ----------------
def test_write_into_an_expand_of_the_same_shape_is_allowed():
    x = gt.zeros(3)
    x.expand(3).add_(1)
    x.expand(1, 3).mul_(2)
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_write_into_one_element_or_row_of_an_expand_is_allowed():
    x = gt.zeros(1, 3)
    y = x.expand(4, 3)
    y[0, 1].add_(1)
    y[2].add_(1)
    assert x.tolist() == [[1.0, 2.0, 1.0]]


def test_write_into_overlapping_elements_of_an_expand_is_refused():
    y = gt.zeros(1, 3).expand(4, 3)
    for write in (lambda: y.add_(1), lambda: y[:, 0].exp_(), lambda: y.copy_(gt.ones(4, 3))):
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            write()


def test_fill_zero_and_masked_fill_may_write_into_an_expand():
    x = gt.arange(3.0).view(3, 1)
    x.expand(3, 4).masked_fill_(gt.tensor([[True, False, False, False]] * 3), 9.0)
    assert x.flatten().tolist() == [9.0, 9.0, 9.0]
    x.expand(3, 4).zero_()
    assert x.flatten().tolist() == [0.0, 0.0, 0.0]


def test_write_from_a_partly_overlapping_input_is_refused_a_full_overlap_is_not():
    x = gt.arange(6.0)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written"):
        x[1:].add_(x[:-1])
    x.add_(x)
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    with pytest.raises(RuntimeError, match="some elements of the input tensor"):
        x[[0, 1]] = x[2:4]  # index_put_: no overlap at all


def test_mul_in_place_by_itself_then_backward_raises_the_version_error():
    m = gt.randn(3, requires_grad=True) * 1.0
    m.mul_(m)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        m.sum().backward()


def test_pow_in_place_keeps_the_original_for_backward():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    m = x * 1.0
    m.pow_(2)
    m.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_backward_through_a_write_into_an_expanded_view_raises():
    x = gt.ones(1, 3, requires_grad=True)
    y = (x * 1.0).expand(2, 3)
    y.masked_fill_(gt.tensor([[True, False, False]] * 2), 0.0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to"):
        y.sum().backward()


def test_index_add_from_its_own_memory_is_refused_as_torch():
    x = gt.ones(2, 3)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the "
                                           "written-to tensor refer to a single memory"):
        x.index_add_(0, gt.tensor([1, 0]), x)
    x.index_add_(1, gt.tensor([0]), x[:, 2:])  # a column of itself, not the one written
    assert x.tolist() == [[2.0, 1.0, 1.0], [2.0, 1.0, 1.0]]


# ---------------- an in-place op cannot take a broadcast shape ----------------
def test_masked_fill_takes_the_broadcast_shape_out_of_place_and_refuses_it_in_place():
    # torch: out of place the result has the broadcast shape and self's gradient is summed
    # back to self's; in place the tensor cannot grow
    mask = np.array([[[True, False, False], [False, True, False]],
                     [[False, False, True], [True, True, False]]])
    x = gt.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.masked_fill(gt.tensor(mask), 7.0)
    assert tuple(y.shape) == (2, 2, 3) and type(y.grad_fn).__name__ == "MaskedFillBackward0"
    expected = np.where(mask, 7.0, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (~mask).sum(axis=0))
    with pytest.raises(RuntimeError, match=r"output with shape \[2, 3\] doesn't match the "
                                           r"broadcast shape \[2, 2, 3\]"):
        x.detach().clone().masked_fill_(gt.tensor(mask), 1.0)


@pytest.mark.parametrize("shape, wrap", [((3, 4), False), ((4, 3), False), ((7, 3), True),
                                         ((7, 3), False), ((3, 3, 3), False), ((2, 5), True)])
def test_fill_diagonal_writes_numpys_diagonal_and_cuts_its_gradient(shape, wrap):
    x = f64(*shape)
    y = x * 1
    y.fill_diagonal_(7.0, wrap=wrap)
    want = x.detach().numpy().copy()
    np.fill_diagonal(want, 7.0, wrap=wrap)  # (numpy's wrap is torch's)
    assert np.array_equal(y.detach().numpy(), want)
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), (want != 7.0).astype(float))


def test_fill_diagonal_refuses_a_vector_and_unequal_dims():
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        gt.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        gt.zeros(2, 3, 2).fill_diagonal_(1)


def test_logical_in_place_ops_write_zeros_and_ones_in_the_tensors_dtype():
    x = gt.tensor([0.0, 1.5, -2.0])
    assert x.logical_and_(gt.tensor([1, 0, 1])).tolist() == [0.0, 0.0, 1.0]
    assert x.logical_or_(gt.tensor([True, False, False])).tolist() == [1.0, 0.0, 1.0]
    assert x.logical_xor_(gt.tensor([1.0, 1.0, 0.0])).tolist() == [0.0, 1.0, 1.0]
    assert x.logical_not_().tolist() == [1.0, 0.0, 0.0] and x.dtype == gt.float32
    assert x._version == 4


def test_xlogy_in_place_has_xlogys_gradient():
    x, y = f64(3, 4), gt.tensor(np.random.default_rng(1).uniform(0.5, 2, (3, 4)),
                                requires_grad=True)
    out = (x * 1).xlogy_(y)
    assert out.grad_fn.name() == "XlogyBackward0"
    out.backward(gt.ones(3, 4, dtype=gt.float64))
    np.testing.assert_allclose(x.grad.numpy(), np.log(y.detach().numpy()), rtol=1e-15)
    np.testing.assert_allclose(y.grad.numpy(), (x / y).detach().numpy(), rtol=1e-15)
    check_grads(lambda a, b: (a * 1).xlogy_(b), (x.detach(), y.detach()))


@pytest.mark.parametrize("write, what", [
    (lambda y: y.floor_divide_(2.0), "aten::floor_divide_"),
    (lambda y: y.set_(gt.ones(2, dtype=gt.float64)), "set_"),
    (lambda y: y.set_(), "set_"),
])
def test_in_place_ops_without_a_derivative_record_a_node_that_refuses(write, what):
    y = f64(3) * 1
    write(y)
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match=f"^derivative for {what} is not implemented$"):
        y.sum().backward()


def test_floor_divide_in_place_of_integers():
    x = gt.tensor([5, -7])
    x //= 2
    assert x.tolist() == [2, -4] and x.dtype == gt.int64 and not x.requires_grad


@pytest.mark.parametrize("divide", [lambda x: x.floor_divide(2.0), lambda x: x // x.detach(),
                                    lambda x: 5.0 // x, lambda x: gt.floor_divide(x, 2)])
def test_floor_divide_records_a_node_that_refuses(divide):
    y = divide(f64(3).abs() + 1)
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::floor_divide is not "
                                           "implemented$"):
        y.sum().backward()
    assert not gt.tensor([5, 7]).floor_divide(2).requires_grad
