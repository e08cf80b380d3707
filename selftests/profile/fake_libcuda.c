// SPDX-License-Identifier: GPL-2.0
/*
 * fake_libcuda.c - a libcuda.so.1 for the driver interposer's tests: the
 * subset of the CUDA driver API they call, on host memory, never
 * installed.
 *
 * "Device" memory is one host arena handed out in order, so that two
 * allocations made one after the other are adjacent, as cudaMalloc
 * regions often are.  A copy to or from it must lie within one live
 * allocation (one mapped range, with access set, for the VMM calls) and
 * needs a current context, as on the hardware: a copy that spans two
 * allocations fails with CUDA_ERROR_INVALID_VALUE and is counted.  With
 * FAKE_CUDA_FAIL_DTOH set, every device-to-host copy fails (a profiler's
 * copy must not break the program).  At
 * exit the counts are appended to $FAKE_CUDA_LOG: "pid P copies C spans S
 * errors E".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/profile/cuda_driver/cuda_api.h"

#define ARENA_BYTES	(256ULL << 20)
#define MAX_ALLOCS	4096
#define CTX_STACK	8

struct fake_ctx {
	int magic;
	CUdevice dev;
};

enum { A_FREE, A_ALLOC, A_RESERVED, A_MAPPED };

struct fake_alloc {
	CUdeviceptr addr;
	size_t size;
	int kind;
	bool access;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *arena;
static size_t arena_used;
static struct fake_alloc allocs[MAX_ALLOCS];
static unsigned int nallocs;
static unsigned long ncopies, nspans, nerrors;
static bool inited;
static struct fake_ctx primary = { 0x5ca1ab1e, 0 };
static __thread CUcontext stack[CTX_STACK];
static __thread int depth;		/* stack[depth - 1] is current */

static void report(void)
{
	const char *log = getenv("FAKE_CUDA_LOG");
	FILE *f = log ? fopen(log, "a") : NULL;

	if (!f)
		return;
	fprintf(f, "pid %d copies %lu spans %lu errors %lu\n", (int)getpid(),
		ncopies, nspans, nerrors);
	fclose(f);
}

CUresult cuInit(unsigned int flags)
{
	pthread_mutex_lock(&lock);
	if (!arena) {
		arena = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED) {
			arena = NULL;
			pthread_mutex_unlock(&lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		atexit(report);
	}
	inited = true;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 12080;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!d || ordinal)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	if (!c || d)
		return CUDA_ERROR_INVALID_VALUE;
	*c = (CUcontext)&primary;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	return d ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

static CUcontext current(void)
{
	return depth ? stack[depth - 1] : NULL;
}

CUresult cuCtxCreate_v2(CUcontext *c, unsigned int flags, CUdevice d)
{
	struct fake_ctx *x = calloc(1, sizeof(*x));

	if (!c || !x || d) {
		free(x);
		return CUDA_ERROR_INVALID_VALUE;
	}
	x->magic = 0x5ca1ab1e;
	*c = (CUcontext)x;
	if (depth < CTX_STACK)
		stack[depth++] = *c;
	return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext c)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < depth; i++)
		if (stack[i] == c)
			stack[i] = NULL;
	if ((void *)c != (void *)&primary)
		free(c);
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *c)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	*c = current();
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext c)
{
	if (!depth)
		depth = 1;
	stack[depth - 1] = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	if (!c || depth == CTX_STACK)
		return CUDA_ERROR_INVALID_VALUE;
	stack[depth++] = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
	if (!depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (c)
		*c = stack[depth - 1];
	depth--;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *d)
{
	if (!current())
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	return current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* A new range of @size at the arena's end (256-byte aligned). */
static CUresult take(CUdeviceptr *p, size_t size, int kind)
{
	size_t off = (arena_used + 255) & ~(size_t)255;

	if (!p || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!current())
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&lock);
	if (!arena || off + size > ARENA_BYTES || nallocs == MAX_ALLOCS) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	allocs[nallocs++] = (struct fake_alloc){
		(CUdeviceptr)(uintptr_t)(arena + off), size, kind, true };
	arena_used = off + size;
	*p = (CUdeviceptr)(uintptr_t)(arena + off);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

static CUresult give_back(CUdeviceptr p, int kind)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nallocs; i++) {
		if (allocs[i].addr == p && allocs[i].kind == kind) {
			allocs[i].kind = A_FREE;
			rc = CUDA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
	return take(p, size, A_ALLOC);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	return give_back(p, A_ALLOC);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width,
			    size_t height, unsigned int elem)
{
	if (!pitch || !width || !height || (elem != 4 && elem != 8 &&
					    elem != 16))
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = (width + 511) & ~(size_t)511;
	return take(p, *pitch * height, A_ALLOC);
}

CUresult cuMemAllocManaged(CUdeviceptr *p, size_t size, unsigned int flags)
{
	return take(p, size, A_ALLOC);
}

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream s)
{
	return take(p, size, A_ALLOC);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t size, CUmemoryPool pool,
				 CUstream s)
{
	return take(p, size, A_ALLOC);
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	return give_back(p, A_ALLOC);
}

CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align,
			     CUdeviceptr addr, unsigned long long flags)
{
	return take(p, size, A_RESERVED);
}

CUresult cuMemAddressFree(CUdeviceptr p, size_t size)
{
	return give_back(p, A_RESERVED);
}

