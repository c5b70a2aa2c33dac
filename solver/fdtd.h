/*
 * fdtd.h - the one engine API: the two-step schemes with locally reacting walls, run by the
 * CPU engine (cpu.c) or the CUDA engine (solver/cuda/), which fdtd.c chooses between.
 *
 * The engine owns two pressure arrays (u^n and u^(n-1)) and updates in place: step n writes
 * u^(n+1) over u^(n-1) (seed 003 section 4.3.1). Every update is written in increment form,
 *     u+ = u + sc[t] * (cb[t] * (u - u-) + l2 * L),
 * L the Laplacian's neighbour sum written so that it is exactly 0 for a uniform field, so a
 * uniform field stays exactly uniform after rounding in every cell (docs/physics.md, "A
 * uniform field stays uniform"). In the 7-point scheme L = T + be[t] u, with
 * T = ((x- - a) + (x+ - a)) + ((y- - a) + (y+ - a)) + ((z- - a) + (z+ - a)), a = u for the
 * kinds whose plain neighbour sum could round twice (voxel.h, diff) and 0 for the others, and
 * t the cell's kind; air (a = 0, be = -6, sc = cb = 1) is u + ((u - u-) + l2 (S - 6 u)).
 * The CPU engine is the oracle of every other one: a GPU kernel must evaluate the same
 * expression in the same order. Stencils that reach further than one cell
 * (solver/stencil.h) take a general step with mirrored walls (cpu_general.inc), and the fcc
 * scheme its own step on folded fields, half the cells (cpu_fcc.inc).
 *
 * fdtd_create() returns an engine that borrows the voxel grid (which must outlive it);
 * fdtd_destroy() releases everything the engine allocated.
 */
#ifndef FDTD_FDTD_H
#define FDTD_FDTD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"
#include "../geometry/voxel.h"
#include "kernels.h"
#include "stencil.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wall_model;	/* solver/wall.h */

struct fdtd_setup {
	const struct vox_grid *grid;	/* borrowed */
	const struct stn_stencil *stencil;	/* copied; NULL or 7-point: the 7-point scheme */
	double lambda;			/* Courant number c k / h, at most 1/sqrt(3) */
	int precision;			/* 4 (float32) or 8 (float64) */
	int threads;			/* OpenMP threads; 0 = the OpenMP default */
	int cuda;			/* 1: run on the GPU (solver/cuda/), CUDA builds only */
	enum kernel_id kernel;		/* GPU kernel; KERNEL_AUTO picks the fastest */
	int block[2];			/* GPU threads per block; 0 = [32, 8] */
	size_t tex_limit;		/* GPU texels per texture; 0 = the device's limit */
	int dts, nt, split;		/* GPU diamond kernel: tile size, tower height, blocks a
					 * tower is split over in z; 0 = default */
	/* frequency-dependent walls (solver/branch.h): banks[m] is room material m's bank of
	 * branches, NULL for a scalar wall (already in the grid's kinds); dt the time step, s */
	const struct wall_model *const *banks;
	int nbanks;
	double dt;
	int grid_receivers;		/* 1: a receiver grid will be set: GPU kernel auto leaves
					 * out, and the engine refuses, the kernels that record
					 * only a few receivers (diamond) */
	int band_frames;		/* 1: band-limited snapshot frames will be set
					 * (fdtd_frames_setup): the same for diamond */
	int block_sources;		/* 1: a source of more than eight nodes will be set
					 * (fdtd_add_source_block): the same for diamond */
	/* A decomposed run (solver/part.h): called after each step's update and sources and
	 * before the receivers are read, with the newest field (device memory on the GPU) and
	 * the CUDA stream to queue the transfers on (NULL: the per-thread default stream);
	 * returns 0 or an RS_ code with err filled. The GPU then runs no graphs and no diamond. */
	int (*exchange)(void *ctx, void *field, void *stream, struct rs_error *err);
	void *exchange_ctx;
	/* With exchange: the grid's z layers this rank updates (the others are received or
	 * never read; {0, 0}: all), how many at the bottom and top of them its neighbours read
	 * (0 where there is none), and 1 when exchange may queue its transfers on a stream of
	 * the engine's own, so that the GPU updates the layers between while the halos travel. */
	int zown[2], zedge[2];
	int exchange_async;
};

