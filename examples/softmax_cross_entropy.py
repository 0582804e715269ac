"""cross_entropy's gradient is softmax minus the one-hot target.

One sample with three class scores (logits) and target class 0.
F.cross_entropy(logits, target) = -log_softmax(logits)[0, target], and its
gradient with respect to the logits is softmax(logits) - one_hot(target)
(divided by the batch size, here 1).

    probs  = softmax(logits) = [[0.6590, 0.2424, 0.0986]]
    loss   = tensor(0.4170, grad_fn=<NllLossBackward0>)
    after --backward loss: logits.grad = [[-0.3410, 0.2424, 0.0986]]
    loss's graph: NllLossBackward0 -> LogSoftmaxBackward0 -> AccumulateGrad (logits)
    (probs is computed separately, so it is a second root, SoftmaxBackward0)

Run:
    gradviz run examples/softmax_cross_entropy.py --backward loss
    gradviz gradcheck examples/softmax_cross_entropy.py --root loss
    gradviz graph examples/softmax_cross_entropy.py --root loss --svg ce.svg
This file does not call backward; use --backward loss.
"""
import gradviz as torch
import gradviz.nn.functional as F

logits = torch.tensor([[2.0, 1.0, 0.1]], requires_grad=True)
target = torch.tensor([0])                 # int64 class index

probs = F.softmax(logits, dim=1)
loss = F.cross_entropy(logits, target)
print(probs)      # tensor([[0.6590, 0.2424, 0.0986]], grad_fn=<SoftmaxBackward0>)
print(loss)       # tensor(0.4170, grad_fn=<NllLossBackward0>)
