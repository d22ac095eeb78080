"""RNN, GRU, LSTM and their cells, with torch's parameter names, shapes and initialisation.

Each is composed of the engine's ops in the order of torch's CPU implementation
(aten/src/ATen/native/RNN.cpp), so the recorded graph has torch's nodes: the input projection
of the whole sequence as one linear, unbind into steps, per step a linear of the hidden state
added to the step's projection, the gates (split with unsafe_chunk: UnsafeSplitBackward0), stack
of the outputs. torch's float32 LSTM on the CPU is oneDNN's kernel instead, one
mkldnn_rnn_layer op (MkldnnRnnLayerBackward0) per layer and direction: so is gradtool's
(RNNBase._onednn_layer), where torch's use_mkldnn would choose it."""
import math
import warnings

from .. import backends
from ..autograd import creation
from ..autograd.device import check as check_device
from ..autograd.dispatch import call
from ..autograd.free_functions import cat, stack, where
from ..autograd.ops import derivatives as table
from ..errors import NotInEngineError
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence, _padded

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---------------- one step of each cell: torch's formulas and order ----------------
def _simple_cell(activation):
    def cell(input, hidden, w_ih, w_hh, b_ih, b_hh, projected=False):
        gates = F.linear(hidden, w_hh, b_hh) + (input if projected else
                                                 F.linear(input, w_ih, b_ih))
        return activation(gates)
    return cell


def _lstm_cell(input, hidden, w_ih, w_hh, b_ih, b_hh, projected=False):
    hx, cx = hidden
    gates = F.linear(hx, w_hh, b_hh) + (input if projected else F.linear(input, w_ih, b_ih))
    ingate, forgetgate, cellgate, outgate = gates.unsafe_chunk(4, 1)
    ingate, forgetgate = ingate.sigmoid(), forgetgate.sigmoid()
    cellgate, outgate = cellgate.tanh(), outgate.sigmoid()
    cy = forgetgate * cx + ingate * cellgate
    return outgate * cy.tanh(), cy


def _gru_cell(input, hidden, w_ih, w_hh, b_ih, b_hh, projected=False):
    igates = (input if projected else F.linear(input, w_ih, b_ih)).unsafe_chunk(3, 1)
    hgates = F.linear(hidden, w_hh, b_hh).unsafe_chunk(3, 1)
    reset_gate = (hgates[0] + igates[0]).sigmoid()
    input_gate = (hgates[1] + igates[1]).sigmoid()
    new_gate = (igates[2] + hgates[2] * reset_gate).tanh()
    return (hidden - new_gate) * input_gate + new_gate


_CELLS = {"RNN_TANH": _simple_cell(lambda x: x.tanh()),
          "RNN_RELU": _simple_cell(lambda x: x.relu()), "LSTM": _lstm_cell, "GRU": _gru_cell}


def _runs_onednn(input):
    """torch's use_mkldnn for an LSTM: a float32 input with elements, oneDNN enabled."""
    return (input._data.dtype == "float32" and input.numel() != 0
            and backends.mkldnn.enabled)


def _run_layer(cell, inputs, hidden, weights, reverse, running=None):
    """One direction of one layer over a (T, B, in) sequence: the input projection of every
    step at once (torch's CPU path), then the steps; outputs (T, B, H) and the last hidden.
    running (a packed batch): per step, a (B, 1) mask of the sequences still running; the
    others keep their hidden state, so each ends with its own last step's (and, reversed,
    starts at its own last step)."""
    w_ih, w_hh, b_ih, b_hh = weights
    steps = F.linear(inputs, w_ih, b_ih).unbind(0)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    outputs = []
    for t in order:
        new = cell(steps[t], hidden, w_ih, w_hh, b_ih, b_hh, projected=True)
        if running is not None:
            new = (tuple(where(running[t], n, h) for n, h in zip(new, hidden))
                   if isinstance(new, tuple) else where(running[t], new, hidden))
        hidden = new
        outputs.append(hidden[0] if isinstance(hidden, tuple) else hidden)
    if reverse:
        outputs.reverse()
    return stack(outputs, 0), hidden


