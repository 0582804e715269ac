"""A script written the usual way: everything happens inside functions.

Run: gradviz run examples/def_main_script.py
The tensors are named after the function that made them: main.x, step[2].loss, ...
"""
import torch


def step(w, x):
    y = w * x
    loss = (y - 1).pow(2).sum()
    loss.backward()
    return loss


def main():
    x = torch.tensor([1.0, 2.0, 3.0])
    w = torch.tensor([0.5, -0.5, 1.0], requires_grad=True)
    for _ in range(2):
        loss = step(w, x)
    print(loss.item())


if __name__ == "__main__":
    main()
