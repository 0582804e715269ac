"""gradcheck: x = 1e10 moved by eps = 1e-6 really moves by 1.9e-6 (float64's spacing there);
the root stays near 0, so the difference is exact: the gradient 2 is checked and matches."""
import gradviz as torch

x = torch.tensor([1e10], dtype=torch.float64, requires_grad=True)
y = ((x - 1e10) * 2).sum()
