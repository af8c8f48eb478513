"""torchvision resnet18 (10 classes, 32x32, SGD momentum) at a batch size, as
gacc MLIR through gacc.to_mlir: bench/gpu/peer_bench.sh resnet18's model."""
import sys
import torch
import torchvision
import gacc
batch = int(sys.argv[1])
torch.manual_seed(0)
module = torchvision.models.resnet18(num_classes=10)
x = torch.randn(batch, 3, 32, 32)
y = torch.randint(0, 10, (batch,))
optimizer = torch.optim.SGD(module.parameters(), lr=0.05, momentum=0.9,
                            weight_decay=5e-4)
print(gacc.to_mlir(module, {"x": x}, optimizer=optimizer,
                   loss="cross_entropy", targets={"y": y}))
