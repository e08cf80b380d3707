#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A capture (capture-outputs.sh) as the previous release's JSON would be.

    heur-json-compat.py IN OUT

Every JSON document in IN's files (a line "{" or "[" to the matching line
"}" or "]") is parsed and printed again, one value per line, numbers as
written; in every heuristic result the keys this release added are
dropped and the ones it kept as aliases put back in their old places:

  the profiler's ("allocations_by_target"): ratio buddy_frac threshold
      logical_bytes device_bytes steps error allocations_by_target
  buddyd's ("units_by_target"): ratio buddy_frac logical_bytes
      device_bytes buddy_bytes steps units_by_target error

Applied to captures before and after the unified schema, diff -r then
shows every change but that one.
"""
import json
import os
import sys

PROFILER = ["ratio", "buddy_frac", "threshold", "logical_bytes",
            "device_bytes", "steps", "error", "allocations_by_target"]
BUDDYD = ["ratio", "buddy_frac", "logical_bytes", "device_bytes",
          "buddy_bytes", "steps", "units_by_target", "error"]
NEW = {"ratio", "buddy_frac", "threshold", "logical_bytes", "device_bytes",
       "buddy_bytes", "steps", "by_target", "errno", "error_name",
       "allocations_by_target", "units_by_target", "error"}


class Num(str):
    """A number as written (kept apart from strings)."""


def old(d):
    for key, order in (("allocations_by_target", PROFILER),
                       ("units_by_target", BUDDYD)):
        if key in d:
            out = {k: d[k] for k in order if k in d}
            out.update((k, v) for k, v in d.items() if k not in NEW)
            return out
    return d


def walk(v):
    if isinstance(v, dict):
        return old({k: walk(x) for k, x in v.items()})
    if isinstance(v, list):
        return [walk(x) for x in v]
    return v


def scalar(v):
    return str(v) if isinstance(v, Num) else json.dumps(v)


def show(v, ind=""):
    if isinstance(v, dict):
        yield ind + "{"
        for k, x in v.items():
            if isinstance(x, (dict, list)):
                yield ind + " " + json.dumps(k) + ":"
                yield from show(x, ind + "  ")
            else:
                yield ind + " " + json.dumps(k) + ": " + scalar(x)
        yield ind + "}"
    elif isinstance(v, list):
        yield ind + "["
        for x in v:
            yield from show(x, ind + "  ")
        yield ind + "]"
    else:
        yield ind + scalar(v)


def parse_at(lines, i):
    """The document starting at line @i and the line after it, or None."""
    end = "}" if lines[i] == "{" else "]"
    for j in range(i + 1, len(lines)):
        if lines[j] == end:
            try:
                return json.loads("\n".join(lines[i:j + 1]),
                                  parse_float=Num, parse_int=Num,
                                  parse_constant=Num), j + 1
            except ValueError:
                continue
    return None


def convert(text):
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        got = parse_at(lines, i) if lines[i] in ("{", "[") else None
        if got:
            out.extend(show(walk(got[0])))
            i = got[1]
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def main():
    src, dst = sys.argv[1:3]
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
        with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
            f.write(convert(text))


if __name__ == "__main__":
    main()
