/*
 * engine.h - inside the CUDA engine (solver/cuda/ only; fdtd_cuda.h is the API): the engine's
 * state, the contents of constant memory, and the entry points of each kernel family, a row of
 * the table of solver/kernels.h each. Plain C, so that the family files' launchers need no
 * C++ to be read.
 *
 * Files: engine.cu creates the engine, uploads the grid, sources and receivers and advances;
 * dispatch.cu holds the table's CUDA side, checks, `auto` and timing; fields.cu reads and
 * writes fields and planes. Families: seed.cu, slice_vec.cu, general.cu (general, leggy),
 * shell.cu, fcc.cu, diamond.cu (its towers in diamond_towers.cuh and diamond7.cuh); device.cuh
 * is what their kernels share.
 */
#ifndef SOLVER_CUDA_ENGINE_H
#define SOLVER_CUDA_ENGINE_H

#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdint.h>

#include "fdtd_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_SUBVOLUMES 64	/* texture sub-volumes; 64 x 2^28 texels is far past any GPU */

/*
 * Slicing kernels march z in chunks of KCHUNK slabs, one chunk per grid z index: a block
 * marching all of z makes too few blocks for the chip, and the last wave runs mostly empty.
 * Each chunk re-reads two slabs at its start (2 / KCHUNK of the u^n traffic); on the H200,
 * chunks of 8 to 16 slabs ran fastest (docs/kernels.md).
 */
#define KCHUNK 16

/*
 * The shell kernels take a stencil whose weight depends only on the shell of the point,
 * (|l1|, |l2|, |l3|) sorted, up to SH_MAX_REACH: the weight per point of shell (q1, q2, q3)
 * is at shd[q1][q2][q3] (0 where the stencil has none).
 */
#define SH_MAX_REACH 3
#define SH_N (SH_MAX_REACH + 1)

#define DT_MAX_NT 1024		/* diamond: levels per sweep at most (bounds the probe buffer) */
#define DT_SPARE (512u << 20)	/* kernel auto: device bytes left free beside diamond's tables */

/* The per-kind coefficients of solver/fdtd.h (struct fdtd_coefs) in the run's precision. */
#define KCOEFS_(R)                                                                                \
	{                                                                                         \
		int tdiff;		/* kinds t >= tdiff sum neighbour - u (voxel.h, diff) */      \
		R be[VOX_MAX_KINDS];	/* the centre's multiple added to T */                        \
		R cb[VOX_MAX_KINDS];	/* 1 - g */                                                   \
		R sc[VOX_MAX_KINDS];	/* 1 / (1 + g) */                                             \
		R l2;			/* lambda^2, rounded down to R (fdtd.c) */                    \
	}
struct kcoefs_f32 KCOEFS_(float);
struct kcoefs_f64 KCOEFS_(double);
#undef KCOEFS_

typedef struct kdims {
	int nx, ny, nz;
	long long sy, sz;	/* strides of y and z */
	int kc;			/* slabs per z-chunk of the slicing kernels (grid z) */
	int halo;		/* padding before the room on each axis */
	int hi[3];		/* last room cell along each axis */
	int carved;		/* fcc: nodes at the cells' centres, walls on the links */
} KDims;

/* The stencil of the general and leggy kernels (solver/stencil.h), in stencil order. */
typedef struct kstencil {
	int K;
	int reach;
	int off[STN_MAX_POINTS][3];
} KStencil;

/* What every family file holds in its own constant memory (device.cuh, kconst_sync). */
struct kconst {
	unsigned long long serial;	/* unique per engine: which engine's values a file holds */
	struct kcoefs_f32 cf;
	struct kcoefs_f64 cd;
	KDims dims;
	KStencil st;
	double wd[STN_MAX_POINTS];	/* the stencil's weights */
	double shd[SH_N][SH_N][SH_N];	/* its weight per point of each shell */
	double shc[SH_N];		/* its weight in the slab at z distance d */
};

struct subvolume {
	int k0, k1;			/* slabs updated from this texture */
	long long base;			/* first cell the texture holds */
	cudaTextureObject_t tex[2];	/* over u[0] and u[1] */
};

