"""utils.checkpoint's non-reentrant variant on the engine: recomputation in backward (once per
backward, stopping early), memory let go after the forward, nested checkpoints, the RNG state,
the CheckpointError of a rerun that differs, selective checkpointing's policies and
checkpoint_sequential. Each program takes gradtool or torch: the comparison with torch is
tests/parity/test_checkpoint.py."""
import contextlib
import functools
import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt


def error(call):
    try:
        call()
    except Exception as e:
        return type(e).__name__, str(e).replace("torch.", "gradtool.").replace(
            "gradtool.utils.checkpoint", "torch.utils.checkpoint")
    return None


def recomputation_program(lib, values):
    """The function runs once in the forward and once per backward, stopping after its last
    saved tensor unless early stop is off; kwargs and non-tensor outputs pass through; the
    graph's nodes are the plain call's."""
    C = lib.utils.checkpoint
    calls = []

    def f(x, *, scale):
        calls.append("start")
        y = (x.sin() * scale).exp()
        calls.append("end")  # after the last saved tensor: early stop skips it
        return y, "label", 3

    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    y, label, three = C.checkpoint(f, x, use_reentrant=False, scale=2.0)
    seen = [list(calls), label, three, type(y.grad_fn).__name__,
            type(y.grad_fn.next_functions[0][0]).__name__, y.tolist()]
    (gx,) = lib.autograd.grad(y.sum(), x, retain_graph=True)
    seen += [list(calls), gx.tolist()]
    y.sum().backward()  # a second backward: recomputed again
    seen += [list(calls), x.grad.tolist()]
    calls.clear()
    with C.set_checkpoint_early_stop(False):
        y, _, _ = C.checkpoint(f, x, use_reentrant=False, scale=2.0)
    y.sum().backward()
    seen.append(list(calls))
    calls.clear()
    with lib.no_grad():  # grad mode off: a plain call, nothing saved to recompute
        seen.append(C.checkpoint(f, x, use_reentrant=False, scale=2.0)[0].requires_grad)
    return seen


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=1, max_size=5))
def test_backward_recomputes_once_and_matches_the_plain_call(values):
    seen = recomputation_program(gt, values)
    x = np.asarray(values)
    expected = np.exp(2 * np.sin(x))
    np.testing.assert_allclose(seen[5], expected, rtol=1e-12)
    grad = expected * 2 * np.cos(x)
    np.testing.assert_allclose(seen[7], grad, rtol=1e-12)
    np.testing.assert_allclose(seen[9], grad, rtol=1e-12)
    assert seen[:5] == [["start", "end"], "label", 3, "ExpBackward0", "MulBackward0"]
    assert seen[6] == ["start", "end", "start"]  # recomputed up to its last saved tensor
    assert seen[8] == ["start", "end", "start", "start"]
    assert seen[10] == ["start", "end", "start", "end"]  # early stop off: the whole function
    assert seen[11] is False


def test_activations_inside_are_let_go_after_the_forward():
    """The plain call keeps what its ops save (sin's input aside: the caller's x); the
    checkpointed call keeps none of the arrays made inside it."""
    C = gt.utils.checkpoint
    inside = []

    def f(x):
        a = x.exp()
        b = a.tanh()
        inside.extend(weakref.ref(t._data) for t in (a, b))
        return b * a

    x = gt.linspace(-1, 1, 4, dtype=gt.float64).requires_grad_()
    plain = f(x)
    gc.collect()
    assert all(r() is not None for r in inside)
    inside.clear()
    y = C.checkpoint(f, x, use_reentrant=False)
    gc.collect()
    assert [r() for r in inside] == [None, None]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), gt.autograd.grad(plain.sum(), x)[0].numpy())


