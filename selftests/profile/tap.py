# SPDX-License-Identifier: GPL-2.0
"""TAP helpers of the Python profile tests, as tap.sh is the shell tests':

    check(name, cond)   one result line
    totals()            the plan and the totals line; returns the exit
                        status, 0 unless something failed
"""
n = fails = 0


def check(name, cond):
    global n, fails
    n += 1
    if not cond:
        fails += 1
    print(f"{'ok' if cond else 'not ok'} {n} - {name}")


def totals():
    print(f"1..{n}")
    print(f"# Totals: pass:{n - fails} fail:{fails} xfail:0 xpass:0 skip:0 error:0")
    return 1 if fails else 0
