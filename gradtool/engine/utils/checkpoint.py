"""torch.utils.checkpoint: activation checkpointing trades memory for a second forward pass
in backward. The reentrant variant (torch's default, `use_reentrant=True` or unset) is
torch's CheckpointFunction: no graph in forward, one CheckpointFunctionBackward node that
reruns the function under the forward's RNG state and backpropagates through it. The
non-reentrant variant is torch's too: the graph is the plain call's (its nodes, as torch's),
but each tensor its ops save is let go; the first backward that needs one reruns the function
(the forward's RNG state, grad mode on, the recompute context) and stops once every saved
tensor is back, with torch's CheckpointError when the rerun saves other tensors than the
forward, its debug trace of the ops each ran, early stop and determinism_check. Selective
checkpointing asks a policy per op (an observer of dispatch, active only inside) which
outputs to keep; recomputation takes those back instead of computing them."""
import collections
import contextlib
import copy
import enum
import functools
import itertools
import os
import traceback
import warnings
import weakref

from .. import library
from ..autograd import creation, dispatch, observers
from ..autograd.engine import backward, current_task
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..autograd.node import SavedTensor
from ..autograd.tensor import Tensor

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
    """Run `function(*args, **kwargs)` keeping only its inputs for backward: the tensors it
    saves are recomputed (by running it again) when backward needs them."""
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
    frame = _start_frame(function, preserve, context_fn, determinism_check, debug, early_stop,
                         args, kwargs)
    if frame is None:  # grad mode off: nothing is saved, nothing to recompute
        return function(*args, **kwargs)
    frame, forward_context = frame
    suppressed = True
    with _checkpoint_hook(frame), forward_context:
        out = function(*args, **kwargs)
        suppressed = False
    if suppressed:  # the forward raised and the context swallowed it: no value to return
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by "
            "context_fn suppressed an exception raised during the "
            "checkpointed forward. This is not supported because checkpoint "
            "cannot return a value for a failed forward.")
    frame.forward_completed = True
    return out


# ---------------------------------------------------------------- non-reentrant checkpoint
# Torch's design (its "Nestable Checkpoint" note): while the function runs, a saved_tensors_hooks
# pair packs each tensor an op saves as a small holder (the tensor itself is let go); the first
# unpack in a backward reruns the function under a second pair that files each recomputed saved
# tensor under its holder, stopping as soon as all are recomputed. A checkpoint's inputs are
# saved tensors of its enclosing checkpoint, so nested checkpoints recompute outside in.

class _Handle:
    pass


class _Holder:
    def __init__(self):
        self.handles = {}  # backward pass id -> the _Handle its recomputed tensor is filed by


class _StopRecomputationError(Exception):
    pass


_task_ids = weakref.WeakKeyDictionary()  # a backward pass -> its id (torch's graph task id)
_fresh_ids = itertools.count(1)


def _current_backward_id():
    group = GraphExecGroup._get_current_group()
    if group is not None:
        return group
    task = current_task()
    if task is None:  # unpacked outside backward (grad_fn._saved_self): an id of its own
        return -next(_fresh_ids)
    gid = _task_ids.get(task)
    if gid is None:
        gid = _task_ids[task] = next(_fresh_ids)
    return gid


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}

_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. "
                             "Please report this bug by filing an issue to PyTorch.")


class _CheckpointFrame:
    """One checkpointed call: its saved inputs, a weak holder per tensor its forward saved
    (with that tensor's metadata), and per backward pass the recomputed tensors."""

    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        # weak keys: a holder freed by backward frees its recomputed tensor with it
        self.recomputed = collections.defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = collections.defaultdict(int)
        self.is_recomputed = collections.defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.x_metadatas = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        # saved as a node saves them: an enclosing checkpoint's hooks pack them too
        self.saved_args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack() if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}")
        different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(holder.handles.get(gid) is not None)
            recomputed_meta = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if self.x_metadatas[idx] != recomputed_meta:
                different.append((idx, self.x_metadatas[idx], recomputed_meta))
        if different:
            mismatched = "".join(f"tensor at position {idx}:\nsaved metadata: {saved}\n"
                                 f"recomputed metadata: {recomputed}\n"
                                 for idx, saved, recomputed in different)
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{mismatched}.\n{_debug_tip_msg}")


