"""torch.multiprocessing on the engine: Python's multiprocessing under torch's name, and spawn
running fn(i, *args) in new processes, raising the first failure in the parent (the
comparison with torch's messages is tests/parity/test_multiprocessing.py)."""
import multiprocessing

import pytest

import gradtool as gt
from gradtool.engine import multiprocessing as mp
from tests.engine import spawned_workers


def test_pythons_multiprocessing_names_are_there():
    for name in ("Process", "Queue", "get_context", "set_start_method", "cpu_count", "Lock",
                 "Value", "current_process", "Pool"):
        assert getattr(mp, name) is getattr(multiprocessing, name)
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(AssertionError, match="invalid sharing strategy 'x'"):
        mp.set_sharing_strategy("x")


def test_spawn_runs_each_index_and_raises_the_first_failure(tmp_path):
    mp.spawn(spawned_workers.write_index, args=(str(tmp_path), 10), nprocs=2)
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0", "10"]
    with pytest.raises(mp.ProcessRaisedException) as caught:
        mp.spawn(spawned_workers.raise_in_one, args=(0,), nprocs=1)
    assert caught.value.error_index == 0
    assert str(caught.value).startswith("\n\n-- Process 0 terminated with the following error:")
    assert str(caught.value).rstrip().endswith("ValueError: worker 0 failed")
    context = mp.spawn(spawned_workers.exit_with_code, args=(3,), nprocs=1, join=False)
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3"):
        while not context.join():
            pass
