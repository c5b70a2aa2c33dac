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
 * cell (diamond): its nodes bcol[col] to bcol[col + 1] - 1 of bz (their z, rising) and bn
 * (their node).
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
	unsigned *bcol, *bn;
	int *bz;
	void *dev;			/* a BranchDev<R> of these, in device memory */
};

/* What a kernel reads of them, typed (bcol NULL: no branch walls). */
template <typename R> struct BranchDev {
	const unsigned *first, *mat;
	const long long *so, *stride;
	const int *nb, *boff;
	const R *A, *inv, *gam, *bb, *cc, *kk;
	R *state, *W;
	const unsigned *bcol, *bn;
	const int *bz;
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
	b.bn = d->bn;
	b.bz = d->bz;
	return b;
}

/*
 * Node n's update (branch.h) from its u^n and the scheme's p_k: its entries' sums, the
 * increment d, the branches' new state; returns u^(n+1) = u^n + d. The CPU engine's
 * expression, in its order.
 */
template <typename R>
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
			S = S + b.bb[o + q] * (y[q * s] + b.cc[o + q] * w[q * s]);
		acc = acc + b.gam[e] * (S - b.W[e]);
	}
	d = (b.A[n] * (pk - un) - acc) * b.inv[n];
	hd = d * half;
	for (unsigned e = b.first[n]; e < b.first[n + 1]; e++) {
		const int x = (int)b.mat[e], o = b.boff[x], nb = b.nb[x];
		const long long s = b.stride[x];
		R *w = b.state + b.so[e], *y = w + nb * s;
		R sum = 0;

		for (int q = 0; q < nb; q++) {
			const R wq = w[q * s], yq = y[q * s];
			const R wn = b.bb[o + q] * ((yq + hd) + b.cc[o + q] * wq);

			y[q * s] = yq + (d - b.kk[o + q] * ((wn + wq) * half));
			sum = sum + wq;
			w[q * s] = wn;
		}
		b.W[e] = sum;
	}
	return un + d;
}

/* The cell at column col (i + nx j) and z: its update with its branch walls, if it has them
 * (v its scheme update p_k, un its u^n); else v. bp: cuda_branch's dev, so that a caller
 * passes one pointer. */
template <typename R>
__device__ __noinline__ R branch_cell(const BranchDev<R> *bp, long long col, int z, R un, R v)
{
	const BranchDev<R> &b = *bp;
	const unsigned end = b.bcol[col + 1];
	unsigned lo = b.bcol[col], hi = end;

	while (lo < hi) {	/* the first of the column's nodes at z or above */
		const unsigned mid = lo + (hi - lo) / 2;

		if (b.bz[mid] < z)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end && b.bz[lo] == z ? branch_node<R>(b, b.bn[lo], un, v) : v;
}

#endif
