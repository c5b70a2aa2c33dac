/*
 * engine.cu - the CUDA engine (fdtd_cuda.h): creates it from a grid and a stencil, uploads the
 * grid's mask, class bytes and column heights, holds the source and the receivers, and
 * advances by the kernel of the run (dispatch.cu), adding the source and recording the
 * receivers after each step. The kernels live in their family files (engine.h lists them).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.cuh"
#include "../../common/rs_phase.h"

int cuda_available(char *name, size_t len, size_t *memory)
{
	struct cudaDeviceProp p;
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		cudaGetLastError();	/* clear the error of a machine without a driver */
		return 0;
	}
	if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
		return 0;
	if (name)
		snprintf(name, len, "%s", p.name);
	if (memory)
		*memory = p.totalGlobalMem;
	return 1;
}

static void graph_drop(struct cuda_engine *e);

size_t cuda_diamond_memory(const struct vox_plan *p, int nrec)
{
	/* its class bytes, probe ranges, row ranges, receiver values per level and tower
	 * flags */
	return p->fcc ? 0
		      : p->cells + (size_t)p->n[0] * p->n[1] * sizeof(int2) +
				p->n[1] * sizeof(int2) + (size_t)nrec * 8 * DT_MAX_NT * 8 +
				sizeof(unsigned) * (p->n[0] + DT_MAX_NT) * (p->n[1] / 2 + 2);
}

size_t cuda_memory(const struct vox_plan *p, int precision, enum kernel_id k, int nrec,
		   size_t nsamples, size_t nsteps)
{
	const size_t cols = (size_t)p->n[0] * p->n[1];

	if (p->fcc)	/* folded fields, class bytes and the wall nodes' list (fcc_wall_list) */
		return (2 * (size_t)precision + 1) * (p->cells / 2) + p->boundary * sizeof(long long) +
		       (size_t)nrec * nsamples * sizeof(double) + nsteps * 8 * sizeof(double);
	return 2 * p->cells * (size_t)precision + p->cells + (p->cells / 32 + 1) * 4 +
	       2 * sizeof(int2) * cols + (size_t)nrec * nsamples * sizeof(double) +
	       nsteps * 8 * sizeof(double) +
	       (k == KERNEL_DIAMOND ? cuda_diamond_memory(p, nrec) : 0);
}

/* The coefficients in the precision of K (struct kcoefs_f32 or kcoefs_f64). */
template <typename K> static void fill_coefs(K *k, const struct fdtd_coefs *c)
{
	typedef decltype(k->l2) R;

	k->tdiff = c->first_diff;
	for (int t = 0; t < VOX_MAX_KINDS; t++) {
		k->be[t] = (R)c->be[t];
		k->cb[t] = (R)c->cb[t];
		k->sc[t] = (R)c->sc[t];
	}
	k->l2 = (R)c->l2;
}

/* Per block of bx x by columns: the lowest start and highest stop height (seed 003 4.3.3). */
/* Column c's cells to update: its room cells within the layers this rank owns (zown). */
static int2 column_span(const struct vox_grid *g, const int zown[2], size_t c)
{
	return make_int2(max(g->kstart[c], zown[0]), min(g->kstop[c], zown[1]));
}

static int block_heights(const struct vox_grid *g, const int zown[2], int bx, int by,
			 int2 **out, dim3 *grid, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	const int gx = (p->n[0] + bx - 1) / bx, gy = (p->n[1] + by - 1) / by;
	int2 *h = (int2 *)malloc(sizeof(int2) * (size_t)gx * gy);
	int rc;

	if (!h)
		return rs_fail(err, RS_ENOMEM, "out of memory for block heights");
	for (int b = 0; b < gx * gy; b++)
		h[b] = make_int2(p->n[2], -1);
	for (int j = 0; j < p->n[1]; j++)
		for (int i = 0; i < p->n[0]; i++) {
			int2 *v = &h[i / bx + gx * (j / by)];
			const int2 k = column_span(g, zown, (size_t)i + (size_t)p->n[0] * j);

			if (k.x > k.y)
				continue;
			v->x = min(v->x, k.x);
			v->y = max(v->y, k.y);
		}
	*grid = dim3(gx, gy, 1);
	rc = CK(cudaMalloc(out, sizeof(int2) * (size_t)gx * gy)) ||
	     CK(cudaMemcpy(*out, h, sizeof(int2) * (size_t)gx * gy, cudaMemcpyHostToDevice));
	free(h);
	return rc ? RS_EDEVICE : 0;
}

/* cuda_warm's thread (fdtd_cuda.h), joined by cuda_warm_wait. */
static pthread_t warm_thread;
static int warm_started;

static void *warm_main(void *arg)
{
	(void)arg;
	cudaFree(0);	/* the primary context made; an error is the engine's to report */
	cudaGetLastError();
	return NULL;
}

void cuda_warm(void)
{
	if (!warm_started && !pthread_create(&warm_thread, NULL, warm_main, NULL))
		warm_started = 1;
}

void cuda_warm_wait(void)
{
	if (warm_started)
		pthread_join(warm_thread, NULL);
	warm_started = 0;
}

/*
 * A pageable cudaMemcpy goes through the driver's own staging on one thread. Here the
 * threads copy each piece of 64 MiB into one of two pinned buffers while the other's piece
 * crosses to the GPU (docs/performance.md, "Four GPUs", has what it saves). Uploads of less
 * than two pieces take cudaMemcpy. ROOMSIM_UPLOAD_PIECE sets another piece size (at least
 * 4096 bytes), so that gpu-test can carry small rooms this way too.
 */
int cuda_upload(void *dst, const void *src, size_t bytes, struct rs_error *err)
{
	const char *env = getenv("ROOMSIM_UPLOAD_PIECE");
	const size_t piece = env && atol(env) >= 4096 ? (size_t)atol(env) : (size_t)64 << 20;
	char *stage[2] = { NULL, NULL };
	cudaEvent_t sent[2] = { NULL, NULL };
	cudaStream_t st = NULL;
	int rc;

	if (bytes < 2 * piece)
		return CK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)) ? RS_EDEVICE : 0;
	rc = CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)) ||
	     CK(cudaMallocHost((void **)&stage[0], piece)) ||
	     CK(cudaMallocHost((void **)&stage[1], piece)) ||
	     CK(cudaEventCreateWithFlags(&sent[0], cudaEventDisableTiming)) ||
	     CK(cudaEventCreateWithFlags(&sent[1], cudaEventDisableTiming));
	for (size_t at = 0, b = 0; !rc && at < bytes; at += piece, b ^= 1) {
		const size_t len = bytes - at < piece ? bytes - at : piece;
		const char *from = (const char *)src + at;
		char *to = stage[b];

		/* the buffer's last piece has crossed (an event not yet recorded has too) */
		if ((rc = CK(cudaEventSynchronize(sent[b]))))
			break;
#pragma omp parallel for schedule(static)
		for (long long q = 0; q < (long long)((len + (1 << 20) - 1) >> 20); q++) {
			const size_t o = (size_t)q << 20;

			memcpy(to + o, from + o, len - o < (1 << 20) ? len - o : (1 << 20));
		}
		rc = CK(cudaMemcpyAsync((char *)dst + at, to, len, cudaMemcpyHostToDevice, st)) ||
		     CK(cudaEventRecord(sent[b], st));
	}
	if (st && CK(cudaStreamSynchronize(st)))
		rc = 1;
	for (int b = 0; b < 2; b++) {
		if (stage[b])
			cudaFreeHost(stage[b]);
		if (sent[b])
			cudaEventDestroy(sent[b]);
	}
	if (st)
		cudaStreamDestroy(st);
	return rc ? RS_EDEVICE : 0;
}

