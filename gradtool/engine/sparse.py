"""torch.sparse, under torch's module name: sparse COO and compressed tensors held densely
(gradtool/engine/autograd/sparse.py and sparse_compressed.py say how)."""
from .autograd.sparse import (DoubleTensor, FloatTensor, LongTensor,  # noqa: F401
                              sparse_coo_tensor)
from .autograd.sparse_compressed import sampled_addmm, sparse_mm as mm  # noqa: F401
from .errors import missing_attribute

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
