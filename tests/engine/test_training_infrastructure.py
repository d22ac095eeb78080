"""The infrastructure names training files use, on the engine: record_function's events, a
module's (deprecated) backward hook, futures, utils.hooks' handle, the kernel choice of
nn.attention, and the device queries without a device (their comparison with torch is
tests/parity/test_training_infrastructure.py)."""
import collections
import warnings

import numpy as np
import pytest

import gradtool as gt


def test_record_function_is_an_event_of_the_open_profiler():
    with gt.autograd.profiler.profile() as prof:
        with gt.autograd.profiler.record_function("forward_block"):
            (gt.ones(3) * 2).sum()
    events = {e.key: e for e in prof.key_averages()}
    assert events["forward_block"].count == 1
    assert events["forward_block"].cpu_time_total >= events["forward_block"].self_cpu_time_total
    with gt.autograd.profiler.record_function("nothing_open"):  # no profiler: no event
        gt.ones(1)


def test_a_backward_hook_sees_and_may_replace_the_output_nodes_gradients():
    class Square(gt.nn.Module):
        def forward(self, x):
            return x * x
    seen = []
    module = Square()
    module.register_backward_hook(lambda m, gi, go: seen.append((gi[0].tolist(),
                                                                  go[0].tolist())))
    x = gt.tensor([1.0, 3.0], requires_grad=True)
    with pytest.warns(FutureWarning, match="non-full backward hook"):
        y = module(x)
    y.sum().backward()
    assert seen == [([1.0, 3.0], [1.0, 1.0])] and x.grad.tolist() == [2.0, 6.0]
    doubled = Square()
    doubled.register_backward_hook(lambda m, gi, go: tuple(g * 2 for g in gi))
    x.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doubled(x).sum().backward()
    assert x.grad.tolist() == [4.0, 12.0]


def test_futures_chain_and_handles_remove():
    fut = gt.futures.Future()
    chained = fut.then(lambda f: f.wait() + 1)
    assert not chained.done()
    fut.set_result(1)
    assert chained.wait() == 2 and gt.futures.wait_all([fut, chained]) == [1, 2]
    with pytest.raises(RuntimeError, match="completed Future as complete again"):
        fut.set_result(3)
    hooks = collections.OrderedDict()
    handle = gt.utils.hooks.RemovableHandle(hooks)
    hooks[handle.id] = print
    handle.remove()
    assert not hooks


def test_kernel_choice_and_devices_without_one():
    q = gt.randn(1, 2, 3, 4)
    with gt.nn.attention.sdpa_kernel(gt.nn.attention.SDPBackend.CUDNN_ATTENTION):
        with pytest.raises(RuntimeError, match="No viable backend"):
            gt.nn.functional.scaled_dot_product_attention(q, q, q)
    gt.nn.functional.scaled_dot_product_attention(q, q, q)  # every kernel allowed again
    with pytest.raises(RuntimeError, match="compiled without CUDA"):
        with gt.cuda.device(0):
            pass
    with gt.cuda.device(-1):  # (index -1 is no device: nothing to switch)
        pass
    assert gt.version.cuda is None and not gt.is_autocast_enabled()
    with pytest.raises(RuntimeError, match="none is available"):
        gt.accelerator.set_device_index(0)


def test_checkpoint_device_states_and_stateless_call():
    assert gt.utils.checkpoint.get_device_states(gt.ones(2)) == ([], [])
    gt.utils.checkpoint.set_device_states([], [])
    layer = gt.nn.Linear(2, 1)
    with pytest.warns(FutureWarning, match="deprecated"):
        out = gt.nn.utils.stateless.functional_call(
            layer, {"weight": gt.ones(1, 2), "bias": gt.zeros(1)}, (gt.ones(1, 2),))
    assert out.tolist() == [[2.0]]


