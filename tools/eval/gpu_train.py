#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Train a model on the GPU for a bounded number of iterations: the
workloads of the GPU evaluation (gpu_rows.py) and of the GPU tests
(selftests/gpu/).

    python3 gpu_train.py --model resnet50|gpt2|tiny [--iters N] [--batch B]
                         [--size PX] [--seq L] [--images FILE] [--ddp]

resnet50: torchvision's when it is installed, else the same network
defined here (bottleneck blocks 3-4-6-3, random initialisation, 10
classes); SGD with momentum and weight decay on Fashion-MNIST (the idx3
file of Debian's dataset-fashion-mnist: --images, $BUDDY_FMNIST,
/usr/share/datasets/fashion-mnist/ or the tree's build/datasets/), each
batch resized to PX x PX over three channels as tools/eval/train.py
does; without the file, smooth synthetic images, said on stdout.
gpt2: GPT-2 small (12 layers, 12 heads, 768 wide, 50257 tokens, context
1024, its initialisation; --gpt-layers and --gpt-width make it smaller),
AdamW, next-token loss on English text (the tree's Documentation/
and README.md as bytes, one token per byte).  tiny: a small MLP; with
--ddp, under torchrun, DistributedDataParallel over gloo (every rank may
share one GPU).  --device cpu runs the same on the CPU (the tests' smoke
run).  The last line does not depend on timing.
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import datasets                                # noqa: E402
FMNIST = "train-images-idx3-ubyte.gz"


# --- data ---------------------------------------------------------------------

def fashion_file(arg):
    for p in (arg, os.environ.get("BUDDY_FMNIST"),
              f"/usr/share/datasets/fashion-mnist/{FMNIST}",
              os.path.join(ROOT, "build", "datasets", FMNIST)):
        if p and os.path.exists(p):
            return p
    return None


def images(path, n=6000, seed=1):
    """(N x 28 x 28 float in 0..1, what it is)."""
    if path:
        x = torch.from_numpy(datasets.idx(path, n).copy())
        return x.float() / 255, f"Fashion-MNIST ({path})"
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(28.0), torch.arange(28.0),
                            indexing="ij")
    f = torch.rand(n, 4, 3, generator=g) * 0.5
    x = sum(torch.sin(f[:, k, 0, None, None] * xx + f[:, k, 1, None, None] *
                      yy + 6 * f[:, k, 2, None, None]) for k in range(4))
    x = (x - x.min()) / (x.max() - x.min())
    return x, "synthetic smooth images (no Fashion-MNIST file)"


def text_tokens():
    """Bytes of the tree's English documentation, one token per byte."""
    parts = []
    doc = os.path.join(ROOT, "Documentation")
    for dp, _, fs in sorted(os.walk(doc)):
        for f in sorted(fs):
            if f.endswith(".rst"):
                with open(os.path.join(dp, f), "rb") as fo:
                    parts.append(fo.read())
    with open(os.path.join(ROOT, "README.md"), "rb") as fo:
        parts.append(fo.read())
    data = b"\n".join(parts)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).long(), \
        f"{len(data)} bytes of the tree's documentation"


# --- models -------------------------------------------------------------------

