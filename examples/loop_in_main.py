"""A 1000-step training loop inside main(): what the inspector shows of a loop.

w and b are fitted to y = 3x + 1 on four points by plain gradient descent (lr 0.05),
1000 steps of forward, loss.backward(), an update under no_grad and .grad.zero_().

Expect (PyTorch 2.13 prints the same): w 3.0 b 1.0, the loss of the last step under 1e-9.

What the inspector shows: the loop's last iteration only, with "(× 1000 iterations,
showing the last)" in the titles of the Tensors and Graph tables: main.w and main.b
(leaves, _version 1000: one update per step), main.pred and main.loss of step 1000 (the
run freed the graphs of the steps before). --json keeps the grouping as
data ("iterations", and "loop"/"iteration" on each tensor and node).

Run:
    gradviz run examples/loop_in_main.py
This file calls backward() itself: do not pass --backward.
"""
import gradviz as torch


def main():
    x = torch.tensor([0.0, 1.0, 2.0, 3.0])
    y = 3 * x + 1
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for step in range(1000):
        pred = w * x + b
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.05 * w.grad
            b -= 0.05 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    print("w", round(w.item(), 4), "b", round(b.item(), 4))
    print("last loss under 1e-9:", loss.item() < 1e-9)


if __name__ == "__main__":
    main()