def checkpoint_program(lib):
    """utils.checkpoint's names: the reentrant CheckpointFunction (its node, the dropout
    mask of its rerun, gradients), the non-reentrant graph under a user's context_fn,
    the argument errors, the helpers and the switches. Takes gradtool or torch."""
    import contextlib
    C = lib.utils.checkpoint
    seen = []

    def f(x):
        return lib.nn.functional.dropout(x.tanh() * 3, 0.5)

    x = lib.linspace(-1, 1, 6, dtype=lib.float64).requires_grad_()
    lib.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = C.checkpoint(f, x)  # use_reentrant unset: torch warns and runs reentrant
    y.sum().backward()
    seen += [[str(w.message) for w in caught], type(y.grad_fn).__name__, y.tolist(),
             x.grad.tolist()]
    x.grad = None
    y = C.CheckpointFunction.apply(lib.sin, True, x)
    y.sum().backward()
    seen += [type(y.grad_fn).__name__, x.grad.tolist()]
    entered = []

    @contextlib.contextmanager
    def record(name):
        entered.append(name)
        yield

    y = C.checkpoint(lib.tanh, x, use_reentrant=False,
                     context_fn=lambda: (record("forward"), record("recompute")))
    seen += [type(y.grad_fn).__name__, list(entered), y.tolist()]

    def error(call):
        try:
            call()
        except Exception as e:
            return type(e).__name__, str(e).split(" group ")[0]
    seen += [error(lambda: C.checkpoint(lib.tanh, x, use_reentrant=True, other=1)),
             error(lambda: C.checkpoint(lib.tanh, x, use_reentrant=True, debug=True)),
             error(lambda: C.checkpoint(lib.tanh, x, use_reentrant=True,
                                        context_fn=C.noop_context_fn)),  # (the default: fine)
             error(lambda: C.checkpoint(lib.tanh, x, use_reentrant=True,
                                        context_fn=lambda: C.noop_context_fn())),
             error(lambda: C.checkpoint(lib.tanh, x, use_reentrant=False,
                                        determinism_check="all")),
             error(lambda: C.checkpoint(lib.tanh, x, use_reentrant=False, debug=True,
                                        context_fn=lambda: C.noop_context_fn())),
             error(lambda: C.detach_variable([x])),
             error(lambda: C.create_selective_checkpoint_contexts(3)),
             error(lambda: lib.autograd.grad(C.checkpoint(lib.sin, x, use_reentrant=True).sum(),
                                             x)),
             error(lambda: C.checkpoint(lib.sin, x, use_reentrant=True).sum().backward(
                 inputs=[x]))]
    with C.GraphExecGroup() as group:
        seen.append(error(lambda: C.GraphExecGroup().__enter__()))
        seen.append(C.GraphExecGroup._get_current_group() is group)
    seen.append(C.GraphExecGroup._get_current_group())
    detached = C.detach_variable((x, 2, lib.ones(1)))
    seen += [[(type(d).__name__, getattr(d, "requires_grad", None),
               getattr(d, "grad_fn", None)) for d in detached]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        C.check_backward_validity((lib.ones(1), 3))
        C.check_backward_validity((x,))
    seen += [[str(w.message) for w in caught], issubclass(C.CheckpointError, RuntimeError),
             [type(c).__name__ for c in C.noop_context_fn()],
             C.DefaultDeviceType.get_device_type(),
             [(p.name, p.value) for p in C.CheckpointPolicy]]
    ctx = C.SelectiveCheckpointContext(is_recompute=False)
    seen += [(ctx.is_recompute, ctx.op_output)]
    with C.set_checkpoint_early_stop(False), C.set_checkpoint_debug_enabled(True):
        seen += [C._enable_checkpoint_early_stop, C._checkpoint_debug_enabled]
        y = C.checkpoint(lib.tanh, x, use_reentrant=False)  # debug on: no mismatch, no message
        y.sum().backward()
    seen += [C._enable_checkpoint_early_stop, C._checkpoint_debug_enabled]
    return seen


def test_checkpoint_names():
    seen = checkpoint_program(gt)
    warned, node, values, grad = seen[:4]
    assert "use_reentrant parameter should be passed explicitly" in warned[0]
    assert node == "CheckpointFunctionBackward" == seen[4]
    # the rerun in backward draws the forward's dropout mask: gradient 0 where dropped
    x = np.linspace(-1, 1, 6)
    kept = np.asarray(values) != 0
    np.testing.assert_allclose(grad, kept * 6 * (1 - np.tanh(x) ** 2), rtol=1e-12)
    np.testing.assert_allclose(seen[5], np.cos(x), rtol=1e-12)
    assert seen[6:8] == ["TanhBackward0", ["forward"]]  # no backward yet: no recomputation
    assert seen[9] == ("ValueError", "Unexpected keyword arguments: other")
    assert seen[10] == seen[12] == ("ValueError", "Passing `context_fn` or `debug` is only "
                                                  "supported when use_reentrant=False.")
    assert seen[11] is None
    assert seen[13][1].startswith("determinism_check should be one of ['default', 'none']")
    assert seen[16] == ("TypeError", "policy_fn_or_list must be either a function or a "
                                     "list of ops.")
    assert seen[17] == seen[18] == ("RuntimeError", seen[17][1])
    assert "incompatible with .grad() or passing an `inputs`" in seen[17][1]
    assert seen[19] == ("RuntimeError", "GraphExecGroup contexts cannot be nested. Already inside")
    assert seen[-2:] == [None, None] and seen[-4:-2] == [False, True]
