"""In-place writes against torch: which writes into overlapping memory (an expand, an input
sharing the written tensor's memory) torch refuses and which it does, with its message, and
in-place ops on a tensor by itself then backward (with log_softmax of empty dims). Tests
marked parity, skipped without torch; the plain tests are in tests/engine/test_inplace.py."""
import warnings

import pytest

import gradtool as gt

try:
    import torch
except ImportError:  # every test here skips
    torch = None

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(torch is None, reason="torch is not installed")]


OVERLAP_WRITES = [
    "x.expand(3, 4).add_(1)", "x.expand(3, 4).fill_(1.0)", "x.expand(3, 4).zero_()",
    "x.expand(3, 4).masked_fill_(lib.tensor([[True, False, False, False]] * 3), 1.0)",
    "x.expand(3, 4).copy_(lib.ones(3, 4))", "x.expand(3, 4)[0] = 1.0",
    "x.expand(3, 4)[[0]] = 1.0", "x.expand(3, 4)[:, 0].exp_()", "x.expand(3, 1).mul_(2)",
    "x.expand(3, 4)[1, 2].add_(1)", "x.view(3)[1:].add_(x.view(3)[:-1])", "x.add_(x)",
    "x.view(3)[[0, 1]] = x.view(3)[1:]", "x.view(3)[1:].copy_(x.view(3)[:-1])",
    "x.expand(3, 4).copy_(x.expand(3, 4))", "x[None] = x", "x[0:1, :].copy_(x[0])",
    "x.view(3)[:1][-2:3:3] = x.view(3)[:1]", "x[None] = x.permute(1, 0)[:, :1]"]


def run_write(lib, code):
    x = lib.arange(3.0, dtype=lib.float64).view(3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, {"lib": lib, "x": x})
        except RuntimeError as e:
            return str(e)[:60]
    return x.flatten().tolist()


@pytest.mark.parametrize("code", OVERLAP_WRITES)
def test_overlapping_writes_are_refused_or_done_as_torch(code):
    assert run_write(gt, code) == run_write(torch, code)


def test_in_place_on_itself_and_empty_softmax_match_torch():
    def run(lib):
        out = []
        for code in ("m.mul_(m)", "m.div_(m)", "m.add_(m)", "m.pow_(2)"):
            m = lib.ones(3, requires_grad=True) * 1
            eval(code, {"m": m})
            try:
                m.sum().backward()
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e)[:60])
        for shape, dim in (((0, 3), 0), ((0, 3), 1), ((2, 0), 1)):
            out.append(tuple(lib.zeros(*shape).log_softmax(dim).shape))
        return out
    assert run(gt) == run(torch)


# An index op's index or mask, written into after the forward: torch's SavedVariable notices.
# (`i`: an int64 index, `m`: a bool mask, `x`: a float64 leaf of shape (3, 4))
INDEX_WRITTEN = [
    "x[i]", "x[m]", "x[i, 1:]", "x[:, i]", "x.index_select(0, i)", "x.take(i)",
    "x.gather(0, i.view(2, 1).expand(2, 4))", "lib.take_along_dim(x, i.view(2, 1), 0)",
    "lib.take_along_dim(x, i, None)", "x.masked_fill(m.view(3, 1), 0.0)",
    "x[m].masked_select(m[:2].view(2, 1))", "lib.where(m.view(3, 1), x, 0.0)",
    "lib.nn.functional.embedding(i, x)", "lib.zeros(3, 4, dtype=lib.float64).index_add(0, i, x[:2])",
    "lib.zeros(3, 4, dtype=lib.float64).scatter(0, i.view(2, 1).expand(2, 4), x[:2])",
    "x.index_put((i,), lib.tensor(1.0, dtype=lib.float64))",
    "x.index_put((m,), x[0, 0], accumulate=True)",
    "lib.nn.functional.nll_loss(x, i.repeat(2)[:3])", "set_index(x * 1, i)",
    "set_index(x * 1, m)", "(x * 1).index_put_((i,), x[0])",
]

INT32_TOO = ("x[", "set_index", "x.index_select", "x.index_put", "(x * 1).index_put_")


