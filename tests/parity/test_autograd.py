"""autograd's semantics against torch, the same program through both engines: custom
Function nodes (saved tensors, once_differentiable's error node, mark_dirty's version bump),
.grad accumulated under create_graph, the order of hooks and a non-leaf's grad, materialized
zero gradients, .numpy() under no_grad, the errors of views and inference tensors, and grad
modes inside generators. Tests marked parity, skipped without torch."""
import warnings

import pytest

import gradtool as gt
from tests.engine.test_function import mark_dirty_docstring_example

pytestmark = pytest.mark.parity


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _run_both(torch, program):
    """program(lib) for gradtool and torch (the same code, written once)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's create_graph cycle warning
        return program(gt), program(torch)


def _names(node):
    if node is None:
        return None
    return (node.name().removeprefix("torch::autograd::"),
            [None if f is None else f.name().removeprefix("torch::autograd::")
             for f, _ in node.next_functions])


def test_custom_function_nodes_match_torchs(torch):
    def program(lib):
        class Affine(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                ctx.save_for_backward(x, y)
                ctx.k = k
                return x * k + y

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.k, None, grad
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        node = Affine.apply(x, 2.0, lib.ones(3, dtype=lib.float64)).grad_fn
        saved = sorted(a for a in dir(node) if a.startswith("_saved"))
        form = repr(node).split(" object")[0].replace("gradtool.", "torch.")
        return _names(node), saved, node.k, [t.tolist() for t in node.saved_tensors], form
    mine, theirs = _run_both(torch, program)
    assert mine == theirs


def test_once_differentiable_error_node_matches_torchs(torch):
    def program(lib):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            @(lib.autograd.function.once_differentiable)
            def backward(ctx, grad):
                return grad * 2, None
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        y = Twice.apply(x, 2)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        node = g.grad_fn
        return type(node).__name__, _names(node), node.next_functions[0][0].variable.tolist()
    mine, theirs = _run_both(torch, program)
    assert mine == theirs


def test_grad_accumulated_with_create_graph_matches_torchs_nodes(torch):
    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        shapes = []
        for _ in range(2):
            (x ** 3).sum().backward(create_graph=True)
            shapes.append(_names(x.grad.grad_fn))
        first = x.grad
        x.grad = None
        (x * 2).sum().backward()
        kept = x.grad
        (x * 2).sum().backward()
        return shapes, first.tolist(), kept.tolist(), kept is x.grad, kept._version
    mine, theirs = _run_both(torch, program)
    assert mine == theirs


def test_hook_order_and_grad_of_a_non_leaf_match_torch(torch):
    def program(lib):
        ran = []
        a = lib.ones(3, requires_grad=True)
        b = a * 2
        c = (b * b).sum()
        acc = b.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: ran.append("acc pre"))
        acc.register_hook(lambda gi, go: ran.append("acc post"))
        a.register_hook(lambda g: ran.append("a hook"))
        b.register_hook(lambda g: ran.append("b hook"))
        b.grad_fn.register_prehook(lambda go: ran.append("b pre"))
        b.grad_fn.register_hook(lambda gi, go: ran.append("b post"))
        lib.autograd.grad(c, b, retain_graph=True)
        ran.append("|")
        lib.autograd.grad(c, a, retain_graph=True)
        ran.append("|")
        c.backward(inputs=[b])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            b_grad = b.grad.tolist()
        return ran, b.retains_grad, b_grad, len(caught), a.grad
    mine, theirs = _run_both(torch, program)
    assert mine == theirs


def test_materialized_zeros_and_numpy_under_no_grad_match_torch(torch):
    def program(lib):
        x, unused = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        flags = []
        for create_graph in (False, True):
            _, z = lib.autograd.grad((x * x).sum(), [x, unused], materialize_grads=True,
                                     create_graph=create_graph)
            flags.append(z.requires_grad)
        with lib.no_grad():
            values = x.numpy().tolist()
        return flags, values
    mine, theirs = _run_both(torch, program)
    assert mine == theirs


def test_view_and_inference_errors_match_torch(torch):
    def program(lib):
        errors = []
        with lib.inference_mode():
            t = lib.ones(2)
        for fn in (lambda: (lib.ones(4, requires_grad=True) * 1)[:2].detach_(),
                   lambda: t._version):
            try:
                fn()
                errors.append(None)
            except RuntimeError as e:
                errors.append(str(e).replace("gradtool", "torch"))
        return errors
    mine, theirs = _run_both(torch, program)
    assert mine == theirs


def test_generator_grad_modes_match_torch(torch):
    def program(lib):
        @lib.no_grad()
        def gen():
            yield lib.is_grad_enabled()
            yield lib.is_grad_enabled()
        out = []
        for inside in gen():
            out.append((inside, lib.is_grad_enabled()))
        return out
    mine, theirs = _run_both(torch, program)
    assert mine == theirs


def test_mark_dirty_matches_torch():
    torch = pytest.importorskip("torch")
    mine, theirs = mark_dirty_docstring_example(gt), mark_dirty_docstring_example(torch)
    assert mine[0] == theirs[0]
    assert mine[1].split("which is")[0].replace("gradtool.", "torch.") == \
        theirs[1].split("which is")[0]


@pytest.mark.parametrize("applied", ["once", "per_output"])
def test_gradcheck_calls_backward_as_torchs_does(torch, applied):
    """torch.autograd.gradcheck on a Function with non-tensor inputs and outputs, applied
    once or once per output: the same number of backward calls as torch's, each with the
    same undefined (None) grad_outputs (a backward that counts or asserts on its grads sees
    what it sees under torch)."""
    def program(lib):
        calls = []

        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                ctx.scale = scale
                ctx.save_for_backward(t1, t2, t3)
                return scale, (t1 + t2 * t3) * scale, None, True, (t1 * t2 + t3) * scale, \
                    "bar", t1

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, *grads):
                calls.append(tuple(g is None for g in grads))
                t1, t2, t3 = ctx.saved_tensors
                s = ctx.scale
                return (grads[1] * s + grads[4] * t2 * s + grads[6],
                        grads[1] * t3 * s + grads[4] * t1 * s, None,
                        grads[1] * t2 * s + grads[4] * s)

        t = [lib.rand(5, dtype=lib.double, requires_grad=k < 2) for k in range(3)]
        def once(a, b, c):
            out = Mixed.apply(a, b, 3, c)
            return out[1], out[4], out[6]

        def per_output(a, b, c):
            return [Mixed.apply(a, b, 3, c)[k] for k in (1, 4, 6)]
        ok = lib.autograd.gradcheck(once if applied == "once" else per_output, tuple(t))
        return ok, sorted(set(calls)), len(calls)

    ours, theirs = _run_both(torch, program)
    assert ours == theirs
