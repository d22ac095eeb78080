"""torch.sparse, under torch's module name: sparse COO and compressed tensors held densely
(gradtool/engine/autograd/sparse.py and sparse_compressed.py say how)."""
from .autograd.sparse import (DoubleTensor, FloatTensor, LongTensor,  # noqa: F401
                              log_softmax, softmax, sparse_coo_tensor, spdiags,
                              sparse_sum as sum)
from .autograd.sparse_compressed import sampled_addmm, sparse_mm as mm  # noqa: F401
from .errors import missing_attribute


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse (a dense result)."""
    return mat.addmm(mat1, mat2, beta=beta, alpha=alpha)


__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
