/*
 * general.cu - the larger stencils' kernels after seed 000: general (KernelA, any stencil,
 * the only one with a carved room's fallback and line cells), leggy (KernelB) and
 * leggy-shared(2) (seeds 001 and 004). Each sums in double in the CPU's order
 * (cpu_general.inc), bit for bit.
 */
#include "device.cuh"
#include "../lines.h"

#define LEGGY_MAX_M 8	/* leggy and leggy-shared are built for orders 2M up to 16 */

/*
 * Seed 000's KernelA for cell (i, j, k) inside the room's box: any stencil, offsets and
 * weights from constant memory (every thread of a warp reads the same entry: a broadcast),
 * summed in stencil order as the CPU engine sums them; a carved room's fallback cells take
 * the 7-point rule, its touch cells their mixed stencil and an axial stencil's line cells
 * their legs folded along their lines, as on the CPU.
 */
template <typename R>
__device__ __forceinline__ void general_cell(const R *__restrict__ a, R *__restrict__ b,
					     const unsigned *__restrict__ mask,
					     const uint8_t *__restrict__ cls,
					     const unsigned *__restrict__ fallback,
					     const unsigned *__restrict__ touch,
					     const unsigned *__restrict__ lines, int i, int j, int k)
{
	const KDims &d = k_dims;
	const int K = k_st.K;
	double s = 0;
	const long long n = i + d.sy * j + d.sz * k;
	const R u = __ldg(a + n);

	if (fallback && ((__ldg(fallback + (n >> 5)) >> (n & 31)) & 1u)) {
		/* a carved room's cell near its carved walls: the 7-point rule (cpu_general.inc) */
		const unsigned t = ((__ldg(mask + (n >> 5)) >> (n & 31)) & 1u) ? VOX_AIR : cls[n];

		b[n] = kind_update(kc<R>(), t, u, b[n], __ldg(a + n - 1), __ldg(a + n + 1),
				   __ldg(a + n - d.sy), __ldg(a + n + d.sy), __ldg(a + n - d.sz),
				   __ldg(a + n + d.sz));
		return;
	}
	if (touch && ((__ldg(touch + (n >> 5)) >> (n & 31)) & 1u)) {
		/* its edges to fallback cells become 7-point ones (cpu_general.inc, touch_sum) */
		double c0 = kw(0);

		for (int pass = Diff<R>::value; pass < 2; pass++) {
			if (pass)
				s = Diff<R>::value ? 0.0 : 0 + c0 * (double)u;
			for (int q = 1; q < K; q++) {
				const int *o = k_st.off[q];
				const long long m = kfold(0, i + o[0]) + d.sy * kfold(1, j + o[1]) +
						    d.sz * kfold(2, k + o[2]);
				const bool unit = abs(o[0]) + abs(o[1]) + abs(o[2]) == 1 &&
						  m == n + o[0] + d.sy * o[1] + d.sz * o[2];

				if (!((__ldg(fallback + (m >> 5)) >> (m & 31)) & 1u)) {
					if (pass)
						s += sterm(kw(q), __ldg(a + m), u);
				} else if (!pass) {
					c0 += unit ? kw(q) - 1 : kw(q);
				} else if (unit) {
					s += sterm(1.0, __ldg(a + m), u);
				}
			}
		}
		update_general(b, mask, cls, n, u, s);
		return;
	}
	if (!Diff<R>::value)
		s += kw(0) * (double)u;
	if (lines && ((__ldg(lines + (n >> 5)) >> (n & 31)) & 1u)) {
		/* each leg folded into its line's run of room cells (cpu_general.inc, line_sum) */
		const int at[3] = { i, j, k };
		const long long st[3] = { 1, d.sy, d.sz };
		int lo[3], hi[3];

		for (int x = 0; x < 3; x++)
			line_run(cls, n, st[x], at[x], d.halo, d.hi[x], k_st.reach, &lo[x], &hi[x]);
		for (int q = 1; q < K; q++) {
			const int *o = k_st.off[q];
			const int x = o[0] ? 0 : o[1] ? 1 : 2;
			const int y = line_fold(at[x] + o[x], lo[x], hi[x]);

			s += sterm(kw(q), __ldg(a + n + (long long)(y - at[x]) * st[x]), u);
		}
	} else if (near_wall(i, j, k, k_st.reach)) {
		for (int q = 1; q < K; q++)
			s += sterm(kw(q), __ldg(a + kfold(0, i + k_st.off[q][0]) +
						     d.sy * kfold(1, j + k_st.off[q][1]) +
						     d.sz * kfold(2, k + k_st.off[q][2])), u);
	} else {
		for (int q = 1; q < K; q++)
			s += sterm(kw(q), __ldg(a + n + k_st.off[q][0] + d.sy * k_st.off[q][1] +
						     d.sz * k_st.off[q][2]), u);
	}
	update_general(b, mask, cls, n, u, s);
}

