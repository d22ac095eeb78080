"""How tensors lie in memory, as torch says it: strides of contiguous tensors and of views,
memory formats (contiguous(memory_format=), to(memory_format=), clone(memory_format=)), the
layout, resize_/resize_as_/set_ and the deprecated resize, the conjugate transposes H and mH,
pinned memory (torch's CPU build has none), shared memory (share_memory_, is_shared,
Module.share_memory) and the moves to accelerators torch's CPU build refuses (ipu, xpu,
mtia). The programs below run on either library: the
parity tests (tests/parity/test_memory_layout.py) compare them with torch."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradcheck_util import check_grads

# programs of `lib` (gradtool or torch) whose results both libraries must agree on
STRIDES = {
    # a dim of size 1 keeps the stride it had before a transpose or a slice (numpy's flags
    # call such a tensor contiguous whatever that stride is, as torch's is_contiguous does)
    "size_one_transposed": lambda lib: lib.arange(2.0).reshape(1, 2).t().stride(),
    "size_one_sliced": lambda lib: lib.arange(6.0).reshape(2, 3)[:, 1:2].stride(),
    "size_one_sliced_transposed": lambda lib: lib.arange(6.0).reshape(2, 3)[1:2].t().stride(),
    "permuted_then_sliced": lambda lib: lib.arange(6.0).reshape(2, 3).permute(1, 0)[:, :1]
    .stride(),
    "unsqueezed_transposed": lambda lib: lib.arange(3.0).unsqueeze(0).t().stride(),
    "narrowed_transposed": lambda lib: lib.arange(6.0).reshape(3, 2).narrow(1, 1, 1).t()
    .stride(),
    "unsqueezed_before_a_transpose": lambda lib: lib.arange(6.0).reshape(2, 3).t()
    .unsqueeze(0).stride(),
    "unsqueezed_slice": lambda lib: lib.arange(6.0).reshape(2, 3)[:1].unsqueeze(1).stride(),
    "size_one_permuted": lambda lib: lib.arange(6.0).reshape(2, 1, 3).permute(1, 2, 0)
    .stride(),
    "transposed_slice_of_one_row": lambda lib: lib.arange(6.0).reshape(2, 3).t()[:1].stride(),
    "contiguous_keeps_a_size_one_stride": lambda lib: lib.arange(6.0).reshape(2, 3).t()[:, :1]
    .contiguous().stride(),
    "viewed_column_transposed": lambda lib: lib.arange(6.0).view(6, 1).t().stride(),
    "squeezed_then_unsqueezed": lambda lib: lib.arange(6.0).reshape(2, 3)[:, :1].squeeze(1)
    .unsqueeze(0).stride(),
    "contiguous": lambda lib: lib.zeros(2, 3, 4).stride(),
    "empty_dim": lambda lib: lib.zeros(2, 0, 3).stride(),
    "size_one_dims": lambda lib: lib.zeros(3, 1, 1).stride(),
    "transpose": lambda lib: lib.zeros(2, 3).t().stride(),
    "permute": lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1).stride(),
    "expand": lambda lib: lib.zeros(2, 1).expand(2, 5).stride(),
    "slice_step": lambda lib: lib.zeros(4, 6)[:, ::2].stride(),
    "one_dim": lambda lib: lib.zeros(2, 3).stride(1),
    "negative_dim": lambda lib: lib.zeros(2, 3).stride(-2),
    "scalar": lambda lib: lib.tensor(1.0).stride(),
    "channels_last": lambda lib: lib.zeros(2, 3, 4, 5).contiguous(
        memory_format=lib.channels_last).stride(),
    "channels_last_3d": lambda lib: lib.zeros(2, 3, 4, 5, 6).contiguous(
        memory_format=lib.channels_last_3d).stride(),
    "to_channels_last": lambda lib: lib.zeros(2, 3, 4, 5).to(
        memory_format=lib.channels_last).stride(),
    "clone_keeps_channels_last": lambda lib: lib.zeros(2, 3, 4, 5).to(
        memory_format=lib.channels_last).clone().stride(),
    "clone_to_contiguous": lambda lib: lib.zeros(2, 3, 4, 5).to(
        memory_format=lib.channels_last).clone(memory_format=lib.contiguous_format).stride(),
    "elementwise_keeps_channels_last": lambda lib: (lib.zeros(2, 3, 4, 5).to(
        memory_format=lib.channels_last) + 1).stride(),
    "back_to_contiguous": lambda lib: lib.zeros(2, 3, 4, 5).to(
        memory_format=lib.channels_last).contiguous().stride(),
}
FLAGS = {
    "is_contiguous_channels_last": lambda lib: [
        lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last).is_contiguous(),
        lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last).is_contiguous(
            memory_format=lib.channels_last),
        lib.zeros(2, 3, 4, 5).is_contiguous(memory_format=lib.channels_last)],
    "layout": lambda lib: [repr(lib.zeros(2).layout).split(".")[-1],
                           lib.zeros(2).layout is lib.strided, lib.strided == lib.sparse_coo],
    "memory_format_names": lambda lib: [repr(f).split(".")[-1] for f in (
        lib.preserve_format, lib.contiguous_format, lib.channels_last, lib.channels_last_3d)],
    "is_pinned_is_xpu": lambda lib: [lib.zeros(2).is_pinned(), lib.zeros(2).is_xpu],
    "to_contiguous_returns_self": lambda lib: [
        (lambda x: x.to(memory_format=lib.contiguous_format) is x)(lib.zeros(2, 3)),
        (lambda x: x.contiguous(memory_format=lib.channels_last) is x)(
            lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last))],
}
VALUES = {  # (torch's resize_ leaves new elements uninitialised: only the kept ones compare)
    "resize_smaller": lambda lib: lib.arange(6.0).resize_(2, 2),
    "resize_larger_kept": lambda lib: lib.arange(6.0).resize_(2, 4).reshape(-1)[:6],
    "resize_as_": lambda lib: lib.arange(6.0).resize_as_(lib.zeros(3, 2)),
    "set_": lambda lib: (lambda a, b: a.set_(b) + 0 * b)(lib.zeros(3), lib.arange(4.0)),
    "set_empty": lambda lib: lib.zeros(2).set_(),
    "set_size_stride": lambda lib: lib.zeros(1).set_(lib.arange(6.0), 1, (2, 2), (2, 1)),
    "H": lambda lib: lib.arange(6.0).view(2, 3).H,
    "H_complex": lambda lib: lib.tensor([[1 + 2j, 3j], [1, 2 - 1j]]).H,
    "mH": lambda lib: lib.arange(12.0).view(2, 2, 3).mH,
    "mH_complex": lambda lib: lib.tensor([[[1 + 2j, 3j], [1, 2 - 1j]]]).mH,
    "channels_last_values": lambda lib: lib.arange(24.0).view(1, 2, 3, 4).contiguous(
        memory_format=lib.channels_last).sum((0, 2)),
}
ERRORS = {
    "resize_requires_grad": lambda lib: lib.zeros(2, requires_grad=True).resize_(3),
    "set_leaf": lambda lib: lib.zeros(2, requires_grad=True).set_(lib.zeros(2)),
    "resize_other_count": lambda lib: lib.zeros(2, 3).resize(4, 2),
    "channels_last_rank": lambda lib: lib.zeros(2, 3, 4).contiguous(
        memory_format=lib.channels_last),
    "channels_last_3d_rank": lambda lib: lib.zeros(2, 3, 4, 5).to(
        memory_format=lib.channels_last_3d),
    "contiguous_preserve": lambda lib: lib.zeros(2, 3).t().contiguous(
        memory_format=lib.preserve_format),
    "H_of_3d": lambda lib: lib.zeros(2, 3, 4).H,
    "H_of_1d": lambda lib: lib.zeros(3).H,
    "mH_of_1d": lambda lib: lib.zeros(3).mH,
    "pin_memory": lambda lib: lib.zeros(2).pin_memory(),
    "stride_dim_out_of_range": lambda lib: lib.zeros(2, 3).stride(2),
}


def test_a_size_one_dim_keeps_the_stride_torchs_view_rules_give_it():
    # (the strides a transpose, a slice or an unsqueeze gives, by torch's view formulas:
    # unsqueeze(d) takes size[d] * stride[d] of the dim it lands before)
    assert STRIDES["size_one_transposed"](gt) == (1, 2)
    assert STRIDES["size_one_sliced_transposed"](gt) == (1, 3)
    assert STRIDES["unsqueezed_transposed"](gt) == (1, 3)
    assert STRIDES["unsqueezed_before_a_transpose"](gt) == (3, 1, 3)
    assert STRIDES["contiguous_keeps_a_size_one_stride"](gt) == (1, 3)
    assert STRIDES["squeezed_then_unsqueezed"](gt) == (6, 3)
    assert gt.arange(2.0).reshape(1, 2).t().is_contiguous()


def test_strides_follow_the_layout():
    assert STRIDES["contiguous"](gt) == (12, 4, 1)
    assert STRIDES["empty_dim"](gt) == (3, 3, 1)
    assert STRIDES["transpose"](gt) == (1, 3)
    assert STRIDES["expand"](gt) == (1, 0)
    assert STRIDES["slice_step"](gt) == (6, 2)
    assert STRIDES["channels_last"](gt) == (60, 1, 15, 3)
    assert STRIDES["back_to_contiguous"](gt) == (60, 20, 5, 1)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 4), min_size=0, max_size=4))
def test_a_contiguous_tensors_strides_step_over_the_later_dims(shape):
    strides = gt.zeros(*shape).stride() if shape else gt.tensor(0.0).stride()
    expected = tuple(int(np.prod([max(n, 1) for n in shape[i + 1:]])) for i in range(len(shape)))
    assert strides == expected


def test_memory_formats_keep_values_and_gradients():
    x = gt.randn(2, 3, 4, 5, requires_grad=True)
    y = x.contiguous(memory_format=gt.channels_last)
    assert y.grad_fn.name() == "CloneBackward0" and not y.is_contiguous()
    assert y.is_contiguous(memory_format=gt.channels_last)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    z = x.to(memory_format=gt.channels_last)
    assert z.grad_fn.name() == "ToCopyBackward0"
    (y * z).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


def test_a_module_to_channels_last_relays_its_4d_parameters_only():
    conv = gt.nn.Conv2d(3, 4, 3)
    conv.to(memory_format=gt.channels_last)
    assert conv.weight.is_contiguous(memory_format=gt.channels_last)
    assert conv.bias.is_contiguous() and isinstance(conv.weight, gt.nn.Parameter)


def test_layout_and_format_flags_are_torchs():
    assert FLAGS["is_contiguous_channels_last"](gt) == [False, True, False]
    assert FLAGS["layout"](gt) == ["strided", True, False]
    assert FLAGS["is_pinned_is_xpu"](gt) == [False, False]
    assert FLAGS["to_contiguous_returns_self"](gt) == [True, True]


def test_resize_keeps_the_elements_in_order_and_set_shares_memory():
    np.testing.assert_array_equal(VALUES["resize_smaller"](gt).numpy(), [[0, 1], [2, 3]])
    np.testing.assert_array_equal(VALUES["resize_larger_kept"](gt).numpy(), np.arange(6.0))
    a, b = gt.zeros(3), gt.arange(4.0)
    a.set_(b)
    b[0] = 7.0
    assert a.shape == (4,) and a[0].item() == 7.0
    assert gt.zeros(2, 3).resize_(0).shape == (0,)


def _leaf(shape):
    return gt.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)


def test_resize_is_a_deprecated_reshape_with_torchs_node():
    x = gt.randn(2, 3, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(3, 2)
    assert y.grad_fn.name() == "ResizeBackward" and y.shape == (3, 2)
    with pytest.warns(UserWarning, match="resize"):
        check_grads(lambda x: x.resize(3, 2) ** 2, [_leaf((2, 3))], order=2)


def test_H_and_mH_are_conjugate_transposes_with_gradients():
    check_grads(lambda x: x.H ** 2, [_leaf((2, 3))], order=2)
    check_grads(lambda x: x.mH ** 2, [_leaf((2, 2, 3))], order=2)
    z = gt.tensor([[1 + 2j, 3j]])
    np.testing.assert_array_equal(z.H.numpy(), [[1 - 2j], [-3j]])


@pytest.mark.parametrize("name", ERRORS)
def test_refusals_raise_torchs_exceptions(name):
    with pytest.raises((RuntimeError, IndexError, TypeError)):
        ERRORS[name](gt)


# ---- shared memory, and the accelerators torch's CPU build was not built for
def _shared_after_a_view(lib):
    t = lib.arange(6.0)
    later = t.share_memory_()[2:]
    return [t.is_shared(), later.is_shared(), t.share_memory_().is_shared()]


def _module_shared(lib):
    module = lib.nn.Linear(2, 2)
    module.register_buffer("steps", lib.zeros(3))
    module.weight.grad = lib.ones(2, 2)
    shared = module.share_memory()
    return [shared is module] + [t.is_shared() for t in (module.weight, module.bias,
                                                         module.weight.grad, module.steps)]


# (a view taken before share_memory_ keeps its memory on the engine: no torch program here)
SHARING = {
    "new_tensor": lambda lib: [lib.ones(2).is_shared(), lib.ones(2).share_memory_().tolist()],
    "returns_itself": lambda lib: (lambda t: t.share_memory_() is t)(lib.ones(2)),
    "whole_storage_and_views_after": _shared_after_a_view,
    "transposed_keeps_strides": lambda lib: (lambda t: (t.share_memory_().stride(),
                                                        t.is_shared(), t.tolist()))(
        lib.arange(6.0).reshape(2, 3).t()),
    "requires_grad_kept": lambda lib: lib.ones(2, requires_grad=True).share_memory_(
        ).requires_grad,
    "empty": lambda lib: lib.empty(0).share_memory_().is_shared(),
    "module": _module_shared,
    "module_without_tensors_moves": lambda lib: repr(lib.nn.ReLU().xpu()),
}
DEVICE_MOVES = {f"{kind}_{name}": (lambda lib, kind=kind, make=make, arg=arg: getattr(
    make(lib), kind)(*arg))
    for kind in ("ipu", "xpu", "mtia")
    for name, make, arg in (("tensor", lambda lib: lib.ones(2), ()),
                            ("tensor_index", lambda lib: lib.ones(2), (1,)),
                            ("tensor_cpu", lambda lib: lib.ones(2), ("cpu",)),
                            ("tensor_device", lambda lib, kind=kind: lib.ones(2),
                             (kind,)),
                            ("module", lambda lib: lib.nn.Linear(2, 2), ()))}


def test_share_memory_moves_the_storage_into_memory_a_forked_process_shares():
    import os
    assert SHARING["whole_storage_and_views_after"](gt) == [True, True, True]
    assert SHARING["module"](gt) == [True] * 5
    shared, private = gt.zeros(3), gt.zeros(3)
    before = shared[1:]  # (the engine cannot re-point a view taken before; torch's shares)
    shared.share_memory_()
    assert not before.is_shared() and shared.is_shared() and not private.is_shared()
    child = os.fork()
    if child == 0:  # the child writes into both, and exits
        shared[1], private[1] = 7.0, 7.0
        os._exit(0)
    os.waitpid(child, 0)
    assert shared.tolist() == [0.0, 7.0, 0.0] and private.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", DEVICE_MOVES)
def test_moves_to_accelerators_torchs_cpu_build_lacks_are_refused(name):
    kind, _, form = name.partition("_")
    expected = {"tensor_index": "Cannot access accelerator device when none is available.",
                "tensor_cpu": f"Invalid device, must be {'MTIA' if kind == 'mtia' else kind} "
                              f"device"}.get(form, {"ipu": "PyTorch is not linked with support "
                                                           "for ipu devices",
                                                    "xpu": "Torch not compiled with XPU enabled",
                                                    "mtia": "Torch not compiled with MTIA "
                                                            "enabled"}[kind])
    with pytest.raises((RuntimeError, AssertionError), match=expected):
        DEVICE_MOVES[name](gt)
