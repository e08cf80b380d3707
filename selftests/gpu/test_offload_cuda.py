# SPDX-License-Identifier: GPL-2.0
"""check-gpu: buddy.torch.offload on CUDA tensors.

    python3 selftests/gpu/test_offload_cuda.py

TAP with a "# Totals:" line (selftests/gpu/run_gpu_tests.py's convention);
without a CUDA device it prints SKIP with the reason and exits 0.  About a
minute on one H100.

- the torch-op encoders on the GPU write the streams they write on the CPU
  (which python/tests/test_gpu_offload.py checks against libbuddy byte for
  byte), and libbuddy's where it is loaded; the GPU decodes them;
- under buddy.torch.deterministic_recipe(), first shown to repeat training
  bit for bit without any policy, every lossless policy gives the same
  loss and gradients over several SGD steps (float32, channels_last,
  bfloat16 autocast, an attention model whose q, k and v are views of one
  storage);
- strides and views restored exactly, in-place changes after pack raise,
  prefetch hits, the pinned pool reused from step to step, CUDA graph
  capture and torch.compile.
"""
import os
import sys
import tempfile
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
sys.path[:0] = [os.path.join(ROOT, "python"),
                os.path.join(ROOT, "python", "tests")]
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch                                           # noqa: E402

import buddy                                           # noqa: E402
import buddy.torch as bt                               # noqa: E402
from buddy import torch_codecs as tc                   # noqa: E402
from buddy.gpu_offload import GpuOffload, storage_of   # noqa: E402
from buddy.pinned_pool import PinnedPool               # noqa: E402
from buddy.torch_streams import CudaStreams            # noqa: E402
from run import TapResult                              # noqa: E402

DEV = torch.device("cuda")
LIB = buddy._lib.lib is not None
GPU_LOSSLESS = ("vdnn-all", "vdnn-conv", "vdnn-dyn", "cdma", "gist", "cswap")


def values(n, sparsity, seed):
    """float32 activations with every kind of bit pattern mixed in."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g)
    x[torch.rand(n, generator=g) < sparsity] = 0
    bits = x.view(torch.int32)
    bits[::7] = -2 ** 31                  # -0.0
    bits[::11] = 0x7f800000               # inf
    bits[::13] = 0x7fc00001               # NaN
    bits[::17] = 3                        # a subnormal
    return x


_saved = {}


def setUpModule():
    _saved["filters"] = warnings.filters[:]
    _saved["cache"] = os.environ.get("BUDDY_CACHE_DIR")
    bt.deterministic_recipe()
    _saved["tmp"] = tempfile.TemporaryDirectory()
    os.environ["BUDDY_CACHE_DIR"] = _saved["tmp"].name
    warnings.simplefilter("ignore", UserWarning)      # warn_only's notes


def tearDownModule():
    """Leave the process as the next test file expects it."""
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic = False
    warnings.filters[:] = _saved["filters"]
    if _saved["cache"] is None:
        os.environ.pop("BUDDY_CACHE_DIR", None)
    else:
        os.environ["BUDDY_CACHE_DIR"] = _saved["cache"]
    _saved["tmp"].cleanup()


class Encoders(unittest.TestCase):
    def test_gpu_streams_are_the_cpu_ones(self):
        for name in tc.CODECS:
            # the largest crosses a chunk of CHUNK_WORDS
            for n, sp in ((1, 0.0), (4099, 0.5), (1 << 20, 0.9),
                          ((5 << 20) + 17, 0.3)):
                with self.subTest(codec=name, n=n):
                    x = values(n, sp, n)
                    b_cpu = tc.as_bytes(x)
                    b = b_cpu.to(DEV)
                    want, want_index = tc.encode(name, b_cpu)
                    counts = None
                    if name in tc.COUNTED:
                        counts = [int(c) for c in tc.count(name, b).tolist()]
                    got, index = tc.encode(name, b, counts)
                    self.assertTrue(torch.equal(want, got.cpu()))
                    if want_index is not None:
                        self.assertTrue(torch.equal(want_index, index.cpu()))
                    if LIB:
                        c = buddy.Codec(name, allow_lossy=True,
                                        allow_mask=True)
                        self.assertEqual(bytes(c.encode(x)),
                                         got.cpu().numpy().tobytes())
                    out = torch.empty_like(b)
                    tc.decode(name, got, out, index, counts)
                    ref = torch.empty_like(b_cpu)
                    tc.decode(name, want, ref, want_index)
                    self.assertTrue(torch.equal(ref, out.cpu()))
                    if name in ("zvc", "csr"):
                        self.assertTrue(torch.equal(b, out))

    def test_binarize_of_bfloat16(self):
        x = values(10001, 0.5, 3).to(DEV, torch.bfloat16)
        enc, _ = tc.encode("binarize", tc.as_bytes(x), dtype=torch.bfloat16)
        out = torch.empty(x.numel() * 2, dtype=torch.uint8, device=DEV)
        tc.decode("binarize", enc, out, dtype=torch.bfloat16)
        self.assertTrue(torch.equal(out.view(torch.bfloat16) > 0, x > 0))


class Net(torch.nn.Module):
    """Convolutions, batch norm, in-place ReLU, max-pool, a residual add and
    adaptive average pooling (whose CUDA backward warn_only lets by)."""

    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        self.a = torch.nn.Sequential(c(3, 16, 3, padding=1),
                                     torch.nn.BatchNorm2d(16),
                                     torch.nn.ReLU(inplace=True),
                                     torch.nn.MaxPool2d(2))
        self.b = torch.nn.Sequential(c(16, 16, 3, padding=1),
                                     torch.nn.BatchNorm2d(16))
        self.head = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1),
                                        torch.nn.Flatten(),
                                        torch.nn.Linear(16, 10))

    def forward(self, x):
        y = self.a(x)
        return self.head(torch.relu(self.b(y) + y))


class Attention(torch.nn.Module):
    """One GPT-2 block: q, k and v split from one projection, SDPA."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln = torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d),
                                       torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))
        self.head = torch.nn.Linear(d, 10)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln(x)).split(d, dim=2)
        q, k, v = (t.view(b, n, self.heads, d // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v,
                                                             is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, n, d))
        x = x + self.mlp(x)
        return self.head(x.mean(1))


