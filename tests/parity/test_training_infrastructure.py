"""The infrastructure names real training files use, against torch's CPU build: record_function,
the backward hooks of modules, the CUDA and accelerator queries without a device, the
autocast queries, torch.version, futures, utils.hooks' handle and nn.attention's kernel
choice. Tests marked parity, skipped without torch."""
import collections
import warnings

import numpy as np
import pytest

import gradtool as gt

pytestmark = pytest.mark.parity


def _outcome(call):
    try:
        result = call()
        return ("ok", result if isinstance(result, (int, float, str, bool, type(None))) else
                type(result).__name__)
    except Exception as exc:  # noqa: BLE001 (the comparison is of the exceptions)
        return (type(exc).__name__, str(exc))


def test_devices_versions_and_autocast_queries_are_torchs():
    torch = pytest.importorskip("torch")
    import torch.version  # noqa: F401
    seen = []
    for lib in (gt, torch):
        def enter(device):
            with lib.cuda.device(device):
                return "entered"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dtypes = [str(lib.get_autocast_gpu_dtype()), str(lib.get_autocast_cpu_dtype()),
                      str(lib.get_autocast_dtype("cpu")), str(lib.get_autocast_dtype("cuda"))]
            dtypes = [d.split(".")[-1] for d in dtypes]
        seen.append((lib.version.cuda, lib.version.hip, lib.is_autocast_enabled(),
                     lib.is_autocast_enabled("cpu"), dtypes,
                     [(w.category.__name__, str(w.message).split(" (Triggered")[0])
                      for w in caught],
                     _outcome(lambda: enter(0)), _outcome(lambda: enter("cuda:1")),
                     _outcome(lambda: enter(-1)), _outcome(lambda: lib.cuda.device("cpu")),
                     _outcome(lambda: lib.cuda.Event(enable_timing=True)),
                     _outcome(lambda: lib.cuda.Stream()),
                     _outcome(lib.cuda.current_stream),
                     _outcome(lib.cuda.get_device_capability),
                     _outcome(lambda: lib.accelerator.set_device_index(0)),
                     [c.__name__ for c in lib.cuda.OutOfMemoryError.__mro__[1:]]))
    assert seen[0] == seen[1]


def test_record_function_times_a_named_block_in_the_profile():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        @lib.autograd.profiler.record_function("decorated")
        def step(x):
            return x * 2

        with lib.autograd.profiler.profile() as prof:
            with lib.autograd.profiler.record_function("block") as block:
                step(lib.ones(2)) + 1
            step(lib.ones(1))
        counts = {e.key: e.count for e in prof.key_averages()}
        seen.append((type(block).__name__, counts["block"], counts["decorated"]))
    assert seen[0] == seen[1]


def test_module_backward_hooks_are_torchs():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        record = []

        class Scale(lib.nn.Module):
            def forward(self, x):
                return x * 3

        def hook(module, grad_input, grad_output):
            record.append((type(module).__name__,
                           [None if g is None else g.tolist() for g in grad_input],
                           [g.tolist() for g in grad_output]))
        linear = lib.nn.Linear(2, 2).double()
        with lib.no_grad():
            linear.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        warned = []
        for module, x in ((Scale(), lib.tensor([1.0, 2.0], requires_grad=True)),
                          (linear, lib.ones(1, 2, dtype=lib.float64, requires_grad=True)),
                          (lib.nn.Tanh(), lib.tensor([0.5], requires_grad=True))):
            handle = module.register_backward_hook(hook)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                y = module(x)
            warned.append([str(w.message) for w in caught])
            y.sum().backward()
            handle.remove()
            module(x).sum().backward()  # removed: not called
        doubled = Scale()
        doubled.register_backward_hook(
            lambda m, gi, go: tuple(None if g is None else g * 2 for g in gi))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doubled(x).sum().backward()
        seen.append((record, warned, x.grad.tolist()))
    assert seen[0] == seen[1]


def test_futures_handles_and_sdpa_kernel_choice_are_torchs():
    torch = pytest.importorskip("torch")
    import torch.futures  # noqa: F401
    import torch.nn.attention  # noqa: F401
    import torch.utils.hooks  # noqa: F401
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    seen, numbers = [], []
    for lib in (gt, torch):
        fut = lib.futures.Future()
        chained = fut.then(lambda f: f.wait() * 2)
        before = (fut.done(), chained.done())
        fut.set_result(5)
        failed = lib.futures.Future()
        failed.set_exception(ValueError("boom"))
        hooks = collections.OrderedDict()  # (held weakly: a plain dict cannot be)
        handle = lib.utils.hooks.RemovableHandle(hooks)
        hooks[handle.id] = "hook"
        with lib.utils.hooks.RemovableHandle(hooks) as second:
            hooks[second.id] = "other"
        handle.remove()
        attention = lib.nn.attention
        qt = lib.tensor(q)
        with attention.sdpa_kernel([attention.SDPBackend.FLASH_ATTENTION]):
            out = lib.nn.functional.scaled_dot_product_attention(qt, qt, qt)
        numbers.append(out.numpy())
        with attention.sdpa_kernel(attention.SDPBackend.EFFICIENT_ATTENTION):
            refused = _outcome(lambda: lib.nn.functional.scaled_dot_product_attention(qt, qt,
                                                                                       qt))
        seen.append((before, fut.wait(), chained.wait(), fut.done(),
                     _outcome(failed.wait), _outcome(lambda: fut.set_result(1)),
                     lib.futures.wait_all([fut, chained]),
                     [f.wait() for f in lib.futures.collect_all([fut, chained]).wait()],
                     hooks, refused, str(attention.SDPBackend.MATH),
                     repr(attention.SDPBackend.MATH), int(attention.SDPBackend.ERROR),
                     _outcome(lambda: attention.sdpa_kernel("math").__enter__())))
    assert seen[0] == seen[1]
    np.testing.assert_allclose(numbers[0], numbers[1], rtol=1e-6)


def test_checkpoint_device_states_of_cpu_tensors_are_torchs():
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint  # noqa: F401
    seen = []
    for lib in (gt, torch):
        states = lib.utils.checkpoint.get_device_states(lib.ones(2), 3)
        lib.utils.checkpoint.set_device_states(*states)
        seen.append(states)
    assert seen[0] == seen[1] == ([], [])


def test_stateless_functional_call_is_torchs_deprecated_alias():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.stateless  # noqa: F401
    seen = []
    for lib in (gt, torch):
        layer = lib.nn.Linear(2, 1)
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            out = lib.nn.utils.stateless.functional_call(
                layer, {"weight": lib.ones(1, 2), "bias": lib.tensor([0.5])}, (lib.ones(3, 2),))
        seen.append(out.tolist())
    assert seen[0] == seen[1] == [[2.5]] * 3


def test_checkpoint_names_are_torchs():
    """Warnings, node names, messages, helpers and switches as torch's; the dropout masks
    (each library's own generator) are compared through their gradients in the engine's test."""
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint  # noqa: F401
    from tests.engine.test_training_infrastructure import checkpoint_program
    from tests.parity.test_checkpoint import without_pytest_handlers
    without_pytest_handlers()  # (torch's debug trace logs what they cannot format)
    mine, theirs = checkpoint_program(gt), checkpoint_program(torch)
    skip = {2, 3}  # dropout's values and gradients: generators differ
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if i in skip:
            continue
        if isinstance(a, list) and a and isinstance(a[0], float):
            np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=f"item {i}")
        else:
            assert a == b, f"item {i}"
    assert len(mine) == len(theirs)
