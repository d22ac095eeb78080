"""torch.library on the engine: custom_op and its registrations, the schema inferred from
type hints, torch.ops lookup, Library.define/impl, opcheck's verdicts; each op's call records
one node named as torch names it. The programs here run on torch too
(tests/parity/test_library.py): each is a function of the torch module it runs on."""
import re
import typing
import warnings

import pytest

import gradtool as torch
from gradtool import Tensor
from gradtool.library import OpCheckError, infer_schema

_count = [0]


def unique(name):
    """An op name not used before in this process (torch keeps every op it registers)."""
    _count[0] += 1
    return f"gt_test::{name}_{_count[0]}"


# ------------------------------------------------------------------ programs (both engines)
def scaled_sin(torch, name=None):
    """The recommended shape of a custom op: kernel, fake kernel, setup_context, backward."""
    Tensor = torch.Tensor

    def kernel(x: Tensor, k: float = 2.0) -> Tensor:
        return torch.sin(x) * k
    op = torch.library.custom_op(name or unique("scaled_sin"), kernel, mutates_args=())

    @op.register_fake
    def _(x, k=2.0):
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.cos(x) * ctx.k, None
    op.register_autograd(backward, setup_context=setup_context)
    return op


def no_autograd(torch):
    def cube(x: torch.Tensor) -> torch.Tensor:
        return x ** 3
    op = torch.library.custom_op(unique("cube"), cube, mutates_args=())
    op.register_fake(lambda x: torch.empty_like(x))
    return op


def aliasing(torch):
    def same(x: torch.Tensor) -> torch.Tensor:
        return x
    return torch.library.custom_op(unique("same"), same, mutates_args=())


def undeclared_mutation(torch):
    def scale(x: torch.Tensor) -> torch.Tensor:
        x.mul_(3.0)
        return x * 1.0
    op = torch.library.custom_op(unique("scale"), scale, mutates_args=())
    op.register_fake(lambda x: torch.empty_like(x))
    return op


def declared_mutation(torch):
    def accumulate(buffer: torch.Tensor, x: torch.Tensor) -> None:
        buffer.add_(x)
    return torch.library.custom_op(unique("accumulate"), accumulate, mutates_args=("buffer",))


def fake_of(torch, fake):
    def kernel(x: torch.Tensor) -> torch.Tensor:
        return x * 2
    op = torch.library.custom_op(unique("twice"), kernel, mutates_args=())
    op.register_fake(fake)
    op.register_autograd(lambda ctx, grad: grad * 2)
    return op


FAKES = {  # a fake kernel that disagrees with x * 2 on a (2, 3) input, and torch's word for it
    "shape": (lambda torch: lambda x: x.new_empty((3, 2)), "Shapes"),
    "dtype": (lambda torch: lambda x: torch.empty_like(x, dtype=torch.float32), "Dtypes"),
    "strides": (lambda torch: lambda x: torch.empty_like(x).t().contiguous().t(),
                "Stride mismatch"),
}


def library_op(torch, with_autograd):
    """An op made the older way: Library.define, a CPU kernel (and an autograd kernel)."""
    ns = unique("lib").replace("::", "_")
    lib = torch.library.Library(ns, "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    if with_autograd:
        lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
    return lib, getattr(getattr(torch.ops, ns), "twice")


def verdicts(results):
    """opcheck's result dict with each failure as its exception's type name."""
    return {k: v if isinstance(v, str) else type(v).__name__ for k, v in results.items()}


def x64(torch, *shape, requires_grad=True):
    torch.manual_seed(0)
    return torch.randn(*shape, dtype=torch.float64, requires_grad=requires_grad)


# ------------------------------------------------------------------ the engine's behaviour
def test_a_custom_op_records_one_node_named_as_torch_names_it_with_its_saved_tensor():
    op = scaled_sin(torch, "gt_test::named_sin")
    x = x64(torch, 3)
    y = op(x, 3.0)
    assert y.grad_fn.name() == "GeneratedBackwardFor_gt_test_named_sin_defaultBackward"
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]
    (saved,) = y.grad_fn.saved_tensors
    assert torch.equal(saved, x)
    y.sum().backward()
    assert torch.allclose(x.grad, torch.cos(x) * 3.0)
    assert torch.allclose(y, torch.sin(x) * 3.0)