class RNNBase(Module):
    """The multi-layer recurrent layers: weight_ih_l{k}[_reverse] (gates * hidden_size,
    inputs), weight_hh_l{k}[_reverse] (gates * hidden_size, hidden_size) and the two biases,
    all initialised U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        check_device(device)  # the CPU, the only device
        if proj_size:
            raise NotInEngineError(f"torch.nn.{type(self).__name__}(proj_size=...)")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                          f"non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be an integer greater than zero")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, 0
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                for name, shape in shapes.items():
                    setattr(self, name + suffix, Parameter(creation.empty(shape, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        per_direction = 4 if self.bias else 2
        weights = self._flat_weights
        return [weights[i:i + per_direction] for i in range(0, len(weights), per_direction)]

    def flatten_parameters(self):
        """Nothing to do: there is no cuDNN weight buffer."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _zeros(self, input, batch):
        directions = 2 if self.bidirectional else 1
        return creation.zeros(self.num_layers * directions, batch, self.hidden_size,
                              dtype=input.dtype)

    def _check_input(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D tensor instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _check_hidden(self, hx, batch, name="hidden"):
        expected = (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {name} size {expected}, got {list(hx.shape)}")

    def _run(self, input, hidden, running=None):
        """torch's _VF.rnn/_VF.lstm: the layers in turn, both directions of a layer
        concatenated, dropout between layers in training; the last hidden state of each
        layer and direction stacked. A float32 LSTM runs as torch's on the CPU
        (aten/src/ATen/native/mkldnn/RNN.cpp): input and states made contiguous, one
        mkldnn_rnn_layer op per layer and direction, with zero biases when there are none."""
        is_lstm = self.mode == "LSTM"
        onednn = is_lstm and _runs_onednn(input) and running is None
        if onednn:
            input, hidden = input.contiguous(), tuple(h.contiguous() for h in hidden)
            layer_hidden = [(hidden[0][i], hidden[1][i]) for i in range(len(hidden[0]))]
        else:
            layer_hidden = (list(zip(hidden[0].unbind(0), hidden[1].unbind(0))) if is_lstm
                            else list(hidden.unbind(0)))
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                weights = self.all_weights[index]
                if onednn:
                    output, final = self._onednn_layer(input, layer_hidden[index], weights,
                                                       reverse=direction == 1)
                else:
                    output, final = _run_layer(_CELLS[self.mode], input, layer_hidden[index],
                                               weights if self.bias else weights + [None, None],
                                               direction == 1, running)
                outputs.append(output)
                finals.append(final)
            input = outputs[0] if directions == 1 else cat(outputs, outputs[0].dim() - 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                input = F.dropout(input, self.dropout, True)
        if is_lstm:
            return input, (stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0))
        return input, stack(finals, 0)

    def _forward_packed(self, packed, hx):
        """A PackedSequence in, a PackedSequence out (and the last hidden state of each
        sequence, in the caller's batch order): the batch padded, run with each sequence
        stopping at its length, packed again; hx is given in the caller's order too."""
        padded, lengths = _padded(packed, 0.0, packed.batch_sizes.size(0))
        self._check_input(padded)
        batch, is_lstm = padded.size(1), self.mode == "LSTM"
        if hx is None:
            zeros = self._zeros(padded, batch)
            hx = (zeros, zeros) if is_lstm else zeros
        elif packed.sorted_indices is not None:
            hx = (tuple(h.index_select(1, packed.sorted_indices) for h in hx) if is_lstm
                  else hx.index_select(1, packed.sorted_indices))
        for i, h in enumerate(hx if is_lstm else (hx,)):
            self._check_hidden(h, batch, f"hidden[{i}]" if is_lstm else "hidden")
        lengths = creation.tensor(lengths).unsqueeze(1)
        running = [lengths > t for t in range(padded.size(0))]
        output, h_n = self._run(padded, hx, running)
        sizes = packed.batch_sizes.tolist()
        data = cat([output[t, :size] for t, size in enumerate(sizes)])
        if packed.unsorted_indices is not None:
            h_n = (tuple(h.index_select(1, packed.unsorted_indices) for h in h_n) if is_lstm
                   else h_n.index_select(1, packed.unsorted_indices))
        return packed._with_data(data), h_n

    def _onednn_layer(self, input, hidden, weights, reverse):
        """One layer and direction as torch's oneDNN op: output, (h, c)."""
        if not self.bias:
            weights = weights + [creation.zeros(w.shape, dtype=w.dtype) for w in weights]
        output, h, c, _ = call(table.MKLDNN_RNN_LAYER, (input, *weights, *hidden),
                               (reverse, (), 2, self.hidden_size, self.num_layers, self.bias,
                                self.bidirectional, self.batch_first, self.training))
        return output, (h, c)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text


class _OneHidden(RNNBase):
    """RNN and GRU: one hidden state h, (layers * directions, batch, hidden)."""

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        self._check_input(input)
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
            hx = None if hx is None else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if hx is None:
            hx = self._zeros(input, input.size(1))
        self._check_hidden(hx, input.size(1))
        output, h_n = self._run(input, hx)
        if not batched:
            return output.squeeze(1), h_n.squeeze(1)
        if self.batch_first:
            output = output.transpose_(0, 1)  # torch's in-place transpose (TransposeBackward1)
        return output, h_n


class RNN(_OneHidden):
    """h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (nonlinearity="relu": relu)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)

    def extra_repr(self):
        text = super().extra_repr()
        if self.nonlinearity != "tanh":
            text += f", nonlinearity={self.nonlinearity!r}"
        return text


class GRU(_OneHidden):
    """Gates r, z, n (in that order in the weights): r = sigmoid(W_ir x + b_ir + W_hr h +
    b_hr), z likewise, n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) n + z h."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Gates i, f, g, o (in that order in the weights): c' = f c + i g, h' = o tanh(c');
    returns output, (h_n, c_n)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        self._check_input(input)
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
            hx = None if hx is None else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        elif self.batch_first:
            input = input.transpose(0, 1)
        if hx is None:
            zeros = self._zeros(input, input.size(1))
            hx = (zeros, zeros)
        self._check_hidden(hx[0], input.size(1), "hidden[0]")
        self._check_hidden(hx[1], input.size(1), "hidden[1]")
        output, (h_n, c_n) = self._run(input, hx)
        if not batched:
            return output.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        if self.batch_first:
            output = output.transpose(0, 1)  # out of place here, as torch's LSTM
        return output, (h_n, c_n)


# ---------------- cells ----------------
class RNNCellBase(Module):
    """weight_ih (gates * hidden_size, input_size), weight_hh (gates * hidden_size,
    hidden_size), bias_ih and bias_hh, all U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size, hidden_size, bias, gates, device=None, dtype=None):
        super().__init__()
        check_device(device)  # the CPU, the only device
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(creation.empty((gates * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(creation.empty((gates * hidden_size, hidden_size),
                                                  dtype=dtype))
        for name in ("bias_ih", "bias_hh"):
            self.register_parameter(name, Parameter(
                creation.empty(gates * hidden_size, dtype=dtype)) if bias else None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def _step(self, cell, input, hx):
        """Unbatched (1-D) inputs and a missing hidden state (zeros), as torch's cells."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros) if cell is _lstm_cell else zeros
        elif not batched:
            hx = tuple(h.unsqueeze(0) for h in hx) if cell is _lstm_cell else hx.unsqueeze(0)
        out = cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if batched:
            return out
        return tuple(h.squeeze(0) for h in out) if cell is _lstm_cell else out.squeeze(0)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return text if nonlinearity == "tanh" else text + f", nonlinearity={nonlinearity}"


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return self._step(_CELLS[f"RNN_{self.nonlinearity.upper()}"], input, hx)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        return self._step(_lstm_cell, input, hx)


class GRUCell(RNNCellBase):
    """One GRU step: returns h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        return self._step(_gru_cell, input, hx)
