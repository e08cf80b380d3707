# SPDX-License-Identifier: GPL-2.0 OR MIT
"""When to snapshot: buddyctl profile's progress schedule, on backward
passes.

The clock is the program's own progress, as the CPU profiler's is
(tools/profile/engine/profile_schedule.c), so that a run alone and a run beside a load
snapshot the same points: here the number of backward passes begun (one
per training iteration), counted at the start of each.

Adaptive (the default): N points kept (@points) evenly spread over a run
of unknown length.  A snapshot is due at the first backward whose count
reaches the next multiple of the step (@first, 1 at first).  When a
snapshot would make 2N of them held, the step doubles (before the next
mark is set, so the points stay multiples of the new step) and every
other held snapshot is dropped, the first, third, ...; at the end N
evenly spaced ones of those held are kept.  These are the rules of the
CPU engine's progress_step(), thin() and finish_pending().  @points 0
keeps everything.  Fixed (@every > 0): one every @every backward passes,
all kept.
"""


class Schedule:
    def __init__(self, points=10, first=1, every=0):
        if points < 0 or first < 1 or every < 0:
            raise ValueError(f"schedule: points {points}, first {first}, "
                             f"every {every}: points and every must be >= 0, "
                             "first >= 1")
        self.points = points
        self.every = every
        self.step = every or first
        self.next = self.step
        self.held = []          # snapshot ids taken and not dropped

    @property
    def adaptive(self):
        return not self.every and self.points > 0

    def due(self, progress):
        """Whether a snapshot is due at @progress (backward passes begun,
        this one included)."""
        return progress >= self.next

    def taken(self, snap_id, progress):
        """Snapshot @snap_id was taken at @progress: returns the ids this
        drops (thinning), in order."""
        if self.adaptive and len(self.held) + 1 >= 2 * self.points:
            self.step *= 2
        self.held.append(snap_id)
        self.next = (progress // self.step + 1) * self.step
        if not self.adaptive or len(self.held) < 2 * self.points:
            return []
        dropped = self.held[0::2]
        self.held = self.held[1::2]
        return dropped

    def finish(self):
        """At the end: (kept ids, dropped ids) of those held."""
        m, n = len(self.held), self.points
        if not self.adaptive or m <= n:
            return list(self.held), []
        keep = {((i + 1) * m + n - 1) // n - 1 for i in range(n)}
        kept = [s for k, s in enumerate(self.held) if k in keep]
        dropped = [s for k, s in enumerate(self.held) if k not in keep]
        return kept, dropped