def test_the_kernel_records_nothing_and_a_call_without_grad_records_no_node():
    op = scaled_sin(torch)
    x = x64(torch, 3)
    with torch.no_grad():
        assert op(x).grad_fn is None
    assert op(x.detach()).grad_fn is None


def test_custom_op_as_decorator_and_the_ops_namespace():
    @torch.library.custom_op("gt_test::decorated", mutates_args=())
    def decorated(x: Tensor, y: typing.Optional[Tensor] = None, *, scale: float = 1.0) -> Tensor:
        return x * scale if y is None else (x + y) * scale
    x = x64(torch, 2)
    assert repr(decorated) == "<CustomOpDef(gt_test::decorated)>"
    packet = torch.ops.gt_test.decorated
    assert str(packet) == "gt_test.decorated" and str(packet.default) == \
        "gt_test.decorated.default"
    assert packet.default.name() == "gt_test::decorated"
    assert torch.equal(packet(x, scale=2.0), x * 2) and torch.equal(packet.default(x, x), 2 * x)
    with pytest.raises(AttributeError):
        torch.ops.gt_test.no_such_op


@pytest.mark.parametrize("mutates, expected", [
    ((), "(Tensor a, Tensor? b, Tensor[] c, SymInt d, float e, bool f, SymInt? g=None, *, "
         "str h=\"x\") -> (Tensor, Tensor)"),
    (("a", "c"), "(Tensor(a0!) a, Tensor? b, Tensor(a2!)[] c, SymInt d, float e, bool f, "
                 "SymInt? g=None, *, str h=\"x\") -> (Tensor, Tensor)"),
    ("unknown", "(Tensor(a0!) a, Tensor(a1!)? b, Tensor(a2!)[] c, SymInt d, float e, bool f, "
                "SymInt? g=None, *, str h=\"x\") -> (Tensor, Tensor)"),
])
def test_the_schema_is_inferred_from_type_hints_as_torch_infers_it(mutates, expected):
    def f(a: Tensor, b: typing.Optional[Tensor], c: typing.List[Tensor], d: int, e: float,
          f: bool, g: typing.Optional[int] = None, *, h: str = "x") -> typing.Tuple[Tensor,
                                                                                  Tensor]:
        ...
    assert infer_schema(f, mutates_args=mutates) == expected


SCHEMA_ERRORS = {
    "no hint": ("def f(x): ...", "Parameter x must have a type annotation."),
    "no return hint": ("def f(x: Tensor): ...",
                       "No return type annotation was provided. Please add one."),
    "varargs": ("def f(*xs: Tensor) -> Tensor: ...",
                "We do not support positional-only args, varargs, or varkwargs."),
    "a mutated number": ("def f(x: Tensor, n: int) -> Tensor: ...",
                         "Parameter n is in mutable_args but only Tensors or collections of "
                         "Tensors can be mutated"),
}


@pytest.mark.parametrize("case", sorted(SCHEMA_ERRORS))
def test_schema_errors_are_torchs(case):
    source, message = SCHEMA_ERRORS[case]
    namespace = {"Tensor": Tensor}
    exec(source, namespace)
    mutates = ("n",) if case == "a mutated number" else ()
    with pytest.raises(ValueError, match=re.escape(f"infer_schema(func): {message}")):
        torch.library.custom_op(unique("bad"), namespace["f"], mutates_args=mutates)