struct fdtd;

/*
 * The per-kind coefficients of the updates above, for any engine that implements them
 * (docs/physics.md, "Walls" and "A uniform field stays uniform").
 */
struct fdtd_coefs {
	int first_diff;			/* kinds t >= first_diff: a = u, else a = 0 (below) */
	double be[VOX_MAX_KINDS];	/* the centre's multiple added to T (air: -6; fcc: -12) */
	double cb[VOX_MAX_KINDS];	/* 1 - g, g = (lambda / 2) beta_sum (fcc: lambda beta_sum) */
	double sc[VOX_MAX_KINDS];	/* 1 / (1 + g); 0 for padding */
	double l2;			/* lambda^2 (fcc: lambda^2 / 4, its neighbours' weight), at
					 * most the stencil's limit and rounded down to the run's
					 * precision, so the rounded scheme is stable too */
};
/* s: the scheme's stencil (NULL: the 7-point one); precision: 4 or 8 bytes. */
void fdtd_coefficients(const struct vox_grid *g, const struct stn_stencil *s, double lambda,
		       int precision, struct fdtd_coefs *c);

/* Bytes a run needs: both fields, the grid, and nrec receivers of nsamples doubles. */
size_t fdtd_memory(const struct vox_plan *p, int precision, int nrec, size_t nsamples);

struct fdtd *fdtd_create(const struct fdtd_setup *s, struct rs_error *err);
void fdtd_destroy(struct fdtd *f);

/* 1 when this build can run the GPU engine and a CUDA device is usable. */
int fdtd_cuda_available(char *name, size_t len);
/* The GPU's context made on a thread beside the setup (one GPU; fdtd_create waits for it),
 * and that thread awaited, as a run that ends before its engine must before it exits. */
void fdtd_cuda_warm(void);
void fdtd_cuda_settle(void);

/* The GPU kernel in use (after auto, the one chosen); KERNEL_AUTO on the CPU. */
enum kernel_id fdtd_kernel(const struct fdtd *f);

/*
 * On the GPU: the median seconds of `steps` steps of the kernel and the branch walls alone (no
 * exchange, sources or receivers) on this engine's grid, or -1. It overwrites the fields with
 * noise: for a diagnosis after a run (ROOMSIM_PHASES), or before one.
 */
double fdtd_time_steps(struct fdtd *f, int steps);

/* After GPU kernel auto: voxel updates/s of each kernel, indexed by enum kernel_id; else NULL. */
const double *fdtd_kernel_rates(const struct fdtd *f);

/* On the GPU: 0 when kernel k can run this engine's grid, else 1 and why into why. */
int fdtd_kernel_why(const struct fdtd *f, enum kernel_id k, char *why, size_t len);

/* The message of the last failure of an action on f ("" when none). */
const char *fdtd_error(const struct fdtd *f);

/*
 * Point source at pos, driven by signal[0..n) (Pa at 1 m, one value per step; copied).
 * Injected at the eight nodes of vox_point() with its weights. -1 if pos is not in air.
 */
int fdtd_add_source(struct fdtd *f, const double pos[3], const double *signal, size_t n);

/* The same, node by node: values[8 i + c] at step i for node c of vox_point()'s eight (a
 * directional source: a monopole and a dipole on the same nodes). -1 if pos is not in air. */
int fdtd_add_source_nodes(struct fdtd *f, const double pos[3], const double *values, size_t n);

/*
 * A source on the k x k x k nodes from grid node lo (a directional source from a balloon,
 * app/run.c): values[k^3 i + c] at step i for node c, x fastest, then y, then z. Nodes in
 * layers beyond a window's are another rank's and left out. -1 when k^3 >
 * FDTD_SOURCE_NODES, a node is not a room node, none is in the grid, or the grid is fcc.
 */
