"""An nn.Module with two nn.Parameters; parameters() is a generator.

Seed note 000. Assigning an nn.Parameter to a Module attribute registers it.
Parameters are leaves that require grad (no grad_fn). parameters() returns a
generator, so len(my.parameters()) raises
    TypeError: object of type 'generator' has no len()
and the count is len(list(my.parameters())) == 2.

(The note also overrode __setattr__ to print every attribute torch's Module
sets internally; those private names are torch's, not part of the API, so
that part is left out.)

Expect:
    2 parameters: weight [3, 64] and bias [64], both is_leaf True, requires_grad True
    y = my(x) has shape [1, 64] and grad_fn AddBackward0; loss = y.sum()
    after --backward loss: my.weight.grad is all ones (= x, which is all ones)
                           my.bias.grad is all ones
Random values: torch.manual_seed(0) makes them repeat, and gradviz draws them
exactly as PyTorch does (the same printed numbers on both).

Run:
    gradviz run examples/nn_module_parameters.py --backward loss
    gradviz graph examples/nn_module_parameters.py --svg my.svg
This file does not call backward.
"""
import gradviz as torch
from gradviz import nn

torch.manual_seed(0)


class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, input):
        return (input @ self.weight) + self.bias


my = MyLinear(3, 64)

try:
    len(my.parameters())
except TypeError as err:
    print("TypeError:", err)           # object of type 'generator' has no len()
print(len(list(my.parameters())))      # 2
print([(name, tuple(p.shape), p.is_leaf) for name, p in my.named_parameters()])
# [('weight', (3, 64), True), ('bias', (64,), True)]

x = torch.ones(1, 3)
y = my(x)
loss = y.sum()
