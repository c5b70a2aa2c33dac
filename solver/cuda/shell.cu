/*
 * shell.cu - the shell kernels (docs/kernels.md): shell-shared for stencils of whole shells
 * of reach 1 to 3, shell-vec for reach 1; and the shell weights of a stencil.
 */
#include "device.cuh"

/*
 * Stencils of full shells (compact, box, interpolated; docs/kernels.md, "shell kernels"):
 * each slab is read around a cell as plane sums: for every in-plane shell (p, q), p >= q, the
 * sum of the slab's points at (+-p, +-q) and (+-q, +-p) around the cell. A 3-D shell
 * (q1, q2, q3) is the union over its distinct components c of the plane shell of the other two
 * components at the slabs k + c and k - c, so the whole stencil costs (2r + 1)^2 reads per cell
 * and slab, r the reach, instead of one per point (25, not 125, for box (2, 2, 2)). The plane
 * sums are weighted and added in double, as the CPU engine's sum (cpu_general.inc) is, in
 * another order: S differs from the CPU's in its last bits.
 */
#define SH_CHUNK 64	/* slabs per block: 2r slabs are summed again at each chunk's start */
#define SV_CHUNK 40	/* shell-vec: more blocks fill the chip better (docs/performance.md) */

__device__ __forceinline__ double kshw(int q1, int q2, int q3)
{
	return k_shd[q1][q2][q3];
}

/* Index of the in-plane shell (p, q), p >= q >= 0. */
__host__ __device__ constexpr int plane_shell(int p, int q)
{
	return p * (p + 1) / 2 + q;
}

/* The weight per point of the shell holding (a, b, c), components in any order. */
__device__ __forceinline__ double kshw_of(int a, int b, int c)
{
	const int q1 = max(a, max(b, c)), q3 = min(a, min(b, c));

	return kshw(q1, a + b + c - q1 - q3, q3);
}

/*
 * A cell column's stencil sums rolling up z. A slab's plane sums (type R: in float32 float,
 * as each holds only neighbours of one sign of weight, so nothing cancels in them) weigh the
 * same for the cells at the slabs s + dz and s - dz, so each slab is reduced at once, in
 * double, to one partial sum per distance |dz| = 0 .. r, and acc[m] gathers them for the cell
 * at slab s - r + m, s the slab pushed next. What stays in registers is 2r partial sums and
 * the column's own values, not the plane sums of 2r + 1 slabs, and each plane sum is weighted
 * once per distance instead of once per shell (docs/kernels.md).
 *
 * The sum is exactly 0 for a uniform field (docs/physics.md, "A uniform field stays
 * uniform"). Each plane sum adds 4 or 8 values in pairs, so it is exactly 4 u or 8 u then.
 *  - float32: the plain weighted sum, the centre's term added by the caller: every product
 *    and partial sum is exact in double for a uniform float field (stencil.c, quantise).
 *  - float64: each plane sum less 4 or 8 times the slab's own column value u_s, and for the
 *    cell at slab t the column differences sum over d of C(d) ((u_t+d - u_t) + (u_t-d - u_t)),
 *    C(d) the stencil's weight at distance d (k_shc): the same sum of w (u_k - u_t). The
 *    column then keeps 2r + 1 values, not r + 1.
 */
template <int RR, typename R> struct Column {
	static constexpr int NU = Diff<R>::value ? 2 * RR + 1 : RR + 1;
	double acc[2 * RR];
	R u[NU];	/* the column's own values at the slabs s + 1 - NU .. s, after the push of s */
};

/*
 * Push the next slab s (at(dx, dy) reads it around the cell) and return the sum, without the
 * centre's own term, of every stencil point of the cell at slab s - r, now complete (its own
 * value is u[0] in float32, u[r] in float64).
 */
