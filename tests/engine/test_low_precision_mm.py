"""nn.functional's float8 and grouped products on the engine: the engine has no float8, so
scaled_mm answers as torch does to other dtypes (its shape error, its "Invalid scaling
configuration" naming the dtypes, sizes and strides), scaled_grouped_mm as torch's CPU build
(no kernel), grouped_mm computes each group's product with torch's checks; the enums are
torch's. The program
takes the library; tests/parity/test_low_precision_mm.py compares it with torch's."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt


def scaled_products(lib):
    F = lib.nn.functional
    S = F.ScalingType
    a, b = lib.ones(4, 8), lib.ones(8, 6)
    calls = [
        lambda: F.scaled_mm(a, b, lib.ones(1), S.TensorWise, lib.ones(1), S.TensorWise),
        lambda: F.scaled_mm(a.double(), b.double(), lib.ones(4, 1), S.RowWise,
                            lib.ones(1, 6), S.RowWise, output_dtype=lib.float32),
        lambda: F.scaled_mm(a.half(), b.half(), [lib.ones(1)], [S.BlockWise1x128],
                            [lib.ones(1, dtype=lib.float64)], [S.BlockWise1x128],
                            swizzle_a=F.SwizzleType.SWIZZLE_32_4_4),
        lambda: F.scaled_mm(a, lib.ones(7, 6), lib.ones(1), S.TensorWise, lib.ones(1),
                            S.TensorWise),
        lambda: F.scaled_grouped_mm(a, b, lib.ones(1), S.TensorWise, lib.ones(1), S.TensorWise,
                                    offs=lib.tensor([4], dtype=lib.int32)),
    ]
    seen = []
    for call in calls:
        with pytest.raises(Exception) as info:
            call()
        # (the engine's dtype prints as gradtool.x; torch's dispatcher error goes on with the
        # backends its build registered)
        seen.append((type(info.value).__name__,
                     str(info.value).split(" If you are a Facebook employee")[0]))
    seen += [repr(S.RowWise), repr(F.SwizzleType.NO_SWIZZLE),
             [(s.name, s.value) for s in S.__members__.values()],
             [(s.name, s.value) for s in F.SwizzleType.__members__.values()]]
    return seen


def test_scaled_products_answer_as_torchs_cpu_build():
    seen = scaled_products(gt)
    assert seen[0][0] == "ValueError" and seen[0][1].startswith("Invalid scaling configuration.")
    assert seen[0][1].endswith("mat_a.dtype()=Float, scale_a.dtype()=Float, scale_a.size()=[1], "
                               "scale_a.stride()=[1], mat_b.dtype()=Float, "
                               "scale_b.dtype()=Float, scale_b.size()=[1] and "
                               "scale_b.stride()=[1]")
    assert "scale_a should be (4, 1) and scale_b should be (1, 6)" in seen[1][1]
    assert "scale_b.size()=[1, 6] and scale_b.stride()=[6, 1]" in seen[1][1]
    assert "mat_a.dtype()=Half" in seen[2][1] and "scale_b.dtype()=Double" in seen[2][1]
    assert seen[3] == ("ValueError", "mat_a and mat_b shapes cannot be multiplied (4x8 and 7x6)")
    assert seen[4][0] == "NotImplementedError" and "'aten::_scaled_grouped_mm_v2'" in seen[4][1]
    assert seen[5:7] == ["<_ScalingType.RowWise: 1>", "<_SwizzleType.NO_SWIZZLE: 0>"]
    assert seen[7][-1] == ("BlockWise128x128", 5) and seen[8][-1] == ("SWIZZLE_32_4_4", 1)


GROUPED_LAYOUTS = [  # (mat_a's shape, mat_b's shape, offs): sizes torch's strides accept
    ((6, 8), (3, 8, 4), [2, 2, 5]),  # an empty group; row 5 in none
    ((2, 4, 8), (8, 12), [4, 12]),
    ((4, 12), (12, 8), [4, 12]),
    ((2, 4, 8), (2, 8, 4), None),
]


def grouped_products(lib):
    """grouped_mm's values, node and gradients in its four layouts (float32, as torch's CPU
    kernel takes), then torch's checks, each in its words."""
    F = lib.nn.functional
    rng = np.random.default_rng(5)
    seen = []
    for a_shape, b_shape, offs in GROUPED_LAYOUTS:
        a, b = (lib.tensor(rng.standard_normal(s), dtype=lib.float32, requires_grad=True)
                for s in (a_shape, b_shape))
        offs = None if offs is None else lib.tensor(offs, dtype=lib.int32)
        out = F.grouped_mm(a, b, offs=offs)
        node = type(out.grad_fn).__name__
        grad = lib.tensor(rng.standard_normal(tuple(out.shape)), dtype=lib.float32)
        if a_shape == (6, 8):
            out = out[:5]  # (torch leaves the row after the last group unwritten)
            grad = grad[:5].contiguous()
        ga, gb = lib.autograd.grad(out, (a, b), grad)
        if a_shape == (6, 8):
            ga = ga[:5]  # (torch's gradient of the row in no group is unwritten memory too)
        seen.append([out.tolist(), node, str(out.dtype), ga.tolist(),
                     gb.tolist()])
    a, b, offs = lib.ones(5, 8), lib.ones(2, 8, 4), lib.tensor([2, 5], dtype=lib.int32)
    calls = [
        lambda: F.grouped_mm(a.double(), b, offs=offs),
        lambda: F.grouped_mm(a, b.int(), offs=offs),
        lambda: F.grouped_mm(lib.ones(5), b, offs=offs),
        lambda: F.grouped_mm(a, lib.ones(1, 2, 8, 4), offs=offs),
        lambda: F.grouped_mm(lib.ones(5, 4), b),
        lambda: F.grouped_mm(lib.ones(5, 6), lib.ones(2, 6, 4), offs=offs),
        lambda: F.grouped_mm(lib.ones(8, 5).t(), b, offs=offs),
        lambda: F.grouped_mm(a, b),
        lambda: F.grouped_mm(lib.ones(2, 5, 8), b, offs=offs),
        lambda: F.grouped_mm(a, b, offs=offs[None]),
        lambda: F.grouped_mm(a, b, offs=offs.long()),
        lambda: F.grouped_mm(a, b, offs=lib.tensor([1, 2, 5], dtype=lib.int32)),
        lambda: F.grouped_mm(lib.ones(3, 5, 8), b),
        lambda: F.grouped_mm(a, b, offs=offs, bias=lib.zeros(4)),
        lambda: F.grouped_mm(a, b, offs=offs, out_dtype=lib.float16),
        lambda: F.grouped_mm(a, lib.ones(2, 8, 8).half(), offs=offs),
        lambda: F.grouped_mm(a, b, offs=lib.tensor([2.0, 5.0], requires_grad=True)),
    ]
    for call in calls:
        with pytest.raises(RuntimeError) as info:
            call()
        seen.append(str(info.value))
    return seen


