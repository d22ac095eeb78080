"""Train a small MLP on two interleaved spirals (a synthetic 2-D, 2-class task made with numpy),
written as for PyTorch: with `import torch` and `from torch import nn` in place of the two
gradtool imports, it runs on torch unchanged.

Stated result: with the default settings (seed 0, 300 full-batch Adam steps on 300 points, about
a second) the model classifies at least 97% of 400 held-out test points correctly
(TARGET_ACCURACY below; tests/engine/test_nn.py checks it).

It shows the grad-mode lessons of gradtool.nn and gradtool.optim:
- the optimizer holds the model's very parameters and updates them in place under no_grad;
- evaluation uses model.eval() (Dropout off) *and* no_grad() (nothing recorded): the two are
  independent switches, and evaluation wants both.
Run it: python examples/train_mlp.py
"""
import math

import numpy as np

import gradtool as torch
from gradtool.engine import nn

TARGET_ACCURACY = 0.97


def _spirals(n, rng, noise=0.2):
    """n points per class on two interleaved spiral arms, with Gaussian noise."""
    t = np.sqrt(rng.random(n)) * 3 * math.pi  # denser towards the centre
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3 * math.pi) * 2
    points = np.concatenate([arm, -arm]) + rng.normal(0, noise / (3 * math.pi) * 2, (2 * n, 2))
    labels = np.concatenate([np.zeros(n, np.int64), np.ones(n, np.int64)])
    return torch.tensor(points, dtype=torch.float32), torch.tensor(labels)


def _accuracy(model, x, y):
    model.eval()  # Dropout off ...
    with torch.no_grad():  # ... and nothing recorded: two independent switches
        correct = (model(x).argmax(dim=1) == y).sum().item()
    model.train()
    return correct / len(y)


def main(*, steps=300, seed=0, verbose=True):
    """Train and return the test accuracy."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x_train, y_train = _spirals(150, rng)
    x_test, y_test = _spirals(200, rng)

    model = nn.Sequential(
        nn.Linear(2, 32), nn.Tanh(),
        nn.Linear(32, 32), nn.Tanh(),
        nn.Dropout(0.05),
        nn.Linear(32, 2),
    )
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)

    for step in range(1, steps + 1):
        optimizer.zero_grad()
        loss = loss_fn(model(x_train), y_train)
        loss.backward()
        optimizer.step()  # in place, under no_grad, on the arrays the model holds
        if verbose and step % 100 == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}  "
                  f"train accuracy {_accuracy(model, x_train, y_train):.3f}")

    accuracy = _accuracy(model, x_test, y_test)
    if verbose:
        print(f"test accuracy {accuracy:.3f} (stated: at least {TARGET_ACCURACY:.2f})")
    return accuracy


if __name__ == "__main__":
    main()
