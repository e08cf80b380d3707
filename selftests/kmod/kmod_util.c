// SPDX-License-Identifier: GPL-2.0
/*
 * kmod_util.c - shared helpers of the buddy.ko selftests (see kmod_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tools/common/datagen.h"
#include "kmod_util.h"

const char *counter_name(unsigned int k)
{
	static const char *const names[8] = {
		"entry_reads", "entry_writes", "device_sectors_read",
		"device_sectors_written", "buddy_sectors_read",
		"buddy_sectors_written", "buddy_accesses", "overflows",
	};

	return k < 8 ? names[k] : "?";
}

static int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = 0;
	return n;
}

long long kparam(const char *name)
{
	char path[256], buf[64], *end;
	long long v;

	snprintf(path, sizeof(path), "%s/%s", BUDDY_PARAM_DIR, name);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	v = strtoll(buf, &end, 0);
	if (end == buf)
		return -1;
	return v;
}

int kparam_str(const char *name, char *buf, size_t len)
{
	char path[256];
	int n;

	snprintf(path, sizeof(path), "%s/%s", BUDDY_PARAM_DIR, name);
	n = read_text(path, buf, len);
	if (n < 0)
		return n;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int kparam_write_str(const char *name, const char *val)
{
	size_t len = strlen(val);
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", BUDDY_PARAM_DIR, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n < 0 ? n : (size_t)n == len ? 0 : -EIO;
}

int kparam_write(const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld\n", v);
	return kparam_write_str(name, buf);
}

void kparams_read(struct kparams *p)
{
	p->device_mb = kparam("device_mb");
	p->max_ratio = kparam("max_ratio");
	p->device_node = kparam("device_node");
	p->buddy_node = kparam("buddy_node");
	p->chunk_kb = kparam("chunk_kb");
	p->user_limit_mb = kparam("user_limit_mb");
	p->auto_target = kparam("auto_target");
}

int sysfs_line(const char *name, char *buf, size_t len)
{
	char path[256];
	char *nl;
	int n;

	snprintf(path, sizeof(path), "%s/%s", BUDDY_SYSFS_DIR, name);
	n = read_text(path, buf, len);
	if (n < 0)
		return n;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return strlen(buf);
}

int sysfs_u64s(const char *name, uint64_t *v, int max)
{
	char buf[4096], *p, *end;
	int n, i = 0;

	n = sysfs_line(name, buf, sizeof(buf));
	if (n < 0)
		return n;
	for (p = buf; *p && i < max; p = end) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
		i++;
	}
	return i;
}

static uint64_t round_up4k(uint64_t v)
{
	return (v + 4095) & ~(uint64_t)4095;
}

/* Sum over chunks of f(entries of the chunk); no overflow for any size. */
static uint64_t need(uint64_t size, unsigned int target, uint64_t chunk_bytes,
		     bool dev)
{
	uint64_t full = size / chunk_bytes, rest = size % chunk_bytes;
	uint64_t ce = chunk_bytes / BUDDY_ENTRY_SIZE;
	uint64_t per_full, per_rest, re;

	re = (rest + BUDDY_ENTRY_SIZE - 1) / BUDDY_ENTRY_SIZE;
	if (dev) {
		per_full = round_up4k((ce + 1) / 2 + ce * target);
		per_rest = re ? round_up4k((re + 1) / 2 + re * target) : 0;
	} else {
		per_full = round_up4k(ce * (BUDDY_ENTRY_SIZE - target));
		per_rest = round_up4k(re * (BUDDY_ENTRY_SIZE - target));
	}
	if (per_full && full > (UINT64_MAX - per_rest) / per_full)
		return UINT64_MAX;
	return full * per_full + per_rest;
}

uint64_t need_device(uint64_t size, unsigned int target, uint64_t chunk_bytes)
{
	return need(size, target, chunk_bytes, true);
}

uint64_t need_buddy(uint64_t size, unsigned int target, uint64_t chunk_bytes)
{
	return need(size, target, chunk_bytes, false);
}

