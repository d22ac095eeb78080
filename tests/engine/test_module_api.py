"""nn.Module's API beyond layers: full backward hooks and pre-hooks (on a module, on every
module), the state_dict and load_state_dict hooks and the methods they call
(_save_to_state_dict, _load_from_state_dict, extra state), and the dotted-path accessors.
Each program takes the library (gradtool or torch) and returns what a user sees, so that
tests/parity/test_module_api.py compares it with torch's; the tests here check it alone."""
import warnings

import numpy as np
import pytest

import gradtool as gt


def graph_names(node, seen=None):
    """The node names reachable from node, depth first (AccumulateGrad without torch's
    namespace), each once."""
    seen = set() if seen is None else seen
    if node is None or node in seen:
        return []
    seen.add(node)
    names = [node.name().rpartition("::")[2]]
    for child, _ in node.next_functions:
        names += graph_names(child, seen)
    return names


def full_backward_hooks(lib):
    """A two-input module (a float scale in between) with a full backward pre-hook that
    doubles grad_output and two full hooks (one prepended) that see and replace grad_input."""
    class Mix(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2).double()

        def forward(self, a, scale, b):
            return self.lin(a) * scale + b, b.sum()

    lib.manual_seed(0)
    mix = Mix()
    with lib.no_grad():
        mix.lin.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 7))
        mix.lin.bias.fill_(0.5)
    log = []
    mix.register_full_backward_pre_hook(
        lambda m, grad_output: (log.append(("pre", [None if g is None else g.tolist()
                                                    for g in grad_output])),
                                (grad_output[0] * 2, grad_output[1]))[1])
    mix.register_full_backward_hook(
        lambda m, grad_input, grad_output: log.append(
            ("second", [None if g is None else g.tolist() for g in grad_input])))
    mix.register_full_backward_hook(
        lambda m, grad_input, grad_output: (
            log.append(("first", [None if g is None else g.tolist() for g in grad_input],
                        [None if g is None else g.tolist() for g in grad_output])),
            (grad_input[0] + 1, None, grad_input[2]))[1], prepend=True)
    a = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = lib.tensor([[1.0, -1.0], [0.5, 2.0]], dtype=lib.float64, requires_grad=True)
    out, total = mix(a, 3.0, b)
    names = (graph_names(out.grad_fn), graph_names(total.grad_fn))
    (out.sum() + total).backward()
    return names, log, a.grad.tolist(), b.grad.tolist(), mix.lin.weight.grad.tolist()


def test_full_backward_hooks_see_and_replace_the_modules_gradients():
    names, log, a_grad, b_grad, weight_grad = full_backward_hooks(gt)
    assert names[0][0] == "BackwardHookFunctionBackward" and names[0].count(
        "BackwardHookFunctionBackward") == 2  # around the outputs, and around the inputs
    assert [entry[0] for entry in log] == ["pre", "first", "second"]
    assert log[0][1] == [[[1.0, 1.0], [1.0, 1.0]], 1.0]
    # grad_output doubled by the pre-hook: d(out)/da = 3 * 2 * W summed over outputs
    weight = np.arange(6.0).reshape(2, 3) / 7
    expected_a = np.tile(6 * weight.sum(0), (2, 1))
    np.testing.assert_allclose(log[1][1][0], expected_a)
    assert log[1][1][1] is None and log[1][2][0] == [[2.0, 2.0], [2.0, 2.0]]
    np.testing.assert_allclose(log[2][1][0], expected_a + 1)  # the first hook's replacement
    np.testing.assert_allclose(a_grad, expected_a + 1)
    assert b_grad == [[3.0, 3.0], [3.0, 3.0]]  # 2 from out (doubled), 1 from total
    inputs = np.arange(6.0).reshape(2, 3)  # a: each output row's weight gets 3 * 2 * sum(a)
    np.testing.assert_allclose(weight_grad, np.tile(6 * inputs.sum(0), (2, 1)))


