"""SGD with momentum, dampening, Nesterov momentum and weight decay (torch's formulas)."""
from .optimizer import Optimizer


class SGD(Optimizer):
    """Stochastic gradient descent. For each parameter p with gradient g, per step:
        g = g + weight_decay * p
        buf = g (first step), else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf      (when momentum != 0)
        p = p - lr * g
    state[p]["momentum_buffer"] holds buf."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable or fused:
            raise NotImplementedError("SGD: differentiable and fused are not supported")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        for p in self._with_grad(group):
            grad = -p.grad if group["maximize"] else p.grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if nesterov else buf
            p.add_(grad, alpha=-lr)
