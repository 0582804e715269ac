from torch.utils.data import DataLoader, TensorDataset
import torch.utils.data as D
print(D.DataLoader)
