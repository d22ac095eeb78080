"""A small CNN for 1x28x28 images as people write it (pytorch/examples' MNIST net, with
BatchNorm): two conv blocks (Conv2d, BatchNorm2d, ReLU, pooling), Dropout2d, an adaptive
average pool, a Linear head, log_softmax + nll_loss, SGD with momentum. Unchanged PyTorch
code; tests/capture/test_torch_files.py trains it on gradtool's engine and on torch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.Dropout2d(0.25),
            nn.AvgPool2d(kernel_size=2, stride=2),
        )
        self.pool = nn.AdaptiveAvgPool2d((3, 3))
        self.fc = nn.Linear(16 * 3 * 3, classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc(x), dim=1)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def train_step(images, labels):
    model.train()
    optimizer.zero_grad()
    loss = F.nll_loss(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def accuracy(images, labels):
    model.eval()
    return (model(images).argmax(dim=1) == labels).float().mean().item()
