# d2l.ai Dropout from scratch (dropout_layer with a torch.rand mask, the two-hidden-layer net
# switching on self.training) and Batch Normalization from scratch (batch_norm with moving
# averages under torch.is_grad_enabled, the BatchNorm module, LeNet with BatchNorm, then the
# concise nn.BatchNorm2d / nn.BatchNorm1d version). Random data stands in for Fashion-MNIST.
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


def dropout_layer(X, dropout):
    assert 0 <= dropout <= 1
    if dropout == 1: return torch.zeros_like(X)
    mask = (torch.rand(X.shape) > dropout).float()
    return mask * X / (1.0 - dropout)


X = torch.arange(16, dtype=torch.float32).reshape((2, 8))
print('dropout_p = 0:', dropout_layer(X, 0))
print('dropout_p = 0.5:', dropout_layer(X, 0.5))
print('dropout_p = 1:', dropout_layer(X, 1))


class DropoutMLPScratch(nn.Module):
    def __init__(self, num_outputs, num_hiddens_1, num_hiddens_2, dropout_1, dropout_2, lr):
        super().__init__()
        self.num_outputs, self.lr = num_outputs, lr
        self.dropout_1, self.dropout_2 = dropout_1, dropout_2
        self.lin1 = nn.LazyLinear(num_hiddens_1)
        self.lin2 = nn.LazyLinear(num_hiddens_2)
        self.lin3 = nn.LazyLinear(num_outputs)
        self.relu = nn.ReLU()

    def forward(self, X):
        H1 = self.relu(self.lin1(X.reshape((X.shape[0], -1))))
        if self.training:
            H1 = dropout_layer(H1, self.dropout_1)
        H2 = self.relu(self.lin2(H1))
        if self.training:
            H2 = dropout_layer(H2, self.dropout_2)
        return self.lin3(H2)


model = DropoutMLPScratch(10, 32, 16, 0.5, 0.5, 0.1)
X = torch.randn(8, 1, 6, 6)
y = torch.randint(0, 10, (8,))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    loss = F.cross_entropy(model(X), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, f"{loss.item():.4f}")
model.eval()
print(model(X).argmax(axis=1))


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    # Use is_grad_enabled to determine whether we are in training mode
    if not torch.is_grad_enabled():
        # In prediction mode, use mean and variance obtained by moving average
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 4)
        if len(X.shape) == 2:
            # When using a fully connected layer, calculate the mean and
            # variance on the feature dimension
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            # When using a two-dimensional convolutional layer, calculate the
            # mean and variance on the channel dimension (axis=1). Here we
            # need to maintain the shape of `X`, so that the broadcasting
            # operation can be carried out later
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        # In training mode, the current mean and variance are used
        X_hat = (X - mean) / torch.sqrt(var + eps)
        # Update the mean and variance using moving average
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta  # Scale and shift
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    # num_features: the number of outputs for a fully connected layer or the
    # number of output channels for a convolutional layer. num_dims: 2 for a
    # fully connected layer and 4 for a convolutional layer
    def __init__(self, num_features, num_dims):
        super().__init__()
        if num_dims == 2:
            shape = (1, num_features)
        else:
            shape = (1, num_features, 1, 1)
        # The scale parameter and the shift parameter (model parameters) are
        # initialized to 1 and 0, respectively
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        # The variables that are not model parameters are initialized to 0 and
        # 1
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        # If `X` is not on the main memory, copy `moving_mean` and
        # `moving_var` to the device where `X` is located
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        # Save the updated `moving_mean` and `moving_var`
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean,
            self.moving_var, eps=1e-5, momentum=0.1)
        return Y


net = nn.Sequential(
    nn.LazyConv2d(6, kernel_size=5), BatchNorm(6, num_dims=4),
    nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
    nn.LazyConv2d(16, kernel_size=5), BatchNorm(16, num_dims=4),
    nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(), nn.LazyLinear(120), BatchNorm(120, num_dims=2),
    nn.Sigmoid(), nn.LazyLinear(84), BatchNorm(84, num_dims=2),
    nn.Sigmoid(), nn.LazyLinear(10))
X = torch.randn(8, 1, 28, 28)
y = torch.randint(0, 10, (8,))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    loss = F.cross_entropy(net(X), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, f"{loss.item():.4f}")
print(net[1].gamma.reshape((-1,)), net[1].beta.reshape((-1,)), sep='\n')
print(net[1].moving_mean.reshape((-1,)), net[1].moving_var.reshape((-1,)), sep='\n')
with torch.no_grad():
    print(net(X).argmax(1))

torch.manual_seed(0)
net = nn.Sequential(
    nn.LazyConv2d(6, kernel_size=5), nn.LazyBatchNorm2d(),
    nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
    nn.LazyConv2d(16, kernel_size=5), nn.LazyBatchNorm2d(),
    nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(), nn.LazyLinear(120), nn.LazyBatchNorm1d(),
    nn.Sigmoid(), nn.LazyLinear(84), nn.LazyBatchNorm1d(),
    nn.Sigmoid(), nn.LazyLinear(10))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    loss = F.cross_entropy(net(X), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, f"{loss.item():.4f}")
print(net[1])
print(net[1].running_mean, net[1].num_batches_tracked)
net.eval()
print(net(X).argmax(1))