template <int RR, typename R, typename At>
__device__ __forceinline__ double column_push(Column<RR, R> &g, At at)
{
	constexpr int D = Diff<R>::value, NU = Column<RR, R>::NU;
	double c[RR + 1];	/* the slab's weighted sum for the cells at distance d */
	const R us = at(0, 0);

#pragma unroll
	for (int m = 0; m < NU - 1; m++)
		g.u[m] = g.u[m + 1];
	g.u[NU - 1] = us;
#pragma unroll
	for (int p = 0; p <= RR; p++)
#pragma unroll
		for (int q = 0; q <= p; q++) {
			R v;

			if (p == 0) {
				v = us;
			} else if (q == 0) {
				v = (at(-p, 0) + at(p, 0)) + (at(0, -p) + at(0, p));
			} else {
				v = (at(-p, -q) + at(p, -q)) + (at(-p, q) + at(p, q));
				if (q != p)
					v = v + ((at(-q, -p) + at(q, -p)) + (at(-q, p) + at(q, p)));
			}
			if (D && p > 0)	/* less its points' count times u_s: 4 or 8, exact */
				v = v - R(q == 0 || q == p ? 4 : 8) * us;
#pragma unroll
			for (int d = 0; d <= RR; d++)
				if (p == 0)	/* the first term; the cell's own is apart */
					c[d] = d && !D ? kshw_of(d, 0, 0) * (double)v : 0.0;
				else	/* one rounding (the build contracts nothing itself) */
					c[d] = __fma_rn(kshw_of(d, p, q), (double)v, c[d]);
		}
	double s = g.acc[0] + c[RR];

#pragma unroll
	for (int m = 0; m < 2 * RR - 1; m++) {
		const int d = RR - 1 - m;	/* from s to the slab of acc[m + 1] */

		g.acc[m] = g.acc[m + 1] + c[d < 0 ? -d : d];
	}
	g.acc[2 * RR - 1] = c[RR];
	if (D) {
		const double ut = (double)g.u[RR];

#pragma unroll
		for (int d = 1; d <= RR; d++)
			s = __fma_rn(k_shc[d],
				     ((double)g.u[RR + d] - ut) + ((double)g.u[RR - d] - ut), s);
	}
	return s;
}

/*
 * `shell-shared`: one thread per column of a bx x by block, marching a chunk of SH_CHUNK
 * slabs, the block's slab in shared memory with a halo of r (two tiles, alternating, so that
 * one barrier per slab suffices), and the cell's sums rolling up z in a Column. The tile and
 * the plane sums have the field's type, the weighted sums are double. Thread t fills the tile
 * elements t + e bx by, e < L (the instance is built for L = 2, 4 or 6, the fewest that cover
 * the tile: shell_loads), the same in every slab, so their in-slab offsets (mirrored at the x
 * and y walls) are computed once and the loads need no condition: an element that no updated
 * cell reads loads cell 0. Each thread fetches its share of slab z + 1 into registers before
 * it sums slab z, so the loads are in flight during the arithmetic.
 */
#define SH_LOADS 6	/* tile elements per thread at most: (bx + 2r)(by + 2r) <= 6 bx by */

#define SH_THREADS 256	/* threads per block at most: the register budget below assumes it */

/*
 * Blocks per SM the register budget aims at (measured on the H100, docs/performance.md): in
 * float64, 5 blocks at reach 1 took the 27-point stencil from 61 to 72 Gvox/s and 2 at reach 2
 * the 125-point one from 25 to 42. In float32 any bound was slower or equal, with double plane
 * sums and again with float ones (125 points: 71.4 Gvox/s unbounded, 68.8 with 4 blocks of 256
 * threads, which spills): none there.
 */
template <typename R>
__host__ __device__ constexpr int shell_blocks(int r)
{
	return sizeof(R) == sizeof(float) ? 1 : r == 1 ? 5 : r == 2 ? 2 : 1;
}

