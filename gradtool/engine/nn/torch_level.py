"""torch's top-level versions of nn.functional (torch.conv2d, torch.batch_norm, torch.lstm_cell,
...): the same ops as F's, but with the arguments of torch's own operators (aten's schema), which
often differ from F's in order and form: torch.batch_norm(input, weight, bias, running_mean,
running_var, training, momentum, eps, cudnn_enabled), torch.dropout(input, p, train), a
reduction given as an integer. Each delegates to F, so it records the nodes F records."""
import warnings

from ..errors import NotInEngineError
from . import functional as F
from .rnn import _CELLS

# The same positional order in torch and in F: the functions themselves.
from .functional import (adaptive_avg_pool1d, avg_pool1d, conv1d, conv2d, conv3d,  # noqa: F401
                         conv_transpose1d, conv_transpose2d, conv_transpose3d, pixel_shuffle,
                         pixel_unshuffle, prelu, rms_norm)

__all__ = ["adaptive_avg_pool1d", "avg_pool1d", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "pixel_shuffle", "pixel_unshuffle", "prelu",
           "rms_norm", "convolution", "max_pool1d", "max_pool2d", "max_pool1d_with_indices",
           "adaptive_max_pool1d", "batch_norm", "instance_norm", "layer_norm", "group_norm",
           "dropout", "dropout_", "feature_dropout", "feature_dropout_", "selu", "selu_",
           "binary_cross_entropy_with_logits", "kl_div", "lstm_cell", "gru_cell",
           "rnn_tanh_cell", "rnn_relu_cell"]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # aten's integer reduction
# aten's default reduction is Mean, but torch's Python binding cannot read that default and
# passes 0: torch.kl_div(x, t) and torch.binary_cross_entropy_with_logits(x, t) reduce nothing.
_BINDING_DEFAULT_REDUCTION = 0


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The convolution of weight's spatial rank (1, 2 or 3), transposed when asked."""
    spatial = weight.dim() - 2
    if spatial < 1:
        raise RuntimeError("weight should have at least three dimensions")
    if spatial > 3:
        raise NotInEngineError(f"torch.convolution of {spatial} spatial dims")
    if transposed:
        op = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
        return op(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (F.conv1d, F.conv2d, F.conv3d)[spatial - 1](input, weight, bias, stride, padding,
                                                        dilation, groups)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """(values, indices) always, as aten's."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d(input, output_size):
    """(values, indices) always, as aten's."""
    return F.adaptive_max_pool1d(input, output_size, True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def _check_probability(p):
    """aten checks p first, whether training or not, and raises RuntimeError (F: ValueError)."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def dropout(input, p, train):
    _check_probability(p)
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    _check_probability(p)
    return F.dropout(input, p, train, inplace=True)


def _feature_dropout(input, p, train, inplace):
    """Whole features (dim 1 of an (N, C, *) input) zeroed together, as dropout2d does."""
    _check_probability(p)
    if not train or p == 0 or input.numel() == 0:  # before the rank's check, as aten's
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    with warnings.catch_warnings():  # dropout2d's warnings about the rank are its own, not aten's
        warnings.simplefilter("ignore")
        return F.dropout2d(input, p, train, inplace)


def feature_dropout(input, p, train):
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input, p, train):
    return _feature_dropout(input, p, train, True)


def selu(input):
    return F.selu(input)


def selu_(input):
    return F.selu(input, inplace=True)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=_BINDING_DEFAULT_REDUCTION):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_REDUCTIONS[
        reduction], pos_weight=pos_weight)


def kl_div(input, target, reduction=_BINDING_DEFAULT_REDUCTION, *, log_target=False):
    """F's kl_div, without its warning about 'mean' (aten's mean is meant: every element)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.kl_div(input, target, reduction=_REDUCTIONS[reduction], log_target=log_target)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: hx is (h, c); returns (h', c')."""
    return _CELLS["LSTM"](input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _CELLS["GRU"](input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _CELLS["RNN_TANH"](input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _CELLS["RNN_RELU"](input, hx, w_ih, w_hh, b_ih, b_hh)


# the sequence ops: torch.ctc_loss (its binding passes reduction 0 by default, as kl_div's),
# conv_tbc and the channel shuffles (F's own)
from .functional import channel_shuffle, conv_tbc, native_channel_shuffle  # noqa: E402,F401
__all__ += ["ctc_loss", "conv_tbc", "channel_shuffle", "native_channel_shuffle"]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
             reduction=_BINDING_DEFAULT_REDUCTION, zero_infinity=False):
    return F._ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                       zero_infinity)
