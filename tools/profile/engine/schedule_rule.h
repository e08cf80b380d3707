/* SPDX-License-Identifier: GPL-2.0 */
/*
 * schedule_rule.h - the adaptive schedule's arithmetic, shared by the CPU
 * engine (profile_schedule.c) and the CUDA driver interposer
 * (tools/profile/cuda_driver/device_snapshot.c); python/buddy/cuda/
 * schedule.py is the same rule in Python.
 *
 * N points are kept evenly spread over a run of unknown length: when a
 * snapshot would make 2N of them held the step doubles, at 2N every other
 * one held is dropped (the first, third, ...), and at the end N evenly
 * spaced ones of those held are kept.
 */
#ifndef BUDDY_PROFILE_SCHEDULE_RULE_H
#define BUDDY_PROFILE_SCHEDULE_RULE_H

#include <stdbool.h>
#include <stddef.h>

/* The step doubles before the snapshot that makes 2 * @points held. */
static inline bool sched_step_doubles(size_t held, unsigned int points)
{
	return points && held + 1 >= 2 * (size_t)points;
}

/* With @held held, every other one is dropped now. */
static inline bool sched_thin_now(size_t held, unsigned int points)
{
	return points && held >= 2 * (size_t)points;
}

/*
 * At the end, of @m held (@m > @n > 0): the index of the @i-th of the @n
 * kept, evenly spaced, the last one always among them.
 */
static inline size_t sched_kept_index(size_t i, size_t m, size_t n)
{
	return ((i + 1) * m + n - 1) / n - 1;
}

#endif /* BUDDY_PROFILE_SCHEDULE_RULE_H */
