/*
 * branch.cu - the branch walls on the GPU (solver/branch.h): their lists and state in device
 * memory, and the update after each step, one thread per node, the same expression in the
 * same order as the CPU engine's branch_step(), so both round alike: k_branch_one for the
 * nodes of one entry (branch.h's seg), k_branch for those of several.
 */
#include <limits.h>
#include <stdlib.h>

#include "branch.cuh"

#define BRANCH_THREADS 256

/* The banks of up to 16 branches run unrolled (8 in float64), their constants in shared
 * memory up to 32. */
#define BRANCH_SHARED 32
#define BRANCH_CASE(K) \
	case K: \
		next[c] = branch_one<R, BRANCH_UNROLLED(R, K)>(u[c], next[c], nb, s, bb, cc, kk, \
							       A_, inv_, gam_, w, Wv + n); \
		break;

/*
 * The nodes of one entry, a block's nodes all of one material (its blocks blk[x] on): no
 * entry list to read, the state at the material's first plus the node's rank, and the
 * branches unrolled. (Unrolled, each thread issues all its state loads at once; ptxas then
 * takes up to 128 registers, hence two blocks per multiprocessor.)
 */
template <typename R>
__global__ void __launch_bounds__(BRANCH_THREADS, 2)
	k_branch_one(const R *__restrict__ u, R *__restrict__ next, int nmat,
			     const int *__restrict__ blk, const long long *__restrict__ seg,
			     const long long *__restrict__ cell, const long long *__restrict__ so,
			     const long long *__restrict__ stride, const int *__restrict__ nbs,
			     const int *__restrict__ boff, const R *__restrict__ A,
			     const R *__restrict__ inv, const R *__restrict__ gam, const R *bb,
			     const R *cc, const R *kk, R *__restrict__ st, R *__restrict__ Wv)
{
	const int b = blockIdx.x;
	int lo = 0, hi = nmat - 1;

	while (lo < hi) {	/* the material x with blk[x] <= b < blk[x + 1] */
		const int mid = (lo + hi + 1) / 2;

		if (blk[mid] <= b)
			lo = mid;
		else
			hi = mid - 1;
	}
	const size_t n = seg[lo] + (size_t)(b - blk[lo]) * blockDim.x + threadIdx.x;
	const int o = boff[lo], nb = nbs[lo];
	__shared__ R sh[3][BRANCH_SHARED];

	if (nb <= BRANCH_SHARED) {	/* the material's constants, for every thread */
		for (int q = threadIdx.x; q < nb; q += blockDim.x) {
			sh[0][q] = bb[o + q];
			sh[1][q] = cc[o + q];
			sh[2][q] = kk[o + q];
		}
		__syncthreads();
		bb = sh[0];
		cc = sh[1];
		kk = sh[2];
	} else {
		bb += o;
		cc += o;
		kk += o;
	}
	if (n >= (size_t)seg[lo + 1])
		return;
	const long long c = cell[n], s = stride[lo];
	const R A_ = A[n], inv_ = inv[n], gam_ = gam[n];
	R *const w = st + so[seg[lo]] + (long long)(n - seg[lo]);

	switch (nb) {
		BRANCH_CASE(1) BRANCH_CASE(2) BRANCH_CASE(3) BRANCH_CASE(4) BRANCH_CASE(5)
		BRANCH_CASE(6) BRANCH_CASE(7) BRANCH_CASE(8) BRANCH_CASE(9) BRANCH_CASE(10)
		BRANCH_CASE(11) BRANCH_CASE(12) BRANCH_CASE(13) BRANCH_CASE(14) BRANCH_CASE(15)
		BRANCH_CASE(16)
	default:
		next[c] = branch_one<R, 0>(u[c], next[c], nb, s, bb, cc, kk, A_, inv_, gam_, w,
					   Wv + n);
	}
}
#undef BRANCH_CASE

