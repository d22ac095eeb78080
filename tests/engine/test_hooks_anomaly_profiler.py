"""Saved-tensor hooks (torch's documentation examples), save_on_disk, anomaly detection,
the profiler, multi-grad hooks, and memory held by the graph."""
import gc
import os
import threading
import tracemalloc
import uuid
import warnings

import numpy as np
import pytest

import gradtool as torch  # the documentation's examples, as written for torch


def test_saved_self_is_the_input_and_saved_result_is_a_new_tensor():
    x = torch.randn(5, requires_grad=True)
    y = x.pow(2)
    assert x.equal(y.grad_fn._saved_self)
    assert x is y.grad_fn._saved_self
    y = x.exp()
    assert y.equal(y.grad_fn._saved_result)
    assert y is not y.grad_fn._saved_result


def test_pack_and_unpack_hooks_context():
    calls = []

    def pack_hook(x):
        calls.append("pack")
        return x

    def unpack_hook(x):
        calls.append("unpack")
        return x
    a = torch.ones(5, requires_grad=True)
    b = torch.ones(5, requires_grad=True) * 2
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()
    assert calls == ["pack", "pack", "unpack", "unpack"]
    assert a.grad.tolist() == [2.0] * 5
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert b.grad is None  # b = ones * 2 is not a leaf


def test_hooks_on_one_saved_tensor():
    def pack_hook(x):
        return ("packed", x.detach().numpy().copy())

    def unpack_hook(packed):
        return torch.from_numpy(packed[1])
    x = torch.randn(5, requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
    assert y.grad_fn._saved_self.equal(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)


def test_only_one_pair_of_hooks_per_saved_tensor():
    x = torch.randn(2, requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="only one pair of hooks is allowed at a time"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def test_self_deleting_temp_file_example(tmp_path):
    tmp_dir = str(tmp_path)

    class SelfDeletingTempFile():
        def __init__(self):
            self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

        def __del__(self):
            os.remove(self.name)

    def pack_hook(tensor):
        temp_file = SelfDeletingTempFile()
        torch.save(tensor, temp_file.name)
        return temp_file

    def unpack_hook(temp_file):
        return torch.load(temp_file.name)

    x = torch.randn(5, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = x.pow(2) * x.sin()
    assert len(os.listdir(tmp_dir)) >= 2
    y.sum().backward()
    expected = 2 * x.detach().numpy() * np.sin(x.detach().numpy()) + \
        x.detach().numpy() ** 2 * np.cos(x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)
    gc.collect()
    assert os.listdir(tmp_dir) == []  # freed with the graph


def test_innermost_hooks_win_and_hooks_are_thread_local():
    seen = []
    outer = torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append("outer") or t,
                                                     lambda t: t)
    inner = torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append("inner") or t,
                                                     lambda t: t)
    x = torch.randn(2, requires_grad=True)
    with outer:
        with inner:
            x.exp()
        x.exp()

        def other_thread():
            x.exp()
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert seen == ["inner", "outer"]


def test_save_on_disk_spills_and_cleans_up(tmp_path):
    x = torch.randn(100, dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.save_on_disk(directory=str(tmp_path)):
        y = (x.exp() * x).sum()
    assert len(os.listdir(tmp_path)) >= 2
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()) *
                               (1 + x.detach().numpy()))
    gc.collect()
    assert os.listdir(tmp_path) == []


def test_disable_saved_tensors_hooks():
    with torch.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_anomaly_mode_names_the_node_and_the_forward_line():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = x.sqrt()  # d sqrt at 0 is inf; times 0 below gives nan
        line = test_anomaly_mode_names_the_node_and_the_forward_line.__code__.co_firstlineno + 3
        z = (y * torch.tensor([0.0, 1.0])).sum()
        with pytest.raises(RuntimeError) as info:
            z.backward()
    message = str(info.value)
    assert "Function 'SqrtBackward0' returned nan values in its 0th output." in message
    assert f"test_hooks_anomaly_profiler.py:{line}" in message
    assert not torch.autograd.is_anomaly_enabled()


def test_without_anomaly_mode_nan_passes_silently():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * torch.tensor([0.0, 1.0])).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_set_detect_anomaly_call_and_context():
    torch.autograd.set_detect_anomaly(True)
    try:
        assert torch.autograd.is_anomaly_enabled()
    finally:
        torch.autograd.set_detect_anomaly(False)
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert torch.autograd.is_anomaly_enabled()
        assert not torch.autograd.is_anomaly_check_nan_enabled()
    assert not torch.autograd.is_anomaly_enabled()


def test_profiler_counts_forward_and_backward_per_op():
    x = torch.randn(10, requires_grad=True)
    with torch.autograd.profiler.profile() as prof:
        for _ in range(3):
            (x * 2).exp().sum().backward()
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["mul"].count == 3 and rows["exp"].count == 3 and rows["sum"].count == 3
    assert rows["MulBackward0"].count == 3 and rows["ExpBackward0"].count == 3
    assert all(e.cpu_time_total > 0 for e in rows.values())
    table = prof.key_averages().table()
    assert "MulBackward0" in table and "Calls" in table
    assert torch.autograd.dispatch.call.__name__ == "call"  # dispatch restored


