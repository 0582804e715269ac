# d2l.ai's modern CNN chapters (PyTorch tab), at toy sizes: LeNet as nn.Sequential with
# Sigmoid and AvgPool2d, the layer-by-layer shape printout, evaluate_accuracy_gpu-style
# training with xavier_uniform_ init via net.apply; vgg_block and nin_block builders;
# the Residual class with use_1x1conv and BatchNorm2d, resnet_block, AdaptiveAvgPool2d and
# Flatten; a small ResNet's shapes, parameter count and a few SGD steps.
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)

net = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(),
    nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(),
    nn.Linear(120, 84), nn.Sigmoid(),
    nn.Linear(84, 10))

X = torch.rand(size=(1, 1, 28, 28), dtype=torch.float32)
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape: \t', X.shape)


def init_weights(m):
    if type(m) == nn.Linear or type(m) == nn.Conv2d:
        nn.init.xavier_uniform_(m.weight)


net.apply(init_weights)
optimizer = torch.optim.SGD(net.parameters(), lr=0.9)
loss = nn.CrossEntropyLoss()
X, y = torch.rand(16, 1, 28, 28), torch.randint(0, 10, (16,))
for epoch in range(3):
    net.train()
    optimizer.zero_grad()
    y_hat = net(X)
    l = loss(y_hat, y)
    l.backward()
    optimizer.step()
    with torch.no_grad():
        acc = (net(X).argmax(axis=1) == y).float().mean()
    print(f'epoch {epoch}, loss {l:.3f}, train acc {acc:.3f}')


def vgg_block(num_convs, in_channels, out_channels):
    layers = []
    for _ in range(num_convs):
        layers.append(nn.Conv2d(in_channels, out_channels,
                                kernel_size=3, padding=1))
        layers.append(nn.ReLU())
        in_channels = out_channels
    layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
    return nn.Sequential(*layers)


def vgg(conv_arch):
    conv_blks = []
    in_channels = 1
    # The convolutional part
    for (num_convs, out_channels) in conv_arch:
        conv_blks.append(vgg_block(num_convs, in_channels, out_channels))
        in_channels = out_channels

    return nn.Sequential(
        *conv_blks, nn.Flatten(),
        # The fully-connected part
        nn.Linear(out_channels * 2 * 2, 32), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(32, 32), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(32, 10))


conv_arch = ((1, 4), (1, 8), (2, 8))
net = vgg(conv_arch)
print(net)
X = torch.randn(size=(1, 1, 16, 16))
for blk in net:
    X = blk(X)
    print(blk.__class__.__name__, 'output shape:\t', X.shape)


def nin_block(in_channels, out_channels, kernel_size, strides, padding):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size, strides, padding),
        nn.ReLU(),
        nn.Conv2d(out_channels, out_channels, kernel_size=1), nn.ReLU(),
        nn.Conv2d(out_channels, out_channels, kernel_size=1), nn.ReLU())


net = nn.Sequential(
    nin_block(1, 8, kernel_size=5, strides=2, padding=1),
    nn.MaxPool2d(3, stride=2),
    nin_block(8, 10, kernel_size=3, strides=1, padding=1),
    # Transform the four-dimensional output into two-dimensional output with a
    # shape of (batch size, 10)
    nn.AdaptiveAvgPool2d((1, 1)),
    nn.Flatten())
X = torch.rand(size=(1, 1, 24, 24))
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape:\t', X.shape)


class Residual(nn.Module):  #@save
    """The Residual block of ResNet."""
    def __init__(self, input_channels, num_channels,
                 use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.Conv2d(input_channels, num_channels,
                               kernel_size=3, padding=1, stride=strides)
        self.conv2 = nn.Conv2d(num_channels, num_channels,
                               kernel_size=3, padding=1)
        if use_1x1conv:
            self.conv3 = nn.Conv2d(input_channels, num_channels,
                                   kernel_size=1, stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.BatchNorm2d(num_channels)
        self.bn2 = nn.BatchNorm2d(num_channels)

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


blk = Residual(3, 3)
X = torch.rand(4, 3, 6, 6)
Y = blk(X)
print(Y.shape)
blk = Residual(3, 6, use_1x1conv=True, strides=2)
print(blk(X).shape)
print(Y.grad_fn, Y.grad_fn.next_functions)

b1 = nn.Sequential(nn.Conv2d(1, 8, kernel_size=7, stride=2, padding=3),
                   nn.BatchNorm2d(8), nn.ReLU(),
                   nn.MaxPool2d(kernel_size=3, stride=2, padding=1))


def resnet_block(input_channels, num_channels, num_residuals,
                 first_block=False):
    blk = []
    for i in range(num_residuals):
        if i == 0 and not first_block:
            blk.append(Residual(input_channels, num_channels,
                                use_1x1conv=True, strides=2))
        else:
            blk.append(Residual(num_channels, num_channels))
    return blk


b2 = nn.Sequential(*resnet_block(8, 8, 2, first_block=True))
b3 = nn.Sequential(*resnet_block(8, 16, 2))
net = nn.Sequential(b1, b2, b3,
                    nn.AdaptiveAvgPool2d((1, 1)),
                    nn.Flatten(), nn.Linear(16, 10))
X = torch.rand(size=(2, 1, 32, 32))
for layer in net:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape:\t', X.shape)
print(sum(p.numel() for p in net.parameters()))
print(net[1][0])
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
X, y = torch.rand(8, 1, 32, 32), torch.randint(0, 10, (8,))
for epoch in range(3):
    optimizer.zero_grad()
    l = loss(net(X), y)
    l.backward()
    optimizer.step()
    print(f'epoch {epoch}, loss {l:.4f}')
print(net[1][0].bn1.running_mean, net[1][0].bn1.num_batches_tracked)
net.eval()
print(net(X[:2]).argmax(1))