def hooks_without_input_grad(lib):
    """No input requires grad: the full hook runs at the outputs with grad_input all None,
    and warns; returning gradients there raises."""
    lin = lib.nn.Linear(2, 2)
    log = []
    lin.register_full_backward_hook(lambda m, gi, go: log.append((gi, len(go))))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin(lib.ones(1, 2)).sum().backward()
    lin2 = lib.nn.Linear(2, 2)
    lin2.register_full_backward_hook(lambda m, gi, go: (lib.ones(1, 2),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as error:
            lin2(lib.ones(1, 2)).sum().backward()
    return log, [str(w.message)[:60] for w in caught], str(error.value)


def test_a_full_hook_without_input_gradients_runs_at_the_outputs():
    log, warned, error = hooks_without_input_grad(gt)
    assert log == [((None,), 1)]
    assert warned == ["Full backward hook is firing when gradients are computed wit"]
    assert error == ("Backward hook for Modules where no input requires gradient should always "
                     "return None or None for all gradients.")


def backward_hook_errors(lib):
    """Mixing the deprecated and the full hooks, on a module and globally; a hook returning
    the wrong number of gradients."""
    messages = []
    lin = lib.nn.Linear(2, 2)
    lin.register_backward_hook(lambda *a: None)
    for register in (lin.register_full_backward_hook, ):
        with pytest.raises(RuntimeError) as error:
            register(lambda *a: None)
        messages.append(str(error.value))
    module_hooks = lib.nn.modules.module
    handle = module_hooks.register_module_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError) as error:
        module_hooks.register_module_backward_hook(lambda *a: None)
    messages.append(str(error.value))
    handle.remove()
    lin = lib.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError) as error:
        lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
    messages.append(str(error.value))
    lin = lib.nn.Linear(2, 2)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError) as error:
        lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
    messages.append(str(error.value))
    return messages


def test_backward_hook_errors_say_what_is_wrong():
    messages = backward_hook_errors(gt)
    assert messages[0] == ("Cannot use both regular backward hooks and full backward hooks on a "
                           "single Module. Please use only one of them.")
    assert "as a global Module hook" in messages[1]
    assert messages[2] == ("Backward hook returned an invalid number of grad_input, got 2, but "
                           "expected 1")
    assert messages[3] == ("Backward pre hook returned an invalid number of grad_output, got 2, "
                           "but expected 1")


def global_hooks(lib):
    """The module-global hooks run for every module call, before the module's own."""
    module_hooks = lib.nn.modules.module
    log = []
    handles = [
        module_hooks.register_module_forward_pre_hook(
            lambda m, args: log.append(("forward_pre", type(m).__name__))),
        module_hooks.register_module_forward_hook(
            lambda m, args, out: log.append(("forward", type(m).__name__))),
        module_hooks.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("backward_pre", type(m).__name__))),
        module_hooks.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("backward", type(m).__name__)))]
    try:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())
        model[1].register_full_backward_hook(lambda m, gi, go: log.append(("own", "Tanh")))
        model(lib.ones(1, 2, requires_grad=True)).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    model(lib.ones(1, 2, requires_grad=True)).sum().backward()  # removed: only "own"
    return log


def test_global_hooks_run_for_every_module_and_go_away_when_removed():
    log = global_hooks(gt)
    assert log[:6] == [("forward_pre", "Sequential"), ("forward_pre", "Linear"),
                       ("forward", "Linear"), ("forward_pre", "Tanh"), ("forward", "Tanh"),
                       ("forward", "Sequential")]
    assert log[6:] == [("backward_pre", "Sequential"), ("backward_pre", "Tanh"),
                       ("backward", "Tanh"), ("own", "Tanh"), ("backward_pre", "Linear"),
                       ("backward", "Linear"), ("backward", "Sequential"), ("own", "Tanh")]


