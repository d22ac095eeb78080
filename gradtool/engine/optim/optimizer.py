"""Optimizer: param_groups, state, zero_grad, step and state_dict, as torch.optim.Optimizer.

param_groups hold the very Parameter objects the model holds (not copies), and state is keyed
by them: step() writes into the parameters' memory in place, under no_grad (an in-place op
on a leaf that requires grad is refused while grad mode is on), bumping their _version."""
import collections
import copy
import itertools
import warnings

from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.tensor import Tensor
from ..nn.module import _reset_grad, _typename


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: subclasses pass their hyper-parameter defaults and implement
    `_update_group(group)`, which runs under no_grad for each parameter group."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group: {"params": [...], and any hyper-parameter overriding the defaults}.
        params may be tensors or (name, tensor) pairs, as model.named_parameters() gives."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        named = [p for p in params if isinstance(p, tuple)]
        if named:
            if len(named) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = [name for name, _ in named]
            params = [p for _, p in named]
        param_group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {_typename(p)}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's .grad: to None (the default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                _reset_grad(p, set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a .grad, in place under no_grad. closure, if
        given, re-evaluates the model and returns the loss (run with grad enabled)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group):
        raise NotImplementedError

    @staticmethod
    def _with_grad(group):
        """The group's parameters that have a .grad: the ones a step updates."""
        return (p for p in group["params"] if p.grad is not None)

    # ---------------- state_dict ----------------
    def state_dict(self):
        """{"state": {index: per-parameter state}, "param_groups": [hyper-parameters with
        "params" as indices]}: parameters are numbered in group order. The state tensors are
        the optimizer's own (not copies), as in torch."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, Tensor) else p: v for p, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Take hyper-parameters and state from state_dict(), matched to this optimizer's
        parameters by position. State tensors are cast to their parameter's dtype; as in
        torch, tensors that need no cast are taken as they are, not copied."""
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                            itertools.chain.from_iterable(g["params"]
                                                          for g in self.param_groups)))
        state = collections.defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in by_index:
                param = by_index[key]
                state[param] = {k: _cast_state(param, k, v) for k, v in value.items()}
            else:
                state[key] = value
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
        self.state = state
        self.param_groups = saved_groups

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast_state(param, key, value):
    """State tensors follow their parameter's dtype, except the step count."""
    if isinstance(value, Tensor) and key != "step" and param.is_floating_point():
        return value.to(param.dtype)
    return value


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
