"""torch's top-level ops the engine added beyond its Tensor methods (torch.rsub, torch.index_put
and index_put_, ...) against torch: values, gradients, the node recorded, dtypes and errors.
Tests marked parity, skipped without torch."""
import subprocess
import sys

import numpy as np
import pytest

import gradtool as gt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _input(lib):
    return lib.tensor(np.arange(-5.0, 7.0).reshape(3, 4) / 3, requires_grad=True)


# name: f(lib, x) -> a tensor computed from x, a (3, 4) float64 leaf
DIFFERENTIABLE = {
    "rsub_number": lambda lib, x: lib.rsub(x, 2.0, 3),
    "rsub_number_default_alpha": lambda lib, x: lib.rsub(x, 2),
    "rsub_tensor": lambda lib, x: lib.rsub(x, x[0] * 2, alpha=0.5),
    "rsub_tensor_broadcast": lambda lib, x: lib.rsub(x[:, :1], x[0].exp()),
    "index_put": lambda lib, x: x.index_put((lib.tensor([0, 2]),), x[1] * 3),
    "index_put_broadcast_value": lambda lib, x: lib.index_put(x, (lib.tensor([2, 0]),),
                                                              x[1, :1].exp()),
    "index_put_accumulate": lambda lib, x: lib.index_put(
        x * 1, (lib.tensor([0, 0]), lib.tensor([1, -1])), x[2, :2] ** 2, True),
    "index_put_bool": lambda lib, x: lib.index_put_(x * 1, (lib.tensor([True, False, True]),),
                                                    x[1]),
    "select_scatter_negative": lambda lib, x: lib.select_scatter(x, x[:, 0] ** 2, -1, -1),
    "select_scatter_method": lambda lib, x: x.select_scatter(x[0].exp(), 0, 2),
    "slice_scatter_defaults": lambda lib, x: lib.slice_scatter(x, x[:1] * 3, end=1),
    "slice_scatter_full": lambda lib, x: lib.slice_scatter(x, x.flip(1) * 3),
    "slice_scatter_negative": lambda lib, x: x.slice_scatter(x[:, :3].sin(), -1, -3),
    "diagonal_scatter": lambda lib, x: lib.diagonal_scatter(x, x[0, :3] * 2),
    "diagonal_scatter_dims": lambda lib, x: x.diagonal_scatter(x[1, :1].exp(), 2, -1, -2),
    "masked_scatter": lambda lib, x: x.masked_scatter(lib.tensor([True, False, True, True]),
                                                      x.flip(0) * 2),
    "masked_scatter_broadcast_self": lambda lib, x: lib.masked_scatter(
        x[:, :1], lib.tensor([[True, False], [False, False], [True, True]]), x.exp()),
    "masked_scatter_": lambda lib, x: (x * 1).masked_scatter_(lib.tensor([[True], [False],
                                                                          [True]]), x[1:] ** 2),
    "split_with_sizes": lambda lib, x: lib.split_with_sizes(x, [1, 3], 1)[1] * 2,
    "split_with_sizes_method": lambda lib, x: x.split_with_sizes((2, 1))[0].exp(),
    "frobenius_norm": lambda lib, x: lib.frobenius_norm(x, [1], True),
    "frobenius_norm_negative": lambda lib, x: lib.frobenius_norm(x, (-1, -2)),
    "frobenius_norm_int_dim": lambda lib, x: lib.frobenius_norm(x, 0),
    "nuclear_norm": lambda lib, x: lib.nuclear_norm(x.sin() + x * x),
    "nuclear_norm_keepdim": lambda lib, x: lib.nuclear_norm(x.exp() - x, True),
    "nuclear_norm_dims": lambda lib, x: lib.nuclear_norm(x.view(3, 2, 2), (0, 2), keepdim=True),
    "renorm": lambda lib, x: lib.renorm(x, 2, 0, 1.0),
    "renorm_negative_dim_p1": lambda lib, x: x.renorm(1, -1, 2.0),
    "renorm_inf": lambda lib, x: lib.renorm(x, float("inf"), 1, 1.0),
    "renorm_": lambda lib, x: (x * 1).renorm_(3, 0, 0.5),
    "index_put_int32": lambda lib, x: (x * 1).index_put_(
        (lib.tensor([1], dtype=lib.int32), lib.tensor([3])), x[0, 0] * 5),
}


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_values_gradients_and_node_match_torch(name):
    seen = []
    for lib in (gt, torch):
        x = _input(lib)
        out = DIFFERENTIABLE[name](lib, x)
        (out * lib.arange(1.0, out.numel() + 1, dtype=lib.float64).view(out.shape)).sum() \
            .backward()
        seen.append((tuple(out.shape), type(out.grad_fn).__name__,
                     out.detach().numpy().copy(), x.grad.numpy().copy()))
    (shape, node, value, grad), (t_shape, t_node, t_value, t_grad) = seen
    assert (shape, node) == (t_shape, t_node)
    np.testing.assert_allclose(value, t_value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-12, atol=1e-12)


