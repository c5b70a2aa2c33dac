/*
 * fdtd_cuda.h - the CUDA engine's API (its inside: engine.h); plain C.
 *
 * It implements exactly the update of solver/fdtd.h, with the same expression in the same
 * order (both built without FMA contraction), so every kernel can be compared with the CPU
 * engine field by field. The engine owns every device buffer it allocates; cuda_destroy()
 * frees them. The per-kind coefficients live in constant memory, which is per device and
 * per process: one engine runs at a time (each engine uploads its own before it steps).
 */
#ifndef FDTD_CUDA_H
#define FDTD_CUDA_H

#include <signal.h>
#include <stddef.h>

#include "../../common/rs_error.h"
#include "../../geometry/voxel.h"
#include "../kernels.h"
#include "../branch.h"
#include "../fdtd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cuda_engine;
struct cuda_nccl;

struct cuda_setup {
	const struct vox_grid *grid;	/* borrowed: read at creation only */
	const struct fdtd_coefs *coefs;
	int precision;			/* 4 or 8 */
	enum kernel_id kernel;		/* KERNEL_AUTO: time all, keep the fastest */
	int block[2];			/* threads per block, x by y */
	size_t tex_limit;		/* texels per texture object; 0 = the device's limit */
	const struct stn_stencil *stencil;	/* NULL: the 7-point scheme; else only the general
						 * and leggy kernels run it */
	const uint32_t *fallback;	/* a carved room's cells taking the 7-point rule (1 bit
					 * each; NULL in a box): only `general` runs it */
	const uint32_t *touch;		/* and the cells with edges to them (fdtd.c) */
	const uint32_t *lines;		/* or, an axial stencil's, the cells whose legs fold
					 * at carved walls (fdtd.c, solver/lines.h) */
	int dts, nt, split;		/* diamond kernel: tile size, tower height, blocks a tower
					 * is split over in z; 0 = default */
	const struct branch_walls *branch;	/* the frequency-dependent walls, or NULL: read at
						 * creation (branch.cu) */
	int grid_receivers;		/* 1: a receiver grid will be set (diamond cannot run) */
	int band_frames;		/* 1: snapshot frames will be set (diamond cannot run) */
	int block_sources;		/* 1: a block source will be set (diamond cannot run) */
	int (*exchange)(void *ctx, void *field, void *stream, struct rs_error *err);
	void *exchange_ctx;		/* fdtd_setup's, as are: */
	int zown[2], zedge[2];
	int exchange_async;
	const double *cut_l2v, *cut_sc, *cut_cb;	/* grid.walls: fitted: per group of
							 * grid->cut, the CPU engine's */
};

/* 1 when a CUDA device is usable; name and total memory filled when not NULL. */
int cuda_available(char *name, size_t len, size_t *memory);

/* Make device 0's context on a thread of its own, beside the host's work, so that the
 * engine made later finds it ready (cuda_create waits for it); cuda_warm_wait joins the
 * thread (at once if there is none). */
void cuda_warm(void);
void cuda_warm_wait(void);

/* Device bytes a run with kernel k needs, its branch walls aside; checked against free device
 * memory by cuda_create(). Kernel auto's count leaves out diamond's tables: auto weighs
 * diamond only where they fit beside the rest. */
size_t cuda_memory(const struct vox_plan *p, int precision, enum kernel_id k, int nrec,
		   size_t nsamples, size_t nsteps);

/* Device bytes of the diamond kernel's own tables, with nrec receivers. */
size_t cuda_diamond_memory(const struct vox_plan *p, int nrec);

/* Device bytes of the branch walls' column lists (branch.cu) beyond their state and tables,
 * for up to `nodes` nodes: on the cubic grid, for every kernel. */
size_t cuda_branch_columns(const struct vox_plan *p, size_t nodes);

/* Device bytes of branch walls b as cuda_branch_upload() allocates them (0 for NULL). */
size_t cuda_branch_bytes(const struct branch_walls *b, const struct vox_plan *p, int precision);

/* ---- several GPUs (halo.cu, solver/part.h) ---- */

/* Run this thread's CUDA work on GPU `device` of the node, modulo the GPUs it sees, and
 * name it by its PCI bus id in bus (len bytes); cuda_bus names it alone (no context made). */