template <typename R, int RR, int L>
__global__ void __launch_bounds__(SH_THREADS, shell_blocks<R>(RR))
k_shell_shared(const R *__restrict__ a, R *__restrict__ b, const unsigned *__restrict__ mask,
	       const uint8_t *__restrict__ cls, const unsigned *__restrict__ skip)
{
	extern __shared__ unsigned char smem[];
	R *tile = reinterpret_cast<R *>(smem);	/* two of (bx + 2r) x (by + 2r), alternating */
	const KDims d = k_dims;
	const int bx = blockDim.x, by = blockDim.y, tw = bx + 2 * RR, nt = bx * by;
	const int x0 = blockIdx.x * bx + d.halo, j0 = blockIdx.y * by + d.halo;
	const int i = x0 + threadIdx.x, j = j0 + threadIdx.y, tid = threadIdx.y * bx + threadIdx.x;
	const int k0 = d.halo + blockIdx.z * SH_CHUNK, k1 = min(d.hi[2], k0 + SH_CHUNK - 1);
	const int cells = tw * (by + 2 * RR);
	const R *own = tile + (RR + threadIdx.y) * tw + RR + threadIdx.x;
	R *const fill = tile + tid;	/* the thread's first tile element */
	int buf = 0;		/* the tile this slab goes into: 0 or cells */
	unsigned fills = 0;	/* bit e: element e is in the tile */
	int off[L];		/* in-slab offset of element e */
	R next[L];
	Column<RR, R> g = {};

#pragma unroll
	for (int e = 0; e < L; e++) {
		const int n = tid + e * nt, ty = n / tw, x = x0 - RR + n - ty * tw, y = j0 - RR + ty;

		fills |= (n < cells) << e;
		off[e] = n >= cells || x > d.hi[0] + RR || y > d.hi[1] + RR
				 ? 0 : kfold(0, x) + (int)d.sy * kfold(1, y);
	}
	const bool mine = i <= d.hi[0] && j <= d.hi[1];	/* the thread updates a cell */
	R old = 0;		/* u^(n-1) of the cell to update next, and its class */
	unsigned cl = VOX_PAD;
	/* slab z + 1 into registers, and what the update of slab z + 1 - r needs */
	auto fetch = [&](int z) {
		const R *slab = a + d.sz * kfold(2, z);
		const long long n = i + d.sy * j + d.sz * (long long)(z - RR);

#pragma unroll
		for (int e = 0; e < L; e++)
			next[e] = __ldg(slab + off[e]);
		if (mine && z - RR >= k0) {
			old = b[n];
			cl = ((__ldg(mask + (n >> 5)) >> (n & 31)) & 1u) ? VOX_AIR : __ldg(cls + n);
			if (skip && ((__ldg(skip + (n >> 5)) >> (n & 31)) & 1u))
				cl = VOX_PAD;	/* general_special's cell */
		}
	};
	fetch(k0 - RR);
	for (int z = k0 - RR; z <= k1 + RR; z++) {
		const R prev = old;
		const unsigned t = cl;

		/* one barrier per slab: this tile was last read two slabs ago, before the barrier
		 * of the slab in between */
#pragma unroll
		for (int e = 0; e < L; e++)
			if (fills & 1u << e)
				fill[buf + e * nt] = next[e];
		__syncthreads();
		if (z < k1 + RR)
			fetch(z + 1);
		const double sum =
			column_push<RR>(g, [&](int dx, int dy) { return own[buf + dx + tw * dy]; });

		buf = cells - buf;
		if (z >= k0 + RR && mine && t != VOX_PAD) {
			const R u = g.u[Diff<R>::value ? RR : 0];
			const double s = Diff<R>::value ? sum : kshw(0, 0, 0) * (double)u + sum;

			/* update_general's expression, with u^(n-1) and the class fetched early */
			b[i + d.sy * j + d.sz * (long long)(z - RR)] =
				general_update(kc<R>(), t, u, prev, (R)s);
		}
	}
}

/* Tile elements per thread of the instance for bx x by blocks at reach r; 0: none fits. */
static int shell_loads(int bx, int by, int r)
{
	const int need = ((bx + 2 * r) * (by + 2 * r) + bx * by - 1) / (bx * by);

	return need <= 2 ? 2 : need <= 4 ? 4 : need <= SH_LOADS ? SH_LOADS : 0;
}

/* The instance of reach r and l tile elements per thread; NULL where there is none. */
template <typename R, int RR>
static const void *shell_kernel_r(int l)
{
	return l == 2 ? (const void *)k_shell_shared<R, RR, 2>
	       : l == 4 ? (const void *)k_shell_shared<R, RR, 4>
	       : l == SH_LOADS ? (const void *)k_shell_shared<R, RR, SH_LOADS> : NULL;
}

template <typename R>
static const void *shell_kernel(int r, int l)
{
	return r == 1 ? shell_kernel_r<R, 1>(l) : r == 2 ? shell_kernel_r<R, 2>(l)
	       : r == 3 ? shell_kernel_r<R, 3>(l) : NULL;
}

