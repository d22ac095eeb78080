"""The infrastructure names training files use, on the engine: record_function's events, a
module's (deprecated) backward hook, futures, utils.hooks' handle, the kernel choice of
nn.attention, and the device queries without a device (their comparison with torch is
tests/parity/test_training_infrastructure.py)."""
import collections
import warnings

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
