"""torch.func on the engine against torch.func itself: the programs of
tests/engine/test_func.py (per-sample gradients, composed transforms, vmap over the common
ops, functional_call with tied weights, stack_module_state) give the same values, and the
refusals the same messages. Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_func as programs

pytestmark = pytest.mark.parity


def _numpy(x):
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return np.asarray(x)


def _assert_same(mine, theirs, tol=1e-10):
    if isinstance(mine, dict):
        assert set(mine) == set(theirs)
        for k in mine:
            _assert_same(mine[k], theirs[k], tol)
    elif isinstance(mine, (tuple, list)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            _assert_same(a, b, tol)
    else:
        np.testing.assert_allclose(_numpy(mine), _numpy(theirs), rtol=tol, atol=tol)


def _both(torch, arrays):
    return ([gt.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays])


def test_per_sample_grads_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 6)), np.array([0, 2, 1, 1, 0])
    (gx, gy), (tx, ty) = _both(torch, [x, y])
    _assert_same(programs.per_sample_grads(gt, gx, gy), programs.per_sample_grads(torch, tx, ty))


def test_cnn_per_sample_grads_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 1, 6, 6)), np.array([0, 3, 1])
    (gx, gy), (tx, ty) = _both(torch, [x, y])
    _assert_same(programs.cnn_per_sample_grads(gt, gx, gy),
                 programs.cnn_per_sample_grads(torch, tx, ty))


def test_composed_transforms_match_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal(4)
    (gx,), (tx,) = _both(torch, [x])
    _assert_same(programs.composed(gt, gx), programs.composed(torch, tx))


def test_vmap_over_the_common_ops_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((6, 4)), rng.standard_normal((6, 4)),
              rng.standard_normal((4, 3))]
    mine, theirs = _both(torch, arrays)
    _assert_same(programs.vmap_ops(gt, *mine), programs.vmap_ops(torch, *theirs))


def test_functional_call_and_ensembles_match_torch():
    torch = pytest.importorskip("torch")
    mine, theirs = programs.functional_call_program(gt), programs.functional_call_program(torch)
    for key in ("tied", "with_buffer"):
        _assert_same(mine[key], theirs[key])
    mine, theirs = programs.ensemble_program(gt), programs.ensemble_program(torch)
    _assert_same(mine["out"] - mine["loop"], theirs["out"] - theirs["loop"])
    assert mine["weight_requires_grad"] == theirs["weight_requires_grad"]


@pytest.mark.parametrize("name", sorted(programs.ERRORS))
def test_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((6, 4))
    mine = programs.error_of(gt, name, gt.tensor(x))
    theirs = programs.error_of(torch, name, torch.tensor(x))
    assert mine == theirs


def test_structures_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    mine, theirs = _both(torch, [rng.standard_normal(4), rng.standard_normal(4)])
    _assert_same(programs.structures(gt, *mine), programs.structures(torch, *theirs))


def test_custom_functions_under_vmap_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    mine, theirs = _both(torch, [rng.standard_normal((3, 2)), rng.standard_normal(2)])
    _assert_same(programs.custom_function_program(gt, *mine),
                 programs.custom_function_program(torch, *theirs))


def test_a_function_with_a_vmap_rule_is_differentiated_as_by_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    mine, theirs = _both(torch, [rng.standard_normal((3, 2)), rng.standard_normal(2)])
    _assert_same(programs.telltale_function_program(gt, *mine),
                 programs.telltale_function_program(torch, *theirs))


def test_nested_forward_mode_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    mine, theirs = _both(torch, [rng.standard_normal(3) for _ in range(3)])
    _assert_same(programs.nested_forward_program(gt, *mine),
                 programs.nested_forward_program(torch, *theirs))


def test_batching_rules_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    mine, theirs = _both(torch, [rng.standard_normal((4, 5, 3)), rng.standard_normal(3)])
    ours = programs.batching_rules_program(gt, *mine)
    torchs = programs.batching_rules_program(torch, *theirs)
    for name in ("bn_shared_stats", "boolean_mask"):
        assert ours.pop(name) == torchs.pop(name)
    _assert_same(ours, torchs)


def test_outer_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    mine, theirs = _both(torch, [rng.standard_normal((3, 2)), rng.standard_normal(2)])
    _assert_same(programs.outer_gradients(gt, *mine), programs.outer_gradients(torch, *theirs))
