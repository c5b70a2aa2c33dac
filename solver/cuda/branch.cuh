/*
 * branch.cuh - the branch walls on the device (solver/branch.h), as branch.cu keeps them and
 * the kernels that update them read them: the update of one node, in the CPU engine's order
 * of operations, and the diamond kernel's way from a cell to its node.
 */
#ifndef SOLVER_CUDA_BRANCH_CUH
#define SOLVER_CUDA_BRANCH_CUH

#include <stddef.h>

#include "engine.h"

/*
 * Device copies of a struct branch_walls: lists as they are, constants in the run's R; the
 * blocks of k_branch_one (material x's nodes of one entry take blocks blk[x] to
 * blk[x + 1] - 1); and per grid column i + nx j, for kernels that meet the nodes cell by
 * cell (diamond): its nodes, bzn[bcol[col].x] to bzn[bcol[col].y - 1], each its z (x,
 * rising) and its node (y), read together; bcol[col].z, the z of its second node; and its
 * ends, bzc[col]: the lowest node's z and the highest's (x > y: no nodes), and their nodes
 * (z, w). A floor's or a ceiling's node is found in the ends, a wall's (a run of nodes at
 * every z) at the place its z gives in the column's list, and only others by a search.
 */
struct cuda_branch {
	size_t nodes, entries, states;
	int nmat, nbranch;
	long long *seg;
	int *blk, nblk;
	size_t multi;			/* the first node with several entries */
	long long *cell;
	unsigned *first, *mat;
	long long *so, *stride;
	int *nb, *boff;
	void *A, *inv, *gam;		/* R per node, node, entry */
	void *bb, *cc, *kk;		/* R per branch */
	void *state, *W;		/* R */
	int4 *bcol;			/* per column: first, end, second's z */
	int2 *bzn;
	int4 *bzc;			/* per column: its lowest and highest nodes */
	long long *sto;			/* per material x: so[seg[x]] - seg[x] */
	void *dev;			/* a BranchDev<R> of these, in device memory */
};

/* What a kernel reads of them, typed (bcol NULL: no branch walls). */
template <typename R> struct BranchDev {
	const unsigned *first, *mat;
	const long long *so, *stride, *seg;
	const int *nb, *boff;
	int nmat;
	const R *A, *inv, *gam, *bb, *cc, *kk;
	R *state, *W;
	const int4 *bcol;
	const int2 *bzn;
	const int4 *bzc;
	const long long *sto;
};

template <typename R> static inline BranchDev<R> branch_dev(const struct cuda_branch *d)
{
	BranchDev<R> b = {};

	if (!d)
		return b;
	b.first = d->first;
	b.mat = d->mat;
	b.so = d->so;
	b.stride = d->stride;
	b.seg = d->seg;
	b.nmat = d->nmat;
	b.nb = d->nb;
	b.boff = d->boff;
	b.A = (const R *)d->A;
	b.inv = (const R *)d->inv;
	b.gam = (const R *)d->gam;
	b.bb = (const R *)d->bb;
	b.cc = (const R *)d->cc;
	b.kk = (const R *)d->kk;
	b.state = (R *)d->state;
	b.W = (R *)d->W;
	b.bcol = d->bcol;
	b.bzn = d->bzn;
	b.bzc = d->bzc;
	b.sto = d->sto;
	return b;
}

/* A load of branch state: through L1, or past it (CG) where other multiprocessors rewrite
 * the state within the launch (diamond's towers run a few levels apart). */
template <bool CG, typename T> __device__ __forceinline__ T branch_ld(const T *p)
{
	return CG ? __ldcg(p) : *p;
}

/*
 * Node n's update (branch.h) from its u^n and the scheme's p_k: its entries' sums, the
 * increment d, the branches' new state; returns u^(n+1) = u^n + d. The CPU engine's
 * expression, in its order.
 */
