# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.prefetch - offload()'s prefetch of CPU tensors: the worker
thread that reads the handles backward needs next, through a thread or
libbuddy's io_uring context."""
import errno
import queue
import threading

import buddy
from buddy.torch.handles import _Fetch


class _Prefetch:
    """offload()'s prefetch worker, and what it queues."""

    def _prefetch_after(self, h):
        """Backward needs the handles in about reverse pack order: queue the
        next prefetch_depth handles saved before @h."""
        if not self.prefetch_depth:
            return
        self._start_worker()
        if self._next is None or h.seq <= self._next:
            self._next = h.seq - 1
        self._queue_prefetch()

    def _start_worker(self):
        if self._worker is None:
            self._queue = queue.Queue()
            self._worker = threading.Thread(target=self._work, daemon=True,
                                            name="buddy-prefetch")
            self._worker.start()

    def _queue_prefetch(self):
        while self._next >= 0 and self._outstanding < self.prefetch_depth:
            nh = self._order[self._next]()
            self._next -= 1
            if nh is None or nh.fetch is not None:
                continue
            nh.fetch = _Fetch()
            self._queue.put((nh, nh.fetch))
            self._outstanding += 1

    def _work(self):
        if self._uring:
            return self._work_uring()
        q = self._queue
        while True:
            item = q.get()
            if item is None:
                return
            h, f = item
            try:
                f.tensor = h.read()
            except BaseException as e:   # handed to unpack
                f.error = e
            f.event.set()
            del h, f, item

    def _work_uring(self):
        """The worker on /dev/buddy: every queued prefetch is a read on
        libbuddy's io_uring context (several in flight), completed as the
        ring reports it.  The context is this thread's own."""
        aio = buddy.Aio(max(2 * self.prefetch_depth, 4))
        q = self._queue
        flight, ud, stop = {}, 0, False
        try:
            while not stop or flight:
                items = []
                if not stop:
                    try:
                        items.append(q.get(block=not flight))
                        while True:
                            items.append(q.get_nowait())
                    except queue.Empty:
                        pass
                for item in items:
                    if item is None:
                        stop = True
                        continue
                    h, f = item
                    ud += 1
                    try:
                        out, dst = h.buffers()
                        aio.read_into(h.alloc, dst, ud)
                        flight[ud] = (h, f, out, dst)
                    except BaseException as e:
                        f.error = e
                        f.event.set()
                # Hold no fetch past its hand-over, as the thread does not:
                # a tensor kept alive here would let a duplicate's second
                # unpack share it where the thread's would read again.
                items = item = h = f = out = dst = None
                if not flight:
                    continue
                for done, res in aio.wait():
                    h, f, out, dst = flight.pop(done)
                    try:
                        want = len(dst) if isinstance(dst, bytearray) \
                            else h.nbytes
                        if res < 0:
                            raise buddy.BuddyError(res, buddy._lib.OP_READ,
                                                   h.alloc._name())
                        if res != want:
                            raise buddy.BuddyError(-errno.EIO,
                                                   buddy._lib.OP_READ,
                                                   h.alloc._name())
                        f.tensor = h.finish(out, dst)
                        with self.stats._lock:
                            self.stats.prefetch_uring += 1
                    except BaseException as e:
                        f.error = e
                    f.event.set()
                    del h, f, out, dst
        finally:
            aio.close()
