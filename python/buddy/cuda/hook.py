# SPDX-License-Identifier: GPL-2.0 OR MIT
"""The hook inside the profiled program: torch glue for snapshot.py,
schedule.py, staging.py and records.py.

Installed by install_from_env() (the sitecustomize that `python3 -m
buddy.cuda run` puts on PYTHONPATH) in every Python process of the run,
before the program's own code:

- when torch is imported, it wraps torch.autograd.backward and
  torch.autograd.grad (Tensor.backward calls the former), and queues,
  with torch.cuda._lazy_call(), the start of the allocator's stack
  recording for the moment CUDA initialises: before the first CUDA
  allocation, so that every block has its stack;
- at the start of an outermost backward pass (a backward inside another,
  as reentrant checkpointing makes, is not one), on the schedule, it
  takes a snapshot: the program waits while every block of every segment
  is copied to pinned host memory and sized (staging.py), and the
  records are appended to DIR/cuda-PID.tsv;
- at exit it measures what the stack recording cost (a run of small
  allocations with and without it, at the stack depth the snapshots saw)
  and writes the end record.

A process forked by a profiled one starts afresh (its own record file,
schedule and sizing threads).  Nothing here ever raises into the program:
a failure is written to stderr and in a note, and the hook stops.
"""
import atexit
import inspect
import importlib.abc
import importlib.util
import os
import sys
import threading
import time

from .. import _codec
from . import records, schedule, snapshot, staging

ENV_DIR = "BUDDY_CUDA_DIR"
ENV_POINTS = "BUDDY_CUDA_POINTS"
ENV_EVERY = "BUDDY_CUDA_EVERY"
ENV_CODECS = "BUDDY_CUDA_CODECS"
ENV_PIECE = "BUDDY_CUDA_PIECE_MIB"
ENV_THREADS = "BUDDY_CUDA_THREADS"

HERE = os.path.dirname(os.path.abspath(__file__))
_hook = None


def _say(msg):
    sys.stderr.write(f"buddy.cuda: pid {os.getpid()}: {msg}\n")
    sys.stderr.flush()


def codec_mask(names):
    """The library's codec mask of a comma-separated list of names."""
    mask = 0
    for n in names.split(","):
        n = n.strip()
        if n not in _codec.CODECS:
            raise ValueError(f"codec {n!r}: not one of "
                             + ", ".join(_codec.CODECS))
        mask |= 1 << _codec.CODECS.index(n)
    return mask


def _env_int(name):
    """torchrun's @name as a number, -1 when unset or not one."""
    try:
        return int(os.environ.get(name, "-1"))
    except ValueError:
        return -1


class _CudaArray:
    """A device range as __cuda_array_interface__, for torch.as_tensor:
    a view of memory the caching allocator owns, no copy, no allocation."""

    def __init__(self, addr, n):
        self.__cuda_array_interface__ = {
            "shape": (n,), "typestr": "|u1", "data": (addr, False),
            "strides": None, "version": 2}