/*
 * `shell-vec`: stencils of whole shells of reach 1 (the 27-point family: compact R <= 3, box
 * (1, 1, 1), every interpolated variant) with slice-vec's front (docs/kernels.md): thread g of
 * a row owns the cell pair [2 g, 2 g + 2) and reads the rows y - 1, y and y + 1 of each slab
 * as single 8-byte (float) or 16-byte (double) loads (pairs ran at 116 Gvox/s in float32,
 * four cells per thread at 110: fewer registers), mirrored at the y and z walls by folding
 * the row and slab indices. It takes its x neighbours from the next lanes by warp shuffles
 * (one extra load at each end of a warp; at the x walls a cell's outside neighbour is itself,
 * the mirror of reach 1) and forms each slab's two plane sums (1, 0) and (1, 1) in type A
 * (float in float32: four neighbours each, added in pairs). The sums are exactly 0 for a
 * uniform field (docs/physics.md, "A uniform field stays uniform"):
 *  - float32: the shells' float sums (1, 0, 0) and (1, 1, 0) get 2 u and 4 u added, so that
 *    they hold 8 and 16 values and are exact, and the centre's weight 2 w1 + 4 w2 less; with
 *    the weights rounded for it (stencil.c), every product and partial sum in double is then
 *    exact: two fused multiply-adds more than the plain sums.
 *  - float64: each shell's sum less its point count times the centre is weighted in double.
 */
template <typename R, typename VT, typename T>
__device__ __forceinline__ void row_sides(const R *__restrict__ row, const T &v, int i0,
					  unsigned lane, R &left, R &right)
{
	const int V = VT::N;
	const KDims &d = k_dims;

	left = __shfl_up_sync(0xffffffffu, elem<R>(const_cast<T &>(v), V - 1), 1);
	right = __shfl_down_sync(0xffffffffu, elem<R>(const_cast<T &>(v), 0), 1);
	if (lane == 0)
		left = i0 > 0 ? __ldg(row + i0 - 1) : R(0);
	if (lane == 31)
		right = i0 + V < d.nx ? __ldg(row + i0 + V) : R(0);
}

