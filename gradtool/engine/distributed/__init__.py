"""torch.distributed in one process: the engine has no process groups and no backends, so
is_available() says False (torch's CPU build says True, having gloo) and is_initialized()
False, which sends code that asks down its single-process path; the collectives and rank
queries raise torch's own error for a process group never initialised. init_process_group is
not here: a file that starts one needs torch (`--engine torch`)."""
from ..errors import missing_attribute

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def is_available():
    return False


def is_initialized():
    return False


def _needs_a_process_group(name):
    def collective(*args, **kwargs):
        raise ValueError(_NOT_INITIALIZED)
    collective.__name__ = collective.__qualname__ = name
    collective.__doc__ = f"torch.distributed.{name}: raises, as torch's without a process group."
    return collective


get_rank, get_world_size, barrier, all_reduce, all_gather, broadcast, reduce = map(
    _needs_a_process_group, ("get_rank", "get_world_size", "barrier", "all_reduce",
                             "all_gather", "broadcast", "reduce"))

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