uint64_t max_fitting_size(unsigned int target, uint64_t chunk_bytes,
			  uint64_t dev_free, uint64_t bud_free)
{
	uint64_t lo = 0, hi = (uint64_t)1 << 50;

	/* the reservation grows with the size: bisect for the last fit */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if (need_device(mid, target, chunk_bytes) <= dev_free &&
		    need_buddy(mid, target, chunk_bytes) <= bud_free)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

uint64_t max_fitting_total(unsigned int target, uint64_t chunk_bytes,
			   uint64_t total)
{
	uint64_t lo = 0, hi = (uint64_t)1 << 50;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if (need_device(mid, target, chunk_bytes) +
		    need_buddy(mid, target, chunk_bytes) <= total)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

unsigned int stored_bytes(unsigned int target, unsigned int code)
{
	if (code == BUDDY_CODE_ZERO)
		return 0;
	if (target == BUDDY_TARGET_1X)
		return BUDDY_ENTRY_SIZE;
	return buddy_code_bytes(code);
}

unsigned int entry_code(unsigned int codec, const uint8_t *entry)
{
	uint8_t out[BUDDY_STREAM_MAX];

	return buddy_entry_encode(buddy_codec_by_id(codec), entry, out);
}

int model_init(struct model *m, uint64_t size, unsigned int target,
	       unsigned int codec)
{
	memset(m, 0, sizeof(*m));
	m->codec = buddy_codec_by_id(codec);
	m->target = target;
	m->size = size;
	m->nr = (size + BUDDY_ENTRY_SIZE - 1) / BUDDY_ENTRY_SIZE;
	m->data = calloc(m->nr, BUDDY_ENTRY_SIZE);
	m->code = calloc(m->nr, 1);
	if (!m->codec || !m->data || !m->code) {
		model_free(m);
		return -ENOMEM;
	}
	return 0;
}

void model_free(struct model *m)
{
	free(m->data);
	free(m->code);
	m->data = NULL;
	m->code = NULL;
}

static unsigned int div32(unsigned int v)
{
	return (v + BUDDY_SECTOR_SIZE - 1) / BUDDY_SECTOR_SIZE;
}

static void count_read(struct model *m, uint64_t e)
{
	unsigned int s = stored_bytes(m->target, m->code[e]);
	unsigned int d = s < m->target ? s : m->target;
	unsigned int b = s > m->target ? s - m->target : 0;

	m->c.entry_reads++;
	m->c.device_sectors_read += div32(d);
	m->c.buddy_sectors_read += div32(b);
	if (b)
		m->c.buddy_accesses++;
}

static void store(struct model *m, uint64_t e)
{
	unsigned int olds = stored_bytes(m->target, m->code[e]);
	unsigned int code, s, d, b;

	code = entry_code(m->codec->id, m->data + e * BUDDY_ENTRY_SIZE);
	s = stored_bytes(m->target, code);
	d = s < m->target ? s : m->target;
	b = s > m->target ? s - m->target : 0;
	m->c.entry_writes++;
	m->c.device_sectors_written += div32(d);
	m->c.buddy_sectors_written += div32(b);
	if (b)
		m->c.buddy_accesses++;
	if (olds <= m->target && s > m->target)
		m->c.overflows++;
	m->code[e] = code;
}

ssize_t model_write(struct model *m, const void *buf, size_t len,
		    uint64_t off)
{
	uint64_t end, e;

	if (off >= m->size)
		return -ENOSPC;
	if (len > m->size - off)
		len = m->size - off;
	end = off + len;
	for (e = off / BUDDY_ENTRY_SIZE; e * BUDDY_ENTRY_SIZE < end; e++) {
		uint64_t es = e * BUDDY_ENTRY_SIZE;
		uint64_t a = off > es ? off : es;
		uint64_t z = end < es + BUDDY_ENTRY_SIZE ?
			     end : es + BUDDY_ENTRY_SIZE;

		if (a != es || z != es + BUDDY_ENTRY_SIZE)
			count_read(m, e);
		memcpy(m->data + a, (const uint8_t *)buf + (a - off), z - a);
		store(m, e);
	}
	return len;
}

ssize_t model_read(struct model *m, void *buf, size_t len, uint64_t off)
{
	uint64_t end, e;

	if (off >= m->size)
		return 0;
	if (len > m->size - off)
		len = m->size - off;
	end = off + len;
	for (e = off / BUDDY_ENTRY_SIZE; e * BUDDY_ENTRY_SIZE < end; e++)
		count_read(m, e);
	memcpy(buf, m->data + off, len);
	return len;
}

void model_codes(const struct model *m, uint64_t codes[BUDDY_CODE_SLOTS])
{
	uint64_t e;

	memset(codes, 0, sizeof(uint64_t) * BUDDY_CODE_SLOTS);
	for (e = 0; e < m->nr; e++)
		codes[m->code[e]]++;
}

void fill_class(int cls, uint64_t seed, void *buf, size_t len)
{
	datagen_fill((enum datagen_class)cls, seed, buf, len);
}

/* Candidate entry number @i (of a few families) for entry_with_code(). */
static void candidate(unsigned int i, uint8_t *e)
{
	struct datagen_rng r;
	unsigned int fam = i % 4, k = i / 4, w;

	datagen_seed(&r, 0x5eed0000 + i);
	memset(e, 0, BUDDY_ENTRY_SIZE);
	switch (fam) {
	case 0:	/* the first (k % 33) words random, the rest zero */
		for (w = 0; w < k % 33; w++)
			put_unaligned_le32((u32)datagen_next(&r), e + 4 * w);
		break;
	case 1:	/* every word small: (k % 32)-bit signed values */
		for (w = 0; w < 32; w++) {
			int64_t v = (int64_t)(datagen_next(&r) >> 33);

			v &= ((int64_t)1 << (k % 32)) - 1;
			v -= (int64_t)1 << (k % 32) >> 1;
			put_unaligned_le32((u32)v, e + 4 * w);
		}
		break;
	case 2:	/* a ramp from a random base, stride (k % 64) */
		w = (u32)datagen_next(&r);
		for (unsigned int j = 0; j < 32; j++)
			put_unaligned_le32(w + j * (k % 64) * (k % 64) * 977,
					   e + 4 * j);
		break;
	default: /* a datagen class */
		datagen_fill((enum datagen_class)(k % DATAGEN_NR), k, e,
			     BUDDY_ENTRY_SIZE);
		break;
	}
}

bool entry_with_code(unsigned int codec, unsigned int code, uint8_t *entry)
{
	unsigned int i;

	if (code == BUDDY_CODE_ZERO) {
		memset(entry, 0, BUDDY_ENTRY_SIZE);
		return true;
	}
	for (i = 0; i < 20000; i++) {
		candidate(i, entry);
		if (entry_code(codec, entry) == code)
			return true;
	}
	return false;
}

int fdinfo_value(int fd, const char *key, char *val, size_t len)
{
	char path[64], buf[4096], *p, *nl;
	size_t kl = strlen(key);
	int n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = read_text(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	for (p = buf; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (!strncmp(p, key, kl) && p[kl] == ':' && p[kl + 1] == '\t') {
			size_t l = nl ? (size_t)(nl - p) - kl - 2 :
				   strlen(p + kl + 2);

			if (l >= len)
				l = len - 1;
			memcpy(val, p + kl + 2, l);
			val[l] = 0;
			return 0;
		}
	}
	return -ENOENT;
}

long first_diff(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;
	size_t i;

	for (i = 0; i < len; i++)
		if (x[i] != y[i])
			return i;
	return -1;
}

int window_flush(int devfd, unsigned int pages)
{
	struct buddy_alloc b;
	volatile uint8_t sink = 0;
	uint8_t *m;
	unsigned int p;
	int ret;

	ret = kparam_write("window_mb", 1);
	if (ret)
		return ret;
	memset(&b, 0, sizeof(b));
	b.size = (uint64_t)pages * 4096;
	b.target = BUDDY_TARGET_1X;
	b.flags = BUDDY_ALLOC_CLOEXEC;
	if (ioctl(devfd, BUDDY_IOC_ALLOC, &b))
		return -errno;
	m = mmap(NULL, b.size, PROT_READ, MAP_SHARED, b.fd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		close(b.fd);
		return ret;
	}
	for (p = 0; p < pages; p++)
		sink += m[(size_t)p * 4096];
	munmap(m, b.size);
	close(b.fd);
	(void)sink;
	return 0;
}

int uffd_page_init(struct uffd_page *u)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	int ret;

	u->page = MAP_FAILED;
	u->uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u->uffd < 0)
		return -errno;
	if (ioctl(u->uffd, UFFDIO_API, &api))
		goto err;
	u->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->page == MAP_FAILED)
		goto err;
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)u->page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg))
		goto err;
	return 0;
err:
	ret = -errno;
	uffd_page_free(u);
	return ret;
}

int uffd_page_wait(struct uffd_page *u, int ms)
{
	struct pollfd pfd = { .fd = u->uffd, .events = POLLIN };
	struct uffd_msg msg;
	int r = poll(&pfd, 1, ms);

	if (r < 0)
		return -errno;
	if (!r)
		return -ETIMEDOUT;
	if (read(u->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return -errno;
	if (msg.event != UFFD_EVENT_PAGEFAULT ||
	    (msg.arg.pagefault.address & ~4095ULL) != (unsigned long)u->page)
		return -EPROTO;
	return 0;
}

int uffd_page_fill(struct uffd_page *u, const void *data)
{
	struct uffdio_copy c;

	memset(&c, 0, sizeof(c));
	c.dst = (unsigned long)u->page;
	c.src = (unsigned long)data;
	c.len = 4096;
	return ioctl(u->uffd, UFFDIO_COPY, &c) ? -errno : 0;
}

void uffd_page_free(struct uffd_page *u)
{
	if (u->page != MAP_FAILED)
		munmap(u->page, 4096);
	u->page = MAP_FAILED;
	if (u->uffd >= 0)
		close(u->uffd);
	u->uffd = -1;
}
