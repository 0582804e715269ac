"""A makemore-style character MLP with batch normalisation, written the way the lecture writes it.

Names are read character by character: three characters of context are looked up in an
embedding table C (27 x 10), concatenated (30 numbers), sent through a 200-wide tanh layer
whose pre-activations are batch-normalised by hand (bngain * (h - mean) / std + bnbias), and a
linear layer gives 27 logits; F.cross_entropy against the next character is the loss.
Every weight comes from one torch.Generator seeded with 2147483647, minibatches from
torch.randint with the same generator, and the update is the lecture's `p.data += -lr * p.grad`.

Expect: exactly the numbers PyTorch 2.13 prints for this file, digit for digit: 12097
parameters, the loss at step 0 is 3.2986 (about -log(1/27) = 3.2958: the output layer starts
near zero), 1.6331 at step 300, and the five names sampled at the end with torch.multinomial
("carpah.", "luclillliligrixriety.", ...) are the same on both. (gradviz draws random numbers
exactly as PyTorch's CPU generator does; tests/test_examples_torch.py checks the output.)

What to look at: `emb` [32, 3, 10] is an IndexBackward0 of C; `hpreact` shows the
batch-norm arithmetic as separate nodes (SubBackward0, DivBackward0, MulBackward0,
AddBackward0) with bnmeani (MeanBackward1) and bnstdi (StdBackward0) feeding them;
`bnmean_running` has no grad_fn (updated under no_grad); the parameters are leaves.

Run:
    gradviz run examples/makemore_mlp.py
    gradviz graph examples/makemore_mlp.py --root loss --svg makemore.svg
    gradviz explain examples/makemore_mlp.py bnmean_running --root loss
This file calls loss.backward() itself in its loop: do not pass --backward.
"""
import gradviz as torch
import gradviz.nn.functional as F

words = ("emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily "
         "elizabeth mila ella avery sofia camila aria scarlett victoria madison luna grace "
         "chloe penelope layla riley zoey nora lily eleanor hannah lillian addison aubrey "
         "ellie stella natalie zoe leah hazel violet aurora savannah audrey brooklyn bella "
         "claire skylar lucy paisley everly anna caroline nova genesis emilia kennedy").split()
chars = "abcdefghijklmnopqrstuvwxyz"
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = 27
block_size = 3


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)


Xtr, Ytr = build_dataset(words)
n_embd, n_hidden = 10, 200
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / ((n_embd * block_size) ** 0.5)
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.01
b2 = torch.randn(vocab_size, generator=g) * 0
bngain = torch.ones((1, n_hidden))
bnbias = torch.zeros((1, n_hidden))
bnmean_running = torch.zeros((1, n_hidden))
bnstd_running = torch.ones((1, n_hidden))
parameters = [C, W1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters), "parameters")          # 12097 parameters
for p in parameters:
    p.requires_grad = True

max_steps, batch_size = 301, 32
for i in range(max_steps):
    ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix]
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Yb)
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1
    for p in parameters:
        p.data += -lr * p.grad
    if i % 50 == 0:
        print(f"{i:4d}/{max_steps:4d}: {loss.item():.4f}")

g = torch.Generator().manual_seed(2147483647 + 10)
for _ in range(5):
    out, context = [], [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        hpre = emb.view(1, -1) @ W1
        hpre = bngain * (hpre - bnmean_running) / bnstd_running + bnbias
        probs = F.softmax(torch.tanh(hpre) @ W2 + b2, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break
    print("".join(itos[i] for i in out))
