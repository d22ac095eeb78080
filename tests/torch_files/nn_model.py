"""A small PyTorch model as people write them: `from torch import nn, optim`, functional
losses, a local helper module, a training step at import time, torch.testing, and an import
of torch done lazily inside a function."""
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.testing import assert_close

from torch_helpers import smooth_abs


class TwoLayerNet(nn.Module):
    def __init__(self, d_in=3, hidden=8, d_out=2):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


torch.manual_seed(0)
model = TwoLayerNet().double()
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
target = torch.zeros(2, dtype=torch.float64)


def loss_of(x):
    return F.mse_loss(model(x), target) + smooth_abs(x).sum()


def lazy_softmax_loss(x):
    import torch.nn.functional as lazy_F  # imported when gradtool calls this function
    from torch.autograd import grad  # noqa: F401
    return -lazy_F.log_softmax(x, dim=0)[0]


# one training step at import time, as scripts do
before = [p.detach().clone() for p in model.parameters()]
optimizer.zero_grad()
loss_of(torch.randn(3, dtype=torch.float64)).backward()
optimizer.step()
assert_close(model.fc1.weight.grad, model.fc1.weight.grad.clone())
assert any((p.detach() - b).abs().sum().item() > 0 for p, b in zip(model.parameters(), before))