def nested_and_no_grad_program(lib):
    """Nested checkpoints recompute outside in; a no_grad block inside saves nothing."""
    C = lib.utils.checkpoint
    calls = []

    def inner(x):
        calls.append("inner")
        return x.cos().exp()

    def outer(x):
        calls.append("outer")
        with lib.no_grad():
            shift = x.sum().tanh()
        return C.checkpoint(inner, x.sin() + shift, use_reentrant=False).tanh()

    x = lib.linspace(-1, 1, 5, dtype=lib.float64).requires_grad_()
    y = C.checkpoint(outer, x, use_reentrant=False)
    y.sum().backward()
    return [calls, y.tolist(), x.grad.tolist()]


def test_nested_checkpoints_recompute_outside_in():
    calls, values, grad = nested_and_no_grad_program(gt)
    assert calls == ["outer", "inner", "outer", "inner", "inner"]
    x = np.linspace(-1, 1, 5)
    inner = np.sin(x) + np.tanh(x.sum())
    np.testing.assert_allclose(values, np.tanh(np.exp(np.cos(inner))), rtol=1e-12)
    expected = (1 - np.asarray(values) ** 2) * np.exp(np.cos(inner)) * -np.sin(inner) * np.cos(x)
    np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_the_recomputation_draws_the_forwards_dropout_mask_and_leaves_the_generator():
    C = gt.utils.checkpoint
    x = gt.linspace(0.5, 1.5, 40, dtype=gt.float64).requires_grad_()
    gt.manual_seed(3)
    y = C.checkpoint(lambda x: gt.nn.functional.dropout(x.exp(), 0.5), x, use_reentrant=False)
    after_forward = gt.get_rng_state()
    y.sum().backward()
    assert gt.equal(gt.get_rng_state(), after_forward)  # the rerun restored the generator
    kept = y.detach().numpy() != 0
    assert 0 < kept.sum() < 40
    np.testing.assert_allclose(x.grad.numpy(), kept * 2 * np.exp(x.detach().numpy()),
                               rtol=1e-12)


def mismatch_program(lib):
    """A function that saves other tensors on its rerun: torch's CheckpointError, with the
    debug trace when asked; an unpack twice; the argument checks."""
    C = lib.utils.checkpoint
    x = lib.linspace(-1, 1, 5, dtype=lib.float64).requires_grad_()
    runs = []

    def changing(kind):
        def f(x):
            runs.append(1)
            if len(runs) == 1:
                return x.sin().exp()
            if kind == "fewer":
                return x.sin()
            if kind == "shape":
                return x[:2].sin().exp()
            if kind == "values":  # the same saved shapes: nothing to notice
                return x.cos().exp()
            return x.sin().exp().cos()  # "more"
        return f

    seen = []
    for kind, early_stop in [("fewer", True), ("shape", True), ("more", False)]:
        runs.clear()
        y = C.checkpoint(changing(kind), x, use_reentrant=False, early_stop=early_stop)
        seen.append(error(lambda: y.sum().backward()))
    runs.clear()
    y = C.checkpoint(changing("values"), x, use_reentrant=False, determinism_check="none")
    seen.append(lib.autograd.grad(y.sum(), x)[0].tolist())  # the rerun's saved values, unseen
    runs.clear()
    y = C.checkpoint(changing("shape"), x, use_reentrant=False, debug=True)
    try:
        y.sum().backward()
    except C.CheckpointError as e:
        seen.append([type(e.__cause__).__name__,
                     "Stack traces of the operators that ran in the original forward" in str(e),
                     "Operations executed during recomputation:" in str(e),
                     str(e).count("(1 of 2 in original)"),  # (torch logs its detaches too)
                     "in recompute)" in str(e).split("2. Stack traces")[1].split("3. Log")[0]])
    y = C.checkpoint(lambda x: x.exp(), x, use_reentrant=False)
    with C.GraphExecGroup():
        lib.autograd.grad(y.sum(), x, retain_graph=True)
        seen.append(error(lambda: lib.autograd.grad(y.sum(), x, retain_graph=True)))
    seen.append(lib.autograd.grad(y.sum(), x)[0].tolist())  # outside the group: recomputed
    return seen


