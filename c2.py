import torch
torch.nn.init.trunc_normal