static int upload_grid(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	const size_t words = p->cells / 32 + 1, cols = (size_t)p->n[0] * p->n[1];
	unsigned *mask = (unsigned *)calloc(words, sizeof(unsigned));
	int2 *colk = (int2 *)malloc(cols * sizeof(int2));
	int rc = RS_ENOMEM;

	if (!mask || !colk)
		goto out;
#pragma omp parallel for schedule(static)
	for (long long w = 0; w < (long long)(p->cells / 32); w++)	/* word by word */
		for (size_t n = 32 * (size_t)w; n < 32 * (size_t)w + 32; n++)
			if (g->cls[n] == VOX_AIR)
				mask[n >> 5] |= 1u << (n & 31);
	for (size_t n = p->cells / 32 * 32; n < p->cells; n++)
		if (g->cls[n] == VOX_AIR)
			mask[n >> 5] |= 1u << (n & 31);
	for (size_t c = 0; c < cols; c++)
		colk[c] = column_span(g, e->zown, c);
	rc = RS_EDEVICE;
	if (CK(cudaMalloc(&e->mask, words * sizeof(unsigned))) ||
	    CK(cudaMalloc(&e->cls, p->cells)) || CK(cudaMalloc(&e->colk, cols * sizeof(int2))) ||
	    cuda_upload(e->mask, mask, words * sizeof(unsigned), err) ||
	    cuda_upload(e->cls, g->cls, p->cells, err) ||
	    CK(cudaMemcpy(e->colk, colk, cols * sizeof(int2), cudaMemcpyHostToDevice)))
		goto out;
	rc = 0;
out:
	if (rc == RS_ENOMEM)
		rs_fail(err, RS_ENOMEM, "out of host memory preparing the grid");
	free(mask);
	free(colk);
	return rc;
}

/*
 * The room's nodes of slab k (fcc_run's ranges) that fcc.cu's fcc_direct_node leaves: in a
 * carved room those neither air nor padding, in a box those on its faces; less the members
 * of fitted walls' groups (cut: one bit a folded node, or NULL), whose values the groups'
 * pass writes over (cut.cu). Their folded indices, in order, into list unless NULL; returns
 * how many. f: the folded class bytes.
 */
static long long fcc_walls_of_slab(const KDims &d, const uint8_t *f, const uint64_t *cut, int k,
				   long long *list)
{
	long long m = 0;

	for (int j = d.halo; j <= d.hi[1]; j++)
		for (int i = d.halo + ((j + k + d.halo) & 1); i <= d.hi[0]; i += 2) {
			const long long n = (i >> 1) + d.sy * j + d.sz * k;

			if ((d.carved ? f[n] != VOX_AIR && f[n] != VOX_PAD
				      : !(i > d.halo && i < d.hi[0] && j > d.halo && j < d.hi[1] &&
					  k > d.halo && k < d.hi[2])) &&
			    !(cut && cut[n >> 6] >> (n & 63) & 1)) {
				if (list)
					list[m] = n;
				m++;
			}
		}
	return m;
}

/* Those nodes of every slab, on the device, for fcc-split's pass over them. */
static int fcc_wall_list(struct cuda_engine *e, const uint8_t *f, const struct vox_cut *c,
			 struct rs_error *err)
{
	const KDims &d = e->k.dims;
	const int nk = d.hi[2] - d.halo + 1;
	long long *at = (long long *)calloc((size_t)nk + 1, sizeof(long long)), *list = NULL;
	uint64_t *cut = c ? (uint64_t *)calloc(e->values / 64 + 1, sizeof(uint64_t)) : NULL;
	int rc = 0;

	if (!at || (c && !cut)) {
		free(at);
		free(cut);
		return rs_fail(err, RS_ENOMEM, "out of host memory preparing the grid");
	}
#pragma omp parallel for schedule(static)
	for (size_t q = 0; q < (c ? c->n : 0); q++) {
		const size_t n = c->cell[q] >> 1;

#pragma omp atomic update
		cut[n >> 6] |= 1ull << (n & 63);
	}
#pragma omp parallel for schedule(dynamic, 4)
	for (int k = 0; k < nk; k++)
		at[k + 1] = fcc_walls_of_slab(d, f, cut, d.halo + k, NULL);
	for (int k = 0; k < nk; k++)
		at[k + 1] += at[k];
	e->nfcc_walls = at[nk];
	if (e->nfcc_walls && !(list = (long long *)malloc(e->nfcc_walls * sizeof(long long))))
		rc = rs_fail(err, RS_ENOMEM, "out of host memory preparing the grid");
	if (e->nfcc_walls && !rc) {
#pragma omp parallel for schedule(dynamic, 4)
		for (int k = 0; k < nk; k++)
			fcc_walls_of_slab(d, f, cut, d.halo + k, list + at[k]);
		rc = CK(cudaMalloc(&e->fcc_walls, e->nfcc_walls * sizeof(long long))) ||
				     cuda_upload(e->fcc_walls, list,
						 e->nfcc_walls * sizeof(long long), err)
			     ? RS_EDEVICE
			     : 0;
	}
	free(list);
	free(cut);
	free(at);
	return rc;
}

/*
 * In a carved room, fcc-split's first kernel updates only air nodes: per block of its columns
 * (bx folded pairs by by rows, as fcc_run launches it), the lowest and highest slab holding
 * one, so that a block steps only those slabs (k > k.y: none). A room that fills little of its
 * box (a fan's plan, a sloping ceiling) leaves many blocks few slabs. f: the folded class
 * bytes.
 */
static int fcc_spans(struct cuda_engine *e, const uint8_t *f, struct rs_error *err)
{
	const KDims &d = e->k.dims;
	const int wx = fcc_split_width(e), by = e->block[1];
	const int gx = (d.nx + wx - 1) / wx, gy = (d.ny + by - 1) / by;
	int2 *h = (int2 *)malloc(sizeof(int2) * (size_t)gx * gy);
	int rc;

	if (!h)
		return rs_fail(err, RS_ENOMEM, "out of host memory preparing the grid");
#pragma omp parallel for schedule(dynamic, 16)
	for (int b = 0; b < gx * gy; b++) {
		const int x0 = b % gx * wx, x1 = min(x0 + wx, d.nx);
		const int j0 = max(b / gx * by, d.halo), j1 = min(b / gx * by + by - 1, d.hi[1]);
		int2 s = make_int2(d.hi[2] + 1, d.hi[2]);

		for (int k = d.halo; k <= d.hi[2] && s.x > d.hi[2]; k++)
			for (int j = j0; j <= j1 && s.x > d.hi[2]; j++)
				if (memchr(f + x0 + d.sy * j + d.sz * k, VOX_AIR, x1 - x0))
					s.x = k;
		if (s.x > d.hi[2])
			s.y = d.hi[2];	/* no air: k runs from hi + 1 to hi, none */
		else
			for (int k = d.hi[2], found = 0; !found; k--)
				for (int j = j0; j <= j1 && !found; j++)
					if (memchr(f + x0 + d.sy * j + d.sz * k, VOX_AIR, x1 - x0))
						s.y = k, found = 1;
		h[b] = s;
	}
	rc = CK(cudaMalloc(&e->fcc_span, sizeof(int2) * (size_t)gx * gy)) ||
			     cuda_upload(e->fcc_span, h, sizeof(int2) * (size_t)gx * gy, err)
		     ? RS_EDEVICE
		     : 0;
	free(h);
	return rc;
}

