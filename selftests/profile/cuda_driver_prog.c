// SPDX-License-Identifier: GPL-2.0
/*
 * cuda_driver_prog.c - a CUDA driver API program for the driver
 * interposer's tests (cuda_driver_test.sh), run on the fake libcuda.so.1.
 *
 * It reaches the driver every way a program does: as the CUDA runtime
 * does (dlopen("libcuda.so.1") RTLD_LOCAL, dlsym of cuGetProcAddress_v2,
 * every entry point through it), by dlsym() on the handle, by the linker
 * (it is linked with libcuda.so.1) and by dlsym(RTLD_NEXT).  It allocates
 * through each allocation call, fills each allocation with a datagen class
 * (cuMemcpyHtoD), two of them adjacent, asks for a snapshot
 * (buddy_cuda_snapshot(), when the interposer is there), frees some, asks
 * for another, and forks a child that allocates in a context of its own
 * and asks for one too.
 *
 *   cuda_driver_prog OUTDIR [SLEEP_MS]
 *
 * SLEEP_MS: how long it waits with every allocation live, before its
 * first request (for the timer's snapshots).
 * OUTDIR gets each allocation's bytes (NAME.bin) and manifest.tsv: one
 * line per allocation, "pid name call size function snapshots" (the
 * snapshot ids of its process it is live in).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/common/datagen.h"
#include "tools/profile/cuda_driver/cuda_api.h"

/* from libcuda.so.1, by the linker */
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size);
CUresult cuCtxCreate_v2(CUcontext *c, unsigned int flags, CUdevice d);
CUresult cuInit(unsigned int flags);

static CUresult (*p_init)(unsigned int);
static CUresult (*p_dev_get)(CUdevice *, int);
static CUresult (*p_retain)(CUcontext *, CUdevice);
static CUresult (*p_set_current)(CUcontext);
static CUresult (*p_alloc)(CUdeviceptr *, size_t);
static CUresult (*p_free)(CUdeviceptr);
static CUresult (*p_pitch)(CUdeviceptr *, size_t *, size_t, size_t,
			   unsigned int);