def _index_written(lib, code, index_dtype):
    x = lib.arange(12.0, dtype=lib.float64).view(3, 4).requires_grad_()
    i = lib.tensor([0, 2], dtype=index_dtype)
    m = lib.tensor([True, False, True])

    def set_index(y, index):
        y[index] = 0.0
        return y
    out = eval(code, {"lib": lib, "x": x, "i": i, "m": m, "set_index": set_index})
    i.add_(0)  # (a write: versions move, values stay)
    m.logical_and_(m) if hasattr(m, "logical_and_") else m.copy_(m.clone())
    try:
        out.sum().backward()
    except RuntimeError as e:
        return str(e).split(" Hint:")[0].split(" It was saved")[0].replace("gradtool.", "torch.")
    return x.grad.tolist()


@pytest.mark.parametrize("code", INDEX_WRITTEN)
def test_writing_into_an_index_after_the_forward_fails_the_backward_as_torch(code):
    # (torch's indexing takes an int32 index too; its other index ops want int64)
    for index_dtype in ("int64", "int32") if code.startswith(INT32_TOO) else ("int64",):
        ours = _index_written(gt, code, getattr(gt, index_dtype))
        theirs = _index_written(torch, code, getattr(torch, index_dtype))
        assert ours == theirs, (index_dtype, ours, theirs)


# Every in-place Tensor method the engine has, on a float64 tensor in the graph: its node is
# torch's. The arguments each needs (`o`: a float64 tensor like x, `i`: an int64 index,
# `m`: a bool mask); a method not listed takes none, or one of FIRST_ARGUMENTS (the first
# that torch accepts).
INPLACE_ARGUMENTS = {
    "addbmm_": "o[None, :, :1].expand(2, 3, 1), o[None, :1].expand(2, 1, 4)",
    "addmm_": "o[:, :2], o[:2]", "addmv_": "o[:, :3], o[0, :3]", "addr_": "o[:, 0], o[0]",
    "baddbmm_": "o[None, :, :1], o[None, :1]", "index_put_": "(i,), o[0]",
    "renorm_": "2, 0, 1.0", "scatter_add_": "1, i.view(1, 2).expand(3, 2), o",
    "index_reduce_": "0, i, o[:2], 'prod'", "put_": "i, o[0, :2]",
    "scatter_reduce_": "1, i.view(1, 2).expand(3, 2), o, 'amax'", "swapaxes_": "0, 1",
    "swapdims_": "0, 1", "transpose_": "0, 1",
    "clamp_": "0.75, 1.25", "clip_": "0.75, 1.25", "clamp_min_": "0.75", "clamp_max_": "1.25",
    "polygamma_": "2", "scatter_": "1, i.view(1, 2).expand(3, 2), o",
    "index_fill_": "0, i, 1.0", "index_copy_": "0, i, o[:2]", "index_add_": "0, i, o[:2]",
    "masked_fill_": "m, 1.0", "masked_scatter_": "m, o", "unsqueeze_": "0",
}
FIRST_ARGUMENTS = ["o", "1", "o, o", "0.5", "0.25, 0.75", "m, o", "1, i.view(3, 1) % 2"]
# no node on a float64 tensor in the graph, in torch as in the engine: integer and bool ops,
# Python callables, memory management
INPLACE_WITHOUT_NODE = {
    "apply_", "map_", "map2_", "resize_", "resize_as_", "resize_as_sparse_",
    "sparse_resize_", "sparse_resize_and_clear_", "bitwise_and_", "bitwise_or_",
    "bitwise_xor_", "bitwise_not_", "bitwise_left_shift_", "bitwise_right_shift_", "gcd_",
    "lcm_", "requires_grad_", "share_memory_", "detach_", "retain_grad_",
    "as_strided_",  # (the engine refuses it on a tensor that requires grad: NotInEngineError)
}


def _engine_inplace_methods():
    """The in-place methods both libraries have (none without torch: the test is skipped)."""
    names = []
    if torch is None:
        return names
    x = gt.zeros(1)
    for name in dir(gt.Tensor):
        if not name.endswith("_") or name.startswith("_") or not hasattr(torch.Tensor, name):
            continue
        try:
            getattr(x, name)
        except AttributeError:  # (a name the engine names, and does not provide)
            continue
        names.append(name)
    return names


def _inplace_node(lib, name, arguments):
    x = (lib.arange(12, dtype=lib.float64).view(3, 4) / 12 + 0.5).requires_grad_()
    o = lib.arange(12, dtype=lib.float64).view(3, 4) / 24 + 0.75
    i, m = lib.tensor([0, 2]), lib.tensor([[True, False, True, False]] * 3)
    y = x[:, 0] * 1 if name == "addmv_" else x[None] * 1 if name == "baddbmm_" else x * 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = eval(f"({arguments},)" if arguments else "()", {"o": o, "i": i, "m": m})
        out = getattr(y, name)(*args)
    return out.grad_fn.name().replace("torch::autograd::", "")  # (the engine's C++ names)


