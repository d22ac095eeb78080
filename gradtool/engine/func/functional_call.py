"""torch.func.functional_call (a module run with other tensors in place of its parameters and
buffers) and stack_module_state (the parameters and buffers of models, stacked for vmap)."""
import contextlib

from ..autograd.free_functions import stack


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the tensors named in the dict(s) standing for its own."""
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = [k for k in dict.fromkeys(keys) if keys.count(k) > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrized(module, given, tie_weights, strict):
        return module(*args, **kwargs)


def _named_tensors(module):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untied(module, given):
    """Every name of a tied tensor (one tensor under several names) gets the value given for
    any of them; different values for one tied tensor are refused, as torch refuses them."""
    groups = {}
    for name, tensor in _named_tensors(module).items():
        groups.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in groups.values() if len(names) > 1 for name in names}
    given_tied = [name for name in given if name in tied]
    for name in given_tied:
        names = tied[name]
        if len(names & set(given_tied)) > 1 and len(
                {id(given[n]) for n in names if n in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
    untied = dict(given)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = given[name]
    return untied


def _owner(module, name):
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


@contextlib.contextmanager
def _reparametrized(module, given, tie_weights, strict):
    values = _untied(module, given) if tie_weights else given
    if strict:
        names = _named_tensors(module)
        unexpected = [k for k in values if k not in names]
        missing = [k for k in names if k not in values]
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                type(module).__name__, "\n\t".join(errors)))
    saved = []  # (store, key, original; absent: a plain attribute) to put back
    try:
        for name, value in values.items():
            owner, leaf = _owner(module, name)
            for store in (owner._parameters, owner._buffers):
                if leaf in store:
                    saved.append((store, leaf, store[leaf]))
                    store[leaf] = value  # (no Parameter check: any tensor stands in)
                    break
            else:
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _ABSENT)))
                owner.__dict__[leaf] = value
        yield
    finally:
        for store, key, original in reversed(saved):
            if original is _ABSENT:
                store.pop(key, None)
            else:
                store[key] = original


_ABSENT = object()


def stack_module_state(models):
    """(params, buffers): each name's tensors of the models stacked on a new dim 0 (params
    as new leaves that require grad where the models' do)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named_each):
        out = {}
        for name in named_each[0]:
            tensors = [named[name] for named in named_each]
            flags = {t.requires_grad for t in tensors}
            if len(flags) > 1:
                raise RuntimeError(f"Expected {name} from each model to have the same "
                                   f".requires_grad")
            result = stack(tensors)
            out[name] = result.detach().requires_grad_() if flags == {True} else result
        return out
    return (stacked([dict(m.named_parameters()) for m in models]),
            stacked([dict(m.named_buffers()) for m in models]))