template <typename R, bool CG = false>
__device__ __forceinline__ R branch_node(const BranchDev<R> &b, size_t n, R un, R pk)
{
	const R half = (R)0.5;
	R acc = 0, d, hd;

	for (unsigned e = b.first[n]; e < b.first[n + 1]; e++) {
		const int x = (int)b.mat[e], o = b.boff[x], nb = b.nb[x];
		const long long s = b.stride[x];
		const R *w = b.state + b.so[e], *y = w + nb * s;
		R S = 0;

		for (int q = 0; q < nb; q++)
			S = S + b.bb[o + q] * (branch_ld<CG>(y + q * s) +
					       b.cc[o + q] * branch_ld<CG>(w + q * s));
		acc = acc + b.gam[e] * (S - branch_ld<CG>(b.W + e));
	}
	d = (b.A[n] * (pk - un) - acc) * b.inv[n];
	hd = d * half;
	for (unsigned e = b.first[n]; e < b.first[n + 1]; e++) {
		const int x = (int)b.mat[e], o = b.boff[x], nb = b.nb[x];
		const long long s = b.stride[x];
		R *w = b.state + b.so[e], *y = w + nb * s;
		R sum = 0;

		for (int q = 0; q < nb; q++) {
			const R wq = branch_ld<CG>(w + q * s), yq = branch_ld<CG>(y + q * s);
			const R wn = b.bb[o + q] * ((yq + hd) + b.cc[o + q] * wq);

			y[q * s] = yq + (d - b.kk[o + q] * ((wn + wq) * half));
			sum = sum + wq;
			w[q * s] = wn;
		}
		b.W[e] = sum;
	}
	return un + d;
}

/*
 * The update of a node of one entry, whose material has NB branches (NB = 0: any number nb,
 * read twice), their state at st with stride s and their sum W at *Wp: the branches' values
 * held in registers between the two sums, so that their loads are issued at once; the same
 * expressions in the same order as branch_node. Returns u^(n+1).
 */
template <typename R, int NB, bool CG = false>
__device__ __forceinline__ R branch_one(R un, R pk, int nb, long long s, const R *bb,
					const R *cc, const R *kk, R A, R inv, R gam,
					R *__restrict__ st, R *__restrict__ Wp)
{
	constexpr int K = NB ? NB : 1;
	const R half = (R)0.5, W = branch_ld<CG>(Wp);
	R *w = st, *y = st + (long long)(NB ? NB : nb) * s;
	R wr[K], yr[K], S = 0, acc = 0, sum = 0, d, hd;

	if (NB) {
		const R *pw = w, *py = y;

#pragma unroll
		for (int q = 0; q < K; q++, pw += s, py += s) {
			wr[q] = branch_ld<CG>(pw);
			yr[q] = branch_ld<CG>(py);
		}
#pragma unroll
		for (int q = 0; q < K; q++)
			S = S + bb[q] * (yr[q] + cc[q] * wr[q]);
	} else {
		for (int q = 0; q < nb; q++)
			S = S + bb[q] * (branch_ld<CG>(y + q * s) + cc[q] * branch_ld<CG>(w + q * s));
	}
	acc = acc + gam * (S - W);
	d = (A * (pk - un) - acc) * inv;
	hd = d * half;
	if (NB) {
		R *pw = w, *py = y;

#pragma unroll
		for (int q = 0; q < K; q++, pw += s, py += s) {
			const R wn = bb[q] * ((yr[q] + hd) + cc[q] * wr[q]);

			*py = yr[q] + (d - kk[q] * ((wn + wr[q]) * half));
			sum = sum + wr[q];
			*pw = wn;
		}
	} else {
		for (int q = 0; q < nb; q++) {
			const R wq = branch_ld<CG>(w + q * s), yq = branch_ld<CG>(y + q * s);
			const R wn = bb[q] * ((yq + hd) + cc[q] * wq);

			y[q * s] = yq + (d - kk[q] * ((wn + wq) * half));
			sum = sum + wq;
			w[q * s] = wn;
		}
	}
	*Wp = sum;
	return un + d;
}

/* The banks whose branches run unrolled in branch_one: up to 16 in float32, 8 in float64 (K,
 * or 0 for the loop). */
#define BRANCH_UNROLLED(R, K) (sizeof(R) == 4 || (K) <= 8 ? (K) : 0)

#define BRANCH_NONE 0xffffffffu	/* branch_node_of: the cell has no node */

