"""torch.distributed in one process: init_process_group starts a real process group of world
size 1 (backend "gloo", the one torch's CPU build has; rank 0), found by torch's env://,
tcp:// and file:// rendezvous rules with torch's errors for what is missing. Over a world of
one process every collective leaves its tensors as they are (the sum, mean, max... of one
value is that value), which is what torch's gloo group computes too; what needs a second
process (a rank other than 0, a world larger than 1, NCCL or MPI) raises. Without a group,
the collectives and rank queries raise torch's own error for a group never initialised."""
import enum
import os
import warnings
from urllib.parse import urlparse

from ..errors import NotInEngineError, missing_attribute

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def is_available():
    return True


def is_gloo_available():
    return True


def is_nccl_available():
    return False  # (a CUDA library: torch's CPU build lacks it as well)


def is_mpi_available():
    return False


def is_torchelastic_launched():
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """A backend's name, lower case, as torch's Backend("GLOO") == "gloo"."""
    UNDEFINED, GLOO, NCCL, MPI = "undefined", "gloo", "nccl", "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        return super().__new__(cls, name.lower())


class RedOpType(enum.Enum):
    SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = 0, 1, 2, 3, 4, 5, 6, 7, 8

    def __str__(self):
        return f"RedOpType.{self.name}"


class ReduceOp:
    """The reductions a collective can apply (ReduceOp.SUM is RedOpType.SUM, as torch's)."""
    RedOpType = RedOpType
    SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = RedOpType


class _DeprecatedReduceOp:
    def __getattribute__(self, name):
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                      "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        return getattr(ReduceOp, name)


reduce_op = _DeprecatedReduceOp()


class ProcessGroup:
    """The one process's group: rank 0 of a world of 1."""

    def __init__(self, backend):
        self._backend = backend

    def rank(self):
        return 0

    def size(self):
        return 1

    def name(self):
        return self._backend


class GroupMember:
    WORLD = None  # the default group once init_process_group has made it
    NON_GROUP_MEMBER = -100


group = GroupMember  # torch.distributed.group.WORLD


class Work:
    """What an async_op=True collective returns: done already (one process waits for none)."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True


def _rendezvous(init_method, rank, world_size):
    """rank and world size by torch's rendezvous rules (the url's query, the arguments, the
    environment for env://), with torch's errors for what is missing."""
    url = urlparse(init_method)
    if url.scheme not in ("env", "tcp", "file"):
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    query = dict(pair.split("=") for pair in filter(None, url.query.split("&")))
    if url.scheme == "env":
        rank = int(os.environ.get("RANK", rank))
        world_size = int(os.environ.get("WORLD_SIZE", world_size))
    if rank != -1:
        query.setdefault("rank", str(rank))
    if world_size != -1:
        query.setdefault("world_size", str(world_size))

    def error(message):
        return ValueError(f"Error initializing torch.distributed using {url.scheme}:// "
                          f"rendezvous: {message}")

    if url.scheme == "env":
        for name, key in (("RANK", "rank"), ("WORLD_SIZE", "world_size"),
                          ("MASTER_ADDR", None), ("MASTER_PORT", None)):
            if (key is None or key not in query) and not os.environ.get(name):
                raise error(f"environment variable {name} expected, but not set")
    elif url.scheme == "tcp" and url.port is None:
        raise error("port number missing")
    elif url.scheme == "file" and not url.path:
        raise error("path missing")
    if "rank" not in query:
        raise error("rank parameter missing")
    if "world_size" not in query:
        raise error("world size parameter missing")
    return int(query["rank"]), int(query["world_size"])


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """The default process group: this process, rank 0 of a world of 1."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    backend = Backend(backend or "gloo")
    if backend.split(":")[-1] in ("nccl", "mpi"):
        raise RuntimeError(f"Distributed package doesn't have {backend.upper()} built in")
    if store is not None:
        if rank == -1 or world_size == -1:
            raise ValueError("world_size and rank must be specified when store is given")
    else:
        rank, world_size = _rendezvous(init_method or "env://", rank, world_size)
    if (rank, world_size) != (0, 1):
        raise NotInEngineError(f"torch.distributed with rank {rank} of world size "
                               f"{world_size} (it runs one process)")
    GroupMember.WORLD = ProcessGroup(str(backend.split(":")[-1]))


def is_initialized():
    return GroupMember.WORLD is not None


def _world():
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    return GroupMember.WORLD


def destroy_process_group(group=None):
    if GroupMember.WORLD is None:
        raise AssertionError("Process group cannot be None")
    GroupMember.WORLD = None


def get_rank(group=None):
    return _world().rank()


def get_world_size(group=None):
    return _world().size()


def get_backend(group=None):
    return _world().name()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
    _world()
    if ranks is not None and sorted(ranks) != [0]:
        raise ValueError(f"Invalid ranks {list(ranks)} for a world of size 1")
    return ProcessGroup(backend or get_backend())


def _rank_zero(what, rank):
    if rank != 0:
        raise RuntimeError(f"ProcessGroupGloo::{what}: invalid root rank: {rank}")


def _done(async_op):
    return Work() if async_op else None


# ---- the collectives: over one process each leaves its tensors as they are
def barrier(group=None, async_op=False, device_ids=None):
    _world()
    return _done(async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _world()
    return _done(async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _world()
    _rank_zero("reduce", dst if dst is not None else (group_dst or 0))
    return _done(async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _world()
    _rank_zero("broadcast", src if src is not None else (group_src or 0))
    return _done(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _world()
    if len(tensor_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index "
                           f"0 (expected length 1, got {len(tensor_list)})")
    tensor_list[0].copy_(tensor)
    return _done(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _world()
    output_tensor.copy_(input_tensor.reshape(output_tensor.shape))
    return _done(async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _world()
    _rank_zero("gather", dst if dst is not None else (group_dst or 0))
    if gather_list is not None:
        gather_list[0].copy_(tensor)
    return _done(async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _world()
    _rank_zero("scatter", src if src is not None else (group_src or 0))
    if scatter_list is not None:
        tensor.copy_(scatter_list[0])
    return _done(async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _world()
    output.copy_(input_list[0])
    return _done(async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _world()
    output_tensor_list[0].copy_(input_tensor_list[0])
    return _done(async_op)


def all_gather_object(object_list, obj, group=None):
    _world()
    object_list[0] = obj


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    _world()
    _rank_zero("broadcast", src if src is not None else (group_src or 0))


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    _world()
    if object_gather_list is not None:
        object_gather_list[0] = obj


__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
