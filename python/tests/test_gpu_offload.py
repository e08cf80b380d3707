# SPDX-License-Identifier: GPL-2.0
"""Tests of the offload of accelerator tensors (buddy.gpu_offload), run on
CPU tensors: the torch-op encoders against libbuddy byte for byte, exact
strides, per-storage accounting of views, version checks, the pinned pool,
the prefetch order and byte budget, and bit-identical training, with the
streams of buddy.torch_streams replaced by HostStreams (everything at once)
or ManualStreams, a fake whose events complete only when the test says.
"""
import gc
import os
import tempfile
import unittest
import warnings

try:
    import torch
except ImportError:
    torch = None

import buddy

if torch is not None:
    import buddy.torch as bt
    from buddy import torch_codecs as tc
    from buddy.gpu_offload import GpuOffload, VersionError, is_dense, \
        span_of, storage_of
    from buddy.pinned_pool import ALIGN, PinnedPool
    from buddy.torch_streams import HostStreams
    from test_torch import MemDevice, fixed_batch, identical, small_cnn, step

NO_LIB = buddy._lib.load_error


class ManualEvent:
    def __init__(self, streams, stream):
        self.streams, self.stream, self.done = streams, stream, False

    def query(self):
        self.streams.queries += 1
        return self.done

    def synchronize(self):
        self.streams.syncs += 1
        self.done = True


if torch is not None:
    class ManualStreams(HostStreams):
        """Copies happen at once; their events complete when complete() is
        called (for one stream or all), or, with @lag, once @lag later
        events have been recorded (a device that runs behind the host)."""
        copy_out, copy_in = "out", "in"

        def __init__(self, lag=None):
            self.events, self.waits, self.handed = [], [], []
            self.queries = self.syncs = 0
            self.host = 0
            self.lag = lag

        def current(self):
            return "compute"

        def record(self, stream):
            e = ManualEvent(self, stream)
            self.events.append(e)
            if self.lag is not None and len(self.events) > self.lag:
                self.events[-1 - self.lag].done = True
            return e

        def wait_event(self, stream, event):
            self.waits.append((stream, event))

        def hand_over(self, tensor, stream):
            self.handed.append(stream)

        def host_empty(self, nbytes):
            self.host += 1
            return super().host_empty(nbytes)

        def complete(self, stream=None):
            for e in self.events:
                if stream is None or e.stream == stream:
                    e.done = True

        def pending(self, stream):
            return sum(not e.done for e in self.events if e.stream == stream)


def cache_dir_env(test):
    d = tempfile.TemporaryDirectory()
    test.addCleanup(d.cleanup)
    old = os.environ.get("BUDDY_CACHE_DIR")
    os.environ["BUDDY_CACHE_DIR"] = d.name
    test.addCleanup(lambda: os.environ.pop("BUDDY_CACHE_DIR") if old is None
                    else os.environ.__setitem__("BUDDY_CACHE_DIR", old))
    return d.name


def activations(n, sparsity, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g)
    x[torch.rand(n, generator=g) < sparsity] = 0
    return x