/* Any node: its entries from the lists (the nodes of several entries, from n0 on). */
template <typename R>
__global__ void k_branch(const R *__restrict__ u, R *__restrict__ next, size_t n0, size_t nodes,
			 const long long *__restrict__ cell, BranchDev<R> b)
{
	const size_t n = n0 + blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (n >= nodes)
		return;
	const long long c = cell[n];

	next[c] = branch_node<R>(b, n, u[c], next[c]);
}

/* n doubles of src rounded to R into a new device array *dst. */
template <typename R>
static int upload_real(void **dst, const double *src, size_t n, struct rs_error *err)
{
	R *h = (R *)malloc((n ? n : 1) * sizeof(R));
	int rc;

	if (!h)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		h[i] = (R)src[i];
	rc = CK(cudaMalloc(dst, (n ? n : 1) * sizeof(R))) ||
	     cuda_upload(*dst, h, n * sizeof(R), err);
	free(h);
	return rc ? RS_EDEVICE : 0;
}

static int upload(void **dst, const void *src, size_t bytes, struct rs_error *err)
{
	return CK(cudaMalloc(dst, bytes ? bytes : 1)) || cuda_upload(*dst, src, bytes, err)
		       ? RS_EDEVICE : 0;
}

template <typename R>
static int upload_all(struct cuda_branch *d, const struct branch_walls *b, struct rs_error *err)
{
	long long *tmp = (long long *)malloc((b->nodes + b->entries + 2 * (size_t)b->nmat + 1) *
					     sizeof(long long));
	int *blk = (int *)malloc(((size_t)b->nmat + 1) * sizeof(int));
	int rc;

	if (!tmp || !blk) {
		free(tmp);
		free(blk);
		return rs_fail(err, RS_ENOMEM, "out of memory");
	}
	blk[0] = 0;
	for (int x = 0; x <= b->nmat; x++) {
		tmp[b->nodes + b->entries + b->nmat + x] = (long long)b->seg[x];
		if (x < b->nmat)
			blk[x + 1] = blk[x] + (int)((b->seg[x + 1] - b->seg[x] + BRANCH_THREADS - 1) /
						    BRANCH_THREADS);
	}
	d->nblk = blk[b->nmat];
	d->multi = b->seg[b->nmat];
	for (size_t n = 0; n < b->nodes; n++)
		tmp[n] = (long long)b->cell[n];
	for (size_t e = 0; e < b->entries; e++)
		tmp[b->nodes + e] = (long long)b->so[e];
	for (int x = 0; x < b->nmat; x++)
		tmp[b->nodes + b->entries + (size_t)x] = (long long)b->stride[x];
	rc = upload((void **)&d->cell, tmp, b->nodes * sizeof(long long), err) ||
	     upload((void **)&d->so, tmp + b->nodes, b->entries * sizeof(long long), err) ||
	     upload((void **)&d->stride, tmp + b->nodes + b->entries,
		    (size_t)b->nmat * sizeof(long long), err) ||
	     upload((void **)&d->seg, tmp + b->nodes + b->entries + b->nmat,
		    ((size_t)b->nmat + 1) * sizeof(long long), err) ||
	     upload((void **)&d->blk, blk, ((size_t)b->nmat + 1) * sizeof(int), err) ||
	     upload((void **)&d->first, b->first, (b->nodes + 1) * sizeof(unsigned), err) ||
	     upload((void **)&d->mat, b->mat, b->entries * sizeof(unsigned), err) ||
	     upload((void **)&d->nb, b->nb, (size_t)b->nmat * sizeof(int), err) ||
	     upload((void **)&d->boff, b->boff, (size_t)b->nmat * sizeof(int), err) ||
	     upload_real<R>(&d->A, b->A, b->nodes, err) ||
	     upload_real<R>(&d->inv, b->inv, b->nodes, err) ||
	     upload_real<R>(&d->gam, b->gam, b->entries, err) ||
	     upload_real<R>(&d->bb, b->bb, (size_t)b->nbranch, err) ||
	     upload_real<R>(&d->cc, b->cc, (size_t)b->nbranch, err) ||
	     upload_real<R>(&d->kk, b->kk, (size_t)b->nbranch, err) ||
	     CK(cudaMalloc(&d->state, b->states * sizeof(R))) ||
	     CK(cudaMalloc(&d->W, b->entries * sizeof(R)));
	free(tmp);
	free(blk);
	return rc ? (err->code ? err->code : RS_EDEVICE) : 0;
}

