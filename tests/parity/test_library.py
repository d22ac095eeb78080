"""torch.library on the engine against PyTorch: the same custom-op programs
(tests/engine/test_library.py) give the same values, gradients, node names, opcheck verdicts
and error messages."""
import re
import warnings

import pytest

import gradtool
from tests.engine.test_library import (FAKES, aliasing, fake_of, library_op, no_autograd,
                                       opcheck_cases, scaled_sin, verdicts, x64)

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def both(program):
    """program(engine) on gradtool's engine and on torch."""
    return program(gradtool), program(torch)


def numpy(t):
    return t.detach().numpy() if hasattr(t, "detach") else t


def test_values_gradients_node_names_and_saved_tensors():
    def run(T):
        op = scaled_sin(T, f"gt_parity::sin_{T.__name__}")
        x = T.tensor([-1.0, -0.2, 0.3, 1.0], dtype=T.float64, requires_grad=True)
        y = op(x, 3.0)
        name = y.grad_fn.name().replace(T.__name__, "ENGINE")
        saved = len(y.grad_fn.saved_tensors)
        (g,) = T.autograd.grad(y.sum(), x)
        return numpy(y), numpy(g), name, saved
    ours, theirs = both(run)
    assert ours[0].tolist() == pytest.approx(theirs[0].tolist())
    assert ours[1].tolist() == pytest.approx(theirs[1].tolist())
    assert ours[2:] == theirs[2:]


def test_the_missing_autograd_error_is_torchs():
    def run(T):
        op = no_autograd(T)
        y = op(x64(T, 3))
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        return re.sub(r"gt_test\.cube_\d+", "OP", str(e.value)), y.requires_grad
    ours, theirs = both(run)
    assert ours == theirs


def test_the_aliasing_error_is_torchs():
    def run(T):
        op = aliasing(T)
        with pytest.raises(RuntimeError) as e:
            op(x64(T, 3, requires_grad=False))
        return str(e.value).split("): ", 1)[1]  # after "(with implementation in <module>)"
    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.parametrize("index", range(8))
def test_opcheck_verdicts_are_torchs(index):
    (name, op, args, _), (_, top, targs, _) = opcheck_cases(gradtool)[index], \
        opcheck_cases(torch)[index]
    ours = verdicts(gradtool.library.opcheck(op, args, raise_exception=False))
    theirs = verdicts(torch.library.opcheck(top, targs, raise_exception=False))
    assert ours == theirs, name


@pytest.mark.parametrize("what", sorted(FAKES))
def test_the_fake_kernel_mismatch_message_is_torchs(what):
    def run(T):
        make, _ = FAKES[what]
        result = T.library.opcheck(fake_of(T, make(T)), (x64(T, 2, 3),),
                                   raise_exception=False)["test_faketensor"]
        text = re.sub(r"gt_test\.twice_\d+", "OP", str(result))
        return text.replace("gradtool.", "torch.")
    ours, theirs = both(run)
    assert ours == theirs


def test_a_library_op_without_autograd_fails_opcheck_as_on_torch():
    def run(T):
        lib, packet = library_op(T, with_autograd=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return verdicts(T.library.opcheck(packet.default, (x64(T, 3),),
                                              raise_exception=False))
    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.parametrize("source", [
    "def f(x): ...",
    "def f(x: Tensor): ...",
    "def f(x: Tensor, y: Optional[Tensor], zs: List[Tensor], n: int = 2, *, s: str = 'a') "
    "-> Tuple[Tensor, Tensor]: ...",
])
def test_inferred_schemas_and_their_errors_are_torchs(source):
    def run(T):
        import typing
        namespace = {"Tensor": T.Tensor, **{n: getattr(typing, n) for n in
                                            ("Optional", "List", "Tuple")}}
        exec(source, namespace)
        try:
            return T.library.infer_schema(namespace["f"], mutates_args=("x",))
        except ValueError as e:
            return str(e).split(" Got func")[0]
    ours, theirs = both(run)
    assert ours == theirs


def test_a_declared_mutation_moves_the_version_on_as_on_torch():
    from tests.engine.test_library import declared_mutation_versions
    ours, theirs = both(declared_mutation_versions)
    assert ours == theirs


def test_an_output_that_views_an_input_is_refused_as_on_torch():
    from tests.engine.test_library import view_of_input

    def run(T):
        with pytest.raises(RuntimeError) as e:
            view_of_input(T)(x64(T, 2, 3, requires_grad=False))
        return str(e.value).split("): ", 1)[1]
    ours, theirs = both(run)
    assert ours == theirs


def test_list_arguments_and_results_get_torchs_gradients_node_edges_and_needs_input_grad():
    from tests.engine.test_library import split_scaled, weighted_sum

    def run(T):
        def given(*values, requires_grad=True):
            return T.tensor(values, dtype=T.float64, requires_grad=requires_grad)
        op = weighted_sum(T)
        xs = [given(0.5, -1.0, 2.0), given(1.5, 0.25, -3.0) * 2,
              given(4.0, 1.0, 0.0, requires_grad=False)]
        w = given(-0.5, 3.0, 1.25)
        y = op(xs, w)
        edges = [type(n).__name__ if n else None for n, _ in y.grad_fn.next_functions]
        grads = T.autograd.grad(y.sum(), [xs[0], w])
        parts = split_scaled(T)(w, 3)
        (gw,) = T.autograd.grad(parts[0].sum() + (parts[2] * 10).sum(), w)
        return numpy(y).tolist(), edges, [numpy(g).tolist() for g in grads + (gw,)]
    ours, theirs = both(run)
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2], theirs[2]):
        assert a == pytest.approx(b)


def test_a_backward_of_the_wrong_structure_is_refused_as_on_torch():
    from tests.engine.test_library import wrong_structure

    def run(T):
        with pytest.raises(RuntimeError) as e:
            wrong_structure(T)([x64(T, 2), x64(T, 2)]).sum().backward()
        return str(e.value)
    ours, theirs = both(run)
    assert ours == theirs


def test_custom_ops_under_vmap_and_forward_mode_do_as_on_torch():
    from tests.engine.test_library import custom_op_transforms
    ours, theirs = both(custom_op_transforms)
    assert set(ours) == set(theirs)
    for key in ours:
        a, b = ours[key], theirs[key]
        if key in ("rule_calls", "nested_calls", "pair_seen", "rule_node") or \
                isinstance(a, str) or a is None:
            assert a == b, key
            continue
        for mine, torchs in zip(a if isinstance(a, tuple) else (a,),
                                b if isinstance(b, tuple) else (b,)):
            assert numpy(mine).shape == numpy(torchs).shape, key
            assert numpy(mine).ravel().tolist() == pytest.approx(numpy(torchs).ravel().tolist()), \
                key


def test_ops_keep_their_tags_as_on_torch():
    from tests.engine.test_library import tagged_ops
    ours, theirs = both(tagged_ops)
    assert ours[:3] == theirs[:3]
