#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Train a torchvision model on the CPU for a bounded number of steps.

    /usr/bin/python3 train.py --model resnet18 [--steps N] [--batch B]
                              [--size PX] [--threads T] [--seed S]

The evaluation's one training driver: make eval runs it as a program under
`buddyctl profile`, eval_dnn.py imports its models, its batch
preparation and its step (sgd_step()).

The data are real images shipped in a Debian package (--data): by default
Fashion-MNIST (dataset-fashion-mnist: 28x28 grey photographs of clothes,
10 classes, the first 6000 of the training set), or scikit-learn's digits
(sklearn.datasets.load_digits: 1797 8x8 handwritten digits, far too smooth
once scaled up: they inflate compressibility).  The set stays at its own
size in memory, as a GPU run keeps it on the host; each batch is resized
to PX x PX, normalised and repeated over three channels when it is drawn,
so that what the profile sees is the batch, not the whole set resized (at
112 x 112 that was 1.2 GB of the 1.9 GB tracked).  Models:
resnet18, resnet50, vgg11, mobilenet_v2 (torchvision, random initialisation,
10 classes), SGD with momentum and weight decay, cross-entropy loss: the
memory a training run holds (weights, gradients, momentum buffers,
activations kept for the backward pass, their gradients) is all there.

Debian's torch 1.13 is visible to /usr/bin/python3 only.  The script prints
the loss every few steps and a last line that does not depend on timing,
and after the first step one "train: footprint" line: the bytes of the
weights, gradients, optimizer state (momentum buffers) and activations (the
tensors autograd saves for the backward pass, each storage counted once,
as saved_tensors_hooks sees them).
"""
import argparse
import contextlib
import os
import sys
import time

if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
    os.environ.setdefault("OMP_NUM_THREADS", "2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import datasets  # noqa: E402

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "vgg11": torchvision.models.vgg11,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
}


def cnn():
    """A small CNN for 1 x 28 x 28 images (eval_dnn.py's "cnn")."""
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(64 * 7 * 7, 10))


def make_model(name, vgg_one_linear=False):
    """Model @name of MODELS, random initialisation, 10 classes.  With
    @vgg_one_linear VGG's 25088x4096x4096 classifier (120M weights, which
    would make weights, not activations, the memory) is one Linear."""
    m = MODELS[name](num_classes=10)
    if name == "vgg11" and vgg_one_linear:
        m.classifier = torch.nn.Linear(512 * 7 * 7, 10)
    return m


def upsample(xb, size):
    """Images B x 1 x H x W as B x 1 x @size x @size, bilinear."""
    return F.interpolate(xb, size=(size, size), mode="bilinear",
                         align_corners=False)


def to_rgb(xb):
    """B x 1 x H x W as B x 3 x H x W (the channel repeated)."""
    return xb.expand(-1, 3, -1, -1).contiguous()


def sgd_step(model, opt, x, y, ctx=None, set_to_none=False):
    """One step: the forward pass and the loss inside @ctx (an offload
    policy, say), backward, the optimizer's step.  (output, loss)."""
    opt.zero_grad(set_to_none=set_to_none)
    with ctx if ctx is not None else contextlib.nullcontext():
        out = model(x)
        loss = F.cross_entropy(out, y)
    loss.backward()
    opt.step()
    return out, loss


def load(data, n=6000):
    """(images as float32 N x H x W in 0..1, labels) of @data."""
    if data == "fashion":
        x, y = datasets.fashion_mnist("train", n, read_all=True)
        return x.astype(np.float32) / 255.0, y.astype(np.int64)
    from sklearn.datasets import load_digits
    d = load_digits()
    return d.images.astype(np.float32) / 16.0, d.target.astype(np.int64)


def footprint(model, opt, xb, yb):
    """Bytes of weights, gradients, optimizer state and saved activations
    of one training step (which it takes)."""
    seen = {}

    def pack(t):
        try:
            st = t.untyped_storage() if hasattr(t, "untyped_storage") \
                else t.storage()
            seen[st.data_ptr()] = st.nbytes()
        except (RuntimeError, NotImplementedError):
            pass
        return t

    params = set(p.data_ptr() for p in model.parameters())
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(xb)
        loss = F.cross_entropy(out, yb)
    act = sum(v for k, v in seen.items() if k not in params)
    loss.backward()
    opt.step()
    w = sum(p.numel() * p.element_size() for p in model.parameters())
    g = sum(p.grad.numel() * p.grad.element_size()
            for p in model.parameters() if p.grad is not None)
    o = sum(v.numel() * v.element_size() for st in opt.state.values()
            for v in st.values() if torch.is_tensor(v))
    return out, loss, {"weights": w, "gradients": g, "optimizer": o,
                       "activations": act}


def to_batch(xb, size, mean, std):
    """Images B x H x W (0..1) as the model's input: B x 3 x @size x @size,
    bilinear, normalised with the set's @mean and @std."""
    return to_rgb((upsample(xb[:, None], size) - mean) / std)


def batches(x, y, batch, rng):
    n = len(x)
    while True:
        perm = rng.permutation(n)
        for i in range(0, n - batch + 1, batch):
            idx = perm[i:i + batch]
            yield x[idx], y[idx]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", choices=("fashion", "digits"), default="fashion")
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(a.seed)

    xs, ys = load(a.data)
    mean, std = float(xs.mean()), float(xs.std())

    model = make_model(a.model)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9,
                          weight_decay=5e-4)
    params = sum(p.numel() for p in model.parameters())
    print(f"train: {a.model}, {params} parameters, batch {a.batch}, "
          f"{a.size}x{a.size}, {a.steps} steps, {a.data} data, "
          f"seed {a.seed}, {a.threads} threads", flush=True)

    t0 = time.time()
    it = batches(xs, ys, a.batch, rng)
    correct = seen = 0
    for step in range(1, a.steps + 1):
        xb, yb = next(it)
        xb = to_batch(torch.from_numpy(xb), a.size, mean, std)
        yb = torch.from_numpy(yb)
        if step == 1:
            opt.zero_grad(set_to_none=False)
            out, loss, fp = footprint(model, opt, xb, yb)
            print("train: footprint " + " ".join(
                f"{k} {v}" for k, v in fp.items()), flush=True)
        else:
            out, loss = sgd_step(model, opt, xb, yb)
        correct += (out.argmax(1) == yb).sum().item()
        seen += len(yb)
        if step % 10 == 0 or step == a.steps:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    dt = time.time() - t0
    print(f"train: {a.model} done, {a.steps} steps", flush=True)
    print(f"train: {dt:.2f} s, {dt / a.steps * 1e3:.1f} ms/step, "
          f"accuracy {correct / seen:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