struct cuda_engine {
	int precision;
	enum kernel_id kernel;
	int block[2];
	struct vox_plan plan;
	struct kconst k;		/* the constants every kernel reads */
	int leggy_m;			/* M of a leggy stencil, 0 for others */
	int shell_r;			/* reach of a stencil the shell kernels run, else 0 */
	int general;			/* 1: a stencil other than the 7-point one */
	int fcc;			/* 1: the fcc scheme: folded fields, kernel fcc only */
	size_t values;			/* entries of each field (folded: half the cells) */
	void *u[2];			/* the two levels */
	int cur;			/* u[cur] is u^n */
	unsigned *mask;			/* air bit per cell */
	uint8_t *cls;			/* class byte per cell */
	long long *fcc_walls;		/* fcc: the room's nodes off the air update, for
					 * fcc-split (engine.cu, fcc_wall_list) */
	long long nfcc_walls;
	int2 *fcc_span;			/* carved fcc rooms: per block of k_fcc_tiled's columns,
					 * the lowest and highest k of its air nodes (engine.cu,
					 * fcc_spans), or NULL: every slab */
	unsigned *fallback;		/* carved rooms: cells taking the 7-point rule, or NULL */
	unsigned *touch;		/* carved rooms: cells with edges to fallback cells */
	unsigned *lines;		/* carved rooms, axial stencils: cells whose legs fold
					 * (solver/lines.h), or NULL */
	unsigned *skip;			/* those together: cells the shell kernels leave */
	long long *special;		/* those cells' indices, for general_special() */
	long long nspecial;
	int2 *colk;			/* per column (kstart, kstop) */
	int2 *blockk;			/* per (bx, by) block of columns: min kstart, max kstop */
	int2 *blockk3;			/* the same for naive3d's block footprint */
	int2 *blockkv;			/* the same for slice-vec's (V times wider) footprint */
	dim3 grid2, grid3, block3, gridv;
	struct subvolume sub[MAX_SUBVOLUMES];
	int nsub;
	long long *src;			/* the source's nsrc_m cells */
	int nsrc_m;			/* 8, or a block source's nodes (diamond: 8) */
	double *inj;			/* nsteps x nsrc_m values */
	size_t inj_steps;
	long long *rcell;		/* 8 cells per receiver */
	double *rw;			/* 8 weights per receiver */
	long long *h_rcell;
	double *h_rw;
	int nrec;
	double *rec;			/* device samples, nrec x cap */
	double *h_rec;			/* host samples, nrec x cap */
	/* the step loop as CUDA graphs of GRAPH_STEPS steps (engine.cu): one per parity of cur
	 * at its start, captured on first use and dropped when what they read changes; ctl on
	 * the device holds the step the next update makes and the grid's window base */
	void *graph[2];			/* cudaGraphExec_t */
	int graph_off;			/* 1: run step by step (capture failed or turned off) */
	long long *ctl;			/* [0] step, [1] gbase */
	int ctl_fresh;			/* 1: ctl holds step and gbase (graphs keep it so) */
	long graph_steps;		/* steps run by graphs so far */
	char graph_why[160];		/* why graph_off, when a capture failed */
	long long *gcell;		/* the receiver grid: 8 cells per point */
	double *gw;			/* and 8 weights */
	float *gbuf;			/* its window of samples, [step][point] */
	size_t ngp, gwin;
	long gbase;			/* the sample in the window's first row */
	int grid_receivers;		/* 1: a grid will be set or is (diamond refuses) */
	/* band-limited snapshot frames (fields.cu): the facade's tables, the device's sums,
	 * taps and one plane's staging */
	int band_frames;		/* 1: frames will be set or are (diamond refuses) */
	int block_sources;		/* 1: a block source will be set or is (diamond refuses) */
	int fr_n, fr_m, fr_slots;
	long fr_every;
	const int *fr_axis, *fr_index;
	const size_t *fr_size, *fr_off;
	float *fr_sum, *fr_stage;
	double *fr_h;
	/* a decomposed run's halo exchange (cuda_setup), between sources and receivers */
	int (*exchange)(void *ctx, void *field, void *stream, struct rs_error *err);
	void *exchange_ctx;
	int zown[2], zedge[2];		/* the layers this rank updates, those its neighbours read */
	int overlap;			/* 1: slice-vec steps overlap the exchange (engine.cu) */
	int src_inside;			/* the source's cells lie between the edges (engine.cu) */
	cudaStream_t xstream;		/* the exchange's stream (high priority) */
	cudaEvent_t xev[2];		/* the step before done; halos in */
	long overlap_steps;		/* steps whose exchange overlapped the interior's update */
	float *stage;			/* device staging of snapshot planes */
	size_t stage_bytes;
	size_t cap;
	long step;
	double auto_rate[NKERNELS];	/* kernel auto: each kernel's voxel updates/s */
	int nsm;			/* the device's multiprocessors */
	/* the diamond kernel (diamond.cu) */
	int zfast;			/* 1: the fields are laid out z fastest (diamond runs) */
	int dts, nt, split;		/* its tile size, tower height and blocks per tower; 0 = default */
	int dt_zlo, dt_zhi;		/* z range of the room's cells */
	uint8_t *dt_cls;		/* class bytes, z fastest; NULL: diamond cannot run yet */
	int dt_made;			/* diamond's tables were made (dt_prepare) */
	int dt_nomem;			/* kernel auto: diamond's tables did not fit */
	int2 *dt_probez;		/* per column: z range of its source and receiver cells */
	int2 *dt_xr;			/* per row y: x range of its room columns */
	int2 *h_probez;			/* the same on the host */
	long long h_src[CUDA_SOURCE_NODES];	/* the source's cells (as cuda_set_source) */
	long long *dt_src, *dt_probe;	/* the source's and receivers' cells, z fastest */
	double *dt_pval;		/* receiver cells' values per level of a sweep */
	size_t dt_pval_n;		/* doubles dt_pval holds */
	int dt_dirty;			/* the source or receivers changed since the last sweep */
	unsigned long long *dt_flags;	/* k_dt7: per tower, its sweep's epoch and levels done */
	size_t dt_nflags;
	int *dt_ticket;			/* k_dt7's ticket counter */
	unsigned dt_epoch;		/* the last sweep's */
	int dt_mode;			/* with branch walls: k_dt7's towers awaited whole (1) or
					 * a few levels apart (2), 0 while dt_advance times them */
	int dt_tried;			/* dt_advance's sweeps towards that choice */
	float dt_ms[2];			/* their times per level, whole and apart */
	struct cuda_branch *branch;	/* the branch walls (branch.cu), or NULL */
	struct cuda_cut *cut;		/* grid.walls: fitted (cut.cu), or NULL */
	const struct branch_walls *hbranch;	/* the host's (struct fdtd frees it after the engine) */
};

