/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libbuddy.h - a thin userspace wrapper around /dev/buddy (uapi/linux/buddy.h).
 *
 * Every function that can fail returns a negative errno value (-ENOSPC, ...)
 * and leaves errno alone; buddy_strerror() explains such a value for the
 * operation that returned it.  Nothing here allocates memory or keeps state,
 * but the io_uring context of buddy_aio_init().
 *
 * Installed as <buddy/libbuddy.h> (its uapi include then reads
 * <linux/buddy.h>); `pkg-config --cflags --libs libbuddy` builds against it.
 */
#ifndef BUDDY_TOOLS_LIBBUDDY_H
#define BUDDY_TOOLS_LIBBUDDY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uapi/linux/buddy.h"

#define BUDDY_DEV_PATH		"/dev/buddy"
#define BUDDY_SYSFS_DIR		"/sys/class/misc/buddy"
#define BUDDY_PARAM_DIR		"/sys/module/buddy/parameters"

/* Operations, for buddy_strerror(). */
enum buddy_op {
	BUDDY_OP_OPEN,		/* buddy_open() */
	BUDDY_OP_INFO,		/* BUDDY_IOC_GET_INFO */
	BUDDY_OP_ALLOC,		/* BUDDY_IOC_ALLOC */
	BUDDY_OP_READ,		/* pread on an allocation */
	BUDDY_OP_WRITE,		/* pwrite on an allocation */
	BUDDY_OP_STAT,		/* BUDDY_IOC_ALLOC_STAT */
	BUDDY_OP_MAP,		/* BUDDY_IOC_GET_MAP */
	BUDDY_OP_LIST,		/* BUDDY_IOC_LIST */
	BUDDY_OP_SET_TARGET,	/* BUDDY_IOC_SET_TARGET */
	BUDDY_OP_PROFILE,	/* BUDDY_IOC_PROFILE_SET / _GET */
};

/**
 * buddy_open() - open the Buddy Compression control device.
 * @path: device node; "inproc:OPTS" for the in-process device; or NULL for
 *	  $BUDDY_DEVICE when set, else BUDDY_DEV_PATH.
 *
 * The descriptor is opened read-write and close-on-exec.  An in-process
 * device named by an "inproc:" path is made on the first call and shared
 * by later ones while any of its descriptors is open (-EBUSY for other
 * options meanwhile).
 *
 * Return: the file descriptor, or -errno (-ENOENT or -ENODEV when the module
 * is not loaded, -EACCES without permission).
 */
int buddy_open(const char *path);

/*
 * The in-process device.  buddy_open() with a path "inproc:OPTS", or with
 * NULL while the environment has BUDDY_DEVICE=inproc:OPTS, or
 * buddy_open_inproc(OPTS), gives a device that lives in the calling
 * process, built from the same core/ code as buddy.ko: every call below
 * works on it as on /dev/buddy, with the same errno for the same input.
 * OPTS is a comma-separated list of the module's parameters:
 * device_mb=N (default 64), max_ratio=R (4), chunk_kb=K (2048),
 * user_limit_mb=M (0) and auto_target=B (128).  Its descriptors are real
 * file descriptors (memfds) that only libbuddy understands: use
 * buddy_pread()/buddy_pwrite()/buddy_aio_*() and buddy_ioctl(), not
 * pread(2) or ioctl(2), on them.  Differences: the process is the
 * device's administrator (no -EPERM), and the device is not shared with
 * other processes (a child after fork() has its own copy).
 */

/**
 * buddy_open_inproc() - create a new in-process device.
 * @opts: "device_mb=64,max_ratio=4" and so on, as above; NULL or "" for
 *	  the defaults.
 *
 * Unlike buddy_open("inproc:..."), which returns another descriptor of the
 * same device while one is open, this always makes a new device.  It lives
 * until its last descriptor and its last allocation are closed.
 *
 * Return: the device's descriptor, or -errno (-EINVAL for an unknown or
 * out-of-range option, -ENOMEM when the pools cannot be mapped).
 */
int buddy_open_inproc(const char *opts);

/**
 * buddy_is_inproc() - is @fd a descriptor of an in-process device?
 * @fd: any descriptor.
 *
 * Return: 1 for an in-process device or one of its allocations, else 0.
 */
int buddy_is_inproc(int fd);

