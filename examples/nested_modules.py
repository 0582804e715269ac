"""A small nested model: an encoder of two blocks, each a Linear and a LayerNorm, then a head.

Run: gradviz graph examples/nested_modules.py --depth-modules 1 --svg nested.svg
     (each Block folded into one box; --expand encoder.blocks.0 opens the first one)
     gradviz run examples/nested_modules.py --by-module
"""

import gradviz as torch
from gradviz import nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return x + self.norm(self.linear(x)).relu()


class Encoder(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder(4, 2)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.encoder(x))


model = Net()
x = torch.randn(3, 4)
loss = model(x).pow(2).mean()