def test_mutates_args_is_required_and_checked():
    def f(x: Tensor) -> Tensor:
        return x.clone()
    with pytest.raises(TypeError, match="mutates_args"):
        torch.library.custom_op(unique("f"), f)
    with pytest.raises(ValueError, match="mutates_args must either be a sequence"):
        torch.library.custom_op(unique("f"), f, mutates_args="x")
    with pytest.raises(ValueError, match=r"\{'y'\} in mutates_args were not found"):
        torch.library.custom_op(unique("f"), f, mutates_args=("y",))
    with pytest.raises(ValueError, match="Expected there to be a namespace"):
        torch.library.custom_op("no_namespace", f, mutates_args=())


def test_backward_without_registered_autograd_raises_torchs_error():
    op = no_autograd(torch)
    y = op(x64(torch, 3))
    assert y.requires_grad  # the node is recorded; backward is what raises
    with pytest.raises(RuntimeError, match=re.escape(
            f"Trying to backward through {op._opoverload} but no autograd formula was "
            f"registered. Please use register_autograd to add one.")):
        y.sum().backward()


def test_an_output_aliasing_an_input_is_refused_at_the_call():
    op = aliasing(torch)
    with pytest.raises(RuntimeError, match="must not also be an input to this custom operator"):
        op(x64(torch, 3, requires_grad=False))


def test_a_declared_mutation_moves_the_version_on_and_refuses_autograd():
    op = declared_mutation(torch)
    buffer, x = x64(torch, 3, requires_grad=False), x64(torch, 3, requires_grad=False)
    before, version = buffer.clone(), buffer._version
    assert op(buffer, x) is None
    assert torch.allclose(buffer, before + x) and buffer._version > version
    with pytest.raises(RuntimeError, match="Cannot register autograd formula for "
                                           "non-functional operator"):
        op.register_autograd(lambda ctx, grad: grad)


def test_keyword_only_arguments_reach_setup_context():
    def mul(x: Tensor, *, val: float) -> Tensor:
        return x * val
    op = torch.library.custom_op(unique("mul"), mul, mutates_args=())

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.val = keyword_only_inputs["val"]
    op.register_autograd(lambda ctx, grad: grad * ctx.val, setup_context=setup_context)
    x = x64(torch, 3)
    (g,) = torch.autograd.grad(op(x, val=3.5).sum(), x)
    assert torch.allclose(g, torch.full_like(x, 3.5))


def test_registration_by_name_and_device_kernels():
    def kernel(x: Tensor) -> Tensor:
        return x + 1
    name = unique("plus_one")
    op = torch.library.custom_op(name, kernel, mutates_args=())
    torch.library.register_fake(name)(lambda x: torch.empty_like(x))
    torch.library.register_autograd(name, lambda ctx, grad: grad)
    torch.library.register_kernel(name, "cpu", lambda x: x + 2)  # the CPU kernel wins
    x = x64(torch, 3)
    assert torch.allclose(op(x), x + 2)
    assert verdicts(torch.library.opcheck(op, (x,))) == dict.fromkeys(
        ("test_schema", "test_autograd_registration", "test_faketensor",
         "test_aot_dispatch_dynamic"), "SUCCESS")
    with pytest.raises(NotImplementedError, match="__torch_dispatch__"):
        op.register_torch_dispatch(object, lambda *a: None)


def test_triton_op_is_a_custom_op_of_the_python_function_and_wrap_triton_cannot_run():
    def kernel(x: Tensor) -> Tensor:
        return x * 2
    op = torch.library.triton_op(unique("tri"), kernel, mutates_args=())
    assert torch.equal(op(x64(torch, 2)), x64(torch, 2) * 2)
    with pytest.raises(RuntimeError, match="cannot run the triton kernel"):
        torch.library.wrap_triton(kernel)[(1,)](1)


def test_library_define_and_impl():
    lib, packet = library_op(torch, with_autograd=True)
    x = x64(torch, 3)
    y = packet(x)
    assert y.grad_fn.name() == "MulBackward0"  # composite: the ops it runs are recorded
    assert str(packet.default._schema).endswith("twice(Tensor x) -> Tensor")