/**
 * buddy_ioctl() - ioctl(2) with a BUDDY_IOC_* command on either backend.
 * @fd: /dev/buddy, an in-process device, or an allocation of either.
 * @cmd: the BUDDY_IOC_* number.
 * @arg: its argument struct.
 *
 * Return: ioctl(2)'s value (0), or -errno.
 */
int buddy_ioctl(int fd, unsigned long cmd, void *arg);

/**
 * buddy_close() - close a device or allocation descriptor.
 * @fd: descriptor of either backend.
 *
 * close(2) works as well; an in-process allocation closed that way is
 * freed at the next call that looks at its device (alloc, info, list,
 * admin), this frees it at once.
 *
 * Return: 0, or -errno.
 */
int buddy_close(int fd);

/**
 * buddy_device_stats() - the device's global access counters and
 * size-code histogram (sysfs io_stat and code_stat of buddy.ko).
 * @devfd: descriptor of the device.
 * @io: receives the counters of every allocation since the device began.
 * @codes: receives the live allocations' entries per size code.
 *
 * Return: 0, or -errno (-ENOENT when buddy.ko's sysfs files are missing).
 */
int buddy_device_stats(int devfd, struct buddy_counters *io,
		       uint64_t codes[BUDDY_CODE_NR]);

/**
 * buddy_get_info() - BUDDY_IOC_GET_INFO: pools, usage and features.
 * @devfd: descriptor of /dev/buddy.
 * @info: filled on success.
 *
 * Return: 0, or -errno.
 */
int buddy_get_info(int devfd, struct buddy_info *info);

/**
 * buddy_alloc() - BUDDY_IOC_ALLOC: create an allocation.
 * @devfd: descriptor of /dev/buddy.
 * @req: size, target, codec, flags and label in; on success the kernel also
 *	 fills fd, id, target (AUTO resolved), codec (DEFAULT resolved) and
 *	 target_source.  fd, id, target_source and reserved must be zero on
 *	 entry.
 *
 * Return: the new allocation's file descriptor, or -errno (see
 * buddy_strerror() with BUDDY_OP_ALLOC).
 */
int buddy_alloc(int devfd, struct buddy_alloc *req);

/**
 * buddy_alloc_simple() - create an allocation from plain arguments.
 * @devfd: descriptor of /dev/buddy.
 * @size: logical size in bytes.
 * @target: BUDDY_TARGET_* (device bytes per 128-byte entry, 0 = AUTO).
 * @codec: BUDDY_CODEC_*.
 * @label: label of at most BUDDY_LABEL_LEN - 1 bytes, or NULL for none.
 * @id_out: receives the allocation's id when not NULL.
 *
 * The descriptor is created close-on-exec.
 *
 * Return: the new allocation's file descriptor, or -errno; -EINVAL without
 * calling the kernel when @label is too long.
 */
int buddy_alloc_simple(int devfd, uint64_t size, unsigned int target,
		       unsigned int codec, const char *label, uint64_t *id_out);

/**
 * buddy_pread() - read logical bytes of an allocation.
 * @afd: allocation descriptor.
 * @buf: destination.
 * @len: bytes to read.
 * @off: logical offset.
 *
 * Short reads are retried until @len bytes are read or the end of the
 * allocation is reached.
 *
 * Return: the bytes read (less than @len only at the end of the allocation
 * or after an error that followed some progress), or -errno.
 */
ssize_t buddy_pread(int afd, void *buf, size_t len, uint64_t off);

/**
 * buddy_pwrite() - write logical bytes of an allocation.
 * @afd: allocation descriptor.
 * @buf: source.
 * @len: bytes to write.
 * @off: logical offset.
 *
 * Short writes are retried until @len bytes are written or the end of the
 * allocation is reached.
 *
 * Return: the bytes written (less than @len only at the end of the
 * allocation or after an error that followed some progress), or -errno
 * (-ENOSPC when @off is at or past the end).
 */
ssize_t buddy_pwrite(int afd, const void *buf, size_t len, uint64_t off);

/**
 * buddy_alloc_stat() - BUDDY_IOC_ALLOC_STAT on an allocation descriptor.
 * @afd: allocation descriptor.
 * @st: filled on success; @st->id is sent as 0 (this allocation).
 *
 * Return: 0, or -errno.
 */
int buddy_alloc_stat(int afd, struct buddy_alloc_stat *st);

/**
 * buddy_get_map() - size codes of a range of entries.
 * @afd: allocation descriptor.
 * @first: first entry.
 * @count: number of entries; @first + @count must not exceed the entries.
 * @codes: receives @count BUDDY_CODE_* values, one per byte (the kernel's
 *	   nibbles unpacked).
 *
 * Return: 0, or -errno.
 */