/* A handle is its size: the memory is the reserved range's. */
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (!h || !size)
		return CUDA_ERROR_INVALID_VALUE;
	*h = size;
	return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset,
		  CUmemGenericAllocationHandle h, unsigned long long flags)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (size > h)
		return rc;
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nallocs; i++) {
		struct fake_alloc *a = &allocs[i];

		if (a->kind == A_RESERVED && p >= a->addr &&
		    p + size <= a->addr + a->size && nallocs < MAX_ALLOCS) {
			allocs[nallocs++] = (struct fake_alloc){ p, size,
								  A_MAPPED,
								  false };
			rc = CUDA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nallocs; i++)
		if (allocs[i].kind == A_MAPPED && allocs[i].addr >= p &&
		    allocs[i].addr + allocs[i].size <= p + size)
			allocs[i].kind = A_FREE;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *d,
			size_t count)
{
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nallocs; i++)
		if (allocs[i].kind == A_MAPPED && allocs[i].addr >= p &&
		    allocs[i].addr + allocs[i].size <= p + size)
			allocs[i].access = true;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/*
 * Whether [@p, @p + @n) lies in one live allocation; counts a range that
 * starts in one and ends in another as a span.
 */
static CUresult check_range(CUdeviceptr p, size_t n)
{
	const struct fake_alloc *in = NULL;
	CUresult rc = CUDA_SUCCESS;

	if (!current())
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&lock);
	ncopies++;
	for (unsigned int i = 0; i < nallocs && !in; i++) {
		const struct fake_alloc *a = &allocs[i];

		if ((a->kind == A_ALLOC || (a->kind == A_MAPPED && a->access)) &&
		    p >= a->addr && p < a->addr + a->size)
			in = a;
	}
	if (!in || !n) {
		rc = CUDA_ERROR_INVALID_VALUE;
		nerrors++;
	} else if (p + n > in->addr + in->size) {
		rc = CUDA_ERROR_INVALID_VALUE;
		nspans++;
		nerrors++;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	CUresult rc = check_range(dst, n);

	if (rc == CUDA_SUCCESS)
		memcpy((void *)(uintptr_t)dst, src, n);
	return rc;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	CUresult rc = check_range(src, n);

	if (rc == CUDA_SUCCESS && getenv("FAKE_CUDA_FAIL_DTOH"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS)
		memcpy(dst, (const void *)(uintptr_t)src, n);
	return rc;
}

/* ---- cuGetProcAddress: the table of what is here -------------------------- */

struct proc {
	const char *name;	/* as cuGetProcAddress is asked */
	void *fn;
	int min_ver;		/* from which version it gives @fn */
};

CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver,
			  cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver,
			     cuuint64_t flags,
			     CUdriverProcAddressQueryResult *status);

/*
 * As in libcuda, an entry point cuGetProcAddress gives need not be the
 * exported symbol's address: cuMemAlloc's is another function.
 */
static CUresult proc_mem_alloc(CUdeviceptr *p, size_t size)
{
	return cuMemAlloc_v2(p, size);
}

#define P(n, f, v) { n, (void *)f, v }
static const struct proc procs[] = {
	P("cuInit", cuInit, 0), P("cuDriverGetVersion", cuDriverGetVersion, 0),
	P("cuDeviceGet", cuDeviceGet, 0),
	P("cuDeviceGetCount", cuDeviceGetCount, 0),
	P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, 0),
	P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2, 11000),
	P("cuCtxCreate", cuCtxCreate_v2, 3020),
	P("cuCtxDestroy", cuCtxDestroy_v2, 4000),
	P("cuCtxGetCurrent", cuCtxGetCurrent, 0),
	P("cuCtxSetCurrent", cuCtxSetCurrent, 0),
	P("cuCtxPushCurrent", cuCtxPushCurrent_v2, 4000),
	P("cuCtxPopCurrent", cuCtxPopCurrent_v2, 4000),
	P("cuCtxGetDevice", cuCtxGetDevice, 0),
	P("cuCtxSynchronize", cuCtxSynchronize, 0),
	P("cuMemAlloc", proc_mem_alloc, 3020), P("cuMemFree", cuMemFree_v2, 3020),
	P("cuMemAllocPitch", cuMemAllocPitch_v2, 3020),
	P("cuMemAllocManaged", cuMemAllocManaged, 0),
	P("cuMemAllocAsync", cuMemAllocAsync, 0),
	P("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync, 0),
	P("cuMemFreeAsync", cuMemFreeAsync, 0),
	P("cuMemAddressReserve", cuMemAddressReserve, 0),
	P("cuMemAddressFree", cuMemAddressFree, 0),
	P("cuMemCreate", cuMemCreate, 0), P("cuMemRelease", cuMemRelease, 0),
	P("cuMemMap", cuMemMap, 0), P("cuMemUnmap", cuMemUnmap, 0),
	P("cuMemSetAccess", cuMemSetAccess, 0),
	P("cuMemcpyHtoD", cuMemcpyHtoD_v2, 3020),
	P("cuMemcpyDtoH", cuMemcpyDtoH_v2, 3020),
	P("cuGetProcAddress", cuGetProcAddress_v2, 12000),
	P("cuGetProcAddress", cuGetProcAddress, 0),
};

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver,
			     cuuint64_t flags,
			     CUdriverProcAddressQueryResult *status)
{
	bool found = false;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		if (strcmp(procs[i].name, symbol))
			continue;
		found = true;
		if (ver >= procs[i].min_ver) {
			*pfn = procs[i].fn;
			break;
		}
	}
	if (status)
		*status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : found ?
			  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
			  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver,
			  cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, ver, flags, NULL);
}