def test_a_backend_kernel_without_autograd_warns_at_backward_as_torchs_fallback():
    lib, packet = library_op(torch, with_autograd=False)
    y = packet(x64(torch, 3))
    with pytest.warns(UserWarning, match="an autograd kernel was not registered to the "
                                         "Autograd key"):
        y.sum().backward()


# ------------------------------------------------------------------ opcheck
SUCCESS = dict.fromkeys(("test_schema", "test_autograd_registration", "test_faketensor",
                         "test_aot_dispatch_dynamic"), "SUCCESS")


def opcheck_cases(torch):
    """(name, op, args, expected verdicts): the same on both engines."""
    x = x64(torch, 2, 3)
    plain = x64(torch, 2, 3, requires_grad=False)
    return [
        ("right", scaled_sin(torch), (x,), SUCCESS),
        ("no autograd", no_autograd(torch), (x,),
         {**SUCCESS, "test_aot_dispatch_dynamic": "RuntimeError"}),
        ("aliasing", aliasing(torch), (plain,),
         {**SUCCESS, "test_schema": "RuntimeError", "test_faketensor": "RuntimeError",
          "test_aot_dispatch_dynamic": "RuntimeError"}),
        ("undeclared mutation", undeclared_mutation(torch), (plain,),
         {**SUCCESS, "test_schema": "RuntimeError"}),
        ("declared mutation", declared_mutation(torch), (plain, plain.clone()), SUCCESS),
        *[(f"fake {what}", fake_of(torch, make(torch)), (x,),
           {**SUCCESS, "test_faketensor": "MetadataMismatchError",
            # the traced backward gets gradients of the fake kernel's shape
            **({"test_aot_dispatch_dynamic": "RuntimeError"} if what == "shape" else {})})
          for what, (make, _) in FAKES.items()],
    ]


@pytest.mark.parametrize("index", range(8))
def test_opcheck_verdicts(index):
    name, op, args, expected = opcheck_cases(torch)[index]
    assert verdicts(torch.library.opcheck(op, args, raise_exception=False)) == expected, name


def test_opcheck_raises_torchs_error_at_the_first_failure():
    op = undeclared_mutation(torch)
    with pytest.raises(OpCheckError, match=re.escape(
            "opcheck(op, ...): test_schema failed with Argument x is not defined as mutable "
            "but was mutated (scroll up for stack trace)")):
        torch.library.opcheck(op, (x64(torch, 3, requires_grad=False),))
    with pytest.raises(ValueError, match="expected test_utils to be subset"):
        torch.library.opcheck(op, (x64(torch, 3),), test_utils="test_nothing")


@pytest.mark.parametrize("what", sorted(FAKES))
def test_the_fake_kernel_mismatch_names_what_differs(what):
    make, word = FAKES[what]
    result = torch.library.opcheck(fake_of(torch, make(torch)), (x64(torch, 2, 3),),
                                   raise_exception=False)["test_faketensor"]
    assert f"found mismatched tensor metadata: {word}" in str(result)


