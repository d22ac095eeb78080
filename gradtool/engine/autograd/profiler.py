"""autograd.profiler.profile: per-op call counts and time, forward and backward.

While a profile is open it observes its thread's dispatch (observers.py): each op's forward
and each backward node the engine runs are timed; when none is open nothing is timed at all."""
import collections
import contextlib
import time

from . import engine, observers


class FunctionEventAvg:
    """One row: an op's forward (e.g. "mul") or a backward node (e.g. "MulBackward0").
    Times in microseconds; self time leaves out the ops it called. No device, no memory
    tracking: those of torch's columns are 0."""

    __slots__ = ("key", "count", "cpu_time_total", "self_cpu_time_total")
    cuda_time = cuda_time_total = self_cuda_time_total = 0.0
    device_time = device_time_total = self_device_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = 0
    cuda_memory_usage = self_cuda_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0

    def __init__(self, key):
        self.key, self.count = key, 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0

    @property
    def cpu_time(self):
        """Average time per call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.1f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.1f}us>")


# torch's sort keys for table(sort_by=...)
SORT_KEYS = ("cpu_time", "cuda_time", "device_time", "cpu_time_total", "cuda_time_total",
             "device_time_total", "self_cpu_time_total", "self_cuda_time_total",
             "self_device_time_total", "cpu_memory_usage", "cuda_memory_usage",
             "device_memory_usage", "self_cpu_memory_usage", "self_cuda_memory_usage",
             "self_device_memory_usage", "count")


def _time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    return f"{us / 1e3:.3f}ms" if us >= 1e3 else f"{us:.3f}us"


class EventList(list):
    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, **kwargs):
        """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
        # of Calls; sorted (descending) by one of torch's keys (SORT_KEYS)."""
        if sort_by is not None and sort_by not in SORT_KEYS:
            raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}' "
                                 f"(sort_by is one of {', '.join(SORT_KEYS)})")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total = sum(e.self_cpu_time_total for e in self) or 1.0
        width = min(max([len("Name")] + [len(e.key) for e in rows]), max_name_column_width)
        heads = ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                 "# of Calls")
        rule = "-" * width + "".join("  " + "-" * 12 for _ in heads)
        lines = [rule, f"{'Name':>{width}}" + "".join(f"  {h:>12}" for h in heads), rule]
        for e in rows:
            cells = (f"{100 * e.self_cpu_time_total / total:.2f}%",
                     _time(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / total:.2f}%", _time(e.cpu_time_total),
                     _time(e.cpu_time), str(e.count))
            lines.append(f"{e.key[:width]:>{width}}" + "".join(f"  {c:>12}" for c in cells))
        lines += [rule, f"Self CPU time total: {_time(sum(e.self_cpu_time_total for e in self))}"]
        return "\n".join(lines)

    def __str__(self):
        return self.table()


class profile(observers.Observer):
    """with profile() as prof: ...;
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))
    It times the ops of the thread that opened it, as torch's."""

    def __init__(self, enabled=True, **kwargs):
        self.enabled = enabled
        self.events = collections.OrderedDict()
        self._children = []  # per open event: the time spent in the events it opened

    def _timed(self, key, run):
        """run(), its time counted under key (its self time without nested events')."""
        start = self._begin()
        try:
            return run()
        finally:
            self._end(key, start)

    def _begin(self):
        self._children.append(0.0)
        return time.perf_counter()

    def _end(self, key, start):
        elapsed = (time.perf_counter() - start) * 1e6
        nested = self._children.pop()
        if self._children:
            self._children[-1] += elapsed
        event = self.events.get(key)
        if event is None:
            event = self.events[key] = FunctionEventAvg(key)
        event.count += 1
        event.cpu_time_total += elapsed
        event.self_cpu_time_total += elapsed - nested

    def op(self, name, inputs, run):
        if engine.current_task() is not None:  # ops run by backward formulas: their node's
            return run()
        return self._timed(name, run)

    def backward_node(self, node, run):
        return self._timed(node.name(), run)

    def __enter__(self):
        if not self.enabled:
            return self
        if any(isinstance(o, profile) for o in observers.watching()):
            raise RuntimeError("profiler is already enabled on this thread")
        return super().__enter__()

    def __exit__(self, *exc):
        if self.enabled and self in observers.watching():
            super().__exit__(*exc)
        return False

    def key_averages(self):
        return EventList(self.events.values())

    def table(self, **kwargs):
        return self.key_averages().table(**kwargs)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error


class record_function(contextlib.ContextDecorator):
    """A named block (with record_function("name"): ..., or @record_function("name")) that
    an open profiler times as one event of that name, the ops inside nested in it."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._open = []

    def __enter__(self):
        self._open.append([(p, p._begin()) for p in observers.watching()
                           if isinstance(p, profile)])
        return self

    def __exit__(self, *exc):
        for p, start in self._open.pop():
            p._end(self.name, start)
        return False