DTYPES = {
    "rsub_int_number": lambda lib: lib.rsub(lib.tensor([1, 2], dtype=lib.int32), 2.5),
    "rsub_int_int": lambda lib: lib.rsub(lib.tensor([1, 2], dtype=lib.int32), lib.tensor([5, 7])),
    "rsub_half_alpha": lambda lib: lib.rsub(lib.ones(2, dtype=lib.float16), 1, alpha=0.5),
    "index_put_ints": lambda lib: lib.zeros(3, dtype=lib.int64).index_put(
        (lib.tensor([2]),), lib.tensor(7)),
    "select_scatter_ints_cast": lambda lib: lib.select_scatter(
        lib.zeros(2, 3, dtype=lib.int32), lib.tensor([1.7, -2.2, 3.9]), 0, 1),
    "slice_scatter_doubles_into_floats": lambda lib: lib.slice_scatter(
        lib.zeros(4), lib.ones(2, dtype=lib.float64) / 3, 0, 1, 3),
    "masked_scatter_ints": lambda lib: lib.zeros(4, dtype=lib.int64).masked_scatter(
        lib.tensor([False, True, False, True]), lib.tensor([5, 6, 7])),
    "masked_scatter_in_place_returns_self": lambda lib: (lambda t: t.masked_scatter_(
        lib.tensor([True]), lib.ones(2)) is t)(lib.zeros(2)),
    "renorm_float32": lambda lib: lib.renorm(lib.arange(-6.0, 6.0).view(3, 4) / 7, 2.5, 1, 0.3),
    "renorm_half": lambda lib: lib.renorm(lib.arange(-6.0, 6.0, dtype=lib.float16).view(3, 4),
                                          2, 0, 1.0),
    "split_with_sizes_count": lambda lib: len(lib.ones(3, 4).split_with_sizes([1, 0, 3], -1)),
    "index_put_in_place_returns_self": lambda lib: (lambda t: lib.index_put_(
        t, (lib.tensor([0]),), lib.tensor(1.0)) is t)(lib.zeros(2)),
}


@pytest.mark.parametrize("name", DTYPES)
def test_dtypes_and_values_match_torch(name):
    mine, theirs = DTYPES[name](gt), DTYPES[name](torch)
    if isinstance(mine, (bool, int)):
        assert mine == theirs
        return
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


