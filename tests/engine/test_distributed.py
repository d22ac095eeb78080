"""torch.distributed as one process: a real process group of world size 1, its collectives
over one process, DistributedDataParallel and DistributedSampler over it (their comparison
with torch is tests/parity/test_distributed.py)."""
import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.errors import NotInEngineError

dist = gt.distributed


@pytest.fixture
def group(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0,
                            world_size=1)
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def test_a_group_starts_answers_and_ends(group):
    assert dist.is_available() and dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("gloo")
    dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.get_rank()


def test_the_collectives_over_one_process_leave_the_tensors_as_they_are(group):
    t = gt.tensor([1.0, -2.0])
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.AVG):
        assert dist.all_reduce(t, op=op) is None
    dist.broadcast(t, src=0)
    dist.reduce(t, dst=0)
    assert t.tolist() == [1.0, -2.0]
    gathered = [gt.zeros(2)]
    work = dist.all_gather(gathered, t, async_op=True)
    assert work.wait() and work.is_completed() and gathered[0].tolist() == [1.0, -2.0]
    objects = [None]
    dist.all_gather_object(objects, {"epoch": 3})
    assert objects == [{"epoch": 3}]
    with pytest.raises(RuntimeError, match="invalid root rank: 1"):
        dist.broadcast(t, src=1)


def test_what_one_process_cannot_do_is_refused(tmp_path, monkeypatch):
    with pytest.raises(NotInEngineError, match="rank 1 of world size 2"):
        dist.init_process_group("gloo", init_method=f"file://{tmp_path}/s?rank=1&world_size=2")
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="environment variable RANK expected"):
        dist.init_process_group("gloo")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    with pytest.raises(ValueError, match="environment variable MASTER_ADDR expected"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()


def test_env_rendezvous_reads_the_environment(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    dist.init_process_group(backend="gloo", init_method="env://")
    try:
        assert dist.get_world_size() == 1
    finally:
        dist.destroy_process_group()


def test_ddp_over_one_process_is_the_module_with_its_own_gradients(group):
    gt.manual_seed(0)
    plain = gt.nn.Linear(3, 2).double()
    wrapped = gt.nn.parallel.DistributedDataParallel(plain)
    assert wrapped.module is plain and list(wrapped.state_dict()) == ["module.weight",
                                                                      "module.bias"]
    x = gt.randn(4, 3, dtype=gt.float64)
    with wrapped.no_sync():
        wrapped(x).pow(2).sum().backward()
    expected = 2 * (x @ plain.weight.T + plain.bias).T @ x
    np.testing.assert_allclose(plain.weight.grad.numpy(), expected.detach().numpy())
    with pytest.raises(RuntimeError, match="doesn't have any parameter"):
        gt.nn.parallel.DistributedDataParallel(gt.nn.ReLU())


def test_distributed_sampler_splits_pads_and_shuffles_by_epoch():
    data = list(range(10))
    shares = [list(gt.utils.data.DistributedSampler(data, 3, r, shuffle=False)) for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded from the start
    dropped = gt.utils.data.DistributedSampler(data, 3, 2, shuffle=False, drop_last=True)
    assert list(dropped) == [2, 5, 8] and len(dropped) == 3
    sampler = gt.utils.data.DistributedSampler(data, 1, 0, seed=4)
    first = list(sampler)
    assert sorted(first) == data and list(sampler) == first  # one order per epoch
    sampler.set_epoch(1)
    assert list(sampler) != first
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval"):
        gt.utils.data.DistributedSampler(data, 3, 3)
