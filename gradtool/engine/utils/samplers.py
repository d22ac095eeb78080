"""The samplers of torch.utils.data beyond the basic ones: DistributedSampler (each process's
share of a dataset, shuffled as torch's is, so the same seed and epoch give the same indices
as torch's) and SubsetRandomSampler; get_worker_info for the in-process DataLoader."""
import math

import numpy as np

from ..autograd import creation
from .data import Sampler  # (data.py imports this file after defining Sampler)


def torch_randperm(n, seed):
    """torch.randperm(n) from a torch.Generator seeded with `seed`: the CPU generator is a
    Mersenne Twister (mt19937, seeded by init_genrand, as numpy's legacy seeding), and
    randperm is a Fisher-Yates shuffle drawing one 32-bit number per position."""
    bits = np.random.MT19937()
    bits._legacy_seeding(seed)
    draws = bits.random_raw(max(n - 1, 0))
    order = list(range(n))
    for i in range(n - 1):
        j = i + int(draws[i]) % (n - i)
        order[i], order[j] = order[j], order[i]
    return order


class DistributedSampler(Sampler):
    """The indices of the dataset this process (rank of num_replicas) reads: every
    num_replicas-th of a list padded (or, drop_last, cut) to a multiple of num_replicas,
    shuffled each epoch by seed + epoch. num_replicas and rank default to the process
    group's."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        from .. import distributed as dist
        num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
        rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:  # repeat from the start until every process has num_samples
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """A new shuffle each epoch (the same on every process)."""
        self.epoch = epoch


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order each pass."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in creation.randperm(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


def get_worker_info():
    """None: the engine's DataLoader loads in the calling process, never in a worker (torch
    says None in the main process too)."""
    return None