class _recomputation_hook(saved_tensors_hooks):
    """While the function reruns: each saved tensor is filed under the holder the forward's
    pack made for it; once all are, recomputation stops (early stop)."""

    def __init__(self, target_frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = target_frame_ref()
            _internal_assert(frame is not None)
            recomp_idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if recomp_idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:  # backward inside the checkpointed forward
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during "
                    f"recomputation than during the original forward pass.\n{_debug_tip_msg}")
            holder = frame.weak_holders[recomp_idx]()
            if holder is not None:  # (else backward freed it already: nothing to file)
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    """While the checkpointed function runs: a tensor saved for backward is kept as a holder
    (and its metadata); unpacking it first reruns the function to recompute it."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = _current_backward_id()
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                extra = ""
                if GraphExecGroup._get_current_group() is not None:
                    extra = ("Performing two backward calls that overlap (i.e. require the "
                             "same saved activation in order to compute gradients) is not "
                             "allowed while under the torch.utils.checkpoint.GraphExecGroup "
                             "context. ")
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    f"already unpacked once. {extra}If you are calling ctx.saved_tensors in "
                    "backward, make sure to do so only once. Otherwise please open an issue "
                    "with details on your use case.")
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None  # recomputed tensors live until unpacked, no longer
            return ret

        if frame.unpack_error_cb is not None:
            def unpack_hook_with_error_cb(holder):
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)
            super().__init__(pack_hook, unpack_hook_with_error_cb)
        else:
            super().__init__(pack_hook, unpack_hook)


def _start_frame(fn, preserve_rng_state, context_fn, determinism_check, debug, early_stop,
                 args, kwargs):
    """torch's _checkpoint_without_reentrant_generator up to the forward: the argument checks,
    the frame with its recompute function (the forward's RNG state, the recompute context)
    and the forward context; None when grad mode is off."""
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _get_debug_context_and_cb()
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError(f"determinism_check should be one of "
                         f"{list(_allowed_determinism_checks_to_fns.keys())}, "
                         f"but got {determinism_check}")
    metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = creation.get_rng_state() if preserve_rng_state else None

    def recompute_fn(*args):
        outer_state = creation.get_rng_state() if preserve_rng_state else None
        try:
            if preserve_rng_state:
                creation.set_rng_state(fwd_cpu_state)
            with recompute_context:
                fn(*args, **kwargs)
        finally:
            if preserve_rng_state:
                creation.set_rng_state(outer_state)

    frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None
        else early_stop, unpack_error_cb, metadata_fn)
    if not is_grad_enabled():
        return None
    frame.save_inputs(*args)
    return frame, forward_context


# ------------------------------------------------------------------------ debug trace
_checkpoint_error_template = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""

_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _OpLog(observers.Observer):
    """Each op the checkpointed function runs, as torch's LoggingTensorMode logs it (its
    aten overload, the result's dtype and shape), with the user's frames that ran it."""

    def __init__(self):
        self.logs, self.tbs = [], []

    def op(self, name, inputs, run):
        out = run()
        overload = library.aten_overload(name, inputs, _other_arguments(run))
        results = out if isinstance(out, tuple) else (out,)
        shown = ", ".join(f"{_short(r)}" for r in results if isinstance(r, Tensor))
        self.logs.append(f"{shown} = {overload}({', '.join(_short(i) for i in inputs)})")
        self.tbs.append([{"filename": f.filename, "line": f.lineno, "name": f.name}
                         for f in traceback.extract_stack()
                         if not os.path.abspath(f.filename).startswith(_ENGINE_DIR)])
        return out


def _short(value):
    if not isinstance(value, Tensor):
        return repr(value)
    letter = {"f": "f", "c": "c", "i": "i", "u": "u", "b": "b"}[value._data.dtype.kind]
    return f"{letter}{value._data.dtype.itemsize * 8}{list(value.shape)}"


def _get_debug_context_and_cb():
    """debug=True: the forward and the recomputation each log their ops; a CheckpointError
    in unpacking is raised again with both logs and the user's frames of each op."""
    forward_log, recompute_log = _OpLog(), _OpLog()

    def unpack_error_cb(e):
        def traces(label, log):
            out = ""
            for i, (entry, tb) in enumerate(zip(log.logs, log.tbs)):
                out += f"{entry}   ({i + 1} of {len(log.logs)} in {label})\n\n"
                out += "".join(f"{f['filename']}:{f['line']}:{f['name']}\n" for f in tb)
                out += "\n\n"
            return out
        raise CheckpointError(_checkpoint_error_template.format(
            forward_traces=traces("original", forward_log),
            recompute_traces=traces("recompute", recompute_log),
            forward_ops="\n".join(forward_log.logs),
            recompute_ops="\n".join(recompute_log.logs))) from e

    def context_fn():
        forward_log.logs, forward_log.tbs = [], []
        recompute_log.logs, recompute_log.tbs = [], []
        return forward_log, recompute_log

    return context_fn, unpack_error_cb


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run the modules (or a Sequential's children) one after another on `input`, each of
    the first segments - 1 chunks checkpointed (the last runs plainly)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    from ..nn.modules import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ------------------------------------------------------------ selective checkpointing
class SelectiveCheckpointContext:
    """What a selective checkpoint's policy function receives first: the policy runs in the
    forward only (recomputation reads its decisions back), so is_recompute is False."""

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


def _policy_from_bool(b):
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


# the ops selective checkpointing never caches (checkpoint's own detaches differ in number)
SAC_IGNORED_OPS = {library.AtenOverload("detach", "default")}
_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = ("This can happen if the operations in the checkpointed region are "
                     "nondeterministic or depend on global state that changed between "
                     "forward and backward.")


class _VersionWrapper:
    """A cached output, with its version then: a later in-place change is refused."""

    def __init__(self, val):
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation):
        if self.version is not None and not allow_cache_entry_mutation:
            if self.val._version != self.version:
                raise RuntimeError("Tensor cached during selective activation checkpoint has "
                                   "been mutated")
        return self.val


def _tree_map(fn, out):
    return type(out)(fn(o) for o in out) if isinstance(out, (tuple, list)) else fn(out)


class _CachingMode(observers.Observer):
    """The forward's side (torch's _CachingTorchDispatchMode): asks the policy about each op
    and caches the outputs it says to save, by op and call index."""

    def __init__(self, policy_fn, storage):
        self.policy_fn, self.storage = policy_fn, storage
        self.func_counter = collections.defaultdict(int)

    def op(self, name, inputs, run):
        more = _other_arguments(run)
        func = library.aten_overload(name, inputs, more)
        out = run()
        if func in SAC_IGNORED_OPS:
            return out
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *inputs, *more)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            self.storage[func][idx] = _tree_map(
                lambda x: _VersionWrapper(x.detach() if isinstance(x, Tensor) else x), out)
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedMode(observers.Observer):
    """The recomputation's side (torch's _CachedTorchDispatchMode): an op whose output was
    cached gives it back instead of computing it again (its node is recorded as usual, so
    it saves what it saved in the forward); the others run."""

    def __init__(self, storage, allow_cache_entry_mutation):
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter = collections.defaultdict(int)

    def __enter__(self):
        self.func_counter.clear()
        return super().__enter__()

    def op(self, name, inputs, run):
        func = library.aten_overload(name, inputs, _other_arguments(run))
        if func in SAC_IGNORED_OPS:
            return run()
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        func_storage = self.storage.get(func)
        if func_storage is None:
            raise RuntimeError(f"{func} encountered during backward but not found in "
                               f"storage. {_SAC_MISMATCH_MSG}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward "
                               f"but not found in storage. {_SAC_MISMATCH_MSG}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        if entry is _RECOMPUTE:
            return run()
        func_storage[idx] = _CONSUMED
        cached = _tree_map(lambda x: x.get_val(self.allow_cache_entry_mutation), entry)
        return _run_with_result(run, cached)


def _other_arguments(run):
    """The op's arguments after its tensor inputs (dim, keepdim, ...) as torch's schema passes
    them (lists, not tuples), where run() is dispatch's call that has them."""
    if not _is_plain_call(run):
        return ()
    return tuple(list(a) if type(a) is tuple else a for a in run.args[2])


def _is_plain_call(run):
    """Whether run() is dispatch's call of one op (not in place, no other observer around)."""
    return isinstance(run, functools.partial) and run.func is dispatch.call


def _run_with_result(run, cached):
    """run() (dispatch's call of an op) with the op's kernel replaced by the cached result:
    the node and what it saves are recorded as in the forward, nothing is computed. A run
    that is not a plain call (an in-place op, another observer around it) runs as it is."""
    if not _is_plain_call(run):
        return run()
    spec, inputs, args = run.args[:3]
    arrays = _tree_map(lambda t: t._data if isinstance(t, Tensor) else t, cached)
    replayed = copy.copy(spec)
    replayed.forward = lambda *_: arrays
    replayed.as_is = None
    return dispatch.call(replayed, inputs, args, True)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) contexts of selective activation checkpointing, for
    checkpoint's context_fn: the policy (a function of the context, the op and its inputs, or
    a list of ops to save) decides in the forward which op outputs are kept; recomputation
    takes those back and computes only the others."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, (library.AtenOverload, library.OpOverload)):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload."
                         "For example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`."
                         ) if isinstance(op, (library.AtenPacket, library.OpOverloadPacket)) \
                    else ""
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {_torch_type_name(op)}. {extra}")

        def policy_fn(ctx, op, *args, **kwargs):
            if op in policy_fn_or_list:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = collections.defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)


def _torch_type_name(value):
    """type(value) as torch prints it, for the engine's stand-ins of torch's op objects."""
    if isinstance(value, (library.AtenPacket, library.OpOverloadPacket)):
        return "<class 'torch._ops.OpOverloadPacket'>"
    return str(type(value))


class GraphExecGroup:
    """Backward calls within one group recompute each non-reentrant checkpointed region at
    most once (the group stands for their backward pass id); groups do not nest."""

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