class CudaStaging:
    """staging.py's device: two pinned host buffers, copies on a side
    stream per device."""

    def __init__(self, torch, nbytes):
        self.torch = torch
        self.bufs = [torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
                     for _ in range(2)]
        self.events = [None, None]
        self.streams = {}

    def buffer(self, i):
        return self.bufs[i].data_ptr()

    def copy(self, i, piece):
        torch = self.torch
        s = self.streams.get(piece.device)
        if s is None:
            s = self.streams[piece.device] = torch.cuda.Stream(
                device=piece.device)
        src = torch.as_tensor(_CudaArray(piece.addr, piece.nbytes))
        with torch.cuda.stream(s):
            self.bufs[i][:piece.nbytes].copy_(src, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(s)
        self.events[i] = ev

    def wait(self, i):
        self.events[i].synchronize()


class Hook:
    def __init__(self, out_dir, points=10, every=0, codecs=_codec.ALL,
                 piece_bytes=64 << 20, threads=0):
        self.out_dir = out_dir
        self.points, self.every, self.codecs = points, every, codecs
        self.piece_bytes, self.threads = piece_bytes, threads
        self.torch = None
        self.history = "off"
        self.from_start = False
        self.lock = threading.Lock()
        self.callbacks = []
        self._fresh()

    def _fresh(self):
        """Per-process state (again in a forked child)."""
        self.pid = os.getpid()
        self.t0 = time.time()
        self.t0_mono = time.monotonic()
        self.schedule = schedule.Schedule(self.points, 1, self.every)
        self.progress = 0
        self.depth = 0
        self.nsnap = 0
        self.writer = None
        self.sizer = None
        self.staging = None
        self.stopped = False
        self.frames_seen = []
        self.noted = set()

    # --- installation -------------------------------------------------------

    def install(self):
        if "torch" in sys.modules:
            self.on_torch(sys.modules["torch"])
        else:
            sys.meta_path.insert(0, _TorchWatcher(self))
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self):
        self._fresh()
        self.lock = threading.Lock()

    def on_torch(self, torch):
        """torch has been imported: wrap backward, queue the recording."""
        try:
            self.torch = torch
            # after torch's own exit handlers were registered: this one
            # runs first, while CUDA still works
            atexit.register(self.at_exit)
            ag = torch.autograd
            ag.backward = self._wrap(ag.backward)
            ag.grad = self._wrap(ag.grad)
            if torch.cuda.is_initialized():
                self._start_history()
            else:
                self.from_start = True
                torch.cuda._lazy_call(self._start_history)
        except Exception as e:          # never into the program
            self._fail(f"cannot hook torch {getattr(torch, '__version__', '?')}: {e}")

    def _start_history(self):
        """Start the allocator's stack recording (the API's shape differs
        between torch versions)."""
        try:
            self.history = start_history(self.torch)
        except Exception as e:
            self.history = "off"
            self.from_start = False
            _say(f"stack recording not available ({e}): blocks are "
                 "labelled <no-stack>")

    def _wrap(self, fn):
        hook = self

        def wrapper(*args, **kwargs):
            try:
                hook.before_backward()
            except Exception as e:      # never into the program
                hook._fail(f"{type(e).__name__}: {e}")
            hook.depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                hook.depth -= 1
        wrapper.__wrapped__ = fn
        wrapper.__name__ = getattr(fn, "__name__", "backward")
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        return wrapper

    # --- snapshots ----------------------------------------------------------

    def before_backward(self):
        if self.depth or self.stopped or os.getpid() != self.pid:
            return
        torch = self.torch
        if not torch.cuda.is_initialized():
            return
        self.progress += 1
        if not self.schedule.due(self.progress):
            return
        with self.lock:
            try:
                self.snapshot()
            except Exception as e:
                self._fail(f"snapshot at backward {self.progress} failed: "
                           f"{type(e).__name__}: {e}")

    def _open(self):
        os.makedirs(self.out_dir, exist_ok=True)
        torch = self.torch
        proc = {"pid": self.pid, "ppid": os.getppid(),
                "rank": _env_int("RANK"),
                "local_rank": _env_int("LOCAL_RANK"),
                "world": _env_int("WORLD_SIZE"),
                "t0": self.t0, "torch": torch.__version__,
                "backend": allocator_backend(torch),
                "exe": os.path.basename(sys.executable),
                "argv": list(sys.argv)}
        self.writer = records.Writer(
            os.path.join(self.out_dir, f"cuda-{self.pid}.tsv"), proc,
            self.history, self.from_start, self.codecs)
        conf = alloc_conf()
        if "expandable_segments:true" in conf.replace(" ", "").lower():
            self.writer.note("expandable_segments: a segment is one cuMemMap "
                             "range, grown in place, not one cudaMalloc")
        return proc["backend"]

    def snapshot(self):
        torch = self.torch
        t_start = time.monotonic()
        if self.writer is None:
            backend = self._open()
            if backend != "native":
                self._note_once("backend",
                                f"allocator backend {backend}: the caching "
                                "allocator's snapshot is unsupported there, "
                                "nothing is measured")
        if "backend" in self.noted:
            return
        for d in devices_in_use(torch):
            torch.cuda.synchronize(d)
        snap = snapshot.parse(torch.cuda.memory_snapshot())
        lab = snapshot.Labeller([os.path.dirname(torch.__file__), HERE],
                                self.from_start and self.history != "off")
        lab.label_all(snap)
        for note in snap.notes:
            self._note_once(note, note)
        blocks = list(snap.blocks())
        if self.sizer is None:
            self.sizer = _codec.Sizer(self.threads)
        if self.staging is None:
            self.staging = CudaStaging(torch, self.piece_bytes)
        pieces = staging.plan(blocks, self.piece_bytes)
        stats, tm = staging.run(pieces, len(blocks), self.staging, self.sizer,
                                self.codecs)
        for pc, why in tm.failed[:3]:
            self._note_once(f"copy:{why}", f"a copy failed ({pc}): {why}")
        for b in blocks:
            if b.state == "active":
                self.frames_seen.append(len(b.frames))
        for cb in self.callbacks:
            cb(self, snap, blocks, stats)
        t_end = time.monotonic()
        sid = self.nsnap
        self.nsnap += 1
        self.writer.snapshot(sid, t_start - self.t0_mono, self.progress,
                             (t_end - t_start) * 1e3, tm.wait_s * 1e3,
                             tm.size_s * 1e3, snap, blocks, stats)
        for d in self.schedule.taken(sid, self.progress):
            self.writer.drop(d)

    def _note_once(self, key, text):
        if key in self.noted or self.writer is None:
            return
        self.noted.add(key)
        self.writer.note(text)

    def _fail(self, msg):
        self.stopped = True
        _say(msg + "; profiling stops here")
        if self.writer is not None:
            self.writer.note(msg)

    # --- the end ------------------------------------------------------------

    def at_exit(self):
        if os.getpid() != self.pid or self.writer is None:
            return
        kept, dropped = self.schedule.finish()
        for d in dropped:
            self.writer.drop(d)
        allocs, cost = 0, 0.0
        try:
            torch = self.torch
            allocs = torch.cuda.memory_stats().get(
                "allocation.all.allocated", 0)
            if self.history != "off":
                depth = sorted(self.frames_seen)[len(self.frames_seen) // 2] \
                    if self.frames_seen else 8
                cost = allocs * recording_cost(torch, depth)
        except Exception as e:
            self.writer.note(f"the stack recording's cost was not measured: {e}")
        self.writer.end(time.monotonic() - self.t0_mono, self.progress, allocs,
                        cost, kept)
        self.writer.close()
        self.writer = None


class _TorchWatcher(importlib.abc.MetaPathFinder):
    """Tells the hook when torch has been imported (the first find_spec
    of "torch": the module runs, then the hook)."""

    def __init__(self, hook):
        self.hook = hook

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module
        hook = self.hook

        def exec_module(module):
            run(module)
            hook.on_torch(module)
        spec.loader.exec_module = exec_module
        return spec


def start_history(torch):
    """Start recording the Python stack of every allocation; returns what
    was started.  torch 2.1+: _record_memory_history(enabled="state",
    context="state", stacks="python") (stacks of live blocks only, no
    event trace); 2.0: the boolean form with record_context; 1.13: the
    boolean form, per device."""
    fn = torch.cuda.memory._record_memory_history
    params = inspect.signature(fn).parameters
    if "stacks" in params:
        try:
            fn(enabled="state", context="state", stacks="python")
        except (TypeError, RuntimeError):
            fn(enabled="state", stacks="python")
        return "python"
    if "record_context" in params:
        fn(True, record_context=True, trace_alloc_max_entries=1,
           trace_alloc_record_context=False)
        return "python (2.0)"
    for d in range(torch.cuda.device_count()):
        fn(True, device=d)
    return "python (1.13)"


def stop_history(torch):
    fn = torch.cuda.memory._record_memory_history
    if "stacks" in inspect.signature(fn).parameters:
        fn(enabled=None)
    else:
        for d in range(torch.cuda.device_count()):
            with torch.cuda.device(d):
                fn(False)


def recording_cost(torch, depth, n=2000):
    """Seconds the stack recording adds to one allocation at a Python
    stack @depth deep: n small allocations timed with it, then without
    (it is stopped: call at the end only)."""
    def timed(k):
        if k > 0:
            return timed(k - 1)
        x = torch.empty(1, device="cuda")
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            x = torch.empty(512, device="cuda")
            del x
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / n

    base = min(depth, 200) - len(inspect.stack(0))
    with_rec = min(timed(max(base, 0)) for _ in range(3))
    stop_history(torch)
    without = min(timed(max(base, 0)) for _ in range(3))
    return max(0.0, with_rec - without)


def devices_in_use(torch):
    """The devices this process has a context on (synchronizing another
    would create one: hundreds of MiB of its memory)."""
    has = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    if has is None:
        return [torch.cuda.current_device()]
    return [d for d in range(torch.cuda.device_count()) if has(d)]


def alloc_conf():
    return os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") + "," + \
        os.environ.get("PYTORCH_ALLOC_CONF", "")


def allocator_backend(torch):
    """"native" or "cudaMallocAsync" (torch 1.13 has the native one only)."""
    get = getattr(torch.cuda, "get_allocator_backend", None)
    if get is not None:
        try:
            return get()
        except Exception:
            pass
    return "cudaMallocAsync" if "cudamallocasync" in \
        alloc_conf().replace(" ", "").lower() else "native"


def current():
    """The hook installed in this process, or None."""
    return _hook


def install(out_dir, **kw):
    """Install the hook in this process (once); returns it."""
    global _hook
    if _hook is None:
        _hook = Hook(out_dir, **kw)
        _hook.install()
    return _hook


def install_from_env():
    """Install from the environment `python3 -m buddy.cuda run` sets;
    nothing when BUDDY_CUDA_DIR is not set."""
    d = os.environ.get(ENV_DIR)
    if not d:
        return None
    try:
        return install(
            d, points=int(os.environ.get(ENV_POINTS, "10")),
            every=int(os.environ.get(ENV_EVERY, "0")),
            codecs=codec_mask(os.environ.get(ENV_CODECS, "bpc,zvc,bdi,fpc")),
            piece_bytes=int(os.environ.get(ENV_PIECE, "64")) << 20,
            threads=int(os.environ.get(ENV_THREADS, "0")))
    except Exception as e:
        _say(f"not profiling: {type(e).__name__}: {e}")
        return None
