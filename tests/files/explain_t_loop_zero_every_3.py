import torch

w = torch.tensor([0.5, -1.0], requires_grad=True)
X = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
opt = torch.optim.SGD([w], lr=2 ** -7)  # a power of two: every value is exact in float32, on any BLAS
step_grads = []
for step in range(5):
    if step % 3 == 0:
        opt.zero_grad(set_to_none=False)
    loss = ((X @ w) ** 2).sum()
    (g,) = torch.autograd.grad(loss, w, retain_graph=True)
    step_grads.append(g)
    loss.backward()
    opt.step()
