# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.plan - which backward nodes read each saved activation:
Plan, probe() and the walk of grad_fn behind them, and what a saved tensor
is (a parameter, or autocast's copy of one)."""
import torch
from torch.autograd.graph import saved_tensors_hooks

from buddy.torch.policy import BINARIZE_OK


def _layer(node):
    return node.rstrip("0123456789").replace("Backward", "") or "?"


class Plan:
    """What probe() (or the first step of a policy without a plan) learnt:
    for pack number i, shapes[i] and consumers[i], the set of (backward
    node type, saved attribute) that read the tensor (merged over the packs
    of the same tensor; an unknown reader is ("?", "?")), nbytes[i],
    params[i] (a parameter), first[i], the first pack of the same tensor,
    and producers[i], the type of the node that made it (None for a
    leaf)."""

    def __init__(self):
        self.shapes, self.consumers, self.nbytes, self.params = [], [], [], []
        self.first, self.producers = [], []

    def __len__(self):
        return len(self.shapes)

    def add(self, t, first, param):
        """Row of a pack of @t (number len(self)); @first: the first pack of
        the same tensor."""
        self.shapes.append(tuple(t.shape))
        self.nbytes.append(t.numel() * t.element_size())
        self.consumers.append(set())
        self.params.append(param)
        self.first.append(first)
        self.producers.append(_producer(t))

    def matches(self, i, t):
        """Pack @i of a later step is the tensor this plan saw there."""
        return i < len(self) and self.shapes[i] == tuple(t.shape) and \
            self.producers[i] == _producer(t)

    def layer(self, i):
        names = sorted({_layer(n) for n, _ in self.consumers[i]} - {"?"})
        return "+".join(names) or "?"

    def conv_input(self, i):
        return ("ConvolutionBackward0", "input") in self.consumers[i]

    def binarizable(self, i):
        c = self.consumers[i]
        return bool(c) and c <= BINARIZE_OK

    def saved_bytes(self):
        """Bytes of the distinct saved activations (no parameters)."""
        return sum(self.nbytes[i] for i in range(len(self))
                   if not self.params[i] and self.first[i] == i)


def _producer(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def _walk_saved(roots, read):
    """Visit every node reachable from @roots and read each saved tensor
    attribute; read(node name, field, getter) does the read, whose unpack
    hook names the pack."""
    seen, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        name = type(node).__name__
        for attr in dir(node):
            if attr.startswith("_raw_saved_"):
                field = attr[len("_raw_saved_"):]
                read(name, field, lambda n=node, f=field:
                     getattr(n, "_saved_" + f))
        stack.extend(f for f, _ in node.next_functions)


def _merge(plan, groups):
    for idx in groups.values():
        merged = set().union(*(plan.consumers[i] for i in idx))
        for i in idx:
            plan.consumers[i] = merged


def probe(fn):
    """Run @fn (a forward returning a tensor with a grad_fn) once under
    numbering hooks and walk grad_fn: the Plan of its packs.  It is a real
    forward: batch norm's running statistics move as in any forward (a
    policy left without a plan learns it in its first step instead)."""
    plan, tensors, groups, last = Plan(), [], {}, []

    def pack(t):
        i = len(plan.shapes)
        key = (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()),
               t._version)
        groups.setdefault(key, []).append(i)
        plan.add(t, groups[key][0], _is_param(t))
        tensors.append(t)
        return i

    def unpack(i):
        last.append(i)
        return tensors[i]

    def read(name, field, get):
        last.clear()
        try:
            get()
        except RuntimeError:
            return
        for i in last:
            plan.consumers[i].add((name, field))

    with saved_tensors_hooks(pack, unpack):
        out = fn()
    _walk_saved([out.grad_fn], read)
    _merge(plan, groups)
    tensors.clear()
    del out
    return plan


def _is_param(t):
    base = t._base if t._base is not None else t
    return isinstance(base, torch.nn.Parameter) or \
        (base.is_leaf and base.requires_grad) or _is_autocast_weight(base)


def _is_autocast_weight(t):
    """A lower-precision copy of a parameter (autocast's cast, which it
    caches for the whole region: offloading it would free nothing)."""
    fn = t.grad_fn
    if fn is None or type(fn).__name__ != "ToCopyBackward0":
        return False
    nxt = [n for n, _ in fn.next_functions if n is not None]
    return bool(nxt) and all(type(n).__name__ == "AccumulateGrad"
                             for n in nxt)