/* The nodes by grid column, for the diamond kernel (branch.cuh): counts, then starts, then
 * each column's nodes, then each column sorted by z (the nodes are in cell order within each
 * group of branch.h's seg, so a column is a few sorted runs) with its range and ends; and per
 * material the offset of its nodes' state (sto). */
static int upload_columns(struct cuda_branch *d, const struct branch_walls *b,
			  const struct cuda_engine *e, struct rs_error *err)
{
	const size_t nxy = (size_t)e->plan.n[0] * e->plan.n[1];
	unsigned *start;
	int2 *bzn;
	int4 *bcol, *bzc;
	long long *sto;
	int rc = 0;

	if (b->nodes >= INT_MAX)
		return rs_fail(err, RS_ENOMEM, "%zu wall nodes with branches: the diamond kernel's "
			       "column lists hold fewer than 2^31 (valid: another kernel)", b->nodes);
	start = (unsigned *)calloc(nxy + 1, sizeof(unsigned));
	bzn = (int2 *)malloc((b->nodes ? b->nodes : 1) * sizeof(int2));
	bcol = (int4 *)malloc((nxy ? nxy : 1) * sizeof(int4));
	bzc = (int4 *)malloc((nxy ? nxy : 1) * sizeof(int4));
	sto = (long long *)malloc(((size_t)b->nmat + 1) * sizeof(long long));
	if (!start || !bzn || !bcol || !bzc || !sto) {
		free(start);
		free(bzn);
		free(bcol);
		free(bzc);
		free(sto);
		return rs_fail(err, RS_ENOMEM, "out of memory for the branch walls' columns");
	}
	for (size_t n = 0; n < b->nodes; n++)
		start[b->at[n] % nxy + 1]++;
	for (size_t c = 0; c < nxy; c++)
		start[c + 1] += start[c];
	for (size_t n = 0; n < b->nodes; n++) {	/* insertion into the column, by z */
		const size_t c = b->at[n] % nxy;

		bzn[start[c]++] = make_int2((int)(b->at[n] / nxy), (int)(unsigned)n);
	}
	for (size_t c = nxy; c > 0; c--)	/* the counters back to the starts */
		start[c] = start[c - 1];
	start[0] = 0;
	for (size_t c = 0; c < nxy; c++) {	/* each column by z: short, nearly sorted */
		const unsigned lo = start[c], hi = start[c + 1];

		for (unsigned k = lo + 1; k < hi; k++)
			for (unsigned q = k; q > lo && bzn[q - 1].x > bzn[q].x; q--) {
				const int2 t = bzn[q];

				bzn[q] = bzn[q - 1];
				bzn[q - 1] = t;
			}
		bcol[c] = make_int4((int)lo, (int)hi, hi - lo > 1 ? bzn[lo + 1].x : 0, 0);
		bzc[c] = hi > lo ? make_int4(bzn[lo].x, bzn[hi - 1].x, bzn[lo].y, bzn[hi - 1].y)
				 : make_int4(1, 0, 0, 0);	/* no z is in it */
	}
	for (int x = 0; x < b->nmat; x++)	/* a material with no nodes of one entry: unused */
		sto[x] = b->seg[x] < b->entries ? (long long)b->so[b->seg[x]] - (long long)b->seg[x]
						: 0;
	rc = upload((void **)&d->bcol, bcol, nxy * sizeof(int4), err) ||
	     upload((void **)&d->bzn, bzn, b->nodes * sizeof(int2), err) ||
	     upload((void **)&d->bzc, bzc, nxy * sizeof(int4), err) ||
	     upload((void **)&d->sto, sto, ((size_t)b->nmat + 1) * sizeof(long long), err);
	free(start);
	free(bzn);
	free(bcol);
	free(bzc);
	free(sto);
	return rc ? RS_EDEVICE : 0;
}

