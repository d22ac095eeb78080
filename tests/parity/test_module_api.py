"""nn.Module's API against torch: the programs of tests/engine/test_module_api.py (full
backward hooks and their graph, module-global hooks, state_dict hooks, extra state and
versions, dotted paths) give what torch's give. Tests marked parity, skipped without torch."""
import pytest

import gradtool as gt
from tests.engine import test_module_api as programs

pytestmark = pytest.mark.parity


@pytest.mark.parametrize("program", [
    programs.full_backward_hooks, programs.hooks_without_input_grad,
    programs.backward_hook_errors, programs.global_hooks, programs.state_dict_hooks,
    programs.dotted_paths, programs.overridden_save, programs.taken_names,
    programs.late_hooks])
def test_module_api_is_torchs(program):
    torch = pytest.importorskip("torch")
    assert program(gt) == program(torch)


def test_state_dict_errors_are_torchs_but_for_the_library_name():
    torch = pytest.importorskip("torch")
    mine, theirs = (programs.state_dict_errors(lib) for lib in (gt, torch))
    assert mine == [m.replace("torch.", "gradtool.") if isinstance(m, str) else m
                    for m in theirs]
