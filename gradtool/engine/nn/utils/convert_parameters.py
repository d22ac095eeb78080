"""nn.utils.convert_parameters: the parameters as one vector and back."""
from ...autograd.free_functions import cat
from ...autograd.tensor import Tensor


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of vec into the parameters' data."""
    if not isinstance(vec, Tensor):  # (torch.typename of a non-tensor: its class's name)
        kind = type(vec)
        name = (kind.__qualname__ if kind.__module__ == "builtins"
                else f"{kind.__module__}.{kind.__qualname__}")
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
