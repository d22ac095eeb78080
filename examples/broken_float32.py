"""A right gradient that gradcheck cannot confirm: the function computes in float32.

Central differences with gradcheck's step (1e-6) drown in float32 rounding (~1e-7
relative), so the check fails although the formula is right. gradtool gradcheck: fails,
diagnosis `precision` (with a step suited to float32 the Jacobians agree). Passing float32
inputs to a correct function gives the same diagnosis."""


def tanh(x):
    return x.float().tanh()  # float32 arithmetic, whatever the input
