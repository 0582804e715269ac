import torch
torch.utils.checkpoint
