"""PyTorch's "classifying names with a character-level RNN" tutorial, on a few names.

Each name becomes a one-hot tensor [letters, 1, 57] (lineToTensor, written as the tutorial
writes it: tensor[li][0][letterToIndex(letter)] = 1); nn.RNN(57, 32) reads it, the last
hidden state goes through nn.Linear(32, 4) and nn.LogSoftmax(dim=1), and nn.NLLLoss against
the language. As in the tutorial, the losses of a shuffled minibatch are summed, backward runs
once per batch, nn.utils.clip_grad_norm_(rnn.parameters(), 3) clips, and SGD steps (lr=0.15).
torch.manual_seed(7) fixes the weights and the shuffling, and gradviz draws the same numbers
as PyTorch: nn.RNN's weights are PyTorch's bit for bit.

Expect: exactly what PyTorch 2.13 prints: the mean loss per name is 1.4885 in epoch 0
(about log(4) = 1.3863: a guess among 4 languages), 0.3589 in epoch 10 and 0.0013 in epoch 40
(32 names learnt by heart); of the four unseen names, Miller, Greco and Nowicki are guessed
right and Kimura is taken for Italian (log-probability -0.0433), on both.

What the inspector shows after the run: data[0][0] [5, 1, 57] at _version 5 (one in-place
write per letter of "Smith"); rnn.rnn.weight_ih_l0 [32, 57] and rnn.rnn.weight_hh_l0 [32, 32]
(PyTorch's names) at _version 165 (initialisation, then 41 epochs x 4 batches of SGD steps);
batch_loss (AddBackward0, 0.0115) from the last batch, the sum of 8 losses. Its graph is
PyTorch's node for node: each RNN step a TanhBackward0 over AddBackward0(AddmmBackward0,
UnbindBackward0), the input projection of all the letters one AddmmBackward0, the steps
stacked (StackBackward0).

Run:
    gradviz run examples/name_classifier_rnn.py
    gradviz graph examples/name_classifier_rnn.py --root batch_loss --svg names.svg
This file calls backward() itself in the loop: do not pass --backward.
"""
import string

import gradviz as torch
import gradviz.nn as nn

allowed_characters = string.ascii_letters + " .,;'"
n_letters = len(allowed_characters)

names = {
    "English": ["Smith", "Johnson", "Williams", "Brown", "Taylor", "Walker", "Wright", "Hughes"],
    "Italian": ["Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo",
                "Ricci"],
    "Japanese": ["Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto",
                 "Nakamura"],
    "Polish": ["Nowak", "Kowalski", "Wisniewski", "Wojcik", "Kowalczyk", "Kaminski",
               "Lewandowski", "Zielinski"],
}
labels_uniq = list(names)


def letterToIndex(letter):
    return allowed_characters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


data = [(lineToTensor(name), torch.tensor([labels_uniq.index(lang)], dtype=torch.long))
        for lang in labels_uniq for name in names[lang]]


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(CharRNN, self).__init__()
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        output = self.softmax(output)
        return output


def label_from_output(output, output_labels):
    top_n, top_i = output.topk(1)
    label_i = top_i[0].item()
    return output_labels[label_i], label_i


torch.manual_seed(7)
rnn = CharRNN(n_letters, 32, len(labels_uniq))
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.15)

for epoch in range(41):
    current_loss = 0
    order = torch.randperm(len(data)).tolist()
    for start in range(0, len(order), 8):
        batch_loss = 0
        for i in order[start:start + 8]:
            line_tensor, label_tensor = data[i]
            output = rnn(line_tensor)
            loss = criterion(output, label_tensor)
            batch_loss += loss
        batch_loss.backward()
        nn.utils.clip_grad_norm_(rnn.parameters(), 3)
        optimizer.step()
        optimizer.zero_grad()
        current_loss += batch_loss.item()
    if epoch % 10 == 0:
        print(f"epoch {epoch:2d}: mean loss {current_loss / len(data):.4f}")

with torch.no_grad():
    for name in ["Miller", "Greco", "Kimura", "Nowicki"]:
        output = rnn(lineToTensor(name))
        guess, guess_i = label_from_output(output, labels_uniq)
        print(f"{name:8s} -> {guess:8s} (log-probability {output[0, guess_i].item():.4f})")
