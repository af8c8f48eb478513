"""PyTorch modules for the `gacc import` tests."""
import torch
import torch.nn as nn


def classifier():
    """nn.Sequential names its layers 0, 1, 2: parameters '0.weight', ..."""
    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    return module, torch.optim.SGD(module.parameters(), lr=0.1, momentum=0.9)


class Cumulative(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 3)

    def forward(self, input):
        return torch.cumsum(self.linear(input), dim=1)  # no gacc mapping


def cumulative():
    return Cumulative()


def not_a_module():
    return 42
