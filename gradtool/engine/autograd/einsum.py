"""einsum as torch computes it (ATen's einsum and sumproduct_pair), op for op: each operand's
repeated subscripts taken as diagonals, its dims aligned to one order (the output's letters,
then the summed ones) by unsqueeze and permute, then the operands contracted left to right,
each pair by permute, reshape, bmm, view and permute. So its graph has torch's nodes, and its
gradients (of any order) and tangents are those ops'."""
from .tensor import Tensor

_ELLIPSIS = "..."
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # torch's label order


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands or not all(isinstance(t, Tensor) for t in operands):
        raise RuntimeError("einsum(): must provide at least one operand, all tensors")
    labels, output, ell_dims = _parse(equation, operands)
    # each label's place in the aligned order: the output's, then the summed ones (the
    # ellipsis' dims among them if the output has none), in torch's label order
    summed = sorted({s for subs in labels for s in subs} - set(output) - {_ELLIPSIS},
                    key=_LETTERS.index)
    place, n = {}, 0
    for s in output + ([] if _ELLIPSIS in output else [_ELLIPSIS]) + summed:
        place[s] = n
        n += ell_dims if s == _ELLIPSIS else 1
    out_dims = sum(ell_dims if s == _ELLIPSIS else 1 for s in output)
    counts = [0] * n  # how many operands have each aligned dim of size > 1
    sizes = {}
    ops = [_aligned(t, subs, i, place, n, ell_dims, counts, sizes)
           for i, (t, subs) in enumerate(zip(operands, labels))]
    if len(ops) == 1:
        return ops[0].sum(list(range(out_dims, n))) if n > out_dims else ops[0]
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        summed, a_only, b_only = [], [], []
        for d in range(out_dims, n):
            if a.shape[d] != 1 and b.shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:  # no later operand has it: sum it in this product
                    summed.append(d)
                    counts[d] = 0
            elif counts[d] == 1 and (a.shape[d] != 1 or b.shape[d] != 1):
                # only one of the two has it, and no later operand
                (a_only if a.shape[d] != 1 else b_only).append(d)
                counts[d] = 0
        if a_only:
            a = a.sum(a_only, keepdim=True)
        if b_only:
            b = b.sum(b_only, keepdim=True)
        ops.insert(0, _sumproduct_pair(a, b, summed))
    # the summed dims are all of size 1 now
    return ops[0].view(tuple(ops[0].shape[:out_dims])) if n > out_dims else ops[0]


def _parse(equation, operands):
    """Each operand's labels and the output's (letters, and _ELLIPSIS), and how many dims the
    widest ellipsis covers; torch's errors for equations that do not fit the operands."""
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        fewer_or_more = "fewer" if len(inputs) > len(operands) else "more"
        raise RuntimeError(f"einsum(): {fewer_or_more} operands were provided than specified "
                           f"in the equation")
    labels = [_labels(s, f"for operand {i}") for i, s in enumerate(inputs)]
    ell_dims = 0
    for i, (subs, t) in enumerate(zip(labels, operands)):
        letters = len(subs) - (_ELLIPSIS in subs)
        if _ELLIPSIS in subs:
            if letters > t.dim():
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({letters}) is more than the number of dimensions "
                                   f"({t.dim()}) for operand {i}")
            ell_dims = max(ell_dims, t.dim() - letters)
        elif letters != t.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({letters}) does not match the number of dimensions "
                               f"({t.dim()}) for operand {i} and no ellipsis was given")
    seen = [s for subs in labels for s in subs if s != _ELLIPSIS]
    if arrow:
        output = _labels(rhs, "for output")
        for s in output:
            if s != _ELLIPSIS and s not in seen:
                raise RuntimeError(f"einsum(): output subscript {s} does not appear in the "
                                   f"equation for any input operand")
        for s in set(output):
            if output.count(s) > 1:
                raise RuntimeError(f"einsum(): output subscript {s} appears more than once "
                                   f"in the output")
    else:  # implicit: the ellipsis' dims, then the letters seen once, in torch's order
        output = [_ELLIPSIS] + sorted((s for s in set(seen) if seen.count(s) == 1),
                                      key=_LETTERS.index)
    return labels, output, ell_dims