def test_a_rerun_that_differs_is_torchs_checkpoint_error():
    seen = mismatch_program(gt)
    fewer, shape, more, unchecked, debug, overlap, grad = seen
    assert fewer == ("CheckpointError", fewer[1])
    assert fewer[1].startswith("torch.utils.checkpoint: A different number of tensors was "
                               "saved during the original forward and recomputation.\n"
                               "Number of tensors saved during forward: 2\n"
                               "Number of tensors saved during recomputation: 1.\n")
    assert shape[1].startswith("torch.utils.checkpoint: Recomputed values for the following "
                               "tensors have different metadata than during the forward "
                               "pass.\ntensor at position 0:\n")
    assert "'shape': gradtool.Size([2])" in shape[1]
    assert more[1].startswith("torch.utils.checkpoint: trying to save more tensors during "
                              "recomputation than during the original forward pass.")
    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(unchecked, np.exp(np.cos(x)) * np.cos(x), rtol=1e-12)
    assert debug == ["CheckpointError", True, True, 1, True]
    assert overlap[1].startswith("torch.utils.checkpoint: Unpack is being triggered for a "
                                 "tensor that was already unpacked once. Performing two "
                                 "backward calls that overlap")
    np.testing.assert_allclose(grad, np.exp(x), rtol=1e-12)


def selective_program(lib):
    """Selective checkpointing: the policy sees each op (torch.ops.aten overloads) in the
    forward only; the outputs it saves are taken back (a mutation of one is refused), the
    others recomputed; a list of ops is a MUST_SAVE policy; a second backward is refused."""
    C = lib.utils.checkpoint
    aten = lib.ops.aten
    seen, policy_calls = [], []

    def policy(ctx, op, *args, **kwargs):
        policy_calls.append((str(op), ctx.is_recompute, type(ctx.op_output).__name__))
        return C.CheckpointPolicy.MUST_SAVE if op == aten.mm.default else \
            C.CheckpointPolicy.PREFER_RECOMPUTE

    def f(a, b):
        return lib.sigmoid(lib.matmul(lib.matmul(a, b), b)) * a

    a = lib.linspace(-1, 1, 6, dtype=lib.float64).reshape(2, 3).requires_grad_()
    b = lib.linspace(0, 1, 9, dtype=lib.float64).reshape(3, 3).requires_grad_()
    contexts = functools.partial(C.create_selective_checkpoint_contexts, policy)
    y = C.checkpoint(f, a, b, use_reentrant=False, context_fn=contexts)
    y.sum().backward(retain_graph=True)
    seen += [policy_calls, type(y.grad_fn).__name__, y.tolist(), a.grad.tolist(),
             b.grad.tolist()]
    seen.append(error(lambda: y.sum().backward()))  # the cached mm outputs are used up
    contexts = functools.partial(C.create_selective_checkpoint_contexts, [aten.mm.default])
    y = C.checkpoint(f, a, b, use_reentrant=False, context_fn=contexts)
    seen.append(lib.autograd.grad(y.sum(), b)[0].tolist())

    def mutating(a, b):
        h = lib.mm(a, b)
        out = h.exp()
        h.mul_(2)  # the cached mm output changes after the policy kept it
        return out * h

    for allow in (False, True):
        contexts = functools.partial(C.create_selective_checkpoint_contexts,
                                     [aten.mm.default], allow_cache_entry_mutation=allow)
        y = C.checkpoint(mutating, a, b, use_reentrant=False, context_fn=contexts)
        seen.append(error(lambda: y.sum().backward()))
    seen += [error(lambda: C.create_selective_checkpoint_contexts([aten.mm])),
             error(lambda: C.create_selective_checkpoint_contexts(["mm"])),
             error(lambda: aten.mm.Tensor),
             [str(aten.mm.default), repr(aten.mul.Tensor), aten.mul.Tensor.name(),
              str(aten.sin), aten.sin.default(lib.zeros(1)).tolist()]]
    return seen