class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = 4 * width
        self.c1 = nn.Conv2d(cin, width, 1, bias=False)
        self.b1 = nn.BatchNorm2d(width)
        self.c2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.b2 = nn.BatchNorm2d(width)
        self.c3 = nn.Conv2d(width, cout, 1, bias=False)
        self.b3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride,
                                                bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet50(nn.Module):
    """torchvision's resnet50 layout, for machines without torchvision."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False),
                                  nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for width, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2),
                                 (512, 3, 2)):
            for i in range(n):
                layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = 4 * width
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet50():
    try:
        import torchvision
        return torchvision.models.resnet50(num_classes=10), "torchvision"
    except ImportError:
        return ResNet50(), "defined here (no torchvision)"


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def attend(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            a = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
            mask = torch.ones(t, t, device=x.device, dtype=torch.bool).tril()
            y = a.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attend(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT2(nn.Module):
    """GPT-2 small: 12 layers, 12 heads, 768 wide, tied embeddings."""

    def __init__(self, vocab=50257, ctx=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight
        for m in self.modules():          # GPT-2's initialisation
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


# --- training -----------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("resnet50", "gpt2", "tiny"),
                    required=True)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--gpt-layers", type=int, default=12)
    ap.add_argument("--gpt-width", type=int, default=768)
    ap.add_argument("--images")
    ap.add_argument("--ddp", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda",
                    help="cpu: a smoke test of this script without a GPU")
    a = ap.parse_args(argv)
    torch.manual_seed(a.seed)
    rank = 0
    if a.ddp:
        import torch.distributed as dist
        dist.init_process_group("gloo")
        rank = dist.get_rank()
    if a.device == "cuda":
        dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)) %
                           torch.cuda.device_count())
        torch.cuda.set_device(dev)
    else:
        dev = torch.device(a.device)
    t0 = time.time()
    g = torch.Generator().manual_seed(a.seed + rank)
    if a.model == "resnet50":
        model, where = resnet50()
        x, what = images(fashion_file(a.images))
        batch = a.batch or 32
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9,
                              weight_decay=5e-4)
        mean, std = x.mean().item(), x.std().item()

        def step_data():
            i = torch.randint(0, x.shape[0], (batch,), generator=g)
            xb = x[i].to(dev, non_blocking=True).unsqueeze(1)
            xb = F.interpolate(xb, size=(a.size, a.size), mode="bilinear",
                               align_corners=False)
            xb = ((xb - mean) / std).expand(-1, 3, -1, -1).contiguous()
            return xb, (i % 10).to(dev)
        print(f"gpu_train: resnet50 ({where}), batch {batch}, {a.size} px, "
              f"{what}", flush=True)
    elif a.model == "gpt2":
        model = GPT2(ctx=max(a.seq, 1024), d=a.gpt_width,
                     layers=a.gpt_layers, heads=max(1, a.gpt_width // 64))
        tokens, what = text_tokens()
        batch, seq = a.batch or 4, a.seq
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)

        def step_data():
            i = torch.randint(0, tokens.numel() - seq - 1, (batch,),
                              generator=g)
            idx = torch.stack([tokens[j:j + seq + 1] for j in i.tolist()])
            idx = idx.to(dev)
            return idx[:, :-1], idx[:, 1:]
        print(f"gpu_train: GPT-2 ({a.gpt_layers} layers, {a.gpt_width} wide), "
              f"batch {batch}, context {seq}, {what}", flush=True)
    else:
        model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(),
                              nn.Linear(1024, 10))
        batch = a.batch or 64
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def step_data():
            xb = torch.randn(batch, 256, generator=g).relu().to(dev)
            return xb, torch.randint(0, 10, (batch,), generator=g).to(dev)
        print(f"gpu_train: tiny MLP, batch {batch}, rank {rank}", flush=True)
    model = model.to(dev)
    if a.ddp:
        model = nn.parallel.DistributedDataParallel(model)
    loss_fn = nn.CrossEntropyLoss()
    for it in range(a.iters):
        xb, yb = step_data()
        out = model(xb)
        if a.model == "gpt2":
            loss = loss_fn(out.reshape(-1, out.shape[-1]), yb.reshape(-1))
        else:
            loss = loss_fn(out, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if it % 10 == 0 or it == a.iters - 1:
            print(f"iter {it}: loss {loss.item():.4f}", flush=True)
    if dev.type == "cuda":
        torch.cuda.synchronize()
        print(f"gpu_train: {a.iters} iterations in {time.time() - t0:.1f} s, "
              f"peak {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB",
              file=sys.stderr)
    if a.ddp:
        import torch.distributed as dist
        dist.destroy_process_group()
    print(f"gpu_train: done, {a.model}, {a.iters} iterations")


if __name__ == "__main__":
    main()