def test_opcheck_of_a_library_op_without_autograd_or_fake():
    lib, packet = library_op(torch, with_autograd=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = verdicts(torch.library.opcheck(packet.default, (x64(torch, 3),),
                                                raise_exception=False))
    assert result == {"test_schema": "SUCCESS", "test_autograd_registration": "AssertionError",
                      "test_faketensor": "UnsupportedOperatorException",
                      "test_aot_dispatch_dynamic": "UnsupportedOperatorException"}


def declared_mutation_versions(torch):
    """How far a declared mutation moves the version on: the kernel's in-place op, then the
    op's own bump (torch's ADInplaceOrView); a write through numpy, the op's alone."""
    op = declared_mutation(torch)
    buffer, x = x64(torch, 3, requires_grad=False), x64(torch, 3, requires_grad=False)
    before = buffer._version
    op(buffer, x)
    in_place = buffer._version - before

    def through_numpy(buf: torch.Tensor) -> None:
        buf.numpy()[:] += 1
    op = torch.library.custom_op(unique("np_write"), through_numpy, mutates_args=("buf",))
    before = buffer._version
    op(buffer)
    return in_place, buffer._version - before


def test_a_declared_mutation_moves_the_version_on_once_more_than_the_kernel():
    assert declared_mutation_versions(torch) == (2, 1)


def test_define_and_impl_by_name():
    name = unique("by_name")
    torch.library.define(name, "(Tensor x, float k=2.0) -> Tensor")
    torch.library.impl(name, "cpu")(lambda x, k=2.0: x * k)
    torch.library.register_fake(name, lambda x, k=2.0: torch.empty_like(x))
    ns, op = name.split("::")
    packet = getattr(getattr(torch.ops, ns), op)
    x = x64(torch, 3, requires_grad=False)
    assert torch.equal(packet(x), x * 2) and torch.equal(packet.default(x, k=3.0), x * 3)
    assert str(packet.default._schema) == f"{name}(Tensor x, float k=2.0) -> Tensor"
    with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
        torch.library.define(name, "(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="does not exist"):
        torch.library.impl("gt_test::never_defined", "cpu")(lambda x: x)


def view_of_input(torch):
    def first_row(x: torch.Tensor) -> torch.Tensor:
        return x[:1]  # a view: the same memory as x
    return torch.library.custom_op(unique("first_row"), first_row, mutates_args=())


def test_an_output_that_views_an_input_is_refused_at_the_call():
    with pytest.raises(RuntimeError, match="may not alias any inputs to this custom operator"):
        view_of_input(torch)(x64(torch, 2, 3, requires_grad=False))


# ------------------------------------------------------------------ List[Tensor] arguments
def weighted_sum(torch, name=None):
    """sum_i xs[i] * w, xs a List[Tensor]: backward returns a list of gradients for xs, None
    where an entry needs none (as ctx.needs_input_grad says, per entry)."""
    Tensor = torch.Tensor

    def kernel(xs: typing.Sequence[Tensor], w: Tensor) -> Tensor:
        return sum(x * w for x in xs)
    op = torch.library.custom_op(name or unique("weighted_sum"), kernel, mutates_args=())

    def setup_context(ctx, inputs, output):
        xs, w = inputs
        ctx.save_for_backward(w, *xs)

    def backward(ctx, grad):
        w, *xs = ctx.saved_tensors
        needs_xs, needs_w = ctx.needs_input_grad
        return ([grad * w if needed else None for needed in needs_xs],
                grad * sum(xs) if needs_w else None)
    op.register_autograd(backward, setup_context=setup_context)
    return op


def split_scaled(torch, name=None):
    """x -> [x * 1, x * 2, ..., x * n]: a List[Tensor] result, whose gradients arrive in
    backward as one list."""
    Tensor = torch.Tensor

    def kernel(x: Tensor, n: int) -> typing.List[Tensor]:
        return [x * (i + 1) for i in range(n)]
    op = torch.library.custom_op(name or unique("split_scaled"), kernel, mutates_args=())

    def backward(ctx, grads):
        return sum(g * (i + 1) for i, g in enumerate(grads)), None
    op.register_autograd(backward, setup_context=lambda ctx, inputs, output: None)
    return op


def wrong_structure(torch):
    """A backward that returns one tensor for a list argument: torch refuses its structure."""
    def kernel(xs: typing.List[torch.Tensor]) -> torch.Tensor:
        return sum(x * 1.0 for x in xs)
    op = torch.library.custom_op(unique("wrong_structure"), kernel, mutates_args=())
    op.register_autograd(lambda ctx, grad: grad)
    return op


def test_each_tensor_of_a_list_argument_gets_its_gradient():
    op = weighted_sum(torch)
    xs = [x64(torch, 3), x64(torch, 3) * 2, x64(torch, 3, requires_grad=False)]
    w = x64(torch, 3)
    y = op(xs, w)
    assert [type(n).__name__ if n else None for n, _ in y.grad_fn.next_functions] == \
        ["AccumulateGrad", "MulBackward0", None, "AccumulateGrad"]
    g0, g1, gw = torch.autograd.grad(y.sum(), [xs[0], xs[1], w])
    assert torch.allclose(g0, w) and torch.allclose(g1, w)  # the closed form
    assert torch.allclose(gw, xs[0] + xs[1] + xs[2])
    leaves = [x64(torch, 3), x64(torch, 3), x64(torch, 3)]
    assert torch.autograd.gradcheck(lambda a, b, w: op([a, b], w), tuple(leaves))


def test_a_list_argument_whose_entries_need_no_gradient_gets_none_entries():
    op = weighted_sum(torch)
    a, b, w = x64(torch, 2), x64(torch, 2, requires_grad=False), x64(torch, 2)
    op([a, b], w).sum().backward()
    assert torch.allclose(a.grad, w) and b.grad is None


def test_a_list_result_gives_backward_a_list_of_gradients():
    op = split_scaled(torch)
    x = x64(torch, 3)
    parts = op(x, 3)
    assert isinstance(parts, list) and len(parts) == 3
    (parts[0] + parts[2] * 10).sum().backward()  # the second part unused: a zero gradient
    assert torch.allclose(x.grad, torch.full_like(x, 1.0 + 30.0))
    assert torch.autograd.gradcheck(lambda x: tuple(op(x, 2)), (x64(torch, 3),))


def test_a_backward_of_the_wrong_structure_is_refused_in_torchs_words():
    op = wrong_structure(torch)
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected the return from backward to be of the same structure as the inputs. "
            "Got: TreeSpec(tuple, None, [*,\n  *]) (return from backward), TreeSpec(tuple, None, "
            "[TreeSpec(list, None, [*,\n    *]),\n  *]) (inputs)")):
        op([x64(torch, 2), x64(torch, 2)]).sum().backward()