/* The fcc grid: the class bytes of its nodes, folded like the fields (voxel.h), fcc-split's
 * list of its wall nodes and, in a carved room, its blocks' spans of slabs. */
static int upload_folded(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	uint8_t *f = (uint8_t *)malloc(e->values);
	int rc;

	if (!f)
		return rs_fail(err, RS_ENOMEM, "out of host memory preparing the grid");
#pragma omp parallel for schedule(static)
	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = (j + k) & 1; i < p->n[0]; i += 2)
				f[vox_folded(p, i, j, k)] = g->cls[vox_index(p, i, j, k)];
	rc = CK(cudaMalloc(&e->cls, e->values)) || cuda_upload(e->cls, f, e->values, err)
		     ? RS_EDEVICE : 0;
	if (!rc)
		rc = fcc_wall_list(e, f, g->cut, err);
	if (!rc && e->k.dims.carved)
		rc = fcc_spans(e, f, err);
	free(f);
	return rc;
}

/*
 * Texture objects over linear memory hold at most `limit` texels, so the volume is split
 * into stacked sub-volumes of whole slabs, each texture also holding the slab below and
 * above its range (seed 003 section 4.2.2, figure 4), its start aligned as textures require.
 */
static int make_textures(struct cuda_engine *e, size_t limit, struct rs_error *err)
{
	const long long sz = e->k.dims.sz;
	long long align, slabs;
	int k = 1, width = 0, alignment = 0;

	if (CK(cudaDeviceGetAttribute(&width, cudaDevAttrMaxTexture1DLinearWidth, 0)) ||
	    CK(cudaDeviceGetAttribute(&alignment, cudaDevAttrTextureAlignment, 0)))
		return RS_EDEVICE;
	if (!limit)
		limit = (size_t)width;
	align = (long long)alignment / e->precision;
	slabs = ((long long)limit - 2 * align) / sz - 2;	/* updated slabs per sub-volume */
	if (slabs < 1)
		return rs_fail(err, RS_EDEVICE, "a slab of %lld cells exceeds the texture limit of "
			       "%zu texels", sz, limit);
	e->nsub = 0;
	while (k <= e->plan.n[2] - 2) {
		struct subvolume *s = &e->sub[e->nsub];
		long long first, count;

		if (e->nsub == MAX_SUBVOLUMES)
			return rs_fail(err, RS_EDEVICE, "more than %d texture sub-volumes",
				       MAX_SUBVOLUMES);
		s->k0 = k;
		s->k1 = (int)min((long long)e->plan.n[2] - 2, k + slabs - 1);
		first = (s->k0 - 1) * sz / align * align;
		count = (s->k1 + 2) * sz - first;
		s->base = first;
		for (int b = 0; b < 2; b++) {
			struct cudaResourceDesc res;
			struct cudaTextureDesc td;

			memset(&res, 0, sizeof(res));
			memset(&td, 0, sizeof(td));
			res.resType = cudaResourceTypeLinear;
			res.res.linear.devPtr = (char *)e->u[b] + first * e->precision;
			res.res.linear.desc = e->precision == 4 ? cudaCreateChannelDesc<float>()
								: cudaCreateChannelDesc<int2>();
			res.res.linear.sizeInBytes = (size_t)count * e->precision;
			td.readMode = cudaReadModeElementType;
			if (CK(cudaCreateTextureObject(&s->tex[b], &res, &td, NULL)))
				return RS_EDEVICE;
		}
		e->nsub++;
		k = s->k1 + 1;
	}
	return 0;
}

/* The stencil the general and leggy kernels run: the given one, or the 7-point one. */
static int set_stencil(struct cuda_engine *e, const struct stn_stencil *st,
		       const struct vox_grid *g, int walls, struct rs_error *err)
{
	static struct stn_stencil seven;
	const struct stn_stencil *s = st;

	if (!s) {
		stn_leggy(&seven, 1);
		s = &seven;
	}
	e->general = !stn_is_seven_point(s);
	if (e->general && g->carved && !g->plan.fcc && !walls)	/* fcc: walls on links */
		return rs_fail(err, RS_EINTERNAL, "%s in a room that is not a box needs the "
			       "fallback or line cells of the CPU engine", s->name);
	e->k.st.K = s->K;
	e->k.st.reach = s->reach;
	memcpy(e->k.st.off, s->off, sizeof(e->k.st.off));
	memset(e->k.shc, 0, sizeof(e->k.shc));
	for (int q = 0; q < s->K; q++) {
		e->k.wd[q] = s->w[q];
		if (s->off[q][2] > 0 && s->off[q][2] < SH_N)
			e->k.shc[s->off[q][2]] += s->w[q];
	}
	e->shell_r = shell_weights(s, e->k.shd);
	/* a leggy stencil: 6M + 1 points along the axes only */
	e->leggy_m = (s->K - 1) % 6 == 0 && s->reach == (s->K - 1) / 6 ? s->reach : 0;
	for (int q = 1; e->leggy_m && q < s->K; q++)
		if ((s->off[q][0] != 0) + (s->off[q][1] != 0) + (s->off[q][2] != 0) != 1)
			e->leggy_m = 0;
	return 0;
}

/* RS_EINPUT when the kernel asked for cannot run here: why, and the kernels that can. */
static int check_kernel(const struct cuda_engine *e, const struct cuda_setup *s,
			struct rs_error *err)
{
	char why[256], valid[512] = "auto";
	size_t n = strlen(valid);

	if (e->kernel == KERNEL_AUTO || !cuda_kernel_why(e, e->kernel, why, sizeof(why)))
		return 0;
	for (int k = KERNEL_AUTO + 1; k < NKERNELS && n < sizeof(valid); k++) {
		char w[256];

		if (!cuda_kernel_why(e, (enum kernel_id)k, w, sizeof(w)))
			n += (size_t)snprintf(valid + n, sizeof(valid) - n, ", %s",
					      kernel_names[k]);
	}
	return rs_fail(err, RS_EINPUT, "kernel %s cannot run %s here: %s (valid here: %s)",
		       kernel_names[e->kernel],
		       s->stencil ? s->stencil->name : "the 7-point stencil", why, valid);
}

/* A carved room's fallback and touch cells, or its line cells, as one bitmap (skip) and as a
 * list (special), for the shell kernels and general_special(). */
static int upload_special(struct cuda_engine *e, const struct cuda_setup *s,
			  struct rs_error *err)
{
	const size_t words = e->plan.cells / 32 + 1;
	unsigned *skip = (unsigned *)malloc(words * sizeof(unsigned));
	long long *list = NULL, n = 0;
	int rc = RS_EDEVICE;

