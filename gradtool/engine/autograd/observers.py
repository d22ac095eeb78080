"""Who watches dispatch: the profiler and the forward trace subscribe here, and dispatch tells
them what runs. `call` and `call_inplace` report each op, the engine each backward node it
applies, Function.apply each custom Function call, and the tensor methods that take a value
out of the graph (item, tolist, numpy, .data, detach) each cut. Nothing is patched, so a
caller that imported `call` directly is seen too.

Observers are per thread, as torch's profiler: one sees only the ops of the thread that
subscribed it. When nobody watches anywhere, dispatch pays one truth test of `subscribers`."""
import functools
import threading

# Every thread's observers: dispatch imports this list itself (it is only mutated, never
# rebound), so its check for "anyone watching?" is one global lookup.
subscribers = []


class _ThisThread(threading.local):
    observers = ()  # this thread's, outermost (first subscribed) first


_this_thread = _ThisThread()


class Observer:
    """What dispatch tells its observers. A subclass overrides what it watches; `op` and
    `backward_node` wrap the work (run() does it and returns its result), so an observer can
    time it or look at the result. Used as a context manager, an observer watches inside."""

    def op(self, name, inputs, run):
        """An op ran by call/call_inplace: name is the op's (add; add_ for in-place)."""
        return run()

    def backward_node(self, node, run):
        """The engine applies `node` to its gradients: run() returns the node's outputs."""
        return run()

    def cut(self, kind, name, tensor, result):
        """`tensor.<name>` gave `result` (a detached tensor, a number, a list or an array)
        outside the graph. kind: detach | data | item | tolist | numpy."""

    def function_call(self, cls, args, kwargs, result):
        """A custom autograd.Function `cls` was applied to args and kwargs, giving `result`."""

    def transform(self, kind, func, details):
        """A torch.func transform (kind: vmap) is about to run `func`; details says how (for
        vmap: each argument's batched dim or None, and the batch size)."""

    def __enter__(self):
        subscribe(self)
        return self

    def __exit__(self, *exc):
        unsubscribe(self)
        return False


def subscribe(observer):
    """Tell `observer` what this thread runs, until unsubscribe(observer)."""
    _this_thread.observers += (observer,)
    subscribers.append(observer)


def unsubscribe(observer):
    mine = _this_thread.observers
    if observer not in mine:
        raise RuntimeError(f"{observer!r} is not subscribed on this thread (an observer stops "
                           f"on the thread that started it)")
    _this_thread.observers = tuple(o for o in mine if o is not observer)
    subscribers.remove(observer)


def watching():
    """This thread's observers (a tuple: empty when nobody watches this thread)."""
    return _this_thread.observers


# Each of this thread's observers wraps run(), the first subscribed outermost.

def op(name, inputs, run):
    watching = _this_thread.observers
    if len(watching) == 1:  # (the usual case, on every op: no partial to make)
        return watching[0].op(name, inputs, run)
    for observer in reversed(watching):
        run = functools.partial(observer.op, name, inputs, run)
    return run()


def backward_node(node, run):
    for observer in reversed(_this_thread.observers):
        run = functools.partial(observer.backward_node, node, run)
    return run()


def cut(kind, name, tensor, result):
    for observer in _this_thread.observers:
        observer.cut(kind, name, tensor, result)


def function_call(cls, args, kwargs, result):
    for observer in _this_thread.observers:
        observer.function_call(cls, args, kwargs, result)


def transform(kind, func, details):
    for observer in _this_thread.observers:
        observer.transform(kind, func, details)
