"""torch.sparse, under torch's module name: sparse COO tensors held densely
(gradtool/engine/autograd/sparse.py says how)."""
from .autograd.sparse import (DoubleTensor, FloatTensor, LongTensor, mm,  # noqa: F401
                              sparse_coo_tensor)
from .errors import missing_attribute

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
