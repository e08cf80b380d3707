/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuda_prof.h - what the files of libbuddycudaprof.so share (all hidden
 * but the driver API entry points, dlsym and buddy_cuda_snapshot()):
 *
 *   driver_hooks.c    the driver API's allocation calls, cuGetProcAddress
 *                     and dlsym: each call goes to the real driver, and a
 *                     successful one is reported to the table
 *   alloc_table.c     the live allocations, their labels and the record
 *                     file (python/buddy/cuda/records.py's format)
 *   device_snapshot.c the snapshot thread: its schedule, the copies to
 *                     host and the sizing
 */
#ifndef BUDDY_CUDA_PROF_H
#define BUDDY_CUDA_PROF_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda_api.h"
#include "tools/codeclib/buddycodec.h"

#define EXPORT	__attribute__((visibility("default")))

/* How an allocation was made: the seg record's type field. */
enum cu_path {
	CU_PATH_ALLOC,		/* cuMemAlloc */
	CU_PATH_PITCH,		/* cuMemAllocPitch */
	CU_PATH_MANAGED,	/* cuMemAllocManaged */
	CU_PATH_ASYNC,		/* cuMemAllocAsync */
	CU_PATH_POOL,		/* cuMemAllocFromPoolAsync */
	CU_PATH_VMM,		/* a cuMemMap range */
	CU_PATH_NR,
};

extern const char *const cu_path_name[CU_PATH_NR];

/* The driver functions the interposer calls itself. */
struct cu_driver {
	CUresult (*ctx_get_current)(CUcontext *ctx);
	CUresult (*ctx_get_device)(CUdevice *dev);
	CUresult (*ctx_push)(CUcontext ctx);
	CUresult (*ctx_pop)(CUcontext *ctx);
	CUresult (*ctx_sync)(void);
	CUresult (*dtoh)(void *dst, CUdeviceptr src, size_t n);
};

/*
 * cu_driver_sym() - the real driver's @name: the next object's after this
 * library (a program linked with libcuda), else the loaded libcuda.so.1's
 * (one opened RTLD_LOCAL, as the CUDA runtime opens it).  NULL when no
 * driver is loaded.
 */
void *cu_driver_sym(const char *name);

/* cu_driver_get() - cu_driver's functions, resolved once; NULL if absent. */
const struct cu_driver *cu_driver_get(void);

/* ---- alloc_table.c -------------------------------------------------------- */

/* One live allocation: one segment holding one block in the records. */
struct cu_alloc {
	CUdeviceptr addr;
	uint64_t size;
	CUcontext ctx;			/* current when it was made */
	int device;
	enum cu_path path;
	bool readable;			/* VMM: access set */
	unsigned int label;		/* index into the label table */
};

struct cu_label {
	char name[16];			/* "cu-" and 12 hex digits */
	char site[200];
	bool written;			/* its label record is in the file */
};

/*
 * The process's state; @lock guards all of it, and a snapshot holds it
 * from start to end: a free waits for it, so no copy reads memory freed
 * under it.
 */
struct cu_state {
	pthread_mutex_t lock;
	bool enabled;			/* BUDDY_CUDA_DRIVER_DIR set */
	bool started;			/* the file is open, the thread runs */
	int pid;
	double t0_mono, t0_unix;
	struct cu_alloc *allocs;
	size_t nallocs, capallocs;
	struct cu_label *labels;
	size_t nlabels, caplabels;
	uint64_t calls[CU_PATH_NR], bytes[CU_PATH_NR];
	uint64_t ncalls;		/* tracked allocations made */
	uint64_t label_ns;		/* time spent labelling them */
	uint64_t copy_errors;
	unsigned int untracked_entries;	/* entry points handed out as is */
	FILE *out;
	char dir[4096];
	unsigned int codecs;		/* mask of the codecs sized */
	unsigned int nsnaps;
	/* the schedule (device_snapshot.c) */
	unsigned int points;
	double first_s, delta_s, next_s;
	unsigned int *held;		/* timer snapshots not dropped */
	size_t nheld;
	unsigned int *marked;		/* requested ones: always kept */
	size_t nmarked;
	uint64_t piece_bytes;
	unsigned int threads;
	bool stop;
	pthread_cond_t wake;
	pthread_t thread;
	bool thread_running;
	struct buddy_sizing *sizer;
	void *staging;
	char noted[8][64];		/* notes written once */
};

extern struct cu_state cu;

double cu_now(void);
void cu_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cu_note_once(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A successful allocation call: track it (@ra: the call's return address). */
void cu_track(CUdeviceptr addr, uint64_t size, enum cu_path path);
/* A free of @addr: forget it. */
void cu_untrack(CUdeviceptr addr);
/* cuMemUnmap of [@addr, @addr + @size): forget the ranges inside. */
void cu_untrack_range(CUdeviceptr addr, uint64_t size);
/* cuMemSetAccess of [@addr, @addr + @size): the ranges inside are readable. */
void cu_set_readable(CUdeviceptr addr, uint64_t size);
/* Write the process's records up to now and its end (at exit). */
void cu_finish(void);
/* Record writing, under cu.lock. */
void cu_write_label(struct cu_label *l);

/* ---- device_snapshot.c ---------------------------------------------------- */

/* Start the snapshot thread (under cu.lock, once per process). */
void cu_thread_start(void);
/* Stop it and wait for it (not under cu.lock). */
void cu_thread_stop(void);
/* Take a snapshot now (under cu.lock); @marked: the program asked. */
int cu_snapshot(bool marked);
/* The schedule's end: drop records for the snapshots not kept. */
void cu_schedule_finish(void);

#endif /* BUDDY_CUDA_PROF_H */