/* KernelA: one thread per cell (blocks of bx x by x 1 over x, y and z). */
template <typename R>
__global__ void k_general(const R *__restrict__ a, R *__restrict__ b,
			  const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls,
			  const unsigned *__restrict__ fallback, const unsigned *__restrict__ touch,
			  const unsigned *__restrict__ lines)
{
	const KDims &d = k_dims;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int k = blockIdx.z;

	if (i < d.halo || i > d.hi[0] || j < d.halo || j > d.hi[1] || k < d.halo || k > d.hi[2])
		return;
	general_cell(a, b, mask, cls, fallback, touch, lines, i, j, k);
}

/* KernelA on a list of cells (a carved room's fallback and touch cells or its line cells,
 * which the shell kernels leave to it), one thread per cell. */
template <typename R>
__global__ void k_general_list(const R *__restrict__ a, R *__restrict__ b,
			       const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls,
			       const unsigned *__restrict__ fallback,
			       const unsigned *__restrict__ touch,
			       const unsigned *__restrict__ lines,
			       const long long *__restrict__ cells, long long ncells)
{
	const KDims &d = k_dims;
	const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;

	if (c >= ncells)
		return;
	const long long n = cells[c], k = n / d.sz, j = n % d.sz / d.sy;

	general_cell(a, b, mask, cls, fallback, touch, lines, (int)(n % d.sy), (int)j, (int)k);
}