def test_the_tool_still_names_the_module_of_each_node_under_full_hooks():
    """The hook nodes are the module's own (made in its call); the layers' nodes keep their
    layer's name."""
    model = gt.nn.Sequential(gt.nn.Linear(2, 2), gt.nn.Tanh())
    model[0].register_full_backward_hook(lambda *a: None)
    out = model(gt.ones(1, 2, requires_grad=True))
    modules = {}
    stack = [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None:
            modules.setdefault(node.name(), set()).add(node.metadata.get("module"))
            stack += [child for child, _ in node.next_functions]
    assert modules["TanhBackward0"] == {"1"} and modules["AddmmBackward0"] == {"0"}
    assert modules["BackwardHookFunctionBackward"] == {"0"}


def state_dict_hooks(lib):
    """Every state_dict and load_state_dict hook, extra state, an overridden
    _load_from_state_dict that renames an older version's key, and assign=True."""
    log = []

    class Counter(lib.nn.Module):
        _version = 2

        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(2))
            self.steps = 0

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args):
            if local_metadata.get("version", 1) < 2 and prefix + "gain" in state_dict:
                state_dict[prefix + "scale"] = state_dict.pop(prefix + "gain")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    model = lib.nn.Sequential(Counter(), lib.nn.Linear(2, 1))
    model[0].steps = 7
    model[0].register_state_dict_pre_hook(lambda m, prefix, keep: log.append(("pre", prefix)))
    model.register_state_dict_post_hook(
        lambda m, sd, prefix, meta: log.append(("post", sorted(sd), meta)))
    model[1]._register_state_dict_hook(
        lambda m, sd, prefix, meta: log.append(("private", prefix)))
    state = model.state_dict()
    metadata = dict(state._metadata)
    fresh = lib.nn.Sequential(Counter(), lib.nn.Linear(2, 1))
    fresh.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, strict, missing, unexpected, errors: log.append(
            ("load_pre", prefix, sorted(sd))))
    fresh.register_load_state_dict_post_hook(
        lambda m, keys: log.append(("load_post", list(keys.missing_keys))))
    result = fresh.load_state_dict(state)
    old = {"0.gain": lib.full((2,), 3.0), "0._extra_state": {"steps": 1},
           "1.weight": lib.zeros(1, 2), "1.bias": lib.zeros(1)}
    fresh.load_state_dict(old)  # no _metadata: version 1, renamed by the override
    bias = fresh[1].bias
    new_bias = lib.full((1,), 5.0)
    fresh.load_state_dict({**old, "1.bias": new_bias}, assign=True)
    return (log, list(state), metadata, repr(result), fresh[0].scale.tolist(), fresh[0].steps,
            fresh[1].bias is bias, type(fresh[1].bias).__name__, fresh[1].bias.tolist())


def test_state_dict_hooks_extra_state_and_versions():
    (log, keys, metadata, result, scale, steps, same_bias, bias_type, bias) = \
        state_dict_hooks(gt)
    assert keys == ["0.scale", "0._extra_state", "1.weight", "1.bias"]
    assert metadata == {"": {"version": 1}, "0": {"version": 2}, "1": {"version": 1}}
    assert log[:3] == [("pre", "0."), ("private", "1."),
                       ("post", keys and sorted(keys), {"version": 1})]
    assert log[3] == ("load_pre", "", sorted(keys)) and log[4] == ("load_post", [])
    assert result == "<All keys matched successfully>"
    assert scale == [3.0, 3.0] and steps == 1
    assert not same_bias and bias_type == "Parameter" and bias == [5.0]