def batch_of(kind, seed=5):
    g = torch.Generator().manual_seed(seed)
    if kind == "attention":
        x = torch.randn(4, 128, 64, generator=g)
    else:
        x = torch.randn(8, 3, 64, 64, generator=g)
    return x.to(DEV), torch.randint(0, 10, (x.shape[0],), generator=g).to(DEV)


def train(kind, policy=None, steps=3, channels_last=False, amp=None,
          compile_=False):
    """[(loss, grads)] of @steps SGD steps from one seed; and the offload."""
    torch.manual_seed(14)
    model = (Attention() if kind == "attention" else Net()).to(DEV)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    fwd = torch.compile(model, backend="aot_eager") if compile_ else model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = batch_of(kind)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    off = bt.offload(policy, min_bytes=0) if policy else None
    out = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with off if off is not None else _Null():
            with torch.autocast("cuda", dtype=amp, enabled=amp is not None):
                loss = torch.nn.functional.cross_entropy(fwd(x), y)
        loss.backward()
        out.append((loss.detach().clone(),
                    [p.grad.detach().clone() for p in model.parameters()]))
        opt.step()
    torch.cuda.synchronize()
    return out, off


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def same(a, b):
    return all(torch.equal(la, lb) and len(ga) == len(gb) and
               all(torch.equal(x, y) for x, y in zip(ga, gb))
               for (la, ga), (lb, gb) in zip(a, b))