	if (!skip)
		return rs_fail(err, RS_ENOMEM, "out of host memory for the fallback cells");
	for (size_t w = 0; w < words; w++) {
		skip[w] = s->lines ? s->lines[w] : s->fallback[w] | s->touch[w];
		n += __builtin_popcount(skip[w]);
	}
	if (n && !(list = (long long *)malloc(n * sizeof(long long)))) {
		free(skip);
		return rs_fail(err, RS_ENOMEM, "out of host memory for the fallback cells");
	}
	n = 0;
	for (size_t w = 0; w < words; w++)
		for (unsigned b = skip[w]; b; b &= b - 1)
			list[n++] = (long long)(32 * w + __builtin_ctz(b));
	e->nspecial = n;
	if (!CK(cudaMalloc(&e->skip, words * sizeof(unsigned))) &&
	    !CK(cudaMemcpy(e->skip, skip, words * sizeof(unsigned), cudaMemcpyHostToDevice)) &&
	    (!n || (!CK(cudaMalloc(&e->special, n * sizeof(long long))) &&
		    !CK(cudaMemcpy(e->special, list, n * sizeof(long long),
				   cudaMemcpyHostToDevice)))))
		rc = 0;
	free(skip);
	free(list);
	return rc;
}

/*
 * A decomposed run overlaps each step's exchange with the update of the layers between those
 * the neighbours read (overlap_step) where that keeps the bits: on slice-vec, with the halos
 * through NCCL, without branch walls (their update follows the whole step's), and on the
 * rank that adds the source only while that has no sample to add or its cells lie between
 * the edges (source_inside). The exchange's stream has the highest priority, so that NCCL's
 * kernels take multiprocessors as the update's blocks finish. ROOMSIM_OVERLAP=0 turns it
 * off, to compare.
 */
static int overlap_prepare(struct cuda_engine *e, const struct cuda_setup *s,
			   struct rs_error *err)
{
	const char *env = getenv("ROOMSIM_OVERLAP");
	int lo = 0, hi = 0;

	if (!s->exchange || !s->exchange_async || e->kernel != KERNEL_SLICE_VEC || e->branch ||
	    (env && !strcmp(env, "0")))
		return 0;
	if (CK(cudaDeviceGetStreamPriorityRange(&lo, &hi)) ||
	    CK(cudaStreamCreateWithPriority(&e->xstream, cudaStreamNonBlocking, hi)) ||
	    CK(cudaEventCreateWithFlags(&e->xev[0], cudaEventDisableTiming)) ||
	    CK(cudaEventCreateWithFlags(&e->xev[1], cudaEventDisableTiming)))
		return rs_fail(err, RS_EDEVICE, "cannot make the halo exchange's stream");
	e->overlap = 1;
	return 0;
}

struct cuda_engine *cuda_create(const struct cuda_setup *s, struct rs_error *err)
{
	static unsigned long long serial;	/* the engines' kconst.serial */
	const struct vox_plan *p = &s->grid->plan;
	struct cuda_engine *e = (struct cuda_engine *)calloc(1, sizeof(*e));
	size_t free_b = 0, total_b = 0, need = cuda_memory(p, s->precision, s->kernel, 0, 0, 0);
	const int bz = 4;	/* naive3d's blocks are bx x (by / bz) x bz */

	if (!e) {
		rs_fail(err, RS_ENOMEM, "out of memory");
		return NULL;
	}
	cuda_warm_wait();
	e->k.serial = ++serial;
	e->precision = s->precision;
	e->kernel = s->kernel;
	e->grid_receivers = s->grid_receivers;
	e->band_frames = s->band_frames;
	e->block_sources = s->block_sources;
	e->exchange = s->exchange;
	e->exchange_ctx = s->exchange_ctx;
	e->graph_off = s->exchange != NULL;	/* the exchange is not captured */
	/* A decomposed run updates only the layers it owns: the kernels that march columns
	 * leave the received ones (and those beyond, which are never read). */
	e->zown[0] = 0;
	e->zown[1] = p->n[2] - 1;
	if (s->exchange && s->zown[1] > 0) {
		e->zown[0] = s->zown[0];
		e->zown[1] = s->zown[1];
		e->zedge[0] = s->zedge[0];
		e->zedge[1] = s->zedge[1];
	}
	e->dts = s->dts;
	e->nt = s->nt;
	e->split = s->split;
	e->block[0] = s->block[0];
	e->block[1] = s->block[1];
	e->plan = *p;
	e->fcc = p->fcc;
	e->values = p->fcc ? p->cells / 2 : p->cells;
	e->k.dims.nx = p->fcc ? p->n[0] / 2 : p->n[0];	/* the fcc kernels index folded rows */
	e->k.dims.ny = p->n[1];
	e->k.dims.nz = p->n[2];
	e->k.dims.sy = e->k.dims.nx;
	e->k.dims.sz = (long long)e->k.dims.nx * p->n[1];
	e->k.dims.kc = KCHUNK;
	e->k.dims.halo = p->halo;
	for (int d = 0; d < 3; d++)
		e->k.dims.hi[d] = p->halo + p->room[d] - 1;
	e->k.dims.carved = p->fcc && !p->on_nodes;
	if (set_stencil(e, s->stencil, s->grid, s->fallback || s->lines, err))
		goto out_free;
	fill_coefs(&e->k.cf, s->coefs);
	fill_coefs(&e->k.cd, s->coefs);
	if (CK(cudaMemGetInfo(&free_b, &total_b)) ||
	    CK(cudaDeviceGetAttribute(&e->nsm, cudaDevAttrMultiProcessorCount, 0)))
		goto out_free;
	rs_phase("engine: device context");
	need += cuda_branch_bytes(s->branch, p, s->precision);
	if (need > free_b) {
		rs_fail(err, RS_ENOMEM, "the run needs %.2f GiB of device memory, %.2f GiB is free",
			need / 1073741824.0, free_b / 1073741824.0);
		goto out_free;
	}
	if (e->fcc != (s->stencil && s->stencil->fcc)) {
		rs_fail(err, RS_EINTERNAL, "the fcc scheme needs the fcc grid, and only it does");
		goto out_free;
	}
	if (e->fcc) {
		if (CK(cudaMalloc(&e->u[0], e->values * (size_t)s->precision)) ||
		    CK(cudaMalloc(&e->u[1], e->values * (size_t)s->precision)) ||
		    upload_folded(e, s->grid, err) || cuda_branch_upload(e, s->branch, err) ||
		    cuda_cut_upload(e, s->grid->cut, s->cut_l2v, s->cut_sc, s->cut_cb, err) ||
		    cuda_reset(e, err) || check_kernel(e, s, err) ||
		    (e->kernel == KERNEL_AUTO && cuda_choose_kernel(e, err)))
			goto out_free;
		return e;
	}
	e->block3 = dim3(s->block[0], max(1, s->block[1] / bz), bz);
	if (CK(cudaMalloc(&e->u[0], p->cells * (size_t)s->precision)) ||
	    CK(cudaMalloc(&e->u[1], p->cells * (size_t)s->precision)) ||
	    upload_grid(e, s->grid, err))
		goto out_free;
	rs_phase("engine: fields made, grid uploaded");
	if (block_heights(s->grid, e->zown, s->block[0], s->block[1], &e->blockk, &e->grid2, err) ||
	    block_heights(s->grid, e->zown, e->block3.x, e->block3.y, &e->blockk3, &e->grid3,
			  err) ||
	    block_heights(s->grid, e->zown, s->block[0] * 16 / s->precision, s->block[1],
			  &e->blockkv, &e->gridv, err) ||
	    make_textures(e, s->tex_limit, err))
		goto out_free;
	rs_phase("engine: block heights and textures");
	if (cuda_branch_upload(e, s->branch, err) ||
	    cuda_cut_upload(e, s->grid->cut, s->cut_l2v, s->cut_sc, s->cut_cb, err))
		goto out_free;
	rs_phase("engine: branch walls uploaded");
	if (e->general && s->fallback &&
	    (CK(cudaMalloc(&e->fallback, (p->cells / 32 + 1) * sizeof(unsigned))) ||
	     CK(cudaMalloc(&e->touch, (p->cells / 32 + 1) * sizeof(unsigned))) ||
	     CK(cudaMemcpy(e->fallback, s->fallback, (p->cells / 32 + 1) * sizeof(unsigned),
			   cudaMemcpyHostToDevice)) ||
	     CK(cudaMemcpy(e->touch, s->touch, (p->cells / 32 + 1) * sizeof(unsigned),
			   cudaMemcpyHostToDevice)) ||
	     upload_special(e, s, err)))
		goto out_free;
	if (e->general && s->lines &&
	    (CK(cudaMalloc(&e->lines, (p->cells / 32 + 1) * sizeof(unsigned))) ||
	     CK(cudaMemcpy(e->lines, s->lines, (p->cells / 32 + 1) * sizeof(unsigned),
			   cudaMemcpyHostToDevice)) ||
	     upload_special(e, s, err)))
		goto out_free;
	e->grid3.z = (p->n[2] + bz - 1) / bz;
	e->grid2.z = e->gridv.z = (p->n[2] - 2 + KCHUNK - 1) / KCHUNK;
	/* naive3d's per-block heights cover bz slabs: a block is skipped when none is inside */
	if (cuda_reset(e, err))
		goto out_free;
	rs_phase("engine: fields zeroed");
	/* kernel auto weighs diamond only where its tables fit beside everything else, with
	 * room to spare for the receivers and the kernels' trials */
	if (e->kernel == KERNEL_AUTO) {
		if (CK(cudaMemGetInfo(&free_b, &total_b)))
			goto out_free;
		e->dt_nomem = free_b < cuda_diamond_memory(p, 0) + DT_SPARE;
	}
	if ((e->kernel == KERNEL_DIAMOND ||
	     (e->kernel == KERNEL_AUTO && !e->dt_nomem && !e->branch)) &&	/* as auto weighs */
	    dt_prepare(e, s->grid, err))
		goto out_free;
	rs_phase("engine: diamond's tables");
	if (check_kernel(e, s, err) || (e->kernel == KERNEL_AUTO && cuda_choose_kernel(e, err)))
		goto out_free;
	rs_phase("engine: kernel chosen");
	if (overlap_prepare(e, s, err))
		goto out_free;
	e->zfast = e->kernel == KERNEL_DIAMOND;	/* its fields are zero: no transposition */
	return e;
out_free:
	cuda_destroy(e);
	return NULL;
}