# ------------------------------------------------------------------ under vmap and forward mode
def numpy_sin(torch, with_rule, calls=None):
    """sin computed by numpy (no op a vmap could batch), its backward registered, and with
    `with_rule` a vmap rule that runs it once on the whole batch (calls counts the kernel's
    calls)."""
    import numpy as np
    calls = [] if calls is None else calls

    def kernel(x: torch.Tensor) -> torch.Tensor:
        calls.append(tuple(x.shape))
        return torch.tensor(np.sin(x.numpy()), dtype=x.dtype)
    op = torch.library.custom_op(unique("numpy_sin"), kernel, mutates_args=())

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.cos(x)
    op.register_autograd(backward, setup_context=setup_context)
    if with_rule:
        op.register_vmap(lambda info, in_dims, x: (op(x), in_dims[0]))
    return op


def scaled_pair(torch):
    """(x * k, y): a vmap rule that keeps an output unbatched (out_dims None) and takes a
    List[Tensor]; it records what it was given."""
    seen = []

    def kernel(xs: typing.List[torch.Tensor], k: float) -> typing.Tuple[torch.Tensor,
                                                                        torch.Tensor]:
        return xs[0] * k, xs[1] + 0.0
    op = torch.library.custom_op(unique("scaled_pair"), kernel, mutates_args=())

    def rule(info, in_dims, xs, k):
        seen.append((info.batch_size, info.randomness, in_dims, [tuple(x.shape) for x in xs]))
        first = xs[0] if in_dims[0][0] is not None else xs[0].expand(info.batch_size,
                                                                     *xs[0].shape)
        return (first * k, xs[1] + 0.0), (0, in_dims[0][1])
    op.register_vmap(rule)
    return op, seen


