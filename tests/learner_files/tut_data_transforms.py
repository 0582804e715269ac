# PyTorch's Learn the Basics, Datasets & DataLoaders and Transforms (data_tutorial,
# transforms_tutorial): a custom Dataset with __len__/__getitem__ over an in-memory annotations
# list instead of image files, transform and target_transform, the Lambda that one-hot encodes
# a label with zeros(...).scatter_(0, torch.tensor(y), value=1), a shuffling DataLoader, and
# random_split / Subset / iterating with next(iter(...)).
import torch
from torch.utils.data import Dataset, DataLoader, random_split

torch.manual_seed(0)


class Lambda:
    """torchvision.transforms.Lambda: apply a user-defined function as a transform."""

    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


def ToTensor():
    # uint8 HxW image -> float CxHxW in [0, 1], what torchvision's ToTensor does
    return Lambda(lambda pic: pic.unsqueeze(0).to(torch.float32).div(255))


class CustomImageDataset(Dataset):
    def __init__(self, annotations, images, transform=None, target_transform=None):
        self.img_labels = annotations
        self.images = images
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        name, label = self.img_labels[idx]
        image = self.images[name]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


labels_map = {
    0: "T-Shirt", 1: "Trouser", 2: "Pullover", 3: "Dress", 4: "Coat",
    5: "Sandal", 6: "Shirt", 7: "Sneaker", 8: "Bag", 9: "Ankle Boot",
}
annotations = [(f"img_{i}.png", int(torch.randint(0, 10, (1,)))) for i in range(20)]
images = {name: torch.randint(0, 256, (6, 6), dtype=torch.uint8) for name, _ in annotations}

training_data = CustomImageDataset(
    annotations, images,
    transform=ToTensor(),
    target_transform=Lambda(lambda y: torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1))
)

for i in range(3):
    sample_idx = torch.randint(len(training_data), size=(1,)).item()
    img, label = training_data[sample_idx]
    print(sample_idx, labels_map[int(label.argmax())], img.shape, img.dtype, label)
print(training_data[0][0].squeeze())

train_dataloader = DataLoader(training_data, batch_size=4, shuffle=True)

# Display image and label.
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
img = train_features[0].squeeze()
label = train_labels[0]
print(img)
print(f"Label: {label}")

for epoch in range(2):
    for i, (X, y) in enumerate(train_dataloader):
        if i < 2:
            print(epoch, i, f"{X.mean().item():.4f}", y.argmax(dim=1))
    print(len(train_dataloader), i)

train_set, val_set = random_split(training_data, [15, 5])
print(len(train_set), len(val_set), val_set.indices)
val_loader = DataLoader(val_set, batch_size=2, drop_last=True)
print(len(val_loader), [y.argmax(1).tolist() for _, y in val_loader])

ds = torch.utils.data.TensorDataset(torch.arange(10.), torch.arange(10) % 3)
print(ds[3], len(ds), [b for b in DataLoader(ds, batch_size=4)])