int buddy_get_map(int afd, uint64_t first, uint64_t count, uint8_t *codes);

/**
 * buddy_strerror() - explain an error of one operation.
 * @err: errno value, negative or positive.
 * @op: enum buddy_op of the operation that failed.
 *
 * Return: a sentence without a trailing newline; strerror()'s text for
 * errors the ABI gives no particular meaning.
 */
const char *buddy_strerror(int err, int op);

/**
 * buddy_target_parse() - parse a target compression ratio.
 * @s: "1", "4/3", "1.33", "2", "4" or "16", each with an optional "x";
 *     "auto"; or device bytes per entry as "128B", "96B", "64B", "32B",
 *     "8B" ("0B" is auto).
 * @target: receives the BUDDY_TARGET_* value (device bytes per entry).
 *
 * Return: 0, or -EINVAL for anything else.
 */
int buddy_target_parse(const char *s, unsigned int *target);

/**
 * buddy_target_name() - name of a target.
 * @target: BUDDY_TARGET_* value.
 *
 * Return: "1x", "4/3x", "2x", "4x", "16x" or "auto"; "?" when @target is
 * not a valid target.
 */
const char *buddy_target_name(unsigned int target);

/**
 * buddy_codec_name() - name of a codec.
 * @codec: BUDDY_CODEC_* value.
 *
 * Return: "default", "bpc", "zvc", "bdi", "fpc" or "none"; "?" for an
 * unknown value.
 */
const char *buddy_codec_name(unsigned int codec);

/**
 * buddy_codec_parse() - BUDDY_CODEC_* value of a codec name.
 * @s: a name as returned by buddy_codec_name(), any case.
 *
 * Return: the codec value, or -EINVAL for an unknown name.
 */
int buddy_codec_parse(const char *s);

/*
 * Admin calls on /dev/buddy (CAP_SYS_ADMIN, else -EPERM): every live
 * allocation, any allocation by id, re-targeting, and the AUTO profile table.
 */
/**
 * buddy_list() - BUDDY_IOC_LIST: describe live allocations in id order.
 * @devfd: descriptor of /dev/buddy.
 * @start_id: list only allocations whose id is >= @start_id; page through
 *	      all of them by passing the last id returned + 1.
 * @arr: receives up to @cap descriptions.
 * @cap: capacity of @arr (0 just counts).
 * @count: receives the number of elements written.
 * @total: receives the number of live allocations with id >= @start_id
 *	   (more than @count when @arr was too small); may be NULL.
 *
 * Return: 0, or -errno (-EPERM without CAP_SYS_ADMIN).
 */
int buddy_list(int devfd, uint64_t start_id, struct buddy_alloc_stat *arr,
	       unsigned int cap, unsigned int *count, uint64_t *total);

/**
 * buddy_stat_id() - BUDDY_IOC_ALLOC_STAT on /dev/buddy: any allocation by id.
 * @devfd: descriptor of /dev/buddy.
 * @id: the allocation.
 * @st: filled on success.
 *
 * Return: 0, or -errno (-ENOENT when no live allocation has @id, -EPERM
 * without CAP_SYS_ADMIN).
 */
int buddy_stat_id(int devfd, uint64_t id, struct buddy_alloc_stat *st);

/**
 * buddy_get_map_id() - size codes of a range of entries of any allocation.
 * @devfd: descriptor of /dev/buddy.
 * @id: the allocation.
 * @first: first entry.
 * @count: number of entries; @first + @count must not exceed the entries.
 * @codes: receives @count BUDDY_CODE_* values, one per byte.
 *
 * As buddy_get_map(), addressed by id on /dev/buddy.
 *
 * Return: 0, or -errno (-ENOENT, -EINVAL for a range past the end, -EPERM).
 */
int buddy_get_map_id(int devfd, uint64_t id, uint64_t first, uint64_t count,
		     uint8_t *codes);

