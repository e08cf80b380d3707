// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libbuddy.c - userspace access to /dev/buddy: open, query, allocate, move
 * bytes, describe, and name or parse targets and codecs.
 *
 * Two backends answer the same calls: buddy.ko through ioctl(2) and
 * pread(2)/pwrite(2), and the in-process device (inproc.c), selected by
 * buddy_open("inproc:..."), BUDDY_DEVICE=inproc:... or buddy_open_inproc().
 * Every call goes through the backend of its descriptor, below.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "inproc.h"
#include "libbuddy.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* ---- backends ---------------------------------------------------------- */

/* Each returns what the syscall would, as a value or -errno. */
struct buddy_backend {
	int (*ioctl)(int fd, unsigned long cmd, void *arg);
	ssize_t (*rw)(int fd, void *buf, size_t len, uint64_t off,
		      bool write);
};

static int kernel_ioctl(int fd, unsigned long cmd, void *arg)
{
	int r = ioctl(fd, cmd, arg);

	return r < 0 ? -errno : r;
}

static ssize_t kernel_rw(int fd, void *buf, size_t len, uint64_t off,
			 bool write)
{
	ssize_t n = write ? pwrite(fd, buf, len, (off_t)off) :
			    pread(fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static const struct buddy_backend kernel_backend = {
	.ioctl = kernel_ioctl,
	.rw = kernel_rw,
};

static const struct buddy_backend inproc_backend = {
	.ioctl = inproc_ioctl,
	.rw = inproc_rw,
};

static inline const struct buddy_backend *backend(int fd)
{
	return inproc_owns(fd) ? &inproc_backend : &kernel_backend;
}

/* See libbuddy.h. */
int buddy_ioctl(int fd, unsigned long cmd, void *arg)
{
	return backend(fd)->ioctl(fd, cmd, arg);
}

/* See libbuddy.h. */
int buddy_open_inproc(const char *opts)
{
	return inproc_open(opts ? opts : "", false);
}

/* See libbuddy.h. */
int buddy_is_inproc(int fd)
{
	return inproc_owns(fd);
}

/* See libbuddy.h. */
int buddy_close(int fd)
{
	if (inproc_owns(fd))
		return inproc_close(fd);
	return close(fd) ? -errno : 0;
}

/* The io_stat and code_stat lines of the module's sysfs directory. */
static int sysfs_u64s(const char *name, uint64_t *v, unsigned int n)
{
	char path[256];
	unsigned int k;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", BUDDY_SYSFS_DIR, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (k = 0; k < n; k++)
		if (fscanf(f, "%" SCNu64, &v[k]) != 1)
			ret = -EIO;
	fclose(f);
	return ret;
}

/* See libbuddy.h. */
int buddy_device_stats(int devfd, struct buddy_counters *io,
		       uint64_t codes[BUDDY_CODE_NR])
{
	int ret;

	if (inproc_owns(devfd))
		return inproc_stats(devfd, io, codes);
	ret = sysfs_u64s("io_stat", (uint64_t *)io,
			 sizeof(*io) / sizeof(uint64_t));
	return ret ? ret : sysfs_u64s("code_stat", codes, BUDDY_CODE_NR);
}

/* ---- the calls ------------------------------------------------------------ */

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
int buddy_open(const char *path)
{
	const char *env = getenv("BUDDY_DEVICE");
	int fd;

	if (!path && env && *env)
		path = env;
	if (path && !strncmp(path, INPROC_PREFIX, strlen(INPROC_PREFIX)))
		return inproc_open(path + strlen(INPROC_PREFIX), true);
	fd = open(path ? path : BUDDY_DEV_PATH, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/**
 * buddy_get_info() - BUDDY_IOC_GET_INFO: pools, usage and features.
 * @devfd: descriptor of /dev/buddy.
 * @info: filled on success.
 *
 * Return: 0, or -errno.
 */
int buddy_get_info(int devfd, struct buddy_info *info)
{
	return buddy_ioctl(devfd, BUDDY_IOC_GET_INFO, info);
}

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
int buddy_alloc(int devfd, struct buddy_alloc *req)
{
	int ret = buddy_ioctl(devfd, BUDDY_IOC_ALLOC, req);

	return ret < 0 ? ret : req->fd;
}

/*
 * A close-on-exec BUDDY_IOC_ALLOC request; -EINVAL when @label (NULL for
 * none) does not fit.
 */
static int alloc_req_init(struct buddy_alloc *req, uint64_t size,
			  unsigned int target, unsigned int codec,
			  const char *label)
{
	memset(req, 0, sizeof(*req));
	req->size = size;
	req->target = target;
	req->codec = codec;
	req->flags = BUDDY_ALLOC_CLOEXEC;
	if (label) {
		if (strlen(label) >= sizeof(req->label))
			return -EINVAL;
		strcpy(req->label, label);
	}
	return 0;
}

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
		       unsigned int codec, const char *label, uint64_t *id_out)
{
	struct buddy_alloc req;
	int fd;

	if (alloc_req_init(&req, size, target, codec, label))
		return -EINVAL;
	fd = buddy_alloc(devfd, &req);
	if (fd >= 0 && id_out)
		*id_out = req.id;
	return fd;
}

/*
 * buddy_pread() and buddy_pwrite() (@is_write): pread() or pwrite() until
 * @len bytes are moved or the end of the allocation is reached.
 */
static ssize_t rw_full(int afd, void *buf, size_t len, uint64_t off,
		       bool is_write)
{
	const struct buddy_backend *b = backend(afd);
	size_t done = 0;

	while (done < len) {
		ssize_t n = b->rw(afd, (char *)buf + done, len - done,
				  off + done, is_write);

		if (n < 0) {
			if (n == -EINTR)
				continue;
			return done ? (ssize_t)done : n;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

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
ssize_t buddy_pread(int afd, void *buf, size_t len, uint64_t off)
{
	return rw_full(afd, buf, len, off, false);
}

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
ssize_t buddy_pwrite(int afd, const void *buf, size_t len, uint64_t off)
{
	return rw_full(afd, (void *)buf, len, off, true);
}

/**
 * buddy_alloc_stat() - BUDDY_IOC_ALLOC_STAT on an allocation descriptor.
 * @afd: allocation descriptor.
 * @st: filled on success; @st->id is sent as 0 (this allocation).
 *
 * Return: 0, or -errno.
 */
int buddy_alloc_stat(int afd, struct buddy_alloc_stat *st)
{
	memset(st, 0, sizeof(*st));
	return buddy_ioctl(afd, BUDDY_IOC_ALLOC_STAT, st);
}

/*
 * BUDDY_IOC_GET_MAP in batches, nibbles unpacked: on an allocation
 * descriptor with @id 0 (this allocation), or on /dev/buddy by @id.
 */
static int get_map(int fd, uint64_t id, uint64_t first, uint64_t count,
		   uint8_t *codes)
{
	enum { BATCH = 8192 };	/* entries per ioctl */
	uint8_t packed[BATCH / 2];
	struct buddy_map map;
	uint64_t i, n;

	do {
		n = count < BATCH ? count : BATCH;
		memset(&map, 0, sizeof(map));
		map.id = id;
		map.first = first;
		map.count = n;
		map.codes_ptr = (uintptr_t)packed;
		int ret = buddy_ioctl(fd, BUDDY_IOC_GET_MAP, &map);

		if (ret < 0)
			return ret;
		for (i = 0; i < n; i++)
			codes[i] = (packed[i / 2] >> (i % 2 * 4)) & 0xf;
		first += n;
		codes += n;
		count -= n;
	} while (count);
	return 0;
}

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
int buddy_get_map(int afd, uint64_t first, uint64_t count, uint8_t *codes)
{
	return get_map(afd, 0, first, count, codes);
}

/**
 * buddy_strerror() - explain an error of one operation.
 * @err: errno value, negative or positive.
 * @op: enum buddy_op of the operation that failed.
 *
 * Return: a sentence without a trailing newline; strerror()'s text for
 * errors the ABI gives no particular meaning.
 */
const char *buddy_strerror(int err, int op)
{
	if (err < 0)
		err = -err;
	switch (op) {
	case BUDDY_OP_OPEN:
		if (err == ENOENT || err == ENODEV || err == ENXIO)
			return "no /dev/buddy: the buddy module is not loaded";
		if (err == EACCES || err == EPERM)
			return "no permission to open /dev/buddy";
		if (err == EINVAL)
			return "bad in-process device options (device_mb 1..1048576, max_ratio 1..16, chunk_kb a multiple of 4 in 4..1048576, user_limit_mb, auto_target 128/96/64/32/8)";
		if (err == EBUSY)
			return "an in-process device with other options is open in this process";
		break;
	case BUDDY_OP_ALLOC:
		switch (err) {
		case ENOSPC:
			return "the device pool or the buddy carve-out cannot hold this allocation now";
		case E2BIG:
			return "larger than the pools could ever hold, or an unknown non-zero field of a newer ABI";
		case EDQUOT:
			return "over this user's share of the device pool and carve-out (user_limit_mb)";
		case EBADF:
			return "/dev/buddy is open read-only; allocating needs it open for writing";
		case EINVAL:
			return "invalid size, target, codec, flags, label or reserved field";
		case EMFILE:
		case ENFILE:
			return "no free file descriptor for the allocation";
		case ENOMEM:
			return "the kernel is out of memory for the allocation's metadata";
		}
		break;
	case BUDDY_OP_READ:
	case BUDDY_OP_WRITE:
		if (err == ENOSPC)
			return "the offset is at or past the end of the allocation";
		if (err == EINVAL)
			return "invalid offset or length";
		if (err == EIO)
			return "a stored entry does not decode";
		break;
	case BUDDY_OP_STAT:
	case BUDDY_OP_MAP:
		if (err == EINVAL)
			return op == BUDDY_OP_MAP ?
			       "id is not this allocation's, or the range passes the last entry" :
			       "id is not this allocation's";
		break;
	case BUDDY_OP_LIST:
	case BUDDY_OP_SET_TARGET:
	case BUDDY_OP_PROFILE:
		if (err == EPERM)
			return "needs CAP_SYS_ADMIN";
		if (err == ENOENT && op == BUDDY_OP_SET_TARGET)
			return "no live allocation with this id";
		if (err == ENOSPC)
			return op == BUDDY_OP_PROFILE ?
			       "the profile table would hold more than BUDDY_PROFILE_MAX entries" :
			       "the pools cannot take the allocation at the new target now; it is left as it was";
		if (err == E2BIG && op == BUDDY_OP_SET_TARGET)
			return "the allocation could never fit the pools at the new target";
		if (err == EINVAL)
			return op == BUDDY_OP_PROFILE ?
			       "invalid uid, target, codec, label, flags or reserved field" :
			       "invalid argument (target, codec, flags, reserved field or element size)";
		break;
	}
	if (err == ENOTTY)
		return "not supported on this descriptor (wrong fd, or a module without this ioctl)";
	if (err == EFAULT)
		return "bad user pointer";
	return strerror(err);
}

static const struct {
	const char *name;
	unsigned int target;
} target_names[] = {
	{ "1x", BUDDY_TARGET_1X },
	{ "4/3x", BUDDY_TARGET_4_3X },
	{ "2x", BUDDY_TARGET_2X },
	{ "4x", BUDDY_TARGET_4X },
	{ "16x", BUDDY_TARGET_16X },
	{ "auto", BUDDY_TARGET_AUTO },
};

/**
 * buddy_target_parse() - parse a target compression ratio.
 * @s: "1", "4/3", "1.33", "2", "4" or "16", each with an optional "x";
 *     "auto"; or device bytes per entry as "128B", "96B", "64B", "32B",
 *     "8B" ("0B" is auto).
 * @target: receives the BUDDY_TARGET_* value (device bytes per entry).
 *
 * Return: 0, or -EINVAL for anything else.
 */
int buddy_target_parse(const char *s, unsigned int *target)
{
	static const struct {
		const char *ratio;
		unsigned int target;
	} ratios[] = {
		{ "1", BUDDY_TARGET_1X },	{ "4/3", BUDDY_TARGET_4_3X },
		{ "1.33", BUDDY_TARGET_4_3X },	{ "2", BUDDY_TARGET_2X },
		{ "4", BUDDY_TARGET_4X },	{ "16", BUDDY_TARGET_16X },
	};
	size_t i, len;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	if (!strcasecmp(s, "auto")) {
		*target = BUDDY_TARGET_AUTO;
		return 0;
	}
	len = strlen(s);
	if (s[len - 1] == 'B') {
		unsigned long v;

		if (s[0] < '0' || s[0] > '9')
			return -EINVAL;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end != s + len - 1)
			return -EINVAL;
		if (v != BUDDY_TARGET_AUTO && v != BUDDY_TARGET_1X &&
		    v != BUDDY_TARGET_4_3X && v != BUDDY_TARGET_2X &&
		    v != BUDDY_TARGET_4X && v != BUDDY_TARGET_16X)
			return -EINVAL;
		*target = v;
		return 0;
	}
	if (s[len - 1] == 'x' || s[len - 1] == 'X')
		len--;
	for (i = 0; i < ARRAY_SIZE(ratios); i++) {
		if (strlen(ratios[i].ratio) == len &&
		    !strncmp(ratios[i].ratio, s, len)) {
			*target = ratios[i].target;
			return 0;
		}
	}
	return -EINVAL;
}

/**
 * buddy_target_name() - name of a target.
 * @target: BUDDY_TARGET_* value.
 *
 * Return: "1x", "4/3x", "2x", "4x", "16x" or "auto"; "?" when @target is
 * not a valid target.
 */
const char *buddy_target_name(unsigned int target)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(target_names); i++)
		if (target_names[i].target == target)
			return target_names[i].name;
	return "?";
}

static const char *const codec_names[BUDDY_CODEC_NR] = {
	[BUDDY_CODEC_DEFAULT] = "default",
	[BUDDY_CODEC_BPC] = "bpc",
	[BUDDY_CODEC_ZVC] = "zvc",
	[BUDDY_CODEC_BDI] = "bdi",
	[BUDDY_CODEC_FPC] = "fpc",
	[BUDDY_CODEC_NONE] = "none",
};

/**
 * buddy_codec_name() - name of a codec.
 * @codec: BUDDY_CODEC_* value.
 *
 * Return: "default", "bpc", "zvc", "bdi", "fpc" or "none"; "?" for an
 * unknown value.
 */
const char *buddy_codec_name(unsigned int codec)
{
	return codec < BUDDY_CODEC_NR ? codec_names[codec] : "?";
}

/**
 * buddy_codec_parse() - BUDDY_CODEC_* value of a codec name.
 * @s: a name as returned by buddy_codec_name(), any case.
 *
 * Return: the codec value, or -EINVAL for an unknown name.
 */
int buddy_codec_parse(const char *s)
{
	int i;

	for (i = 0; s && i < BUDDY_CODEC_NR; i++)
		if (!strcasecmp(s, codec_names[i]))
			return i;
	return -EINVAL;
}

/* ---- admin calls on /dev/buddy (CAP_SYS_ADMIN) -------------------------- */

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
	       unsigned int cap, unsigned int *count, uint64_t *total)
{
	struct buddy_list l;

	memset(&l, 0, sizeof(l));
	l.stats_ptr = (uintptr_t)arr;
	l.stat_size = sizeof(*arr);
	l.count = cap;
	l.start_id = start_id;
	int ret = buddy_ioctl(devfd, BUDDY_IOC_LIST, &l);

	if (ret < 0)
		return ret;
	*count = l.count;
	if (total)
		*total = l.total;
	return 0;
}

/**
 * buddy_stat_id() - BUDDY_IOC_ALLOC_STAT on /dev/buddy: any allocation by id.
 * @devfd: descriptor of /dev/buddy.
 * @id: the allocation.
 * @st: filled on success.
 *
 * Return: 0, or -errno (-ENOENT when no live allocation has @id, -EPERM
 * without CAP_SYS_ADMIN).
 */
int buddy_stat_id(int devfd, uint64_t id, struct buddy_alloc_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->id = id;
	return buddy_ioctl(devfd, BUDDY_IOC_ALLOC_STAT, st);
}

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
		     uint8_t *codes)
{
	return get_map(devfd, id, first, count, codes);
}

/**
 * buddy_set_target() - BUDDY_IOC_SET_TARGET: re-stripe a live allocation.
 * @devfd: descriptor of /dev/buddy.
 * @id: the allocation.
 * @target: new BUDDY_TARGET_* (not AUTO).
 * @codec: new BUDDY_CODEC_*; BUDDY_CODEC_DEFAULT keeps the current one.
 *
 * I/O on the allocation may go on meanwhile.  Whether the pools can take
 * the new layout is decided up front: -ENOSPC leaves the allocation as it
 * was, data, target and codec.
 *
 * Return: 0 (also when nothing changes), or -errno: -ENOENT (no such
 * allocation), -ENOSPC (not enough free pool now), -E2BIG (could never
 * fit), -EINVAL, -EPERM.
 */
int buddy_set_target(int devfd, uint64_t id, unsigned int target,
		     unsigned int codec)
{
	struct buddy_set_target req;

	memset(&req, 0, sizeof(req));
	req.id = id;
	req.target = target;
	req.codec = codec;
	return buddy_ioctl(devfd, BUDDY_IOC_SET_TARGET, &req);
}

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
		      unsigned int n, unsigned int flags)
{
	struct buddy_profile req;

	memset(&req, 0, sizeof(req));
	req.entries_ptr = (uintptr_t)entries;
	req.count = n;
	req.flags = flags;
	return buddy_ioctl(devfd, BUDDY_IOC_PROFILE_SET, &req);
}

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
		      unsigned int cap, unsigned int *n, unsigned int *total)
{
	struct buddy_profile req;

	memset(&req, 0, sizeof(req));
	req.entries_ptr = (uintptr_t)entries;
	req.count = cap;
	int ret = buddy_ioctl(devfd, BUDDY_IOC_PROFILE_GET, &req);

	if (ret < 0)
		return ret;
	*n = req.count;
	if (total)
		*total = req.total;
	return 0;
}

