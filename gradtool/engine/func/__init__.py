"""torch.func on the engine: composable transforms (grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian), vmap that batches (each op once for the whole batch: batched.py, rules.py)
and functional_call / stack_module_state. Also served as `functorch` (functorch.py)."""
from . import batched as _batched
from .eager import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from .functional_call import functional_call, stack_module_state
from .vmap import vmap

_batched._attach_fallbacks()

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "stack_module_state", "vjp", "vmap"]

from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch.func name gradtool lacks: a clear error
