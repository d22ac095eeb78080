"""The memory layout of results against torch: whether each result (elementwise ops on
permuted inputs, reductions, softmax, advanced indexing) is contiguous, and so whether
.view(-1) succeeds or fails as in torch. Tests marked parity, skipped without torch; the plain
tests are in tests/engine/test_torch_rules.py."""
import numpy as np
import pytest

import gradtool as gt

try:
    import torch
except ImportError:  # every test here skips
    torch = None

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(torch is None, reason="torch is not installed")]


LAYOUTS = ["x.permute(2, 0, 1).exp()", "x.permute(2, 0, 1) + y", "y + x.permute(2, 0, 1)",
           "x.permute(2, 0, 1) * x.transpose(0, 2).transpose(1, 2)",
           "x.permute(2, 0, 1) / y[:, :1, :1]", "lib.maximum(x.permute(2, 0, 1), y)",
           "x.permute(2, 0, 1).sum(1)", "x.permute(2, 0, 1).sum(1, keepdim=True)",
           "x.permute(2, 0, 1).amax(2)", "x.permute(2, 0, 1).var(2)",
           "x.permute(2, 0, 1).softmax(1)", "x.permute(2, 0, 1).clone()",
           "x.permute(2, 0, 1).contiguous()", "x.permute(2, 0, 1).relu()",
           "x.permute(2, 0, 1).masked_fill(x.permute(2, 0, 1) > 0, 0.0)",
           "x[:, ::2].exp()", "x[:, :1].expand(2, 3, 4) + x", "1 - x.permute(2, 0, 1)",
           "x.permute(2, 0, 1).sub(y, alpha=2)", "x.transpose(1, 2).sigmoid()",
           "x.permute(2, 0, 1)[:, [0, 1]]", "x[:, [[0], [1]]]", "x[:, 0, [[0], [1]]]",
           "x.transpose(0, 1)[:, [0, 1], [1, 2]]", "x.permute(1, 2, 0)[[[0], [1]], :, [0, 1]]",
           "x.transpose(0, 2)[:, x[:, :, 0].t() > 5]"]


def view_outcome(lib, code):
    x = lib.tensor(np.arange(24.0).reshape(2, 3, 4))
    y = lib.tensor(np.arange(24.0).reshape(4, 2, 3))
    result = eval(code, {"lib": lib, "x": x, "y": y})
    try:
        flat = result.view(-1).tolist()
    except RuntimeError as e:
        flat = str(e)[:40]
    return result.is_contiguous(), flat


@pytest.mark.parametrize("code", LAYOUTS)
def test_view_of_a_result_succeeds_or_fails_as_in_torch(code):
    assert view_outcome(gt, code) == view_outcome(torch, code)


@pytest.mark.parametrize("code", LAYOUTS)
def test_a_results_strides_are_torchs(code):
    def strides(lib):
        x = lib.tensor(np.arange(24.0).reshape(2, 3, 4))
        y = lib.tensor(np.arange(24.0).reshape(4, 2, 3))
        return eval(code, {"lib": lib, "x": x, "y": y}).stride()
    assert strides(gt) == strides(torch)


# strides, memory formats, layouts, resize_/set_, H/mH: the programs of
# tests/engine/test_memory_layout.py on both libraries
from tests.engine import test_memory_layout as programs  # noqa: E402


@pytest.mark.parametrize("name", programs.STRIDES)
def test_strides_and_memory_formats_are_torchs(name):
    assert programs.STRIDES[name](gt) == programs.STRIDES[name](torch)


@pytest.mark.parametrize("name", programs.FLAGS)
def test_layout_and_format_flags_are_torchs(name):
    assert programs.FLAGS[name](gt) == programs.FLAGS[name](torch)


@pytest.mark.parametrize("name", programs.VALUES)
def test_resize_set_and_conjugate_transposes_give_torchs_values(name):
    ours, theirs = programs.VALUES[name](gt), programs.VALUES[name](torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    if not theirs.is_complex():  # (torch's conj is a lazy view: its strides are the input's)
        assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(), theirs.resolve_conj().numpy())


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)


def test_resize_and_H_nodes_are_torchs():
    for lib in (gt, torch):
        x = lib.randn(2, 3, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            names = [x.resize(3, 2).grad_fn.name(), x.H.grad_fn.name(), x.mH.grad_fn.name()]
        assert names == ["ResizeBackward", "TransposeBackward0", "TransposeBackward0"]


@pytest.mark.parametrize("name", programs.SHARING)
def test_shared_memory_is_torchs(name):
    assert programs.SHARING[name](gt) == programs.SHARING[name](torch)


@pytest.mark.parametrize("name", programs.DEVICE_MOVES)
def test_moves_to_accelerators_are_refused_as_torch(name):
    errors = []
    for lib in (torch, gt):
        with pytest.raises(Exception) as error:
            programs.DEVICE_MOVES[name](lib)
        errors.append((type(error.value).__name__, str(error.value)))
    assert errors[0] == errors[1]
