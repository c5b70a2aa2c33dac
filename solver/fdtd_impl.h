/*
 * fdtd_impl.h - inside the engines (solver/ only): the state of a struct fdtd, which the
 * facade (fdtd.c) sets up and the CPU engine (cpu.c) steps, the lattice helpers both use, and
 * the CPU engine's entry points. Nothing outside solver/ includes it; fdtd.h is the API.
 */
#ifndef SOLVER_FDTD_IMPL_H
#define SOLVER_FDTD_IMPL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fdtd.h"
#include "branch.h"
#include "stencil.h"

/* Bounds of the non-padding cells of the x-rows with a given j, from the column heights. */
struct fdtd_row {
	int k0, k1;		/* rows (j, k) with k outside [k0, k1] hold only padding */
	int i0, i1;		/* cells outside [i0, i1] of such a row are padding */
};

/* A point source or receiver: its eight interpolation nodes (vox_point) and their weights. */
struct fdtd_point {
	size_t cell[8];
	double w[8];
	double *signal;		/* source: injected values; receiver: recorded samples */
	double *nodes;		/* or a source given node by node: nodes[m i + c] at step i */
	int m;			/* its nodes: 8 (cell), or a block's (mcell) */
	size_t *mcell;		/* a block source's cells; NULL: cell */
	size_t len;		/* entries of signal (steps of nodes) */
};

struct fdtd {
	const struct vox_grid *grid;
	struct fdtd_coefs coefs;
	double lambda;
	int precision;
	int threads;
	void *cur;		/* u^n */
	void *prev;		/* u^(n-1), overwritten by u^(n+1) */
	struct fdtd_row *rows;	/* one per j */
	size_t *fix_start;	/* per row k * ny + j: its first entry in fix_i; ny * nz + 1 */
	uint32_t *fix_i;	/* x index of every boundary cell, row by row */
	size_t *run_start;	/* per row k * ny + j: its first run in runs; ny * nz + 1 */
	uint32_t *runs;		/* [first, last] x index of each run of non-padding cells */
	/* grid.walls: fitted (voxel.h, struct vox_cut), per group: u^(n-1) saved before the
	 * step, lambda^2 / V, sc and cb of its update */
	void *cut_old;
	double *cut_l2v, *cut_sc, *cut_cb;
	void *scratch;		/* threads x nx values: saved u^(n-1) of a row's boundary cells */
	int *kpart;		/* thread t updates slabs [kpart[t], kpart[t + 1]): equal work */
	int k0, k1;		/* z range holding any non-padding cell */
	long step;
	double inject;		/* source scale 4 pi lambda^2 (1 m) / h, physics.md "Sources" */
	struct fdtd_point *src, *rec;
	int nsrc, nrec;
	size_t capacity;	/* samples reserved per receiver */
	/* the receiver grid (fdtd_grid_set): its points' nodes and weights (CPU only), and the
	 * window of samples, [step][point], that holds gcount steps from sample gbase on */
	size_t ngp, gwin;
	size_t (*gcell)[8];
	double (*gw)[8];
	float *gbuf;
	long gbase, gcount;
	struct cuda_engine *gpu;	/* when running on the GPU: it holds fields and samples */
	struct stn_stencil *stencil;	/* owned copy; NULL for the 7-point scheme */
	ptrdiff_t *goff;	/* linear offset of each stencil point */
	uint32_t *fallback;	/* carved rooms: 1 bit per cell updated by the 7-point rule */
	uint32_t *touch;	/* carved rooms: the other cells within reach of a fallback one */
	uint32_t *lines;	/* carved rooms, axial stencils: the cells with padding within
				 * reach along an axis, whose legs fold (solver/lines.h) */
	size_t values;		/* entries of each field: plan.cells, or half of them folded */
	struct branch_walls *branch;	/* the frequency-dependent walls, or NULL; on the GPU
					 * its lists stay here and its state is downloaded to it */
	/* band-limited snapshot frames (fdtd_frames_setup; frames.c): plane p's slot q at
	 * fr_sum + fr_off[p] + q * fr_size[p] (on the GPU the sums are the engine's) */
	struct fdtd_frames *frames;
	int (*exchange)(void *ctx, void *field, void *stream, struct rs_error *err); /* setup's */
	void *exchange_ctx;
	struct rs_error err;	/* the last failure */
};