void cuda_destroy(struct cuda_engine *e)
{
	if (!e)
		return;
	for (int v = 0; v < e->nsub; v++)
		for (int b = 0; b < 2; b++)
			cudaDestroyTextureObject(e->sub[v].tex[b]);
	cudaFree(e->u[0]);
	cudaFree(e->u[1]);
	cudaFree(e->mask);
	cudaFree(e->cls);
	cudaFree(e->fcc_walls);
	cudaFree(e->fcc_span);
	cudaFree(e->fallback);
	cudaFree(e->touch);
	cudaFree(e->lines);
	cudaFree(e->skip);
	cudaFree(e->special);
	cudaFree(e->colk);
	cudaFree(e->blockk);
	cudaFree(e->blockk3);
	cudaFree(e->blockkv);
	cudaFree(e->src);
	cudaFree(e->inj);
	cudaFree(e->rcell);
	cudaFree(e->rw);
	cudaFree(e->rec);
	cudaFree(e->gcell);
	cudaFree(e->gw);
	cudaFree(e->gbuf);
	graph_drop(e);
	cudaFree(e->ctl);
	cudaFree(e->stage);
	cudaFree(e->fr_sum);
	cudaFree(e->fr_stage);
	cudaFree(e->fr_h);
	dt_free(e);
	cuda_branch_free(e);
	cuda_cut_free(e);
	if (e->xstream)
		cudaStreamDestroy(e->xstream);
	for (int q = 0; q < 2; q++)
		if (e->xev[q])
			cudaEventDestroy(e->xev[q]);
	free(e->h_rcell);
	free(e->h_rw);
	free(e->h_rec);
	free(e);
}

enum kernel_id cuda_kernel(const struct cuda_engine *e)
{
	return e->kernel;
}

const double *cuda_auto_rates(const struct cuda_engine *e)
{
	return e->auto_rate;
}

/* Forget the captured step loops: what they read (source, receivers, grid) changed. */
static void graph_drop(struct cuda_engine *e)
{
	for (int p = 0; p < 2; p++)
		if (e->graph[p]) {
			cudaGraphExecDestroy((cudaGraphExec_t)e->graph[p]);
			e->graph[p] = NULL;
		}
}

void cuda_graph_drop(struct cuda_engine *e)
{
	graph_drop(e);
}

/* 1 when all the source's cells lie in the layers an overlapped step updates while the
 * halos travel (overlap_step), so that it can add the source's sample after them; else its
 * steps are not overlapped. */
static int source_inside(const struct cuda_engine *e)
{
	for (int i = 0; i < e->nsrc_m; i++) {
		const long long k = e->h_src[i] / e->k.dims.sz;

		if (k < e->zown[0] + e->zedge[0] || k > e->zown[1] - e->zedge[1])
			return 0;
	}
	return 1;
}

int cuda_set_source(struct cuda_engine *e, const size_t *cell, int m, const double *inj,
		    size_t nsteps, struct rs_error *err)
{
	long long c[CUDA_SOURCE_NODES];

	if (m < 1 || m > CUDA_SOURCE_NODES)
		return rs_fail(err, RS_EINTERNAL, "a source of %d nodes (1 to %d)", m,
			       CUDA_SOURCE_NODES);
	if (m != 8 && e->kernel == KERNEL_DIAMOND)
		return rs_fail(err, RS_EINPUT, "diamond takes sources of eight nodes, and this one "
			       "has %d (valid: another kernel)", m);
	graph_drop(e);
	for (int i = 0; i < m; i++)
		e->h_src[i] = c[i] = (long long)cell[i];
	e->nsrc_m = m;
	e->dt_dirty = 1;
	cudaFree(e->inj);
	e->inj = NULL;
	if (!e->src && CK(cudaMalloc(&e->src, sizeof(c))))
		return RS_EDEVICE;
	if (CK(cudaMalloc(&e->inj, nsteps * m * sizeof(double))) ||
	    CK(cudaMemcpy(e->src, c, m * sizeof(*c), cudaMemcpyHostToDevice)) ||
	    CK(cudaMemcpy(e->inj, inj, nsteps * m * sizeof(double), cudaMemcpyHostToDevice)))
		return RS_EDEVICE;
	e->inj_steps = nsteps;
	e->src_inside = source_inside(e);
	return 0;
}