def grouped_reference(a, b, offs):
    """The four layouts' products, a group at a time, in numpy."""
    if offs is None:
        return a @ b
    out = np.zeros((len(offs), a.shape[0], b.shape[-1]) if a.ndim == b.ndim == 2 else
                   (a.shape[-2], b.shape[-1]))
    for g, (start, end) in enumerate(zip([0] + offs[:-1], offs)):
        if a.ndim == 2 and b.ndim == 3:
            out[start:end] = a[start:end] @ b[g]
        elif a.ndim == 3:
            out[:, start:end] = a[g] @ b[:, start:end]
        else:
            out[g] = a[:, start:end] @ b[start:end]
    return out


def test_grouped_mm_multiplies_each_group():
    seen = grouped_products(gt)
    rng = np.random.default_rng(5)
    for (a_shape, b_shape, offs), (values, node, dtype, _, _) in zip(GROUPED_LAYOUTS, seen):
        a, b = (rng.standard_normal(s).astype(np.float32) for s in (a_shape, b_shape))
        rng.standard_normal((6, 4) if a_shape == (6, 8) else grouped_reference(
            a, b, offs).shape)  # (the cotangent's draw)
        expected = grouped_reference(a, b, offs)
        np.testing.assert_allclose(values, expected[:5] if a_shape == (6, 8) else expected,
                                   rtol=1e-5, atol=1e-5)
        assert (node, dtype) == ("GroupedMmBackward0", "gradtool.float32")
    assert seen[4:] == [
        "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got Double",
        "Expected mat_b to be Float32, BFloat16 or Float16 matrix, got Int",
        "mat_a has to be 2 or 3d", "mat_b has to be 2 or 3d",
        "contraction dimension of mat_a and mat_b must match",
        "strides should be multiple of 16 bytes", "strides should be multiple of 16 bytes",
        "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d",
        "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d",
        "offs has to be 1D", "Offsets have to be int32", "matrix batch sizes have to match",
        "batched dimension has to match", "Bias not supported yet",
        "Grouped gemm output dtype must match `mat_a` dtype",
        "expected m1 and m2 to have the same dtype, but got: float != c10::Half",
        "The function '_grouped_mm' is not differentiable with respect to argument 'offs'. "
        "This input cannot have requires_grad True."]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=4), st.sampled_from(["2d_3d", "3d_2d",
                                                                             "2d_2d"]))
def test_grouped_mm_follows_any_offsets(ends, layout):
    """Sorted or not, within the jagged dim or not: each group is the slice from the previous
    end to its own (empty when that is before it), and what no group covers is zero."""
    rng = np.random.default_rng(len(ends))
    groups = len(ends)
    shapes = {"2d_3d": ((7, 4), (groups, 4, 4)), "3d_2d": ((groups, 4, 4), (4, 8)),
              "2d_2d": ((4, 8), (8, 4))}[layout]
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    out = gt.nn.functional.grouped_mm(gt.tensor(a), gt.tensor(b),
                                      offs=gt.tensor(ends, dtype=gt.int32))
    expected = grouped_reference(a.astype(np.float64), b.astype(np.float64), ends)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