int cuda_select(int device, char *bus, size_t len, struct rs_error *err);
int cuda_bus(int device, char *bus, size_t len, struct rs_error *err);

/* A blocking copy between the device and (pinned) host memory, in stream order. */
int cuda_copy(void *to, const void *from, size_t bytes, int to_device, struct rs_error *err);
void *cuda_pinned(size_t bytes);
void cuda_pinned_free(void *p);

/* A fresh NCCL id (len bytes at least 128) for rank 0 to share with the others. */
int cuda_nccl_id(void *id, size_t len, struct rs_error *err);

/* The communicator of `size` ranks sharing id; NULL and err when NCCL is not there. */
struct cuda_nccl *cuda_nccl_open(const void *id, int rank, int size, struct rs_error *err);

/* One transfer of a halo exchange: `bytes` from send to peer, and as many from it to recv. */
struct cuda_swap {
	const void *send;
	void *recv;
	size_t bytes;
	int peer;
};

/* n transfers as one NCCL group on `stream` (a cudaStream_t; NULL: the per-thread default
 * stream, in order with the steps). */
int cuda_nccl_swap(struct cuda_nccl *c, const struct cuda_swap *s, int n, void *stream,
		   struct rs_error *err);
void cuda_nccl_close(struct cuda_nccl *c);

struct cuda_engine *cuda_create(const struct cuda_setup *s, struct rs_error *err);
void cuda_destroy(struct cuda_engine *e);

/* 0 when kernel k can run on this engine (its grid, stencil, precision, blocks, device);
 * else 1 and why, with what the kernel runs (solver/kernels.h and its family's limits). */
int cuda_kernel_why(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len);

/* 1 when kernel k can run on this engine (cuda_kernel_why() is 0). */
int cuda_kernel_runs(const struct cuda_engine *e, enum kernel_id k);

/* The kernel the engine runs (after auto, the one it chose). */
enum kernel_id cuda_kernel(const struct cuda_engine *e);

/* After auto: each kernel's measured voxel updates per second (0 where not timed). */
const double *cuda_auto_rates(const struct cuda_engine *e);

/* Source: its m cells (8, or up to CUDA_SOURCE_NODES for a block) and, per step, the m
 * values to add (inj[step * m + c]). */
#define CUDA_SOURCE_NODES 64	/* fdtd.h FDTD_SOURCE_NODES */
int cuda_set_source(struct cuda_engine *e, const size_t *cell, int m, const double *inj,
		    size_t nsteps, struct rs_error *err);

/* Receiver read as sum over c of w[c] * u[cell[c]], in that order. */
int cuda_add_receiver(struct cuda_engine *e, const size_t cell[8], const double w[8],
		      struct rs_error *err);

/* The receiver grid: n points of 8 cells and weights (8 n each, point by point), read as receivers are and rounded to
 * float, into a device window of `window` steps, [step][point]. */
int cuda_grid_set(struct cuda_engine *e, const size_t *cell, const double *w,
		  size_t n, size_t window, struct rs_error *err);

/* Copy the window's first `rows` steps into out and start it again at the next step. */
int cuda_grid_take(struct cuda_engine *e, float *out, long rows, struct rs_error *err);

/* Room for nsamples samples per receiver, on the device and on the host. */
int cuda_reserve(struct cuda_engine *e, size_t nsamples, struct rs_error *err);

/* Copy the branch walls' state (and W) into b's host arrays (fdtd_energy, tests). */
int cuda_branch_state(struct cuda_engine *e, struct branch_walls *b, struct rs_error *err);

/* Zero the fields, the branch state, the samples and the step counter; remove the source. */
int cuda_reset(struct cuda_engine *e, struct rs_error *err);

/* Advance nsteps: update, inject, record on the device; copy the new samples back at the
 * end. Returns RS_EINTR when *stop became non-zero between steps. */
int cuda_advance(struct cuda_engine *e, long nsteps, volatile sig_atomic_t *stop,
		 struct rs_error *err);

long cuda_steps(const struct cuda_engine *e);
long cuda_overlap_steps(const struct cuda_engine *e);	/* fdtd_overlap_steps */

