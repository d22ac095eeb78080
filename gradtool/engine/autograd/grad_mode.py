"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode. Thread-local."""
import functools
import inspect
import threading


# How many threads' states are not the default (grad mode on, no inference, no saved-tensor
# hooks). While it is 0, the per-op path reads this one module attribute instead of the
# thread-local `state` (an attribute of a threading.local costs CPython 3.11 a generic lookup
# and a switch to the thread's dict; an op read it three times):
#     grad_enabled = not threads_off_default or state.grad_enabled
threads_off_default = 0
_count_lock = threading.Lock()


class _OffDefault:
    """Held by a thread's state while it is not the default: counted in threads_off_default
    from when it is made until it is dropped (back to the default, or the thread ended and
    threading.local let go of its values)."""

    def __init__(self):
        global threads_off_default
        with _count_lock:
            threads_off_default += 1

    def __del__(self):
        global threads_off_default
        with _count_lock:
            threads_off_default -= 1


class _ModeState(threading.local):
    # Class attributes are each new thread's starting values: grad mode on.
    grad_enabled = True
    inference = False
    saved_tensors_hooks = ()  # stack of (pack, unpack) pairs; the innermost applies
    saved_tensors_hooks_disabled = None  # an error message while disabled
    off_default = None  # an _OffDefault while this thread's state is not the default

    def __setattr__(self, name, value):
        # every setter (the modes, backward's own grad mode, saved_tensors_hooks) comes here
        super().__setattr__(name, value)
        off = (not self.grad_enabled or self.inference or bool(self.saved_tensors_hooks)
               or self.saved_tensors_hooks_disabled is not None)
        if off != (self.off_default is not None):
            super().__setattr__("off_default", _OffDefault() if off else None)


state = _ModeState()


def is_grad_enabled():
    return not threads_off_default or state.grad_enabled


def is_inference_mode_enabled():
    return bool(threads_off_default) and state.inference


class _ModeContext:
    """A context manager that is also a decorator, with or without parentheses."""

    def __new__(cls, *args, **kwargs):
        # `@no_grad` (no parentheses) passes the function itself.
        if cls._bare_decorator_ok and len(args) == 1 and callable(args[0]) and not kwargs:
            return cls()(args[0])
        self = super().__new__(cls)
        self._args = (args, kwargs)  # what clone() makes a fresh one from
        return self

    _bare_decorator_ok = True

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        args, kwargs = self._args
        return type(self)(*args, **kwargs)

    def __enter__(self):
        self._prev = (state.grad_enabled, state.inference)
        self._apply()

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self._prev
        return False


class no_grad(_ModeContext):
    """Operations inside record nothing; their results do not require grad."""

    def _apply(self):
        state.grad_enabled = False


class enable_grad(_ModeContext):
    """Re-enable recording inside no_grad (not inside inference_mode's tensors' rules)."""

    def _apply(self):
        state.grad_enabled = True


class set_grad_enabled(_ModeContext):
    """Set grad mode on or off; works as a plain call, a context manager and a decorator."""

    _bare_decorator_ok = False

    def __init__(self, mode):
        self.mode = bool(mode)
        # As in torch, the mode takes effect at construction, so a plain call works.
        self._prev = (state.grad_enabled, state.inference)
        state.grad_enabled = self.mode

    def __call__(self, func):
        # Used as a decorator, the mode set at construction is undone: it applies per call.
        state.grad_enabled = self._prev[0]
        return super().__call__(func)

    def __enter__(self):
        pass


class inference_mode(_ModeContext):
    """no_grad, plus: tensors made inside are inference tensors that autograd refuses later."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _apply(self):
        # as torch: inference_mode(False) re-enables grad mode inside inference mode
        state.grad_enabled = not self.mode
        state.inference = self.mode


def _wrap_generator(mode, func):
    """A generator function run in `mode()` each time its body runs (to each yield), and in
    the caller's mode between yields, as torch's decorators do."""
    @functools.wraps(func)
    def generator(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with mode():
                        gen.close()
                    raise
                except BaseException as e:
                    with mode():
                        response = gen.throw(e)
                else:
                    with mode():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
