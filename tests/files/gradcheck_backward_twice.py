# gradcheck keeps every graph to take the analytic gradient; this file's second backward
# raises under Python, so nothing may be called a match.
import gradviz as torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (x * x).sum()
loss.backward()
loss.backward()
