// SPDX-License-Identifier: GPL-2.0
/*
 * alloc_table.c - the driver interposer's table of live device
 * allocations, their labels, and the record file they end in:
 * DIR/cuda-PID.tsv in python/buddy/cuda/records.py's format, which
 * `buddyctl profile` ingests as it ingests the PyTorch hook's.
 *
 * The process's file is opened at its first tracked allocation, so that a
 * process that makes none leaves none.  A forked child starts with an
 * empty table (a CUDA context is never inherited: what the parent
 * allocated is not the child's), its own file and its own thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_prof.h"
#include "tools/profile/interposer/profile_shm.h"

struct cu_state cu = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
};

const char *const cu_path_name[CU_PATH_NR] = {
	[CU_PATH_ALLOC] = "cuMemAlloc", [CU_PATH_PITCH] = "cuMemAllocPitch",
	[CU_PATH_MANAGED] = "cuMemAllocManaged",
	[CU_PATH_ASYNC] = "cuMemAllocAsync",
	[CU_PATH_POOL] = "cuMemAllocFromPoolAsync", [CU_PATH_VMM] = "cuMemMap",
};

double cu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* records.py's escape(): \\, \t, \n, \r, \xNN below 0x20 and 0x7f. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '\\')
			fputs("\\\\", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

/* A note in the records; on stderr too when @warn. */
static void vnote(bool warn, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (warn)
		fprintf(stderr, "buddy.cuda: pid %d: %s\n", (int)getpid(), msg);
	if (!cu.out)
		return;
	fputs("note\t", cu.out);
	put_escaped(cu.out, msg);
	fputc('\n', cu.out);
	fflush(cu.out);
}

void cu_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(true, fmt, ap);
	va_end(ap);
}

static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(false, fmt, ap);
	va_end(ap);
}

void cu_note_once(const char *key, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	for (i = 0; i < 8 && cu.noted[i][0]; i++)
		if (!strncmp(cu.noted[i], key, sizeof(cu.noted[i]) - 1))
			return;
	if (i < 8)
		snprintf(cu.noted[i], sizeof(cu.noted[i]), "%s", key);
	va_start(ap, fmt);
	vnote(true, fmt, ap);
	va_end(ap);
}

static long env_num(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "buddy.cuda: %s=%s is not a number in %ld..%ld: %ld used\n",
			name, s, lo, hi, def);
		return def;
	}
	return v;
}

/* BUDDY_CUDA_CODECS: the records' codec mask (the hook's variable). */
static unsigned int env_codecs(void)
{
	const char *s = getenv("BUDDY_CUDA_CODECS");
	unsigned int mask = 0;
	char buf[64], *tok, *save = NULL;

	if (!s || !*s)
		return BUDDY_SIZING_ALL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned int c;

		for (c = 0; c < BUDDY_SIZING_NC; c++)
			if (!strcmp(tok, buddy_sizing_codec_name(c)))
				break;
		if (c == BUDDY_SIZING_NC) {
			fprintf(stderr, "buddy.cuda: BUDDY_CUDA_CODECS=%s: %s is not bpc, zvc, bdi or fpc: all are sized\n",
				s, tok);
			return BUDDY_SIZING_ALL;
		}
		mask |= 1u << c;
	}
	return mask ? mask : BUDDY_SIZING_ALL;
}

/* The settings, per process (again in a forked child). */
static void fresh(void)
{
	const char *dir = getenv("BUDDY_CUDA_DRIVER_DIR");
	struct timespec ts;

	cu.pid = getpid();
	cu.enabled = dir && *dir && strlen(dir) < sizeof(cu.dir);
	if (cu.enabled)
		snprintf(cu.dir, sizeof(cu.dir), "%s", dir);
	cu.t0_mono = cu_now();
	clock_gettime(CLOCK_REALTIME, &ts);
	cu.t0_unix = ts.tv_sec + ts.tv_nsec / 1e9;
	cu.points = env_num("BUDDY_CUDA_POINTS", 10, 0, 100000);
	cu.first_s = env_num("BUDDY_CUDA_FIRST_MS", 1000, 0, 86400000) / 1e3;
	cu.piece_bytes = (uint64_t)env_num("BUDDY_CUDA_PIECE_MIB", 64, 1,
					   4096) << 20;
	cu.threads = env_num("BUDDY_CUDA_THREADS", 0, 0,
			     BUDDY_SIZING_MAX_THREADS);
	cu.codecs = env_codecs();
}

