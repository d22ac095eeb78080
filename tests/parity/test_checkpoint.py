"""utils.checkpoint's non-reentrant variant against torch's CPU build: when and how often the
function reruns, values, gradients and node names, nested checkpoints, the CheckpointError
messages, selective checkpointing's policy calls and errors, checkpoint_sequential. The
programs are tests/engine/test_checkpoint.py's. Tests marked parity, skipped without torch."""
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from tests.engine import test_checkpoint as programs

pytestmark = pytest.mark.parity


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint  # noqa: F401 (a submodule to import)
    return torch


def assert_same(mine, theirs, where="seen"):
    """Equal, floats to 1e-12 (the two libraries' kernels round differently)."""
    if isinstance(mine, float):
        assert theirs == pytest.approx(mine, rel=1e-12, abs=1e-15), where
    elif isinstance(mine, (list, tuple)):
        assert isinstance(theirs, (list, tuple)) and len(mine) == len(theirs), where
        for i, (a, b) in enumerate(zip(mine, theirs)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert mine == theirs, where


@settings(max_examples=5, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=1, max_size=4))
def test_recomputation_is_torchs(torch, values):
    assert_same(programs.recomputation_program(gt, values),
                programs.recomputation_program(torch, values))


def test_nested_checkpoints_and_no_grad_inside_are_torchs(torch):
    assert_same(programs.nested_and_no_grad_program(gt),
                programs.nested_and_no_grad_program(torch))


def without_pytest_handlers():
    # torch's debug trace logs each op to its "LoggingTensor" logger with arguments only its
    # own handler formats: pytest's capturing handlers, once they are on that logger, fail on
    # them (here and in any later test that turns checkpoint's debug on)
    logger = logging.getLogger("LoggingTensor")
    logger.handlers = [h for h in logger.handlers if type(h).__module__ != "_pytest.logging"]


def test_checkpoint_errors_are_torchs(torch):
    without_pytest_handlers()
    try:
        assert_same(programs.mismatch_program(gt), programs.mismatch_program(torch))
    finally:
        without_pytest_handlers()


def test_selective_checkpointing_is_torchs(torch):
    assert_same(programs.selective_program(gt), programs.selective_program(torch))


def test_saved_values_two_formulas_read_are_unpacked_as_torchs(torch):
    assert_same(programs.shared_saved_program(gt), programs.shared_saved_program(torch))


def test_a_swallowing_forward_context_is_torchs_error(torch):
    assert programs.suppressing_context_program(gt) == \
        programs.suppressing_context_program(torch)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_is_torchs(torch, use_reentrant):
    assert_same(programs.sequential_program(gt, use_reentrant),
                programs.sequential_program(torch, use_reentrant))