/*
 * A kernel family's entry points, the CUDA side of a row of solver/kernels.h (dispatch.cu
 * builds the table from the family names there):
 *   launch  advance the fields nlev levels (1 unless levels() says more; no source or
 *           receivers: cuda_advance adds them), u[cur] the newest after; 0 or RS_*
 *   check   0 when the family can run kernel k on this engine beyond its row's `runs` (orders,
 *           reach, blocks, height, shared memory); else 1 and why, with what would be valid
 *   fn      the kernel instance cudaFuncGetAttributes reads, and its dynamic shared memory
 *   levels  the most levels one launch advances
 */
struct cuda_kernel {
	int (*launch)(struct cuda_engine *e, enum kernel_id k, int nlev, struct rs_error *err);
	int (*check)(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len);
	const void *(*fn)(const struct cuda_engine *e, enum kernel_id k, size_t *smem);
	int (*levels)(const struct cuda_engine *e);
};

extern const struct cuda_kernel cuda_kernels[NKERNELS];

#define KERNEL_FAMILY_(id, name, family, runs, line)                                               \
	int family##_launch(struct cuda_engine *e, enum kernel_id k, int nlev,                     \
			    struct rs_error *err);                                                 \
	int family##_check(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len);  \
	const void *family##_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem);      \
	int family##_levels(const struct cuda_engine *e);
KERNEL_TABLE(KERNEL_FAMILY_)
#undef KERNEL_FAMILY_

/* The engine whose constants every kernel file holds after its last step launched kernel
 * by kernel, 0 when a file's constants changed since (engine.cu's step loop replays CUDA
 * graphs only for that engine: a graph cannot copy constants). */
extern unsigned long long cuda_graph_serial;

/* RS_EDEVICE with call, file and line in err unless e is cudaSuccess. */
int cuda_check(cudaError_t e, const char *call, const char *file, int line,
	       struct rs_error *err);

/* bytes from pageable host memory at src to the device at dst, done on return; 0 or
 * RS_EDEVICE (engine.cu says how). */
int cuda_upload(void *dst, const void *src, size_t bytes, struct rs_error *err);

/* Kernel auto: time each kernel that runs here on the engine's grid, keep the fastest, reset. */
int cuda_choose_kernel(struct cuda_engine *e, struct rs_error *err);

