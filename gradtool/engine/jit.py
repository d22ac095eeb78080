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


# ---- tracing, saving, loading: what a file does with TorchScript, run as Python
import os  # noqa: E402
import typing  # noqa: E402
import zipfile  # noqa: E402

Final = typing.Final  # a constant's annotation for the compiler (torch's is typing.Final too)
script_method = _identity


class TracerWarning(Warning):
    """What torch's tracer warns of (a Python value frozen into a trace)."""


def _script_module():
    from .nn.module import Module

    class ScriptModule(Module):
        """A module to compile: run as the Python module it is."""
    return ScriptModule


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """func run once on the example inputs, as torch's tracer runs it (its errors are
    func's), and given back as it is: a traced function or module computes what the Python
    does for the example's shapes; here it stays the Python, for every shape."""
    if example_inputs is None:
        if not isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict")
        func(**example_kwarg_inputs)
    else:
        func(*(example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)))
    return func


def save(m, f, _extra_files=None):
    """The module (its Python object, weights and all) pickled with the engine's save (torch.save's
    format); load reads it back. An archive of torch's TorchScript is not this format."""
    from .serialization import save as save_object
    save_object(m, f)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    from .errors import NotInEngineError
    from .serialization import load as load_object
    if isinstance(f, (str, bytes, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
    if _is_torchscript(f):  # compiled code the engine cannot run
        raise NotInEngineError("torch.jit.load of a TorchScript archive")
    return load_object(f, map_location=map_location, weights_only=False)


def _is_torchscript(f):
    """A TorchScript archive holds its code (`<name>/code/...`); save's archive, torch.save's
    format, only data.pkl and the storages."""
    if not zipfile.is_zipfile(f):
        return False
    if hasattr(f, "seek"):
        f.seek(0)
    with zipfile.ZipFile(f) as archive:
        found = any("/code/" in name for name in archive.namelist())
    if hasattr(f, "seek"):
        f.seek(0)
    return found


from .errors import missing_attribute  # noqa: E402

_missing = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error


def __getattr__(name):
    if name == "ScriptModule":  # (an nn.Module, which loads after this module)
        globals()[name] = _script_module()
        return globals()[name]
    return _missing(name)
