"""torch.compile and torch.compiler on the engine: compiling is an optimisation of how a
function runs, never of what it computes, and the engine has no compiler (no graph capture,
no code generation), so a compiled function or module runs eagerly, as under torch's
`backend="eager"`. What torch checks before compiling (the mode, the backend's name, mode
and options together) is checked as torch's; a module comes back wrapped as torch's
OptimizedModule (`_orig_mod`, state_dict keys "_orig_mod.*")."""
import functools

from .errors import missing_attribute
from .nn.compiled import InvalidBackend, OptimizedModule, check_settings  # noqa: F401
from .nn.module import Module

def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """model (a function or module) to run as compiled: here, eagerly; without model, the
    decorator with these settings."""
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable)
    check_settings(backend, mode, options)
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    return compiled


# ---- torch.compiler's switches
def disable(fn=None, recursive=True, *, reason=None):
    """fn never compiled: as every function here."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)

    @functools.wraps(fn)
    def not_compiled(*args, **kwargs):
        return fn(*args, **kwargs)
    return not_compiled


def is_compiling():
    return False


def is_dynamo_compiling():
    return False


def reset():
    """Forget what was compiled: nothing is."""


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
