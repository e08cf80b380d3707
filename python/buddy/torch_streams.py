# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch_streams - the streams, events and host buffers the offload
of accelerator tensors uses (buddy.gpu_offload), behind one small
interface, so that the same code runs on a GPU and, in tests, on CPU
tensors.

    CudaStreams(device)  PyTorch's own objects on one CUDA device: two side
                         streams (copies out, copies and decoding in),
                         torch.cuda.Event, record_stream, pinned memory
                         from the caching host allocator
    HostStreams()        for CPU tensors: work runs at once, every event
                         is complete, host memory is ordinary

An event has query() (complete?) and synchronize() (wait for it).
"""
import contextlib

import torch


class _Done:
    """An event that has completed."""

    @staticmethod
    def query():
        return True

    @staticmethod
    def synchronize():
        pass


class HostStreams:
    """The interface for tensors on the CPU: nothing is asynchronous."""
    device = torch.device("cpu")
    copy_out = copy_in = None

    def current(self):
        """The stream the caller's work runs on."""
        return None

    def use(self, stream):
        """Context: work issued inside goes to @stream."""
        return contextlib.nullcontext()

    def wait_stream(self, stream, other):
        """@stream's later work waits for what @other has issued so far."""

    def record(self, stream):
        """An event that completes when @stream's work so far has."""
        return _Done()

    def wait_event(self, stream, event):
        """@stream's later work waits for @event."""

    def hand_over(self, tensor, stream):
        """@tensor's memory is not reused before @stream's work so far is
        done (for a tensor allocated on another stream)."""

    def host_empty(self, nbytes):
        """@nbytes of host memory the device copies to and from."""
        return torch.empty(nbytes, dtype=torch.uint8)

    def capturing(self):
        """True while the current stream is captured into a graph."""
        return False


class CudaStreams(HostStreams):
    """PyTorch's streams and events on one CUDA device."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.copy_out = torch.cuda.Stream(self.device)
        self.copy_in = torch.cuda.Stream(self.device)

    def current(self):
        return torch.cuda.current_stream(self.device)

    def use(self, stream):
        return torch.cuda.stream(stream)

    def wait_stream(self, stream, other):
        stream.wait_stream(other)

    def record(self, stream):
        e = torch.cuda.Event()
        e.record(stream)
        return e

    def wait_event(self, stream, event):
        stream.wait_event(event)

    def hand_over(self, tensor, stream):
        tensor.record_stream(stream)

    def host_empty(self, nbytes):
        # The caching host allocator: pinned, reused once freed and its
        # copies are done; it rounds to a power of two, which the pool's
        # power-of-two slabs never waste.
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)

    def capturing(self):
        return torch.cuda.is_current_stream_capturing()


def for_device(device):
    """The interface for tensors on @device, or None where there is none
    (an accelerator other than CUDA)."""
    device = torch.device(device)
    if device.type == "cuda":
        return CudaStreams(device)
    return None
