"""d2l.ai's parameter management and initialization: state_dict of one layer, named_parameters,
a layer shared by two places in a Sequential, and initialising with `net.apply(fn)`.

`shared = nn.LazyLinear(8)` appears twice in `net`: net[2] and net[4] are the same module, so
writing net[2].weight.data[0, 0] = 100 changes net[4] too (both comparisons print eight True).
`net.apply(init)` calls init on every submodule (children first, then net itself), which is how
d2l's init_normal, init_constant, xavier_uniform_ and its own my_init (uniform in [-10, 10],
then zero where |w| < 5) reach each nn.Linear.

Expect (PyTorch 2.13's output after torch.manual_seed(0)): net[2].state_dict() weight [[-0.1568,
-0.0128, 0.2261, ...]], bias [0.0659]; after init_normal net[0].weight[0] = [-0.0064, 0.0007,
0.0056, 0.0053]; after my_init the first two rows [[6.6596, -5.2215, 0, 0], [0, 0, 0, -7.8615]];
the last row printed [42.0000, -4.2215, 1.0000, 1.0000]; net[0].weight._version 5 (each
in-place init and each .data write counts on the parameter, as in torch) and the fresh
`.data` tensor's 0.

What to look at: `net[0].weight` is a leaf Parameter whose _version the inits advanced; the
"Init weight" lines are printed by my_init as apply() reaches each Linear.

Run:
    gradviz run examples/shared_parameters_init.py
"""
import gradviz as torch
from gradviz import nn

torch.manual_seed(0)
net = nn.Sequential(nn.LazyLinear(8),
                    nn.ReLU(),
                    nn.LazyLinear(1))

X = torch.rand(size=(2, 4))
print(net(X).shape)
print(net[2].state_dict())
print(type(net[2].bias).__name__, net[2].bias.data)
print(net[2].weight.grad == None)
print([(name, param.shape) for name, param in net.named_parameters()])

shared = nn.LazyLinear(8)
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(),
                    shared, nn.ReLU(),
                    shared, nn.ReLU(),
                    nn.LazyLinear(1))

print(net(X))
print(net[2].weight.data[0] == net[4].weight.data[0])
net[2].weight.data[0, 0] = 100
print(net[2].weight.data[0] == net[4].weight.data[0])

net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
print(net(X).shape)


def init_normal(module):
    if type(module) == nn.Linear:
        nn.init.normal_(module.weight, mean=0, std=0.01)
        nn.init.zeros_(module.bias)


net.apply(init_normal)
print(net[0].weight.data[0], net[0].bias.data[0])


def init_constant(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 1)
        nn.init.zeros_(module.bias)


net.apply(init_constant)
print(net[0].weight.data[0], net[0].bias.data[0])


def init_xavier(module):
    if type(module) == nn.Linear:
        nn.init.xavier_uniform_(module.weight)


def init_42(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 42)


net[0].apply(init_xavier)
net[2].apply(init_42)
print(net[0].weight.data[0])
print(net[2].weight.data)


def my_init(module):
    if type(module) == nn.Linear:
        print("Init", *[(name, param.shape)
                        for name, param in module.named_parameters()][0])
        nn.init.uniform_(module.weight, -10, 10)
        module.weight.data *= module.weight.data.abs() >= 5


net.apply(my_init)
print(net[0].weight[:2])
net[0].weight.data[:] += 1
net[0].weight.data[0, 0] = 42
print(net[0].weight.data[0])
print(net[0].weight._version, net[0].weight.data._version)
