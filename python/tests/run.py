#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run python/tests/test_*.py and print TAP with a kselftest "# Totals:" line.

    /usr/bin/python3 python/tests/run.py [-k PATTERN]

The package is imported from the tree (python/), libbuddy from build/lib/
(make lib) unless $BUDDY_LIBBUDDY says otherwise.  A skipped test prints
"ok N - name # SKIP reason".
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = self.npass = self.nfail = self.nskip = 0

    def _line(self, test, status, extra=""):
        self.n += 1
        print(f"{status} {self.n} - {test.id()}{extra}", flush=True)

    def addSuccess(self, test):
        self.npass += 1
        self._line(test, "ok")

    def addSkip(self, test, reason):
        self.nskip += 1
        self._line(test, "ok", f" # SKIP {reason}")

    def _bad(self, test, err):
        self.nfail += 1
        self._line(test, "not ok")
        for line in self._exc_info_to_string(err, test).splitlines():
            print(f"# {line}")

    def addFailure(self, test, err):
        self._bad(test, err)

    def addError(self, test, err):
        self._bad(test, err)

    def addSubTest(self, test, subtest, err):
        # unittest's default only files the failure away: without this, a
        # failing subTest left its test "ok".
        if err is not None:
            self._bad(subtest, err)

    def addExpectedFailure(self, test, err):
        self._bad(test, err)

    def addUnexpectedSuccess(self, test):
        self.nfail += 1
        self._line(test, "not ok", " (unexpected success)")

    def finish(self):
        """Print the plan and the totals; the exit status."""
        print(f"1..{self.n}")
        print(f"# Totals: pass:{self.npass} fail:{self.nfail} xfail:0 "
              f"xpass:0 skip:{self.nskip} error:0")
        return 1 if self.nfail or self.n == 0 else 0


def main():
    print("TAP version 13")
    loader = unittest.TestLoader()
    if len(sys.argv) > 2 and sys.argv[1] == "-k":
        loader.testNamePatterns = [f"*{sys.argv[2]}*"]
    try:
        suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    except ImportError as e:
        print(f"not ok 1 - import: {e}")
        print("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0")
        return 1
    r = TapResult()
    suite.run(r)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