size_t cuda_branch_columns(const struct vox_plan *p, size_t nodes)
{
	return p->fcc ? 0 : 2 * sizeof(int4) * (size_t)p->n[0] * p->n[1] + nodes * sizeof(int2);
}

size_t cuda_branch_bytes(const struct branch_walls *b, const struct vox_plan *p, int precision)
{
	const size_t m = b ? (size_t)b->nmat : 0, R = (size_t)precision;

	if (!b)
		return 0;
	/* upload_all: cell, so, stride, seg, blk, first, mat, nb and boff; A, inv, gam, the
	 * branches' constants, the state and W; then the columns and sto (not on the fcc grid) */
	return b->nodes * sizeof(long long) + b->entries * sizeof(long long) +
	       (2 * m + 1) * sizeof(long long) + (m + 1) * sizeof(int) +
	       (b->nodes + 1 + b->entries) * sizeof(unsigned) + 2 * m * sizeof(int) +
	       (2 * b->nodes + 2 * b->entries + 3 * (size_t)b->nbranch + b->states) * R +
	       (p->fcc ? 0 : cuda_branch_columns(p, b->nodes) + (m + 1) * sizeof(long long));
}

/* The BranchDev of the engine's branch walls into d->dev, again after the columns are made. */
static int upload_dev(struct cuda_engine *e, struct rs_error *err)
{
	const struct cuda_branch *d = e->branch;
	const BranchDev<float> bf = branch_dev<float>(d);
	const BranchDev<double> bd = branch_dev<double>(d);

	return e->precision == 4 ? CK(cudaMemcpy(d->dev, &bf, sizeof(bf), cudaMemcpyHostToDevice))
				 : CK(cudaMemcpy(d->dev, &bd, sizeof(bd), cudaMemcpyHostToDevice));
}

int cuda_branch_upload(struct cuda_engine *e, const struct branch_walls *b,
		       struct rs_error *err)
{
	struct cuda_branch *d;

	if (!b)
		return 0;
	if (b->precision != e->precision || b->entries > UINT32_MAX ||
	    b->nodes / BRANCH_THREADS + (size_t)b->nmat > INT_MAX)
		return rs_fail(err, RS_EINTERNAL, "branch walls of another precision or too many");
	if (!(d = (struct cuda_branch *)calloc(1, sizeof(*d))))
		return rs_fail(err, RS_ENOMEM, "out of memory");
	e->branch = d;
	d->nodes = b->nodes;
	d->entries = b->entries;
	d->states = b->states;
	d->nmat = b->nmat;
	d->nbranch = b->nbranch;
	e->hbranch = b;
	if (e->precision == 4 ? upload_all<float>(d, b, err) : upload_all<double>(d, b, err))
		return err->code ? err->code : RS_EDEVICE;
	if (!e->fcc && (CK(cudaMalloc(&d->dev, sizeof(BranchDev<double>))) ||
			upload_dev(e, err)))
		return RS_EDEVICE;
	return cuda_branch_reset(e, err);
}

int cuda_branch_columns_make(struct cuda_engine *e, struct rs_error *err)
{
	struct cuda_branch *d = e->branch;

	if (!d || e->fcc || d->bcol)
		return 0;
	return upload_columns(d, e->hbranch, e, err) || upload_dev(e, err) ? RS_EDEVICE : 0;
}

int cuda_branch_reset(struct cuda_engine *e, struct rs_error *err)
{
	const struct cuda_branch *d = e->branch;

	if (!d)
		return 0;
	return CK(cudaMemset(d->state, 0, d->states * (size_t)e->precision)) ||
	       CK(cudaMemset(d->W, 0, d->entries * (size_t)e->precision)) ? RS_EDEVICE : 0;
}