/**
 * buddy_set_target() - BUDDY_IOC_SET_TARGET: re-stripe a live allocation.
 * @devfd: descriptor of /dev/buddy.
 * @id: the allocation.
 * @target: new BUDDY_TARGET_* (not AUTO).
 * @codec: new BUDDY_CODEC_*; BUDDY_CODEC_DEFAULT keeps the current one.
 *
 * I/O on the allocation may go on meanwhile.  Whether the pools can take
 * the new layout is decided up front: the whole new layout must be free on
 * top of what the allocation holds (old and new are held together until
 * the end).  Any failure leaves the allocation as it was: data, target,
 * codec, bytes and histogram.
 *
 * Return: 0 (also when nothing changes), or -errno: -ENOENT (no such
 * allocation), -ENOSPC (not enough free pool now), -E2BIG (could never
 * fit), -EINTR (a fatal signal), -EINVAL, -EPERM.
 */
int buddy_set_target(int devfd, uint64_t id, unsigned int target,
		     unsigned int codec);

/**
 * buddy_profile_set() - BUDDY_IOC_PROFILE_SET: install AUTO profiles.
 * @devfd: descriptor of /dev/buddy.
 * @entries: @n profiles; an entry with the uid and label of an installed
 *	     one replaces it.  reserved must be zero, labels NUL-padded.
 * @n: number of entries (0 with BUDDY_PROFILE_REPLACE empties the table).
 * @flags: BUDDY_PROFILE_REPLACE drops every installed entry first.
 *
 * All or nothing: the kernel validates every entry before changing the
 * table.
 *
 * Return: 0, or -errno (-EINVAL for an invalid entry, -ENOSPC past
 * BUDDY_PROFILE_MAX entries, -EPERM).
 */
int buddy_profile_set(int devfd, const struct buddy_profile_entry *entries,
		      unsigned int n, unsigned int flags);

/**
 * buddy_profile_get() - BUDDY_IOC_PROFILE_GET: read the profile table.
 * @devfd: descriptor of /dev/buddy.
 * @entries: receives up to @cap entries, in installation order.
 * @cap: capacity of @entries (0 just counts).
 * @n: receives the number of entries written.
 * @total: receives the number of entries in the table; may be NULL.
 *
 * Return: 0, or -errno (-EPERM without CAP_SYS_ADMIN).
 */
int buddy_profile_get(int devfd, struct buddy_profile_entry *entries,
		      unsigned int cap, unsigned int *n, unsigned int *total);

/*
 * AUTO allocations: BUDDY_TARGET_AUTO lets the module pick the target from
 * its profile table (installed by buddyd, keyed by the caller's uid and the
 * label), or its auto_target parameter when no profile matches.
 */

/**
 * buddy_alloc_auto() - create an allocation whose target the module picks.
 * @devfd: descriptor of /dev/buddy.
 * @size: logical size in bytes.
 * @label: label of at most BUDDY_LABEL_LEN - 1 printable ASCII bytes without
 *	   '/', or NULL for none; profiles match on (uid, label).
 * @res: receives the request as the kernel completed it: @res->target is the
 *	 target chosen, @res->codec the codec, @res->target_source
 *	 BUDDY_SRC_PROFILE or BUDDY_SRC_DEFAULT, @res->id and @res->fd.
 *
 * The request is BUDDY_TARGET_AUTO with BUDDY_CODEC_DEFAULT (the profile's
 * codec, else BPC) and BUDDY_ALLOC_CLOEXEC.  A module without
 * BUDDY_FEAT_AUTO answers -EINVAL.
 *
 * Return: the new allocation's file descriptor, or -errno (as buddy_alloc();
 * -EINVAL without calling the kernel when @label is too long).
 */
int buddy_alloc_auto(int devfd, uint64_t size, const char *label,
		     struct buddy_alloc *res);

/**
 * buddy_source_name() - name of a target source.
 * @source: BUDDY_SRC_* value (struct buddy_alloc.target_source).
 *
 * Return: "explicit", "profile" or "default"; "?" for an unknown value.
 */
const char *buddy_source_name(unsigned int source);

/**
 * buddy_feature_name() - name of one feature bit.
 * @feature: one BUDDY_FEAT_* bit.
 *
 * For messages such as "buddy.ko lacks uring-cmd".
 *
 * Return: "rw", "io-uring", "get-map", "admin", "auto" or "uring-cmd"; "?"
 * for anything else (no bit, several bits, an unknown bit).
 */
const char *buddy_feature_name(uint64_t feature);

/*
 * Asynchronous I/O through io_uring (liburing): reads and writes of
 * allocations, and any BUDDY_IOC_* command as IORING_OP_URING_CMD, queued on
 * one ring and reaped as completions.  A context is not thread-safe: use one
 * per thread.  Results follow the synchronous calls: a byte count (short at
 * the end of an allocation) or -errno.
 */

