/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Buddy Compression: compressed device memory with a buddy carve-out.
 *
 * The one ABI header, shared by buddy.ko and every userspace program.
 *
 * /dev/buddy answers BUDDY_IOC_GET_INFO and BUDDY_IOC_ALLOC.  ALLOC returns a
 * new file descriptor for the allocation: pread/pwrite/readv/writev/lseek and
 * io_uring READ/WRITE move its logical bytes, mmap(MAP_SHARED) maps it
 * through the module's resident window of decompressed pages,
 * BUDDY_IOC_ALLOC_STAT and BUDDY_IOC_GET_MAP describe it, and closing its
 * last reference (mappings hold one) frees it.
 *
 * Every struct may grow at its end: a caller's _IOC_SIZE may be anything
 * from ABI version 1's size up (smaller is -EINVAL); the kernel zero-fills
 * fields a shorter, older struct lacks, rejects non-zero bytes it does not
 * know with -E2BIG, and copies back only as many bytes as _IOC_SIZE asks.
 */
#ifndef _UAPI_LINUX_BUDDY_H
#define _UAPI_LINUX_BUDDY_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define BUDDY_ABI_VERSION	1

/* Size of one memory entry and of one sector, in bytes. */
#define BUDDY_ENTRY_SIZE	128
#define BUDDY_SECTOR_SIZE	32

/*
 * Size codes: the 4-bit per-entry metadata.  Values 6..15 are reserved.
 * ZERO: all 128 bytes zero, nothing stored.  C8/C32/C64/C96: the compressed
 * stream fits 8/32/64/96 bytes.  RAW: the plain 128 bytes are stored.
 */
#define BUDDY_CODE_ZERO		0
#define BUDDY_CODE_C8		1
#define BUDDY_CODE_C32		2
#define BUDDY_CODE_C64		3
#define BUDDY_CODE_C96		4
#define BUDDY_CODE_RAW		5
#define BUDDY_CODE_NR		6
#define BUDDY_CODE_SLOTS	16	/* histogram slots: every 4-bit value */

/* Codecs.  DEFAULT is BPC, or the profile's codec for an AUTO allocation. */
#define BUDDY_CODEC_DEFAULT	0
#define BUDDY_CODEC_BPC		1
#define BUDDY_CODEC_ZVC		2
#define BUDDY_CODEC_BDI		3
#define BUDDY_CODEC_FPC		4
#define BUDDY_CODEC_NONE	5
#define BUDDY_CODEC_NR		6

/* Targets, as device bytes per 128-byte entry. */
#define BUDDY_TARGET_AUTO	0	/* from the profile table */
#define BUDDY_TARGET_1X		128
#define BUDDY_TARGET_4_3X	96
#define BUDDY_TARGET_2X		64
#define BUDDY_TARGET_4X		32
#define BUDDY_TARGET_16X	8

/* Feature bits of struct buddy_info.features. */
#define BUDDY_FEAT_RW		(1ULL << 0)	/* pread/pwrite on allocations */
#define BUDDY_FEAT_IO_URING	(1ULL << 1)	/* io_uring READ/WRITE */
#define BUDDY_FEAT_GET_MAP	(1ULL << 2)	/* BUDDY_IOC_GET_MAP */
#define BUDDY_FEAT_ADMIN	(1ULL << 3)	/* list, set-target, profiles */
#define BUDDY_FEAT_AUTO		(1ULL << 4)	/* BUDDY_TARGET_AUTO */
#define BUDDY_FEAT_URING_CMD	(1ULL << 5)	/* ioctls as IORING_OP_URING_CMD */
#define BUDDY_FEAT_MMAP		(1ULL << 6)	/* mmap through the window */
#define BUDDY_FEAT_LINK_MODEL	(1ULL << 7)	/* buddy_alloc_stat.link_ns */
#define BUDDY_FEAT_LINK_REQUESTS (1ULL << 8)	/* .link_requests, latency per request */

#define BUDDY_MAX_NODES		64
#define BUDDY_LABEL_LEN		32