/* shell.cu: a stencil's weight per point of each shell (|l| sorted), and its reach; 0 when
 * it is not made of whole shells of equal weights within SH_MAX_REACH. */
int shell_weights(const struct stn_stencil *s, double wd[SH_N][SH_N][SH_N]);

/* fcc.cu: the folded nodes across a block of fcc-split's first kernel (k_fcc_tiled). */
int fcc_split_width(const struct cuda_engine *e);

/* fcc.cu: the plane kernel on the folded lattice (cuda_plane's layout), into device memory. */
int fcc_plane(const struct cuda_engine *e, dim3 g, float *out, int axis, int index, int n2,
	      struct rs_error *err);

/* The branch walls (branch.cu): upload at creation, zero, the update after each step's
 * kernel (u[cur] the scheme's new level, u[cur ^ 1] the one before), release. */
int cuda_branch_upload(struct cuda_engine *e, const struct branch_walls *b,
		       struct rs_error *err);
/* The diamond kernel's lists of the nodes by grid column (branch.cuh), made from the host's
 * walls the first time diamond is prepared (dt_prepare), not for the other kernels. */
int cuda_branch_columns_make(struct cuda_engine *e, struct rs_error *err);
int cuda_branch_reset(struct cuda_engine *e, struct rs_error *err);
/* Upload the branch state and W (a checkpoint's, cuda_branch_state()'s layout). */
int cuda_branch_load(struct cuda_engine *e, const void *state, const void *W,
		     struct rs_error *err);
int cuda_branch_step(struct cuda_engine *e, struct rs_error *err);

/* slice_vec.cu: slabs kfrom..kto of level b from level a, on stream (NULL: the per-thread
 * default stream; a decomposed run's overlapped step, engine.cu). */
int slice_vec_layers(struct cuda_engine *e, const void *a, void *b, int kfrom, int kto,
		     void *stream, struct rs_error *err);
void cuda_branch_free(struct cuda_engine *e);

/* grid.walls: fitted (cut.cu): upload at creation (l2v, sc and cb per group, as the CPU
 * engine's), then each step u^(n-1) saved before the kernel, the groups' update after it,
 * and after the branch walls their first members' values spread; release. */
int cuda_cut_upload(struct cuda_engine *e, const struct vox_cut *c, const double *l2v,
		    const double *sc, const double *cb, struct rs_error *err);
int cuda_cut_save(struct cuda_engine *e, struct rs_error *err);
/* dispatch.cu: one step of per-step kernel k with all of these passes, in the CPU's order. */
int cuda_step_walls(struct cuda_engine *e, enum kernel_id k, struct rs_error *err);
int cuda_cut_step(struct cuda_engine *e, struct rs_error *err);
int cuda_cut_spread(struct cuda_engine *e, struct rs_error *err);
void cuda_cut_free(struct cuda_engine *e);

/* The diamond kernel's host side (diamond.cu) that the engine calls. */
int dt_prepare(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err);
int dt_advance(struct cuda_engine *e, long nsteps, volatile sig_atomic_t *stop,
	       struct rs_error *err);
long long dt_index(const struct cuda_engine *e, long long n, int *col, int *z);
void dt_free(struct cuda_engine *e);

/* Drop the captured step graphs: what they launch changed (engine.cu). */
void cuda_graph_drop(struct cuda_engine *e);

/* fields.cu: the snapshot frames' part of the step just updated, `step` the newest level's
 * (from ctl[0] instead when ctl is not NULL, as a graph replays it). */
int cuda_frames_add(struct cuda_engine *e, long long step, const long long *ctl,
		    struct rs_error *err);

/* A step of a carved room's fallback and touch cells as the general kernel takes them, after a
 * shell kernel stepped the others (general.cu). */
int general_special(struct cuda_engine *e, struct rs_error *err);

#ifdef __cplusplus
}
#endif

/* Evaluates to 0 or RS_EDEVICE; a debug build (-DROOMSIM_SYNC_CHECK) syncs after launches. */
#define CK(call) cuda_check((call), #call, __FILE__, __LINE__, err)
#ifdef ROOMSIM_SYNC_CHECK
#define CK_LAUNCH() (CK(cudaGetLastError()) || CK(cudaDeviceSynchronize()))
#else
#define CK_LAUNCH() CK(cudaGetLastError())
#endif

#endif
