// SPDX-License-Identifier: GPL-2.0
/*
 * driver_hooks.c - libbuddycudaprof.so's entry points: the CUDA driver
 * API's allocation and free calls, as a program linked with libcuda calls
 * them (LD_PRELOAD puts these first), as dlsym() on libcuda's handle gives
 * them, and as cuGetProcAddress() gives them to the CUDA runtime, PyTorch
 * and cupy, which dlopen("libcuda.so.1") and take every entry point from
 * it (Documentation/dnn.rst, "Any CUDA program").
 *
 * Each wrapper calls the real function and returns its result untouched;
 * a successful allocation is then reported to the table (alloc_table.c).
 * The real function of each wrapper is the one the program would have
 * got: the pointer dlsym() or cuGetProcAddress() returned, else the next
 * object's symbol after this library, else loaded libcuda.so.1's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuda_prof.h"

/* ---- the real dlsym ------------------------------------------------------- */

static void *(*real_dlsym)(void *, const char *);

static void resolve_dlsym(void)
{
	/* dlsym's default version: glibc 2.34+, x86_64's and aarch64's base */
	static const char *const vers[] = { "GLIBC_2.34", "GLIBC_2.2.5",
					    "GLIBC_2.17" };

	for (size_t i = 0; !real_dlsym && i < 3; i++)
		real_dlsym = dlvsym(RTLD_NEXT, "dlsym", vers[i]);
}

void *cu_driver_sym(const char *name)
{
	void *h, *p;

	if (!real_dlsym)
		resolve_dlsym();
	if (!real_dlsym)
		return NULL;
	p = real_dlsym(RTLD_NEXT, name);
	if (p)
		return p;
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	p = real_dlsym(h, name);
	dlclose(h);
	return p;
}

const struct cu_driver *cu_driver_get(void)
{
	static struct cu_driver d;
	static bool done;

	if (done)
		return &d;
	d.ctx_get_current = cu_driver_sym("cuCtxGetCurrent");
	d.ctx_get_device = cu_driver_sym("cuCtxGetDevice");
	d.ctx_push = cu_driver_sym("cuCtxPushCurrent_v2");
	d.ctx_pop = cu_driver_sym("cuCtxPopCurrent_v2");
	d.ctx_sync = cu_driver_sym("cuCtxSynchronize");
	d.dtoh = cu_driver_sym("cuMemcpyDtoH_v2");
	if (!d.ctx_get_current || !d.ctx_push || !d.ctx_pop || !d.ctx_sync ||
	    !d.dtoh)
		return NULL;	/* no driver yet: tried again next time */
	done = true;
	return &d;
}

/* ---- the hooked entry points ---------------------------------------------- */

enum hook_id {
	H_GETPROC, H_GETPROC_V2, H_ALLOC, H_FREE, H_PITCH, H_MANAGED,
	H_ASYNC, H_ASYNC_PTSZ, H_POOL, H_POOL_PTSZ, H_FREE_ASYNC,
	H_FREE_ASYNC_PTSZ, H_CREATE, H_MAP, H_UNMAP, H_RELEASE, H_ACCESS,
	H_NR,
};

/*
 * struct hook - one entry point.
 * @sym:	its exported name (what dlsym() and the linker look up).
 * @base:	the name cuGetProcAddress() is given for it.
 * @min_ver, @max_ver: the cudaVersion range for which cuGetProcAddress()
 *		of @base gives this entry point (max 0: no limit).
 * @ptsz:	given for CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
 * @stream:	it takes a stream (the legacy and the per-thread default
 *		stream's variants differ).
 * @wrap:	the wrapper.
 * @real:	the real function, once known.
 */
struct hook {
	const char *sym, *base;
	int min_ver, max_ver;
	bool ptsz, stream;
	void *wrap;
	void *real;
};

static struct hook hooks[H_NR];

/*
 * The real function of hook @id: the one recorded, else looked up.  NULL
 * when there is none (the wrapper then answers CUDA_ERROR_NOT_INITIALIZED,
 * as a driver that is not loaded would not be called at all).
 */
static void *real_of(enum hook_id id)
{
	struct hook *h = &hooks[id];
	void *p = __atomic_load_n(&h->real, __ATOMIC_ACQUIRE);

	if (p)
		return p;
	p = cu_driver_sym(h->sym);
	if (p == h->wrap)
		return NULL;
	if (p)
		__atomic_store_n(&h->real, p, __ATOMIC_RELEASE);
	return p;
}

/*
 * @real was handed out for hook @h: remember it and hand out the wrapper
 * instead.  A different real function than the one recorded is the same
 * call reached another way (libcuda's exported symbol and
 * cuGetProcAddress's entry point need not be one address): the wrapper
 * serves it with the first, unless the call takes a stream, where the
 * two may be the legacy and the per-thread default stream's variants:
 * that one is handed out untouched, its calls not tracked.
 */
