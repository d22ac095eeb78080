"""Which files a command runs, from the paths a user gave: files, `FILE::NAME`s and
directories, mixed. A directory stands for every Python file under it, recursively, in sorted
order, leaving out what is not the user's project: virtual environments, hidden folders,
bytecode caches and installed packages. Nothing here imports or runs a file."""
import dataclasses
import os

from ..engine.errors import GradtoolError

# Folders that hold someone else's code, or none: never searched for targets.
_NOT_SEARCHED = {"__pycache__", "site-packages", "dist-packages", "node_modules", "venv",
                 "env", "virtualenv"}


@dataclasses.dataclass(frozen=True)
class FileSpec:
    """One file to run: `spec` as the loader takes it (FILE or FILE::NAME), and whether a
    directory stood for it (such a file without targets is skipped, not an error)."""
    spec: str
    from_directory: bool = False


def expand(paths):
    """The files `paths` name, in the order given (sorted within a directory), each once. A
    path that does not exist, or a directory without a Python file, is an error before
    anything runs."""
    from .loader import split_spec
    found, seen = [], {}  # (real path, name) -> its place in `found`
    for path in paths:
        file, name = split_spec(path)
        if name is None and os.path.isdir(path):
            inside = [FileSpec(f, True) for f in python_files(path)]
            if not inside:
                raise GradtoolError(f"{path} is a folder without Python files (virtual "
                                    f"environments, hidden folders and __pycache__ are not "
                                    f"searched)")
        elif not os.path.exists(file):
            raise GradtoolError(f"No such file or folder: {file}")
        else:
            inside = [FileSpec(path)]
        for f in inside:
            key = (os.path.realpath(split_spec(f.spec)[0]), split_spec(f.spec)[1])
            if key not in seen:
                seen[key] = len(found)
                found.append(f)
            elif not f.from_directory:  # also named on its own: without targets, an error
                found[seen[key]] = FileSpec(found[seen[key]].spec)
    return found


def python_files(folder):
    """The .py files under `folder`, recursively, sorted by path; folders that are not the
    user's project are not entered."""
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if searched(os.path.join(root, d)))
        files += [os.path.normpath(os.path.join(root, n)) for n in names
                  if n.endswith(".py") and not n.startswith(".")
                  and os.path.isfile(os.path.join(root, n))]
    return sorted(files, key=lambda f: os.path.normpath(f).split(os.sep))


def searched(folder):
    """Whether a folder found inside a directory given is searched for Python files."""
    name = os.path.basename(folder)
    return not (name.startswith(".") or name in _NOT_SEARCHED or name.endswith(".egg-info")
                or os.path.exists(os.path.join(folder, "pyvenv.cfg")))