template <typename R, typename A>
__device__ __forceinline__ void shell_vec(const R *__restrict__ a, R *__restrict__ b,
					  const unsigned *__restrict__ mask,
					  const uint8_t *__restrict__ cls,
					  const unsigned *__restrict__ skip, int chunk)
{
	typedef Vec8<R> VT;
	typedef typename VT::T T;
	const int V = VT::N;
	const KDims d = k_dims;
	const KCoefs<R> &c = kc<R>();
	const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
	const int j = blockIdx.y * blockDim.y + threadIdx.y + d.halo;
	const int k0 = d.halo + blockIdx.z * chunk, k1 = min(d.hi[2], k0 + chunk - 1);
	const unsigned lane = threadIdx.x & 31;
	const bool in = i0 < d.nx;
	const T zero = {};
	constexpr bool D = Diff<R>::value;
	const double w1 = kshw(1, 0, 0), w2 = kshw(1, 1, 0), w3 = kshw(1, 1, 1);
	/* float32: the centre's weight less the 2 u and 4 u added to two shells (below), exact */
	const double w0 = kshw(0, 0, 0) - 2 * w1 - 4 * w2;
	const long long rm = d.sy * kfold(1, j - 1), rc = d.sy * j, rp = d.sy * kfold(1, j + 1);
	R t00[V][3];		/* per cell: centre, then plane sums (1, 0) and (1, 1), slabs -1..1 */
	A t10[V][3], t11[V][3];
	T ym, yc, yp, old = zero;
	unsigned word = 0, sword = 0;	/* the air bits and skip bits of the cells updated */

	if (j > d.hi[1])	/* uniform over each warp: blocks are whole warps in x */
		return;
	{
		const long long s0 = d.sz * (long long)kfold(2, k0 - 1) + i0;

		ym = in ? __ldg((const T *)(a + s0 + rm)) : zero;
		yc = in ? __ldg((const T *)(a + s0 + rc)) : zero;
		yp = in ? __ldg((const T *)(a + s0 + rp)) : zero;
	}
	for (int z = k0 - 1; z <= k1 + 1; z++) {
		const long long sl = d.sz * (long long)kfold(2, z);
		const long long sn = d.sz * (long long)kfold(2, min(z + 1, k1 + 1));
		const long long n = i0 + rc + d.sz * (long long)(z - 1);	/* the cell updated */
		T nm = zero, nc = zero, np = zero, nold = zero;
		unsigned nword = 0, nsword = 0;
		R lm, rm_, lc, rc_, lp, rp_;

		/* the next slab's rows, and the next update's u^(n-1) and air bits, ahead of use */
		if (in && z < k1 + 1) {
			nm = __ldg((const T *)(a + sn + i0 + rm));
			nc = __ldg((const T *)(a + sn + i0 + rc));
			np = __ldg((const T *)(a + sn + i0 + rp));
		}
		if (in && z >= k0 && z <= k1) {
			nold = *(const T *)(b + n + d.sz);
			nword = __ldg(mask + ((n + d.sz) >> 5));
			if (skip)
				nsword = __ldg(skip + ((n + d.sz) >> 5));
		}
		row_sides<R, VT>(a + sl + rm, ym, i0, lane, lm, rm_);
		row_sides<R, VT>(a + sl + rc, yc, i0, lane, lc, rc_);
		row_sides<R, VT>(a + sl + rp, yp, i0, lane, lp, rp_);
#pragma unroll
		for (int q = 0; q < V; q++) {
			const int i = i0 + q;
			/* x - 1 and x + 1 of each row; at the x walls the mirror is the cell itself */
			const bool wl = i == d.halo, wr = i == d.hi[0];
			const R cm = wl ? elem<R>(yc, q) : q ? elem<R>(yc, q - 1) : lc;
			const R cp = wr ? elem<R>(yc, q) : q < V - 1 ? elem<R>(yc, q + 1) : rc_;
			const R mm = wl ? elem<R>(ym, q) : q ? elem<R>(ym, q - 1) : lm;
			const R mp = wr ? elem<R>(ym, q) : q < V - 1 ? elem<R>(ym, q + 1) : rm_;
			const R pm = wl ? elem<R>(yp, q) : q ? elem<R>(yp, q - 1) : lp;
			const R pp = wr ? elem<R>(yp, q) : q < V - 1 ? elem<R>(yp, q + 1) : rp_;

			t00[q][0] = t00[q][1];
			t00[q][1] = t00[q][2];
			t00[q][2] = elem<R>(yc, q);
			t10[q][0] = t10[q][1];
			t10[q][1] = t10[q][2];
			t10[q][2] = ((A)cm + (A)cp) + ((A)elem<R>(ym, q) + (A)elem<R>(yp, q));
			t11[q][0] = t11[q][1];
			t11[q][1] = t11[q][2];
			t11[q][2] = ((A)mm + (A)mp) + ((A)pm + (A)pp);
		}
		if (z >= k0 + 1 && in) {
			T out = old;

#pragma unroll
			for (int q = 0; q < V; q++) {
				const int i = i0 + q;
				const R u = t00[q][1];
				double sum;

				if (i < d.halo || i > d.hi[0])
					continue;
				if (!D) {
					/* the shells' sums with 2 u and 4 u added, so that each holds 8
					 * or 16 values and is exact for a uniform field (the pairs and
					 * the plane sums add exactly), weighted with the centre's less
					 * that: the sum of products, exact too (stencil.c, quantise) */
					const R s6 = fma(R(2), u, t00[q][2] + t00[q][0]) + t10[q][1];
					const R s12 = (t10[q][2] + t10[q][0]) + fma(R(4), u, t11[q][1]);

					sum = w0 * (double)u;
					sum = __fma_rn(w1, (double)s6, sum);
					sum = __fma_rn(w2, (double)s12, sum);
					sum = __fma_rn(w3, (double)(t11[q][2] + t11[q][0]), sum);
				} else {
					/* each shell, (1,0,0), (1,1,0) and (1,1,1), less its points'
					 * count times the centre: exactly 0 for a uniform field (the
					 * pair and the plane sums add exactly, and 6 u and 12 u =
					 * 2 (6 u) round as their sums do; 2 u6 and 8 u are exact, so
					 * one fused multiply-add subtracts each), then weighted and
					 * added, each in one rounding (a weight of 0 adds 0) */
					const A u6 = A(6) * u;
					const A e1 = (((A)t00[q][2] + (A)t00[q][0]) + t10[q][1]) - u6;
					const A e2 = fma(A(-2), u6, (t10[q][2] + t10[q][0]) + t11[q][1]);
					const A e3 = fma(A(-8), u, t11[q][2] + t11[q][0]);

					sum = w1 * (double)e1;
					sum = __fma_rn(w2, (double)e2, sum);
					sum = __fma_rn(w3, (double)e3, sum);
				}
				{
					const unsigned t = ((word >> ((n + q) & 31)) & 1u) ? VOX_AIR
											 : cls[n + q];

					/* a skipped cell keeps u^(n-1) for general_special */
					if (t != VOX_PAD && !((sword >> ((n + q) & 31)) & 1u))
						elem<R>(out, q) = inc_update(c, t, u, elem<R>(old, q),
									     (R)sum);
				}
			}
			*(T *)(b + n) = out;
		}
		ym = nm;
		yc = nc;
		yp = np;
		old = nold;
		word = nword;
		sword = nsword;
	}
}

