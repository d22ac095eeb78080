"""linear_cross_entropy's chunked path (options given): the loss of linear logits computed a
chunk of the batch at a time, so the (batch, classes) logits are never whole, as torch's two
custom ops (their nodes' names, their gradients, their refusals). For a mean or a sum the
forward also computes the gradients, which backward scales (once, unless allow_retain_graph);
without reduction, backward computes them again from the saved inputs."""
import numpy as np

from ..autograd.function import Function

SECOND_BACKWARD = ("linear_cross_entropy chunked backward called twice; retain_graph=True / "
                   "double backward are not supported.")


def chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
            options):
    """The loss of class indices `target` (int64) over (C,) classes, by chunks of rows."""
    batched = input.dim() == 2
    if not batched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    chunk = _chunk_size(options, input.shape[0], input.shape[1], linear_weight.shape[0])
    op = _NoReduction if reduction == "none" else _Reduced
    loss = op.apply(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                    chunk, options.allow_retain_graph)
    return loss if batched else loss.squeeze(0)


def _chunk_size(options, rows, in_features, num_classes):
    """Rows per chunk, as torch's options._adjust resolves it on the CPU: an explicit
    batch_chunk_size, else the chunking method ("auto": "aspect_ratio:2"); both, differing,
    refused."""
    method = options.chunking_method
    if method == "auto":
        method = None if options.batch_chunk_size is not None else "aspect_ratio:2"
    size = rows if options.batch_chunk_size is None else min(options.batch_chunk_size, rows)
    if method is not None:  # a chunk's logits as large as the input: the next power of 2
        factor = int(method.partition(":")[2] or 1)
        target = -(-rows // -(-num_classes // in_features))
        chosen = min((1 << (target - 1).bit_length()) // factor, rows)
        if options.batch_chunk_size is not None and options.batch_chunk_size != chosen:
            raise ValueError(f"batch_chunk_size (={options.batch_chunk_size}) and "
                             f"chunking_method ('{method}') give different chunk sizes "
                             f"({options.batch_chunk_size} vs {chosen}); pass only one.")
        size = chosen
    return max(1, size)


def _rows(x, w, b, target, class_weight, ignore_index, chunk):
    """Per row, chunk by chunk: the loss, and d loss / d logits (the softmax less the target's
    one-hot, times the target's class weight; 0 for an ignored row)."""
    losses, grads = np.zeros(x.shape[0], x.dtype), []
    for start in range(0, x.shape[0], chunk):
        logits = x[start:start + chunk] @ w.T + (0 if b is None else b)
        top = logits.max(1, keepdims=True)
        log_softmax = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
        labels = target[start:start + chunk]
        kept = labels != ignore_index
        safe = np.where(kept, labels, 0)
        scale = np.where(kept, 1.0 if class_weight is None else class_weight[safe], 0.0)
        rows = np.arange(len(labels))
        losses[start:start + chunk] = -log_softmax[rows, safe] * scale
        grad = np.exp(log_softmax)
        grad[rows, safe] -= 1
        grads.append(grad * scale[:, None])
    total_weight = (np.where(target != ignore_index, 1.0, 0.0) if class_weight is None else
                    np.where(target != ignore_index,
                             class_weight[np.where(target != ignore_index, target, 0)], 0.0))
    return losses, np.concatenate(grads).astype(x.dtype), total_weight.sum()


def _input_grads(grad_logits, x, w, b):
    """The gradients of input, linear_weight and linear_bias from d loss / d logits."""
    return grad_logits @ w, grad_logits.T @ x, None if b is None else grad_logits.sum(0)


def _arrays(*tensors):
    return [None if t is None else t._data for t in tensors]


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(Function):
    """A mean or a sum: the gradients computed in forward, scaled in backward."""

    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, reduction,
                ignore_index, chunk, allow_retain_graph):
        x, w, b, labels, class_weight = _arrays(input, linear_weight, linear_bias, target,
                                                weight)
        losses, grad_logits, total_weight = _rows(x, w, b, labels, class_weight,
                                                  ignore_index, chunk)
        divisor = total_weight if reduction == "mean" else 1.0
        with np.errstate(invalid="ignore", divide="ignore"):  # (every row ignored: NaN)
            ctx.grads = [g / divisor for g in _input_grads(grad_logits, x, w, b)
                         if g is not None]
            ctx.allow_retain_graph = allow_retain_graph
            return input.new_tensor(losses.sum() / divisor)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.grads is None:
            raise RuntimeError(SECOND_BACKWARD)
        grads = [grad_output.new_tensor(g * grad_output._data) for g in ctx.grads]
        if not ctx.allow_retain_graph:
            ctx.grads = None
        grad_input, grad_weight, *grad_bias = grads
        return (grad_input, grad_weight, None, grad_bias[0] if grad_bias else None, None,
                None, None, None, None)


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(
        Function):
    """Each row's loss: backward computes the gradients again, scaled by each row's."""

    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, reduction,
                ignore_index, chunk, allow_retain_graph):
        ctx.save_for_backward(input, linear_weight, target, linear_bias, weight)
        ctx.ignore_index, ctx.chunk = ignore_index, chunk
        x, w, b, labels, class_weight = _arrays(input, linear_weight, linear_bias, target,
                                                weight)
        return input.new_tensor(_rows(x, w, b, labels, class_weight, ignore_index, chunk)[0])

    @staticmethod
    def backward(ctx, grad_output):
        input, linear_weight, target, linear_bias, weight = ctx.saved_tensors
        x, w, b, labels, class_weight = _arrays(input, linear_weight, linear_bias, target,
                                                weight)
        grad_logits = _rows(x, w, b, labels, class_weight, ctx.ignore_index, ctx.chunk)[1]
        grads = _input_grads(grad_logits * grad_output._data[:, None], x, w, b)
        grad_input, grad_weight, grad_bias = (None if g is None else grad_output.new_tensor(g)
                                              for g in grads)
        return grad_input, grad_weight, None, grad_bias, None, None, None, None, None


_Reduced = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default
_NoReduction = \
    GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default
