"""nn.functional's float8 and grouped products against torch's CPU build: the errors and
enums of tests/engine/test_low_precision_mm.py. Tests marked parity, skipped without torch."""
import pytest

import gradtool as gt
from tests.engine.test_low_precision_mm import scaled_products

pytestmark = pytest.mark.parity


def test_scaled_products_are_torchs():
    torch = pytest.importorskip("torch")
    assert scaled_products(gt) == scaled_products(torch)
