/*
 * part.c - a decomposed run's slabs, halo exchange and collectives (part.h).
 */
#include "part.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef ROOMSIM_MPI
#include <mpi.h>
#endif
#ifdef ROOMSIM_CUDA
#include "cuda/fdtd_cuda.h"
#endif

int part_available(void)
{
#ifdef ROOMSIM_MPI
	return 1;
#else
	return 0;
#endif
}

/* The environment of a process that mpirun (Open MPI, MPICH) or srun started. */
static int launched(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
					    "SLURM_STEP_NUM_TASKS" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return 1;
	return 0;
}

static int env_int(const char *a, const char *b, int dflt)
{
	const char *v = getenv(a) ? getenv(a) : b ? getenv(b) : NULL;

	return v ? atoi(v) : dflt;
}

int part_init(struct part *pt, struct rs_error *err)
{
	memset(pt, 0, sizeof(*pt));
	pt->size = 1;
#ifdef ROOMSIM_MPI
	if (launched()) {
		int provided;

		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
			return rs_fail(err, RS_EIO, "MPI_Init failed");
		MPI_Comm_rank(MPI_COMM_WORLD, &pt->rank);
		MPI_Comm_size(MPI_COMM_WORLD, &pt->size);
		pt->local = env_int("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", pt->rank);
	}
#else
	(void)err;
	if (launched() && env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1) > 1)
		return rs_fail(err, RS_EINPUT, "started by mpirun with several ranks, but this "
			       "build has no MPI (install libopenmpi-dev and rebuild)");
#endif
	return 0;
}

static int join_start(struct part *pt, struct rs_error *err);

void part_end(struct part *pt)
{
	struct rs_error err = { 0 };

	/* a run that failed while its communicator was being made */
	(void)join_start(pt, &err);
#ifdef ROOMSIM_CUDA
	cuda_nccl_close(pt->nccl);
	cuda_pinned_free(pt->stage);
	pt->nccl = NULL;
	pt->stage = NULL;
#endif
	free(pt->cut);
	pt->cut = NULL;
#ifdef ROOMSIM_MPI
	int up = 0;

	if (MPI_Initialized(&up) == MPI_SUCCESS && up)
		MPI_Finalize();
#endif
}

/* The first layer of rank r's slab of the room's L layers from `halo` on: part_balance's,
 * or an equal share. */
static int slab_start(const struct part *pt, const struct vox_plan *p, int r)
{
	return p->halo + (pt->cut ? pt->cut[r] : (int)((long long)p->room[2] * r / pt->size));
}

int part_most_layers(int layers, int size)
{
	const int most = (int)(((long long)layers * 5 + 4LL * size - 1) / (4LL * size));

	return most < layers ? most : layers;
}

/* The layers exchanged with each neighbour: the stencil's reach; on the fcc lattice two
 * layers at least, since a receiver reads up to two layers above its lowest node there (one on
 * the cubic grid). */
static int exchange_depth(const struct vox_plan *p)
{
	return p->fcc && p->halo < 2 ? 2 : p->halo;
}

int part_balance(struct part *pt, const struct vox_plan *p, const double *w,
		 struct rs_error *err)
{
	const int n = pt->size, layers = p->room[2], most = part_most_layers(layers, n);
	const int least = exchange_depth(p);
	double *sum = NULL, total;
	int *cut;

	if (n == 1 || layers / n < least)
		return 0;	/* part_plan refuses it, with why */
	cut = malloc(((size_t)n + 1) * sizeof(int));
	sum = malloc(((size_t)layers + 1) * sizeof(double));
	if (!cut || !sum) {
		free(cut);
		free(sum);
		return rs_fail(err, RS_ENOMEM, "out of memory");
	}
	sum[0] = 0;
	for (int k = 0; k < layers; k++)
		sum[k + 1] = sum[k] + (w[k] > 0 ? w[k] : 0);
	part_bcast(pt, sum, ((size_t)layers + 1) * sizeof(double));	/* rank 0's */
	total = sum[layers];
	cut[0] = 0;
	cut[n] = layers;
	for (int r = 1; r < n; r++) {
		const double at = total * r / n;
		int k = cut[r - 1], lo, hi;

		while (k < layers && sum[k + 1] < at)	/* the cut whose sum is nearest */
			k++;
		if (k < layers && at - sum[k] > sum[k + 1] - at)
			k++;
		lo = cut[r - 1] + least;
		hi = cut[r - 1] + most;
		lo = lo > layers - (n - r) * most ? lo : layers - (n - r) * most;
		hi = hi < layers - (n - r) * least ? hi : layers - (n - r) * least;
		cut[r] = total > 0 ? (k < lo ? lo : k > hi ? hi : k)
				   : (int)((long long)layers * r / n);
	}
	free(sum);
	free(pt->cut);
	pt->cut = cut;
	return 0;
}