def custom_op_transforms(torch):
    """A custom op under vmap (its rule, the fallback, nested vmaps, the outer graph) and
    forward mode, on either engine: values, gradients, the rule's arguments, refusals."""
    import warnings as warnings_module
    F = torch.func
    x = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], dtype=torch.float64)
    calls = []
    ruled, plain = numpy_sin(torch, True, calls), numpy_sin(torch, False)
    out = {"rule": F.vmap(ruled)(x), "rule_calls": list(calls)}
    calls.clear()
    out["nested"] = F.vmap(F.vmap(ruled))(x)
    out["nested_calls"] = list(calls)
    with warnings_module.catch_warnings():
        warnings_module.simplefilter("ignore")
        out["fallback"] = F.vmap(plain)(x)
        leaf = x.clone().requires_grad_()
        (out["fallback_grad"],) = torch.autograd.grad(F.vmap(plain)(leaf).sum(), leaf)
    leaf = x.clone().requires_grad_()
    y = F.vmap(ruled)(leaf)
    out["rule_node"] = type(y.grad_fn).__name__.rsplit("_", 2)[0]  # (the op's number off)
    (out["rule_grad"],) = torch.autograd.grad(y.sum(), leaf)
    pair, seen = scaled_pair(torch)
    first, second = F.vmap(pair, in_dims=([0, None], None))([x, x[0]], 2.0)
    out["pair"], out["pair_seen"] = (first, second), seen
    for name, run in {
        "grad": lambda: F.grad(lambda a: ruled(a).sum())(x[0]),
        "vmap_grad": lambda: F.vmap(F.grad(lambda a: ruled(a).sum()))(x),
        "forward_ad_requiring_grad": lambda: _dual_through(torch, ruled, leaf),
        "one_return": lambda: F.vmap(_one_return_rule(torch))(x),
    }.items():
        try:
            run()
            out[name] = "no error"
        except (RuntimeError, NotImplementedError) as e:
            out[name] = f"{type(e).__name__}: {e}"
    out["jvp"] = F.jvp(ruled, (x,), (torch.ones_like(x),))
    out["forward_ad_tangent"] = _dual_through(torch, ruled, x)
    return out


def _dual_through(torch, op, x):
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        return fwAD.unpack_dual(op(fwAD.make_dual(x, torch.ones_like(x)))).tangent


def _one_return_rule(torch):
    def kernel(x: torch.Tensor) -> torch.Tensor:
        return x * 2
    op = torch.library.custom_op(unique("one_return"), kernel, mutates_args=())
    op.register_vmap(lambda info, in_dims, x: op(x))
    return op


def test_a_vmap_rule_runs_once_on_the_batch_and_the_fallback_once_per_example():
    from gradtool.engine.func import rules
    out = custom_op_transforms(torch)
    x = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], dtype=torch.float64)
    assert torch.allclose(out["rule"], x.sin()) and out["rule_calls"] == [(3, 2)]
    assert torch.allclose(out["nested"], x.sin()) and out["nested_calls"] == [(3, 2)]
    assert torch.allclose(out["fallback"], x.sin())
    assert torch.allclose(out["fallback_grad"], x.cos())
    op = numpy_sin(torch, False)
    with pytest.warns(UserWarning, match=f"the batching rule for {op._qualname}. gradtool "
                                         f"runs it one example at a time"):
        torch.func.vmap(op)(x)
    assert rules.FALLBACKS[op._qualname] == 1


def test_through_a_vmap_rule_the_outer_graph_records_the_ops_node_and_its_backward():
    out = custom_op_transforms(torch)
    x = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], dtype=torch.float64)
    assert out["rule_node"] == "GeneratedBackwardFor_gt_test_numpy_sin"
    assert torch.allclose(out["rule_grad"], x.cos())  # the registered backward's closed form
    op = numpy_sin(torch, True)
    assert torch.autograd.gradcheck(lambda a: torch.func.vmap(op)(a),
                                    (x.clone().requires_grad_(),))


