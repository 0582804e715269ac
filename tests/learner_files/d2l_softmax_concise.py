# d2l.ai Concise Implementation of Softmax Regression: nn.Flatten + nn.LazyLinear, the
# Classifier's loss (F.cross_entropy with reduction 'mean' or 'none') and accuracy, trained by
# minibatch SGD on random 28x28 "images" (FashionMNIST replaced; d2l's Trainer inlined).
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class SoftmaxRegression(nn.Module):
    def __init__(self, num_outputs, lr):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Flatten(),
                                 nn.LazyLinear(num_outputs))

    def forward(self, X):
        return self.net(X)

    def loss(self, Y_hat, Y, averaged=True):
        Y_hat = torch.reshape(Y_hat, (-1, Y_hat.shape[-1]))
        Y = torch.reshape(Y, (-1,))
        return F.cross_entropy(
            Y_hat, Y, reduction='mean' if averaged else 'none')

    def accuracy(self, Y_hat, Y, averaged=True):
        Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
        preds = Y_hat.argmax(axis=1).type(Y.dtype)
        compare = (preds == Y.reshape(-1)).type(torch.float32)
        return compare.mean() if averaged else compare

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


X = torch.rand(200, 1, 28, 28)
y = (X.mean(dim=(1, 2, 3)) * 100).long() % 10
train = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X[:160], y[:160]),
                                    batch_size=32, shuffle=True)
val = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X[160:], y[160:]),
                                  batch_size=32)

model = SoftmaxRegression(num_outputs=10, lr=0.1)
model(X[:1])
print(model)
optim = model.configure_optimizers()
for epoch in range(5):
    model.train()
    for Xb, yb in train:
        loss = model.loss(model(Xb), yb)
        optim.zero_grad()
        loss.backward()
        optim.step()
    model.eval()
    with torch.no_grad():
        accs = [model.accuracy(model(Xb), yb) for Xb, yb in val]
        losses = torch.cat([model.loss(model(Xb), yb, averaged=False) for Xb, yb in val])
    print(f'epoch {epoch}: train {loss.item():.5f} val {losses.mean().item():.5f} '
          f'acc {torch.stack(accs).mean().item():.4f}')
print(losses[:6])
print(model.accuracy(model(X[160:]), y[160:], averaged=False)[:10])
