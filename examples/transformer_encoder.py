"""A 6-layer Transformer encoder (PyTorch's nn.TransformerEncoder): one training step.

Needs PyTorch: gradviz's core has no nn.TransformerEncoder, so run it with --backend torch
(the tests skip this file when torch is not installed). d_model 256, 8 heads, feed-forward
1024, a batch of 8 sequences of 64 random vectors, then a linear head over the mean of the
sequence; cross entropy against random labels out of 10 classes, one SGD step.

What to look at: with the layers folded (--depth-modules 2) the graph is six boxes
`encoder.layers.N: TransformerEncoderLayer`, each with its input and output shapes [8, 64, 256]
and 789,760 parameters, joined by the autograd edges between them; --expand
encoder.layers.0 opens one layer (self_attn, linear1/linear2, norm1/norm2, dropouts).
Parameters are named by their qualified names: model.encoder.layers.3.linear1.weight
[1024, 256].

Run:
    gradviz graph examples/transformer_encoder.py --backend torch --depth-modules 2 --svg t.svg
    gradviz run examples/transformer_encoder.py --backend torch --by-module
This file calls loss.backward() itself: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn
import gradviz.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, d_model=256, heads=8, depth=6, classes=10):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                           batch_first=True)
        # a template: TransformerEncoder makes depth copies of it (the copies are the model's)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 64, 256)
labels = torch.randint(0, 10, (8,))

logits = model(x)
loss = F.cross_entropy(logits, labels)
opt.zero_grad()
loss.backward()
opt.step()
print(f"loss {loss.item():.4f}")
