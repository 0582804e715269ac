"""PyTorch's MNIST example (pytorch/examples, mnist/main.py), on random images of MNIST's shape.

The network is the example's: two 3x3 convolutions (32 and 64 channels), max pooling,
channel-wise dropout (nn.Dropout2d, as the example's earlier versions write it), a 9216 -> 128
-> 10 classifier with dropout, log_softmax and F.nll_loss. It trains with optim.Adadelta
(lr=1.0) and lr_scheduler.StepLR(step_size=1, gamma=0.7), and tests with the example's
train() and test() functions and argparse options (small defaults here: 16 training images,
batches of 8, 2 epochs). The images are torch.rand draws and the labels torch.randint draws
after torch.manual_seed(1), so the numbers are the same on every run.

Expect: exactly the lines PyTorch 2.13 prints for this file: "Train Epoch: 1 [0/16 (0%)]
Loss: 2.297614" first, "Test set: Average loss: 2.6974, Accuracy: 1/8 (12%)" after epoch 1
and 2.3061 after epoch 2, and the learning rate going 1.0 -> 0.7 -> 0.49 (printed
[0.48999999999999994], as torch prints it); tests/test_examples_torch.py checks the output.

What to look at: `output` is LogSoftmaxBackward0 of the classifier; each conv2's output goes
through Dropout2d's MulBackward0 (whole channels zeroed: one Bernoulli draw per image and
channel); the parameters are versioned once per Adadelta step.

Run:
    gradviz run examples/mnist_cnn_adadelta.py
    gradviz graph examples/mnist_cnn_adadelta.py --root loss --svg mnist.svg
This file calls loss.backward() itself in its loop: do not pass --backward.
"""
import argparse

import gradviz as torch
import gradviz.nn as nn
import gradviz.nn.functional as F
import gradviz.optim as optim
from gradviz.optim.lr_scheduler import StepLR
from gradviz.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
parser.add_argument('--batch-size', type=int, default=8, metavar='N')
parser.add_argument('--test-batch-size', type=int, default=8, metavar='N')
parser.add_argument('--epochs', type=int, default=2, metavar='N')
parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
parser.add_argument('--seed', type=int, default=1, metavar='S')
parser.add_argument('--log-interval', type=int, default=1, metavar='N')
args = parser.parse_args()

use_cuda = torch.cuda.is_available()
use_mps = torch.backends.mps.is_available()
torch.manual_seed(args.seed)
if use_cuda:
    device = torch.device("cuda")
elif use_mps:
    device = torch.device("mps")
else:
    device = torch.device("cpu")

# MNIST's shape (1 x 28 x 28, ten classes), normalised as the example's transform does
images = (torch.rand(24, 1, 28, 28) - 0.1307) / 0.3081
labels = torch.randint(0, 10, (24,))
dataset1 = TensorDataset(images[:16], labels[:16])
dataset2 = TensorDataset(images[16:], labels[16:])
train_loader = DataLoader(dataset1, batch_size=args.batch_size)
test_loader = DataLoader(dataset2, batch_size=args.test_batch_size)

model = Net().to(device)
optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
for epoch in range(1, args.epochs + 1):
    train(args, model, device, train_loader, optimizer, epoch)
    test(model, device, test_loader)
    scheduler.step()
    print("lr", scheduler.get_last_lr())
