"""retain_grad() and register_hook(): seeing the gradients of non-leaves.

Seed note 004 (the w1, w2, w3 example). With input = ones(2, 2):
    l1 = input * w1 = 2,  l2 = l1 + w2 = 5,  l3 = l1 * w3 = 6,  l4 = l2 * l3 = 30,
    loss = l4.mean() = tensor(30., grad_fn=<MeanBackward0>)

Normally only leaves keep .grad. l1.retain_grad() / l4.retain_grad() /
loss.retain_grad() keep theirs; a tensor hook sees the gradient as it flows
past without storing it. Hooks fire in backward order, from the root down:

    loss grad: tensor(1.)
    l4 grad: tensor([[0.2500, 0.2500], [0.2500, 0.2500]])     (d mean / d l4 = 1/4)
    l1 grad: tensor([[5.2500, 5.2500], [5.2500, 5.2500]])     (0.25 * (l3 + l2*w3) = 0.25 * 21)

Expect after loss.backward():
    w1.grad = 21., w2.grad = 6., w3.grad = 10.
    l1.grad = 5.25 everywhere, l4.grad = 0.25 everywhere, loss.grad = 1.
    l2.grad, l3.grad: None (not retained)

Run:
    gradviz run examples/retain_grad_and_hooks.py
This file registers its hooks and calls loss.backward() itself: do not pass
--backward. (For gradviz's own hook trace on a file that leaves backward to
the inspector, see `gradviz run examples/mul_chain_backward.py --backward e --hooks`.)
"""
import gradviz as torch

input = torch.ones([2, 2], requires_grad=False)
w1 = torch.tensor(2.0, requires_grad=True)
w2 = torch.tensor(3.0, requires_grad=True)
w3 = torch.tensor(3.0, requires_grad=True)

l1 = input * w1
l2 = l1 + w2
l3 = l1 * w3
l4 = l2 * l3
loss = l4.mean()
print(loss.data, loss.grad_fn.name())        # tensor(30.) MeanBackward0

l1.retain_grad()
l4.retain_grad()
loss.retain_grad()

l1.register_hook(lambda grad: print("l1 grad:", grad))
l4.register_hook(lambda grad: print("l4 grad:", grad))
loss.register_hook(lambda grad: print("loss grad:", grad))

loss.backward()                               # prints loss grad, then l4 grad, then l1 grad

print(w1.grad, w2.grad, w3.grad)              # tensor(21.) tensor(6.) tensor(10.)
print(loss.grad, l4.grad[0, 0].item(), l1.grad[0, 0].item())   # tensor(1.) 0.25 5.25
print(l2.grad_fn.name(), l3.retains_grad)      # AddBackward0 False  (l2, l3 keep no grad)
