"""Complex inputs and outputs, as torch's gradcheck takes them: each part checked on its own.

torch's convention makes a complex input z's gradient dL/dRe z + i dL/dIm z, and checks a
complex output's real and imaginary parts separately (gradcheck.py's _real_and_imag_output,
and the complex numerical Jacobian of _compute_numerical_jvps_wrt_specific_input, whose real
and imaginary parts are the derivatives along Re z and Im z). The same Jacobians, entry for
entry, are the real Jacobians of the function made real: z given as two real leaves (its
real and imaginary parts, joined as re + im * 1j before the user's function runs) and each
complex output returned as its real and imaginary parts. The checks then run on that real
function, in either engine, and every pair says which part of what it is."""
import dataclasses

import numpy as np


@dataclasses.dataclass
class Parts:
    """Where each input and output of the real function comes from: (index in the user's
    function, part), part None for a real value, "real" or "imaginary"."""
    inputs: list
    outputs: list = None

    def function(self, E, func):
        """func made real: the user's arguments joined from their parts, each complex output
        split into its real and imaginary parts (recorded in `outputs`). In torch's order:
        its first pass checks the outputs with the imaginary part of each complex one, its
        second the real parts, so the first failure is the one torch reports."""
        def real_function(*args):
            outs = func(*self.joined(args))
            single = not isinstance(outs, (tuple, list))
            outs = (outs,) if single else outs
            is_complex = [E.is_tensor(o) and o.is_complex() for o in outs]
            split = [o.imag if c else o for o, c in zip(outs, is_complex)]
            where = [(i, "imaginary" if c else None) for i, c in enumerate(is_complex)]
            split += [o.real for o, c in zip(outs, is_complex) if c]
            where += [(i, "real") for i, c in enumerate(is_complex) if c]
            self.outputs = where
            return split[0] if single and len(split) == 1 else tuple(split)
        return real_function

    def joined(self, args):
        """The user's arguments from the real function's."""
        out = []
        for k, (_, part) in enumerate(self.inputs):
            if part == "real":  # (the imaginary part is the next argument)
                out.append(args[k] + args[k + 1] * 1j)
            elif part is None:
                out.append(args[k])
        return out


def has_complex(E, values):
    return any(E.is_tensor(x) and x.is_complex() for x in values)


def made_real(E, func, inputs, labels):
    """(the real function, its inputs, their labels, Parts): a complex input that requires
    grad becomes two real leaves, each complex output its real and imaginary parts."""
    parts = Parts([])
    real_inputs, real_labels = [], []
    for i, (x, label) in enumerate(zip(inputs, labels)):
        if E.is_tensor(x) and x.is_complex() and x.requires_grad:
            values = E.array(x)
            for part, array in (("real", values.real), ("imaginary", values.imag)):
                real_inputs.append(E.leaf(np.array(array), True, E.device_name(x)))
                real_labels.append(f"{part} part of {label}")
                parts.inputs.append((i, part))
        else:
            real_inputs.append(x)
            real_labels.append(label)
            parts.inputs.append((i, None))

    return parts.function(E, func), tuple(real_inputs), real_labels, parts


def real_grad_outputs(E, grad_outputs):
    """gradgradcheck's grad_outputs for the real function: a complex v on output o is
    (Re v, Im v) on o's two parts (Re(conj(v) o) = Re v Re o + Im v Im o)."""
    out = []
    for v in grad_outputs:
        if E.is_tensor(v) and v.is_complex():
            values = E.array(v)
            out += [E.leaf(np.array(values.real), v.requires_grad, E.device_name(v)),
                    E.leaf(np.array(values.imag), v.requires_grad, E.device_name(v))]
        else:
            out.append(v)
    return tuple(out)


def output_labels(parts, names=None):
    """The real function's outputs, in the user's words ("imaginary part of output 0")."""
    labels = []
    for i, part in parts.outputs or ():
        name = names[i] if names and i < len(names) else f"output {i}"
        labels.append(name if part is None else f"{part} part of {name}")
    return labels


def mismatch_head(parts, pair, labels, mode):
    """torch's words for a mismatch on part of a complex output ("While considering the
    imaginary part of complex outputs only, ..."), in the user's output and input indices,
    naming the part of a complex input too."""
    out, out_part = parts.outputs[pair.output_position]
    x, x_part = parts.inputs[pair.input_position]
    prefix = "" if out_part is None else (f"While considering the {out_part} part of complex "
                                          f"outputs only, ")
    where = "" if x_part is None else f" ({labels[pair.input_position]})"
    return f"{prefix}Jacobian {mode}mismatch for output {out:d} with respect to input {x:d}{where}"
