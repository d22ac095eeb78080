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