static void *substitute(struct hook *h, void *real)
{
	void *old = NULL;

	if (real == h->wrap)
		return real;
	if (__atomic_compare_exchange_n(&h->real, &old, real, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
	    old == real || !h->stream)
		return h->wrap;
	/* not a note: the records are written under the table's lock */
	fprintf(stderr, "buddy.cuda: pid %d: a second %s (%p, not %p): its calls are not tracked\n",
		(int)getpid(), h->sym, real, old);
	__atomic_add_fetch(&cu.untracked_entries, 1, __ATOMIC_RELAXED);
	return real;
}

/* The wrapper for the exported name @name found at @real. */
static void *hook_symbol(const char *name, void *real)
{
	for (int i = 0; i < H_NR; i++)
		if (!strcmp(hooks[i].sym, name))
			return substitute(&hooks[i], real);
	return real;
}

/* The wrapper for cuGetProcAddress(@name, @ver, @flags) found at @real. */
static void *hook_proc(const char *name, void *real, int ver, cuuint64_t flags)
{
	bool ptsz = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

	for (int i = 0; i < H_NR; i++) {
		struct hook *h = &hooks[i];

		if (strcmp(h->base, name) || ver < h->min_ver ||
		    (h->max_ver && ver >= h->max_ver))
			continue;
		/* the per-thread variant where there is one */
		if (h->ptsz != ptsz && i + 1 < H_NR && hooks[i + 1].ptsz &&
		    !strcmp(hooks[i + 1].base, name))
			continue;
		return substitute(h, real);
	}
	return real;
}

/*
 * dlsym(): the real one, and for a tracked name the wrapper in place of
 * the driver's function.  RTLD_NEXT is answered by a tail call, so that
 * the real dlsym() sees its caller's return address and searches after
 * the caller's object, not this library.
 */
EXPORT __attribute__((optimize("optimize-sibling-calls")))
void *dlsym(void *handle, const char *name)
{
	void *p;

	if (!real_dlsym)
		resolve_dlsym();
	if (!real_dlsym)
		return NULL;	/* a C library without a dlsym we know */
	if (handle == RTLD_NEXT)
		return real_dlsym(handle, name);
	p = real_dlsym(handle, name);
	if (p && name[0] == 'c' && name[1] == 'u')
		p = hook_symbol(name, p);
	return p;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver,
				 cuuint64_t flags)
{
	cu_get_proc_fn real = real_of(H_GETPROC);
	CUresult rc;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = real(symbol, pfn, ver, flags);
	if (rc == CUDA_SUCCESS && symbol && pfn && *pfn)
		*pfn = hook_proc(symbol, *pfn, ver, flags);
	return rc;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver,
				    cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status)
{
	cu_get_proc_v2_fn real = real_of(H_GETPROC_V2);
	CUresult rc;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = real(symbol, pfn, ver, flags, status);
	if (rc == CUDA_SUCCESS && symbol && pfn && *pfn)
		*pfn = hook_proc(symbol, *pfn, ver, flags);
	return rc;
}

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t,
			     unsigned int);
typedef CUresult (*managed_fn)(CUdeviceptr *, size_t, unsigned int);
typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t,
			      const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t,
			   CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *,
			      size_t);

#define REAL(id, type)							\
	type real = real_of(id);					\
	if (!real)							\
		return CUDA_ERROR_NOT_INITIALIZED

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
	REAL(H_ALLOC, alloc_fn);
	CUresult rc = real(dptr, size);

	if (rc == CUDA_SUCCESS && dptr)
		cu_track(*dptr, size, CU_PATH_ALLOC);
	return rc;
}

/* A free waits for a snapshot under way: it reads the memory. */
EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	REAL(H_FREE, free_fn);

	cu_untrack(dptr);
	return real(dptr);
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch,
				   size_t width, size_t height,
				   unsigned int elem)
{
	REAL(H_PITCH, pitch_fn);
	CUresult rc = real(dptr, pitch, width, height, elem);

	if (rc == CUDA_SUCCESS && dptr && pitch)
		cu_track(*dptr, (uint64_t)*pitch * height, CU_PATH_PITCH);
	return rc;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size,
				  unsigned int flags)
{
	REAL(H_MANAGED, managed_fn);
	CUresult rc = real(dptr, size, flags);

	if (rc == CUDA_SUCCESS && dptr)
		cu_track(*dptr, size, CU_PATH_MANAGED);
	return rc;
}

static CUresult alloc_async(enum hook_id id, CUdeviceptr *dptr, size_t size,
			    CUstream s)
{
	REAL(id, async_fn);
	CUresult rc = real(dptr, size, s);

	if (rc == CUDA_SUCCESS && dptr)
		cu_track(*dptr, size, CU_PATH_ASYNC);
	return rc;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s)
{
	return alloc_async(H_ASYNC, dptr, size, s);
}

EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size,
				     CUstream s)
{
	return alloc_async(H_ASYNC_PTSZ, dptr, size, s);
}

