"""torch.multiprocessing against torch's: the names it re-exports, spawn's results and the
exceptions a failed process raises in the parent. Tests marked parity, skipped without
torch."""
import pytest

from gradtool.engine import multiprocessing as gt_mp
from tests.engine import spawned_workers

pytestmark = pytest.mark.parity


def _failure(mp, fn, args):
    with pytest.raises((mp.ProcessRaisedException, mp.ProcessExitedException)) as caught:
        mp.spawn(fn, args=args, nprocs=1)
    lines = str(caught.value).strip().splitlines()
    return (type(caught.value).__name__, caught.value.error_index, lines[0], lines[-1],
            getattr(caught.value, "exit_code", None))


@pytest.mark.slow  # (five processes that each import torch: most of a minute)
def test_multiprocessing_is_torchs(tmp_path):
    pytest.importorskip("torch")
    import torch.multiprocessing as torch_mp
    seen = []
    for mp in (gt_mp, torch_mp):
        folder = tmp_path / mp.__name__
        folder.mkdir()
        mp.spawn(spawned_workers.write_index, args=(str(folder), 7), nprocs=2)
        seen.append((sorted(p.read_text() for p in folder.iterdir()),
                     _failure(mp, spawned_workers.raise_in_one, (0,)),
                     _failure(mp, spawned_workers.exit_with_code, (2,)),
                     mp.get_sharing_strategy(), mp.get_all_sharing_strategies(),
                     sorted(set(dir(torch_mp)) & {"Process", "Queue", "get_context", "Pool",
                                                  "cpu_count", "set_start_method"})))
    assert seen[0] == seen[1]
    assert set(n for n in dir(torch_mp) if not n.startswith("_")) - set(dir(gt_mp)) <= {
        "reductions", "spawn", "torch", "sys", "multiprocessing", "queue",
        "init_reductions", "SpawnContext", "ENV_VAR_PARALLEL_START", "_prctl_pr_set_pdeathsig"}