/* ---- AUTO allocations and names ---------------------------------------- */

/* See libbuddy.h. */
int buddy_alloc_auto(int devfd, uint64_t size, const char *label,
		     struct buddy_alloc *res)
{
	if (alloc_req_init(res, size, BUDDY_TARGET_AUTO, BUDDY_CODEC_DEFAULT,
			   label))
		return -EINVAL;
	return buddy_alloc(devfd, res);
}

/* See libbuddy.h. */
const char *buddy_source_name(unsigned int source)
{
	switch (source) {
	case BUDDY_SRC_EXPLICIT:
		return "explicit";
	case BUDDY_SRC_PROFILE:
		return "profile";
	case BUDDY_SRC_DEFAULT:
		return "default";
	}
	return "?";
}

/* See libbuddy.h. */
const char *buddy_feature_name(uint64_t feature)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{ BUDDY_FEAT_RW, "rw" },
		{ BUDDY_FEAT_IO_URING, "io-uring" },
		{ BUDDY_FEAT_GET_MAP, "get-map" },
		{ BUDDY_FEAT_ADMIN, "admin" },
		{ BUDDY_FEAT_AUTO, "auto" },
		{ BUDDY_FEAT_URING_CMD, "uring-cmd" },
		{ BUDDY_FEAT_MMAP, "mmap" },
		{ BUDDY_FEAT_LINK_MODEL, "link-model" },
		{ BUDDY_FEAT_LINK_REQUESTS, "link-requests" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].bit == feature)
			return names[i].name;
	return "?";
}