static CUresult alloc_pool(enum hook_id id, CUdeviceptr *dptr, size_t size,
			   CUmemoryPool pool, CUstream s)
{
	REAL(id, pool_fn);
	CUresult rc = real(dptr, size, pool, s);

	if (rc == CUDA_SUCCESS && dptr)
		cu_track(*dptr, size, CU_PATH_POOL);
	return rc;
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size,
					CUmemoryPool pool, CUstream s)
{
	return alloc_pool(H_POOL, dptr, size, pool, s);
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size,
					     CUmemoryPool pool, CUstream s)
{
	return alloc_pool(H_POOL_PTSZ, dptr, size, pool, s);
}

/*
 * The memory stays valid until the stream reaches the free; it is
 * forgotten now: a snapshot never reads what the stream may have freed.
 */
static CUresult free_async(enum hook_id id, CUdeviceptr dptr, CUstream s)
{
	REAL(id, free_async_fn);

	cu_untrack(dptr);
	return real(dptr, s);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
	return free_async(H_FREE_ASYNC, dptr, s);
}

EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
	return free_async(H_FREE_ASYNC_PTSZ, dptr, s);
}

/*
 * The VMM path: a physical allocation (cuMemCreate) holds memory that
 * can be read only where it is mapped (cuMemMap) with access set
 * (cuMemSetAccess); each mapped range is what is measured, counted when
 * mapped, readable once its access is set.
 */
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			    const CUmemAllocationProp *prop,
			    unsigned long long flags)
{
	REAL(H_CREATE, create_fn);

	return real(handle, size, prop, flags);
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			 CUmemGenericAllocationHandle handle,
			 unsigned long long flags)
{
	REAL(H_MAP, map_fn);
	CUresult rc = real(ptr, size, offset, handle, flags);

	if (rc == CUDA_SUCCESS)
		cu_track(ptr, size, CU_PATH_VMM);
	return rc;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	REAL(H_UNMAP, unmap_fn);

	cu_untrack_range(ptr, size);
	return real(ptr, size);
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	REAL(H_RELEASE, release_fn);

	return real(handle);
}

EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
			       const CUmemAccessDesc *desc, size_t count)
{
	REAL(H_ACCESS, access_fn);
	CUresult rc = real(ptr, size, desc, count);

	if (rc == CUDA_SUCCESS)
		cu_set_readable(ptr, size);
	return rc;
}

#define HOOK(id, s, b, lo, hi, pt) \
	[id] = { .sym = #s, .base = b, .min_ver = lo, .max_ver = hi, \
		 .ptsz = pt, .wrap = (void *)s }
#define HOOK_STREAM(id, s, b, pt) \
	[id] = { .sym = #s, .base = b, .ptsz = pt, .stream = true, \
		 .wrap = (void *)s }

static struct hook hooks[H_NR] = {
	HOOK(H_GETPROC, cuGetProcAddress, "cuGetProcAddress", 0, 12000, false),
	HOOK(H_GETPROC_V2, cuGetProcAddress_v2, "cuGetProcAddress", 12000, 0,
	     false),
	HOOK(H_ALLOC, cuMemAlloc_v2, "cuMemAlloc", CUDA_V2_API_VERSION, 0, false),
	HOOK(H_FREE, cuMemFree_v2, "cuMemFree", CUDA_V2_API_VERSION, 0, false),
	HOOK(H_PITCH, cuMemAllocPitch_v2, "cuMemAllocPitch",
	     CUDA_V2_API_VERSION, 0, false),
	HOOK(H_MANAGED, cuMemAllocManaged, "cuMemAllocManaged", 0, 0, false),
	HOOK_STREAM(H_ASYNC, cuMemAllocAsync, "cuMemAllocAsync", false),
	HOOK_STREAM(H_ASYNC_PTSZ, cuMemAllocAsync_ptsz, "cuMemAllocAsync", true),
	HOOK_STREAM(H_POOL, cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync",
		    false),
	HOOK_STREAM(H_POOL_PTSZ, cuMemAllocFromPoolAsync_ptsz,
		    "cuMemAllocFromPoolAsync", true),
	HOOK_STREAM(H_FREE_ASYNC, cuMemFreeAsync, "cuMemFreeAsync", false),
	HOOK_STREAM(H_FREE_ASYNC_PTSZ, cuMemFreeAsync_ptsz, "cuMemFreeAsync",
		    true),
	HOOK(H_CREATE, cuMemCreate, "cuMemCreate", 0, 0, false),
	HOOK(H_MAP, cuMemMap, "cuMemMap", 0, 0, false),
	HOOK(H_UNMAP, cuMemUnmap, "cuMemUnmap", 0, 0, false),
	HOOK(H_RELEASE, cuMemRelease, "cuMemRelease", 0, 0, false),
	HOOK(H_ACCESS, cuMemSetAccess, "cuMemSetAccess", 0, 0, false),
};
