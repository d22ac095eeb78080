"""optim.lr_scheduler: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR and
ReduceLROnPlateau, with torch's recursive formulas (each step from the current lr), so a
schedule matches torch's step for step, floating point included."""
import collections
import math
import warnings

from .optimizer import Optimizer


class LRScheduler:
    """Sets each param group's "lr" per epoch: step() advances last_epoch and writes
    get_lr()'s values. The constructor takes the first step (epoch 0), as torch."""

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   f"when resuming scheduler with last_epoch >= 0.")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        return self._last_lr

    def step(self, epoch=None):
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is "
                          "being deprecated where possible. Please use `scheduler.step()` to "
                          "step the scheduler. During the deprecation, if epoch is different "
                          "from None, the closed form is used instead of the new chainable "
                          "form, where available.", UserWarning, stacklevel=2)
            self.last_epoch = epoch
            values = (self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr")
                      else self.get_lr())
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current(self):
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        return {key: value for key, value in vars(self).items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        vars(self).update(state_dict)


_LRScheduler = LRScheduler


def _per_group(value, optimizer, wrong_length):
    """One value per param group: a list or tuple of them, or one value for every group."""
    n = len(optimizer.param_groups)
    if not isinstance(value, (list, tuple)):
        return [value] * n
    if len(value) != n:
        raise ValueError(wrong_length.format(n, len(value)))
    return list(value)


class LambdaLR(LRScheduler):
    """lr = initial lr * lr_lambda(epoch) (one function, or one per param group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _per_group(lr_lambda, optimizer, "Expected {} lr_lambdas, but got {}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """lr *= gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr *= gamma at each milestone epoch."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = collections.Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._current()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]


class ExponentialLR(LRScheduler):
    """lr *= gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return self._current() if self._is_initial else [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr from the initial lr down to eta_min along half a cosine over T_max epochs (and
    back up after, as torch's recursive form does)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [lr + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base, lr in zip(self.base_lrs, self._current())]
        return [(1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1)
                                                                        / t_max))
                * (lr - eta_min) + eta_min for lr in self._current()]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class ReduceLROnPlateau(LRScheduler):
    """lr *= factor (not below min_lr) once the metric passed to step(metric) has not
    improved by threshold for more than patience epochs; then cooldown epochs of rest."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.optimizer, self.factor, self.patience = optimizer, factor, patience
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.min_lrs = _per_group(min_lr, optimizer, "expected {} min_lrs, got {}")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.last_epoch = 0
        self._last_lr = self._current()
        self.best, self.num_bad_epochs, self.cooldown_counter = self.mode_worse, 0, 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                    else best + self.threshold)

    def step(self, metrics, epoch=None):
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                old_lr = float(group["lr"])
                new_lr = max(old_lr * self.factor, min_lr)
                if old_lr - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._current()


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
