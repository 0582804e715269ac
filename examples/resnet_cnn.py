"""A ResNet-style CNN written out in full: 18 convolutions, BasicBlocks with skip connections,
batch norm; one training step on a batch of random images.

Layout (ResNet-18's, narrowed and on 32x32 images): a stem of two 3x3 convolutions, then four
stages of two BasicBlocks (16, 32, 64 and 128 channels; each stage after the first halves
the image), global average pooling and a linear classifier over 10 classes. A BasicBlock is
conv3x3 -> BatchNorm -> ReLU -> conv3x3 -> BatchNorm, plus its input (the skip connection),
then ReLU; where a stage changes the shape, the skip goes through a 1x1 convolution and a
BatchNorm instead. 2 + 8 x 2 = 18 3x3 convolutions, and three 1x1 shortcuts.

Runs on gradviz's core and on PyTorch alike (the printed loss is the same): a batch of 8
random 3x32x32 images with random labels, cross entropy, one SGD step (momentum 0.9).

What to look at: folded at depth 2 the graph is the stem and eight boxes
`stages.N.M: BasicBlock` with their shapes ([8, 16, 32, 32] -> ... -> [8, 128, 4, 4]);
inside a block (--expand stages.1.0) the AddBackward0 of the skip connection, with one edge
from the block's input (through the 1x1 shortcut here) and one from bn2.
Parameters keep their qualified names: model.stages.1.0.conv1.weight [32, 16, 3, 3].

Run:
    gradviz graph examples/resnet_cnn.py --depth-modules 2 --svg resnet.svg
    gradviz graph examples/resnet_cnn.py --depth-modules 2 --expand stages.1.0 --svg block.svg
    gradviz run examples/resnet_cnn.py --by-module
This file calls loss.backward() itself: do not pass --backward.
"""
import gradviz as torch
from gradviz import nn
import gradviz.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.shortcut = nn.Sequential()
        if stride != 1 or inputs != outputs:
            self.shortcut = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride=stride,
                                                    bias=False),
                                          nn.BatchNorm2d(outputs))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths=(16, 32, 64, 128), blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU(),
                                  nn.Conv2d(widths[0], widths[0], 3, padding=1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU())
        stages = []
        inputs = widths[0]
        for i, width in enumerate(widths):
            stride = 1 if i == 0 else 2
            stage = [BasicBlock(inputs, width, stride)]
            stage += [BasicBlock(width, width, 1) for _ in range(blocks - 1)]
            stages.append(nn.Sequential(*stage))
            inputs = width
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], classes)

    def forward(self, x):
        x = self.pool(self.stages(self.stem(x)))
        return self.fc(torch.flatten(x, 1))


model = ResNet()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
images = torch.randn(8, 3, 32, 32)
labels = torch.randint(0, 10, (8,))

logits = model(images)
loss = F.cross_entropy(logits, labels)
opt.zero_grad()
loss.backward()
opt.step()
print(f"loss {loss.item():.4f}")