/* Opaque: the ring and its bookkeeping. */
struct buddy_aio;

/**
 * struct buddy_aio_completion - one finished operation.
 * @user_data:	the value given when the operation was queued.
 * @res:	bytes read or written (0 for a read at or past the end), the
 *		ioctl's return value for buddy_aio_ioctl(), or -errno.
 */
struct buddy_aio_completion {
	uint64_t user_data;
	int64_t res;
};

/**
 * buddy_aio_init() - create an io_uring context.
 * @depth: submission queue entries (1..4096); up to 2 * @depth operations
 *	   may be queued or in flight at once.
 * @err: receives -errno on failure; may be NULL.
 *
 * Return: the context (free it with buddy_aio_exit()), or NULL: -EINVAL for
 * a bad @depth, -ENOMEM, -ENOSYS or -EPERM when the kernel has no io_uring
 * or forbids it, as io_uring_queue_init() reports.
 */
struct buddy_aio *buddy_aio_init(unsigned int depth, int *err);

/**
 * buddy_aio_exit() - tear a context down.
 * @ctx: context from buddy_aio_init(), or NULL.
 *
 * Operations still queued are dropped; operations in flight complete in the
 * kernel but their results are lost: call buddy_aio_wait() until
 * buddy_aio_pending() is 0 first when they matter (their buffers must stay
 * valid until then).
 */
void buddy_aio_exit(struct buddy_aio *ctx);

/**
 * buddy_aio_read() - queue a read of an allocation.
 * @ctx: context.
 * @afd: allocation descriptor.
 * @buf: destination; must stay valid until the completion is reaped.
 * @len: bytes to read, at most UINT32_MAX (the kernel moves at most about
 *	 2 GiB per operation and reports a short count beyond).
 * @off: logical offset, at most INT64_MAX.
 * @user_data: returned in the completion.
 *
 * Nothing reaches the kernel until buddy_aio_submit() or buddy_aio_wait(),
 * unless the submission queue is full, which submits what is queued first.
 *
 * Return: 0, or -errno: -EINVAL for @len or @off out of range, -EBUSY when
 * 2 * depth operations are already queued or in flight (reap some first),
 * or the error of the implicit submission.
 */
int buddy_aio_read(struct buddy_aio *ctx, int afd, void *buf, size_t len,
		   uint64_t off, uint64_t user_data);

/**
 * buddy_aio_write() - queue a write to an allocation.
 * @ctx: context.
 * @afd: allocation descriptor.
 * @buf: source; must stay valid until the completion is reaped.
 * @len: bytes to write, as for buddy_aio_read().
 * @off: logical offset, as for buddy_aio_read().
 * @user_data: returned in the completion.
 *
 * The completion reports a short count for a write that crosses the end of
 * the allocation and -ENOSPC for one that starts at or after it.
 *
 * Return: 0, or -errno as buddy_aio_read().
 */
int buddy_aio_write(struct buddy_aio *ctx, int afd, const void *buf,
		    size_t len, uint64_t off, uint64_t user_data);

/**
 * buddy_aio_ioctl() - queue a BUDDY_IOC_* command as IORING_OP_URING_CMD.
 * @ctx: context.
 * @fd: /dev/buddy or an allocation descriptor.
 * @cmd: the BUDDY_IOC_* number (the SQE's cmd_op).
 * @arg: the command's argument struct, as for ioctl(); must stay valid until
 *	 the completion is reaped (the kernel reads and writes it then).
 * @user_data: returned in the completion.
 *
 * The command runs exactly as ioctl(@fd, @cmd, @arg) would, in an io_uring
 * worker; its completion's res is the ioctl's return value (0) or -errno.
 * BUDDY_IOC_ALLOC this way reports the new descriptor in the argument's fd
 * field.  Needs BUDDY_FEAT_URING_CMD; an older module completes with
 * -EOPNOTSUPP.
 *
 * Return: 0, or -errno as buddy_aio_read().
 */
int buddy_aio_ioctl(struct buddy_aio *ctx, int fd, unsigned int cmd,
		    void *arg, uint64_t user_data);

/**
 * buddy_aio_submit() - hand every queued operation to the kernel.
 * @ctx: context.
 *
 * Return: the number of operations submitted (0 when none was queued), or
 * -errno from io_uring_enter(2).
 */
int buddy_aio_submit(struct buddy_aio *ctx);

