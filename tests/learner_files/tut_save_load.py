# PyTorch's Learn the Basics, Save and Load the Model (saveloadrun_tutorial) and the recipe
# "Saving and loading a general checkpoint": state_dict contents printed tensor by tensor,
# torch.save/torch.load of a state_dict with weights_only=True, model.eval(), a checkpoint
# dict with epoch/model/optimizer state and loss, resuming training, and saving the whole
# model object (torch.save(model) / torch.load(weights_only=False)), all in a temp directory.
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
print(net)

optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

# Print model's state_dict
print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())

# Print optimizer's state_dict
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])

inputs, labels = torch.randn(4, 3, 32, 32), torch.tensor([1, 0, 3, 9])
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    optimizer.zero_grad()
    loss = criterion(net(inputs), labels)
    loss.backward()
    optimizer.step()
    print(epoch, f"{loss.item():.4f}")

tmp = tempfile.mkdtemp()
PATH = os.path.join(tmp, "model_weights.pth")
torch.save(net.state_dict(), PATH)

model = Net()  # we do not specify ``weights``, i.e. create untrained model
print(model.load_state_dict(torch.load(PATH, weights_only=True)))
model.eval()
print(torch.equal(model.fc3.bias, net.fc3.bias), model.training, net.training)
print(model.fc3.bias)

# Additional information
EPOCH = 5
PATH = os.path.join(tmp, "model.pt")
LOSS = 0.4

torch.save({
            'epoch': EPOCH,
            'model_state_dict': net.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'loss': LOSS,
            }, PATH)

model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)

checkpoint = torch.load(PATH, weights_only=True)
model.load_state_dict(checkpoint['model_state_dict'])
optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
print(epoch, loss, sorted(checkpoint), optimizer.state_dict()['param_groups'])

model.train()
for step in range(2):
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    print(step, f"{loss.item():.4f}")
print(optimizer.state_dict()['state'][9]['momentum_buffer'].shape, len(optimizer.state_dict()['state']))

PATH = os.path.join(tmp, "whole_model.pth")
torch.save(model, PATH)
model2 = torch.load(PATH, weights_only=False)
print(type(model2).__name__, model2.fc3.bias.requires_grad, torch.equal(model2.fc1.weight, model.fc1.weight))
print(sorted(os.listdir(tmp)))
for name in os.listdir(tmp):
    os.remove(os.path.join(tmp, name))
os.rmdir(tmp)
