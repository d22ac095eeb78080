"""einsum as torch computes it: operands contracted two at a time with permute, reshape,
matmul and sum, so its graph is made of those ops' nodes and its gradients (of any order)
are theirs. Repeated subscripts within one operand (diagonals) are not supported."""
import string

from .tensor import Tensor, matmul


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands or not all(isinstance(t, Tensor) for t in operands):
        raise RuntimeError("einsum(): must provide at least one operand, all tensors")
    inputs, output = _parse(equation.replace(" ", ""), operands)
    for subs, t in zip(inputs, operands):
        if len(set(subs)) != len(subs):
            raise NotImplementedError(f"einsum(): repeated subscripts within one operand "
                                      f"('{subs}', a diagonal) are not supported by gradtool")
    sizes = {}
    for subs, t in zip(inputs, operands):
        for letter, n in zip(subs, t.shape):
            if sizes.get(letter, 1) not in (1, n) and n != 1:
                raise RuntimeError(f"einsum(): subscript {letter} has size {n} which does not "
                                   f"broadcast with previously seen size {sizes[letter]}")
            sizes[letter] = max(sizes.get(letter, 1), n)
    terms = list(zip(operands, inputs))
    t, subs = terms[0]
    t, subs = _sum_unneeded(t, subs, output + "".join(s for _, s in terms[1:]))
    for k in range(1, len(terms)):
        later = output + "".join(s for _, s in terms[k + 1:])
        other, other_subs = _sum_unneeded(*terms[k], later + subs)
        t, subs = _contract(t, subs, other, other_subs, later)
    # the letters left are the output's
    return t.permute([subs.index(c) for c in output]) if subs != output else t


def _parse(equation, operands):
    """Each operand's subscripts and the output's, with '...' spelled out as capital letters
    (right-aligned, so broadcasting dims line up)."""
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise RuntimeError(f"einsum(): {len(inputs)} operands in the equation, "
                           f"{len(operands)} given")
    n_ellipsis = max((t.dim() - len(s.replace("...", "")) for s, t in zip(inputs, operands)
                      if "..." in s), default=0)
    spare = string.ascii_uppercase[:n_ellipsis]
    spelled = []
    for s, t in zip(inputs, operands):
        if "..." in s:
            k = t.dim() - len(s.replace("...", ""))
            s = s.replace("...", spare[n_ellipsis - k:])
        if len(s) != t.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(s)}) does not match the number of dimensions "
                               f"({t.dim()}) for operand {len(spelled)}")
        spelled.append(s)
    if arrow:
        output = rhs.replace("...", spare)
    else:  # implicit: the broadcast dims, then the letters that appear once, sorted
        letters = "".join(spelled)
        output = spare + "".join(sorted(c for c in set(letters)
                                        if letters.count(c) == 1 and c.islower()))
    return spelled, output


def _sum_unneeded(t, subs, needed):
    """Sum the dims whose letter appears nowhere else."""
    gone = [i for i, c in enumerate(subs) if c not in needed]
    if not gone:
        return t, subs
    return t.sum(gone), "".join(c for c in subs if c in needed)


def _contract(a, sa, b, sb, later):
    """a and b contracted over the letters they share that `later` does not need, as a
    (batch, rows, k) @ (batch, k, cols) matmul."""
    batch = [c for c in sa if c in sb and c in later]
    summed = [c for c in sa if c in sb and c not in later]
    rows = [c for c in sa if c not in sb]
    cols = [c for c in sb if c not in sa]
    a = a.permute([sa.index(c) for c in batch + rows + summed])
    b = b.permute([sb.index(c) for c in batch + summed + cols])
    nb = len(batch)
    a_sizes, b_sizes = a.shape, b.shape
    a = a.reshape(tuple(a_sizes[:nb]) + (_prod(a_sizes[nb:nb + len(rows)]), -1))
    b = b.reshape(tuple(b_sizes[:nb]) + (_prod(b_sizes[nb:nb + len(summed)]), -1))
    out = matmul(a, b)
    shape = (tuple(out.shape[:nb]) + tuple(a_sizes[nb:nb + len(rows)])
             + tuple(b_sizes[nb + len(summed):]))
    return out.reshape(shape), "".join(batch + rows + cols)


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n