ERRORS = {
    "rsub_bools": lambda lib: lib.rsub(lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool)),
    "rsub_bool_int": lambda lib: lib.rsub(lib.tensor([True, False]), lib.tensor([5, 7])),
    "rsub_int_bool": lambda lib: lib.rsub(lib.tensor([5, 7]), lib.tensor([True, False])),
    "rsub_bool_number": lambda lib: lib.rsub(lib.tensor([True, False]), 1),
    "rsub_bool_alpha": lambda lib: lib.rsub(lib.ones(2), lib.ones(2), alpha=True),
    "rsub_bool_alpha_number": lambda lib: lib.rsub(lib.ones(2), 1, True),
    "select_scatter_size": lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(3), 0, 1),
    "select_scatter_index": lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(4), 0, 3),
    "select_scatter_dim": lambda lib: lib.select_scatter(lib.zeros(3, 4), lib.ones(4), 2, 0),
    "slice_scatter_size": lambda lib: lib.slice_scatter(lib.zeros(3, 4), lib.ones(3, 3), 1, 0,
                                                        4, 2),
    "diagonal_scatter_size": lambda lib: lib.diagonal_scatter(lib.zeros(3, 4), lib.ones(4)),
    "masked_scatter_few": lambda lib: lib.zeros(3, 4).masked_scatter(
        lib.tensor([True, False, True, True]), lib.ones(5)),
    "masked_scatter_dtype": lambda lib: lib.zeros(3, 4).masked_scatter(
        lib.tensor([True, False, True, True]), lib.ones(20, dtype=lib.float64)),
    "masked_scatter_int_mask": lambda lib: lib.zeros(3, 4).masked_scatter(
        lib.tensor([1, 0, 1, 1], dtype=lib.int32), lib.ones(20)),
    "masked_scatter_broadcast": lambda lib: lib.zeros(3, 4).masked_scatter(
        lib.ones(2, 4, dtype=lib.bool), lib.ones(20)),
    "masked_scatter_in_place_broadcast": lambda lib: lib.zeros(4).masked_scatter_(
        lib.ones(3, dtype=lib.bool), lib.ones(20)),
    "masked_scatter_number": lambda lib: lib.zeros(3, 4).masked_scatter(
        lib.ones(4, dtype=lib.bool), 3.0),
    "frobenius_norm_dims": lambda lib: lib.frobenius_norm(lib.ones(2, 2, 2), (0, 1, 2)),
    "frobenius_norm_dim": lambda lib: lib.frobenius_norm(lib.ones(3), [0, 1]),
    "frobenius_norm_ints": lambda lib: lib.frobenius_norm(lib.ones(2, 2, dtype=lib.int64), [0]),
    "nuclear_norm_vector": lambda lib: lib.nuclear_norm(lib.ones(3)),
    "renorm_p": lambda lib: lib.renorm(lib.ones(2, 2), 0, 0, 1.0),
    "renorm_maxnorm": lambda lib: lib.ones(2, 2).renorm(2, 0, -1.0),
    "renorm_rank": lambda lib: lib.renorm(lib.ones(2), 2, 0, 1.0),
    "renorm_dim": lambda lib: lib.renorm(lib.ones(2, 2), 2, 2, 1.0),
    "split_with_sizes_number": lambda lib: lib.split_with_sizes(lib.ones(3, 4), 2),
    "split_with_sizes_method_number": lambda lib: lib.ones(3, 4).split_with_sizes(2),
    "split_with_sizes_sum": lambda lib: lib.split_with_sizes(lib.ones(3, 4), [1, 1]),
    "index_put_dtype": lambda lib: lib.zeros(3, 4).index_put((lib.tensor([0, 2]),),
                                                             lib.ones(4, dtype=lib.float64)),
    "index_put_float_index": lambda lib: lib.zeros(3, 4).index_put((lib.tensor([0.0, 2]),),
                                                                   lib.ones(4)),
    "index_put_shape": lambda lib: lib.zeros(3, 4).index_put((lib.tensor([0, 2]),), lib.ones(3)),
    "index_put_bounds": lambda lib: lib.zeros(3, 4).index_put((lib.tensor([0, 5]),), lib.ones(4)),
    "index_put_negative_bounds": lambda lib: lib.index_put_(
        lib.zeros(3, 4), (lib.tensor([1]), lib.tensor([-5])), lib.ones(1)),
    "index_put_number_values": lambda lib: lib.zeros(3).index_put((lib.tensor([0]),), 1.0),
    "index_put_none": lambda lib: lib.zeros(3, 4).index_put((None, lib.tensor([1])),
                                                            lib.ones(3)),
    "index_put_too_many": lambda lib: lib.zeros(3, 4).index_put(
        (lib.tensor([0]), lib.tensor([1]), lib.tensor([1])), lib.ones(1)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    raised = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib)
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[0] == raised[1]


_WARNINGS_SEEN = """
import sys, warnings
import {lib} as lib
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    for _ in range(2):
        lib.frobenius_norm(lib.ones(2, 2), (0, 1))
        lib.nuclear_norm(lib.ones(2, 2))
for w in caught:
    print(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
"""


def test_deprecated_norms_warn_once_as_torch():
    """A fresh process each: torch warns once per process."""
    said = [subprocess.run([sys.executable, "-c", _WARNINGS_SEEN.format(lib=lib)],
                           capture_output=True, text=True, timeout=120, check=True).stdout
            for lib in ("gradtool", "torch")]
    assert said[0] == said[1]
    assert said[0].count("deprecated") == 2
