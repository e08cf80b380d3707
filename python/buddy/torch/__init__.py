# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch - keep the activations PyTorch saves for backward out of
memory: vDNN, cDMA, CSWAP and Gist as training policies, for CPU tensors
in buddy memory and for CUDA tensors in pinned host memory.

    import buddy.torch as bt
    for x, y in loader:
        with bt.offload(policy="gist") as off:
            loss = loss_fn(model(x), y)
        loss.backward()
    print(off.stats)

offload() is a context manager over torch.autograd.graph.saved_tensors_hooks:
during forward, pack() copies each saved activation out and autograd keeps
only a handle; during backward, unpack() brings it back, from a prefetch
if it guessed right.  A CPU tensor goes into a buddy allocation (raw,
compressed by the device, or encoded by one of libbuddy's whole-buffer
codecs, buddy.Codec), read back by a worker thread; a CUDA tensor is
encoded on the GPU and copied on side streams (buddy/gpu_offload.py).
The copy is freed when autograd drops the handle; the context's worker
and device when it has been left and its last handle is gone.

What the hooks do, and what pack() does about it:
  - pack also receives parameters (and views of them, and autocast's
    lower-precision copies of them): kept as they are;
  - pack receives the same tensor more than once (a ReLU's output saved by
    the ReLU and by the max-pool after it): one handle serves both, found
    by data pointer, dtype, shape, stride and _version while the first
    tensor is alive;
  - hooks bypass autograd's in-place check, so pack copies CPU tensors
    synchronously, and records the version of CUDA tensors, whose copy is
    asynchronous, to check it when the copy completes and at unpack;
  - pack does not know which operation saves the tensor.  probe() finds
    out by a walk of grad_fn: it runs one forward with hooks that hand out
    numbered tokens, walks the graph from the output, and reads every
    node's _saved_* attributes, whose unpack names the token: for every
    pack, in order, the backward nodes that read the tensor.  A policy
    without a plan learns it the same way at the end of its first step's
    forward, walking from the nodes that made the saved tensors.
    vdnn-conv (inputs of ConvolutionBackward), Binarize (only ReluBackward
    and MaxPool2DWithIndicesBackward read it) and the layer types of the
    accounting come from that plan.  A pack whose shape or producer
    differs from the plan's is treated as unknown (offloaded losslessly,
    never binarized).
  - unpack is called lazily and there is no hook for the next backward
    node: prefetch predicts by reverse pack order (exact for sequential
    networks, approximate for branches) and stats.prefetch_* say how often
    it was right.

Policies (LOSSLESS: gradients bit-identical to no policy):
  none       nothing offloaded; the same accounting (the baseline)
  vdnn-all   every saved activation, uncompressed (device codec none, 1x)
  vdnn-conv  only the inputs of convolutions (a plan, given or learnt)
  vdnn-dyn   the fewest, earliest-saved activations that bring the saved
             bytes kept in memory under budget= (vDNN's dynamic policy;
             by default budget_fraction of what the first step saves)
  cdma       every one, compressed with ZVC: by the device at target 2x,
             on the GPU for CUDA tensors
  cdma-rle, cdma-zlib
             cDMA's comparison codecs, in userspace (libbuddy's codecs),
             stored at 1x; no GPU encoder: CUDA tensors stay
  cswap      per tensor, compress with the codec of the cost model whose
             predicted codec time plus link time is least, or not at all
             (the model: calibration=, else made on this machine once and
             cached, buddy.cswap_model)
  gist       Binarize for ReLU outputs only ReLU/max-pool backward read,
             CSR where it is smaller than the tensor, else raw
  gist-dpr   gist, and DPR (dpr_bits= 16, 10 or 8) for the rest: LOSSY

The package, by concern:
  hooks.py        offload(): the context manager, pack and unpack
  policy.py       the policies' names and decisions (budget, cost, codec)
  prefetch.py     the worker that reads CPU tensors ahead of backward
  handles.py      what autograd holds for a saved CPU tensor
  plan.py         Plan, probe() and the walk of grad_fn
  calibration.py  load_calibration() and cswap's predictions
  stats.py        OffloadStats, KEEP_REASONS and the warnings
  resources.py    the shared device, streams and pinned pools
"""

# Today's names of buddy.torch, and the private ones tests and tools/eval
# read: _devices, _warned, _is_param.
from buddy import cswap_model  # noqa: F401
from buddy.torch.calibration import load_calibration  # noqa: F401
from buddy.torch.hooks import offload  # noqa: F401
from buddy.torch.plan import BINARIZE_OK, Plan, _is_param, probe  # noqa: F401
from buddy.torch.policy import CSWAP_CODECS, GPU_MIN_BYTES, LOSSLESS, \
    NEED_PLAN, POLICIES, TARGETS  # noqa: F401
from buddy.torch.resources import SLAB_BYTES, _devices, \
    deterministic_recipe, empty_pinned_cache, pinned_pool  # noqa: F401
from buddy.torch.stats import KEEP_REASONS, WARN_REASONS, OffloadStats, \
    _warned  # noqa: F401