def test_selective_checkpointing_keeps_what_the_policy_saves():
    seen = selective_program(gt)
    policy_calls, node, values, grad_a, grad_b, again, listed = seen[:7]
    assert policy_calls == [("aten.mm.default", False, "Tensor")] * 2 + [
        ("aten.sigmoid.default", False, "Tensor"), ("aten.mul.Tensor", False, "Tensor")]
    a = np.linspace(-1, 1, 6).reshape(2, 3)
    b = np.linspace(0, 1, 9).reshape(3, 3)
    s = 1 / (1 + np.exp(-(a @ b @ b)))
    np.testing.assert_allclose(values, s * a, rtol=1e-12)
    g = a * s * (1 - s)  # the gradient at a @ b @ b
    np.testing.assert_allclose(grad_a, s + g @ b.T @ b.T, rtol=1e-12)
    np.testing.assert_allclose(grad_b, (a @ b).T @ g + a.T @ g @ b.T, rtol=1e-12)
    np.testing.assert_allclose(listed, grad_b, rtol=1e-12)
    assert node == "MulBackward0"
    assert again == ("RuntimeError", "Trying to backward an extra time. You are only allowed "
                     "to backward once on any region computed under selective activation "
                     "checkpoint.")
    assert seen[7] == ("RuntimeError", "Tensor cached during selective activation checkpoint "
                       "has been mutated")
    assert seen[8] is None
    assert seen[9][1].startswith("Expected op in `op_list` to be an OpOverload but got: "
                                 "aten.mm of type <class 'gradtool._ops.OpOverloadPacket'>. "
                                 "Please update the OpOverloadPacket")
    assert seen[10][1] == "Expected op in `op_list` to be an OpOverload but got: mm of type " \
                          "<class 'str'>. "
    assert seen[11] == ("AttributeError", "The underlying op of 'aten.mm' has no overload "
                                          "name 'Tensor'")
    assert seen[12] == ["aten.mm.default", "<OpOverload(op='aten.mul', overload='Tensor')>",
                        "aten::mul.Tensor", "aten.sin", [0.0]]


def test_a_saved_output_is_kept_and_a_recomputed_one_let_go():
    C = gt.utils.checkpoint
    kept = []

    def f(a):
        h = gt.mm(a, a)
        e = h.exp()
        kept.extend(weakref.ref(t._data) for t in (h, e))
        return e.sum()

    a = gt.eye(3, dtype=gt.float64).requires_grad_()
    contexts = functools.partial(C.create_selective_checkpoint_contexts,
                                 [gt.ops.aten.mm.default])
    y = C.checkpoint(f, a, use_reentrant=False, context_fn=contexts)
    gc.collect()
    assert [r() is not None for r in kept] == [True, False]
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.exp(np.eye(3)), rtol=1e-12)


def sequential_program(lib, use_reentrant):
    """checkpoint_sequential: every segment but the last checkpointed (rerun in backward)."""
    C = lib.utils.checkpoint
    calls = []

    class Step(lib.nn.Module):
        def __init__(self, i):
            super().__init__()
            self.i = i

        def forward(self, x):
            calls.append(self.i)
            return (x * (self.i + 1)).sin()

    model = lib.nn.Sequential(*[Step(i) for i in range(4)])
    x = lib.linspace(-1, 1, 3, dtype=lib.float64).requires_grad_()
    y = C.checkpoint_sequential(model, 2, x, use_reentrant=use_reentrant)
    y.sum().backward()
    return [calls, y.tolist(), x.grad.tolist(),
            error(lambda: C.checkpoint_sequential(model, 2, x, use_reentrant=False, other=1))]