int part_plan(struct part *pt, const struct vox_plan *p, int precision, int device,
	      struct rs_error *err)
{
	const int hi = p->halo + p->room[2] - 1;

	pt->depth = exchange_depth(p);
	pt->halo = p->halo;
	pt->device = device;
	pt->layer = (size_t)(p->fcc ? p->n[0] / 2 : p->n[0]) * (size_t)p->n[1] * (size_t)precision;
	if (pt->size == 1) {
		pt->own[0] = pt->win[0] = p->halo;
		pt->own[1] = pt->win[1] = hi;
		pt->base = 0;
		return 0;
	}
	if (p->room[2] / pt->size < pt->depth)	/* part_balance keeps this */
		return rs_fail(err, RS_EINPUT, "%d ranks split the room's %d layers into slabs "
			       "thinner than the %d layers each exchanges (valid: at most %d ranks)",
			       pt->size, p->room[2], pt->depth, p->room[2] / pt->depth);
	if (pt->layer * (size_t)pt->depth > INT_MAX)
		return rs_fail(err, RS_EINPUT, "a halo of %zu bytes is more than one message "
			       "carries", pt->layer * (size_t)pt->depth);
	pt->own[0] = slab_start(pt, p, pt->rank);
	pt->own[1] = slab_start(pt, p, pt->rank + 1) - 1;
	/* beyond the exchanged layers, 2 reaches more: a larger stencil's fallback cells (within
	 * reach of padding) and their touch cells (within reach of those) are found from the
	 * window's class bytes, and the padding at its ends must not make any of them */
	pt->win[0] = pt->own[0] - pt->depth - 2 * p->halo;
	pt->win[1] = pt->own[1] + pt->depth + 2 * p->halo;
	pt->win[0] = pt->win[0] < p->halo ? p->halo : pt->win[0];
	pt->win[1] = pt->win[1] > hi ? hi : pt->win[1];
	if (p->fcc && (pt->win[0] - p->halo) % 2)	/* a node keeps its parity (vox_window) */
		pt->win[0]--;
	pt->base = pt->win[0] - p->halo;
	return 0;
}

int part_owner(const struct part *pt, const struct vox_plan *p, int k)
{
	int r = 0;

	while (r + 1 < pt->size && k >= slab_start(pt, p, r + 1))
		r++;
	return r;
}

/* A communicator being made: its inputs, and what the thread made. */
struct nccl_start {
	pthread_t thread;
	int device, rank, size;
	unsigned char id[128];
	struct cuda_nccl *nccl;
	struct rs_error err;
};

#if defined(ROOMSIM_MPI) && defined(ROOMSIM_CUDA)
static void *nccl_thread(void *arg)
{
	struct nccl_start *t = arg;
	char bus[64];

	if (!cuda_select(t->device, bus, sizeof(bus), &t->err))
		t->nccl = cuda_nccl_open(t->id, t->rank, t->size, &t->err);
	return NULL;
}
#endif