def _labels(spelled, where):
    spelled = spelled.replace(" ", "")
    if spelled.count(_ELLIPSIS) > 1:
        raise RuntimeError(f"einsum(): found '.' {where} for which an ellipsis was already "
                           f"found")
    out = []
    for k, part in enumerate(spelled.split(_ELLIPSIS)):
        if k:
            out.append(_ELLIPSIS)
        for c in part:
            if c not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given in the equation "
                                   f"string, subscripts must be in [a-zA-Z] (got {c!r})")
            out.append(c)
    return out


def _aligned(t, subs, i, place, n, ell_dims, counts, sizes):
    """Operand t with its repeated labels taken as diagonals, missing dims unsqueezed and its
    dims permuted into the aligned order (n dims)."""
    perm = [-1] * n
    dim = 0
    for s in subs:
        if s == _ELLIPSIS:
            covered = t.dim() - (len(subs) - 1)
            for j in range(ell_dims - covered, ell_dims):
                _count(t, dim, ("...", j), place[_ELLIPSIS] + j, counts, sizes, i)
                perm[place[_ELLIPSIS] + j] = dim
                dim += 1
        elif perm[place[s]] == -1:
            _count(t, dim, s, place[s], counts, sizes, i)
            perm[place[s]] = dim
            dim += 1
        else:  # a repeated label: its diagonal, in the first one's place
            first = perm[place[s]]
            if t.shape[dim] != t.shape[first]:
                raise RuntimeError(f"einsum(): subscript {s} is repeated for operand {i} but "
                                   f"the sizes don't match, {t.shape[dim]} != {t.shape[first]}")
            t = t.diagonal(0, first, dim)
            t = t.permute(_moved(t.dim(), t.dim() - 1, first))
    for k in range(n):
        if perm[k] == -1:
            t = t.unsqueeze(dim)
            perm[k] = dim
            dim += 1
    return t.permute(perm)


def _count(t, dim, label, aligned, counts, sizes, i):
    size = t.shape[dim]
    if size == 1:
        return
    seen = sizes.get(label, 1)
    if seen != 1 and seen != size:
        what = (f"dimension {dim} covered by ellipsis in operand {i}has size {size}"
                if label[0] == "..." else f"subscript {label} has size {size} for operand {i}")
        raise RuntimeError(f"einsum(): {what} which does not broadcast with previously seen "
                           f"{'ellipsis with ' if label[0] == '...' else ''}size {seen}")
    sizes[label] = size
    counts[aligned] += 1


def _moved(ndim, source, destination):
    """movedim's permutation (torch's movedim is a permute)."""
    order = [d for d in range(ndim) if d != source]
    order.insert(destination, source)
    return order


def _sumproduct_pair(left, right, summed):
    """left * right summed over the dims `summed` (kept, of size 1), both of the same number
    of dims, as one bmm: (shared, left's, summed) @ (shared, summed, right's)."""
    if not summed:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for d in range(left.dim()):
        sl, sr = left.shape[d] != 1, right.shape[d] != 1
        if d in summed:  # (both have it: einsum sums a dim only one has before the product)
            sum_size *= left.shape[d]
        elif sl and sr:
            lro.append(d)
            lro_size *= left.shape[d]
        elif sl:
            lo.append(d)
            lo_size *= left.shape[d]
        else:
            ro.append(d)
            ro_size *= right.shape[d]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(summed)
                + [right.shape[d] for d in ro])
    left_order = lro + lo + summed + ro
    right_order = lro + summed + ro + lo
    out_order = [left_order.index(d) for d in range(len(left_order))]  # (its inverse)
    left = left.permute(left_order).reshape(lro_size, lo_size, sum_size)
    right = right.permute(right_order).reshape(lro_size, sum_size, ro_size)
    return left.bmm(right).view(out_size).permute(out_order)