/* Steps run as CUDA graphs so far; why, when a capture failed and none will be, or "". */
long cuda_graph_steps(const struct cuda_engine *e, const char **why);
const double *cuda_receiver(const struct cuda_engine *e, int r);

/* The newest level (older = 0) or the one before, as doubles over the whole grid. */
int cuda_field(const struct cuda_engine *e, int older, double *out, struct rs_error *err);

/* Load the newest level (older = 0) or the one before from doubles over the whole grid (the
 * folded nodes with the fcc scheme), cuda_field's layout. */
int cuda_set_field(struct cuda_engine *e, int older, const double *in, struct rs_error *err);

/* Both levels as stored, precision bytes a value in the grid's order (folded with fcc),
 * whatever the kernel's layout (checkpoints: fdtd_get_state). */
int cuda_levels(const struct cuda_engine *e, void *cur, void *prev, struct rs_error *err);

/* Load both levels (cuda_levels' layout), the branch walls' state and W (NULL: none) and
 * the step counter (fdtd_set_state). */
int cuda_set_state(struct cuda_engine *e, long step, const void *cur, const void *prev,
		   const void *bstate, const void *bW, struct rs_error *err);

/* Receiver r's samples 0 to n - 1, on the device and the host. */
int cuda_set_receiver(struct cuda_engine *e, int r, const double *samples, size_t n,
		      struct rs_error *err);

/* Band-limited snapshot frames (fdtd_frames_setup; fields.cu): the facade's tables (kept,
 * not copied), the sums and the taps on the device; each step adds its planes. */
int cuda_frames_setup(struct cuda_engine *e, int n, const int *axis, const int *index,
		      const size_t *size, const size_t *off, size_t total, const double *h, int m,
		      long every, int slots, struct rs_error *err);
/* Copy n floats of the sums from offset `at` into out and clear them. */
int cuda_frame_take(struct cuda_engine *e, size_t at, size_t n, float *out, struct rs_error *err);
/* All the sums to host (to_device = 0) or from it (1; host NULL: cleared). */
int cuda_frames_copy(struct cuda_engine *e, float *host, size_t total, int to_device,
		     struct rs_error *err);

/* The room cells of one plane of the newest level, as fdtd_plane() lays them out. */
int cuda_plane(struct cuda_engine *e, int axis, int index, float *out, struct rs_error *err);

/*
 * Asynchronous plane copy into pinned host memory (from cuda_host_alloc), in stream order
 * after the steps already launched: *event is done when out holds the plane.
 */
int cuda_plane_start(struct cuda_engine *e, int axis, int index, float *out, void **event,
		     struct rs_error *err);
int cuda_plane_finish(void *event, struct rs_error *err);
float *cuda_host_alloc(size_t n);
void cuda_host_free(float *p);

/*
 * Benchmark: fill the fields with noise, run the update kernel `kernel` for `steps` steps
 * `runs` times (after a warm-up), return the median seconds per run (CUDA events).
 */
int cuda_time_kernel(struct cuda_engine *e, enum kernel_id kernel, int steps, int runs,
		     double *seconds, struct rs_error *err);

/* Build the diamond kernel's tables for an engine created with another kernel (to time it);
 * g must be the grid the engine was created from. */
int cuda_diamond_tables(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err);

/*
 * The diamond kernel's tile size, tower height and blocks per tower (0: the defaults), for
 * the next advance or timing; RS_EINPUT with the valid values when the engine cannot run
 * them.
 */
int cuda_set_diamond(struct cuda_engine *e, int dts, int nt, int split, struct rs_error *err);

/* The diamond kernel's tile size, tower height and blocks per tower in use (the defaults
 * resolved). */
void cuda_diamond(const struct cuda_engine *e, int *dts, int *nt, int *split);

/* Registers per thread and static + dynamic shared memory per block of a kernel. */
void cuda_kernel_resources(const struct cuda_engine *e, enum kernel_id kernel, int *regs,
			   size_t *shared);

/* The device's streaming bandwidth, bytes/s: copy (read 1, write 1), add (read 2, write 1). */
int cuda_bandwidth(double *copy, double *add, struct rs_error *err);

#ifdef __cplusplus
}
#endif

#endif