int cuda_add_receiver(struct cuda_engine *e, const size_t cell[8], const double w[8],
		      struct rs_error *err)
{
	long long *c = (long long *)realloc(e->h_rcell, sizeof(long long) * 8 * (e->nrec + 1));
	double *ww;

	graph_drop(e);
	if (!c)
		return rs_fail(err, RS_ENOMEM, "out of memory adding a receiver");
	e->h_rcell = c;
	ww = (double *)realloc(e->h_rw, sizeof(double) * 8 * (e->nrec + 1));
	if (!ww)
		return rs_fail(err, RS_ENOMEM, "out of memory adding a receiver");
	e->h_rw = ww;
	for (int i = 0; i < 8; i++) {
		c[8 * e->nrec + i] = (long long)cell[i];
		ww[8 * e->nrec + i] = w[i];
	}
	e->nrec++;
	e->dt_dirty = 1;
	cudaFree(e->rcell);
	cudaFree(e->rw);
	e->rcell = NULL;
	e->rw = NULL;
	if (CK(cudaMalloc(&e->rcell, sizeof(long long) * 8 * e->nrec)) ||
	    CK(cudaMalloc(&e->rw, sizeof(double) * 8 * e->nrec)) ||
	    CK(cudaMemcpy(e->rcell, c, sizeof(long long) * 8 * e->nrec, cudaMemcpyHostToDevice)) ||
	    CK(cudaMemcpy(e->rw, ww, sizeof(double) * 8 * e->nrec, cudaMemcpyHostToDevice)))
		return RS_EDEVICE;
	return e->cap ? cuda_reserve(e, e->cap, err) : 0;
}

int cuda_grid_set(struct cuda_engine *e, const size_t *cell, const double *w,
		  size_t n, size_t window, struct rs_error *err)
{
	long long *c = (long long *)malloc(sizeof(long long) * 8 * n);

	if (e->kernel == KERNEL_DIAMOND) {
		free(c);
		return rs_fail(err, RS_EINPUT, "kernel diamond cannot record a receiver grid (every "
			       "per-step kernel can: see roomsim kernels)");
	}
	graph_drop(e);
	if (!c)
		return rs_fail(err, RS_ENOMEM, "out of memory for the receiver grid");
	for (size_t i = 0; i < 8 * n; i++)
		c[i] = (long long)cell[i];
	cudaFree(e->gcell);
	cudaFree(e->gw);
	cudaFree(e->gbuf);
	e->gcell = NULL;
	e->gw = NULL;
	e->gbuf = NULL;
	e->ngp = 0;
	e->grid_receivers = 1;
	if (CK(cudaMalloc(&e->gcell, sizeof(long long) * 8 * n)) ||
	    CK(cudaMalloc(&e->gw, sizeof(double) * 8 * n)) ||
	    CK(cudaMalloc(&e->gbuf, sizeof(float) * n * window)) ||
	    CK(cudaMemcpy(e->gcell, c, sizeof(long long) * 8 * n, cudaMemcpyHostToDevice)) ||
	    CK(cudaMemcpy(e->gw, w, sizeof(double) * 8 * n, cudaMemcpyHostToDevice))) {
		free(c);
		return rs_fail(err, RS_EDEVICE, "device memory for a receiver grid of %zu points "
			       "and %zu steps", n, window);
	}
	free(c);
	e->ngp = n;
	e->gwin = window;
	e->gbase = e->step + 1;
	e->ctl_fresh = 0;
	return 0;
}

int cuda_grid_take(struct cuda_engine *e, float *out, long rows, struct rs_error *err)
{
	if (rows > 0 && CK(cudaMemcpy(out, e->gbuf, sizeof(float) * e->ngp * (size_t)rows,
				      cudaMemcpyDeviceToHost)))
		return rs_fail(err, RS_EDEVICE, "copying the receiver grid's samples");
	e->gbase += rows;
	e->ctl_fresh = 0;
	return 0;
}

int cuda_reserve(struct cuda_engine *e, size_t nsamples, struct rs_error *err)
{
	const size_t bytes = sizeof(double) * nsamples * (size_t)(e->nrec ? e->nrec : 1);

	graph_drop(e);
	cudaFree(e->rec);
	e->rec = NULL;
	free(e->h_rec);
	e->h_rec = (double *)calloc(1, bytes);
	e->cap = nsamples;
	if (!e->h_rec)
		return rs_fail(err, RS_ENOMEM, "out of memory for receiver samples");
	return CK(cudaMalloc(&e->rec, bytes)) || CK(cudaMemset(e->rec, 0, bytes)) ? RS_EDEVICE : 0;
}

int cuda_reset(struct cuda_engine *e, struct rs_error *err)
{
	const size_t bytes = e->values * (size_t)e->precision;

	e->step = 0;
	e->cur = 0;
	e->gbase = 1;
	e->ctl_fresh = 0;
	graph_drop(e);
	cudaFree(e->inj);
	e->inj = NULL;
	e->inj_steps = 0;
	if (e->h_rec)
		memset(e->h_rec, 0, sizeof(double) * e->cap * (size_t)(e->nrec ? e->nrec : 1));
	if (e->rec &&
	    CK(cudaMemset(e->rec, 0, sizeof(double) * e->cap * (size_t)(e->nrec ? e->nrec : 1))))
		return RS_EDEVICE;
	return CK(cudaMemset(e->u[0], 0, bytes)) || CK(cudaMemset(e->u[1], 0, bytes)) ||
	       cuda_branch_reset(e, err) || CK(cudaDeviceSynchronize()) ? RS_EDEVICE : 0;
}

/* Point r's sample: the sum over its eight cells of weight times value, in that order (the
 * CPU engine's record()), as receivers and grid points alike read it. */
template <typename R>
__device__ __forceinline__ double point_value(const R *u, const long long *cell, const double *w,
					      size_t r)
{
	double y = 0;

	for (int c = 0; c < 8; c++)
		y += w[8 * r + c] * (double)u[cell[8 * r + c]];
	return y;
}

/* After the update of a step: add the source's values, then record every receiver. */
template <typename R>
__global__ void k_inject_record(R *u, const long long *__restrict__ src, const double *inj,
				int m, const long long *__restrict__ rcell,
				const double *__restrict__ rw, double *out, int nrec, size_t cap,
				long long sample)
{
	if (inj && threadIdx.x == 0)	/* in order, as the CPU: a cell may come twice */
		for (int q = 0; q < m; q++)
			u[src[q]] += (R)inj[q];
	__syncthreads();
	for (int r = threadIdx.x; r < nrec; r += blockDim.x) {
		out[(size_t)r * cap + sample] = point_value(u, rcell, rw, (size_t)r);
	}
}


/* More receivers than one block records well (a spatial receiver's ball): k_inject_record
 * only injects, and k_record_many records them, a thread each. */