/* Four blocks of SV_THREADS threads per SM (64 registers, none spilled): 152 Gvox/s on the
 * H100 where the 66 registers the compiler takes unbounded ran 137 (docs/performance.md). */
#define SV_THREADS 256	/* threads per block at most of shell-vec in float32 */
__global__ void __launch_bounds__(SV_THREADS, 4)
k_shell_vec32(const float *__restrict__ a, float *__restrict__ b, const unsigned *__restrict__ mask,
	      const uint8_t *__restrict__ cls, const unsigned *__restrict__ skip, int chunk)
{
	shell_vec<float, float>(a, b, mask, cls, skip, chunk);
}

__global__ void k_shell_vec64(const double *__restrict__ a, double *__restrict__ b,
			      const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls,
			      const unsigned *__restrict__ skip, int chunk)
{
	shell_vec<double, double>(a, b, mask, cls, skip, chunk);
}

static void shell_vec_launch(dim3 g, dim3 blk, const float *a, float *b, const unsigned *mask,
			     const uint8_t *cls, const unsigned *skip, int chunk)
{
	k_shell_vec32<<<g, blk>>>(a, b, mask, cls, skip, chunk);
}

static void shell_vec_launch(dim3 g, dim3 blk, const double *a, double *b,
			     const unsigned *mask, const uint8_t *cls, const unsigned *skip,
			     int chunk)
{
	k_shell_vec64<<<g, blk>>>(a, b, mask, cls, skip, chunk);
}

/* ---- the launcher ---------------------------------------------------------------------- */

/* Whether the shell kernel can run reach r with the engine's blocks and grid. */
static bool shell_fits(const struct cuda_engine *e, int r)
{
	const int bx = e->block[0], by = e->block[1];

	return r >= 1 && r <= SH_MAX_REACH && bx * by <= SH_THREADS && shell_loads(bx, by, r) &&
	       (long long)e->plan.n[0] * e->plan.n[1] <= INT_MAX;	/* in-slab offsets are ints */
}

/* The shell kernel's instance for the engine's precision and blocks at reach r. */
static const void *shell_instance(const struct cuda_engine *e, int r)
{
	const int l = shell_loads(e->block[0], e->block[1], r);

	return e->precision == 4 ? shell_kernel<float>(r, l) : shell_kernel<double>(r, l);
}

template <typename R> static int shell_run(struct cuda_engine *e, enum kernel_id kern,
					   struct rs_error *err)
{
	const R *a = (const R *)e->u[e->cur];
	R *b = (R *)e->u[1 - e->cur];
	const dim3 blk(e->block[0], e->block[1]);