/*
 * In a forked child: nothing of the parent's is the child's.  The sizing
 * threads and the snapshot thread stayed in the parent; their memory is
 * left behind, not freed (freeing would wait for threads that are not
 * there).
 */
static void forked(void)
{
	pthread_mutex_init(&cu.lock, NULL);
	pthread_cond_init(&cu.wake, NULL);
	if (cu.out)
		fclose(cu.out);		/* the parent's file stays whole */
	cu.out = NULL;
	cu.started = false;
	cu.thread_running = false;
	cu.stop = false;
	cu.sizer = NULL;
	free(cu.staging);
	cu.staging = NULL;
	cu.nallocs = 0;
	for (size_t i = 0; i < cu.nlabels; i++)
		cu.labels[i].written = false;
	memset(cu.calls, 0, sizeof(cu.calls));
	memset(cu.bytes, 0, sizeof(cu.bytes));
	memset(cu.noted, 0, sizeof(cu.noted));
	cu.ncalls = cu.label_ns = cu.copy_errors = 0;
	cu.nsnaps = 0;
	cu.nheld = cu.nmarked = 0;
	fresh();
}

static void before_fork(void)
{
	pthread_mutex_lock(&cu.lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&cu.lock);
}

__attribute__((constructor)) static void cu_init(void)
{
	void *bt[2];

	fresh();
	/* backtrace() loads libgcc_s on its first call: not inside a hook */
	if (cu.enabled)
		backtrace(bt, 2);
	pthread_atfork(before_fork, after_fork_parent, forked);
}

/* ---- labels ---------------------------------------------------------------- */

static bool is_driver_or_self(const char *path, const void *base)
{
	static void *self;
	const char *b = strrchr(path, '/');
	Dl_info di;

	if (!self && dladdr((void *)cu_track, &di))
		self = di.dli_fbase;
	if (base == self)
		return true;
	b = b ? b + 1 : path;
	return !strncmp(b, "libcuda.so", 10) || !strncmp(b, "libcudart", 9) ||
	       !strncmp(b, "libcudart_static", 16);
}

/*
 * The allocation's native site: its first return address outside libcuda,
 * libcudart and this library, "object+0xOFFSET symbol" (the symbol when
 * the object exports it).
 */
static void native_site(char *site, size_t len)
{
	void *frames[32];
	int n = backtrace(frames, 32);

	for (int i = 1; i < n; i++) {
		Dl_info di;
		const char *b;

		if (!dladdr((char *)frames[i] - 1, &di) || !di.dli_fname)
			continue;
		if (is_driver_or_self(di.dli_fname, di.dli_fbase))
			continue;
		b = strrchr(di.dli_fname, '/');
		b = b ? b + 1 : di.dli_fname;
		if (!*b)
			b = program_invocation_short_name;
		snprintf(site, len, "%s+0x%lx%s%s", b,
			 (unsigned long)((char *)frames[i] - (char *)di.dli_fbase),
			 di.dli_sname ? " " : "",
			 di.dli_sname ? di.dli_sname : "");
		return;
	}
	snprintf(site, len, "<no native frame>");
}

/*
 * The label of @site and @size (the hook's rule: the site, with the size);
 * -1 without memory for a new one.
 */
