/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_api.h - the few CUDA driver API types, values and prototypes the
 * driver interposer (libbuddycudaprof.so) and the tests' fake libcuda use,
 * declared here so that neither needs the CUDA toolkit to build.
 *
 * They match cuda.h of CUDA 12/13 (the driver API header): CUresult and
 * its values, CUdeviceptr (64-bit since CUDA 3.2: the _v2 entry points),
 * the opaque handles, CUmemGenericAllocationHandle, the
 * cuGetProcAddress flags and CUdriverProcAddressQueryResult.  Only the
 * 64-bit ABI is covered (x86_64, aarch64).
 */
#ifndef BUDDY_CUDA_API_H
#define BUDDY_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef int CUdriverProcAddressQueryResult;
/* what cuMemCreate and cuMemSetAccess are given: passed on, never read */
typedef struct CUmemAllocationProp_st CUmemAllocationProp;
typedef struct CUmemAccessDesc_st CUmemAccessDesc;

#define CUDA_SUCCESS				0
#define CUDA_ERROR_INVALID_VALUE		1
#define CUDA_ERROR_OUT_OF_MEMORY		2
#define CUDA_ERROR_NOT_INITIALIZED		3
#define CUDA_ERROR_NO_DEVICE			100
#define CUDA_ERROR_INVALID_DEVICE		101
#define CUDA_ERROR_INVALID_CONTEXT		201
#define CUDA_ERROR_NOT_FOUND			500

/* cuGetProcAddress's flags and status */
#define CU_GET_PROC_ADDRESS_DEFAULT			0
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM		(1ULL << 0)
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM	(1ULL << 1)
#define CU_GET_PROC_ADDRESS_SUCCESS			0
#define CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND		1
#define CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT	2

/* cuMemAllocManaged's flag: attached to every stream */
#define CU_MEM_ATTACH_GLOBAL			0x1

/*
 * The CUDA version from which cuGetProcAddress("cuMemAlloc") and the other
 * allocation calls of CUDA 3.2 give the _v2 (64-bit) entry points.
 */
#define CUDA_V2_API_VERSION			3020

typedef CUresult (*cu_get_proc_fn)(const char *symbol, void **pfn,
				   int cuda_version, cuuint64_t flags);
typedef CUresult (*cu_get_proc_v2_fn)(const char *symbol, void **pfn,
				      int cuda_version, cuuint64_t flags,
				      CUdriverProcAddressQueryResult *status);

#endif /* BUDDY_CUDA_API_H */