def test_checkpoint_sequential_reruns_its_checkpointed_segments():
    for use_reentrant in (False, True):
        calls, values, grad, unexpected = sequential_program(gt, use_reentrant)
        assert calls == [0, 1, 2, 3, 0, 1]  # the first segment again, in backward
        assert unexpected == ("ValueError", "Unexpected keyword arguments: other")
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant"):
        gt.utils.checkpoint.checkpoint_sequential([gt.sin], 1, gt.ones(1))


def test_a_context_fn_enters_its_forward_context_then_its_recompute_context():
    C = gt.utils.checkpoint
    entered = []

    @contextlib.contextmanager
    def record(name):
        entered.append(name)
        yield

    x = gt.ones(2, requires_grad=True)
    y = C.checkpoint(gt.exp, x, use_reentrant=False,
                     context_fn=lambda: (record("forward"), record("recompute")))
    assert entered == ["forward"]
    y.sum().backward()
    assert entered == ["forward", "recompute"]


def test_the_recomputation_takes_a_saved_output_back_without_computing_it(monkeypatch):
    from gradtool.engine.autograd.ops import derivatives as D
    runs = []
    kernel = D.MM.forward
    monkeypatch.setattr(D.MM, "forward", lambda *a: runs.append(1) or kernel(*a))
    C = gt.utils.checkpoint
    a = gt.linspace(-1, 1, 9, dtype=gt.float64).reshape(3, 3).requires_grad_()
    for saved, computed in (([gt.ops.aten.mm.default], 1), ([], 2)):
        runs.clear()
        contexts = functools.partial(C.create_selective_checkpoint_contexts, saved)
        y = C.checkpoint(lambda a: gt.mm(a, a).sin().sum(), a, use_reentrant=False,
                         context_fn=contexts)
        y.backward()
        assert len(runs) == computed  # the forward's, and the recomputation's unless saved



def suppressing_context_program(lib):
    """A context_fn whose forward context swallows the function's exception: torch's error."""
    C = lib.utils.checkpoint

    def failing(x):
        raise ValueError("inside")

    x = lib.ones(2, requires_grad=True)
    return [error(lambda: C.checkpoint(failing, x, use_reentrant=False, context_fn=lambda: (
        contextlib.suppress(ValueError), contextlib.nullcontext()))),
            error(lambda: C.checkpoint(failing, x, use_reentrant=False))]


def test_a_forward_context_that_swallows_the_error_is_refused():
    assert suppressing_context_program(gt) == [
        ("RuntimeError", "torch.utils.checkpoint: the forward context provided by context_fn "
                         "suppressed an exception raised during the checkpointed forward. This "
                         "is not supported because checkpoint cannot return a value for a "
                         "failed forward."),
        ("ValueError", "inside")]


def shared_saved_program(lib):
    """Ops whose formulas share a saved tensor (pow's self for both inputs, atan2's): its
    unpack hook runs once per backward of the node, so checkpoint unpacks each holder once."""
    unpacked = []
    x = lib.linspace(0.5, 1.5, 4, dtype=lib.float64).requires_grad_()
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t,
                                                lambda t: unpacked.append(1) or t):
        y = x.pow(x).sum() + lib.atan2(x, x + 2).sum()
    y.backward()
    plain = x.grad.tolist()
    x.grad = None
    f = lambda x: x.pow(x).sum() + lib.atan2(x, x + 2).sum()  # noqa: E731
    lib.utils.checkpoint.checkpoint(f, x, use_reentrant=False).backward()
    return [len(unpacked), plain, x.grad.tolist()]


def test_a_value_two_formulas_read_is_unpacked_once():
    count, plain, checkpointed = shared_saved_program(gt)
    x = np.linspace(0.5, 1.5, 4)
    expected = x ** x * (np.log(x) + 1) + 2 / (x ** 2 + (x + 2) ** 2)
    np.testing.assert_allclose(plain, expected, rtol=1e-12)
    np.testing.assert_allclose(checkpointed, expected, rtol=1e-12)
    assert count == 5  # pow: self, exponent, result; atan2: self, other
