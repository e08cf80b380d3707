/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of buddy.ko: allocation, free, re-target and ENOSPC, for
 * admins to watch the device with the standard tools (tracefs, perf,
 * bpftrace).  See Documentation/admin-guide/buddy.rst, "Tracepoints".
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM buddy

#if !defined(BUDDY_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define BUDDY_TRACE_H

#include <linux/tracepoint.h>
#include <linux/uidgid.h>

#include "buddy.h"

TRACE_EVENT(buddy_alloc,
	TP_PROTO(const struct buddy_allocation *a),
	TP_ARGS(a),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, size)
		__field(unsigned int, target)
		__field(unsigned int, codec)
		__field(u32, uid)
		__field(u64, device_bytes)
		__field(u64, buddy_bytes)
	),
	TP_fast_assign(
		__entry->id = a->id;
		__entry->size = a->size;
		__entry->target = a->target;
		__entry->codec = a->codec_id;
		__entry->uid = from_kuid(&init_user_ns, a->uid);
		__entry->device_bytes = a->dev_bytes;
		__entry->buddy_bytes = a->bud_bytes;
	),
	TP_printk("id=%llu size=%llu target=%u codec=%u uid=%u device_bytes=%llu buddy_bytes=%llu",
		  __entry->id, __entry->size, __entry->target, __entry->codec,
		  __entry->uid, __entry->device_bytes, __entry->buddy_bytes)
);

TRACE_EVENT(buddy_free,
	TP_PROTO(const struct buddy_allocation *a),
	TP_ARGS(a),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, size)
		__field(u64, device_bytes)
		__field(u64, buddy_bytes)
	),
	TP_fast_assign(
		__entry->id = a->id;
		__entry->size = a->size;
		__entry->device_bytes = a->dev_bytes;
		__entry->buddy_bytes = a->bud_bytes;
	),
	TP_printk("id=%llu size=%llu device_bytes=%llu buddy_bytes=%llu",
		  __entry->id, __entry->size, __entry->device_bytes,
		  __entry->buddy_bytes)
);

TRACE_EVENT(buddy_retarget,
	TP_PROTO(const struct buddy_allocation *a, unsigned int old_target,
		 unsigned int new_target, int ret),
	TP_ARGS(a, old_target, new_target, ret),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(unsigned int, old_target)
		__field(unsigned int, new_target)
		__field(unsigned int, codec)
		__field(int, ret)
		__field(u64, device_bytes)
		__field(u64, buddy_bytes)
	),
	TP_fast_assign(
		__entry->id = a->id;
		__entry->old_target = old_target;
		__entry->new_target = new_target;
		__entry->codec = a->codec_id;
		__entry->ret = ret;
		__entry->device_bytes = a->dev_bytes;
		__entry->buddy_bytes = a->bud_bytes;
	),
	TP_printk("id=%llu target=%u->%u codec=%u ret=%d device_bytes=%llu buddy_bytes=%llu",
		  __entry->id, __entry->old_target, __entry->new_target,
		  __entry->codec, __entry->ret, __entry->device_bytes,
		  __entry->buddy_bytes)
);

TRACE_EVENT(buddy_enospc,
	TP_PROTO(u64 id, unsigned int target, u64 device_need, u64 buddy_need),
	TP_ARGS(id, target, device_need, buddy_need),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(unsigned int, target)
		__field(u64, device_need)
		__field(u64, buddy_need)
		__field(u64, device_used)
		__field(u64, buddy_used)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->target = target;
		__entry->device_need = device_need;
		__entry->buddy_need = buddy_need;
		__entry->device_used = atomic64_read(&buddy_dev->device.used);
		__entry->buddy_used = atomic64_read(&buddy_dev->buddy.used);
	),
	TP_printk("id=%llu target=%u device_need=%llu buddy_need=%llu device_used=%llu buddy_used=%llu",
		  __entry->id, __entry->target, __entry->device_need,
		  __entry->buddy_need, __entry->device_used,
		  __entry->buddy_used)
);

#endif /* BUDDY_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE buddy_trace
#include <trace/define_trace.h>
