#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One small training run under every activation policy, for comparing the
two backends: buddy.ko and the in-process device must give the
same figures for the same data.

    backends.py run OUT.json DEVICE...   # e.g. /dev/buddy inproc:device_mb=64
    backends.py compare OUT.json         # TAP: the first two devices' figures
    backends.py --self-test              # compare rejects changed figures

Both devices run in one process on one CPU (the guest's, for /dev/buddy),
so the activations, and with them the compressed sizes, are the same bytes;
a comparison across machines would also compare their floating point.
"run" trains the Fashion-MNIST-shaped CNN of python/tests/test_torch.py for
two iterations on a fixed seeded batch, one offload() context per policy,
and writes per policy what depends only on the data and the core code: the
logical bytes offloaded and read back, the bytes stored, the device and
buddy sector bytes (Buddy's link), the ratio per codec, and the loss and
gradients (as a digest of their bytes).  Times and prefetch hit counts
depend on scheduling and are left out of the comparison; how many
prefetches were read through io_uring is checked instead: some for every
prefetching policy on the kernel's device, none on the in-process one
(which the worker thread reads).
"""
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))

FIGURES = ("offloaded", "offloaded_bytes", "unpacked_bytes", "stored_bytes",
           "device_sector_bytes", "buddy_sector_bytes", "by_codec",
           "digest")


def run_policies(dev):
    import torch
    import buddy.torch as bt
    from test_torch import small_cnn, fixed_batch, step, policy_args, loss_of

    torch.manual_seed(0)
    model = small_cnn()
    batch = fixed_batch((8, 1, 28, 28), 10)
    plan = bt.probe(lambda: loss_of(model, batch))
    res = {}
    for policy in bt.POLICIES:
        off = bt.offload(policy, device=dev, **policy_args(policy, plan))
        h = hashlib.sha256()
        for _ in range(2):
            loss, grads = step(model, off, batch)
            for t in [loss] + grads:
                h.update(t.numpy().tobytes())
        off.close()
        st = off.stats.as_dict()
        res[policy] = {k: st[k] for k in FIGURES if k != "digest"}
        res[policy]["digest"] = h.hexdigest()
        res[policy]["prefetch_uring"] = st["prefetch_uring"]
        print(f"backends.py: {policy}: {res[policy]['offloaded_bytes']} B "
              f"offloaded, {res[policy]['buddy_sector_bytes']} B over the "
              "buddy link", flush=True)
    return res


def run(out, devices):
    sys.path.insert(0, os.path.join(TREE, "python"))
    sys.path.insert(0, os.path.join(TREE, "python", "tests"))
    import torch
    import buddy

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    res = {"devices": devices}
    for path in devices:
        print(f"backends.py: device {path}", flush=True)
        res[path] = run_policies(buddy.Device(path))
    with open(out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)


def compare(a, b):
    """TAP lines and the number of failures."""
    lines, fails = [], 0
    for policy in sorted(set(a) | set(b)):
        for k in FIGURES:
            x = a.get(policy, {}).get(k)
            y = b.get(policy, {}).get(k)
            ok = x is not None and x == y
            fails += not ok
            lines.append(f"{'ok' if ok else 'not ok'} {len(lines) + 1} - "
                         f"{policy} {k}" + ("" if ok else f": {x} != {y}"))
    return lines, fails


def uring_lines(doc, start):
    """TAP lines, from number @start, and failures: on the kernel's device
    every prefetching policy read its prefetches through io_uring
    (libbuddy_aio.c), on the in-process one through the thread."""
    lines, fails = [], 0
    for path in doc["devices"][:2]:
        kernel = not path.startswith("inproc")
        for policy, fig in sorted(doc[path].items()):
            if policy == "none":
                continue            # no prefetch
            n = fig.get("prefetch_uring")
            ok = n is not None and (n > 0 if kernel else n == 0)
            fails += not ok
            lines.append(f"{'ok' if ok else 'not ok'} {start + len(lines)} - "
                         f"{path} {policy} prefetch "
                         f"{'through io_uring' if kernel else 'on the thread'}"
                         f": {n} io_uring reads")
    return lines, fails


def self_test():
    a = {"cdma": {k: 1 for k in FIGURES}}
    lines, fails = compare(a, json.loads(json.dumps(a)))
    good = fails == 0
    b = json.loads(json.dumps(a))
    b["cdma"]["buddy_sector_bytes"] = 2
    bad = compare(a, b)[1] == 1
    gone = compare(a, {})[1] == len(FIGURES)
    doc = {"devices": ["/dev/buddy", "inproc:"],
           "/dev/buddy": {"none": {}, "cdma": {"prefetch_uring": 3}},
           "inproc:": {"none": {}, "cdma": {"prefetch_uring": 0}}}
    uring_good = uring_lines(doc, 1)[1] == 0
    doc["/dev/buddy"]["cdma"]["prefetch_uring"] = 0
    uring_bad = uring_lines(doc, 1)[1] == 1
    n = 0
    for ok, what in ((good, "equal figures compare equal"),
                     (bad, "a changed figure fails"),
                     (gone, "a missing policy fails every figure"),
                     (uring_good, "io_uring reads on /dev/buddy pass"),
                     (uring_bad, "no io_uring read on /dev/buddy fails")):
        n += 1
        print(f"{'ok' if ok else 'not ok'} {n} - backends.py self-test: {what}")
    f = [good, bad, gone, uring_good, uring_bad].count(False)
    print(f"# Totals: pass:{5 - f} fail:{f} xfail:0 xpass:0 skip:0 error:0")
    return 1 if f else 0


def main(argv):
    if argv[1:2] == ["run"] and len(argv) >= 4:
        run(argv[2], argv[3:])
        return 0
    if argv[1:2] == ["compare"] and len(argv) == 3:
        try:
            with open(argv[2]) as f:
                doc = json.load(f)
            a, b = (doc[d] for d in doc["devices"][:2])
        except (OSError, ValueError, KeyError) as e:
            print(f"not ok 1 - read two devices' figures from {argv[2]}: {e!r}")
            print("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0")
            return 1
        lines, fails = compare(a, b)
        more, mfails = uring_lines(doc, len(lines) + 1)
        lines += more
        fails += mfails
        print(f"# {doc['devices'][0]} against {doc['devices'][1]}")
        print("\n".join(lines))
        print(f"# Totals: pass:{len(lines) - fails} fail:{fails} xfail:0 "
              "xpass:0 skip:0 error:0")
        return 1 if fails else 0
    if argv[1:] == ["--self-test"]:
        return self_test()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
