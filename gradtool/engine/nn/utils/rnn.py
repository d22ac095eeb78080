"""nn.utils.rnn: pad_sequence (packed sequences are not provided)."""
from ...autograd.free_functions import cat, stack


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Sequences of lengths L_i (and equal trailing dims) padded to the longest and stacked:
    (L, B, *) or, batch_first, (B, L, *)."""
    longest = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        fill = s.new_full((longest - s.size(0),) + tuple(s.shape[1:]), padding_value)
        padded.append(cat([s, fill] if padding_side == "right" else [fill, s]))
    return stack(padded, 0 if batch_first else 1)


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
