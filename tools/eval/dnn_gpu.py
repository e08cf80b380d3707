#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make eval-dnn-gpu: the four DNN policies of buddy.torch.offload on a GPU
against no offload and PyTorch's save_on_cpu(pin_memory=True).

    python3 tools/eval/dnn_gpu.py --part measure|capacity|report
        [--out DIR] [--models M,...] [--policies P,...] [--device cuda|cpu]
        [--tiny] [--time-limit S] [--cap-gib G]

  measure   per model and policy: peak active and reserved bytes, median
            step time (CUDA events), PCIe bytes each way, prefetch
            counters, cswap's decision accuracy:
            DIR/dnn-gpu-measure-MODELS.json
  capacity  per model and policy, the largest batch whose training step
            fits under set_per_process_memory_fraction(cap), and its time
            per sample: DIR/dnn-gpu-capacity-MODELS.json
  report    DIR/dnn-gpu.md and DIR/dnn-gpu.png (or .svg without
            matplotlib) from those, and the goals, met or NOT met

Policies: none, save_on_cpu, vdnn-all, vdnn-dyn, cdma, gist, cswap, each
with its defaults, and cdma-sync, cdma with deferred_bytes=0 (one host
wait per tensor for its zero count: the design not chosen, measured).

Models (random initialisation; architectures as torchvision and GPT-2
define them): ResNet-50 at batch 64, 224x224, in float32 and under
bfloat16 autocast; VGG-16 with batch norm at batch 32; GPT-2 small (from
transformers where it is installed, else the same architecture defined
here) at batch 8, sequence 1024.  Inputs: Fashion-MNIST (Debian's
dataset-fashion-mnist, or the subset "make eval-dnn-gpu-data" writes for
a machine without it) upsampled to 3x224x224, and real text, the tree's
Documentation/ and README as UTF-8 bytes (token ids 0-255 of GPT-2's
vocabulary: no tokenizer file needed offline).

Each part stops starting new configurations after --time-limit seconds
(270 by default: each run is meant to fit 5 minutes on one H100) and
says which it left out.  Without a CUDA device it prints SKIP with the
reason and exits 0, unless --device cpu: then every part runs on CPU
tensors (buddy.torch_streams.HostStreams), --tiny shrinks models and
batches, and the figures are only a check that the code runs (make
check-dnn runs it so).
"""
import argparse
import gc
import glob
import gzip
import json
import os
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
sys.path[:0] = [os.path.join(ROOT, "python"), HERE]

import torch                                   # noqa: E402
import torch.nn as nn                          # noqa: E402
import torch.nn.functional as F                # noqa: E402

import buddy.torch as bt                       # noqa: E402
from buddy.torch_streams import HostStreams    # noqa: E402
import datasets                               # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
POLICIES = ("none", "save_on_cpu", "vdnn-all", "vdnn-dyn", "cdma", "gist",
            "cswap", "cdma-sync")
# cdma-sync: cdma with deferred_bytes=0, one host wait per tensor for its
# zero count: the other design of the encoder's size read, measured beside.
VARIANTS = {"cdma-sync": ("cdma", {"deferred_bytes": 0})}
# name: (builder, batch, input kind, autocast dtype)
MODELS = ("resnet50", "resnet50-bf16", "vgg16bn", "gpt2")
DATA_DIR = os.path.join(ROOT, "build", "eval", "gpu-data")


# --- models ----------------------------------------------------------------

class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride, down):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, width * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(width * 4)
        self.relu = nn.ReLU(inplace=True)
        self.down = nn.Sequential(
            nn.Conv2d(cin, width * 4, 1, stride, bias=False),
            nn.BatchNorm2d(width * 4)) if down else None

    def forward(self, x):
        idn = x if self.down is None else self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += idn
        return self.relu(out)


def resnet50(width=64, layers=(3, 4, 6, 3), classes=10):
    """torchvision's ResNet-50 (v1.5: the stride in the 3x3 convolution)."""
    mods = [nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = width
    for i, n in enumerate(layers):
        w = width * 2 ** i
        for k in range(n):
            stride = 2 if k == 0 and i > 0 else 1
            mods.append(Bottleneck(cin, w, stride, k == 0))
            cin = w * 4
    mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*mods)