#define FDTD_SOURCE_NODES 64	/* 4 x 4 x 4: a balloon's source block (solver/directivity.h) */
int fdtd_add_source_block(struct fdtd *f, const int lo[3], int k, const double *values,
			  size_t n);

/* Receiver at pos, read from the eight nodes of vox_point(); its index, -1 if not in air. */
int fdtd_add_receiver(struct fdtd *f, const double pos[3]);

/*
 * A receiver grid (geometry/receivers.h): n points (pos: x, y, z of each), each read as a receiver is and rounded to
 * float, recorded every step into a window of `window` steps that fdtd_grid_take() empties;
 * fdtd_advance() refuses to go past a full window. One grid per engine (a run's grids share
 * it); setting it again replaces it. -1 when a point is not in air or memory lacks.
 */
int fdtd_grid_set(struct fdtd *f, const double *pos, size_t n, size_t window);

/* Move the samples of the steps advanced since the last take or reset into out (room for
 * window x n floats; fdtd_host_alloc() memory moves fastest): [step][point], the first of
 * them sample *first (t = *first k). Returns how many steps, or -1 (fdtd_error() says why). */
long fdtd_grid_take(struct fdtd *f, float *out, long *first);

/* Room for nsamples samples per receiver (sample n is the pressure at t = n k). */
int fdtd_reserve(struct fdtd *f, size_t nsamples);

/* Zero the fields, the step counter and the recorded samples; sources are removed. */
void fdtd_reset(struct fdtd *f);

/*
 * Advance nsteps steps: update, inject sources, record receivers. Stops early, returning
 * RS_EINTR, when *stop becomes non-zero (stop may be NULL).
 */
int fdtd_advance(struct fdtd *f, long nsteps, volatile sig_atomic_t *stop);

/* Steps the engine advances best at once (the diamond kernel's tower height, else 1): a
 * caller that advances in chunks makes them multiples of it. */
long fdtd_batch(const struct fdtd *f);

/* 1 when the engine runs the GPU diamond kernel, with its tile size, tower height and the
 * blocks a tower is split over in z; else 0. */
int fdtd_diamond(const struct fdtd *f, int *dts, int *nt, int *split);

/* On the GPU: the steps run as CUDA graphs so far (the per-step kernels replay 32 steps at
 * a time), and in *why the reason there are none, if a capture failed ("" otherwise). */
long fdtd_graph_steps(const struct fdtd *f, const char **why);

/* On the GPU in a decomposed run: the steps whose halo exchange overlapped the update of the
 * slab's interior so far (fdtd_setup.exchange_async). */
long fdtd_overlap_steps(const struct fdtd *f);

/* Steps done so far: samples 0..steps of every receiver are valid. */
long fdtd_steps(const struct fdtd *f);

/* Receiver r's samples; fdtd_steps() + 1 of them are valid. */
const double *fdtd_receiver(const struct fdtd *f, int r);

/*
 * The scheme's conserved energy between the last two levels (docs/physics.md, "Energy"):
 * ||u^n - u^(n-1)||^2 + lambda^2 sum over neighbour pairs (du^n)(du^(n-1)), in grid units;
 * -1 when the work arrays cannot be allocated.
 */
double fdtd_energy(const struct fdtd *f);

/* The same energy of two levels given as doubles over grid g (for any engine's fields);
 * s is the scheme's stencil (NULL: the 7-point scheme). A larger stencil in a carved room
 * needs the engine's fallback cells: use fdtd_energy() there. On the fcc grid, the fcc
 * scheme's energy, each node weighted by its share of its dual cell (physics.md). */
double fdtd_energy_of(const struct vox_grid *g, double lambda, const struct stn_stencil *s,
		      const double *cur, const double *prev);

/* Copy u^n (the newest level) of the room cells of one plane into out, as floats. */
void fdtd_plane(const struct fdtd *f, int axis, int index, float *out);

