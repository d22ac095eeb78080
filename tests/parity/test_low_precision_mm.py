"""nn.functional's float8 and grouped products against torch's CPU build: grouped_mm's values
and gradients, the errors and enums of tests/engine/test_low_precision_mm.py. Tests marked
parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine.test_low_precision_mm import grouped_products, scaled_products

pytestmark = pytest.mark.parity


def test_scaled_products_are_torchs():
    torch = pytest.importorskip("torch")
    assert scaled_products(gt) == scaled_products(torch)


def test_grouped_products_are_torchs():
    """Values, node names, dtypes and gradients in the four layouts (float32: to the rounding
    of two kernels' sums), and every check's message."""
    torch = pytest.importorskip("torch")
    mine, theirs = grouped_products(gt), grouped_products(torch)
    for layout, (a, b) in enumerate(zip(mine[:4], theirs[:4])):
        values, node, dtype, grad_a, grad_b = a
        assert (node, dtype.replace("gradtool", "torch")) == (b[1], b[2]), layout
        for k in (0, 3, 4):
            np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-5,
                                       err_msg=f"layout {layout}, item {k}")
    assert mine[4:] == theirs[4:]