def vgg16bn(width=64, classes=10, hidden=4096):
    """torchvision's VGG-16 with batch norm."""
    cfg = [1, 1, "M", 2, 2, "M", 4, 4, 4, "M", 8, 8, 8, "M", 8, 8, 8, "M"]
    mods, cin = [], 3
    for c in cfg:
        if c == "M":
            mods.append(nn.MaxPool2d(2))
            continue
        mods += [nn.Conv2d(cin, c * width, 3, padding=1),
                 nn.BatchNorm2d(c * width), nn.ReLU(inplace=True)]
        cin = c * width
    mods += [nn.AdaptiveAvgPool2d(7), nn.Flatten(),
             nn.Linear(cin * 49, hidden), nn.ReLU(True), nn.Dropout(),
             nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(),
             nn.Linear(hidden, classes)]
    return nn.Sequential(*mods)


class GPTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, n, d = x.shape
        # one projection split into q, k and v: three views of a storage
        q, k, v = self.attn(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(b, n, self.heads, d // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        sdpa = getattr(F, "scaled_dot_product_attention", None)
        if sdpa is not None:
            y = sdpa(q, k, v, is_causal=True)
        else:                                   # torch 1.13
            att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
            mask = torch.ones(n, n, dtype=torch.bool,
                              device=x.device).triu(1)
            y = att.masked_fill(mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, n, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class MiniGPT2(nn.Module):
    """GPT-2's architecture (pre-norm blocks, tied embedding)."""

    def __init__(self, vocab=50257, ctx=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(GPTBlock(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        for m in self.modules():       # GPT-2's initialisation
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.wte.weight.t()


def gpt2(tiny):
    if not tiny:
        try:
            from transformers import GPT2Config, GPT2LMHeadModel
            m = GPT2LMHeadModel(GPT2Config())
            m.config.use_cache = False
            return m, "transformers GPT2LMHeadModel"
        except ImportError:
            pass
        return MiniGPT2(), "GPT-2 small defined here (no transformers)"
    return MiniGPT2(vocab=256, ctx=64, d=64, layers=2, heads=4), \
        "tiny GPT-2 (2 layers, 64 wide)"


def build(name, tiny):
    """(model, batch, input kind, autocast dtype, description)."""
    if name.startswith("resnet50"):
        m = resnet50(8, (1, 1, 1, 1)) if tiny else resnet50()
        amp = torch.bfloat16 if name.endswith("bf16") else None
        return m, 2 if tiny else 64, "image", amp, "ResNet-50"
    if name == "vgg16bn":
        m = vgg16bn(4, hidden=64) if tiny else vgg16bn()
        return m, 2 if tiny else 32, "image", None, "VGG-16-BN"
    if name == "gpt2":
        m, what = gpt2(tiny)
        return m, 2 if tiny else 8, "text", None, what
    raise ValueError(f"unknown model '{name}' (known: {', '.join(MODELS)})")


# --- data --------------------------------------------------------------------

def fashion_images():
    """Fashion-MNIST's training images (uint8 N x 28 x 28) and labels, and
    where they came from."""
    def idx(path):
        return torch.from_numpy(datasets.idx(path).copy())

    for d in (datasets.FASHION, os.environ.get("BUDDY_FMNIST_DIR"), DATA_DIR):
        if d and os.path.exists(os.path.join(d, "train-images-idx3-ubyte.gz")):
            return (idx(os.path.join(d, "train-images-idx3-ubyte.gz")),
                    idx(os.path.join(d, "train-labels-idx1-ubyte.gz")).long(),
                    f"Fashion-MNIST ({d})")
    g = torch.Generator().manual_seed(7)
    return (torch.randint(0, 256, (4096, 28, 28), dtype=torch.uint8,
                          generator=g),
            torch.randint(0, 10, (4096,), generator=g),
            "SYNTHETIC images: Fashion-MNIST not found (install "
            "dataset-fashion-mnist, or run 'make eval-dnn-gpu-data' where it "
            "is and carry build/eval/gpu-data)")


def write_data(out, n=8192):
    """The first @n training images and labels, in the package's format."""
    x, y, _ = fashion_images()
    os.makedirs(out, exist_ok=True)
    for name, t in (("train-images-idx3-ubyte.gz", x[:n]),
                    ("train-labels-idx1-ubyte.gz", y[:n].to(torch.uint8))):
        dims = tuple(t.shape)
        with gzip.open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack(">I", 0x800 | len(dims)))
            f.write(struct.pack(">" + "I" * len(dims), *dims))
            f.write(t.contiguous().numpy().tobytes())
    print(f"wrote {n} images to {out}")


def text_bytes():
    """Real English text: the tree's documentation, as bytes."""
    paths = sorted(glob.glob(os.path.join(ROOT, "Documentation", "**",
                                          "*.rst"), recursive=True))
    paths.append(os.path.join(ROOT, "README.md"))
    data = b"".join(open(p, "rb").read() for p in paths if os.path.isfile(p))
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).long()


class Batches:
    """Step k's batch of @batch inputs for @kind, on @device."""

    def __init__(self, kind, batch, device, tiny):
        self.kind, self.batch, self.device = kind, batch, device
        self.size = 32 if tiny else 224
        self.seq = 32 if tiny else 1024
        if kind == "image":
            self.x, self.y, self.source = fashion_images()
        else:
            self.x, self.source = text_bytes(), "text: the tree's " \
                "Documentation/*.rst and README.md as UTF-8 bytes"

    def __call__(self, k):
        b = self.batch
        if self.kind == "image":
            n = self.x.shape[0]
            sel = torch.arange(k * b, (k + 1) * b) % n
            x = self.x[sel].to(self.device).float().div_(255).unsqueeze(1)
            x = F.interpolate(x, size=(self.size, self.size),
                              mode="bilinear", align_corners=False)
            return x.expand(-1, 3, -1, -1).contiguous(), \
                self.y[sel].to(self.device)
        n, s = self.x.numel(), self.seq
        starts = (torch.arange(k * b, (k + 1) * b) * s) % (n - s - 1)
        ids = torch.stack([self.x[i:i + s] for i in starts.tolist()])
        return ids.to(self.device), None


def loss_fn(model, kind, x, y):
    if kind == "image":
        return F.cross_entropy(model(x), y)
    out = model(x) if not hasattr(model, "config") else \
        model(x, labels=x).loss
    if not hasattr(model, "config"):
        out = F.cross_entropy(out[:, :-1].reshape(-1, out.shape[-1]),
                              x[:, 1:].reshape(-1))
    return out


# --- contexts ----------------------------------------------------------------

class CountingSaveOnCpu(torch.autograd.graph.save_on_cpu):
    """PyTorch's save_on_cpu, counting the bytes it copies each way."""

    def __init__(self, pin_memory, counts):
        super().__init__(pin_memory=pin_memory)
        pack, unpack = self.pack_hook, self.unpack_hook

        def counted_pack(t):
            counts["out"] += t.numel() * t.element_size()
            return pack(t)

        def counted_unpack(p):
            t = p[1]
            counts["in"] += t.numel() * t.element_size()
            return unpack(p)
        self.pack_hook, self.unpack_hook = counted_pack, counted_unpack


class Run:
    """One policy's context factory and its counters."""

    def __init__(self, policy, device, measure=False):
        self.policy = policy
        self.counts = {"out": 0, "in": 0}
        self.off = None
        if policy not in ("none", "save_on_cpu"):
            name, kw = VARIANTS.get(policy, (policy, {}))
            kw = dict(kw, measure_decisions=measure)
            if device.type == "cpu":    # the dry run's tensors are small
                kw.update(streams=HostStreams(), min_bytes=0)
            self.off = bt.offload(name, **kw)

    def ctx(self, device):
        if self.policy == "none":
            return _Null()
        if self.policy == "save_on_cpu":
            return CountingSaveOnCpu(device.type == "cuda", self.counts)
        return self.off

    def pcie(self):
        if self.off is None:
            return self.counts["out"], self.counts["in"]
        return self.off.stats.pcie_out_bytes, self.off.stats.pcie_in_bytes


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# --- measuring ---------------------------------------------------------------

class Clock:
    """Step times: CUDA events on a GPU, the wall clock on the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def start(self):
        if self.cuda:
            self.e0 = torch.cuda.Event(enable_timing=True)
            self.e0.record()
        self.t0 = time.perf_counter()

    def stop(self):
        if self.cuda:
            e1 = torch.cuda.Event(enable_timing=True)
            e1.record()
            e1.synchronize()
            return self.e0.elapsed_time(e1) / 1e3
        return time.perf_counter() - self.t0


def train_step(model, opt, kind, x, y, ctx, amp, device):
    opt.zero_grad(set_to_none=True)
    with ctx:
        if amp is not None:
            with torch.autocast(device.type, dtype=amp):
                loss = loss_fn(model, kind, x, y)
        else:
            loss = loss_fn(model, kind, x, y)
    loss.backward()
    opt.step()
    return loss


def fresh(name, device, tiny, batch=None):
    torch.manual_seed(14)
    model, b, kind, amp, what = build(name, tiny)
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, opt, batch or b, kind, amp, what


def reset_memory(device):
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def memory(device):
    if device.type != "cuda":
        return None, None
    s = torch.cuda.memory_stats()
    return s["active_bytes.all.peak"], s["reserved_bytes.all.peak"]


def measure(name, policy, device, a):
    model, opt, batch, kind, amp, what = fresh(name, device, a.tiny)
    data = Batches(kind, batch, device, a.tiny)
    run = Run(policy, device)
    clock = Clock(device)
    reset_memory(device)
    for k in range(a.warmup):
        train_step(model, opt, kind, *data(k), run.ctx(device), amp, device)
    reset_memory(device)
    out0, in0 = run.pcie()
    st0 = _prefetch(run)
    times, losses = [], []
    for k in range(a.warmup, a.warmup + a.steps):
        x, y = data(k)
        clock.start()
        loss = train_step(model, opt, kind, x, y, run.ctx(device), amp,
                          device)
        times.append(clock.stop())
        losses.append(float(loss))
    active, reserved = memory(device)
    out1, in1 = run.pcie()
    st1 = _prefetch(run)
    res = {"model": name, "policy": policy, "batch": batch, "what": what,
           "source": data.source, "step_s": statistics.median(times),
           "active": active, "reserved": reserved,
           "pcie_out": (out1 - out0) / a.steps,
           "pcie_in": (in1 - in0) / a.steps,
           "prefetch": [b - c for b, c in zip(st1, st0)],
           "loss": losses[-1]}
    if run.off is not None:
        s = run.off.stats
        res["kept_reasons"] = {k: v for k, v in s.kept_reasons.items()}
        res["by_codec"] = {k: v for k, v in s.by_codec.items()}
        res["host_syncs"] = s.host_syncs
    if policy == "cswap":
        # one more step, not timed, in which every decision is judged
        run.off.measure = True
        train_step(model, opt, kind, *data(a.warmup + a.steps),
                   run.ctx(device), amp, device)
        s = run.off.stats
        res["cswap"] = {"decisions": s.cswap_decisions,
                        "correct": s.cswap_correct,
                        "best": dict(s.cswap_best)}
    del model, opt, run
    return res


def _prefetch(run):
    if run.off is None:
        return [0, 0, 0]
    s = run.off.stats
    return [s.prefetch_hits, s.prefetch_late, s.prefetch_misses]


OOM = (getattr(torch.cuda, "OutOfMemoryError", RuntimeError), MemoryError)


def fits(name, policy, device, a, batch):
    """Time per sample of two steps at @batch, or None if it does not fit
    under the cap."""
    try:
        model, opt, batch, kind, amp, _ = fresh(name, device, a.tiny, batch)
        data = Batches(kind, batch, device, a.tiny)
        run = Run(policy, device)
        clock = Clock(device)
        for k in range(2):             # the first learns the plan
            x, y = data(k)
            clock.start()
            train_step(model, opt, kind, x, y, run.ctx(device), amp, device)
            dt = clock.stop()
        return dt / batch
    except OOM:
        return None
    finally:
        model = opt = run = data = None
        reset_memory(device)


def capacity(name, policy, device, a, deadline):
    """The largest batch that fits (doubling, then halving the gap to
    within an eighth), and its time per sample."""
    _, base, *_ = build(name, a.tiny)
    ok, bad, per = None, None, {}
    b = base
    while time.monotonic() < deadline and b <= a.max_factor * base:
        t = fits(name, policy, device, a, b)
        if t is None:
            bad = b
            break
        ok, per[b] = b, t
        b *= 2
    if ok is None:
        return {"model": name, "policy": policy, "batch": 0}
    while bad is not None and bad - ok > max(1, ok // 8) and \
            time.monotonic() < deadline:
        mid = (ok + bad) // 2
        t = fits(name, policy, device, a, mid)
        if t is None:
            bad = mid
        else:
            ok, per[mid] = mid, t
    return {"model": name, "policy": policy, "batch": ok,
            "per_sample_s": per[ok], "exact": bad is not None and
            bad - ok <= max(1, ok // 8)}


# --- the report ----------------------------------------------------------------

def mib(v):
    return "-" if v is None else f"{v / MiB:,.0f}"


def load(out, pattern):
    rows = []
    for p in sorted(glob.glob(os.path.join(out, pattern))):
        with open(p) as f:
            rows += json.load(f)["rows"]
    return rows


def goals(meas, cap):
    """[(goal, met, figures)] from the rows."""
    m = {(r["model"], r["policy"]): r for r in meas}
    c = {(r["model"], r["policy"]): r for r in cap}
    out = []

    def have(*keys):
        return all(k in m for k in keys)
    for model in ("resnet50", "gpt2"):
        a, s = (model, "vdnn-all"), (model, "save_on_cpu")
        if have(a, s):
            ratio = m[a]["step_s"] / m[s]["step_s"]
            budget = 512 * MiB
            mem_ok = m[a]["active"] is None or \
                m[a]["active"] <= m[s]["active"] + budget
            out.append((f"vdnn-all step time <= 0.9x save_on_cpu's on "
                        f"{model}, peak active <= save_on_cpu's + the "
                        "prefetch budget", ratio <= 0.9 and mem_ok,
                        f"{ratio:.2f}x; active {mib(m[a]['active'])} vs "
                        f"{mib(m[s]['active'])} MiB"))
    for model in ("vgg16bn", "resnet50"):
        g, v = (model, "gist"), (model, "vdnn-all")
        if have(g, v):
            fewer = (m[v]["pcie_out"] + m[v]["pcie_in"]) / \
                max(m[g]["pcie_out"] + m[g]["pcie_in"], 1)
            slow = m[g]["step_s"] / m[v]["step_s"]
            fig = f"{fewer:.2f}x fewer PCIe bytes at {slow:.2f}x the time"
            if model == "vgg16bn":
                out.append(("gist: >= 1.3x fewer PCIe bytes than vdnn-all "
                            "on VGG-16-BN at <= 1.1x its step time",
                            fewer >= 1.3 and slow <= 1.1, fig))
            else:
                out.append(("gist on ResNet-50 (reported)", None, fig))
    for model in ("gpt2", "vgg16bn", "resnet50"):
        d, n = (model, "vdnn-dyn"), (model, "none")
        if d in c and n in c and c[n]["batch"] and c[d]["batch"]:
            more = c[d]["batch"] / c[n]["batch"]
            slow = c[d]["per_sample_s"] / c[n]["per_sample_s"]
            fig = (f"batch {c[d]['batch']} vs {c[n]['batch']} ({more:.2f}x), "
                   f"{slow:.2f}x the time per sample")
            if model == "resnet50":
                out.append(("vdnn-dyn on ResNet-50 (reported)", None, fig))
            else:
                out.append((f"vdnn-dyn: largest batch >= 1.5x no offload's "
                            f"on {model}, <= 1.3x the time per sample",
                            more >= 1.5 and slow <= 1.3, fig))
    for model in ("resnet50", "gpt2"):
        d, y = (model, "cdma"), (model, "cdma-sync")
        if have(d, y):
            out.append((f"the size read on {model} (reported): deferred "
                        "counts against one host wait per tensor", None,
                        f"cdma {1e3 * m[d]['step_s']:.1f} ms, "
                        f"{m[d]['host_syncs']} waits; cdma-sync "
                        f"{1e3 * m[y]['step_s']:.1f} ms, "
                        f"{m[y]['host_syncs']} waits"))
    dec = right = 0
    best = {}
    for r in meas:
        cs = r.get("cswap")
        if cs:
            dec += cs["decisions"]
            right += cs["correct"]
            for k, v in cs["best"].items():
                best[k] = best.get(k, 0) + v
    if dec:
        acc = right / dec
        const = max(best.values()) / dec
        which = max(best, key=best.get)
        out.append(("cswap: decision accuracy >= 85% and above the best "
                    "constant choice's", acc >= 0.85 and acc > const,
                    f"{100 * acc:.1f}% of {dec}; always '{which}' would "
                    f"get {100 * const:.1f}%"))
    return out


def report(out, device_desc):
    meas = load(out, "dnn-gpu-measure*.json")
    cap = load(out, "dnn-gpu-capacity*.json")
    meta = {}
    for p in glob.glob(os.path.join(out, "dnn-gpu-*.json")):
        with open(p) as f:
            doc = json.load(f)
        meta.update(doc.get("meta", {}))
        meta.setdefault("left_out", []).extend(doc.get("left_out", []))
    c = {(r["model"], r["policy"]): r for r in cap}
    md = ["# buddy.torch.offload on a GPU (make eval-dnn-gpu)", "",
          f"Device: {meta.get('device', device_desc)}; torch "
          f"{meta.get('torch', torch.__version__)} (the baseline's and "
          f"ours); {meta.get('note', '')}", "",
          "Per step (median of the timed steps after warm-up, CUDA events). "
          "Peak active and reserved bytes from memory_stats() over the "
          "timed steps; PCIe bytes per step each way (encoded streams for "
          "cdma, gist, cswap; save_on_cpu copies every saved tensor); "
          "prefetch hits/late/misses over the timed steps; largest batch: "
          f"the largest that fits under a cap of {meta.get('cap', '?')} "
          "with set_per_process_memory_fraction, to within an eighth, and "
          "its time per sample.", ""]
    models = []
    for r in meas:
        if r["model"] not in models:
            models.append(r["model"])
    for model in models:
        rows = [r for r in meas if r["model"] == model]
        base = next((r for r in rows if r["policy"] == "none"), rows[0])
        md += [f"## {model} ({rows[0]['what']}, batch {rows[0]['batch']}; "
               f"{rows[0]['source']})", "",
               "| policy | step ms (vs none) | peak active MiB | peak "
               "reserved MiB | PCIe out/in MiB | prefetch h/l/m | largest "
               "batch | time/sample ms | loss |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            cr = c.get((model, r["policy"]))
            lb = "-" if cr is None else str(cr["batch"])
            ps = "-" if cr is None or not cr.get("per_sample_s") else \
                f"{1e3 * cr['per_sample_s']:.2f}"
            md.append(
                f"| {r['policy']} | {1e3 * r['step_s']:.1f} "
                f"({r['step_s'] / base['step_s']:.2f}x) | {mib(r['active'])} "
                f"| {mib(r['reserved'])} | {mib(r['pcie_out'])}/"
                f"{mib(r['pcie_in'])} | "
                f"{'/'.join(str(v) for v in r['prefetch'])} | {lb} | {ps} | "
                f"{r['loss']:.4f} |")
        extra = [f"- {r['policy']}: codecs " + ", ".join(
            f"{k} {v[1] / max(v[2], 1):.2f}x ({v[0]})"
            for k, v in sorted(r["by_codec"].items())) +
            ("; kept " + ", ".join(f"{k} {v[0]}" for k, v in
                                    sorted(r["kept_reasons"].items()))
             if r["kept_reasons"] else "") +
            f"; host waits {r['host_syncs']}"
            for r in rows if r.get("by_codec") is not None]
        md += [""] + extra + [""]
    g = goals(meas, cap)
    md += ["## Goals", ""]
    lines = []
    for goal, met, fig in g:
        word = "reported" if met is None else ("met" if met else "NOT met")
        lines.append(f"{goal}: {word} ({fig})")
    md += [f"- {ln}" for ln in lines] or ["- no goal could be judged"]
    if meta.get("left_out"):
        md += ["", "Left out for time: " + ", ".join(meta["left_out"])]
    with open(os.path.join(out, "dnn-gpu.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plot(meas, cap, out)
    print("\n".join(lines))
    print(f"  wrote {os.path.join(out, 'dnn-gpu.md')}")


def plot(meas, cap, out):
    models = list(dict.fromkeys(r["model"] for r in meas))
    pols = list(dict.fromkeys(r["policy"] for r in meas))
    m = {(r["model"], r["policy"]): r for r in meas}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return _svg(models, pols, m, out)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    w = 0.8 / max(len(pols), 1)
    for k, p in enumerate(pols):
        xs = [i + k * w for i in range(len(models))]
        axes[0].bar(xs, [1e3 * m[(mo, p)]["step_s"] if (mo, p) in m else 0
                         for mo in models], w, label=p)
        axes[1].bar(xs, [(m[(mo, p)]["active"] or 0) / GiB
                         if (mo, p) in m else 0 for mo in models], w, label=p)
    for ax, t in zip(axes, ("step time, ms", "peak active, GiB")):
        ax.set_xticks([i + 0.4 - w / 2 for i in range(len(models))])
        ax.set_xticklabels(models)
        ax.set_title(t)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "dnn-gpu.png"), dpi=90)


def _svg(models, pols, m, out):
    """The step-time bars as a plain SVG, for a machine without
    matplotlib."""
    rows = [(mo, p, m[(mo, p)]["step_s"]) for mo in models for p in pols
            if (mo, p) in m]
    top = max((r[2] for r in rows), default=1) or 1
    h = 18 * len(rows) + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="640" '
             f'height="{h}" font-size="11">']
    for i, (mo, p, s) in enumerate(rows):
        y = 10 + 18 * i
        parts.append(f'<text x="0" y="{y + 11}">{mo} {p}</text>')
        parts.append(f'<rect x="200" y="{y}" height="14" '
                     f'width="{400 * s / top:.1f}" fill="#4a7"/>')
        parts.append(f'<text x="{205 + 400 * s / top:.1f}" y="{y + 11}">'
                     f'{1e3 * s:.1f} ms</text>')
    parts.append("</svg>")
    with open(os.path.join(out, "dnn-gpu.svg"), "w") as f:
        f.write("\n".join(parts) + "\n")


# --- main --------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("measure", "capacity", "report"),
                    required=True)
    ap.add_argument("--out", default=os.environ.get("OUT") or
                    os.path.join(ROOT, "build", "eval"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--time-limit", type=float, default=270)
    ap.add_argument("--cap-gib", type=float, default=24)
    ap.add_argument("--max-factor", type=int, default=64,
                    help="capacity: batches up to this times the model's")
    ap.add_argument("--write-data", metavar="DIR",
                    help="write a Fashion-MNIST subset for a machine "
                    "without the package, and exit")
    a = ap.parse_args()
    if a.write_data:
        return write_data(a.write_data)
    device = torch.device(a.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"SKIP: no CUDA device (torch {torch.__version__}, CUDA "
              f"{torch.version.cuda}); --device cpu runs the code on CPU "
              "tensors")
        return 0
    os.makedirs(a.out, exist_ok=True)
    desc = torch.cuda.get_device_name(device) if device.type == "cuda" \
        else "CPU (a dry run: the figures only show that the code runs)"
    if a.part == "report":
        return report(a.out, desc)
    models = [m for m in a.models.split(",") if m]
    for m in models:
        build(m, True)                 # an unknown name fails here
    policies = [p for p in a.policies.split(",") if p]
    for p in policies:
        if p not in POLICIES:
            ap.error(f"unknown policy '{p}' (known: {', '.join(POLICIES)})")
    deadline = time.monotonic() + a.time_limit
    meta = {"device": desc, "torch": torch.__version__,
            "note": "one torch thread" if device.type == "cpu" else
            f"CUDA {torch.version.cuda}"}
    rows, left = [], []
    if a.part == "capacity" and device.type == "cuda":
        total = torch.cuda.get_device_properties(device).total_memory
        frac = min(a.cap_gib * GiB / total, 1.0)
        torch.cuda.set_per_process_memory_fraction(frac, device)
        meta["cap"] = f"{a.cap_gib:g} GiB ({100 * frac:.0f}% of the GPU)"
    elif a.part == "capacity":
        meta["cap"] = "none (CPU)"
    if device.type == "cpu":
        torch.set_num_threads(1)
    for model in models:
        for p in policies:
            if time.monotonic() > deadline:
                left.append(f"{a.part} {model} {p}")
                continue
            t0 = time.monotonic()
            if a.part == "measure":
                r = measure(model, p, device, a)
            else:
                r = capacity(model, p, device, a, deadline)
            rows.append(r)
            print(f"{a.part} {model} {p}: {time.monotonic() - t0:.1f} s",
                  file=sys.stderr, flush=True)
    name = f"{a.part}-" + "-".join(models)
    with open(os.path.join(a.out, f"dnn-gpu-{name}.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows, "left_out": left}, f,
                  indent=1)
    if left:
        print("left out for time: " + ", ".join(left), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