/*
 * Band-limited snapshot frames (docs/output.md, "Snapshots"; solver/frames.c). After
 * fdtd_frames_setup, each step adds its planes (as fdtd_plane lays them out) into sums held
 * by the engine (device memory on the GPU): frame j of plane p is
 *     sum over k in [0, 2m] of h[k] * plane_p(step j * every - m + k),
 * the steps before 0 silent, in float, each term (float)(h[k] * value) added in step order
 * (the same bits on every engine). A frame's sum occupies one of `slots` = 2m / every + 1
 * slots per plane from its first step to its last, j * every + m; fdtd_frame_take then
 * copies it out and clears the slot. fdtd_reset clears every slot. RS_EINPUT when the
 * engine's kernel does not keep every step's field (diamond). fdtd_frames_size() is the
 * floats of all slots, which fdtd_frames_get and fdtd_frames_set move (checkpoints).
 */
int fdtd_frames_setup(struct fdtd *f, int nplanes, const int *axis, const int *index,
		      const double *h, int m, long every);
int fdtd_frame_take(struct fdtd *f, int p, long j, float *out);
size_t fdtd_frames_size(const struct fdtd *f);
int fdtd_frames_get(struct fdtd *f, float *out);
int fdtd_frames_set(struct fdtd *f, const float *in);

/*
 * The same, possibly asynchronous: on the GPU the copy runs in stream order after the steps
 * launched so far and the call returns at once; fdtd_plane_finish() waits until out holds
 * the plane (on the CPU the copy is done at once). out must come from fdtd_host_alloc().
 * Either call may run on another thread than the stepping one.
 */
struct fdtd_copy {
	void *event;		/* the GPU's completion event; NULL when already done */
};
int fdtd_plane_start(struct fdtd *f, int axis, int index, float *out, struct fdtd_copy *c);
int fdtd_plane_finish(struct fdtd *f, struct fdtd_copy *c);
float *fdtd_host_alloc(struct fdtd *f, size_t n);	/* pinned memory on the GPU */
void fdtd_host_free(struct fdtd *f, float *p);

/* Copy the newest level of the whole grid (or, with older = 1, the level before) as doubles,
 * plan.cells of them; with the fcc scheme the nodes' cells hold their values, the others 0. */
void fdtd_field(const struct fdtd *f, int older, double *out);

/*
 * Load both levels, u^n from cur and u^(n-1) from prev, plan.cells doubles each in
 * fdtd_field()'s layout (with the fcc scheme only the nodes' cells are read), rounded to the
 * run's precision; padding cells must hold 0. The step counter and the receivers stay.
 */
int fdtd_set_field(struct fdtd *f, const double *cur, const double *prev);

/*
 * The engine's whole state at a step, for checkpoints (docs/cli.md, "Checkpoints"): both
 * levels as stored (precision bytes a value, in the grid's order, folded on the fcc
 * lattice, whatever the kernel's own layout), the branch walls' state and W, the step
 * counter; with the receivers' samples (fdtd_receiver) and the source, which the caller
 * adds again, that is all a run needs to go on bitwise as if it had not stopped.
 * fdtd_state_sizes() gives the entries of each array and returns the bytes of one.
 */
size_t fdtd_state_sizes(const struct fdtd *f, size_t *values, size_t *bstates, size_t *bW);
int fdtd_get_state(struct fdtd *f, void *cur, void *prev, void *bstate, void *bW);

/* Load a state of fdtd_get_state() taken at `step` (the receiver grid's window starts empty
 * after it). */
int fdtd_set_state(struct fdtd *f, long step, const void *cur, const void *prev,
		   const void *bstate, const void *bW);

/* h carried on (common/hash.h) over what the update is made of besides the grid: the
 * kinds' coefficients, lambda, the branch walls' constants (a resumed run must match). */
uint64_t fdtd_fingerprint(const struct fdtd *f, uint64_t h);

/* Receiver r's samples 0 to n - 1 (n at most the samples reserved). */
int fdtd_set_receiver(struct fdtd *f, int r, const double *samples, size_t n);

#ifdef __cplusplus
}
#endif

#endif
