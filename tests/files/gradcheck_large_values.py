"""gradcheck: leaves of 1e10 and 3.5e10 summed: a root of 9e10 cannot show a change of eps
(1e-6) in a leaf, so no element can be checked at the default eps."""
import gradviz as torch

x = torch.tensor([1e10, 3.5e10], dtype=torch.float64, requires_grad=True)
y = (x * 2).sum()
