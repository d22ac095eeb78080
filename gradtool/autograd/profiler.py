"""autograd.profiler.profile: per-op call counts and time, forward and backward.

While a profile is open, the dispatch functions are swapped for timing wrappers and the
engine reports each backward node it runs; when none is open nothing is timed at all."""
import collections
import time

from . import engine
from . import tensor as T

_active = []


class FunctionEventAvg:
    """One row: an op's forward (e.g. "mul") or a backward node (e.g. "MulBackward0")."""

    __slots__ = ("key", "count", "cpu_time_total")

    def __init__(self, key):
        self.key, self.count, self.cpu_time_total = key, 0, 0.0

    @property
    def cpu_time(self):
        """Average time per call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.1f}us>")


class EventList(list):
    def table(self, sort_by="cpu_time_total", row_limit=100):
        rows = sorted(self, key=lambda e: getattr(e, sort_by), reverse=True)[:row_limit]
        width = max([len("Name")] + [len(e.key) for e in rows])
        lines = [f"{'Name':<{width}}  {'Calls':>8}  {'Total (us)':>12}  {'Avg (us)':>10}"]
        lines.append("-" * len(lines[0]))
        for e in rows:
            lines.append(f"{e.key:<{width}}  {e.count:>8}  {e.cpu_time_total:>12.1f}  "
                         f"{e.cpu_time:>10.2f}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


class profile:
    """with profile() as prof: ...; print(prof.key_averages().table())"""

    def __init__(self, enabled=True, **kwargs):
        self.enabled = enabled
        self.events = collections.OrderedDict()

    def _event(self, key, seconds):
        event = self.events.get(key)
        if event is None:
            event = self.events[key] = FunctionEventAvg(key)
        event.count += 1
        event.cpu_time_total += seconds * 1e6

    def __enter__(self):
        if not self.enabled:
            return self
        if _active:
            raise RuntimeError("profiler is already enabled on this thread")
        _active.append(self)
        self._saved = (T.call, T.call_inplace, engine.observer)
        call, call_inplace = T.call, T.call_inplace

        def timed(dispatch, suffix):
            def wrapper(spec, inputs, args=()):
                if engine.current_task() is not None:  # ops run by backward formulas
                    return dispatch(spec, inputs, args)
                start = time.perf_counter()
                try:
                    return dispatch(spec, inputs, args)
                finally:
                    self._event(spec.name + suffix, time.perf_counter() - start)
            return wrapper

        def observe(node, grads):
            start = time.perf_counter()
            try:
                return node.apply(grads)
            finally:
                self._event(node.name(), time.perf_counter() - start)

        T.call, T.call_inplace = timed(call, ""), timed(call_inplace, "_")
        engine.observer = observe
        return self

    def __exit__(self, *exc):
        if self.enabled and _active and _active[-1] is self:
            T.call, T.call_inplace, engine.observer = self._saved
            _active.pop()
        return False

    def key_averages(self):
        return EventList(self.events.values())

    def table(self, **kwargs):
        return self.key_averages().table(**kwargs)