def test_a_vmap_rule_gets_physical_arguments_list_in_dims_and_may_keep_an_output_unbatched():
    out = custom_op_transforms(torch)
    x = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], dtype=torch.float64)
    first, second = out["pair"]
    assert torch.allclose(first, x * 2) and torch.equal(second, x[0].expand(3, 2))
    assert out["pair_seen"] == [(3, "error", ([0, None], None), [(3, 2), (2,)])]


def test_under_grad_transforms_and_forward_mode_a_custom_op_does_as_torch():
    out = custom_op_transforms(torch)
    refusal = "must override the setup_context staticmethod"
    assert refusal in out["grad"] and refusal in out["vmap_grad"]
    assert out["forward_ad_requiring_grad"] == (
        "NotImplementedError: You must implement the jvp function for custom "
        "autograd.Function to use it with forward mode AD.")
    assert out["one_return"].startswith("RuntimeError: Expected the vmap staticmethod to have "
                                        "two returns")
    # the kernel runs below forward AD too: no tangent comes out (zeros from jvp)
    assert out["forward_ad_tangent"] is None
    assert torch.equal(out["jvp"][1], torch.zeros(3, 2, dtype=torch.float64))


# ------------------------------------------------------------------ tags
def tagged_ops(torch):
    """The tags ops carry, as torch.ops.<ns>.<op>.default.tags reads them: a custom op's
    (pt2_compliant_tag first, duplicates dropped, one Tag alone accepted) and Library.define's
    (as given)."""
    Tag = torch.Tag

    def kernel(x: torch.Tensor) -> torch.Tensor:
        return x.clone()
    plain = torch.library.custom_op(unique("untagged"), kernel, mutates_args=())
    several = torch.library.custom_op(
        unique("tagged"), kernel, mutates_args=(),
        tags=(Tag.needs_fixed_stride_order, Tag.pt2_compliant_tag, Tag.needs_fixed_stride_order))
    one = torch.library.custom_op(unique("pointwise"), kernel, mutates_args=(),
                                  tags=Tag.pointwise)
    ns = unique("tags").replace("::", "_")
    lib = torch.library.Library(ns, "DEF")
    lib.define("given(Tensor x) -> Tensor", tags=[Tag.inplace_view, Tag.core])
    lib.define("alone(Tensor x) -> Tensor", tags=Tag.nondeterministic_seeded)
    lib.define("none(Tensor x) -> Tensor")
    packet = getattr(torch.ops, ns)
    tags = {"plain": plain._opoverload.tags, "several": several._opoverload.tags,
            "one": one._opoverload.tags, "given": packet.given.default.tags,
            "alone": packet.alone.default.tags, "none": packet.none.default.tags}
    return ({k: [repr(t) for t in v] for k, v in tags.items()},
            Tag.pt2_compliant_tag in tags["several"],
            sorted((name, tag.value) for name, tag in Tag.__members__.items()), lib)


def test_ops_keep_their_tags_as_torch_does():
    tags, compliant, members, _ = tagged_ops(torch)
    assert tags["plain"] == ["<Tag.pt2_compliant_tag: 17>"]
    assert tags["several"] == ["<Tag.pt2_compliant_tag: 17>",
                               "<Tag.needs_fixed_stride_order: 11>"]
    assert tags["one"] == ["<Tag.pt2_compliant_tag: 17>", "<Tag.pointwise: 16>"]
    assert tags["given"] == ["<Tag.inplace_view: 7>", "<Tag.core: 0>"]
    assert tags["alone"] == ["<Tag.nondeterministic_seeded: 13>"] and tags["none"] == []
    assert compliant and ("pointwise", 16) in members
    assert str(torch.Tag.pointwise) == "Tag.pointwise" and torch.Tag.pointwise.name == "pointwise"
    with pytest.raises(TypeError, match="torch.Tag"):
        torch.library.Library(unique("t").replace("::", "_"), "DEF").define(
            "f(Tensor x) -> Tensor", tags=["pointwise"])