static CUresult (*p_managed)(CUdeviceptr *, size_t, unsigned int);
static CUresult (*p_async)(CUdeviceptr *, size_t, CUstream);
static CUresult (*p_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
static CUresult (*p_free_async)(CUdeviceptr, CUstream);
static CUresult (*p_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
			     unsigned long long);
static CUresult (*p_addr_free)(CUdeviceptr, size_t);
static CUresult (*p_create)(CUmemGenericAllocationHandle *, size_t,
			    const CUmemAllocationProp *, unsigned long long);
static CUresult (*p_map)(CUdeviceptr, size_t, size_t,
			 CUmemGenericAllocationHandle, unsigned long long);
static CUresult (*p_unmap)(CUdeviceptr, size_t);
static CUresult (*p_release)(CUmemGenericAllocationHandle);
static CUresult (*p_access)(CUdeviceptr, size_t, const CUmemAccessDesc *,
			    size_t);
static CUresult (*p_htod)(CUdeviceptr, const void *, size_t);
static int (*snapshot)(void);
static const char *outdir;
static FILE *manifest;

static void fail(const char *what, CUresult rc)
{
	fprintf(stderr, "cuda_driver_prog: %s: CUresult %d\n", what, rc);
	exit(1);
}

#define CK(call) do { CUresult rc_ = (call); if (rc_) fail(#call, rc_); } while (0)

static void get_flags(cu_get_proc_v2_fn gp, const char *name, void *fn,
		      cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st;

	CK(gp(name, fn, 12080, flags, &st));
	if (st != CU_GET_PROC_ADDRESS_SUCCESS)
		fail(name, st);
}

static void get(cu_get_proc_v2_fn gp, const char *name, void *fn)
{
	get_flags(gp, name, fn, CU_GET_PROC_ADDRESS_DEFAULT);
}

/* Fill [@p, +@size) with @class, keep a copy in OUTDIR/@name.bin. */
static void fill(CUdeviceptr p, size_t size, const char *name,
		 enum datagen_class class, const char *call, const char *fn,
		 const char *snaps)
{
	void *buf = malloc(size);
	char path[4200];
	FILE *f;

	if (!buf)
		exit(1);
	datagen_fill(class, size ^ class, buf, size);
	CK(p_htod(p, buf, size));
	snprintf(path, sizeof(path), "%s/%s.bin", outdir, name);
	f = fopen(path, "w");
	if (!f || fwrite(buf, 1, size, f) != size || fclose(f))
		exit(1);
	fprintf(manifest, "%d\t%s\t%s\t%zu\t%s\t%s\n", (int)getpid(), name, call,
		size, fn, snaps);
	fflush(manifest);
	free(buf);
}

static void take_snapshot(const char *when)
{
	if (snapshot && snapshot() < 0) {
		fprintf(stderr, "cuda_driver_prog: no snapshot %s\n", when);
		exit(1);
	}
}

__attribute__((__noinline__)) CUdeviceptr alloc_plain(const char *name,
	enum datagen_class class, const char *snaps)
{
	CUdeviceptr p;

	CK(p_alloc(&p, 1 << 20));
	fill(p, 1 << 20, name, class, "cuMemAlloc", "alloc_plain", snaps);
	return p;
}

__attribute__((__noinline__)) void alloc_pitch(void)
{
	CUdeviceptr p;
	size_t pitch;

	CK(p_pitch(&p, &pitch, 4000, 64, 4));
	fill(p, pitch * 64, "pitch", DATAGEN_RELU90, "cuMemAllocPitch",
	     "alloc_pitch", "0,1");
}

__attribute__((__noinline__)) void alloc_managed(void)
{
	CUdeviceptr p;

	CK(p_managed(&p, 512 << 10, CU_MEM_ATTACH_GLOBAL));
	fill(p, 512 << 10, "managed", DATAGEN_RAMP, "cuMemAllocManaged",
	     "alloc_managed", "0,1");
}

__attribute__((__noinline__)) CUdeviceptr alloc_async(void)
{
	CUdeviceptr p;

	CK(p_async(&p, 256 << 10, NULL));
	fill(p, 256 << 10, "async", DATAGEN_RELU50, "cuMemAllocAsync",
	     "alloc_async", "0");
	return p;
}

__attribute__((__noinline__)) void alloc_pool(void)
{
	CUdeviceptr p;

	CK(p_pool(&p, 384 << 10, NULL, NULL));
	fill(p, 384 << 10, "pool", DATAGEN_FLOAT64, "cuMemAllocFromPoolAsync",
	     "alloc_pool", "0,1");
}

/* A 2 MiB VMM range: reserved, created, mapped, access set. */
__attribute__((__noinline__)) CUdeviceptr alloc_vmm(
	CUmemGenericAllocationHandle *h)
{
	CUdeviceptr va;

	CK(p_reserve(&va, 2 << 20, 0, 0, 0));
	CK(p_create(h, 2 << 20, NULL, 0));
	CK(p_map(va, 2 << 20, 0, *h, 0));
	CK(p_access(va, 2 << 20, NULL, 1));
	fill(va, 2 << 20, "vmm", DATAGEN_MIXED, "cuMemMap", "alloc_vmm", "0");
	return va;
}

__attribute__((__noinline__)) void alloc_dlsym(void *h)
{
	CUresult (*f)(CUdeviceptr *, size_t) = dlsym(h, "cuMemAlloc_v2");
	CUdeviceptr p;

	CK(f(&p, 768 << 10));
	fill(p, 768 << 10, "dlsym", DATAGEN_RANDOM, "cuMemAlloc", "alloc_dlsym",
	     "0,1");
}

__attribute__((__noinline__)) void alloc_linked(void)
{
	CUdeviceptr p;

	CK(cuMemAlloc_v2(&p, 640 << 10));
	fill(p, 640 << 10, "linked", DATAGEN_RELU95, "cuMemAlloc",
	     "alloc_linked", "0,1");
}

/* dlsym(RTLD_NEXT) from the program: the next object after it. */
__attribute__((__noinline__)) void alloc_next(void)
{
	CUresult (*f)(CUdeviceptr *, size_t) = dlsym(RTLD_NEXT, "cuMemAlloc_v2");
	CUdeviceptr p;

	CK(f(&p, 256 << 10));
	fill(p, 256 << 10, "next", DATAGEN_CONSTANT, "cuMemAlloc", "alloc_next",
	     "0,1");
}

__attribute__((__noinline__)) void child_alloc(void)
{
	CUcontext ctx;
	CUdeviceptr p;

	CK(cuInit(0));
	CK(cuCtxCreate_v2(&ctx, 0, 0));
	CK(cuMemAlloc_v2(&p, 1 << 20));
	fill(p, 1 << 20, "child", DATAGEN_RELU90, "cuMemAlloc", "child_alloc",
	     "0");
	take_snapshot("in the child");
}

int main(int argc, char **argv)
{
	CUmemGenericAllocationHandle vh;
	CUdeviceptr a1, as, va;
	cu_get_proc_v2_fn gp;
	CUcontext ctx;
	CUdevice dev;
	char path[4200];
	void *h;
	int st;
	pid_t pid;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: cuda_driver_prog OUTDIR [SLEEP_MS]\n");
		return 2;
	}
	outdir = argv[1];
	snprintf(path, sizeof(path), "%s/manifest.tsv", outdir);
	manifest = fopen(path, "w");
	if (!manifest) {
		perror(path);
		return 1;
	}
	/* as the CUDA runtime does */
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	gp = h ? (cu_get_proc_v2_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!gp) {
		fprintf(stderr, "cuda_driver_prog: no libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	get(gp, "cuInit", &p_init);
	get(gp, "cuDeviceGet", &p_dev_get);
	get(gp, "cuDevicePrimaryCtxRetain", &p_retain);
	get(gp, "cuCtxSetCurrent", &p_set_current);
	get(gp, "cuMemAlloc", &p_alloc);
	get(gp, "cuMemFree", &p_free);
	get(gp, "cuMemAllocPitch", &p_pitch);
	get(gp, "cuMemAllocManaged", &p_managed);
	/* the per-thread default stream's variant */
	get_flags(gp, "cuMemAllocAsync", &p_async,
		  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	get(gp, "cuMemAllocFromPoolAsync", &p_pool);
	get(gp, "cuMemFreeAsync", &p_free_async);
	get(gp, "cuMemAddressReserve", &p_reserve);
	get(gp, "cuMemAddressFree", &p_addr_free);
	get(gp, "cuMemCreate", &p_create);
	get(gp, "cuMemMap", &p_map);
	get(gp, "cuMemUnmap", &p_unmap);
	get(gp, "cuMemRelease", &p_release);
	get(gp, "cuMemSetAccess", &p_access);
	get(gp, "cuMemcpyHtoD", &p_htod);
	*(void **)&snapshot = dlsym(RTLD_DEFAULT, "buddy_cuda_snapshot");
	/*
	 * RTLD_NEXT searches after the caller's object: from here, the
	 * preloaded interposer is next; an interposed dlsym() that lost its
	 * caller would search after itself and find nothing.
	 */
	if (snapshot && dlsym(RTLD_NEXT, "buddy_cuda_snapshot") != snapshot) {
		fprintf(stderr, "cuda_driver_prog: dlsym(RTLD_NEXT) did not search after the program\n");
		return 1;
	}

	CK(p_init(0));
	CK(p_dev_get(&dev, 0));
	CK(p_retain(&ctx, dev));
	CK(p_set_current(ctx));
	/* two adjacent cuMemAlloc regions: no copy may span them */
	alloc_plain("plain_zero", DATAGEN_ZERO, "0,1");
	a1 = alloc_plain("plain_float", DATAGEN_FLOAT32, "0");
	alloc_pitch();
	alloc_managed();
	as = alloc_async();
	alloc_pool();
	va = alloc_vmm(&vh);
	alloc_dlsym(h);
	alloc_linked();
	alloc_next();
	if (argc == 3)
		usleep(atoi(argv[2]) * 1000);
	take_snapshot("with every allocation live");

	CK(p_free(a1));
	CK(p_free_async(as, NULL));
	CK(p_unmap(va, 2 << 20));
	CK(p_release(vh));
	CK(p_addr_free(va, 2 << 20));
	take_snapshot("after the frees");

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		child_alloc();
		fclose(manifest);
		exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	printf("cuda_driver_prog: done\n");
	return 0;
}
