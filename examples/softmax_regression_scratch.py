"""Softmax regression from scratch, as d2l.ai's linear-networks chapter writes it.

Random data stands in for Fashion-MNIST: 64 "images" of 1x4x4 pixels and labels out of 3
classes. The model is written by hand: `softmax(X)` with `X_exp.sum(1, keepdims=True)`,
`cross_entropy(y_hat, y)` with `-torch.log(y_hat[list(range(len(y_hat))), y])`, accuracy with
`y_hat.argmax(axis=1)`, and minibatch SGD updating W and b under `torch.no_grad()`.
torch.manual_seed(0) fixes data and weights (`torch.normal(0, 0.01, size=...)`), and gradviz
draws PyTorch's numbers, so the printed losses and accuracies are PyTorch 2.13's: the loss
falls from 1.066101 at epoch 1 to 1.029697 at epoch 5 (near log 3 = 1.0986, a uniform guess,
at the start); the accuracy stays 0.4375 (random labels: nothing to learn but their mix).

What the inspector shows: W [16, 3] and b [3] (leaves, version 40 after 40 updates), l
(NegBackward0 over LogBackward0, IndexBackward0 and DivBackward0: the softmax written by
hand), and the hand-made SGD's in-place updates.

Run:
    gradviz run examples/softmax_regression_scratch.py
    gradviz graph examples/softmax_regression_scratch.py --root l --svg softmax.svg
This file calls backward itself in the loop: do not pass --backward.
"""
import gradviz as torch

torch.manual_seed(0)
num_inputs, num_outputs = 16, 3
features = torch.rand(64, 1, 4, 4)
labels = torch.randint(0, num_outputs, (64,))

W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
b = torch.zeros(num_outputs, requires_grad=True)


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdims=True)
    return X_exp / partition


def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[list(range(len(y_hat))), y])


def accuracy(y_hat, y):
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


lr, batch_size = 0.1, 8
for epoch in range(5):
    for i in range(0, len(features), batch_size):
        X, y = features[i:i + batch_size], labels[i:i + batch_size]
        l = cross_entropy(net(X), y)
        l.sum().backward()
        sgd([W, b], lr, batch_size)
    with torch.no_grad():
        y_hat = net(features)
        train_l = cross_entropy(y_hat, labels).mean()
        print(f"epoch {epoch + 1}, loss {float(train_l):f}, "
              f"acc {accuracy(y_hat, labels) / len(labels):.4f}")
