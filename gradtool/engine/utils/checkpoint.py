"""torch.utils.checkpoint: activation checkpointing trades memory for a second forward pass
in backward. The reentrant variant (torch's default, `use_reentrant=True` or unset) is
torch's CheckpointFunction: no graph in forward, one CheckpointFunctionBackward node that
reruns the function under the forward's RNG state and backpropagates through it. The
non-reentrant variant runs the plain call (the engine keeps every activation): the graph,
values and gradients are those of the plain call, as torch's shows them; there is no
recomputation, so there is nothing to compare a recomputation with (torch's CheckpointError
on a mismatch, its debug trace, early stop) and selective checkpointing's per-op policy has
no recomputation to steer."""
import contextlib
import enum
import warnings

from ..autograd import creation
from ..autograd.engine import backward, current_task
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.tensor import Tensor
from ..errors import NotInEngineError

_DEFAULT_DETERMINISM_MODE = "default"
_DETERMINISM_CHECKS = ("default", "none")  # torch's allowed determinism_check values

# the process-wide switches torch's context managers set (read by torch's non-reentrant
# checkpoint: the engine's keeps them for a program that reads them back)
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Within it, checkpoint's `debug` is `enabled` (None defers to each call's)."""
    global _checkpoint_debug_enabled
    try:
        prev = _checkpoint_debug_enabled
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Within it, non-reentrant checkpoints stop recomputing early or not."""
    global _enable_checkpoint_early_stop
    try:
        prev = _enable_checkpoint_early_stop
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class CheckpointError(RuntimeError):
    pass


def detach_variable(inputs):
    """The tensors of a tuple detached, each keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG state checkpoint saves when no input is on a device: the
    CPU's, the engine having no accelerator (as torch's CPU build)."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """The devices of the accelerator tensors among args and their RNG states: the engine's
    tensors are all on the CPU, so none (as torch's for CPU tensors)."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restore the RNG states get_device_states took: of no device, here."""
    if list(devices) or list(states):
        raise AssertionError("Torch not compiled with CUDA enabled")


class CheckpointFunction(Function):
    """Reentrant checkpoint: forward without a graph, backward reruns the function with
    grad (and the forward's RNG state) and backpropagates through that rerun."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = creation.get_rng_state()
        # non-tensors kept in ctx, a None placeholder for each tensor (saved instead)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not current_task().checkpoint_valid:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        outer_state = creation.get_rng_state()
        try:
            if ctx.preserve_rng_state:
                creation.set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        finally:
            creation.set_rng_state(outer_state)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        # backward from the outputs that require grad only
        pairs = [(out, grad) for out, grad in zip(outputs, args)
                 if isinstance(out, Tensor) and out.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        backward([out for out, _ in pairs], [grad for _, grad in pairs])
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True,
               **kwargs):
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    forward_context, _recompute_context = context_fn()  # no recomputation: the second unused
    with forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run the modules (or a Sequential's children) one after another on `input`."""
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    for function in functions:
        input = function(input)
    return input


class SelectiveCheckpointContext:
    """What a selective checkpoint's policy function receives first."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Whether selective checkpointing saves an op's output or recomputes it."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """Torch's contexts intercept every dispatched op to ask the policy; the engine's
    checkpoint keeps every activation (nothing to select) and its dispatch has no per-op
    interception, so this names what the engine lacks."""
    if not isinstance(policy_fn_or_list, list) and not callable(policy_fn_or_list):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    raise NotInEngineError("torch.utils.checkpoint.create_selective_checkpoint_contexts "
                           "(selective activation checkpointing)")


# the ops selective checkpointing never caches (torch's set holds aten and prim op objects)
SAC_IGNORED_OPS = set()


class GraphExecGroup:
    """Backward calls within one group recompute each non-reentrant checkpointed region at
    most once; the engine never recomputes, so the group only refuses nesting, as torch's."""

    _current = None

    def __enter__(self):
        if GraphExecGroup._current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. "
                               f"Already inside group {GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *args):
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls):
        return cls._current


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