int general_special(struct cuda_engine *e, struct rs_error *err)
{
	const unsigned blocks = (unsigned)((e->nspecial + 255) / 256);

	if (!e->nspecial)
		return 0;
	/* the shell kernels call it: this file's constant memory, not theirs, must hold the
	 * engine's dims and stencil */
	if (kconst_sync(e, err))
		return RS_EDEVICE;
	if (e->precision == 4)
		k_general_list<float><<<blocks, 256>>>((const float *)e->u[e->cur],
						       (float *)e->u[1 - e->cur], e->mask, e->cls,
						       e->fallback, e->touch, e->lines, e->special,
						       e->nspecial);
	else
		k_general_list<double><<<blocks, 256>>>((const double *)e->u[e->cur],
							(double *)e->u[1 - e->cur], e->mask, e->cls,
							e->fallback, e->touch, e->lines, e->special,
							e->nspecial);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

/*
 * Seed 000's KernelB: the leggy stencil of order 2M with its offsets computed, not read:
 * centre, then for m = 1..M the x, y and z pairs, -m before +m (the order of stn_leggy()).
 */
template <typename R, int M>
__global__ void k_leggy(const R *__restrict__ a, R *__restrict__ b,
			const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls)
{
	const KDims d = k_dims;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int k = blockIdx.z;

	if (i < d.halo || i > d.hi[0] || j < d.halo || j > d.hi[1] || k < d.halo || k > d.hi[2])
		return;
	const long long n = i + d.sy * j + d.sz * k;
	const bool edge = near_wall(i, j, k, M);
	const R u = __ldg(a + n);
	double s = sfirst(u);

#pragma unroll
	for (int m = 1; m <= M; m++) {
		const double w = kw(6 * m - 5);	/* every point of ring m: one weight */
		long long o[6];

		if (edge) {
			o[0] = kfold(0, i - m) + d.sy * j + d.sz * k;
			o[1] = kfold(0, i + m) + d.sy * j + d.sz * k;
			o[2] = i + d.sy * kfold(1, j - m) + d.sz * k;
			o[3] = i + d.sy * kfold(1, j + m) + d.sz * k;
			o[4] = i + d.sy * j + d.sz * kfold(2, k - m);
			o[5] = i + d.sy * j + d.sz * kfold(2, k + m);
		} else {
			o[0] = n - m;
			o[1] = n + m;
			o[2] = n - m * d.sy;
			o[3] = n + m * d.sy;
			o[4] = n - m * d.sz;
			o[5] = n + m * d.sz;
		}
#pragma unroll
		for (int p = 0; p < 6; p++)
			s += sterm(w, __ldg(a + o[p]), u);
	}
	update_general(b, mask, cls, n, u, s);
}

/*
 * Seeds 001 and 004: the leggy stencil of order 2M with the current x-y slab of a block in
 * shared memory, with a halo of M cells on each side, and the z direction held in a register
 * queue of 2M + 1 values per cell, rolled as the block marches up a chunk of LS_CHUNK slabs.
 * Each thread owns C cells of its column (rows y and y + by ...). Reads past a wall are
 * mirrored when the tile and the queue are filled, and the sum runs in stn_leggy()'s order,
 * so the result equals the CPU engine's bit for bit.
 */
#define LS_CHUNK 64	/* slabs per block: the queue is refilled (2M loads) once per chunk */

/* a at (x, y, z) mirrored into the room; 0 where no cell of the room reads it. */
template <typename R>
__device__ __forceinline__ R mirrored(const R *__restrict__ a, int x, int y, int z, int M)
{
	const KDims &d = k_dims;

	if (x > d.hi[0] + M || y > d.hi[1] + M)
		return R(0);
	return __ldg(a + kfold(0, x) + d.sy * kfold(1, y) + d.sz * kfold(2, z));
}

template <typename R, int M, int C>
__global__ void k_leggy_shared(const R *__restrict__ a, R *__restrict__ b,
			       const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls)
{
	extern __shared__ unsigned char smem[];
	R *tile = reinterpret_cast<R *>(smem);	/* (bx + 2M) x (C by + 2M), row-major */
	const KDims d = k_dims;
	const int bx = blockDim.x, by = blockDim.y, tw = bx + 2 * M;
	const int i = blockIdx.x * bx + threadIdx.x + d.halo;
	const int j0 = blockIdx.y * C * by + d.halo;	/* the block's first row */
	const int k0 = d.halo + blockIdx.z * LS_CHUNK, k1 = min(d.hi[2], k0 + LS_CHUNK - 1);
	double w[M + 1];
	R q[C][2 * M + 1];	/* q[c][M + t]: u^n of cell c at slab k + t */

	if (k0 > k1)	/* uniform over the block */
		return;
#pragma unroll
	for (int m = 0; m <= M; m++)
		w[m] = kw(m ? 6 * m - 5 : 0);
#pragma unroll
	for (int c = 0; c < C; c++)
#pragma unroll
		for (int t = 0; t <= 2 * M; t++)
			q[c][t] = mirrored(a, i, j0 + threadIdx.y + c * by, k0 - M + t, M);
	for (int k = k0; k <= k1; k++) {
		__syncthreads();	/* the previous slab's tile is no longer read */
#pragma unroll
		for (int c = 0; c < C; c++)
			tile[(M + threadIdx.y + c * by) * tw + M + threadIdx.x] = q[c][M];
		for (int t = threadIdx.x; t < M; t += bx)	/* left and right halos */
			for (int row = threadIdx.y; row < C * by; row += by) {
				const int y = j0 + row, x0 = i - threadIdx.x;

				tile[(M + row) * tw + t] = mirrored(a, x0 - M + t, y, k, M);
				tile[(M + row) * tw + M + bx + t] = mirrored(a, x0 + bx + t, y, k, M);
			}
		for (int t = threadIdx.y; t < M; t += by) {	/* bottom and top halos */
			tile[t * tw + M + threadIdx.x] = mirrored(a, i, j0 - M + t, k, M);
			tile[(M + C * by + t) * tw + M + threadIdx.x] =
				mirrored(a, i, j0 + C * by + t, k, M);
		}
		__syncthreads();
#pragma unroll
		for (int c = 0; c < C; c++) {
			const int j = j0 + threadIdx.y + c * by, r = M + threadIdx.y + c * by;
			const int x = M + threadIdx.x;
			const R u = q[c][M];
			double s = sfirst(u);

			if (i > d.hi[0] || j > d.hi[1])
				continue;
#pragma unroll
			for (int m = 1; m <= M; m++) {
				s += sterm(w[m], tile[r * tw + x - m], u);
				s += sterm(w[m], tile[r * tw + x + m], u);
				s += sterm(w[m], tile[(r - m) * tw + x], u);
				s += sterm(w[m], tile[(r + m) * tw + x], u);
				s += sterm(w[m], q[c][M - m], u);
				s += sterm(w[m], q[c][M + m], u);
			}
			update_general(b, mask, cls, i + d.sy * j + d.sz * (long long)k, q[c][M], s);
		}
#pragma unroll
		for (int c = 0; c < C; c++) {
#pragma unroll
			for (int t = 0; t < 2 * M; t++)
				q[c][t] = q[c][t + 1];
			q[c][2 * M] = k < k1 ? mirrored(a, i, j0 + threadIdx.y + c * by, k + M + 1, M)
					     : R(0);
		}
	}
}

/* ---- the launcher ---------------------------------------------------------------------- */

/* KernelB instantiated for orders 2 to 16; -1 for any other M. */
template <typename R>
static int launch_leggy(int M, dim3 g, dim3 blk, const R *a, R *b, const unsigned *mask,
			const uint8_t *cls)
{
	switch (M) {
	case 1: k_leggy<R, 1><<<g, blk>>>(a, b, mask, cls); return 0;
	case 2: k_leggy<R, 2><<<g, blk>>>(a, b, mask, cls); return 0;
	case 3: k_leggy<R, 3><<<g, blk>>>(a, b, mask, cls); return 0;
	case 4: k_leggy<R, 4><<<g, blk>>>(a, b, mask, cls); return 0;
	case 5: k_leggy<R, 5><<<g, blk>>>(a, b, mask, cls); return 0;
	case 6: k_leggy<R, 6><<<g, blk>>>(a, b, mask, cls); return 0;
	case 7: k_leggy<R, 7><<<g, blk>>>(a, b, mask, cls); return 0;
	case 8: k_leggy<R, 8><<<g, blk>>>(a, b, mask, cls); return 0;
	default: return -1;
	}
}

/* The shared-memory leggy kernel of order 2M with C cells per thread; -1 past order 16. */
template <typename R, int C>
static int launch_leggy_shared(const struct cuda_engine *e, int M, dim3 blk, const R *a, R *b)
{
	const int rows = C * blk.y;
	const dim3 g((e->plan.room[0] + blk.x - 1) / blk.x, (e->plan.room[1] + rows - 1) / rows,
		     (e->plan.room[2] + LS_CHUNK - 1) / LS_CHUNK);
	const size_t smem = sizeof(R) * (blk.x + 2 * M) * (rows + 2 * M);

	switch (M) {
	case 2: k_leggy_shared<R, 2, C><<<g, blk, smem>>>(a, b, e->mask, e->cls); return 0;
	case 3: k_leggy_shared<R, 3, C><<<g, blk, smem>>>(a, b, e->mask, e->cls); return 0;
	case 4: k_leggy_shared<R, 4, C><<<g, blk, smem>>>(a, b, e->mask, e->cls); return 0;
	case 5: k_leggy_shared<R, 5, C><<<g, blk, smem>>>(a, b, e->mask, e->cls); return 0;
	case 6: k_leggy_shared<R, 6, C><<<g, blk, smem>>>(a, b, e->mask, e->cls); return 0;
	case 7: k_leggy_shared<R, 7, C><<<g, blk, smem>>>(a, b, e->mask, e->cls); return 0;
	case 8: k_leggy_shared<R, 8, C><<<g, blk, smem>>>(a, b, e->mask, e->cls); return 0;
	default: return -1;
	}
}

template <typename R> static int general_run(struct cuda_engine *e, enum kernel_id kern,
					     struct rs_error *err)
{
	const R *a = (const R *)e->u[e->cur];
	R *b = (R *)e->u[1 - e->cur];
	const dim3 blk(e->block[0], e->block[1]);
	const dim3 g((e->plan.n[0] + blk.x - 1) / blk.x, (e->plan.n[1] + blk.y - 1) / blk.y,
		     e->plan.n[2]);
	int rc = 0;

	switch (kern) {
	case KERNEL_GENERAL:
		k_general<R><<<g, blk>>>(a, b, e->mask, e->cls, e->fallback, e->touch,
					 e->lines);
		break;
	case KERNEL_LEGGY:
		rc = launch_leggy<R>(e->leggy_m, g, blk, a, b, e->mask, e->cls);
		break;
	case KERNEL_LEGGY_SHARED:
		rc = launch_leggy_shared<R, 1>(e, e->leggy_m, blk, a, b);
		break;
	case KERNEL_LEGGY_SHARED2:
		rc = launch_leggy_shared<R, 2>(e, e->leggy_m, blk, a, b);
		break;
	default:
		rc = -1;
	}
	if (rc)
		return rs_fail(err, RS_EINTERNAL, "general.cu has no kernel %s for this stencil",
			       kernel_names[kern]);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

ONE_LEVEL_FAMILY(general, general_run)

int general_check(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len)
{
	if (k != KERNEL_GENERAL && (e->leggy_m < 2 || e->leggy_m > LEGGY_MAX_M))
		return snprintf(why, len, "it runs leggy stencils of order 4 to %d",
				2 * LEGGY_MAX_M), 1;
	return 0;
}

/* The instances whose resources bench reports: leggy of order 4, leggy-shared(2) of order 8
 * (static shared memory only). */
template <typename R> static const void *general_instance(enum kernel_id k)
{
	switch (k) {
	case KERNEL_GENERAL: return (const void *)k_general<R>;
	case KERNEL_LEGGY: return (const void *)k_leggy<R, 2>;
	case KERNEL_LEGGY_SHARED: return (const void *)k_leggy_shared<R, 4, 1>;
	case KERNEL_LEGGY_SHARED2: return (const void *)k_leggy_shared<R, 4, 2>;
	default: return NULL;
	}
}

const void *general_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem)
{
	*smem = 0;
	return e->precision == 4 ? general_instance<float>(k) : general_instance<double>(k);
}
