"""nn.utils.rnn: padding a batch of sequences of different lengths, and packing it (the
sequences sorted longest first, stored time step by time step, each step holding the
sequences still running), as torch's; the recurrent layers take a PackedSequence
(nn/rnn.py)."""
import collections

from ...autograd import creation, dtypes
from ...autograd.free_functions import cat, stack
from ...autograd.tensor import Tensor


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Sequences of lengths L_i (and equal trailing dims) padded to the longest and stacked:
    (L, B, *) or, batch_first, (B, L, *)."""
    longest = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        fill = s.new_full((longest - s.size(0),) + tuple(s.shape[1:]), padding_value)
        padded.append(cat([s, fill] if padding_side == "right" else [fill, s]))
    return stack(padded, 0 if batch_first else 1)


class PackedSequence(collections.namedtuple(
        "PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """data: the steps' rows one after the other (sum of lengths, *); batch_sizes: how many
    sequences each step holds; sorted_indices: the batch order by decreasing length (None
    when the batch was sorted), unsorted_indices its inverse."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._with_data(data)

    def cpu(self, *args, **kwargs):
        return self

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def bind(optional, fn):
    """fn(optional), or None for None."""
    if optional is None:
        return None
    return fn(optional)


def invert_permutation(permutation):
    """The inverse of a 1-D permutation (sorted and unsorted indices of a PackedSequence);
    None for None. A scatter of arange, as torch's: its dtype and shape errors are scatter_'s."""
    if permutation is None:
        return None
    output = creation.empty_like(permutation)
    output.scatter_(0, permutation, creation.arange(0, permutation.numel()))
    return output


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """The padded batch (T, B, *) (batch_first: (B, T, *)) packed: each sequence's first
    lengths[b] steps. enforce_sorted: the lengths must be decreasing; else the batch is
    sorted first (and unsorted again by pad_packed_sequence and the recurrent layers)."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=dtypes.int64)
    else:
        lengths = creation.as_tensor(lengths, dtype=dtypes.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    values = lengths.tolist()
    if any(a < b for a, b in zip(values, values[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if values and values[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if values and values[0] > input.size(0):
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the "
                           f"largest length, but got {input.size(0)} and {values[0]}")
    batch_sizes = [sum(1 for n in values if n > t) for t in range(values[0] if values else 0)]
    data = cat([input[t, :size] for t, size in enumerate(batch_sizes)])
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=dtypes.int64),
                          sorted_indices, None)


def _padded(sequence, padding_value, total_length):
    """(T, B, *) in the packed (sorted) batch order, and the lengths."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    batch = batch_sizes[0] if batch_sizes else 0
    steps, offset = [], 0
    for size in batch_sizes:
        step = data[offset:offset + size]
        offset += size
        if size < batch:
            step = cat([step, step.new_full((batch - size,) + tuple(data.shape[1:]),
                                            padding_value)])
        steps.append(step)
    for _ in range(total_length - len(batch_sizes)):
        steps.append(data.new_full((batch,) + tuple(data.shape[1:]), padding_value))
    lengths = [sum(1 for size in batch_sizes if size > b) for b in range(batch)]
    return stack(steps), lengths


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """pack_padded_sequence's inverse: the padded batch (in the original order) and the
    lengths (an int64 tensor)."""
    longest = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < longest:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {longest}")
        longest = total_length
    padded, lengths = _padded(sequence, padding_value, longest)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = creation.tensor(lengths, dtype=dtypes.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pack_sequence(sequences, enforce_sorted=True):
    """The sequences (each (L_i, *)) packed: pad_sequence then pack_padded_sequence."""
    lengths = creation.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