int part_connect(struct part *pt, int gpu, struct rs_error *err)
{
	const int device = pt->local;

	pt->device = gpu;
	if (pt->size == 1 || !pt->device)
		return 0;
#if defined(ROOMSIM_MPI) && defined(ROOMSIM_CUDA)
	{	/* the same GPU (host and bus id) under two ranks: NCCL refuses it */
		char me[128], *all = malloc(128 * (size_t)pt->size);
		int rc;

		memset(me, 0, sizeof(me));
		gethostname(me, 63);
		rc = all ? cuda_bus(device, me + 64, 64, err)
			 : rs_fail(err, RS_ENOMEM, "out of memory");
		if (part_agree(pt, rc, err)) {
			free(all);
			return err->code;
		}
		MPI_Allgather(me, 128, MPI_BYTE, all, 128, MPI_BYTE, MPI_COMM_WORLD);
		for (int q = 0; q < pt->size; q++)
			if (q != pt->rank && !memcmp(all + 128 * (size_t)q, me, 128))
				pt->staged = 1;
		free(all);
	}
	if (getenv("ROOMSIM_HALO") && !strcmp(getenv("ROOMSIM_HALO"), "mpi"))
		pt->staged = 1;
	if ((pt->staged = part_any(pt, pt->staged)))	/* all ranks alike */
		return 0;	/* part_connect_wait makes the buffers, once the slabs are known */
	{
		struct nccl_start *t = calloc(1, sizeof(*t));
		int bad = !t ? rs_fail(err, RS_ENOMEM, "out of memory")
			     : pt->rank == 0 ? cuda_nccl_id(t->id, sizeof(t->id), err) : 0;

		if (part_agree(pt, bad, err)) {
			free(t);
			return err->code;
		}
		MPI_Bcast(t->id, sizeof(t->id), MPI_BYTE, 0, MPI_COMM_WORLD);
		t->device = device;
		t->rank = pt->rank;
		t->size = pt->size;
		if (pthread_create(&t->thread, NULL, nccl_thread, t)) {	/* then here */
			nccl_thread(t);
			pt->nccl = t->nccl;
			bad = pt->nccl ? 0 : (*err = t->err).code;
			free(t);
			return part_agree(pt, bad, err);
		}
		pt->starting = t;
		return 0;
	}
#else
	(void)device;
	return rs_fail(err, RS_ENODEV, "this build cannot exchange halos between GPUs");
#endif
}

/* The communicator's thread joined: its communicator into pt, or its error into err
 * (returned). */
static int join_start(struct part *pt, struct rs_error *err)
{
	struct nccl_start *t = pt->starting;
	int rc = 0;

	if (!t)
		return 0;
	pthread_join(t->thread, NULL);
	pt->starting = NULL;
	pt->nccl = t->nccl;
	if (!pt->nccl)
		rc = (*err = t->err).code ? err->code : rs_fail(err, RS_EDEVICE, "no communicator");
	free(t);
	return rc;
}

int part_connect_wait(struct part *pt, struct rs_error *err)
{
	if (pt->size == 1 || !pt->device)
		return 0;
#if defined(ROOMSIM_MPI) && defined(ROOMSIM_CUDA)
	{
		int rc = join_start(pt, err);
		char bus[64];

		/* the GPU on this thread too (its context is made by now) */
		if (!rc)
			rc = cuda_select(pt->local, bus, sizeof(bus), err);
		if (!rc && pt->staged && !pt->stage &&
		    !(pt->stage = cuda_pinned(4 * pt->layer * (size_t)pt->depth)))
			rc = rs_fail(err, RS_ENOMEM, "out of pinned memory for the halos");
		return part_agree(pt, rc, err);
	}
#else
	(void)err;
	return rs_fail(err, RS_ENODEV, "this build cannot exchange halos between GPUs");
#endif
}

