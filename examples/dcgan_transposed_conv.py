"""A DCGAN step as PyTorch's DCGAN tutorial writes it, on random "images".

The generator upsamples noise (8x16x1x1) with nn.ConvTranspose2d (4x4 kernels; stride 1, then
stride 2 with padding 1, doubling the size: 1 -> 4 -> 8 -> 16), nn.BatchNorm2d and ReLU, and
ends in Tanh; the discriminator mirrors it with strided nn.Conv2d, LeakyReLU(0.2) and a
Sigmoid. Both start from the tutorial's weights_init (normal(0, 0.02) convolutions,
normal(1, 0.02) batch-norm scales). Each iteration trains the discriminator on real images
(label 1) and on `fake.detach()` (label 0: the detach keeps this loss from reaching the
generator), then the generator on the same fake images labelled 1, each with its own Adam
(lr 0.0002, betas (0.5, 0.999)). torch.manual_seed(999) fixes everything, and gradviz draws
PyTorch's numbers: Loss_D 1.4520, 1.4425, 1.4231; Loss_G 0.7074, 0.6925, 0.6898.

What the inspector shows after the run: netG.main.0.weight [16, 16, 4, 4] (a transposed
convolution's weight is (in, out, kh, kw)); fake [8, 1, 16, 16] (TanhBackward0 over
ConvolutionBackward0, transposed); errD_fake's graph stops at fake.detach(), errG's goes back
through the discriminator into the generator.

Run:
    gradviz run examples/dcgan_transposed_conv.py
    gradviz graph examples/dcgan_transposed_conv.py --root errG --svg dcgan.svg
This file calls backward() itself: do not pass --backward.
"""
import gradviz as torch
import gradviz.nn as nn
import gradviz.optim as optim

torch.manual_seed(999)
nz, ngf, ndf, nc = 16, 16, 8, 1


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf, 4, 1, 0, bias=False),       # 1x1 -> 4x4
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, ngf // 2, 4, 2, 1, bias=False),  # 4x4 -> 8x8
            nn.BatchNorm2d(ngf // 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf // 2, nc, 4, 2, 1, bias=False),   # 8x8 -> 16x16
            nn.Tanh())

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),                 # 16x16 -> 8x8
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),            # 8x8 -> 4x4
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),              # 4x4 -> 1x1
            nn.Sigmoid())

    def forward(self, input):
        return self.main(input)


netG = Generator()
netG.apply(weights_init)
netD = Discriminator()
netD.apply(weights_init)
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
real_images = torch.rand(8, nc, 16, 16) * 2 - 1

for i in range(3):
    netD.zero_grad()
    label = torch.full((8,), 1.0)
    output = netD(real_images).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    noise = torch.randn(8, nz, 1, 1)
    fake = netG(noise)
    label.fill_(0.0)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()

    netG.zero_grad()
    label.fill_(1.0)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
    print(f"[{i}] Loss_D: {errD.item():.4f}  Loss_G: {errG.item():.4f}  "
          f"D(G(z)): {output.mean().item():.4f}")
