"""Writing the one file a command was asked to write (render -o, gradcheck --html): whole or
not at all, through a symlink to its target, and never onto anything but a regular file (a
device, FIFO or directory named by mistake is refused, not replaced)."""
import contextlib
import os
import stat

from ..engine.errors import GradtoolError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def resolve(path, keep=()):
    """The absolute path of the regular file `path` names (through symlinks), checked to be
    writable as a whole file and not one of the files in `keep` (the user's own file). Call
    it before the user's code runs: a chdir there must not move the output, and a wrong -o
    must fail before any work is done."""
    try:
        st = os.stat(path)  # follows symlinks: what a write would land on
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise GradtoolError(f"cannot write {path}: {e.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise GradtoolError(f"refusing to write {path}: it is {kind}, not a regular file. "
                            f"Name a new or existing regular file.")
    real = os.path.realpath(path)
    if st is not None and any(os.path.realpath(k) == real for k in keep):
        raise GradtoolError(f"refusing to write {path}: it is the file being run.")
    if not os.path.isdir(os.path.dirname(real)):
        raise GradtoolError(f"cannot write {path}: No such file or directory "
                            f"({os.path.dirname(real)} does not exist)")
    return real


def write_atomically(path, data):
    """Write `data` (bytes) to the file `path` names: a temporary file beside the target,
    renamed over it, so readers see the old file or the new one, never a half-written one;
    nothing is left behind if anything fails. A symlink stays a symlink (its target is
    replaced); an existing file keeps its permissions, a new one gets the umask's."""
    import tempfile  # (here: the command's start, --help included, imports this module)
    real = resolve(path)  # again: the path may have changed while the user's code ran
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".gradtool-",
                                   suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, _mode_for(real))
        os.replace(tmp, real)
        tmp = None
    except OSError as e:
        raise GradtoolError(f"cannot write {path}: {e.strerror}") from None
    finally:  # any failure, a signal included
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _mode_for(real):
    """The permissions the file would have if written in place with open()."""
    try:
        return stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask

