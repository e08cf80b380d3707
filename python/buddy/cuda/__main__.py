# SPDX-License-Identifier: GPL-2.0 OR MIT
"""python3 -m buddy.cuda: run a program with the hook, or read records.

    python3 -m buddy.cuda run [-o DIR] [--points N] [--every K]
                              [--codecs LIST] [--piece-mib M] [--threads T]
                              [--no-probe] [-q] -- COMMAND [ARG]...
    python3 -m buddy.cuda probe
    python3 -m buddy.cuda summary DIR

run: COMMAND runs with the hook in every Python process it starts (this
package's sitecustomize on PYTHONPATH); each leaves DIR/cuda-PID.tsv
(default DIR: ./buddy-cuda, which must hold no records yet); at the end
the summary goes to stderr and the exit status is COMMAND's (128 + N when
killed by signal N).  First the Python running this (the one COMMAND is
expected to use) is asked whether torch sees a CUDA device: when it does
not, nothing runs and the exit status is 2 (--no-probe skips the
question).  --points N: snapshots kept (adaptive schedule, default 10, 0
keeps all); --every K: one snapshot every K backward passes instead, all
kept; --codecs: the codecs to size with (default bpc,zvc,bdi,fpc);
--piece-mib: the copy piece (default 64); --threads: sizing threads
(default one per CPU).

probe: what torch sees; exit 0 with a CUDA device, 2 without one.
summary: the records of DIR, per process and snapshot.
"""
import argparse
import os
import signal
import subprocess
import sys

from . import hook, records

PKG_ROOT = os.path.dirname(os.path.dirname(hook.HERE))  # python/
SITE = os.path.join(hook.HERE, "site")


def probe():
    """(True, what torch sees) with a CUDA device, else (False, why)."""
    try:
        import torch
    except Exception as e:
        return False, f"torch does not import in {sys.executable}: {e}"
    v = torch.__version__
    if not getattr(torch.version, "cuda", None) and \
       not getattr(torch.version, "hip", None):
        return False, f"torch {v} is built without CUDA: no CUDA device"
    try:
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception as e:
        return False, f"torch {v}: CUDA does not initialise: {e}"
    if not n:
        return False, f"torch {v} (CUDA {torch.version.cuda}) sees no CUDA " \
            "device"
    names = ", ".join(torch.cuda.get_device_name(d) for d in range(n))
    return True, f"torch {v}, CUDA {torch.version.cuda}: {n} device" \
        f"{'s' if n > 1 else ''} ({names})"


def run(a):
    try:
        hook.codec_mask(a.codecs)
    except ValueError as e:
        print(f"buddy.cuda: --codecs: {e}", file=sys.stderr)
        return 1
    if a.points < 0 or a.every < 0 or a.piece_mib < 1 or a.threads < 0:
        print("buddy.cuda: --points, --every, --threads must be >= 0 and "
              "--piece-mib >= 1", file=sys.stderr)
        return 1
    if not a.command:
        print("buddy.cuda: run: no command (after --)", file=sys.stderr)
        return 1
    if not a.no_probe:
        ok, what = probe()
        if not ok:
            print(f"buddy.cuda: {what}: nothing to profile", file=sys.stderr)
            return 2
        if not a.quiet:
            print(f"buddy.cuda: {what}", file=sys.stderr)
    os.makedirs(a.out, exist_ok=True)
    old = records.files(a.out)
    if old:
        print(f"buddy.cuda: {a.out}: holds records of an earlier run "
              f"({os.path.basename(old[0])}); name an empty directory",
              file=sys.stderr)
        return 1
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [SITE, PKG_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                            else []))
    env[hook.ENV_DIR] = os.path.abspath(a.out)
    env[hook.ENV_POINTS] = str(a.points)
    env[hook.ENV_EVERY] = str(a.every)
    env[hook.ENV_CODECS] = a.codecs
    env[hook.ENV_PIECE] = str(a.piece_mib)
    env[hook.ENV_THREADS] = str(a.threads)
    cmd = a.command[1:] if a.command[0] == "--" else a.command
    try:
        p = subprocess.Popen(cmd, env=env)
    except OSError as e:
        print(f"buddy.cuda: {cmd[0]}: {e.strerror}", file=sys.stderr)
        return 127
    while True:
        try:
            rc = p.wait()
            break
        except KeyboardInterrupt:       # the program got it too
            continue
    rc = 128 - rc if rc < 0 else rc
    files = records.files(a.out)
    if not a.quiet:
        if files:
            print(records.summary(files), file=sys.stderr)
        else:
            print(f"buddy.cuda: no records in {a.out}: no Python process "
                  "ran a backward pass on CUDA", file=sys.stderr)
    return rc


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m buddy.cuda")
    sub = ap.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="run COMMAND with the hook")
    r.add_argument("-o", "--out", default="buddy-cuda")
    r.add_argument("--points", type=int, default=10)
    r.add_argument("--every", type=int, default=0)
    r.add_argument("--codecs", default="bpc,zvc,bdi,fpc")
    r.add_argument("--piece-mib", type=int, default=64)
    r.add_argument("--threads", type=int, default=0)
    r.add_argument("--no-probe", action="store_true")
    r.add_argument("-q", "--quiet", action="store_true")
    r.add_argument("command", nargs=argparse.REMAINDER)
    sub.add_parser("probe", help="does torch see a CUDA device")
    s = sub.add_parser("summary", help="the records of DIR")
    s.add_argument("dir")
    a = ap.parse_args(argv)
    if a.verb == "probe":
        ok, what = probe()
        print(f"buddy.cuda: {what}", file=sys.stdout if ok else sys.stderr)
        return 0 if ok else 2
    if a.verb == "summary":
        try:
            files = records.files(a.dir)
            if not files:
                print(f"buddy.cuda: {a.dir}: no record files (cuda-PID.tsv)",
                      file=sys.stderr)
                return 1
            print(records.summary(files))
        except (OSError, records.RecordError) as e:
            print(f"buddy.cuda: {e}", file=sys.stderr)
            return 1
        return 0
    return run(a)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