struct fdtd_frames {
	int n, m, slots;
	long every;
	int *axis, *index;
	size_t *size, *off, total;	/* floats of each plane's frame, its first slot, all */
	double *h;		/* 2m + 1 taps */
	float *sum;		/* CPU: total floats; NULL on the GPU */
	float *plane;		/* CPU: the largest plane, the step's values */
};

/* The frames' part of step `step` (the newest level is that step's): each plane added to the
 * sums of the frames whose window holds it (frames.c). */
void cpu_frames_add(struct fdtd *f, long step);
void frames_free(struct fdtd_frames *fr);

/* The mirror image of index x along axis a in the box room (docs/physics.md). */
static inline int fold(const struct vox_plan *p, int a, int x)
{
	const int lo = p->halo, hi = p->halo + p->room[a] - 1;

	return x < lo ? 2 * lo - 1 - x : x > hi ? 2 * hi + 1 - x : x;
}

/* Bit n of a per-cell bitmap (NULL: no cell). */
static inline int fdtd_bit(const uint32_t *m, size_t n)
{
	return m && (m[n >> 5] >> (n & 31) & 1);
}

/*
 * Stencil point q of touch cell n = (i, j, k) (set_fallback): where it reads (m, mirrored at
 * the box's walls), and what becomes of it: kept, a 7-point edge of weight 1 (a unit axial
 * step onto a fallback cell), or dropped (any other step onto a fallback cell).
 */
enum touch { TOUCH_KEEP, TOUCH_UNIT, TOUCH_DROP };

static inline enum touch touch_edge(const struct fdtd *f, size_t n, int i, int j, int k, int q,
				    size_t *m)
{
	const struct vox_plan *p = &f->grid->plan;
	const int *o = f->stencil->off[q];

	*m = vox_index(p, fold(p, 0, i + o[0]), fold(p, 1, j + o[1]), fold(p, 2, k + o[2]));
	if (!fdtd_bit(f->fallback, *m))
		return TOUCH_KEEP;
	return abs(o[0]) + abs(o[1]) + abs(o[2]) == 1 && *m == (size_t)((ptrdiff_t)n + f->goff[q])
		       ? TOUCH_UNIT : TOUCH_DROP;
}

/* The fcc scheme's mirror about walls through the outermost nodes (docs/physics.md). */
static inline int fcc_mirror(const struct vox_plan *p, int a, int x)
{
	const int lo = p->halo, hi = p->halo + p->room[a] - 1;

	return x < lo ? 2 * lo - x : x > hi ? 2 * hi - x : x;
}

/* The twelve neighbours of an fcc node in the order S sums them (cpu_fcc.inc), which the
 * GPU kernel follows too (voxel.h). */
#define fcc_order vox_fcc_link

/* The weight of link q of an fcc node on a wall whose missing links are `gone` (voxel.h,
 * VOX_FCC_WEIGHT), as an index into the table read as one row of nine. */
static inline int fcc_weight_at(unsigned gone, int q)
{
	static const unsigned tet[12][2] = VOX_FCC_TET;

	return 3 * __builtin_popcount(gone & tet[q][0]) + __builtin_popcount(gone & tet[q][1]);
}

/* The CPU engine (cpu.c). */

/* Fields, row bounds and lists, scratch rows and the thread partition of f (set up by
 * fdtd_create); RS_ENOMEM and err on failure, and cpu_free() releases what was made. */
int cpu_create(struct fdtd *f, struct rs_error *err);
void cpu_free(struct fdtd *f);

/* nsteps steps: the scheme's update, the sources, the receivers; RS_EINTR when *stop. */
int cpu_advance(struct fdtd *f, long nsteps, volatile sig_atomic_t *stop);

/* Value n of field u (f->cur or f->prev) in double. */
double cpu_get(const struct fdtd *f, const void *u, size_t n);

/* u^n over the room's cells of plane `index` across `axis`, as fdtd_plane() lays it out. */
void cpu_plane(const struct fdtd *f, int axis, int index, float *out);

/* The general stencil's sum at touch cell (i, j, k) of double field u (cpu_general.inc). */
double cpu_touch_sum(const struct fdtd *f, const double *u, int i, int j, int k);

/* An axial stencil's sum at cell (i, j, k) of f->lines of double field u (cpu_general.inc). */
double cpu_line_sum(const struct fdtd *f, const double *u, int i, int j, int k);

#endif