/**
 * buddy_aio_wait() - reap completions.
 * @ctx: context.
 * @c: receives up to @n completions, in completion order.
 * @n: capacity of @c, at least 1.
 *
 * Submits what is queued, waits until at least one operation has completed
 * (retrying when a signal interrupts the wait), then collects every
 * completion available, up to @n, without waiting further.
 *
 * Return: the number of completions written, 0 when nothing was queued or
 * in flight, or -errno (-EINVAL for @n of 0).
 */
int buddy_aio_wait(struct buddy_aio *ctx, struct buddy_aio_completion *c,
		   unsigned int n);

/**
 * buddy_aio_pending() - operations queued or in flight.
 * @ctx: context.
 *
 * Return: the number of operations whose completion has not been reaped.
 */
unsigned int buddy_aio_pending(const struct buddy_aio *ctx);

/*
 * Whole-buffer codecs (lib/tcodec.h: cDMA's ZVC, RLE and zlib,
 * CSWAP's LZ4, Gist's CSR, Binarize and DPR, and the device's entry
 * storage), for userspace policies that compress a buffer before writing
 * it to an allocation (the Python package's DNN policies).  None of them
 * is a kernel codec: the device compresses with BUDDY_CODEC_* only.
 */
#define BUDDY_TCODEC_LOSSY	(1U << 0)	/* decodes to rounded values */
#define BUDDY_TCODEC_MASK	(1U << 1)	/* decodes to 1.0f where x > 0 */
#define BUDDY_TCODEC_WORDS	(1U << 2)	/* length a multiple of 4 */

/**
 * buddy_tcodec_count() - number of whole-buffer codecs.
 *
 * Return: N; the codecs are indices 0..N-1.
 */
int buddy_tcodec_count(void);

/**
 * buddy_tcodec_find() - index of a whole-buffer codec.
 * @name: "zvc", "rle", "zlib", "lz4", "csr", "entry-bpc", ..., "binarize",
 *	  "dpr16", "dpr10", "dpr8".
 * @allow: 0, or BUDDY_TCODEC_LOSSY and/or BUDDY_TCODEC_MASK to admit codecs
 *	   that do not give the input bytes back.
 *
 * Return: the index, or -ENOENT for an unknown name, -EPERM for a lossy or
 * mask codec @allow does not admit, -EINVAL for a NULL @name or an unknown
 * @allow bit.
 */
int buddy_tcodec_find(const char *name, unsigned int allow);

/**
 * buddy_tcodec_name() - name of a whole-buffer codec.
 * @idx: index.
 *
 * Return: the name, or NULL for an index out of range.
 */
const char *buddy_tcodec_name(int idx);

/**
 * buddy_tcodec_flags() - BUDDY_TCODEC_* flags of a codec.
 * @idx: index.
 *
 * Return: the flags, or -EINVAL for an index out of range.
 */
int buddy_tcodec_flags(int idx);

/**
 * buddy_tcodec_bound() - largest encoding of @len bytes.
 * @idx: index.
 * @len: input bytes.
 *
 * Return: the bound in bytes, 0 for an index out of range.
 */
size_t buddy_tcodec_bound(int idx, size_t len);

/**
 * buddy_tcodec_encode() - encode a buffer.
 * @idx: index.
 * @src: @len input bytes.
 * @len: input length (a multiple of 4 for BUDDY_TCODEC_WORDS codecs).
 * @dst: output, @cap bytes (buddy_tcodec_bound() is always enough).
 * @cap: output capacity.
 *
 * Return: the encoded length, or -EINVAL (bad index, NULL buffer, a length
 * the codec does not take), -ENOSPC when @cap is too small.
 */
ssize_t buddy_tcodec_encode(int idx, const void *src, size_t len, void *dst,
			    size_t cap);

/**
 * buddy_tcodec_decode() - decode a whole stream.
 * @idx: index.
 * @src: the @srclen bytes buddy_tcodec_encode() gave.
 * @srclen: stream length; every byte must be used.
 * @dst: output of exactly @dstlen bytes, the original length.
 * @dstlen: original length.
 *
 * Return: 0, or -EINVAL for a bad index or buffer, or a stream that is
 * malformed, does not decode to @dstlen bytes or leaves bytes unread.
 */
int buddy_tcodec_decode(int idx, const void *src, size_t srclen, void *dst,
			size_t dstlen);

#endif /* BUDDY_TOOLS_LIBBUDDY_H */