def odd_floats(n, seed):
    """Bit patterns of every kind: NaN, infinities, -0.0, subnormals,
    values that round to a tie, large and tiny magnitudes."""
    g = torch.Generator().manual_seed(seed)
    bits = torch.randint(-2 ** 31, 2 ** 31 - 1, (n,), dtype=torch.int32,
                         generator=g)
    bits[torch.rand(n, generator=g) < 0.3] = 0
    bits[::7] = -2 ** 31                  # -0.0
    bits[::11] = 0x7f800000               # +inf
    bits[::13] = 0x7fc00001               # NaN with a payload
    bits[::17] = 0x00000003               # a subnormal
    bits[::19] = 0x3f801000               # 1 + 2^-11: a tie for dpr16
    return bits.view(torch.float32)


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
@unittest.skipIf(NO_LIB, f"no libbuddy: {NO_LIB}")
class Encoders(unittest.TestCase):
    """The torch-op encoders write libbuddy's streams byte for byte, and
    each side decodes the other's."""

    def check(self, name, x, chunk_words=None):
        old = tc.CHUNK_WORDS
        if chunk_words:
            tc.CHUNK_WORDS = chunk_words
        try:
            c = buddy.Codec(name, allow_lossy=True, allow_mask=True)
            b = tc.as_bytes(x)
            want = bytes(c.encode(x))
            got, index = tc.encode(name, b)
            self.assertEqual(want, got.numpy().tobytes(),
                             f"{name}, {x.numel()} values")
            if name in tc.COUNTED:
                nnz = sum(int(v) for v in tc.count(name, b))
            else:
                nnz = 0
            self.assertEqual(len(want), tc.stream_len(name, b.numel(), nnz))
            ref = torch.empty_like(x)
            c.decode(bytearray(want), ref)
            # torch decodes libbuddy's stream (ZVC without its index: the
            # chain is walked) and libbuddy decodes torch's
            out = torch.empty(b.numel(), dtype=torch.uint8)
            foreign = torch.tensor(list(want), dtype=torch.uint8)
            tc.decode(name, foreign, out)
            self.assertTrue(torch.equal(out, tc.as_bytes(ref)), name)
            out2 = torch.empty(b.numel(), dtype=torch.uint8)
            tc.decode(name, got, out2, index)
            self.assertTrue(torch.equal(out2, out), name)
            if c.lossless:
                self.assertTrue(torch.equal(out, b))
        finally:
            tc.CHUNK_WORDS = old

    def test_every_codec_matches_libbuddy(self):
        for name in tc.CODECS:
            for n in (0, 1, 7, 31, 32, 33, 255, 256, 257, 1000, 4099):
                for sp in (0.0, 0.5, 0.97, 1.0):
                    with self.subTest(codec=name, n=n, sparsity=sp):
                        self.check(name, activations(n, sp, n))

    def test_special_values_and_chunk_boundaries(self):
        for name in tc.CODECS:
            for n in (1000, 4097, 20000):
                with self.subTest(codec=name, n=n):
                    # chunks of 512 words: several per tensor, one row or
                    # window cut nowhere
                    self.check(name, odd_floats(n, n), chunk_words=512)

    def test_zvc_takes_any_byte_length(self):
        for n in (1, 3, 5, 127, 129, 4001):
            with self.subTest(n=n):
                g = torch.Generator().manual_seed(n)
                self.check("zvc", torch.randint(0, 3, (n,), dtype=torch.uint8,
                                                generator=g))

    def test_binarize_keeps_x_gt_0_for_half_types(self):
        for dtype in (torch.bfloat16, torch.float16):
            x = odd_floats(1001, 5).to(dtype)
            enc, _ = tc.encode("binarize", tc.as_bytes(x), dtype=dtype)
            out = torch.empty(x.numel() * x.element_size(), dtype=torch.uint8)
            tc.decode("binarize", enc, out, dtype=dtype)
            y = out.view(dtype)
            self.assertTrue(torch.equal(y > 0, x > 0))
            self.assertEqual(-(-x.numel() // 8), enc.numel())


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Layout(unittest.TestCase):
    """Spans, exact strides and per-storage blocks."""

    def engine(self, streams=None, prefetch_bytes=0):
        st = bt.OffloadStats()
        streams = streams or HostStreams()
        pool = PinnedPool(streams.host_empty, 1 << 16)
        return GpuOffload(streams, pool, st, None, prefetch_bytes), st

    def roundtrip(self, t, codec="raw"):
        eng, st = self.engine()
        v = eng.pack(t, codec)
        self.assertNotIsInstance(v, str)
        eng.start_backward()
        return eng.unpack(v), st

    def test_dense_layouts_come_back_with_their_strides(self):
        x = torch.randn(4, 6, 5, 3)
        cases = {"contiguous": x, "channels_last":
                 x.contiguous(memory_format=torch.channels_last),
                 "transposed": x[0, 0].t(), "permuted": x.permute(3, 1, 0, 2),
                 "offset": x[2:], "size-1 dim": x[1:2].transpose(0, 2)}
        for name, t in cases.items():
            for codec in ("raw", "zvc", "csr"):
                with self.subTest(layout=name, codec=codec):
                    self.assertTrue(is_dense(t))
                    out, st = self.roundtrip(t, codec)
                    self.assertEqual(t.shape, out.shape)
                    self.assertEqual(t.stride(), out.stride())
                    self.assertTrue(torch.equal(t, out))
                    self.assertEqual(t.numel() * 4, st.offloaded_bytes)

    def test_views_that_are_not_dense(self):
        x = torch.randn(8, 12)
        wide = torch.randn(1000, 64)
        cases = {"strided slice": (x[:, ::2], x.numel() * 4),
                 "expanded": (torch.randn(5, 1).expand(5, 7), 20),
                 "column": (torch.randn(8, 3)[:, 1], 96)}
        for name, (t, stored) in cases.items():
            with self.subTest(view=name):
                self.assertFalse(is_dense(t))
                out, st = self.roundtrip(t)
                self.assertEqual(t.stride(), out.stride())
                self.assertTrue(torch.equal(t, out))
                self.assertEqual(stored, st.offloaded_bytes)
        # a sliver of a large storage is not worth its storage's bytes
        self.assertEqual("sparse_view", span_of(wide[:, 0]))
        self.assertEqual("empty", span_of(torch.empty(0, 3)))

    def test_views_of_one_storage_share_one_block(self):
        """GPT-2's q, k and v: three views of one projection's output,
        taken out once and accounted once."""
        qkv = torch.randn(2, 16, 3 * 24)
        q, k, v = qkv.split(24, dim=2)
        heads = [x.view(2, 16, 4, 6).transpose(1, 2) for x in (q, k, v)]
        eng, st = self.engine()
        views = [eng.pack(h, "raw") for h in heads]
        self.assertEqual(1, st.offloaded)
        self.assertEqual(2, st.views_shared)
        self.assertEqual(qkv.numel() * 4, st.offloaded_bytes)
        eng.start_backward()
        outs = [eng.unpack(vw) for vw in views]
        for h, o in zip(heads, outs):
            self.assertTrue(torch.equal(h, o))
            self.assertEqual(h.stride(), o.stride())
        self.assertEqual(1, len({storage_of(o)[0] for o in outs}))
        self.assertEqual(2, st.unpacks_shared)
        self.assertEqual(qkv.numel() * 4, st.pcie_in_bytes)
        # a new version of the storage is a new block
        eng2, st2 = self.engine()
        eng2.pack(heads[0], "raw")
        qkv.add_(1)
        eng2.pack(heads[1], "raw")
        self.assertEqual(2, st2.offloaded)


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Versions(unittest.TestCase):
    """A tensor changed in place after pack raises at unpack, whether the
    change came before its copy completed or after."""

    def setUp(self):
        self.s = ManualStreams()
        self.eng = GpuOffload(self.s, PinnedPool(self.s.host_empty, 1 << 16),
                              bt.OffloadStats(), None, 0)

    def settle(self):
        """Every event completes and is seen: counts, then the copy."""
        for _ in range(2):
            self.s.complete()
            self.eng.poll()

    def test_change_while_in_flight(self):
        """The check when the copy completes (or the counts arrive) is the
        one that sees it: the tensor is gone by unpack."""
        for codec, state in (("raw", "copying"), ("zvc", "counting")):
            with self.subTest(codec=codec):
                t = torch.randn(100)
                v = self.eng.pack(t, codec)
                self.assertEqual(state, v.block.state)
                t.mul_(2)
                self.settle()
                self.assertTrue(v.block.modified)
                del t
                gc.collect()
                with self.assertRaisesRegex(VersionError,
                                            "modified by an inplace"):
                    self.eng.unpack(v)

    def test_change_after_the_copy(self):
        t = torch.randn(100)
        v = self.eng.pack(t, "raw")
        self.settle()
        self.assertFalse(v.block.modified)
        t.zero_()
        with self.assertRaises(VersionError):
            self.eng.unpack(v)

    def test_no_change_no_error(self):
        t = torch.randn(100)
        want = t.clone()
        v = self.eng.pack(t, "zvc")
        self.settle()
        self.assertEqual("stored", v.block.state)
        self.assertTrue(torch.equal(want, self.eng.unpack(v)))

    def test_autograd_raises_through_the_hooks(self):
        """exp saves its result; an in-place change after forward raises
        in backward as autograd would without hooks (CPU tensors on the
        CPU path are copied at pack and keep the old value instead)."""
        x = torch.linspace(-2, 2, 1000, requires_grad=True)
        s = ManualStreams()
        with bt.offload("vdnn-all", streams=s, device=MemDevice(),
                        min_bytes=0):
            y = torch.exp(x)
        with torch.no_grad():
            y.add_(1.0)
        s.complete()
        with self.assertRaisesRegex(RuntimeError, "inplace"):
            y.backward(torch.ones_like(y))


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Pool(unittest.TestCase):
    def test_regions_are_carved_aligned_and_coalesced(self):
        host = []
        pool = PinnedPool(lambda n: host.append(n) or
                          torch.empty(n, dtype=torch.uint8), 1 << 12)
        a, b, c = pool.alloc(100), pool.alloc(ALIGN + 1), pool.alloc(10)
        self.assertEqual([0, ALIGN, 3 * ALIGN], [a.offset, b.offset,
                                                  c.offset])
        self.assertEqual([100, ALIGN + 1, 10], [r.tensor.numel()
                                                for r in (a, b, c)])
        self.assertEqual([1 << 12], host)
        pool.free(a)
        pool.free(b)                   # merges with a's
        d = pool.alloc(3 * ALIGN - 1)
        self.assertEqual(0, d.offset)
        pool.free(c)
        pool.free(d)
        self.assertEqual(0, pool.used_bytes)
        self.assertEqual([[0, 1 << 12]], pool._free[0])
        # larger than a slab: a power-of-two slab of its own
        big = pool.alloc(5000)
        self.assertEqual([1 << 12, 1 << 13], host)
        self.assertEqual(2, pool.slabs)
        pool.free(big)
        pool.release()                 # both wholly free: both go back
        self.assertEqual(0, pool.reserved_bytes)
        self.assertEqual(0, pool.slabs)
        self.assertEqual(0, pool.alloc(10).offset)     # a new slab
        self.assertEqual([1 << 12, 1 << 13, 1 << 12], host)

    def test_a_region_in_use_is_reused_only_after_its_event(self):
        s = ManualStreams()
        pool = PinnedPool(s.host_empty, 1 << 12, limit_bytes=1 << 12)
        a = pool.alloc(1 << 12)
        ev = s.record("in")
        pool.free(a, ev)
        self.assertEqual(1 << 12, pool.used_bytes)
        # at the limit, alloc waits for the event that holds the region
        b = pool.alloc(100)
        self.assertIsNotNone(b)
        self.assertEqual(1, pool.waits)
        self.assertEqual(1, s.syncs)
        # with no region held, at the limit: None
        self.assertIsNone(pool.alloc(1 << 12))
        ev2 = s.record("in")
        pool.free(b, ev2)
        s.complete()
        self.assertIsNotNone(pool.alloc(1 << 12))
        self.assertEqual(1, s.host)

    def test_slab_size_is_a_power_of_two(self):
        with self.assertRaises(ValueError):
            PinnedPool(HostStreams().host_empty, 3000)


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Prefetch(unittest.TestCase):
    def setUp(self):
        self.s = ManualStreams()
        self.st = bt.OffloadStats()
        self.eng = GpuOffload(self.s, PinnedPool(self.s.host_empty, 1 << 20),
                              self.st, None, prefetch_bytes=3000)
        # 8 tensors of 1000 bytes
        self.ts = [torch.full((250,), float(i + 1)) for i in range(8)]
        self.views = [self.eng.pack(t, "raw") for t in self.ts]

    def fetched(self):
        return [i for i, v in enumerate(self.views)
                if v.block.fetch is not None]

    def test_reverse_pack_order_within_the_budget(self):
        self.eng.start_backward()
        self.assertEqual([5, 6, 7], self.fetched())
        # the fetches of blocks whose copy out is in flight wait for it
        outs = [e for s, e in self.s.waits if s == "in"]
        self.assertEqual(3, len(outs))
        self.s.complete()
        self.assertTrue(torch.equal(self.ts[7], self.eng.unpack(
            self.views[7])))
        self.assertEqual([4, 5, 6], self.fetched())
        self.assertEqual(1, self.st.prefetch_hits)
        # a fetch still in flight: late; the caller's stream waits for it
        self.assertEqual(1, self.s.pending("in"))
        self.eng.unpack(self.views[4])
        self.assertEqual(1, self.st.prefetch_late)
        self.assertEqual("compute", self.s.waits[-1][0])
        # 4 was taken out of order: the window continues below it, within
        # the budget that 5 and 6 still hold
        self.assertEqual([3, 5, 6], self.fetched())
        self.s.complete()
        for i in (6, 5, 3, 2, 1, 0):
            self.assertTrue(torch.equal(self.ts[i],
                                        self.eng.unpack(self.views[i])))
        self.assertEqual(0, self.st.prefetch_misses)
        self.assertEqual(8, self.st.unpacks)
        self.assertEqual(8000, self.st.pcie_in_bytes)

    def test_a_block_not_fetched_is_a_miss(self):
        self.eng.start_backward()
        self.s.complete()
        self.eng.unpack(self.views[0])
        self.assertEqual(1, self.st.prefetch_misses)

    def test_no_budget_no_prefetch(self):
        self.eng.prefetch_bytes = 0
        self.eng.start_backward()
        self.assertEqual([], self.fetched())
        self.s.complete()
        self.eng.unpack(self.views[7])
        self.assertEqual(0, self.st.prefetch_misses + self.st.prefetch_hits)

    def test_one_block_larger_than_the_budget_is_still_fetched(self):
        self.eng.prefetch_bytes = 10
        self.eng.start_backward()
        self.assertEqual([7], self.fetched())


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Deferred(unittest.TestCase):
    """Codecs whose size depends on the data wait for their counts without
    stopping the host, up to deferred_bytes."""

    def test_pack_does_not_wait_for_the_counts(self):
        s = ManualStreams()
        st = bt.OffloadStats()
        eng = GpuOffload(s, PinnedPool(s.host_empty, 1 << 20), st, None, 0,
                         deferred_bytes=1 << 20)
        ts = [activations(1000, 0.6, i) for i in range(4)]
        views = [eng.pack(t, "zvc") for t in ts]
        self.assertEqual(0, s.syncs)
        self.assertEqual(["counting"] * 4, [v.block.state for v in views])
        self.assertEqual(0, st.offloaded)
        s.complete("out")
        eng.poll()                      # counts in: streams made, copied
        self.assertEqual(["copying"] * 4, [v.block.state for v in views])
        want = sum(tc.stream_len("zvc", 4000, int((t != 0).sum()))
                   for t in ts)
        self.assertEqual(want, st.stored_bytes)
        self.assertEqual(want + 4 * 32, st.pcie_out_bytes)   # + the index
        s.complete()
        eng.poll()
        eng.start_backward()
        s.complete()
        for t, v in zip(ts, views):
            self.assertTrue(torch.equal(t, eng.unpack(v)))

    def test_beyond_deferred_bytes_pack_waits_for_the_oldest(self):
        s = ManualStreams()
        st = bt.OffloadStats()
        eng = GpuOffload(s, PinnedPool(s.host_empty, 1 << 20), st, None, 0,
                         deferred_bytes=2500)
        views = [eng.pack(activations(250, 0.5, i), "csr") for i in range(4)]
        self.assertEqual(2, st.host_syncs)
        self.assertEqual(["copying", "copying", "counting", "counting"],
                         [v.block.state for v in views])
        # end of forward: the ones still counting stay where they are
        eng.start_backward()
        self.assertEqual(["copying", "copying", "device", "device"],
                         [v.block.state for v in views])
        self.assertEqual([2, 2000], st.kept_reasons["late"])


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Training(unittest.TestCase):
    """Every lossless policy on the stream path gives the baseline's loss
    and gradients bit for bit, several steps, with HostStreams and with
    ManualStreams whose events complete only at the end of each forward."""

    def setUp(self):
        torch.use_deterministic_algorithms(True)
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)
        cache_dir_env(self)
        warnings.simplefilter("ignore", RuntimeWarning)
        self.addCleanup(warnings.resetwarnings)

    def tearDown(self):
        torch.set_num_threads(self.threads)
        torch.use_deterministic_algorithms(False)

    def run_policies(self, model, batch, streams_of, policies, steps=3):
        base = step(model, batch=batch)
        self.assertTrue(identical(base, step(model, batch=batch)))
        out = {}
        for policy in policies:
            with self.subTest(policy=policy):
                streams = streams_of()
                off = bt.offload(policy, streams=streams, device=MemDevice(),
                                 measure_decisions=policy == "cswap",
                                 min_bytes=0)
                for k in range(steps):
                    if isinstance(streams, ManualStreams):
                        res = self.manual_step(model, off, batch, streams)
                    else:
                        res = step(model, off, batch)
                    if policy in bt.LOSSLESS:
                        self.assertTrue(identical(base, res), f"step {k}")
                out[policy] = off.stats
        return out

    @staticmethod
    def manual_step(model, off, batch, streams):
        x, y = batch
        model.zero_grad(set_to_none=True)
        with off:
            loss = torch.nn.functional.cross_entropy(model(x), y)
        streams.complete()
        loss.backward()
        return loss.detach().clone(), [p.grad.clone()
                                       for p in model.parameters()]

    def test_cnn_every_policy(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        for streams_of in (HostStreams, lambda: ManualStreams(lag=3)):
            stats = self.run_policies(model, batch, streams_of, bt.POLICIES)
            for policy, st in stats.items():
                with self.subTest(policy=policy, streams=streams_of):
                    if policy in ("none", "cdma-rle", "cdma-zlib"):
                        self.assertEqual(0, st.offloaded)
                        continue
                    self.assertGreater(st.offloaded, 0)
                    self.assertEqual(st.pcie_out_bytes, st.pcie_in_bytes)
                    self.assertEqual(st.packs, st.params + st.duplicates +
                                     st.kept + st.offloaded +
                                     st.views_shared)
            self.assertEqual({"binarize", "csr", "none"} | set(),
                             set(stats["gist"].by_codec) | {"none"})
            self.assertIn("zvc", stats["cdma"].by_codec)
            self.assertGreater(stats["cswap"].cswap_decisions, 0)
            self.assertEqual(stats["cswap"].cswap_decisions,
                             sum(stats["cswap"].cswap_best.values()))

    def test_attention_with_split_projections(self):
        torch.manual_seed(3)
        model = TinyAttention()
        g = torch.Generator().manual_seed(4)
        batch = (torch.randn(2, 16, 32, generator=g),
                 torch.randint(0, 10, (2,), generator=g))
        stats = self.run_policies(model, batch, HostStreams,
                                  ("vdnn-all", "cdma", "gist", "cswap"))
        self.assertGreater(stats["vdnn-all"].views_shared, 0)

    def test_autocast_weight_copies_are_kept_as_parameters(self):
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 10))
        x = torch.randn(32, 64)
        off = bt.offload("vdnn-all", streams=HostStreams(),
                         device=MemDevice(), min_bytes=0)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            with off:
                loss = model(x).float().sum()
        loss.backward()
        # the bfloat16 copies of the last two weights (saved as mm's
        # transposed operand; the first one is not saved, its input needs
        # no gradient) are parameters; the ReLUs' outputs go
        self.assertEqual(2, off.stats.params)
        self.assertGreater(off.stats.offloaded, 0)

    def test_graph_capture_and_compile_keep_tensors(self):
        class Capturing(HostStreams):
            def capturing(self):
                return True
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, batch=batch)
        off = bt.offload("vdnn-all", streams=Capturing(), device=MemDevice(),
                         min_bytes=0)
        self.assertTrue(identical(base, step(model, off, batch)))
        self.assertEqual(0, off.stats.offloaded)
        self.assertIn("graph_capture", off.stats.kept_reasons)
        old = bt.hooks._compiling
        bt.hooks._compiling = lambda: True
        try:
            off = bt.offload("vdnn-all", streams=HostStreams(),
                             device=MemDevice(), min_bytes=0)
            self.assertTrue(identical(base, step(model, off, batch)))
        finally:
            bt.hooks._compiling = old
        self.assertEqual(0, off.stats.offloaded)
        self.assertIn("compiling", off.stats.kept_reasons)

    def test_small_gpu_tensors_stay_by_default(self):
        model = small_cnn()
        batch = fixed_batch((16, 1, 28, 28), 10)
        off = bt.offload("vdnn-all", streams=HostStreams(),
                         device=MemDevice())
        step(model, off, batch)
        small, n = off.stats.kept_reasons["min_bytes"]
        self.assertGreater(small, 0)
        self.assertLess(n, small * bt.GPU_MIN_BYTES)
        self.assertGreater(off.stats.offloaded, 0)     # the 400 KB ones

    def test_pinned_pool_full_keeps_tensors(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, batch=batch)
        off = bt.offload("vdnn-all", streams=HostStreams(),
                         device=MemDevice(), pinned_limit=1, min_bytes=0)
        self.assertTrue(identical(base, step(model, off, batch)))
        self.assertEqual(0, off.stats.offloaded)
        self.assertGreater(off.stats.kept_reasons["pinned_full"][0], 0)

    def test_destination_buddy_through_the_staging(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, batch=batch)
        dev = MemDevice()
        off = bt.offload("cdma", streams=HostStreams(), device=dev,
                         destination="buddy", min_bytes=0)
        for _ in range(2):
            self.assertTrue(identical(base, step(model, off, batch)))
        self.assertEqual(off.stats.offloaded, len(dev.calls))
        self.assertEqual(0, dev.live)


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Recipe(unittest.TestCase):
    def test_deterministic_recipe(self):
        old = os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
        bench = torch.backends.cudnn.benchmark
        try:
            torch.backends.cudnn.benchmark = True
            bt.deterministic_recipe()
            self.assertEqual(":4096:8", os.environ["CUBLAS_WORKSPACE_CONFIG"])
            self.assertTrue(torch.are_deterministic_algorithms_enabled())
            self.assertTrue(
                torch.is_deterministic_algorithms_warn_only_enabled())
            self.assertFalse(torch.backends.cudnn.benchmark)
            self.assertTrue(torch.backends.cudnn.deterministic)
        finally:
            torch.use_deterministic_algorithms(False)
            torch.backends.cudnn.benchmark = bench
            torch.backends.cudnn.deterministic = False
            if old is None:
                os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
            else:
                os.environ["CUBLAS_WORKSPACE_CONFIG"] = old


if torch is not None:
    class TinyAttention(torch.nn.Module):
        """One attention block as GPT-2 writes it: one projection split
        into q, k and v (views of one storage), heads by view+transpose."""

        def __init__(self, d=32, heads=4):
            super().__init__()
            self.heads = heads
            self.qkv = torch.nn.Linear(d, 3 * d)
            self.proj = torch.nn.Linear(d, d)
            self.head = torch.nn.Linear(d, 10)

        def forward(self, x):
            b, n, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q, k, v = (t.view(b, n, self.heads, d // self.heads)
                       .transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
            y = att.softmax(-1) @ v
            y = y.transpose(1, 2).reshape(b, n, d)
            y = torch.nn.functional.gelu(self.proj(y))
            return self.head(y.mean(1))


if __name__ == "__main__":
    unittest.main()