/**
 * struct buddy_info - argument of BUDDY_IOC_GET_INFO (output only).
 * @abi_version:	BUDDY_ABI_VERSION of the running module.
 * @max_ratio:		largest overall expansion the carve-out supports.
 * @features:		BUDDY_FEAT_* bits.
 * @codecs:		bit n set when codec n (BUDDY_CODEC_*) is available.
 * @device_bytes:	size of the device pool.
 * @device_used:	device pool bytes reserved by allocations, metadata
 *			and rounding included.
 * @buddy_bytes:	size of the buddy carve-out.
 * @buddy_used:		carve-out bytes reserved by allocations.
 * @logical_bytes:	sum of the sizes of live allocations.
 * @ratio_milli:	expansion ratio now, logical_bytes / device_used,
 *			times 1000; 0 while nothing is allocated.
 * @nr_allocs:		live allocations.
 * @device_node:	NUMA node asked for the device pool (-1: any).
 * @buddy_node:		NUMA node asked for the carve-out (-1: any).
 * @nr_nodes:		entries of the two arrays below that are meaningful.
 * @chunk_bytes:	logical bytes per chunk.
 * @device_node_pages:	pages of the device pool on node n.
 * @buddy_node_pages:	pages of the carve-out on node n.
 */
struct buddy_info {
	__u32 abi_version;
	__u32 max_ratio;
	__u64 features;
	__u64 codecs;
	__u64 device_bytes;
	__u64 device_used;
	__u64 buddy_bytes;
	__u64 buddy_used;
	__u64 logical_bytes;
	__u32 ratio_milli;
	__u32 nr_allocs;
	__s32 device_node;
	__s32 buddy_node;
	__u32 nr_nodes;
	__u32 chunk_bytes;
	__u64 device_node_pages[BUDDY_MAX_NODES];
	__u64 buddy_node_pages[BUDDY_MAX_NODES];
};

/* Flags of struct buddy_alloc.flags. */
#define BUDDY_ALLOC_CLOEXEC	(1U << 0)	/* O_CLOEXEC on the new fd */
#define BUDDY_ALLOC_VALID_FLAGS	(BUDDY_ALLOC_CLOEXEC)

/* struct buddy_alloc.target_source: where the target came from. */
#define BUDDY_SRC_EXPLICIT	0	/* the caller's target */
#define BUDDY_SRC_PROFILE	1	/* AUTO: the profile table's entry */
#define BUDDY_SRC_DEFAULT	2	/* AUTO: no entry, the default target */

/**
 * struct buddy_alloc - argument of BUDDY_IOC_ALLOC.
 * @size:		in: logical size in bytes, > 0.
 * @target:		in: BUDDY_TARGET_*; out: the target given (AUTO resolved).
 * @codec:		in: BUDDY_CODEC_*; out: the codec used.
 * @flags:		in: BUDDY_ALLOC_* flags.
 * @fd:			out: the allocation's new file descriptor.
 * @id:			out: the allocation's id, never reused.
 * @label:		in: 0-31 printable ASCII bytes, no '/', NUL-terminated,
 *			the rest zero.
 * @target_source:	out: BUDDY_SRC_*.
 * @reserved:		must be zero.
 */
struct buddy_alloc {
	__u64 size;
	__u32 target;
	__u32 codec;
	__u32 flags;
	__s32 fd;
	__u64 id;
	char label[BUDDY_LABEL_LEN];
	__u32 target_source;
	__u32 reserved;
};

/**
 * struct buddy_counters - per-allocation (and global) access counters.
 * @entry_reads:	entries read by user I/O.
 * @entry_writes:	entries written by user I/O (a partial-entry write
 *			counts one read and one write).
 * @device_sectors_read:   32-byte device sectors read (8-byte 16x parts
 *			count one sector); ZERO entries read none.
 * @device_sectors_written: device sectors written.
 * @buddy_sectors_read:	32-byte buddy sectors read.
 * @buddy_sectors_written: buddy sectors written.
 * @buddy_accesses:	entry accesses that touched a buddy sector.
 * @overflows:		writes that turned an entry from fitting its device
 *			share to spilling into buddy memory.
 */
struct buddy_counters {
	__u64 entry_reads;
	__u64 entry_writes;
	__u64 device_sectors_read;
	__u64 device_sectors_written;
	__u64 buddy_sectors_read;
	__u64 buddy_sectors_written;
	__u64 buddy_accesses;
	__u64 overflows;
};

