"""torch.multiprocessing: Python's multiprocessing (its every name), and spawn /
start_processes, which run fn(i, *args) in nprocs processes and raise, in the parent, the
first failure with its traceback, as torch's. The engine's tensors hold numpy arrays and
pickle with them: a tensor sent to another process is a copy (torch moves its storage to
shared memory instead), so set_sharing_strategy records a strategy that changes nothing."""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings
from multiprocessing import *  # noqa: F401,F403 (torch's module is Python's, and more)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"] + multiprocessing.__all__

_all_sharing_strategies = ({"file_system"} if sys.platform in ("darwin", "win32") else
                           {"file_descriptor", "file_system"})
_sharing_strategy = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"


def set_sharing_strategy(new_strategy):
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return _all_sharing_strategies


class ProcessException(Exception):
    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process's fn raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process died of a signal or exited with a non-zero code."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_file):
    """The child's entry: fn(i, *args), its traceback written to error_file if it raises."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped it
    except Exception:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.processes, self.error_files = processes, error_files
        self.sentinels = {p.sentinel: index for index, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """True once every process has exited well; on the first failure, the others are
        stopped and the failure raised."""
        if not self.sentinels:
            return True
        error_index = None
        for sentinel in multiprocessing.connection.wait(self.sentinels.keys(), timeout):
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        self._stop_the_others(30 if grace_period is None else grace_period)
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            code = failed.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {error_index:d} terminated with signal "
                                             f"{name}", error_index, failed.pid, code, name)
            raise ProcessExitedException(f"process {error_index:d} terminated with exit code "
                                         f"{code:d}", error_index, failed.pid, code)
        with open(self.error_files[error_index], "rb") as fh:
            trace = pickle.load(fh)
        raise ProcessRaisedException(f"\n\n-- Process {error_index:d} terminated with the "
                                     f"following error:\n" + trace, error_index, failed.pid)

    def _stop_the_others(self, grace_period):
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        end = time.monotonic() + grace_period
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    context = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        with tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle",
                                         delete=False) as tf:
            pass
        os.unlink(tf.name)  # (the child writes it only if fn raises)
        process = context.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(tf.name)
    process_context = ProcessContext(processes, error_files)
    if not join:
        return process_context
    while not process_context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """fn(i, *args) in nprocs new processes (i = 0 .. nprocs-1); with join, waits for them
    all and raises the first failure."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      f"To use a different start_method use:\n\t\t "
                      f"torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")


from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