#ifdef ROOMSIM_MPI
/* Send m blocks of n bytes to peer[q] from send[q] and receive as many into recv[q]. */
static int mpi_swap(const int *peer, unsigned char *const *send, unsigned char *const *recv,
		    int m, size_t n, struct rs_error *err)
{
	MPI_Request rq[4];

	for (int q = 0; q < m; q++) {
		MPI_Irecv(recv[q], (int)n, MPI_BYTE, peer[q], 7, MPI_COMM_WORLD, &rq[2 * q]);
		MPI_Isend(send[q], (int)n, MPI_BYTE, peer[q], 7, MPI_COMM_WORLD, &rq[2 * q + 1]);
	}
	if (MPI_Waitall(2 * m, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
		return rs_fail(err, RS_EIO, "the halo exchange with the neighbouring ranks failed");
	return 0;
}
#endif

int part_exchange(void *ctx, void *field, void *stream, struct rs_error *err)
{
	struct part *pt = ctx;
	unsigned char *u = field, *send[2], *recv[2];
	const size_t n = pt->layer * (size_t)pt->depth;
	/* below: send our first layers, receive the ones under them; above: the mirror image */
	const int below[2] = { pt->rank - 1, pt->rank + 1 };
	const int from[2] = { pt->own[0], pt->own[1] - pt->depth + 1 };
	const int into[2] = { pt->own[0] - pt->depth, pt->own[1] + 1 };
	int peer[2], m = 0;

	pt->exchanges++;
	if (pt->size == 1)
		return 0;
	for (int q = 0; q < 2; q++)
		if (below[q] >= 0 && below[q] < pt->size) {
			peer[m] = below[q];
			send[m] = u + (size_t)(from[q] - pt->base) * pt->layer;
			recv[m++] = u + (size_t)(into[q] - pt->base) * pt->layer;
		}
	pt->bytes += (double)n * m;
	if (pt->device && !pt->staged) {
#ifdef ROOMSIM_CUDA
		struct cuda_swap s[2];

		for (int q = 0; q < m; q++)
			s[q] = (struct cuda_swap){ send[q], recv[q], n, peer[q] };
		return cuda_nccl_swap(pt->nccl, s, m, stream, err);
#else
		return rs_fail(err, RS_ENODEV, "this build has no GPU halo exchange");
#endif
	}
#ifdef ROOMSIM_MPI
	if (pt->device) {	/* through pinned host memory: out, across, back in */
#ifdef ROOMSIM_CUDA
		unsigned char *hs[2] = { NULL, NULL }, *hr[2] = { NULL, NULL };

		for (int q = 0; q < m; q++) {
			hs[q] = pt->stage + (size_t)q * 2 * n;
			hr[q] = hs[q] + n;
			if (cuda_copy(hs[q], send[q], n, 0, err))
				return err->code;
		}
		if (mpi_swap(peer, hs, hr, m, n, err))
			return err->code;
		for (int q = 0; q < m; q++)
			if (cuda_copy(recv[q], hr[q], n, 1, err))
				return err->code;
		return 0;
#endif
	}
	(void)stream;
	return mpi_swap(peer, send, recv, m, n, err);
#else
	(void)peer, (void)send, (void)recv, (void)stream;
	return rs_fail(err, RS_EINTERNAL, "several ranks without MPI");
#endif
}

void part_abort(const struct part *pt, int status)
{
#ifdef ROOMSIM_MPI
	if (pt->size > 1)
		MPI_Abort(MPI_COMM_WORLD, status);
#else
	(void)pt;
#endif
	exit(status);
}

int part_any(const struct part *pt, int flag)
{
#ifdef ROOMSIM_MPI
	int any = flag != 0;

	if (pt->size > 1)
		MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	return any;
#else
	(void)pt;
	return flag != 0;
#endif
}

void part_bcast(const struct part *pt, void *v, size_t bytes)
{
#ifdef ROOMSIM_MPI
	if (pt->size > 1)
		MPI_Bcast(v, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
	(void)pt, (void)v, (void)bytes;
#endif
}

void part_send0(const struct part *pt, int from, const void *send, void *recv, size_t bytes)
{
#ifdef ROOMSIM_MPI
	if (pt->size == 1 || from == 0)
		return;
	for (size_t at = 0; at < bytes; at += INT_MAX / 2) {	/* messages under 2 GB */
		const int c = (int)(bytes - at < INT_MAX / 2 ? bytes - at : INT_MAX / 2);

		if (pt->rank == from)
			MPI_Send((const char *)send + at, c, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
		else if (pt->rank == 0)
			MPI_Recv((char *)recv + at, c, MPI_BYTE, from, 9, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
	}
#else
	(void)pt, (void)from, (void)send, (void)recv, (void)bytes;
#endif
}

#ifdef ROOMSIM_MPI
/* MPI's reductions in pieces of at most 2^30 values, so that counts stay ints. */
static void allreduce(void *v, size_t n, MPI_Datatype type, size_t size, MPI_Op op)
{
	for (size_t at = 0; at < n; at += 1u << 30) {
		const size_t c = n - at < (1u << 30) ? n - at : (1u << 30);

		MPI_Allreduce(MPI_IN_PLACE, (char *)v + at * size, (int)c, type, op, MPI_COMM_WORLD);
	}
}
#endif

void part_max_bytes(const struct part *pt, unsigned char *v, size_t n)
{
#ifdef ROOMSIM_MPI
	if (pt->size > 1)
		allreduce(v, n, MPI_UNSIGNED_CHAR, 1, MPI_MAX);
#else
	(void)pt, (void)v, (void)n;
#endif
}

void part_min_ints(const struct part *pt, int *v, size_t n)
{
#ifdef ROOMSIM_MPI
	if (pt->size > 1)
		allreduce(v, n, MPI_INT, sizeof(int), MPI_MIN);
#else
	(void)pt, (void)v, (void)n;
#endif
}

void part_sum_doubles(const struct part *pt, double *v, size_t n)
{
#ifdef ROOMSIM_MPI
	if (pt->size > 1)
		allreduce(v, n, MPI_DOUBLE, sizeof(double), MPI_SUM);
#else
	(void)pt, (void)v, (void)n;
#endif
}

int part_agree(const struct part *pt, int rc, struct rs_error *err)
{
#ifdef ROOMSIM_MPI
	int first = rc ? pt->rank : pt->size;

	if (pt->size == 1)
		return rc;
	MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (first == pt->size)
		return 0;
	MPI_Bcast(err, (int)sizeof(*err), MPI_BYTE, first, MPI_COMM_WORLD);
	return err->code ? err->code : RS_EINTERNAL;
#else
	(void)pt, (void)err;
	return rc;
#endif
}

void part_fold(const struct part *pt, double *v, size_t n, void (*add)(void *ctx, double *v),
	       void *ctx)
{
#ifdef ROOMSIM_MPI
	if (pt->size > 1 && pt->rank > 0)
		MPI_Recv(v, (int)n, MPI_DOUBLE, pt->rank - 1, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	add(ctx, v);
	if (pt->size > 1) {
		const int next = pt->rank < pt->size - 1 ? pt->rank + 1 : 0;

		MPI_Send(v, (int)n, MPI_DOUBLE, next, 13, MPI_COMM_WORLD);
		if (pt->rank == 0)
			MPI_Recv(v, (int)n, MPI_DOUBLE, pt->size - 1, 13, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
	}
#else
	(void)pt, (void)n;
	add(ctx, v);
#endif
}

#ifdef ROOMSIM_MPI
static void vc_reduce(void *ctx, double *v, int n, int max)
{
	(void)ctx;
	MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
}

static void vc_gather(void *ctx, const void *mine, size_t bytes, void *all)
{
	(void)ctx;
	MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
}

static void vc_swap(void *ctx, const void *below, const void *above, void *from_below,
		    void *from_above, size_t bytes)
{
	const struct part *pt = ctx;
	const int lo = pt->rank > 0 ? pt->rank - 1 : MPI_PROC_NULL;
	const int hi = pt->rank < pt->size - 1 ? pt->rank + 1 : MPI_PROC_NULL;

	/* downwards, then upwards: every rank's send meets its neighbour's receive */
	MPI_Sendrecv(below, (int)bytes, MPI_BYTE, lo, 11, from_above, (int)bytes, MPI_BYTE, hi, 11,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(above, (int)bytes, MPI_BYTE, hi, 12, from_below, (int)bytes, MPI_BYTE, lo, 12,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
#endif

void part_vox_comm(struct part *pt, struct vox_comm *c)
{
	memset(c, 0, sizeof(*c));
	c->rank = pt->rank;
	c->size = pt->size;
	c->ctx = pt;
#ifdef ROOMSIM_MPI
	c->reduce = vc_reduce;
	c->gather = vc_gather;
	c->swap = vc_swap;
#endif
}

void part_slab(const struct part *pt, const struct vox_plan *p, int r, int *first, int *last)
{
	*first = slab_start(pt, p, r);
	*last = slab_start(pt, p, r + 1) - 1;
}

void part_layers(const struct part *pt, int zown[2], int zedge[2])
{
	zown[0] = pt->own[0] - pt->base;
	zown[1] = pt->own[1] - pt->base;
	zedge[0] = pt->rank > 0 ? pt->depth : 0;
	zedge[1] = pt->rank < pt->size - 1 ? pt->depth : 0;
}
