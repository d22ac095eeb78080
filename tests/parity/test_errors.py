"""Error messages against torch: the mistakes real code makes (shapes, views, backward
twice, in place on a leaf, unused inputs, dtypes, ...) raise torch's exception with torch's
words; gradtool may add after them. Tests marked parity, skipped without torch; the programs
and their key phrases are in tests/engine/test_fidelity_semantics.py."""
import pytest

import gradtool as gt
from tests.engine.test_fidelity_semantics import _error_programs, _message

pytestmark = pytest.mark.parity


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_error_messages_match_torchs(torch):
    mine = {name: _message(fn) for name, fn in _error_programs(gt).items()}
    theirs = {name: _message(fn) for name, fn in _error_programs(torch).items()}
    # gradtool adds where it can: the in-place op's line, anomaly mode's hint (a prefix match)
    for name in theirs:
        assert mine[name] == theirs[name] or mine[name].startswith(theirs[name][:60]), name
