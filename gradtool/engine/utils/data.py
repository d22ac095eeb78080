"""torch.utils.data: datasets, samplers, random_split and a DataLoader that loads in the
calling process (num_workers is accepted and ignored: no worker processes). Shuffling draws
from gradtool.manual_seed's generator."""
import bisect
import itertools
import math
import numbers

import numpy as np

from ..autograd import creation, dtypes
from ..autograd.free_functions import stack
from ..autograd.tensor import Tensor


class Dataset:
    """A map-style dataset: __getitem__(index) and __len__."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: __iter__."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Sample i is (t[i] for each tensor): the tensors share their first dim."""

    def __init__(self, *tensors):
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The samples of dataset at indices."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths, generator=None):
    """Disjoint random Subsets of the given lengths, or of fractions of len(dataset) (the
    remainder given round-robin, as torch)."""
    if generator is not None:
        raise TypeError("random_split: generator= is not supported by gradtool's engine; "
                        "seed with manual_seed instead")
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = creation.randperm(sum(lengths)).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - length:end]) for end, length in zip(ends, lengths)]


class Sampler:
    """Yields dataset indices."""

    def __init__(self, data_source=None):
        pass


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation each epoch (or num_samples draws with replacement)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement = data_source, replacement
        self._num_samples = num_samples

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.replacement:
            return iter(creation.randint(n, (self.num_samples,)).tolist())
        rounds = -(-self.num_samples // n)
        order = [i for _ in range(rounds) for i in creation.randperm(n).tolist()]
        return iter(order[:self.num_samples])

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of a sampler into lists of batch_size."""

    def __init__(self, sampler, batch_size, drop_last):
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        whole, rest = divmod(len(self.sampler), self.batch_size)
        return whole + (1 if rest and not self.drop_last else 0)


def default_collate(batch):
    """A list of samples to one batch: tensors stacked, numbers made tensors, and tuples,
    lists and dicts collated field by field, as torch."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(batch, 0)
    if isinstance(first, np.ndarray):
        return stack([creation.from_numpy(b) for b in batch], 0)
    if isinstance(first, bool):
        return creation.tensor(batch)
    if isinstance(first, numbers.Integral):
        return creation.tensor(batch)
    if isinstance(first, numbers.Real):
        return creation.tensor(batch, dtype=dtypes.float64)
    if isinstance(first, (str, bytes)):
        return batch
    if isinstance(first, dict):
        return {key: default_collate([b[key] for b in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, (tuple, list)):
        if any(len(b) != len(first) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(first)}")


class DataLoader:
    """Batches of a dataset, loaded in this process: batch_size, shuffle, sampler,
    batch_sampler, drop_last and collate_fn as torch's (num_workers, pin_memory and the
    worker options are accepted and change nothing)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.num_workers = num_workers
        self._iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
        if batch_sampler is None and batch_size is not None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_size is not None or
                                         batch_sampler is not None else (lambda sample: sample))

    def __iter__(self):
        if self._iterable:
            samples = iter(self.dataset)
            if self.batch_size is None:
                yield from map(self.collate_fn, samples)
                return
            while batch := list(itertools.islice(samples, self.batch_size)):
                if len(batch) < self.batch_size and self.drop_last:
                    return
                yield self.collate_fn(batch)
            return
        if self.batch_sampler is None:
            yield from (self.collate_fn(self.dataset[i]) for i in self.sampler)
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


from ..errors import missing_attribute, namespace_module  # noqa: E402
from .samplers import (DistributedSampler, SubsetRandomSampler,  # noqa: E402,F401
                       get_worker_info)

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error

# torch.utils.data's files that real files import from (`from torch.utils.data.dataloader
# import DataLoader`, `.dataset import Dataset`, `.sampler import Sampler`)
WHERE = {"dataloader": ["DataLoader", "default_collate"],
         "dataset": ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
                     "random_split"],
         "sampler": ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler",
                     "SubsetRandomSampler"],
         "distributed": ["DistributedSampler"]}
for _file, _names in WHERE.items():
    globals()[_file] = namespace_module(f"{__name__}.{_file}", {n: globals()[n] for n in _names})
