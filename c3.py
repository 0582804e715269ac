import torch
torch.optim.lr_scheduler.SWALR
