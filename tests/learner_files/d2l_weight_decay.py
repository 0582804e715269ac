# d2l.ai Weight Decay: the high-dimensional linear regression data, the scratch L2 penalty and
# the concise version with per-parameter-group weight_decay in SGD. d2l's Module / Trainer /
# DataModule are inlined as the few lines this chapter uses.
import torch
from torch import nn

torch.manual_seed(0)


class Data:
    def __init__(self, num_train, num_val, num_inputs, batch_size):
        self.num_train, self.batch_size = num_train, batch_size
        n = num_train + num_val
        self.X = torch.randn(n, num_inputs)
        noise = torch.randn(n, 1) * 0.01
        w, b = torch.ones((num_inputs, 1)) * 0.01, 0.05
        self.y = torch.matmul(self.X, w) + b + noise

    def get_dataloader(self, train):
        i = slice(0, self.num_train) if train else slice(self.num_train, None)
        dataset = torch.utils.data.TensorDataset(self.X[i], self.y[i])
        return torch.utils.data.DataLoader(dataset, self.batch_size, shuffle=train)


def l2_penalty(w):
    return torch.sum(w**2) / 2


class SGD:
    def __init__(self, params, lr):
        self.params, self.lr = params, lr

    def step(self):
        for param in self.params:
            param -= self.lr * param.grad

    def zero_grad(self):
        for param in self.params:
            if param.grad is not None:
                param.grad.zero_()


class WeightDecayScratch(nn.Module):
    def __init__(self, num_inputs, lambd, lr, sigma=0.01):
        super().__init__()
        self.lambd, self.lr = lambd, lr
        self.w = torch.normal(0, sigma, (num_inputs, 1), requires_grad=True)
        self.b = torch.zeros(1, requires_grad=True)

    def forward(self, X):
        return torch.matmul(X, self.w) + self.b

    def loss(self, y_hat, y):
        l = (y_hat - y) ** 2 / 2
        return l.mean() + self.lambd * l2_penalty(self.w)

    def configure_optimizers(self):
        return SGD([self.w, self.b], self.lr)


class WeightDecay(nn.Module):
    def __init__(self, wd, lr):
        super().__init__()
        self.wd, self.lr = wd, lr
        self.net = nn.LazyLinear(1)

    def forward(self, X):
        return self.net(X)

    def loss(self, y_hat, y):
        fn = nn.MSELoss()
        return fn(y_hat, y)

    def configure_optimizers(self):
        return torch.optim.SGD([
            {'params': self.net.weight, 'weight_decay': self.wd},
            {'params': self.net.bias}], lr=self.lr)

    def get_w_b(self):
        return (self.net.weight.data, self.net.bias.data)


def fit(model, data, max_epochs=10):
    optim = None
    for epoch in range(max_epochs):
        model.train()
        for X, y in data.get_dataloader(True):
            if optim is None:
                model(X)
                optim = model.configure_optimizers()
            loss = model.loss(model(X), y)
            optim.zero_grad()
            loss.backward()
            with torch.no_grad():
                optim.step()
        model.eval()
        with torch.no_grad():
            val = sum(model.loss(model(X), y).item() for X, y in data.get_dataloader(False))
        if epoch % 3 == 0:
            print(f'epoch {epoch}: train loss {loss.item():.6f}, val loss {val:.6f}')


data = Data(num_train=20, num_val=100, num_inputs=200, batch_size=5)


def train_scratch(lambd):
    model = WeightDecayScratch(num_inputs=200, lambd=lambd, lr=0.01)
    fit(model, data)
    print('L2 norm of w:', float(l2_penalty(model.w)))


train_scratch(0)
train_scratch(3)

model = WeightDecay(wd=3, lr=0.01)
fit(model, data)
print('L2 norm of w:', float(l2_penalty(model.get_w_b()[0])))
print(model.configure_optimizers().param_groups[0]['weight_decay'])