static int label_of(const char *site, uint64_t size)
{
	uint64_t h = bprof_fnv(bprof_fnv(BPROF_FNV_INIT, site, strlen(site)),
			       &size, sizeof(size));
	char name[16];

	snprintf(name, sizeof(name), "cu-%012llx",
		 (unsigned long long)(h & 0xffffffffffffULL));
	for (size_t i = 0; i < cu.nlabels; i++)
		if (!strcmp(cu.labels[i].name, name))
			return i;
	if (cu.nlabels == cu.caplabels) {
		size_t cap = cu.caplabels ? 2 * cu.caplabels : 64;
		struct cu_label *l = realloc(cu.labels, cap * sizeof(*l));

		if (!l)
			return -1;
		cu.labels = l;
		cu.caplabels = cap;
	}
	memset(&cu.labels[cu.nlabels], 0, sizeof(cu.labels[0]));
	memcpy(cu.labels[cu.nlabels].name, name, sizeof(name));
	snprintf(cu.labels[cu.nlabels].site, sizeof(cu.labels[0].site), "%s",
		 site);
	return cu.nlabels++;
}

void cu_write_label(struct cu_label *l)
{
	if (l->written || !cu.out)
		return;
	fprintf(cu.out, "label\t%s\tnative\t", l->name);
	put_escaped(cu.out, l->site);
	fputc('\n', cu.out);
	l->written = true;
}

/* ---- the file ----------------------------------------------------------------- */

static int env_int(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s)
		return -1;
	v = strtol(s, &end, 10);
	return *s && !*end && v >= -1 && v < 1 << 30 ? (int)v : -1;
}

/* The command line, from /proc/self/cmdline, spaces between arguments. */
static void cmdline(char *buf, size_t len)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, len, "%s", program_invocation_name);
		return;
	}
	buf[n] = 0;
	for (ssize_t i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
}

