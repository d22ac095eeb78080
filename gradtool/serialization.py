"""gradtool.save / gradtool.load: pickle-based, like torch.save for tensors and state dicts."""
import pickle


def save(obj, f):
    """Write obj (tensors, dicts and lists of them, numbers) to a path or binary file."""
    if hasattr(f, "write"):
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        with open(f, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)


def load(f, weights_only=None, **kwargs):
    """Read what save wrote. Only load files you trust: like torch.load, this unpickles."""
    if hasattr(f, "read"):
        return pickle.load(f)
    with open(f, "rb") as fh:
        return pickle.load(fh)
