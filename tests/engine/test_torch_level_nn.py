"""torch's top-level versions of nn.functional where they go beyond F's: the random ops' draws
and the warnings F gives that aten does not. Their values, gradients and errors are compared with
torch's in tests/parity/test_torch_level_nn.py."""
import numpy as np
import pytest

import gradtool as gt


@pytest.mark.parametrize("name", ["dropout", "feature_dropout"])
def test_dropout_scales_what_it_keeps_and_feature_dropout_drops_whole_channels(name):
    gt.manual_seed(0)
    x = gt.ones(200, 50, 3, dtype=gt.float64)
    out = getattr(gt, name)(x, 0.3, True).numpy()
    assert set(np.unique(out)) <= {0.0, 1 / 0.7}
    assert abs((out == 0).mean() - 0.3) < 0.03  # 30000 (or 10000) draws: 0.3 within 6 sigma
    if name == "feature_dropout":  # one draw per (sample, channel)
        assert (out == out[:, :, :1]).all()
    in_place = gt.ones(200, 50, dtype=gt.float64)
    assert getattr(gt, name + "_")(in_place, 0.3, True) is in_place
    assert (in_place.numpy() == 0).any()


def test_kl_div_at_torch_level_does_not_warn_about_mean(recwarn):
    gt.kl_div(gt.zeros(2, 3), gt.ones(2, 3) / 3, 1)
    assert not [w for w in recwarn if "batchmean" in str(w.message)]