/* Open DIR/cuda-PID.tsv and write its head; false when it cannot be. */
static bool open_file(void)
{
	char path[4200], argv[1024];
	int fd;

	mkdir(cu.dir, 0777);
	snprintf(path, sizeof(path), "%s/cuda-%d.tsv", cu.dir, cu.pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cu.out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!cu.out) {
		fprintf(stderr, "buddy.cuda: pid %d: %s: %s: not profiling\n",
			cu.pid, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		cu.enabled = false;
		return false;
	}
	cmdline(argv, sizeof(argv));
	fprintf(cu.out, "buddy-cuda-profile\t1\n");
	fprintf(cu.out, "proc\t%d\t%d\t%d\t%d\t%d\t%.6f\t-\tdriver\tnative\t1\t",
		cu.pid, (int)getppid(), env_int("RANK"), env_int("LOCAL_RANK"),
		env_int("WORLD_SIZE"), cu.t0_unix);
	put_escaped(cu.out, program_invocation_short_name);
	fputc('\t', cu.out);
	put_escaped(cu.out, argv);
	fputs("\ncodecs", cu.out);
	for (unsigned int c = 0; c < BUDDY_SIZING_NC; c++)
		fprintf(cu.out, "\t%s", cu.codecs & (1u << c) ?
			buddy_sizing_codec_name(c) : "-");
	fputc('\n', cu.out);
	fflush(cu.out);
	return true;
}

/* Before a process's exit handlers tear CUDA down (see cu_track()). */
static void at_exit(void)
{
	if (getpid() == cu.pid)
		cu_finish();
}

void cu_finish(void)
{
	cu_thread_stop();
	pthread_mutex_lock(&cu.lock);
	if (cu.out) {
		char sep = '\t';

		cu_schedule_finish();
		if (cu.untracked_entries)
			info("%u entry points were a second driver's: their calls were not tracked",
			     cu.untracked_entries);
		for (int p = 0; p < CU_PATH_NR; p++)
			if (cu.calls[p])
				info("%s: %llu allocations, %llu bytes", cu_path_name[p],
					(unsigned long long)cu.calls[p],
					(unsigned long long)cu.bytes[p]);
		fprintf(cu.out, "end\t%.6f\t0\t%llu\t%.6f", cu_now() - cu.t0_mono,
			(unsigned long long)cu.ncalls, cu.label_ns / 1e9);
		for (size_t i = 0; i < cu.nheld; i++, sep = ',')
			fprintf(cu.out, "%c%u", sep, cu.held[i]);
		for (size_t i = 0; i < cu.nmarked; i++, sep = ',')
			fprintf(cu.out, "%c%u", sep, cu.marked[i]);
		fputs(sep == '\t' ? "\t-\n" : "\n", cu.out);
		fclose(cu.out);
		cu.out = NULL;
	}
	cu.enabled = false;
	pthread_mutex_unlock(&cu.lock);
}

/* ---- the table ------------------------------------------------------------------ */

static void start(void)
{
	if (!open_file())
		return;
	cu.started = true;
	/*
	 * Registered at the first allocation, after the CUDA runtime's own
	 * exit handlers: it runs before them, while the driver still works.
	 */
	atexit(at_exit);
	cu_thread_start();
}

void cu_track(CUdeviceptr addr, uint64_t size, enum cu_path path)
{
	const struct cu_driver *d;
	struct cu_alloc *a;
	CUcontext ctx = NULL;
	CUdevice dev = 0;
	char site[200];
	int label;
	double t;

	if (!cu.enabled || !size)
		return;
	t = cu_now();
	native_site(site, sizeof(site));
	d = cu_driver_get();
	if (d && d->ctx_get_current(&ctx) != CUDA_SUCCESS)
		ctx = NULL;
	if (d && d->ctx_get_device && ctx && d->ctx_get_device(&dev))
		dev = 0;
	pthread_mutex_lock(&cu.lock);
	if (getpid() != cu.pid || !cu.enabled)
		goto out;
	if (!cu.started) {
		start();
		if (!cu.started)
			goto out;
	}
	cu.calls[path]++;
	cu.bytes[path] += size;
	cu.ncalls++;
	if (cu.nallocs == cu.capallocs) {
		size_t cap = cu.capallocs ? 2 * cu.capallocs : 256;

		a = realloc(cu.allocs, cap * sizeof(*a));
		if (!a) {
			cu_note_once("nomem", "out of memory: allocations from here on are not tracked");
			goto out;
		}
		cu.allocs = a;
		cu.capallocs = cap;
	}
	label = label_of(site, size);
	if (label < 0) {
		cu_note_once("nomem", "out of memory: allocations from here on are not tracked");
		goto out;
	}
	a = &cu.allocs[cu.nallocs++];
	a->label = label;
	a->addr = addr;
	a->size = size;
	a->ctx = ctx;
	a->device = dev;
	a->path = path;
	a->readable = path != CU_PATH_VMM;
	cu.label_ns += (cu_now() - t) * 1e9;
out:
	pthread_mutex_unlock(&cu.lock);
}

static void drop_at(size_t i)
{
	cu.allocs[i] = cu.allocs[--cu.nallocs];
}

void cu_untrack(CUdeviceptr addr)
{
	if (!cu.enabled)
		return;
	pthread_mutex_lock(&cu.lock);
	for (size_t i = 0; i < cu.nallocs; i++) {
		if (cu.allocs[i].addr == addr &&
		    cu.allocs[i].path != CU_PATH_VMM) {
			drop_at(i);
			break;
		}
	}
	pthread_mutex_unlock(&cu.lock);
}

void cu_untrack_range(CUdeviceptr addr, uint64_t size)
{
	if (!cu.enabled)
		return;
	pthread_mutex_lock(&cu.lock);
	for (size_t i = 0; i < cu.nallocs;) {
		const struct cu_alloc *a = &cu.allocs[i];

		if (a->path == CU_PATH_VMM && a->addr >= addr &&
		    a->addr + a->size <= addr + size)
			drop_at(i);
		else
			i++;
	}
	pthread_mutex_unlock(&cu.lock);
}

void cu_set_readable(CUdeviceptr addr, uint64_t size)
{
	if (!cu.enabled)
		return;
	pthread_mutex_lock(&cu.lock);
	for (size_t i = 0; i < cu.nallocs; i++) {
		struct cu_alloc *a = &cu.allocs[i];

		if (a->path == CU_PATH_VMM && a->addr >= addr &&
		    a->addr + a->size <= addr + size)
			a->readable = true;
	}
	pthread_mutex_unlock(&cu.lock);
}
