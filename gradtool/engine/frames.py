"""Whose code is this frame, and how is a place in it shown? The one place gradtool decides
both.

A frame is gradtool's when its file lies in the gradtool package; a library's when it lies in
gradtool, the standard library, an installed package (numpy, torch, ...); else it is the
user's. Imports the standard library only, so every layer (the engine included) can use it."""
import functools
import os
import sys
import sysconfig
import traceback

GRADTOOL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
ENGINE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
AUTOGRAD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd", "")
RECORDING_DIR = os.path.join(GRADTOOL_DIR, "adapters", "")

_gradtool_file = {}  # code filename -> whether it is gradtool's (abspath per frame is the cost)


def is_gradtool(filename):
    """Whether a code object's filename is one of gradtool's own files."""
    ours = _gradtool_file.get(filename)
    if ours is None:
        ours = _gradtool_file[filename] = (not filename.startswith("<") and
                                           os.path.abspath(filename).startswith(GRADTOOL_DIR))
    return ours


def library_dirs():
    """Folders whose frames are never the user's: gradtool, the standard library, installed
    packages and their scripts (the `gradtool` command itself)."""
    dirs = {GRADTOOL_DIR}
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):
        if paths.get(key):
            dirs.add(os.path.abspath(paths[key]) + os.sep)
    return tuple(dirs)


def is_library(filename):
    """Whether a frame of this file belongs to gradtool or another library (not the user)."""
    return filename.startswith("<") or os.path.abspath(filename).startswith(library_dirs())


def user_frames(tb):
    """The traceback's frames that are the user's code (not gradtool's, not a library's)."""
    library = library_dirs()
    return [f for f in traceback.extract_tb(tb)
            if not f.filename.startswith("<") and
            not os.path.abspath(f.filename).startswith(library)]


def raised_in_user_code(exc, also=()):
    """Whether exc was raised while the user's code ran: the innermost frame of its traceback
    outside the engine (gradtool's, or the folders in `also`: torch's) is not gradtool's. A
    custom backward that raises, itself or in a call it makes to the engine (an attribute it
    deleted from ctx, a freed saved tensor), rather than the engine refusing what it returned.
    (torch raises those in C++, without a frame of its own: gradtool's engine counts the same.)"""
    engine = (ENGINE_DIR,) + tuple(also)
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not os.path.abspath(frame.filename).startswith(engine):
            return not is_gradtool(frame.filename)
    return False


# The recording's one function that runs the op the user's code called (torch's C code, with
# no frame of its own): what it raises is the op's, not the recording's.
RUNS_USERS_OP = "run_users_op"


def raised_in_recording(exc):
    """Whether exc came from gradtool's recording of a run (gradtool/adapters/: the forward
    trace, the hooks and modes it gives torch), not from the user's code nor the engine nor
    an op the recording runs for the user: the innermost frame of its traceback that is not
    another library's (torch's, the standard library's) is the recording's own. Such an
    error is gradtool's bug."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        filename = os.path.abspath(frame.filename)
        if is_gradtool(filename):
            return filename.startswith(RECORDING_DIR) and frame.name != RUNS_USERS_OP
        if not is_library(filename):
            return False
    return False


def user_call_site(frame):
    """user_site skipping every library too (typer, the standard library, torch): the user's
    own line that made a call, or None when gradtool itself made it."""
    return user_site(frame, also=library_dirs())


def user_site(frame=None, also=(), depth_limit=50):
    """(filename, lineno, function) of the innermost frame, from `frame` (default: the
    caller) outward, that is not gradtool's nor in the folders `also`; or None."""
    frame = frame if frame is not None else sys._getframe(1)
    for _ in range(depth_limit):
        if frame is None:
            return None
        filename = frame.f_code.co_filename
        ours = _gradtool_file.get(filename)  # is_gradtool, inlined: the forward trace's per-op cost
        if ours is None:
            ours = is_gradtool(filename)
        if not ours and not (also and filename.startswith(also)):
            return (filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


def location(filename, lineno=None, relative=True):
    """A place in the user's code as gradtool shows it: 'file:line' ('file' without a line;
    None without a file), the file relative to the working directory (as given with
    relative=False, or where no relative path reaches it: another drive). The one place a
    user location is formatted: messages, diagnoses and reports all come here."""
    if not filename:
        return None
    cell = _cell_number(filename)
    if cell is not None:  # a notebook's cell, named as Jupyter shows it
        return f"cell [{cell}]" if lineno is None else f"cell [{cell}], line {lineno}"
    shown = _relative(filename, os.getcwd()) if relative else filename
    return shown if lineno is None else f"{shown}:{lineno}"


def site_location(site, relative=True):
    """location() of a site, (filename, lineno, ...), or None."""
    return location(site[0], site[1], relative) if site else None


def _cell_number(filename):
    """The execution count of the IPython cell compiled under this filename (ipykernel's
    /tmp/ipykernel_<pid>/<hash>.py), or None. Read from the running shell, never imported:
    outside IPython there are no cells."""
    IPython = sys.modules.get("IPython")
    shell = getattr(IPython, "get_ipython", lambda: None)() if IPython is not None else None
    cells = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return cells.get(filename) if isinstance(cells, dict) else None


@functools.lru_cache(maxsize=256)
def _relative(filename, cwd):  # (relpath is slow, a graph's sites are many and its files few)
    try:
        return os.path.relpath(filename, cwd)
    except ValueError:
        return filename
