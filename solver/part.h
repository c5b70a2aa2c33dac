/*
 * part.h - a run decomposed over MPI ranks (docs/parallel.md): the grid's z layers are split
 * into slabs, one per rank, and each rank runs the ordinary engine (fdtd.h) on a window of the
 * grid (vox_window): its slab and `depth` layers of each neighbour's. After every step's
 * update and sources the ranks swap those layers (part_exchange, the engine's exchange hook):
 * through NCCL between GPUs, through MPI between CPU processes. Every cell a rank owns then
 * sees exactly the values the whole grid would give it, so N ranks compute the same bits as
 * one. The layers beyond the exchanged ones are computed from padding and never read.
 *
 * Why the grid's z: a layer is contiguous in memory, so a halo travels as one block without
 * packing, on the cubic grid and the folded fcc one alike. The room's axis that is the grid's
 * z is its slab axis (room_slab_axis, geometry/voxel.h): the grid turns the room so that the
 * smallest cut is the one made (docs/parallel.md has the volume per step).
 *
 * Without MPI (a build without it, or a process not started by mpirun) there is one rank and
 * every call here is a no-op that succeeds.
 */
#ifndef SOLVER_PART_H
#define SOLVER_PART_H

#include <stddef.h>

#include "../common/rs_error.h"
#include "../geometry/voxel.h"

struct part {
	int rank, size;		/* this process among the run's; size 1: not decomposed */
	int local;		/* its rank on its node: the GPU it runs on */
	int own[2];		/* the z layers (of the whole grid) whose cells this rank updates */
	int win[2];		/* its window: own, the exchanged layers, one more for fcc parity */
	int depth;		/* layers received from each neighbour every step */
	int halo;		/* the grid's padding: window layer k is local layer k - base */
	int base;
	int *cut;		/* part_balance: slab r is room layers cut[r] to cut[r + 1] - 1;
				 * NULL: slabs of equal layers */
	size_t layer;		/* bytes of one z layer of a field */
	int device;		/* 1: the fields live on the GPU (exchange through NCCL) */
	int staged;		/* 1: GPU halos go through host memory and MPI instead: ranks
				 * share a GPU (NCCL cannot), or ROOMSIM_HALO=mpi */
	struct cuda_nccl *nccl;
	struct nccl_start *starting;	/* the communicator being made (part_connect) */
	unsigned char *stage;	/* staged: pinned host room for 4 halos */
	long exchanges;		/* steps exchanged so far */
	double bytes;		/* halo bytes this rank sent so far */
};

/* 1 when this build can run decomposed (MPI found at build time). */
int part_available(void);

/* Join the run: MPI_Init when started by mpirun (or srun), else size 1. */
int part_init(struct part *pt, struct rs_error *err);
void part_end(struct part *pt);

/*
 * Slabs of equal work instead of equal layers, before part_plan: w[k] the work of room layer k
 * of grid p (p->room[2] of them; rank 0's w counts). Each slab holds at least the layers it
 * exchanges and at most part_most_layers of them. Every cut gives the same bits; it only
 * moves work.
 */
int part_balance(struct part *pt, const struct vox_plan *p, const double *w,
		 struct rs_error *err);
/* The most room layers part_balance gives a slab of `layers` over `size` ranks: 5/4 of an
 * equal share (roomsim info's figure). */
int part_most_layers(int layers, int size);
/*
 * Split grid p's room layers over the ranks and set this rank's window (pt->own, pt->win):
 * fields of `precision` bytes, on the GPU when device. RS_EINPUT when a slab would be
 * thinner than the exchange.
 */
int part_plan(struct part *pt, const struct vox_plan *p, int precision, int device,
	      struct rs_error *err);

/* The rank whose slab holds z layer k. */
int part_owner(const struct part *pt, const struct vox_plan *p, int k);

/*
 * The NCCL communicator of the GPUs (gpu: the fields live on the GPU; each rank on GPU
 * pt->local of its node), or, where two ranks share a GPU or ROOMSIM_HALO=mpi, host buffers
 * for MPI (on every rank at once, before part_plan). The communicator is made on a thread of
 * its own, which selects the GPU there, so that its connections and the GPU's context (2.3 s
 * on four H100s) are made while the room is read and the window built; part_connect_wait
 * (after part_plan) waits for it, makes the host buffers, and selects the GPU on the calling
 * thread too. Both agree on failures.
 */
int part_connect(struct part *pt, int gpu, struct rs_error *err);
int part_connect_wait(struct part *pt, struct rs_error *err);

/* fdtd_setup.exchange: swap the layers of field (the newest level) with the neighbours;
 * through NCCL on stream (NULL: the per-thread default stream) when pt->device and not
 * pt->staged, else before returning. */
int part_exchange(void *ctx, void *field, void *stream, struct rs_error *err);

/* fdtd_setup.zown and zedge for this rank's window: the layers it updates, and how many at
 * each end of them its neighbours read. */
void part_layers(const struct part *pt, int zown[2], int zedge[2]);

/* End every rank of the run at once, with exit status `status` (a rank that failed while
 * the others wait on its halos). */
void part_abort(const struct part *pt, int status);

/* Collectives every rank calls in the same order: */
int part_any(const struct part *pt, int flag);		/* 1 when flag is set on any rank */
void part_bcast(const struct part *pt, void *v, size_t bytes);	/* rank 0's v to all */
/* bytes from send on rank `from` into recv on rank 0 (a no-op on the others, and when from
 * is 0) */
void part_send0(const struct part *pt, int from, const void *send, void *recv, size_t bytes);

/* Every rank's largest value of each of v[0 .. n) (bytes), in place. */
void part_max_bytes(const struct part *pt, unsigned char *v, size_t n);

/* Every rank's least value of each of v[0 .. n), in place. */
void part_min_ints(const struct part *pt, int *v, size_t n);

/* Every rank's sum of each of v[0 .. n), in place. */
void part_sum_doubles(const struct part *pt, double *v, size_t n);

/*
 * The same failure on every rank: when rc is set on any rank, the lowest such rank's code
 * and message into err on all (returned); 0 when none failed.
 */
int part_agree(const struct part *pt, int rc, struct rs_error *err);

/*
 * A sum in rank order: v[0 .. n) from rank - 1 (on rank 0 as given), add(ctx, v) on this
 * rank, then on to rank + 1; rank 0 ends with the last rank's v (the others with their own
 * partial ones). Added this way, window after window, a sum has the bits of one pass.
 */
void part_fold(const struct part *pt, double *v, size_t n, void (*add)(void *ctx, double *v),
	       void *ctx);

/* The collectives of a decomposed voxelisation (geometry/voxel.h, vox_build_window). */
void part_vox_comm(struct part *pt, struct vox_comm *c);

/* The z layers first..last of rank r's slab. */
void part_slab(const struct part *pt, const struct vox_plan *p, int r, int *first, int *last);

#endif
