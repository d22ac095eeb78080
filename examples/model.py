"""A small model: the graph of an nn.Module, grouped by the module that ran each node.

    gradtool inspect examples/model.py
    gradtool gradcheck examples/model.py
    gradtool render examples/model.py -o model.svg
"""
import gradtool
import gradtool as torch
from gradtool.engine import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()
loss_fn = nn.CrossEntropyLoss()
targets = torch.tensor([0, 2])


@gradtool.example((2, 4))
def classify(x):
    """Cross-entropy of the model's logits: checked with respect to the input batch."""
    logits = model(x)
    return loss_fn(logits, targets)
