"""A small network written the usual way: a Module class and a main() function.

Run: gradviz run examples/def_main_mlp.py
Tensors made inside forward() that never got a name are named after the module call that made
them: fc1(x) is the output of self.fc1(x).
"""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    torch.manual_seed(0)
    model = Net()
    x = torch.ones(2, 3)
    loss = model(x).sum()
    loss.backward()
    print(round(loss.item(), 4))


if __name__ == "__main__":
    main()