#define REC_ONE_BLOCK 256

/* Sample `sample` of every receiver (ctl: the sample from ctl[0], as a graph replays it). */
template <typename R>
__global__ void k_record_many(const R *u, const long long *__restrict__ rcell,
			      const double *__restrict__ rw, double *out, int nrec, size_t cap,
			      long long sample, const long long *ctl)
{
	const long long smp = ctl ? ctl[0] : sample;
	const int r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r < nrec && (size_t)smp < cap)
		out[(size_t)r * cap + smp] = point_value(u, rcell, rw, (size_t)r);
}

/* Sample `row` of the receiver grid: each point as k_inject_record reads a receiver. */
template <typename R>
__global__ void k_record_grid(const R *__restrict__ u, const long long *__restrict__ cell,
			      const double *__restrict__ w, float *out, size_t n)
{
	for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n;
	     q += (size_t)gridDim.x * blockDim.x) {
		out[q] = (float)point_value(u, cell, w, q);
	}
}

/* After the update of step e->step + 1 (the newest level, u[cur]): the source (inject),
 * the samples of the receivers, then those of the grid (record). */
static int inject_record(struct cuda_engine *e, int inject, int record, struct rs_error *err)
{
	const double *inj = inject && (size_t)e->step < e->inj_steps
				    ? e->inj + (size_t)e->nsrc_m * e->step : NULL;
	const long long sample = e->step + 1;
	const int nrec = record && (size_t)sample < e->cap ? e->nrec : 0;
	const int one = nrec > REC_ONE_BLOCK ? 0 : nrec;	/* those the one block records */

	if (inj || one) {
		if (e->precision == 4)
			k_inject_record<float><<<1, 128>>>((float *)e->u[e->cur], e->src, inj,
							    e->nsrc_m, e->rcell, e->rw, e->rec, one,
							    e->cap, sample);
		else
			k_inject_record<double><<<1, 128>>>((double *)e->u[e->cur], e->src, inj,
							     e->nsrc_m, e->rcell, e->rw, e->rec, one,
							     e->cap, sample);
		if (CK_LAUNCH())
			return RS_EDEVICE;
	}
	if (nrec > one) {
		if (e->precision == 4)
			k_record_many<float><<<(nrec + 127) / 128, 128>>>(
				(const float *)e->u[e->cur], e->rcell, e->rw, e->rec, nrec, e->cap,
				sample, NULL);
		else
			k_record_many<double><<<(nrec + 127) / 128, 128>>>(
				(const double *)e->u[e->cur], e->rcell, e->rw, e->rec, nrec, e->cap,
				sample, NULL);
		if (CK_LAUNCH())
			return RS_EDEVICE;
	}
	if (e->ngp && record) {
		const size_t row = (size_t)(sample - e->gbase);
		const unsigned blocks = (unsigned)min((e->ngp + 255) / 256, (size_t)65535);

		if (row >= e->gwin)
			return rs_fail(err, RS_EINTERNAL, "the receiver grid's window is full");
		if (e->precision == 4)
			k_record_grid<float><<<blocks, 256>>>((const float *)e->u[e->cur], e->gcell,
							       e->gw, e->gbuf + row * e->ngp, e->ngp);
		else
			k_record_grid<double><<<blocks, 256>>>((const double *)e->u[e->cur],
								e->gcell, e->gw,
								e->gbuf + row * e->ngp, e->ngp);
		if (CK_LAUNCH())
			return RS_EDEVICE;
	}
	return 0;
}

/*
 * The same as k_inject_record, the step read from ctl[0] instead of the launch, as a graph
 * replays the launch as captured; the next step written back for the grid's kernel and the
 * next launch (one block: its threads have read it before thread 0 writes).
 */
template <typename R>
__global__ void k_inject_record_ctl(R *u, const long long *__restrict__ src, const double *inj,
				    int m, long long inj_steps, const long long *__restrict__ rcell,
				    const double *__restrict__ rw, double *out, int nrec, size_t cap,
				    long long *ctl)
{
	const long long step = ctl[0], sample = step + 1;

	if (step < inj_steps && threadIdx.x == 0)	/* in order: a cell may come twice */
		for (int q = 0; q < m; q++)
			u[src[q]] += (R)inj[m * step + q];
	__syncthreads();
	for (int r = threadIdx.x; (size_t)sample < cap && r < nrec; r += blockDim.x) {
		out[(size_t)r * cap + sample] = point_value(u, rcell, rw, (size_t)r);
	}
	__syncthreads();
	if (threadIdx.x == 0)
		ctl[0] = sample;
}

/* k_record_grid's graph form: the window's row from ctl (the sample, and the window base). */
template <typename R>
__global__ void k_record_grid_ctl(const R *__restrict__ u, const long long *__restrict__ cell,
				  const double *__restrict__ w, float *out, size_t n, size_t win,
				  const long long *ctl)
{
	const long long row = ctl[0] - ctl[1];

	if (row < 0 || (size_t)row >= win)
		return;	/* cannot happen: fdtd_advance keeps the window from overrunning */
	out += (size_t)row * n;
	for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n;
	     q += (size_t)gridDim.x * blockDim.x) {
		out[q] = (float)point_value(u, cell, w, q);
	}
}

template <typename R> static void record_ctl(struct cuda_engine *e)
{
	R *u = (R *)e->u[e->cur];
	const int many = e->nrec > REC_ONE_BLOCK;

	k_inject_record_ctl<R><<<1, 128>>>(u, e->src, e->inj, e->nsrc_m, (long long)e->inj_steps,
					   e->rcell, e->rw, e->rec, many ? 0 : e->nrec, e->cap,
					   e->ctl);
	if (many)	/* after the step counter's increment: ctl[0] is this sample */
		k_record_many<R><<<(e->nrec + 127) / 128, 128>>>(u, e->rcell, e->rw, e->rec, e->nrec,
								 e->cap, 0, e->ctl);
	if (e->ngp)
		k_record_grid_ctl<R><<<(unsigned)min((e->ngp + 255) / 256, (size_t)65535), 256>>>(
			u, e->gcell, e->gw, e->gbuf, e->ngp, e->gwin, e->ctl);
}

#define GRAPH_STEPS 32	/* steps per graph launch: a whole cycle of cur, about 1 ms at most */

/* engine.h: a copy to constant memory is not allowed while capturing, and a graph reads
 * the constants as they are when it runs. */
unsigned long long cuda_graph_serial;

/* Capture GRAPH_STEPS steps of the per-step kernel from the current parity of cur; -1 when
 * a launch cannot be captured (the run goes on step by step; graph_why says why, and run
 * reports it). */