	if (kern == KERNEL_SHELL_VEC) {
		const int span = (int)blk.x * Vec8<R>::N;
		/* chunks of at most SV_CHUNK slabs, as equal as they can be */
		const int nchunk = (e->plan.room[2] + SV_CHUNK - 1) / SV_CHUNK;
		const int chunk = (e->plan.room[2] + nchunk - 1) / nchunk;
		const dim3 g((e->plan.n[0] + span - 1) / span, (e->plan.room[1] + blk.y - 1) / blk.y,
			     (e->plan.room[2] + chunk - 1) / chunk);

		shell_vec_launch(g, blk, a, b, e->mask, e->cls, e->skip, chunk);
	} else {
		const int r = e->shell_r;
		const dim3 g((e->plan.room[0] + blk.x - 1) / blk.x,
			     (e->plan.room[1] + blk.y - 1) / blk.y,
			     (e->plan.room[2] + SH_CHUNK - 1) / SH_CHUNK);
		const size_t smem = 2 * sizeof(R) * (blk.x + 2 * r) * (blk.y + 2 * r);
		const unsigned *mask = e->mask, *skip = e->skip;
		const uint8_t *cls = e->cls;
		void *args[] = { &a, &b, &mask, &cls, &skip };

		/* CK_LAUNCH sees its error */
		(void)cudaLaunchKernel(shell_instance(e, r), g, blk, args, smem, 0);
	}
	/* a carved room: its fallback and touch cells, which the kernel left, as general does */
	return CK_LAUNCH() || general_special(e, err) ? RS_EDEVICE : 0;
}

ONE_LEVEL_FAMILY(shell, shell_run)

int shell_check(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len)
{
	if (k == KERNEL_SHELL_VEC && e->precision == 4 && e->block[0] * e->block[1] > SV_THREADS)
		return snprintf(why, len, "it runs float32 with blocks of at most %d threads, not "
				"%d x %d", SV_THREADS, e->block[0], e->block[1]), 1;
	if (k == KERNEL_SHELL_SHARED && !shell_fits(e, e->shell_r))
		return snprintf(why, len, "it runs blocks of at most %d threads with (x + 2 reach)"
				"(y + 2 reach) <= %d x y, not %d x %d at reach %d", SH_THREADS,
				SH_LOADS, e->block[0], e->block[1], e->shell_r), 1;
	return 0;
}

const void *shell_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem)
{
	*smem = 0;
	if (k == KERNEL_SHELL_VEC)
		return e->precision == 4 ? (const void *)k_shell_vec32 : (const void *)k_shell_vec64;
	return shell_instance(e, e->shell_r ? e->shell_r : 1);
}

/*
 * The weight per point of each shell (|l| sorted) of a stencil for the shell kernels, and its
 * reach; 0 when the stencil reaches past SH_MAX_REACH, or when a shell is incomplete or its
 * points differ in weight.
 */
int shell_weights(const struct stn_stencil *s, double wd[SH_N][SH_N][SH_N])
{
	int count[SH_N][SH_N][SH_N] = { { { 0 } } };

	memset(wd, 0, sizeof(double) * SH_N * SH_N * SH_N);
	for (int k = 0; k < s->K; k++) {
		int q[3] = { abs(s->off[k][0]), abs(s->off[k][1]), abs(s->off[k][2]) };

		for (int x = 0; x < 2; x++)	/* sort descending */
			for (int y = 0; y < 2 - x; y++)
				if (q[y] < q[y + 1]) {
					const int t = q[y];

					q[y] = q[y + 1];
					q[y + 1] = t;
				}
		if (q[0] > SH_MAX_REACH ||
		    (count[q[0]][q[1]][q[2]] && wd[q[0]][q[1]][q[2]] != s->w[k]))
			return 0;
		wd[q[0]][q[1]][q[2]] = s->w[k];
		count[q[0]][q[1]][q[2]]++;
	}
	for (int x = 0; x < SH_N; x++)
		for (int y = 0; y <= x; y++)
			for (int z = 0; z <= y; z++) {
				/* |P(q)|: distinct orderings times the signs of non-zeros */
				const int perms = x == y && y == z ? 1 : x == y || y == z ? 3 : 6;
				const int full = perms << ((x > 0) + (y > 0) + (z > 0));

				if (count[x][y][z] && count[x][y][z] != full)
					return 0;
			}
	return s->reach >= 1 && s->reach <= SH_MAX_REACH ? s->reach : 0;
}

