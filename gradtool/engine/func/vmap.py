"""torch.func.vmap: the function runs once on BatchedTensors (batched.py), each op once for the
whole batch (rules.py). Where the function computes on values with numpy outside any op
(Unbatched reaches vmap), it runs one example at a time, with a warning."""
import functools
import os
import traceback
import warnings

from ..autograd import creation, observers
from ..autograd.free_functions import cat, stack
from ..autograd.tensor import Tensor, _dim
from . import batched as batching, tree
from .batched import BatchedTensor, LEVELS, Unbatched, movedim

_RANDOMNESS = ("error", "different", "same")


def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a dim of its inputs (in_dims) into a dim of its outputs (out_dims)."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, args_spec = tree.flatten(args)
        flat_in_dims = _in_dims(func, in_dims, args, flat_args)
        size = _batch_size(flat_in_dims, flat_args)
        if observers.watching():  # (gradtool inspect says which dims were batched)
            observers.transform("vmap", func, {"size": size,
                                               "in_dims": _per_argument(in_dims, args)})
        if chunk_size is None or chunk_size >= size:
            return _vmap_once(func, flat_in_dims, flat_args, args_spec, kwargs, size,
                              out_dims, randomness)
        chunks = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            part = [a if d is None else a.narrow(d, start, n)
                    for a, d in zip(flat_args, flat_in_dims)]
            chunks.append(_vmap_once(func, flat_in_dims, part, args_spec, kwargs, n,
                                     out_dims, randomness))
        flat_chunks = [tree.flatten(c)[0] for c in chunks]
        out_spec = tree.flatten(chunks[0])[1]
        flat_out_dims = _out_dims(func, out_dims, chunks[0], len(flat_chunks[0]))
        joined = [pieces[0] if d is None else cat(list(pieces), d)
                  for pieces, d in zip(zip(*flat_chunks), flat_out_dims)]
        return tree.unflatten(joined, out_spec)
    return wrapped


def _in_dims(func, in_dims, args, flat_args):
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         f"to be int or a (potentially nested) tuple matching the structure "
                         f"of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")

    def mismatch():
        return ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure "
            f"{tree.describe(tree.flatten(in_dims)[1])} but inputs has structure "
            f"{tree.describe(tree.flatten(args)[1])}.")
    flat = tree.broadcast_prefix(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(
        args), args, mismatch)
    for d, arg in zip(flat, flat_args):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but in_dim must be either an integer dimension or "
                             f"None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {_torch_type(arg)}. We "
                             f"cannot vmap over non-Tensor arguments, please use None as the "
                             f"respective in_dim")
        n = arg.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality {n} "
                             f"so expected in_dim to satisfy -{n} <= in_dim < {n}.")
    return flat


def _per_argument(in_dims, args):
    """Each argument's in_dim as the user gave it (an int, None, or a nested tuple)."""
    return list(in_dims) if isinstance(in_dims, tuple) else [in_dims] * len(args)


def _torch_type(x):
    return type(x)


def _batch_size(flat_in_dims, flat_args):
    sizes = [a.shape[d] for d, a in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _vmap_once(func, flat_in_dims, flat_args, args_spec, kwargs, size, out_dims, randomness):
    level = batching.push(size, randomness)
    previous_check = creation.random_check
    creation.random_check = _check_randomness
    try:
        inputs = [a if d is None else batching.batched(movedim(a, d, 0), level.index)
                  for a, d in zip(flat_args, flat_in_dims)]
        out = func(*tree.unflatten(inputs, args_spec), **kwargs)
        return _unwrap(func, out, out_dims, level)
    except Unbatched as e:
        gave_up = e
    finally:
        batching.pop(level)
        creation.random_check = previous_check
    if os.environ.get("GRADTOOL_VMAP_TRACE"):  # where the batched run gave up
        traceback.print_exception(gave_up)
    return _one_at_a_time(func, flat_in_dims, flat_args, args_spec, kwargs, size, out_dims,
                          randomness)


def _check_randomness():
    for level in LEVELS:
        if level.randomness == "error":
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap")
    innermost = LEVELS[-1]
    if innermost.randomness == "different" and not innermost.looping:
        raise Unbatched()  # a draw in one example's shape: each example draws its own


def _one_at_a_time(func, flat_in_dims, flat_args, args_spec, kwargs, size, out_dims,
                   randomness):
    """The whole function on each example, stacked (where it computes on values outside ops)."""
    warnings.warn(f"vmap({_name(func)}): the function computes on a batched tensor's values "
                  f"outside gradtool's ops (numpy on .data, or a random draw with "
                  f"randomness='different'); gradtool runs it one example at a time.",
                  UserWarning, stacklevel=4)
    state = creation.default_generator._rng.bit_generator.state
    results = []
    for b in range(size):
        if randomness == "same":  # every example draws the same numbers
            creation.default_generator._rng.bit_generator.state = state
        example = [a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_in_dims)]
        results.append(func(*tree.unflatten(example, args_spec), **kwargs))
    flat_results = [tree.flatten(r)[0] for r in results]
    out_spec = tree.flatten(results[0])[1]
    flat_out_dims = _out_dims(func, out_dims, results[0], len(flat_results[0]))
    outs = []
    for column, d in zip(zip(*flat_results), flat_out_dims):
        if d is None:
            outs.append(column[0])
            continue
        for o in column:
            _check_output(func, o)
        outs.append(stack(list(column), d))
    return tree.unflatten(outs, out_spec)


def _out_dims(func, out_dims, out, n):
    if isinstance(out_dims, int) or out_dims is None:
        return [out_dims] * n
    if not isinstance(out_dims, tuple):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an "
                         f"int, None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")

    def mismatch():
        return ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`. out_dims has structure "
            f"{tree.describe(tree.flatten(out_dims)[1])} but outputs has structure "
            f"{tree.describe(tree.flatten(out)[1])}.")
    out_tree = out if isinstance(out, tuple) else (out,)
    return tree.broadcast_prefix(out_dims, out_tree, mismatch)


def _check_output(func, o):
    if not isinstance(o, Tensor):
        raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, "
                         f"got type {type(o)}. Did you mean to set out_dims= to None for "
                         f"output?")


def _unwrap(func, out, out_dims, level):
    flat, spec = tree.flatten(out)
    flat_out_dims = _out_dims(func, out_dims, out, len(flat))
    results = []
    for o, d in zip(flat, flat_out_dims):
        if d is None:
            if type(o) is BatchedTensor and o._level == level.index:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 f"BatchedTensor when out_dim is None")
            results.append(o)
            continue
        _check_output(func, o)
        if type(o) is BatchedTensor and o._level == level.index:
            value = o._value
        else:  # the same for every example: expanded
            value = o.unsqueeze(0).expand((level.size,) + tuple(o.shape))
        d = _dim(d, value.dim())  # (torch's IndexError for an out_dim out of range)
        results.append(movedim(value, 0, d) if d != 0 else value)
    return tree.unflatten(results, spec)