static int graph_capture(struct cuda_engine *e)
{
	const int p = e->cur;
	struct rs_error quiet = { 0 }, *err = &quiet;
	cudaGraph_t g = NULL;
	cudaGraphExec_t x = NULL;
	int rc = 0;

	if (!e->ctl && CK(cudaMalloc(&e->ctl, 2 * sizeof(long long))))
		return -1;
	if (CK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeRelaxed)))
		return -1;
	for (int i = 0; i < GRAPH_STEPS && !rc; i++) {
		rc = cuda_step_walls(e, e->kernel, err);
		if (!rc)
			e->precision == 4 ? record_ctl<float>(e) : record_ctl<double>(e);
		if (!rc && e->fr_sum)	/* ctl[0] is the step just made */
			rc = cuda_frames_add(e, 0, e->ctl, err);
	}
	if (cudaStreamEndCapture(cudaStreamPerThread, &g) != cudaSuccess || rc ||
	    cudaGraphInstantiate(&x, g, 0) != cudaSuccess) {
		snprintf(e->graph_why, sizeof(e->graph_why), "%s", quiet.msg[0] ? quiet.msg
			 : cudaGetErrorString(cudaGetLastError()));
		cudaGetLastError();	/* a failed capture is not the run's error */
		if (g)
			cudaGraphDestroy(g);
		e->cur = p;
		return -1;
	}
	cudaGraphDestroy(g);
	e->cur = p;	/* an even number of levels: the captured launches ran none */
	e->graph[p] = x;
	return 0;
}

/* One step launched kernel by kernel (it brings the kernel files' constants to e's). */
/*
 * A decomposed run's step with its exchange overlapped (overlap_prepare): once the step
 * before is done, the layers the neighbours read are updated on the exchange stream and
 * their halos sent and received after them there, while the layers between are updated on
 * the per-thread stream, which then waits for both before the receivers are read. So the
 * edges' small launches and the exchange lie beside the interior's update, not before it.
 * The launches write disjoint layers and read only level a, the exchange writes only
 * received ones (outside zown) and reads only sent ones, and every cell is updated by the
 * same code as in the whole launch, so the bits are those of the step without overlap.
 */
static int overlap_step(struct cuda_engine *e, struct rs_error *err)
{
	const int lo = e->zown[0], hi = e->zown[1], d0 = e->zedge[0], d1 = e->zedge[1];
	const int src = (size_t)e->step < e->inj_steps;
	void *a = e->u[e->cur], *b = e->u[1 - e->cur];

	if (CK(cudaEventRecord(e->xev[0], cudaStreamPerThread)) ||
	    CK(cudaStreamWaitEvent(e->xstream, e->xev[0], 0)) ||
	    (d0 && slice_vec_layers(e, a, b, lo, lo + d0 - 1, e->xstream, err)) ||
	    (d1 && slice_vec_layers(e, a, b, max(lo + d0, hi - d1 + 1), hi, e->xstream, err)))
		return err->code ? err->code : RS_EDEVICE;
	e->cur = 1 - e->cur;
	if (e->exchange(e->exchange_ctx, b, (void *)e->xstream, err) ||
	    slice_vec_layers(e, a, b, lo + d0, hi - d1, NULL, err) ||
	    (src && inject_record(e, 1, 0, err)) ||
	    CK(cudaEventRecord(e->xev[1], e->xstream)) ||
	    CK(cudaStreamWaitEvent(cudaStreamPerThread, e->xev[1], 0)))
		return err->code ? err->code : RS_EDEVICE;
	return inject_record(e, 0, 1, err);
}

static int one_step(struct cuda_engine *e, struct rs_error *err)
{
	const int ov = e->overlap && ((size_t)e->step >= e->inj_steps || e->src_inside);

	if (ov ? overlap_step(e, err)
	       : cuda_step_walls(e, e->kernel, err) || inject_record(e, 1, !e->exchange, err) ||
			 (e->exchange &&
			  (e->exchange(e->exchange_ctx, e->u[e->cur], NULL, err) ||
			   inject_record(e, 0, 1, err))))
		return err->code;
	if (e->fr_sum && cuda_frames_add(e, e->step + 1, NULL, err))
		return err->code;
	e->overlap_steps += ov;
	e->step++;
	e->ctl_fresh = 0;
	cuda_graph_serial = e->k.serial;
	return 0;
}

int cuda_advance(struct cuda_engine *e, long nsteps, volatile sig_atomic_t *stop,
		 struct rs_error *err)
{
	const long first = e->step + 1;
	long i = 0;
	int rc = 0;

	if (e->kernel == KERNEL_AUTO)
		return rs_fail(err, RS_EINTERNAL, "no kernel chosen");
	if (e->kernel == KERNEL_DIAMOND && (rc = dt_advance(e, nsteps, stop, err)) &&
	    rc != RS_EINTR)
		return rc;
#ifndef ROOMSIM_SYNC_CHECK	/* a debug build syncs after each launch: no capture there */
	if (!e->graph_off && getenv("ROOMSIM_NO_GRAPHS") && *getenv("ROOMSIM_NO_GRAPHS"))
		e->graph_off = 1;	/* to compare with the step loop */
	/* Whole graphs first: no launch overhead per kernel. */
	while (e->kernel != KERNEL_DIAMOND && !e->graph_off && nsteps - i >= GRAPH_STEPS) {
		if (stop && *stop) {
			rc = rs_fail(err, RS_EINTR, "interrupted");
			break;
		}
		if (cuda_graph_serial != e->k.serial) {	/* another engine's constants are up */
			if (one_step(e, err))
				return err->code;
			i++;
			continue;
		}
		if (!e->graph[e->cur] && graph_capture(e)) {
			e->graph_off = 1;	/* some launch cannot be captured: step by step */
			break;
		}
		if (!e->ctl_fresh) {	/* after steps one by one, a reset or a take */
			const long long ctl[2] = { e->step, e->gbase };

			if (CK(cudaMemcpy(e->ctl, ctl, sizeof(ctl), cudaMemcpyHostToDevice)))
				return RS_EDEVICE;
			e->ctl_fresh = 1;
		}
		if (CK(cudaGraphLaunch((cudaGraphExec_t)e->graph[e->cur], cudaStreamPerThread)))
			return RS_EDEVICE;
		e->step += GRAPH_STEPS;
		e->graph_steps += GRAPH_STEPS;
		i += GRAPH_STEPS;
	}
#endif
	/* the kernel was checked when the engine was created */
	for (; !rc && i < nsteps && e->kernel != KERNEL_DIAMOND; i++) {
		if (stop && *stop) {
			rc = rs_fail(err, RS_EINTR, "interrupted");
			break;
		}
		if (one_step(e, err))
			return err->code;
	}
	/* Copy back the samples of this chunk, every receiver's in one strided copy: one
	 * synchronisation per call, none per step. */
	if (e->nrec && (size_t)first < e->cap) {
		const size_t last = min((size_t)e->step, e->cap - 1);

		if (last >= (size_t)first &&
		    CK(cudaMemcpy2D(e->h_rec + first, sizeof(double) * e->cap, e->rec + first,
				    sizeof(double) * e->cap, sizeof(double) * (last - first + 1),
				    (size_t)e->nrec, cudaMemcpyDeviceToHost)))
			return RS_EDEVICE;
	}
	return rc ? rc : CK(cudaDeviceSynchronize()) ? RS_EDEVICE : 0;
}

long cuda_graph_steps(const struct cuda_engine *e, const char **why)
{
	*why = e->graph_why;
	return e->graph_steps;
}

long cuda_overlap_steps(const struct cuda_engine *e)
{
	return e->overlap_steps;
}

long cuda_steps(const struct cuda_engine *e)
{
	return e->step;
}

const double *cuda_receiver(const struct cuda_engine *e, int r)
{
	return e->h_rec + (size_t)r * e->cap;
}

