"""An actor-critic agent as in pytorch/examples (reinforcement_learning/actor_critic.py), on a
small deterministic environment instead of gym: a two-headed policy network, actions sampled
from a Categorical, log-probabilities and values saved per step, normalised returns, the
policy and smooth-L1 value losses with an entropy bonus, Adam. Unchanged PyTorch code;
tests/capture/test_torch_files.py replays one episode on gradtool's engine and on torch."""
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

GAMMA = 0.99
SavedAction = namedtuple("SavedAction", ["log_prob", "value", "entropy"])
eps = np.finfo(np.float32).eps.item()


class Walk:
    """Reach the right end of a line of 5 cells: reward 1 there, -0.05 a step."""

    def reset(self):
        self.pos = 2
        return self.state()

    def state(self):
        return np.array([self.pos / 4, 1.0 - self.pos / 4, float(self.pos == 4), 1.0])

    def step(self, action):
        self.pos = min(4, max(0, self.pos + (1 if action == 1 else -1)))
        done = self.pos == 4
        return self.state(), (1.0 if done else -0.05), done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


torch.manual_seed(0)
model = Policy()
optimizer = optim.Adam(model.parameters(), lr=3e-2)


def select_action(state, action=None):
    """Sample an action (or take `action`, replaying a recorded episode); remember its
    log-probability, the critic's value and the policy's entropy."""
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    m = Categorical(probs)
    action = m.sample() if action is None else torch.tensor(action)
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value, m.entropy()))
    return action.item()


def finish_episode():
    R = 0
    returns = []
    for r in model.rewards[::-1]:
        R = r + GAMMA * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_losses, value_losses, entropies = [], [], []
    for (log_prob, value, entropy), R in zip(model.saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
        entropies.append(entropy)
    optimizer.zero_grad()
    loss = (torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
            - 0.01 * torch.stack(entropies).sum())
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


def run_episode(env, actions=None, max_steps=30):
    """One episode (sampled, or the given actions); then one update. Returns the actions
    taken and the loss."""
    state, taken = env.reset(), []
    for t in range(max_steps):
        action = select_action(state, None if actions is None else actions[t])
        taken.append(action)
        state, reward, done = env.step(action)
        model.rewards.append(reward)
        if done or (actions is not None and t + 1 == len(actions)):
            break
    return taken, finish_episode()


def main(episodes=40):
    env = Walk()
    lengths = [len(run_episode(env)[0]) for _ in range(episodes)]
    return lengths