int cuda_branch_load(struct cuda_engine *e, const void *state, const void *W,
		     struct rs_error *err)
{
	const struct cuda_branch *d = e->branch;

	(void)err;
	if (!d || !state || !W)
		return 0;
	return CK(cudaMemcpy(d->state, state, d->states * (size_t)e->precision,
			     cudaMemcpyHostToDevice)) ||
	       CK(cudaMemcpy(d->W, W, d->entries * (size_t)e->precision, cudaMemcpyHostToDevice))
		       ? RS_EDEVICE : 0;
}

int cuda_branch_step(struct cuda_engine *e, struct rs_error *err)
{
	const struct cuda_branch *d = e->branch;
	const unsigned threads = BRANCH_THREADS;
	unsigned blocks;

	if (!d || !d->nodes)
		return 0;
	if (d->nblk && e->precision == 4)
		k_branch_one<float><<<d->nblk, threads>>>(
			(const float *)e->u[e->cur ^ 1], (float *)e->u[e->cur], d->nmat, d->blk,
			d->seg, d->cell, d->so, d->stride, d->nb, d->boff, (const float *)d->A,
			(const float *)d->inv, (const float *)d->gam, (const float *)d->bb,
			(const float *)d->cc, (const float *)d->kk, (float *)d->state, (float *)d->W);
	else if (d->nblk)
		k_branch_one<double><<<d->nblk, threads>>>(
			(const double *)e->u[e->cur ^ 1], (double *)e->u[e->cur], d->nmat, d->blk,
			d->seg, d->cell, d->so, d->stride, d->nb, d->boff, (const double *)d->A,
			(const double *)d->inv, (const double *)d->gam, (const double *)d->bb,
			(const double *)d->cc, (const double *)d->kk, (double *)d->state,
			(double *)d->W);
	if (d->multi == d->nodes)
		return CK_LAUNCH() ? RS_EDEVICE : 0;
	blocks = (unsigned)((d->nodes - d->multi + threads - 1) / threads);
	if (e->precision == 4)
		k_branch<float><<<blocks, threads>>>((const float *)e->u[e->cur ^ 1],
						     (float *)e->u[e->cur], d->multi, d->nodes,
						     d->cell, branch_dev<float>(d));
	else
		k_branch<double><<<blocks, threads>>>((const double *)e->u[e->cur ^ 1],
						      (double *)e->u[e->cur], d->multi, d->nodes,
						      d->cell, branch_dev<double>(d));
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

int cuda_branch_state(struct cuda_engine *e, struct branch_walls *b, struct rs_error *err)
{
	const struct cuda_branch *d = e->branch;

	if (!d || !b)
		return 0;
	return CK(cudaMemcpy(b->state, d->state, d->states * (size_t)e->precision,
			     cudaMemcpyDeviceToHost)) ||
	       CK(cudaMemcpy(b->W, d->W, d->entries * (size_t)e->precision,
			     cudaMemcpyDeviceToHost)) ? RS_EDEVICE : 0;
}

void cuda_branch_free(struct cuda_engine *e)
{
	struct cuda_branch *d = e->branch;

	if (!d)
		return;
	cudaFree(d->cell);
	cudaFree(d->seg);
	cudaFree(d->blk);
	cudaFree(d->dev);
	cudaFree(d->bcol);
	cudaFree(d->bzn);
	cudaFree(d->bzc);
	cudaFree(d->sto);
	cudaFree(d->first);
	cudaFree(d->mat);
	cudaFree(d->so);
	cudaFree(d->stride);
	cudaFree(d->nb);
	cudaFree(d->boff);
	cudaFree(d->A);
	cudaFree(d->inv);
	cudaFree(d->gam);
	cudaFree(d->bb);
	cudaFree(d->cc);
	cudaFree(d->kk);
	cudaFree(d->state);
	cudaFree(d->W);
	free(d);
	e->branch = NULL;
}
