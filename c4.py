import torch
torch.utils.data.nosuch
