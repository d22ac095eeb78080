"""torch.futures: a Future is a value that a computation sets later. The engine runs
everything in the calling thread, so a Future is set by its caller; then() and
add_done_callback() run their callbacks once it is set, as torch's."""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._value = self._exception = None
        self._callbacks = []
        self._lock = threading.Lock()

    def done(self):
        return self._done.is_set()

    def wait(self):
        """The value, once set (an exception set instead is raised)."""
        self._done.wait()
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        if self._exception is not None:
            raise self._exception
        return self._value

    def _complete(self, value, exception):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._value, self._exception = value, exception
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def add_done_callback(self, callback):
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A Future of callback(self), set when this one is."""
        result = Future()

        def run(fut):
            try:
                result.set_result(callback(fut))
            except Exception as exc:  # noqa: BLE001 (the new Future carries it)
                result.set_exception(exc)
        self.add_done_callback(run)
        return result


def collect_all(futures):
    """A Future of the list of futures, set when all are."""
    combined, remaining = Future(), [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            combined.set_result(list(futures))
    if not futures:
        combined.set_result([])
    for fut in futures:
        fut.add_done_callback(one_done)
    return combined


def wait_all(futures):
    """The futures' values, in order (the first exception raised)."""
    return [fut.wait() for fut in futures]


from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