def state_dict_errors(lib):
    """A post-hook that returns a value, the private hook given a public one, a load
    post-hook returning a value, strict load errors, a post-hook clearing them, and a
    non-mapping state_dict."""
    messages = []
    lin = lib.nn.Linear(2, 1)
    hook = lambda m, sd, prefix, meta: sd  # noqa: E731
    lin.register_state_dict_post_hook(hook)
    with pytest.raises(RuntimeError) as error:
        lin.state_dict()
    messages.append(str(error.value))
    with pytest.raises(RuntimeError) as error:
        lin._register_state_dict_hook(hook)
    messages.append(str(error.value))
    lin = lib.nn.Linear(2, 1)
    with pytest.raises(RuntimeError) as error:
        lin.load_state_dict({"weight": lib.zeros(1, 3), "extra": lib.zeros(1)})
    messages.append(str(error.value))
    lin.register_load_state_dict_post_hook(lambda m, keys: (keys.missing_keys.clear(),
                                                            keys.unexpected_keys.clear())[0])
    messages.append(repr(lin.load_state_dict({"weight": lib.zeros(1, 2), "extra": 1})))
    lin.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(AssertionError) as error:
        lin.load_state_dict(lin.state_dict())
    messages.append(str(error.value))
    with pytest.raises(TypeError) as error:
        lin.load_state_dict([1])
    messages.append(str(error.value))
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        messages.append(sorted(lib.nn.Linear(1, 1).state_dict({}, "p.")))
    return messages


def test_state_dict_errors_are_torchs():
    messages = state_dict_errors(gt)
    assert messages[0] == "state_dict post-hook must return None"
    assert messages[2] == ("Error(s) in loading state_dict for Linear:\n\tMissing key(s) in "
                           "state_dict: \"bias\". \n\tUnexpected key(s) in state_dict: "
                           "\"extra\". \n\tsize mismatch for weight: copying a param with shape "
                           "gradtool.Size([1, 3]) from checkpoint, the shape in current model "
                           "is gradtool.Size([1, 2]).")
    assert messages[3] == "<All keys matched successfully>"
    assert messages[5] == "Expected state_dict to be dict-like, got <class 'list'>."
    assert messages[6] == ["p.bias", "p.weight"]


def dotted_paths(lib):
    """get_parameter, get_buffer, set_submodule and their errors; call_super_init; to_empty."""
    model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    found = [model.get_parameter("0.weight") is model[0].weight,
             model.get_buffer("1.running_mean") is model[1].running_mean]
    messages = []
    for call in (lambda: model.get_parameter("1.running_mean"),
                 lambda: model.get_buffer("0.weight"), lambda: model.get_parameter("0.nope"),
                 lambda: model.get_buffer("2.x"), lambda: model.set_submodule("", model[0]),
                 lambda: model.set_submodule("0", 3),
                 lambda: model.set_submodule("0.sub", lib.nn.Tanh(), strict=True),
                 lambda: model.set_submodule("0.weight", lib.nn.Tanh()),
                 lambda: lib.nn.Module(3), lambda: lib.nn.Module(extra=1)):
        try:
            call()
        except Exception as e:  # noqa: BLE001 (the type is compared too)
            messages.append((type(e).__name__, str(e)))
    model.set_submodule("0", lib.nn.Tanh())
    model.set_submodule("1.act", lib.nn.ReLU())

    class Base:
        def __init__(self, *args, **kwargs):
            self.base_args = (args, kwargs)

    class Cooperative(lib.nn.Module, Base):
        call_super_init = True

    both = Cooperative(1, key=2)
    lin = lib.nn.Linear(3, 4, dtype=lib.float64)
    weight = lin.weight
    lin.to_empty(device="cpu")
    return (found, messages, repr(model), both.base_args, both.training,
            lin.weight is weight, lin.weight.shape == (4, 3), lin.weight.dtype == lib.float64,
            lib.nn.Module.dump_patches, lib.nn.Module._version,
            lib.nn.Module.T_destination.__name__)