class BitIdentity(unittest.TestCase):
    CASES = {"fp32": {"kind": "cnn"},
             "channels_last": {"kind": "cnn", "channels_last": True},
             "bf16 autocast": {"kind": "cnn", "amp": torch.bfloat16},
             "attention": {"kind": "attention"}}

    def test_the_recipe_repeats_itself(self):
        for name, kw in self.CASES.items():
            with self.subTest(case=name):
                self.assertTrue(same(train(**kw)[0], train(**kw)[0]))

    def test_lossless_policies(self):
        for name, kw in self.CASES.items():
            base, _ = train(**kw)
            for policy in GPU_LOSSLESS:
                with self.subTest(case=name, policy=policy):
                    res, off = train(policy=policy, **kw)
                    self.assertTrue(same(base, res))
                    st = off.stats
                    self.assertGreater(st.offloaded, 0)
                    self.assertGreater(st.pcie_in_bytes, 0)
                    self.assertEqual(0, st.host_syncs)

    def test_channels_last_and_views_restored_exactly(self):
        s = CudaStreams(DEV)
        st = bt.OffloadStats()
        eng = GpuOffload(s, PinnedPool(s.host_empty, 1 << 22), st, None, 0)
        x = torch.randn(4, 8, 16, 16, device=DEV).contiguous(
            memory_format=torch.channels_last)
        qkv = torch.randn(2, 32, 96, device=DEV)
        heads = [t.view(2, 32, 4, 8).transpose(1, 2)
                 for t in qkv.split(32, dim=2)]
        views = [eng.pack(x, "zvc")] + [eng.pack(h, "raw") for h in heads]
        self.assertEqual(2, st.views_shared)
        eng.start_backward()
        outs = [eng.unpack(v) for v in views]
        torch.cuda.synchronize()
        for t, o in zip([x] + heads, outs):
            self.assertEqual(t.stride(), o.stride())
            self.assertTrue(torch.equal(t, o))
        self.assertEqual(1, len({storage_of(o)[0] for o in outs[1:]}))

    def test_inplace_change_after_pack_raises(self):
        x = torch.linspace(-2, 2, 1 << 20, device=DEV, requires_grad=True)
        with bt.offload("vdnn-all"):
            y = torch.exp(x)
        with torch.no_grad():
            y.add_(1.0)
        with self.assertRaisesRegex(RuntimeError, "inplace"):
            y.sum().backward()

    def test_prefetch_and_the_pinned_pool(self):
        res, off = train("cnn", policy="vdnn-all", steps=2)
        st = off.stats
        self.assertGreater(st.prefetch_hits + st.prefetch_late, 0)
        slabs = bt.pinned_pool(DEV).slabs
        train("cnn", policy="vdnn-all", steps=4)
        self.assertEqual(slabs, bt.pinned_pool(DEV).slabs)

    def test_graph_capture_keeps_tensors_on_the_gpu(self):
        x = torch.randn(1 << 16, device=DEV, requires_grad=True)
        off = bt.offload("vdnn-all")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            torch.exp(x)                # warm up outside the capture
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            with off:
                y = torch.exp(x)
        g.replay()
        self.assertEqual(0, off.stats.offloaded)
        self.assertIn("graph_capture", off.stats.kept_reasons)
        del y

    def test_torch_compile(self):
        """A compiled model's saved tensors reach pack once its compiled
        forward has finished (PyTorch runs plain Python hooks eagerly
        after it): training is the compiled model's, bit for bit."""
        if not hasattr(torch, "compile"):
            self.skipTest(f"torch {torch.__version__} has no torch.compile")
        base, _ = train("cnn", compile_=True)
        for policy in ("vdnn-all", "cdma"):
            with self.subTest(policy=policy):
                res, _ = train("cnn", policy=policy, compile_=True)
                self.assertTrue(same(base, res))

    def test_cswap_decides_with_the_gpu_model(self):
        torch.manual_seed(14)
        model = Net().to(DEV)
        x, y = batch_of("cnn")
        off = bt.offload("cswap", measure_decisions=True)
        for _ in range(2):
            with off:
                loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
        st = off.stats
        self.assertGreater(st.cswap_decisions, 0)
        self.assertEqual(st.cswap_decisions, sum(st.cswap_best.values()))
        model_, (d2h, h2d) = off._gpu_model
        self.assertEqual({"zvc", "csr"}, set(model_))
        self.assertGreater(min(d2h, h2d), 1e9)     # a PCIe link, > 1 GB/s


def no_gpu_reason():
    if not torch.cuda.is_available():
        built = torch.version.cuda
        return (f"no CUDA device (torch {torch.__version__}, " +
                (f"CUDA {built}: none visible)" if built else
                 "built without CUDA)"))
    return None


def main():
    print("TAP version 13")
    why = no_gpu_reason()
    r = TapResult()
    if why is not None:
        r.n, r.nskip = 1, 1
        print(f"ok 1 - test_offload_cuda # SKIP {why}")
        r.finish()
        return 0
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}, libbuddy "
          f"{'loaded' if LIB else 'not loaded: ' + str(buddy._lib.load_error)}",
          flush=True)
    suite = unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules[__name__])
    suite.run(r)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
