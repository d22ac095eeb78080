"""Adamax, RAdam, ASGD, Rprop, SparseAdam and LBFGS: torch's single-tensor formulas, step for step
(lerp_, addcdiv_, addcmul_ spelled as the engine's mul and add), so that each step's numbers
are torch's."""
from ..autograd import creation
from ..autograd.free_functions import cat, maximum, where
from ..autograd.grad_mode import enable_grad, no_grad
from .adaptive import _check, _gradient
from .optimizer import Optimizer


class Adamax(Optimizer):
    """m = beta1 m + (1 - beta1) g; u = max(beta2 u, |g| + eps);
    p -= lr / (1 - beta1^t) * m / u (Adam with the infinity norm)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update_group(self, group):
        (beta1, beta2), eps, lr = group["betas"], group["eps"], group["lr"]
        for p in self._with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = creation.tensor(0.0)
                state["exp_avg"] = creation.zeros_like(p)
                state["exp_inf"] = creation.zeros_like(p)
            state["step"] += 1
            grad = _gradient(group, p)
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.add_(grad - exp_avg, alpha=1 - beta1)  # torch's lerp_
            exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
            clr = lr / (1 - beta1 ** state["step"].item())
            p.add_(exp_avg / exp_inf, alpha=-clr)


class RAdam(Optimizer):
    """Rectified Adam: Adam's step times the rectification of its variance estimate once the
    approximated SMA length rho_t exceeds 5, before that the bias-corrected momentum alone."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    def _update_group(self, group):
        (beta1, beta2), eps, lr = group["betas"], group["eps"], group["lr"]
        weight_decay = group["weight_decay"]
        for p in self._with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = creation.tensor(0.0)
                state["exp_avg"] = creation.zeros_like(p)
                state["exp_avg_sq"] = creation.zeros_like(p)
            state["step"] += 1
            step = state["step"].item()
            grad = -p.grad if group["maximize"] else p.grad
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(p, alpha=weight_decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.add_(grad - exp_avg, alpha=1 - beta1)  # torch's lerp_
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            bias_correction1, bias_correction2 = 1 - beta1 ** step, 1 - beta2 ** step
            corrected = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
                p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
            else:
                p.add_(corrected * lr, alpha=-1.0)


class ASGD(Optimizer):
    """Averaged SGD: p = p (1 - lambd eta) - eta g; the average ax follows p from step t0 on
    (mu = 1 / max(1, t - t0)); eta = lr / (1 + lambd lr t)^alpha."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check("learning rate", lr)
        _check("weight_decay value", weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update_group(self, group):
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        for p in self._with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = creation.tensor(0.0)
                state["eta"] = creation.tensor(float(lr))
                state["mu"] = creation.tensor(1.0)
                state["ax"] = creation.zeros_like(p)
            state["step"] += 1
            grad = _gradient(group, p)
            eta = state["eta"].item()
            p.mul_(1 - lambd * eta)
            p.add_(grad, alpha=-eta)
            if state["mu"].item() != 1:
                state["ax"].add_(p.sub(state["ax"]).mul_(state["mu"].item()))
            else:
                state["ax"].copy_(p)
            step = state["step"].item()
            state["eta"].copy_(creation.tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            state["mu"].copy_(creation.tensor(1 / max(1, step - t0)))


class Rprop(Optimizer):
    """Resilient backpropagation: each element's step size grows by etaplus while its
    gradient keeps its sign and shrinks by etaminus when it flips (that step then moves
    nothing), within step_sizes; p -= sign(g) * step size."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update_group(self, group):
        (etaminus, etaplus), (low, high) = group["etas"], group["step_sizes"]
        for p in self._with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = creation.tensor(0.0)
                state["prev"] = creation.zeros_like(p)
                state["step_size"] = creation.full_like(p.grad, group["lr"])
            state["step"] += 1
            grad = -p.grad if group["maximize"] else p.grad
            factor = grad.mul(state["prev"]).sign()  # then etaplus, etaminus, 1 in its place
            factor = where(factor > 0, etaplus, factor)
            factor = where(factor < 0, etaminus, factor)
            factor = where(factor == 0, 1.0, factor)
            state["step_size"].mul_(factor).clamp_(low, high)
            grad = where(factor == etaminus, 0.0, grad)
            p.add_(grad.sign() * state["step_size"], alpha=-1)
            state["prev"].copy_(grad)


class SparseAdam(Optimizer):
    """Adam for sparse gradients (an Embedding's with sparse=True): the engine's gradients
    are dense, which torch's SparseAdam refuses, so a step raises torch's error."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check("learning rate", lr)
        _check("epsilon value", eps)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse = [i for i, p in enumerate(self.param_groups[0]["params"]) if p.is_sparse]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             f"parameter tensors")

    def _update_group(self, group):
        for _ in self._with_grad(group):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")


class LBFGS(Optimizer):
    """Limited-memory BFGS over all parameters as one flat vector: up to max_iter steps per
    step(closure), each along the two-loop recursion's direction over the last history_size
    updates, of length lr (the first scaled by the gradient's size) or found by a strong-Wolfe
    line search; stops early on torch's tolerances."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        _check("learning rate", lr)
        max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        return cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                    for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    @no_grad()
    def step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, H_diag = flat_grad.neg(), [], [], [], 1
            else:  # the two-loop recursion over the stored curvature pairs
                y, s = flat_grad.sub(prev_flat_grad), d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                al = state.setdefault("al", [None] * history_size)
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i] * -al[i])
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i] * (al[i] - be_i))
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss
            t = (min(1.0, (1.0 / flat_grad.abs().sum()).item()) * lr
                 if state["n_iter"] == 1 else lr)
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, step, direction: self._directional_evaluate(closure, x, step,
                                                                          direction),
                    x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or d.mul(t).abs().max() <= tolerance_change
                    or abs(loss - prev_loss) < tolerance_change):
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), within bounds (the
    bisection when the cubic has none)."""
    xmin_bound, xmax_bound = bounds if bounds is not None else (
        (x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt() if hasattr(d2_square, "sqrt") else d2_square ** 0.5
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step t along d meeting the strong Wolfe conditions (sufficient decrease, curvature),
    bracketed then zoomed by cubic interpolation, as torch's (Nocedal and Wright, 3.5-3.6)."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else \
                    min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.clone(), gtd_new
    t = bracket[low_pos]
    return bracket_f[low_pos], bracket_g[low_pos], t, ls_func_evals


__all__ = ["Adamax", "RAdam", "ASGD", "Rprop", "SparseAdam", "LBFGS"]
