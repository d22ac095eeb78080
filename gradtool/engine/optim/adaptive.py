"""RMSprop, Adagrad and Adadelta: per-parameter step sizes from running sums of squared
gradients (torch's single-tensor formulas; addcmul/addcdiv spelled as mul and add)."""
from ..autograd import creation
from .optimizer import Optimizer


def _check(name, value, low=0.0):
    if not low <= value:
        raise ValueError(f"Invalid {name}: {value}")


def _gradient(group, p):
    """The gradient the update follows: negated to maximize, plus weight decay."""
    grad = -p.grad if group["maximize"] else p.grad
    return grad.add(p, alpha=group["weight_decay"]) if group["weight_decay"] != 0 else grad


class RMSprop(Optimizer):
    """v = alpha v + (1 - alpha) g^2; with centered, m = alpha m + (1 - alpha) g and the
    denominator sqrt(v - m^2) + eps, else sqrt(v) + eps; p -= lr g / denominator (through a
    momentum buffer when momentum > 0)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update_group(self, group):
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        for p in self._with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = creation.tensor(0.0)
                state["square_avg"] = creation.zeros_like(p)
                if momentum > 0:
                    state["momentum_buffer"] = creation.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = creation.zeros_like(p)
            state["step"] += 1
            grad = _gradient(group, p)
            square_avg = state["square_avg"].mul_(alpha).add_(grad * grad, alpha=1 - alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"]
                grad_avg.add_(grad - grad_avg, alpha=1 - alpha)  # torch's lerp_
                avg = (square_avg - grad_avg * grad_avg).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add_(eps)
            if momentum > 0:
                buf = state["momentum_buffer"].mul_(momentum).add_(grad / avg)
                p.add_(buf, alpha=-lr)
            else:
                p.add_(grad / avg, alpha=-lr)


class Adagrad(Optimizer):
    """s += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps). The state is made
    when the optimizer is, with s = initial_accumulator_value, as torch."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay), ("epsilon value", eps),
                            ("initial_accumulator_value value", initial_accumulator_value)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = creation.tensor(0.0)
                self.state[p]["sum"] = creation.full_like(p, initial_accumulator_value)

    def _update_group(self, group):
        for p in self._with_grad(group):
            state = self.state[p]
            state["step"] += 1
            grad = _gradient(group, p)
            clr = group["lr"] / (1 + (state["step"].item() - 1) * group["lr_decay"])
            state["sum"].add_(grad * grad)
            p.add_(grad / state["sum"].sqrt().add_(group["eps"]), alpha=-clr)


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g^2; delta = sqrt(u + eps) / sqrt(v + eps) * g;
    u = rho u + (1 - rho) delta^2; p -= lr delta (Zeiler, 2012)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    def _update_group(self, group):
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p in self._with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = creation.tensor(0.0)
                state["square_avg"] = creation.zeros_like(p)
                state["acc_delta"] = creation.zeros_like(p)
            state["step"] += 1
            grad = _gradient(group, p)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
            acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
            p.add_(delta, alpha=-lr)
