"""A custom Function's jvp that returns a tangent its output cannot take (another size, a
number, an integer tensor) fails as torch's does: the same error type and words."""
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402

pytestmark = pytest.mark.parity

TANGENTS = {
    "bigger": lambda m, t: m.ones(4, dtype=m.float64),
    "summed": lambda m, t: t.sum(),
    "one more dim": lambda m, t: t.unsqueeze(0),
    "a number": lambda m, t: 3.0,
    "an integer tensor": lambda m, t: m.ones(3, dtype=m.int64),
}


def _outcome(m, tangent):
    class Doubled(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return tangent(m, t)
    fwAD = m.autograd.forward_ad
    with fwAD.dual_level():
        x = fwAD.make_dual(m.ones(3, dtype=m.float64), m.ones(3, dtype=m.float64))
        try:
            Doubled.apply(x)
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            return type(e), str(e)
    return None


@pytest.mark.parametrize("case", sorted(TANGENTS))
def test_a_jvp_tangent_the_output_cannot_take_fails_as_in_torch(case):
    mine, theirs = _outcome(gt, TANGENTS[case]), _outcome(torch, TANGENTS[case])
    assert theirs is not None and mine is not None
    assert mine[0] is theirs[0]
    # (torch's words for the integer tensor end an internal assert naming its C++ file)
    assert theirs[1].endswith(mine[1]), (mine[1], theirs[1])
