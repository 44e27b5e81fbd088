"""Reference models written as a PyTorch user writes them, over a framework module ``torch``:
the same source builds the PyTorch model (tools/gen_model_trajectories.py, and the tests where
torch is installed) and the tensorplug one (``torch`` replaced by ``tensorplug``).

Initial weights come from numpy, not from either framework's initializers, so both start from
the same ``state_dict`` (:func:`initial_state`); the data too (:func:`batches`). A training run
(:func:`train`) returns the loss of each step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

# --- the models -------------------------------------------------------------------------------


def lenet5(torch: ModuleType) -> Any:
    """LeNet-5 on 1x28x28 inputs (the first convolution pads by 2, as for MNIST)."""
    nn, F = torch.nn, torch.nn.functional

    class LeNet5(nn.Module):
        def __init__(self, num_classes: int = 10) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, kernel_size=5, padding=2)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, num_classes)

        def forward(self, x: Any) -> Any:
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    return LeNet5()


def resnet18(torch: ModuleType, width: int = 4, num_classes: int = 10) -> Any:
    """A ResNet-18-style network (CIFAR stem, BasicBlocks [2, 2, 2, 2], BatchNorm, 1x1
    projection shortcuts), narrow so that a test trains it in seconds."""
    nn = torch.nn

    def conv3x3(cin: int, cout: int, stride: int = 1) -> Any:
        return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
            super().__init__()
            self.conv1 = conv3x3(cin, cout, stride)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(cout, cout)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, kernel_size=1, stride=stride, bias=False),
                    nn.BatchNorm2d(cout),
                )

        def forward(self, x: Any) -> Any:
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inplanes = width
            self.conv1 = conv3x3(3, width)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = self._make_layer(width, 2)
            self.layer2 = self._make_layer(width * 2, 2, stride=2)
            self.layer3 = self._make_layer(width * 4, 2, stride=2)
            self.layer4 = self._make_layer(width * 8, 2, stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(width * 8, num_classes)

        def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> Any:
            layers = [BasicBlock(self.inplanes, planes, stride)]
            self.inplanes = planes
            layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x: Any) -> Any:
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            x = self.avgpool(x)
            return self.fc(torch.flatten(x, 1))

    return ResNet()


def unet(torch: ModuleType, width: int = 4, in_channels: int = 3, classes: int = 2) -> Any:
    """A small UNet: two levels down and up, GroupNorm, a ConvTranspose2d on one way up and
    bilinear ``F.interpolate`` on the other, skip connections by concatenation."""
    nn, F = torch.nn, torch.nn.functional

    class DoubleConv(nn.Sequential):
        def __init__(self, cin: int, cout: int) -> None:
            super().__init__(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                nn.GroupNorm(2, cout),
                nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                nn.GroupNorm(2, cout),
                nn.ReLU(inplace=True),
            )

    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            w = width
            self.inc = DoubleConv(in_channels, w)
            self.down1 = nn.Sequential(nn.MaxPool2d(2), DoubleConv(w, 2 * w))
            self.down2 = nn.Sequential(nn.MaxPool2d(2), DoubleConv(2 * w, 4 * w))
            self.up1 = nn.ConvTranspose2d(4 * w, 2 * w, kernel_size=2, stride=2)
            self.conv_up1 = DoubleConv(4 * w, 2 * w)
            self.conv_up2 = DoubleConv(3 * w, w)
            self.outc = nn.Conv2d(w, classes, kernel_size=1)

        def forward(self, x: Any) -> Any:
            x1 = self.inc(x)
            x2 = self.down1(x1)
            x3 = self.down2(x2)
            y = self.conv_up1(torch.cat([x2, self.up1(x3)], dim=1))
            y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
            y = self.conv_up2(torch.cat([x1, y], dim=1))
            return self.outc(y)

    return UNet()


# --- what a run needs ---------------------------------------------------------------------------


def _lenet_batches(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return rng.standard_normal((8, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 8)


def _resnet_batches(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return rng.standard_normal((4, 3, 16, 16), dtype=np.float32), rng.integers(0, 10, 4)


def _unet_batches(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return rng.standard_normal((2, 3, 16, 16), dtype=np.float32), rng.integers(0, 2, (2, 16, 16))


MODELS: dict[str, tuple[Callable[[ModuleType], Any], Callable[..., Any]]] = {
    "lenet5": (lenet5, _lenet_batches),
    "resnet18": (resnet18, _resnet_batches),
    "unet": (unet, _unet_batches),
}

STEPS = 20
LR, MOMENTUM = 0.01, 0.9


def initial_state(model: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Initial values for ``model.state_dict()``, from numpy alone: weights uniform in
    +-1/sqrt(fan_in) (PyTorch's default bound for a layer's bias), the weights of normalization
    layers one and their biases zero, running statistics at their defaults."""
    norms = {name for name, m in model.named_modules() if "Norm" in type(m).__name__}
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name, value in model.state_dict().items():
        shape = tuple(value.shape)
        owner, _, leaf = name.rpartition(".")
        if leaf == "num_batches_tracked":
            out[name] = np.zeros(shape, np.int64)
        elif leaf == "running_var":
            out[name] = np.ones(shape, np.float32)
        elif leaf == "running_mean":
            out[name] = np.zeros(shape, np.float32)
        elif owner in norms:
            out[name] = (np.ones if leaf == "weight" else np.zeros)(shape, np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            out[name] = rng.uniform(-bound, bound, shape).astype(np.float32)
    return out


def batches(name: str, seed: int = 1) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The model's ``STEPS`` training batches (inputs, integer targets), from numpy: one batch,
    seen at every step, so that the loss falls as the model learns it."""
    batch = MODELS[name][1](np.random.default_rng(seed))
    for _ in range(STEPS):
        yield batch


def train(torch: ModuleType, name: str, steps: int = STEPS) -> tuple[list[float], Any]:
    """Train the model ``name`` from :func:`initial_state` for ``steps`` SGD steps (momentum)
    with ``torch``; the losses and the model."""
    model = MODELS[name][0](torch)
    model.load_state_dict({k: torch.tensor(v) for k, v in initial_state(model).items()})
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    losses = []
    for i, (x, y) in enumerate(batches(name)):
        if i == steps:
            break
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses, model