/* The node of the cell at z of the column whose ends are c (bzc) and list r (bcol), or
 * BRANCH_NONE: a floor's or a ceiling's in the column's ends, a wall's at the place its z
 * gives in the column's list, and only others by a search. */
template <typename R>
__device__ __forceinline__ unsigned branch_node_in(const BranchDev<R> &b, int4 c, int4 r, int z)
{
	if (z < c.x || z > c.y)
		return BRANCH_NONE;
	if (z == c.x)
		return (unsigned)c.z;
	if (z == c.y)
		return (unsigned)c.w;
	/* between the ends: where a run from the second node would hold z, else search */
	const int at = r.x + 1 + (z - r.z);
	int2 zn = make_int2(-1, 0);

	if (at > r.x && at < r.y - 1)
		zn = b.bzn[at];
	if (zn.x != z) {
		unsigned lo = (unsigned)r.x + 1, hi = (unsigned)r.y - 1;

		while (lo < hi) {	/* the first node at z or above */
			const unsigned mid = lo + (hi - lo) / 2;

			if (b.bzn[mid].x < z)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= (unsigned)r.y - 1 || b.bzn[lo].x != z)
			return BRANCH_NONE;
		zn = b.bzn[lo];
	}
	return (unsigned)zn.y;
}

/* The same, the column's ends (c) and list (r) read here. */
template <typename R>
__device__ __forceinline__ unsigned branch_node_of(const BranchDev<R> &b, long long col, int z)
{
	return branch_node_in(b, b.bzc[col], b.bcol[col], z);
}

/* Node n's update (un its u^n, v its scheme update p_k); returns u^(n+1). bp: cuda_branch's
 * dev, so that a caller passes one pointer. */
template <typename R, bool CG = false>
__device__ __noinline__ R branch_at(const BranchDev<R> *bp, unsigned n, R un, R v)
{
	const BranchDev<R> &b = *bp;

	if (n >= (unsigned long long)b.seg[b.nmat])	/* several entries */
		return branch_node<R, CG>(b, n, un, v);
	/*
	 * One entry, nearly every node: entry n, its material x the one whose nodes seg[x] to
	 * seg[x + 1] - 1 hold it, its state at that material's first plus its rank (branch.h),
	 * so that its loads wait only for the small per-material tables, not for the node's
	 * entry and material; banks of up to 8 branches unrolled (the towers' register budget,
	 * 64 a thread at dts 1, holds no more).
	 */
	int x = 0, xh = b.nmat - 1;

	while (x < xh) {
		const int mid = (x + xh + 1) / 2;

		if ((unsigned long long)b.seg[mid] <= n)
			x = mid;
		else
			xh = mid - 1;
	}
	const int o = b.boff[x], nb = b.nb[x];
	const long long s = b.stride[x];
	const R A = b.A[n], inv = b.inv[n], gam = b.gam[n];
	R *const st = b.state + b.sto[x] + (long long)n, *const Wp = b.W + n;

#define BRANCH_CELL(K) \
	case K: \
		return branch_one<R, BRANCH_UNROLLED(R, K), CG>(un, v, nb, s, b.bb + o, \
								b.cc + o, b.kk + o, A, inv, gam, \
								st, Wp);
	switch (nb) {
		BRANCH_CELL(1) BRANCH_CELL(2) BRANCH_CELL(3) BRANCH_CELL(4) BRANCH_CELL(5)
		BRANCH_CELL(6) BRANCH_CELL(7) BRANCH_CELL(8)
	default:
		return branch_one<R, 0, CG>(un, v, nb, s, b.bb + o, b.cc + o, b.kk + o, A, inv,
					    gam, st, Wp);
	}
#undef BRANCH_CELL
}

/* The cell at column col and z: its update with its branch walls, if it has them (v its
 * scheme update p_k, un its u^n); else v. */
template <typename R>
__device__ __forceinline__ R branch_cell(const BranchDev<R> *bp, long long col, int z, R un, R v)
{
	const unsigned n = branch_node_of(*bp, col, z);

	return n == BRANCH_NONE ? v : branch_at<R>(bp, n, un, v);
}

#endif