def late_hooks(lib):
    """Forward hooks registered while forward runs: in a call that began with no hook
    anywhere (torch's call then goes straight to forward and runs none), and in one that
    began with a hook (the hooks are read after forward: both run)."""
    log = []

    class Late(lib.nn.Module):
        def forward(self, x):
            self.register_forward_hook(lambda module, args, out: log.append("hook"))
            log.append("registered")
            return x * 2

    m = Late()
    m(lib.ones(1))
    log.append("second call")
    m(lib.ones(1))
    return log


def test_a_hook_registered_during_a_call_without_hooks_runs_from_the_next_call():
    assert late_hooks(gt) == ["registered", "second call", "registered", "hook", "hook"]


def taken_names(lib):
    """Registering a parameter, a buffer and a submodule under names the module already has
    as something else (an attribute, a method, a property, one that raises AttributeError,
    another store's entry), its own store's and a new one: what each registration says."""
    class Probe(lib.nn.Module):
        @property
        def fine(self):
            return 1

        @property
        def broken(self):
            raise AttributeError("not now")

    m = Probe()
    m.plain = 3
    m.register_buffer("buf", lib.zeros(1))
    m.p = lib.nn.Parameter(lib.zeros(1))
    said = []
    for name in ("plain", "forward", "fine", "broken", "buf", "p", "new"):
        for register in (m.register_parameter, m.register_buffer, m.add_module):
            try:
                register(name, None)
                said.append("registered")
            except KeyError as e:
                said.append(str(e))
    return said


def test_a_name_the_module_already_has_is_refused_as_torch():
    said = taken_names(gt)
    taken = "\"attribute '{}' already exists\""
    assert said[:3] == [taken.format("plain")] * 3
    assert said[3:9] == [taken.format("forward")] * 3 + [taken.format("fine")] * 3
    # a property raising AttributeError is no attribute, as hasattr says
    assert said[9:12] == ["registered", taken.format("broken"), taken.format("broken")]
    assert said[12:15] == [taken.format("buf"), "registered", taken.format("buf")]
    assert said[15:18] == ["registered", taken.format("p"), taken.format("p")]
    assert said[18:] == ["registered", taken.format("new"), taken.format("new")]


def test_dotted_paths_super_init_and_to_empty():
    (found, messages, text, base_args, training, same, shape, dtype, dump_patches, version,
     destination) = dotted_paths(gt)
    assert found == [True, True]
    assert messages[0] == ("AttributeError", "`running_mean` is not an nn.Parameter")
    assert messages[1] == ("AttributeError", "`weight` is not a buffer")
    assert messages[2] == ("AttributeError", "Linear has no attribute `nope`")
    assert messages[4] == ("ValueError", "Cannot set the submodule without a target name!")
    assert messages[6] == ("AttributeError", "Linear has no attribute `sub`")
    assert messages[7] == ("AttributeError", "`weight` is not an nn.Module")
    assert messages[8] == ("TypeError",
                           "Module.__init__() takes 1 positional argument but 2 were given")
    assert "(0): Tanh()" in text and "(act): ReLU()" in text
    assert base_args == ((1,), {"key": 2}) and training
    assert same and shape and dtype
    assert (dump_patches, version, destination) == (False, 1, "T_destination")


def overridden_save(lib):
    """A subclass's _save_to_state_dict is what state_dict calls, for the module and inside
    a container; it sees torch's _non_persistent_buffers_set."""
    class Scaled(lib.nn.Linear):
        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "weight"] = destination[prefix + "weight"] * 2
            destination[prefix + "transient"] = sorted(self._non_persistent_buffers_set)

    scaled = Scaled(2, 1)
    scaled.register_buffer("tmp", lib.ones(1), persistent=False)
    with lib.no_grad():
        scaled.weight.fill_(1.0)
    state = lib.nn.Sequential(scaled).state_dict()
    return list(state), state["0.weight"].tolist(), state["0.transient"]


def test_an_overridden_save_to_state_dict_is_called():
    assert overridden_save(gt) == (["0.weight", "0.bias", "0.transient"], [[2.0, 2.0]], ["tmp"])
