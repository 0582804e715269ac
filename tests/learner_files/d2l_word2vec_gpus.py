# d2l.ai's GPUs section (PyTorch tab) and Pretraining word2vec (skip-gram with negative
# sampling), on a made-up corpus: torch.device/cuda.device_count/try_gpu/try_all_gpus falling
# back to the CPU, X.device and net.to(device=try_gpu()); the skip_gram forward with
# nn.Embedding and torch.bmm(v, u.permute(0, 2, 1)), SigmoidBCELoss with
# binary_cross_entropy_with_logits(weight=mask, reduction="none"), a few Adam steps, and
# get_similar_tokens with torch.mv cosine similarities and torch.topk.
import torch
from torch import nn

torch.manual_seed(0)

print(torch.device('cpu'), torch.device('cuda'), torch.device('cuda:1'))
print(torch.cuda.device_count())


def try_gpu(i=0):  #@save
    """Return gpu(i) if exists, otherwise return cpu()."""
    if torch.cuda.device_count() >= i + 1:
        return torch.device(f'cuda:{i}')
    return torch.device('cpu')


def try_all_gpus():  #@save
    """Return all available GPUs, or [cpu(),] if no GPU exists."""
    devices = [torch.device(f'cuda:{i}')
               for i in range(torch.cuda.device_count())]
    return devices if devices else [torch.device('cpu')]


print(try_gpu(), try_gpu(10), try_all_gpus())
x = torch.tensor([1, 2, 3])
print(x.device)
X = torch.ones(2, 3, device=try_gpu())
print(X)
net = nn.Sequential(nn.Linear(3, 1))
net = net.to(device=try_gpu())
print(net(X).shape, net[0].weight.data.device)

embed = nn.Embedding(num_embeddings=20, embedding_dim=4)
print(f'Parameter embedding_weight ({embed.weight.shape}, '
      f'dtype={embed.weight.dtype})')
x = torch.tensor([[1, 2, 3], [4, 5, 6]])
print(embed(x).shape)


def skip_gram(center, contexts_and_negatives, embed_v, embed_u):
    v = embed_v(center)
    u = embed_u(contexts_and_negatives)
    pred = torch.bmm(v, u.permute(0, 2, 1))
    return pred


print(skip_gram(torch.ones((2, 1), dtype=torch.long),
                torch.ones((2, 4), dtype=torch.long), embed, embed).shape)


class SigmoidBCELoss(nn.Module):
    # Binary cross-entropy loss with masking
    def __init__(self):
        super().__init__()

    def forward(self, inputs, target, mask=None):
        out = nn.functional.binary_cross_entropy_with_logits(
            inputs, target, weight=mask, reduction="none")
        return out.mean(dim=1)


loss = SigmoidBCELoss()
pred = torch.tensor([[1.1, -2.2, 3.3, -4.4]] * 2)
label = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
print(loss(pred, label, mask) * mask.shape[1] / mask.sum(axis=1))

idx_to_token = ['<unk>', 'the', 'a', 'cat', 'dog', 'sat', 'ran', 'on', 'mat', 'log', 'fast',
                'slow']
token_to_idx = {t: i for i, t in enumerate(idx_to_token)}
embed_size = 8
net = nn.Sequential(nn.Embedding(num_embeddings=len(idx_to_token),
                                 embedding_dim=embed_size),
                    nn.Embedding(num_embeddings=len(idx_to_token),
                                 embedding_dim=embed_size))
center = torch.randint(1, 12, (16, 1))
contexts_negatives = torch.randint(1, 12, (16, 5))
masks = (torch.arange(5) < torch.randint(2, 6, (16, 1))).float()
labels = torch.zeros(16, 5)
labels[:, :2] = 1


def init_weights(module):
    if type(module) == nn.Embedding:
        nn.init.xavier_uniform_(module.weight)


net.apply(init_weights)
optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
for epoch in range(5):
    optimizer.zero_grad()
    pred = skip_gram(center, contexts_negatives, net[0], net[1])
    l = (loss(pred.reshape(labels.shape).float(), labels.float(), masks)
         / masks.sum(axis=1) * masks.shape[1])
    l.sum().backward()
    optimizer.step()
    print(f'epoch {epoch + 1}, loss {l.sum() / l.numel():.4f}')


def get_similar_tokens(query_token, k, embed):
    W = embed.weight.data
    x = W[token_to_idx[query_token]]
    # Compute the cosine similarity. Add 1e-9 for numerical stability
    cos = torch.mv(W, x) / torch.sqrt(torch.sum(W * W, dim=1) *
                                      torch.sum(x * x) + 1e-9)
    topk = torch.topk(cos, k=k+1)[1].cpu().numpy().astype('int32')
    for i in topk[1:]:  # Remove the input words
        print(f'cosine sim={float(cos[i]):.3f}: {idx_to_token[i]}')


get_similar_tokens('cat', 3, net[0])