/**
 * struct buddy_alloc_stat - argument of BUDDY_IOC_ALLOC_STAT.
 * @id:			in on /dev/buddy (admin): the allocation to describe;
 *			on an allocation fd: 0 or its own id; out: the id.
 * @size:		logical size in bytes.
 * @target:		BUDDY_TARGET_* now in force.
 * @codec:		BUDDY_CODEC_* now in force.
 * @owner_uid:		uid of the creator.
 * @owner_pid:		pid (tgid) of the creator.
 * @label:		label given at allocation.
 * @comm:		command of the creator.
 * @device_bytes:	device pool bytes reserved (metadata and rounding in).
 * @buddy_bytes:	carve-out bytes reserved.
 * @nr_entries:		entries (size rounded up to 128 bytes).
 * @target_source:	BUDDY_SRC_* of the allocation.
 * @reserved:		zero.
 * @codes:		entries per size code (index BUDDY_CODE_*).
 * @counters:		access counters since allocation.
 *
 * Since BUDDY_FEAT_MMAP and BUDDY_FEAT_LINK_MODEL (a caller passing the
 * older, shorter struct does not get these):
 * @link_ns:		modeled link time of the allocation's accesses, ns:
 *			buddy sectors * 32 / link_gbps + link requests *
 *			link_latency_ns + device sectors * 32 / device_gbps
 *			(with BUDDY_FEAT_LINK_REQUESTS; before it, buddy
 *			accesses * link_latency_ns).
 * @window_faults:	pages decompressed into the resident window.
 * @window_hits:	page accesses served by a resident page (pread/pwrite
 *			of a page, a mapping's fault on a resident page).
 * @window_writebacks:	dirty pages compressed back into their entries.
 * @window_evictions:	pages taken out of the window.
 * @window_resident:	pages of the allocation resident now.
 *
 * Since BUDDY_FEAT_LINK_REQUESTS:
 * @link_requests:	requests over the buddy link: stripes (32 entries) of
 *			I/O calls, faults and write-backs that touched a
 *			buddy sector; each pays link_latency_ns once.
 */
struct buddy_alloc_stat {
	__u64 id;
	__u64 size;
	__u32 target;
	__u32 codec;
	__u32 owner_uid;
	__u32 owner_pid;
	char label[BUDDY_LABEL_LEN];
	char comm[16];
	__u64 device_bytes;
	__u64 buddy_bytes;
	__u64 nr_entries;
	__u32 target_source;
	__u32 reserved;
	__u64 codes[BUDDY_CODE_SLOTS];
	struct buddy_counters counters;
	__u64 link_ns;
	__u64 window_faults;
	__u64 window_hits;
	__u64 window_writebacks;
	__u64 window_evictions;
	__u64 window_resident;
	__u64 link_requests;
};

/**
 * struct buddy_map - argument of BUDDY_IOC_GET_MAP.
 * @id:		as in struct buddy_alloc_stat.
 * @first:	first entry.
 * @count:	number of entries; first + count <= nr_entries.
 * @codes_ptr:	user buffer of (count + 1) / 2 bytes; entry first + 2i in the
 *		low nibble of byte i, first + 2i + 1 in the high nibble.
 */
struct buddy_map {
	__u64 id;
	__u64 first;
	__u64 count;
	__u64 codes_ptr;
};

/**
 * struct buddy_list - argument of BUDDY_IOC_LIST (CAP_SYS_ADMIN).
 * @stats_ptr:	user array of @count elements of @stat_size bytes, each
 *		filled as struct buddy_alloc_stat (cut to @stat_size).
 * @stat_size:	size of one element as the caller knows the struct; at
 *		least the size of ABI version 1's struct buddy_alloc_stat.
 * @count:	in: capacity of the array; out: elements written.
 * @start_id:	in: list only allocations whose id is >= start_id, in id
 *		order (pass the last id + 1 to page through).
 * @total:	out: live allocations with id >= start_id.
 */
struct buddy_list {
	__u64 stats_ptr;
	__u32 stat_size;
	__u32 count;
	__u64 start_id;
	__u64 total;
};

