"""A rounding straight-through written with detach, as LSQ's `round_pass`:
`(x.round() - x).detach() + x` is round(x) forward and the identity backward.

The forward is flat between its jumps (its true gradient is 0), the backward gives 1, on
purpose: not a lost gradient. gradtool gradcheck: fails, diagnosis `surrogate_gradient`
naming the `.detach()` line ("a straight-through estimator"), not `gradient_cut`;
round_pass_ok.py writes it as an autograd.Function declared with
@gradtool.surrogate("straight_through")."""
import gradtool


def round_pass(x):
    return (x.round() - x).detach() + x


@gradtool.example(gradtool.uniform((6,), -3, 3))
def quantised(x):
    return round_pass(x * 2) / 2
