# SPDX-License-Identifier: GPL-2.0
"""TAP of the Python tests, as selftests/lib/tap.sh is the shell tests'
(the one copy).

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
    from tap import check, skip, totals

    check(name, cond, diag=())  one result line, and when @cond is false
                                the lines of @diag as "# " comments;
                                returns @cond
    skip(name, why)             a skipped one
    totals()                    the plan and the kselftest "# Totals:" line;
                                returns the exit status, 0 unless something
                                failed

A script with separate parts of its own counts makes a Tap() each;
Tap(quiet=True) counts without printing.
"""
import sys


class Tap:
    def __init__(self, out=None, quiet=False):
        self.out = out or sys.stdout
        self.quiet = quiet      # count only (a self-test's inner checks)
        self.n = self.failed = self.skipped = 0

    def check(self, name, cond, diag=()):
        self.n += 1
        if not cond:
            self.failed += 1
        if self.quiet:
            return cond
        print(f"{'ok' if cond else 'not ok'} {self.n} - {name}",
              file=self.out)
        if not cond:
            if isinstance(diag, str):
                diag = diag.splitlines()
            for line in diag:
                print(f"# {line}", file=self.out)
        return cond

    def skip(self, name, why):
        self.n += 1
        self.skipped += 1
        print(f"ok {self.n} - {name} # SKIP {why}", file=self.out)

    def totals(self):
        print(f"1..{self.n}", file=self.out)
        print(f"# Totals: pass:{self.n - self.failed - self.skipped} "
              f"fail:{self.failed} xfail:0 xpass:0 skip:{self.skipped} "
              "error:0", file=self.out)
        return 1 if self.failed else 0


_tap = Tap()
check = _tap.check
skip = _tap.skip
totals = _tap.totals
