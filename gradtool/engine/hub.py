"""torch.hub: files downloaded into the hub's cache folder (TORCH_HOME, by default
~/.cache/torch, then hub/) with urllib, as torch's, and loaded with the engine's load; models
from a repository's hubconf.py, a local folder or a GitHub repository (downloaded as its
zip archive, without torch's check that the ref is not a fork's, which asks GitHub's API)."""
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .errors import missing_attribute

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir = None


def get_dir():
    """The hub's cache folder: set_dir's, else $TORCH_HOME/hub (TORCH_HOME defaulting to
    $XDG_CACHE_HOME/torch, XDG_CACHE_HOME to ~/.cache)."""
    if _hub_dir is not None:
        return _hub_dir
    torch_home = os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"),
                                                      "torch"))
    return os.path.join(os.path.expanduser(torch_home), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """The url's bytes into dst (through a .partial file beside it, moved into place once
    complete); with hash_prefix, their SHA-256 must start with it."""
    dst = os.path.expanduser(dst)
    partial = dst + "." + uuid.uuid4().hex + ".partial"
    try:
        with open(partial, "w+b") as f, \
                urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as response:
            sha256 = hashlib.sha256()
            while chunk := response.read(128 * 1024):
                f.write(chunk)
                sha256.update(chunk)
        if hash_prefix is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """The object saved at url, downloaded once into model_dir (get_dir()/checkpoints) under
    its file name; check_hash: the name's -<hex>. part must prefix the file's SHA-256."""
    from .serialization import load
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None,
                             progress=progress)
    if zipfile.is_zipfile(cached_file) and _is_legacy_zip(cached_file):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated "
                      "in favor of default zipfile format introduced in 1.6. Please redo "
                      "torch.save() to save it in the new zipfile format.", FutureWarning,
                      stacklevel=2)
        with zipfile.ZipFile(cached_file) as archive:  # a checkpoint zipped by hand
            member = archive.infolist()[0]
            archive.extractall(model_dir)
        cached_file = os.path.join(model_dir, member.filename)
    return load(cached_file, map_location=map_location, weights_only=weights_only)


def _is_legacy_zip(path):
    """A zip holding one file (torch's own checkpoints are zips too, with a folder of
    records: those are loaded as they are)."""
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
    return len(members) == 1 and not members[0].is_dir()


# ---- models from a repository's hubconf.py
def _parse_repo_info(github):
    repo_info, _, ref = github.partition(":")
    owner, name = repo_info.split("/")
    if not ref:  # main, else master (the cache's, offline)
        for candidate in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{candidate}")):
                ref = candidate
                break
        else:
            try:
                with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
                    ref = "main"
            except OSError as error:
                if getattr(error, "code", None) != 404:
                    raise
                ref = "master"
    return owner, name, ref


def _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo):
    """torch's trust list (hub_dir/trusted_list): trust_repo=False, or "check" for a repo not
    in it, asks on stdin; a repo used is added to it."""
    path = os.path.join(get_dir(), "trusted_list")
    open(path, "a").close()
    with open(path) as f:
        trusted = tuple(line.strip() for line in f)
    owner_name = f"{owner}_{name}"
    is_trusted = (owner_name in trusted or owner_name_branch in next(os.walk(get_dir()))[1]
                  or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted "
                         f"repositories and as such cannot be downloaded. Do you trust this "
                         f"repository and wish to add it to the trusted list of repositories "
                         f"(y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # (torch's own bare Exception)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    normalized = ref.replace("/", "_")
    repo_dir = os.path.join(hub_dir, "_".join([owner, name, normalized]))
    _check_repo_is_trusted(owner, name, os.path.basename(repo_dir), trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    cached_file = os.path.join(hub_dir, normalized + ".zip")
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as archive:
        extracted = os.path.join(hub_dir, archive.infolist()[0].filename)
        shutil.rmtree(extracted, ignore_errors=True)
        archive.extractall(hub_dir)
    os.remove(cached_file)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _hubconf(repo_or_dir, source, force_reload, trust_repo, verbose):
    """The repository's hubconf.py as a module, its folder first on sys.path meanwhile."""
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose)
    sys.path.insert(0, repo_or_dir)
    try:
        path = os.path.join(repo_or_dir, "hubconf.py")
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_or_dir)
    missing = [pkg for pkg in getattr(module, "dependencies", None) or ()
               if importlib.util.find_spec(pkg) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module, repo_or_dir


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):
    """The entry points hubconf.py offers: its public callables."""
    module, _ = _hubconf(github, "github", force_reload, trust_repo, verbose)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):
    module, _ = _hubconf(github, "github", force_reload, trust_repo, True)
    return _entry(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """hubconf.py's entry point `model` called with args and kwargs (its repository first on
    sys.path while it runs)."""
    source = source.lower()
    module, folder = _hubconf(repo_or_dir, source, force_reload, trust_repo, verbose)
    sys.path.insert(0, folder)
    try:
        return _entry(module, model)(*args, **kwargs)
    finally:
        sys.path.remove(folder)


__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
