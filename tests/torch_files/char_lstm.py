"""A character-level LSTM language model as people write it (char-rnn style): a Dataset of
text windows, a DataLoader, Embedding -> 2-layer batch-first LSTM -> Linear, cross-entropy,
gradient clipping, Adam with a StepLR schedule, and sampling from a Categorical. Unchanged
PyTorch code; tests/capture/test_torch_files.py trains it a step on gradtool's engine and on torch."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset

TEXT = "the quick brown fox jumps over the lazy dog. " * 8
CHARS = sorted(set(TEXT))
STOI = {c: i for i, c in enumerate(CHARS)}
ITOS = {i: c for c, i in STOI.items()}
BLOCK = 12


class CharDataset(Dataset):
    """(input, target) windows of the text, the target shifted by one character."""

    def __init__(self, text, block):
        self.data = torch.tensor([STOI[c] for c in text], dtype=torch.long)
        self.block = block

    def __len__(self):
        return len(self.data) - self.block

    def __getitem__(self, i):
        chunk = self.data[i:i + self.block + 1]
        return chunk[:-1], chunk[1:]


class CharLSTM(nn.Module):
    def __init__(self, vocab, embed=16, hidden=32, layers=2, dropout=0.0):
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.head = nn.Linear(hidden, vocab)

    def init_hidden(self, batch):
        weight = next(self.parameters())
        return (weight.new_zeros(self.layers, batch, self.hidden),
                weight.new_zeros(self.layers, batch, self.hidden))

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)
        return self.head(out), state


torch.manual_seed(0)
model = CharLSTM(len(CHARS))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
scheduler = StepLR(optimizer, step_size=10, gamma=0.5)
loader = DataLoader(CharDataset(TEXT, BLOCK), batch_size=8, shuffle=True)


def train_step(x, y):
    """One step of truncated backpropagation through time on a batch of windows."""
    model.train()
    optimizer.zero_grad()
    logits, _ = model(x, model.init_hidden(x.size(0)))
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    return loss.item()


@torch.no_grad()
def sample(start="the ", n=20, temperature=1.0):
    model.eval()
    idx = torch.tensor([[STOI[c] for c in start]])
    logits, state = model(idx)
    out = list(start)
    for _ in range(n):
        next_id = Categorical(logits=logits[0, -1] / temperature).sample()
        out.append(ITOS[next_id.item()])
        logits, state = model(next_id.view(1, 1), state)
    return "".join(out)


def main(epochs=1):
    for _ in range(epochs):
        for x, y in loader:
            train_step(x, y)
    return sample()
