"""Adam and AdamW (torch's single-tensor formulas, bias-corrected)."""
from ..autograd import creation
from ..autograd.free_functions import maximum
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015). For each parameter p with gradient g, at step t:
        g = g + weight_decay * p          (AdamW instead: p = p * (1 - lr * weight_decay))
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g        (amsgrad: v_max = max(v_max, v))
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
    state[p] holds "step" (a float32 scalar tensor, as torch), "exp_avg" (m),
    "exp_avg_sq" (v) and, with amsgrad, "max_exp_avg_sq"."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if capturable or differentiable or fused:
            raise NotImplementedError(f"{type(self).__name__}: capturable, differentiable and "
                                      f"fused are not supported")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        for p in self._with_grad(group):
            grad = -p.grad if group["maximize"] else p.grad
            state = self.state[p]
            if not state:
                state["step"] = creation.tensor(0.0)
                state["exp_avg"] = creation.zeros_like(p)
                state["exp_avg_sq"] = creation.zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = creation.zeros_like(p)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            state["step"] += 1
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(p, alpha=weight_decay)
            exp_avg.add_(grad - exp_avg, alpha=1 - beta1)  # torch's exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            step = state["step"].item()
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            if amsgrad:
                max_sq = state["max_exp_avg_sq"]
                max_sq.copy_(maximum(max_sq, exp_avg_sq))
                denom = max_sq.sqrt() / bias_correction2_sqrt + eps
            else:
                denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
            p.add_(exp_avg / denom, alpha=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): the parameters shrink
    by a factor (1 - lr * weight_decay) each step instead of weight_decay * p being added to
    the gradient. Default weight_decay 1e-2, as torch."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
