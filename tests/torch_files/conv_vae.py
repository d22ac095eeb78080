"""A convolutional VAE for 1x28x28 images as people write it: a strided Conv2d encoder with
GroupNorm, mu and log-variance heads, the reparameterisation trick, a decoder of
ConvTranspose2d, Upsample and Conv2d ending in a sigmoid, BCE + KL loss, Adam. Unchanged
PyTorch code; tests/capture/test_torch_files.py trains it on gradtool's engine and on torch."""
import torch
from torch import nn
from torch.nn import functional as F

LATENT = 8


class ConvVAE(nn.Module):
    def __init__(self, latent=LATENT):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 4, stride=2, padding=1),       # 28 -> 14
            nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, 4, stride=2, padding=1),      # 14 -> 7
            nn.GroupNorm(4, 16),
            nn.LeakyReLU(0.2),
        )
        self.fc_mu = nn.Linear(16 * 7 * 7, latent)
        self.fc_logvar = nn.Linear(16 * 7 * 7, latent)
        self.fc_decode = nn.Linear(latent, 16 * 7 * 7)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1),  # 7 -> 14
            nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="nearest"),        # 14 -> 28
            nn.Conv2d(8, 1, 3, padding=1),
        )

    def encode(self, x):
        h = self.encoder(x).flatten(start_dim=1)
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h = self.fc_decode(z).view(-1, 16, 7, 7)
        return torch.sigmoid(self.decoder(h))

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return (bce + kld) / x.size(0)


torch.manual_seed(0)
model = ConvVAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def train_step(images):
    model.train()
    optimizer.zero_grad()
    recon, mu, logvar = model(images)
    loss = loss_function(recon, images, mu, logvar)
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def sample(n=4):
    model.eval()
    return model.decode(torch.randn(n, LATENT))
