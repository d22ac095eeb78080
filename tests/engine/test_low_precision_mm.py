"""nn.functional's float8 and grouped products on the engine: the engine has no float8, so
scaled_mm answers as torch does to other dtypes (its shape error, its "Invalid scaling
configuration" naming the dtypes, sizes and strides), scaled_grouped_mm as torch's CPU build
(no kernel), grouped_mm names what the engine lacks; the enums are torch's. The program
takes the library; tests/parity/test_low_precision_mm.py compares it with torch's."""
import pytest

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


def test_grouped_mm_is_the_engines_clear_error():
    from gradtool.engine.errors import NotInEngineError
    with pytest.raises(NotInEngineError, match="torch.nn.functional.grouped_mm"):
        gt.nn.functional.grouped_mm(gt.ones(2, 4, 8), gt.ones(2, 8, 4))
