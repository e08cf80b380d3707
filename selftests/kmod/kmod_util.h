/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmod_util.h - what the buddy.ko selftests share: the module's parameters,
 * its sysfs files, the reservation formula, and a model of one allocation
 * that predicts its bytes, size codes and access counters exactly.
 *
 * The model is the spec of the data path, written out in userspace with the
 * very codecs the module links (core/):
 *   - entry i's stored form is buddy_entry_encode() with the allocation's
 *     codec; its stored size is buddy_code_bytes(code), except at 1x where
 *     any non-zero entry stores 128 bytes;
 *   - at target t the first min(stored, t) bytes live in the device slot, the
 *     rest in the buddy slot;
 *   - reading an entry counts entry_reads 1, device_sectors_read
 *     ceil(min(stored, t) / 32), buddy_sectors_read ceil(max(0, stored - t) /
 *     32) and buddy_accesses 1 when that is non-zero; writing likewise, plus
 *     overflows 1 when the old stored size was <= t and the new one is not;
 *   - a write that covers an entry only in part reads it first (one read and
 *     one write are counted).
 */
#ifndef BUDDY_KMOD_UTIL_H
#define BUDDY_KMOD_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/codec.h"
#include "lib/libbuddy.h"

/* Module parameters, read from /sys/module/buddy/parameters (-1: unknown). */
struct kparams {
	long long device_mb;
	long long max_ratio;
	long long device_node;
	long long buddy_node;
	long long chunk_kb;
	long long user_limit_mb;
	long long auto_target;
};

void kparams_read(struct kparams *p);
/* One integer module parameter; -1 when unreadable. */
long long kparam(const char *name);
/* Write a module parameter; 0 or -errno. */
int kparam_write(const char *name, long long v);
/* The first line of parameter @name, without its newline; 0 or -errno. */
int kparam_str(const char *name, char *buf, size_t len);
/* Write the text @val to parameter @name; 0 or -errno. */
int kparam_write_str(const char *name, const char *val);

/*
 * Read a single-line sysfs file of /sys/class/misc/buddy into @v (at most
 * @max numbers).  Returns the count, or -errno.
 */
int sysfs_u64s(const char *name, uint64_t *v, int max);
/* The whole first line of a buddy sysfs file, without the newline. */
int sysfs_line(const char *name, char *buf, size_t len);

/* Device and buddy bytes an allocation of @size reserves (spec formula). */
uint64_t need_device(uint64_t size, unsigned int target, uint64_t chunk_bytes);
uint64_t need_buddy(uint64_t size, unsigned int target, uint64_t chunk_bytes);

/* Largest size (0 if none) whose reservation fits @dev_free and @bud_free. */
uint64_t max_fitting_size(unsigned int target, uint64_t chunk_bytes,
			  uint64_t dev_free, uint64_t bud_free);

/* Largest size whose device plus carve-out bytes fit @total (user_limit_mb). */
uint64_t max_fitting_total(unsigned int target, uint64_t chunk_bytes,
			   uint64_t total);

/* Bytes stored for an entry of @code at @target. */
unsigned int stored_bytes(unsigned int target, unsigned int code);

/* One allocation as the spec says it behaves. */
struct model {
	const struct buddy_codec *codec;
	unsigned int target;
	uint64_t size;
	uint64_t nr;		/* entries */
	uint8_t *data;		/* nr * 128 bytes, the tail past size zero */
	uint8_t *code;		/* per entry */
	struct buddy_counters c;
};

int model_init(struct model *m, uint64_t size, unsigned int target,
	       unsigned int codec);
void model_free(struct model *m);
/* pwrite/pread as the module should do them: bytes moved, -ENOSPC. */
ssize_t model_write(struct model *m, const void *buf, size_t len,
		    uint64_t off);
ssize_t model_read(struct model *m, void *buf, size_t len, uint64_t off);
void model_codes(const struct model *m, uint64_t codes[BUDDY_CODE_SLOTS]);

/* Size code of one 128-byte entry under @codec (what the module stores). */
unsigned int entry_code(unsigned int codec, const uint8_t *entry);

/*
 * Fill @entry with 128 bytes whose size code under @codec is @code.
 * Deterministic; returns false when the codec cannot produce that code
 * with the candidates tried.
 */
bool entry_with_code(unsigned int codec, unsigned int code, uint8_t *entry);

/* Bytes of the named class (tools/common/datagen.h), deterministic by seed. */
void fill_class(int cls, uint64_t seed, void *buf, size_t len);

/* Text of /proc/self/fdinfo/FD; the value of "key:\t" into @val. */
int fdinfo_value(int fd, const char *key, char *val, size_t len);

/* Index of the first differing byte, or -1. */
long first_diff(const void *a, const void *b, size_t len);

/* Name of counter @k of struct buddy_counters (0..7). */
const char *counter_name(unsigned int k);

/*
 * Fault @pages pages of a fresh 1x allocation through the window after
 * setting window_mb to 1 (256 pages): with 300 or more, every page
 * resident before that is not held is evicted.  0 or -errno.
 */
int window_flush(int devfd, unsigned int pages);

/*
 * A page of anonymous memory whose first touch blocks in userfaultfd until
 * uffd_page_fill(): a copy from it into a window page (process_vm_writev,
 * an O_DIRECT transfer) holds the window page for as long as the test
 * wants.
 */
struct uffd_page {
	int uffd;
	uint8_t *page;
};

/* Set one up: 0, or -errno (no userfaultfd: the caller SKIPs). */
int uffd_page_init(struct uffd_page *u);
/* Wait up to @ms for a fault on it: 0, -ETIMEDOUT or -errno. */
int uffd_page_wait(struct uffd_page *u, int ms);
/* Resolve the fault with the 4096 bytes at @data: 0 or -errno. */
int uffd_page_fill(struct uffd_page *u, const void *data);
void uffd_page_free(struct uffd_page *u);

static inline const uint64_t *counters_u64(const struct buddy_counters *c)
{
	return (const uint64_t *)c;
}

#endif /* BUDDY_KMOD_UTIL_H */