@pytest.mark.parametrize("name", sorted(set(_engine_inplace_methods()) - INPLACE_WITHOUT_NODE))
def test_the_node_of_every_inplace_method_is_torchs(name):
    tries = [INPLACE_ARGUMENTS[name]] if name in INPLACE_ARGUMENTS else [""] + FIRST_ARGUMENTS
    for arguments in tries:
        try:
            theirs = _inplace_node(torch, name, arguments)
        except (RuntimeError, TypeError, IndexError):
            continue
        assert _inplace_node(gt, name, arguments) == theirs, arguments
        return
    pytest.fail(f"no arguments in INPLACE_ARGUMENTS or FIRST_ARGUMENTS for {name}")


IN_PLACE_WRITES = [
    "x.fill_diagonal_(7.0)", "x.t().fill_diagonal_(7.0)", "x[:, 1:].fill_diagonal_(-1.0)",
    "lib.zeros(7, 3).fill_diagonal_(1.0, wrap=True)", "lib.zeros(8, 2).fill_diagonal_(2, True)",
    "lib.zeros(3, 7).fill_diagonal_(1.0, wrap=True)", "lib.zeros(3, 3, 3).fill_diagonal_(5)",
    "lib.zeros(2, 3, 2).fill_diagonal_(5)", "lib.zeros(3).fill_diagonal_(5)",
    "x.logical_and_(lib.tensor([1, 0, 1, 0]))", "x.logical_or_(x < 0.8)",
    "lib.tensor([0, 3, -2]).logical_xor_(lib.tensor([1, 1, 0]))", "x.logical_not_()",
    "x.xlogy_(x + 1)", "x.xlogy_(2.0)", "lib.tensor([0, 1, 2]).xlogy_(2)",
    "x.floor_divide_(0.25)", "lib.tensor([5, -7]).floor_divide_(2)",
]


@pytest.mark.parametrize("code", IN_PLACE_WRITES)
def test_in_place_writes_give_torchs_values_and_node(code):
    def run(lib):
        x = (lib.arange(12, dtype=lib.float64).view(3, 4) / 6 - 0.25).requires_grad_()
        y = x * 1
        try:
            out = eval(code, {"lib": lib, "x": y})
        except RuntimeError as e:
            return str(e)
        node = out.grad_fn and out.grad_fn.name().replace("torch::autograd::", "")
        if out.requires_grad:
            try:
                out.sum().backward()
            except RuntimeError as e:  # (a node that refuses: the same words)
                return out.tolist(), node, str(e)
            return out.tolist(), node, x.grad.tolist()
        return out.tolist(), node, str(out.dtype).split(".")[1]
    assert run(gt) == run(torch)


def test_set_records_a_node_whose_backward_raises_as_torch():
    def run(lib, source):
        x = lib.ones(3, requires_grad=True)
        y = x.clone()
        y.set_(*source(lib))
        names = [None if n is None else n.name().replace("torch::autograd::", "")
                 for n, _ in y.grad_fn.next_functions]
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        return y.grad_fn.name().replace("torch::autograd::", ""), names, str(error.value)
    for source in (lambda lib: (lib.ones(2) * 3,), lambda lib: (),
                   lambda lib: (lib.ones(4, requires_grad=True) * 2,)):
        assert run(gt, source) == run(torch, source)
    for lib in (gt, torch):  # (a tensor without history, set to one with: recorded too)
        y = lib.zeros(2)
        y.set_(lib.ones(2, requires_grad=True) * 2)
        assert y.requires_grad and y.grad_fn.name().endswith("NotImplemented")


@pytest.mark.parametrize("code", ["x.floor_divide(2.0)", "x // (x * 1)", "5.0 // x",
                                  "lib.floor_divide(x, 2, out=lib.empty(3))"])
def test_floor_divide_records_a_node_that_refuses_as_torch(code):
    def run(lib):
        x = lib.tensor([3.0, 5.0, -7.5], requires_grad=True)
        y = eval(code, {"lib": lib, "x": x})
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        return y.tolist(), y.grad_fn.name().replace("torch::autograd::", ""), str(error.value)
    assert run(gt) == run(torch)
