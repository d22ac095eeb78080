"""torch.distributed in one process against torch's gloo group of world size 1: the group's
answers, the collectives' results and errors, DistributedDataParallel and DistributedSampler.
Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt

pytestmark = pytest.mark.parity


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as exc:  # noqa: BLE001 (the comparison is of the exceptions)
        return (type(exc).__name__, str(exc))


def test_a_one_process_group_and_its_collectives_are_torchs(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import torch.distributed  # noqa: F401
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    seen = []
    for lib in (gt, torch):
        dist = lib.distributed
        before = [_outcome(dist.get_rank), _outcome(lambda: dist.init_process_group("gloo")),
                  _outcome(lambda: dist.init_process_group("nccl", init_method="file:///x",
                                                           rank=0, world_size=1)),
                  _outcome(lambda: dist.init_process_group(
                      "gloo", init_method=f"tcp://127.0.0.1:1")),
                  dist.is_available(), dist.is_initialized()]
        dist.init_process_group("gloo", init_method=f"file://{tmp_path}/{lib.__name__}",
                                rank=0, world_size=1)
        try:
            t = lib.tensor([1.5, -2.0])
            gathered = [lib.zeros(2)]
            during = [dist.get_rank(), dist.get_world_size(), dist.get_backend(),
                      _outcome(lambda: dist.init_process_group("gloo")),
                      dist.all_reduce(t), dist.all_reduce(t, op=dist.ReduceOp.MAX),
                      dist.broadcast(t, 0), dist.reduce(t, 0), dist.barrier(),
                      dist.all_gather(gathered, t), _outcome(lambda: dist.broadcast(t, 1)),
                      _outcome(lambda: dist.all_gather([t, t], t)),
                      dist.all_reduce(t, async_op=True).wait(),
                      t.tolist(), gathered[0].tolist(), str(dist.ReduceOp.SUM),
                      sorted(n for n in dir(dist.ReduceOp) if n.isupper())]
            with pytest.warns(FutureWarning, match="reduce_op` is deprecated"):
                during.append(str(dist.reduce_op.SUM))
        finally:
            dist.destroy_process_group()
        seen.append((before, during, dist.is_initialized()))
    assert seen[0] == seen[1]


def test_ddp_and_distributed_sampler_are_torchs(tmp_path):
    torch = pytest.importorskip("torch")
    import torch.distributed  # noqa: F401
    import torch.nn.parallel  # noqa: F401
    import torch.utils.data.distributed  # noqa: F401
    x = np.random.default_rng(1).standard_normal((4, 3))
    seen, grads = [], []
    for lib in (gt, torch):
        DDP = lib.nn.parallel.DistributedDataParallel
        no_group = _outcome(lambda: DDP(lib.nn.Linear(3, 2)))
        lib.distributed.init_process_group(
            "gloo", init_method=f"file://{tmp_path}/{lib.__name__}", rank=0, world_size=1)
        try:
            lib.manual_seed(0)
            plain = lib.nn.Linear(3, 2).double()
            with lib.no_grad():
                plain.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 7))
                plain.bias.copy_(lib.tensor([0.5, -1.0]))
            wrapped = DDP(plain)
            inp = lib.tensor(x, requires_grad=True)
            with wrapped.no_sync():
                wrapped(inp).tanh().sum().backward()
            sampler = lib.utils.data.distributed.DistributedSampler
            shares = []
            for kwargs in ({}, {"num_replicas": 3, "rank": 1, "seed": 5},
                           {"num_replicas": 4, "rank": 3, "drop_last": True, "seed": 2},
                           {"num_replicas": 3, "rank": 2, "shuffle": False}):
                s = sampler(list(range(11)), **kwargs)
                s.set_epoch(3)
                shares.append((list(s), len(s)))
            errors = [_outcome(lambda: DDP(lib.nn.ReLU())),
                      _outcome(lambda: DDP(plain, device_ids=[0])),
                      _outcome(lambda: sampler(list(range(11)), num_replicas=2, rank=2))]
            seen.append((no_group, repr(wrapped), list(wrapped.state_dict()),
                         wrapped.module is plain, shares, errors,
                         lib.utils.data.DistributedSampler is sampler))
            grads.append([plain.weight.grad.numpy(), inp.grad.numpy()])
        finally:
            lib.distributed.destroy_process_group()
    assert seen[0] == seen[1]
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_data_parallel_without_gpus_is_torchs():
    torch = pytest.importorskip("torch")
    import torch.nn.parallel  # noqa: F401
    seen = []
    for lib in (gt, torch):
        m = lib.nn.Linear(2, 2)
        seen.append(_outcome(lambda: lib.nn.parallel.data_parallel(m, lib.ones(1, 2))))
    assert seen[0] == seen[1]
