"""The counterpart of broken_float32.py: the same function, computed in float64."""


def tanh(x):
    return x.tanh()