def test_profiler_names_in_place_ops_as_torch():
    x = torch.zeros(3)
    with torch.autograd.profiler.profile() as prof:
        x.add_(1)
        x.uniform_()  # (ops that exist only in place: their names end in _ already)
        x.eq_(0)
        torch.nn.init.normal_(x)
    assert {e.key for e in prof.key_averages()} == {"add_", "uniform_", "eq_", "normal_"}


def test_multi_grad_hook_all_and_any():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    c = torch.ones(2, requires_grad=True)
    seen = []
    handle = torch.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda grads: seen.append([g is not None for g in grads]))
    (a * 2 + b * 3).sum().backward()
    assert seen == [[True, True, False]]
    handle.remove()
    (a * 2).sum().backward()
    assert len(seen) == 1
    first = []
    torch.autograd.graph.register_multi_grad_hook((a, b), lambda g: first.append(g.tolist()),
                                                  mode="any")
    (a * 2 + b * 3).sum().backward()
    assert len(first) == 1


def _mlp_step(params, x, target, lr=0.01):
    w1, b1, w2, b2 = params
    loss = (((x @ w1 + b1).relu() @ w2 + b2 - target) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p.sub_(lr * p.grad)
            p.grad = None
    return loss.item()


def test_training_loop_holds_flat_memory():
    torch.manual_seed(0)
    params = [torch.randn(8, 32, requires_grad=True), torch.zeros(32, requires_grad=True),
              torch.randn(32, 1, requires_grad=True), torch.zeros(1, requires_grad=True)]
    x, target = torch.randn(64, 8), torch.randn(64, 1)
    for _ in range(50):  # warm up caches
        _mlp_step(params, x, target)
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(200):
            _mlp_step(params, x, target)
        gc.collect()
        middle, _ = tracemalloc.get_traced_memory()
        for _ in range(800):
            _mlp_step(params, x, target)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert end - middle < 64 * 1024, f"memory grew by {end - middle} bytes over 800 steps"


def test_graph_is_freed_by_reference_counting_alone():
    x = torch.randn(10_000, requires_grad=True)
    (x.exp() * x.sin()).sum().backward()  # warm up caches (op plans, accumulator)
    x.grad = None
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        before, _ = tracemalloc.get_traced_memory()
        loss = (x.exp() * x.sin()).sum()
        loss.backward()
        del loss
        x.grad = None
        after, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        gc.enable()
    assert after - before < 16_000  # the graph held two 40 kB arrays (exp and sin results)


def test_a_leafs_tensor_hooks_run_before_its_accumulate_grad_pre_hooks():
    order = []
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda grads: order.append("node pre-hook"))
    x.register_hook(lambda g: order.append("tensor hook"))
    acc.register_hook(lambda gi, go: order.append("node post-hook"))
    y.sum().backward()
    assert order == ["tensor hook", "node pre-hook", "node post-hook"]


def test_grad_with_respect_to_a_non_leaf_does_not_run_its_node():
    ran = []
    a = torch.randn(3, requires_grad=True)
    b = a * 2
    c = (b * b).sum()
    b.register_hook(lambda g: ran.append("b's tensor hook"))  # reads the gradient: runs
    b.grad_fn.register_prehook(lambda go: ran.append("b's node pre-hook"))
    b.grad_fn.register_hook(lambda gi, go: ran.append("b's node post-hook"))
    (g,) = torch.autograd.grad(c, b, retain_graph=True)
    assert g.allclose(2 * b.detach())
    assert ran == ["b's tensor hook"] and a.grad is None
    # still runs when it leads to another input
    ran.clear()
    torch.autograd.grad(c, [b, a])
    assert ran == ["b's tensor hook", "b's node pre-hook", "b's node post-hook"]


def test_grad_of_a_leaf_runs_no_accumulate_grad_hooks_and_accumulates_nothing():
    ran = []
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    y.grad_fn.next_functions[0][0].register_prehook(lambda go: ran.append("pre"))
    torch.autograd.grad(y.sum(), x)
    assert ran == [] and x.grad is None


def test_backward_inputs_non_leaf_retains_its_grad_without_a_warning():
    a = torch.randn(3, requires_grad=True)
    b = a * 2
    (b * b).sum().backward(inputs=[b])
    assert b.retains_grad and a.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert b.grad.allclose(2 * b.detach())


def test_materialized_zeros_require_grad_under_create_graph():
    x, unused = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    _, z = torch.autograd.grad((x * x).sum(), [x, unused], materialize_grads=True,
                            create_graph=True)
    assert z.requires_grad and z.tolist() == [0.0] * 3
    (zz,) = torch.autograd.grad(z.sum(), unused, allow_unused=True, materialize_grads=True)
    assert zz.tolist() == [0.0] * 3  # a higher order goes on
    _, z = torch.autograd.grad((x * x).sum(), [x, unused], materialize_grads=True)
    assert not z.requires_grad
