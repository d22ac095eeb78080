"""gradtool.jit: TorchScript compiles nothing here; the decorators files use to guide it
return what they decorate, so the Python code runs as written (as under torch's
PYTORCH_JIT=0)."""


def _identity(obj=None, *args, **kwargs):
    """script(fn), @ignore and @ignore(drop=True) alike: what they decorate."""
    return obj if callable(obj) else (lambda fn: fn)


script = ignore = unused = export = _identity


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks (jit.trace): a clear error