/**
 * struct buddy_set_target - argument of BUDDY_IOC_SET_TARGET
 * (CAP_SYS_ADMIN): re-stripe a live allocation, chunk by chunk.
 * @id:		the allocation.
 * @target:	new target, BUDDY_TARGET_* other than AUTO.
 * @codec:	new codec, BUDDY_CODEC_*; DEFAULT keeps the current one.
 * @flags:	must be zero.
 * @reserved:	must be zero.
 */
struct buddy_set_target {
	__u64 id;
	__u32 target;
	__u32 codec;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct buddy_profile_entry - one profile: what an AUTO allocation made
 * by user @uid with label @label gets.
 * @uid:	owner uid, in the caller's user namespace.
 * @target:	BUDDY_TARGET_* other than AUTO.
 * @codec:	BUDDY_CODEC_*; DEFAULT means BPC.
 * @reserved:	must be zero.
 * @label:	as in struct buddy_alloc.
 */
struct buddy_profile_entry {
	__u32 uid;
	__u32 target;
	__u32 codec;
	__u32 reserved;
	char label[BUDDY_LABEL_LEN];
};

#define BUDDY_PROFILE_REPLACE	(1U << 0)	/* SET: drop every entry first */
#define BUDDY_PROFILE_VALID_FLAGS (BUDDY_PROFILE_REPLACE)
#define BUDDY_PROFILE_MAX	4096		/* entries the table holds */

/**
 * struct buddy_profile - argument of BUDDY_IOC_PROFILE_SET and
 * BUDDY_IOC_PROFILE_GET (CAP_SYS_ADMIN).
 * @entries_ptr: user array of struct buddy_profile_entry.
 * @count:	SET: entries to install (an entry with the same uid and label
 *		is replaced); GET in: capacity, out: entries written.
 * @flags:	SET: BUDDY_PROFILE_* flags; GET: must be zero.
 * @total:	out: entries in the table.
 * @reserved:	must be zero.
 */
struct buddy_profile {
	__u64 entries_ptr;
	__u32 count;
	__u32 flags;
	__u32 total;
	__u32 reserved;
};

/**
 * struct buddy_uring_cmd - the command area of an IORING_OP_URING_CMD SQE
 * sent to /dev/buddy or an allocation fd.  The SQE's cmd_op is one of the
 * BUDDY_IOC_* numbers below; the command runs exactly as that ioctl with
 * @arg as its argument, and the CQE's res is the ioctl's return value.
 * @arg:	user pointer to the ioctl's argument struct.
 * @reserved:	must be zero.
 */
struct buddy_uring_cmd {
	__u64 arg;
	__u64 reserved;
};

#define BUDDY_IOC_MAGIC		0xBD

#define BUDDY_IOC_GET_INFO	_IOR(BUDDY_IOC_MAGIC, 0x00, struct buddy_info)
#define BUDDY_IOC_ALLOC		_IOWR(BUDDY_IOC_MAGIC, 0x01, struct buddy_alloc)
#define BUDDY_IOC_ALLOC_STAT	_IOWR(BUDDY_IOC_MAGIC, 0x02, struct buddy_alloc_stat)
#define BUDDY_IOC_GET_MAP	_IOW(BUDDY_IOC_MAGIC, 0x03, struct buddy_map)
/* Admin commands on /dev/buddy (CAP_SYS_ADMIN, else -EPERM). */
#define BUDDY_IOC_LIST		_IOWR(BUDDY_IOC_MAGIC, 0x10, struct buddy_list)
#define BUDDY_IOC_SET_TARGET	_IOW(BUDDY_IOC_MAGIC, 0x11, struct buddy_set_target)
#define BUDDY_IOC_PROFILE_SET	_IOWR(BUDDY_IOC_MAGIC, 0x12, struct buddy_profile)
#define BUDDY_IOC_PROFILE_GET	_IOWR(BUDDY_IOC_MAGIC, 0x13, struct buddy_profile)
/*
 * BUDDY_IOC_ALLOC_STAT and BUDDY_IOC_GET_MAP also work on /dev/buddy for an
 * admin, on any allocation named by their id field.
 */

#endif /* _UAPI_LINUX_BUDDY_H */
