/*
 * diamond_towers.cuh - the DiamondTorre temporal-blocking kernel (seed 002 sections 4-6) of the
 * leggy stencils, and what the 7-point towers of diamond7.cuh share with it; included by
 * diamond.cu, whose host side launches them.
 *
 * The x-y plane is tiled by diamonds of half-size N = M DTS (M the stencil's reach): in the
 * rotated coordinates u = x + y, v = x - y a tile is a square of 2N by 2N, so it holds 2 N^2
 * columns. A tower is a tile followed through nt time levels, moving M cells in +x per level:
 * the intersection of a tile's influence cone with the dependence cone of a tile nt levels up
 * (seed 002 figure 5). A tower reads only what the towers to its right (+x) have finished, and
 * the towers of one row (same x, y a multiple of 2N apart) are independent, so a stage - one
 * row - is one launch, one block per tower, and stages sweep from +x to -x (seed 002 section
 * 6, figures 8 and 9). Within a block each thread owns one z cell of every column of the
 * tile: the tile's two levels live in its registers, x and y neighbours are registers, z
 * neighbours come through shared memory (two barriers per level). Per level a tower loads the
 * leading edge of the window its stencil reads and stores the trailing 2M columns of the tile,
 * the only cells no later level of the tower overwrites; the top two levels are stored whole.
 * docs/kernels.md ("diamond") draws it; docs/performance.md predicts and measures it.
 *
 * The fields are laid out z fastest, cell (x, y, z) at z + nz (x + nx y), so that the threads
 * of a warp read consecutive words. Level n0 + L of a sweep lives in lev[L & 1]. Walls: a cell
 * is fast (air, no source or receiver) or slow (a boundary kind, or a probe cell), kept as
 * one bit per tile column per thread and shifted with the tile. Slow cells take the engine's
 * full update, then that of their branch walls (band materials: branch.cuh, the node found
 * through its column's list, the state read and written in memory at every level), then add
 * the source and record receivers at the level they reach. Leggy
 * stencils (M > 1) mirror their reads at the walls of a box room as the CPU engine does: z by
 * folding the shared-memory index, x and y by loading the window's cells beyond a wall from
 * their mirror images (a tower near a wall stores its whole tile at every level, so that the
 * images it computed are in memory when it reads them back).
 */

#ifndef SOLVER_CUDA_DIAMOND_TOWERS_CUH
#define SOLVER_CUDA_DIAMOND_TOWERS_CUH

#include "branch.cuh"
#include "device.cuh"

#define DT7_MAX_WIN 90		/* k_dt7's window at most: 2 N + 1 rows of 2 N + 2, N <= 4 */

__host__ __device__ constexpr int dt_abs(int a)
{
	return a < 0 ? -a : a;
}

/* a / b rounded down, for b > 0. */
__host__ __device__ constexpr int dt_fdiv(int a, int b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Whether column (x, y) is in the tile of half-size N centred between x = 0 and x = 1. */
__host__ __device__ constexpr bool dt_in_d(int N, int x, int y)
{
	return dt_abs(y) <= N - 1 && x >= -(N - 1 - dt_abs(y)) && x <= N - dt_abs(y);
}

/* Whether (x, y) is in the window: the tile and what its cross stencil of reach M reads. */
__host__ __device__ constexpr bool dt_in_w(int M, int N, int x, int y)
{
	bool in = dt_in_d(N, x, y);

	for (int m = 1; m <= M; m++)
		in = in || dt_in_d(N, x - m, y) || dt_in_d(N, x + m, y) || dt_in_d(N, x, y - m) ||
		     dt_in_d(N, x, y + m);
	return in;
}

__host__ __device__ constexpr int dt_window(int M, int N)
{
	int n = 0;

	for (int y = -(N - 1) - M; y <= N - 1 + M; y++)
		for (int x = -(N - 1) - M; x <= N + M; x++)
			n += dt_in_w(M, N, x, y);
	return n;
}

/* The bit of column (x, y) in a thread's masks: rows of 2N bits, so that a shift by M moves
 * every column M cells along x. */
__host__ __device__ constexpr int dt_bit(int N, int x, int y)
{
	return (x + N - 1) + 2 * N * (y + N - 1);
}

/* The column's slot in the z exchange: its rank in the tile, row by row. */
__host__ __device__ constexpr int dt_slot(int N, int x, int y)
{
	int n = 0;

	for (int yy = -(N - 1); yy <= N - 1; yy++)
		for (int xx = -(N - 1); xx <= N; xx++)
			if (dt_in_d(N, xx, yy) && (yy < y || (yy == y && xx < x)))
				n++;
	return n;
}

/* The tile's columns that were in the tile one level before (their bits shift, not load). */
__host__ __device__ constexpr unsigned long long dt_keep(int M, int N)
{
	unsigned long long k = 0;

	for (int y = -(N - 1); y <= N - 1; y++)
		for (int x = -(N - 1); x <= N; x++)
			if (dt_in_d(N, x, y) && dt_in_d(N, x + M, y))
				k |= 1ull << dt_bit(N, x, y);
	return k;
}

/*
 * Threads per block at most, which caps the registers per thread at 65536 / threads: each
 * tile size gets enough for its window's two levels (docs/kernels.md lists the choices). The
 * order-6 and order-8 windows (72 and 128 columns) do not fit in registers and live in local
 * memory.
 */
__host__ __device__ constexpr int dt_shape_threads(int bytes, int M, int DTS)
{
	return bytes == 4 ? (M == 1 ? (DTS == 1 ? 1024 : DTS <= 3 ? 512 : 448)
				    : M == 2 && DTS == 1 ? 512 : 256)
			  : (M == 1 ? (DTS == 1 ? 512 : DTS == 2 ? 384 : 256) : 256);
}

template <typename R, int M, int DTS> struct DtShape {
	static constexpr int threads = dt_shape_threads(sizeof(R), M, DTS);
};

template <typename R> struct DtArgs {
	R *lev[2];		/* level n0 + L of the sweep is in lev[L & 1] */
	const uint8_t *cls;	/* class bytes, z fastest */
	const int2 *probez;	/* per column: first and last z of a source or receiver cell */
	const long long *src;	/* the source's 8 cells (z-fastest index) */
	const double *inj;	/* 8 values per level from level 1 on; NULL: none */
	int ninj;		/* levels inj covers */
	const long long *probe;	/* the receivers' cells, 8 per receiver (z-fastest index) */
	double *pval;		/* pval[q * pstride + L - 1]: the value of probe cell q at level L */
	int nprobe, pstride;
	int s, t0;		/* the stage and its first tower */
	int nlev;		/* levels of the sweep */
	int zlo, zhi;		/* z range of the room's cells */
	const int2 *xr;		/* per row y, the x range of its room columns (x > y: none) */
	/* k_dt7's schedule: tickets i ntw + j run tower tlo[s & 1] + j of stage s_hi - i */
	unsigned long long *flags;	/* per ticket: epoch << 32 | the levels it has finished */
	int *ticket;		/* the next ticket, 0 at the launch */
	unsigned epoch;
	int pub;		/* a tower publishes its levels every pub (0: at its end only) */
	int s_hi, ntw, ntow;	/* the first stage, tickets per stage, tickets */
	int tlo[2], thi[2];	/* the towers of even and odd stages */
	/* k_dt7's offsets of column (x, y) of the window, at [(y + N) (2 N + 2) + x + N], from
	 * the tile's centre: of a cell in bytes (ro) and in cells (eo), of a column in bytes of
	 * the probe ranges (po). Kernel parameters, so that an address is one add. */
	long long ro[DT7_MAX_WIN], eo[DT7_MAX_WIN], po[DT7_MAX_WIN];
	const BranchDev<R> *br;	/* the branch walls (branch.cuh; NULL: none) */
};

/* u at column (X, Y) and z, or 0 off the grid; leggy stencils fold it into a box room. */
template <typename R, int M>
__device__ __forceinline__ R dt_load(const R *a, int X, int Y, int z, bool live)
{
	const KDims &d = k_dims;

	if (M > 1) {
		if (X < d.halo - M || X > d.hi[0] + M || Y < d.halo - M || Y > d.hi[1] + M)
			return R(0);	/* read by no room cell */
		X = kfold(0, X);
		Y = kfold(1, Y);
	}
	if (!live || X < 0 || X >= d.nx || Y < 0 || Y >= d.ny)
		return R(0);
	return a[z + (long long)d.nz * (X + (long long)d.nx * Y)];
}

/* The class byte of column (X, Y) at z and the column's probe range; padding off the grid. */
template <typename R>
__device__ __forceinline__ void dt_class(const DtArgs<R> &g, int X, int Y, int z, bool live,
					 int &cb, int2 &pz)
{
	const KDims &d = k_dims;

	cb = VOX_PAD;
	pz = make_int2(INT_MAX, INT_MIN);
	if (!live || X < 0 || X >= d.nx || Y < 0 || Y >= d.ny)
		return;
	cb = g.cls[z + (long long)d.nz * (X + (long long)d.nx * Y)];
	pz = g.probez[X + d.nx * Y];
}

/* The room, air and probe bits of a column from its class byte and probe range. */
__device__ __forceinline__ void dt_class_bits(int cb, int2 pz, int z, unsigned long long bit,
					      unsigned long long &room, unsigned long long &fast,
					      unsigned long long &prob)
{
	const bool p = z >= pz.x && z <= pz.y;

	if (cb != VOX_PAD)
		room |= bit;
	if (cb == VOX_AIR && !p)
		fast |= bit;
	if (cb != VOX_PAD && p)
		prob |= bit;
}

/* The room and fast bits of the cell at column (X, Y) and z (k_diamond). */
template <typename R>
__device__ __forceinline__ void dt_bits(const DtArgs<R> &g, int X, int Y, int z, bool live,
					unsigned long long bit, unsigned long long &room,
					unsigned long long &fast)
{
	unsigned long long prob = 0;
	int cb;
	int2 pz;

	dt_class(g, X, Y, z, live, cb, pz);
	dt_class_bits(cb, pz, z, bit, room, fast, prob);
}

/*
 * A slow cell of a leggy stencil: the full update of its kind (update_general()'s expression,
 * S already rounded to R), then the source and the receivers at level L, in the order of
 * k_inject_record.
 */
template <typename R>
__device__ __noinline__ R dt_slow(const DtArgs<R> &g, long long n, int col, int z, int L, R u,
				  R s, R old)
{
	const KCoefs<R> &c = kc<R>();
	const unsigned t = g.cls[n];
	const int2 pz = g.probez[col];
	R v;

	if (t == VOX_PAD)
		return old;
	v = general_update(c, t, u, old, s);
	if (g.br && t != VOX_AIR)	/* its branch walls, if any, before the probes */
		v = branch_cell<R>(g.br, col, z, u, v);
	if (z < pz.x || z > pz.y)
		return v;
	if (g.inj && L <= g.ninj)
		for (int q = 0; q < 8; q++)
			if (g.src[q] == n)
				v += (R)g.inj[8 * (L - 1) + q];
	for (int q = 0; q < g.nprobe; q++)
		if (g.probe[q] == n)
			g.pval[(size_t)q * g.pstride + L - 1] = (double)v;
	return v;
}

/*
 * What the next level's window needs from memory: level L on its leading edge, finished by
 * the towers to the right, so it can be fetched before this level is computed (its latency
 * hidden behind the level's work); and the bits of the columns entering the tile. NEAR: a
 * leggy tower by a wall, whose cells beyond it are fetched as images after the level (some
 * are the tower's own cells of this level).
 */
template <typename R, int M, int N, bool NEAR>
__device__ __forceinline__ void dt_fetch(const DtArgs<R> &g, R (&T)[2 * N - 1 + 2 * M][2 * N + 2 * M],
					 const R *lev, int Xn, int Y0, int z, bool live,
					 unsigned long long &room, unsigned long long &fast)
{
	constexpr int O = N - 1 + M, SX = 2 * N + 2 * M, SY = 2 * N - 1 + 2 * M;
	const KDims &d = k_dims;

#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			const int x = ix - O, y = iy - O;

			if (!dt_in_w(M, N, x, y))
				continue;
			if ((NEAR && (Xn + x < d.halo || Xn + x > d.hi[0] || Y0 + y < d.halo ||
				      Y0 + y > d.hi[1])) || !dt_in_d(N, x + M, y))
				T[iy][ix] = dt_load<R, M>(lev, Xn + x, Y0 + y, z, live);
			if (dt_in_d(N, x, y) && !dt_in_d(N, x + M, y))
				dt_bits(g, Xn + x, Y0 + y, z, live, 1ull << dt_bit(N, x, y), room, fast);
		}
}

/*
 * The next level's window from the fetched edge T and the level just computed (Q), and the
 * level before on the tile (from the old window); the bits shift along x, the fetched bits
 * (nroom, nfast) join them.
 */
template <typename R, int M, int N, bool NEAR>
__device__ __forceinline__ void dt_shift(R (&P)[2 * N - 1 + 2 * M][2 * N + 2 * M],
					 R (&Q)[2 * N - 1 + 2 * M][2 * N + 2 * M],
					 const R (&T)[2 * N - 1 + 2 * M][2 * N + 2 * M], int Xn, int Y0,
					 unsigned long long &room, unsigned long long &fast,
					 unsigned long long nroom, unsigned long long nfast)
{
	constexpr int O = N - 1 + M, SX = 2 * N + 2 * M, SY = 2 * N - 1 + 2 * M;
	constexpr unsigned long long KEEP = dt_keep(M, N);
	const KDims &d = k_dims;
	R Pn[SY][SX], Qn[SY][SX];

#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			const int x = ix - O, y = iy - O;

			if (!dt_in_w(M, N, x, y))
				continue;
			if (NEAR && (Xn + x < d.halo || Xn + x > d.hi[0] || Y0 + y < d.halo ||
				     Y0 + y > d.hi[1]))
				Pn[iy][ix] = T[iy][ix];
			else if (dt_in_d(N, x + M, y))
				Pn[iy][ix] = Q[iy][ix + M];
			else
				Pn[iy][ix] = T[iy][ix];
			if (dt_in_d(N, x, y))
				Qn[iy][ix] = P[iy][ix + M];
		}
	room = ((room >> M) & KEEP) | nroom;
	fast = ((fast >> M) & KEEP) | nfast;
#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			P[iy][ix] = Pn[iy][ix];
			Q[iy][ix] = Qn[iy][ix];
		}
}

/*
 * The levels of the sweep at which tower (s, t)'s tile holds a room column, la to lb (la > lb:
 * none): row y of the tile at frame Xf = X0 + M (L - 1) spans Xf - (N - 1 - |y|) to
 * Xf + N - |y|, and meets the room's columns of its row (g.xr) for Xf within the hull of those
 * ranges over the tile's rows. A tower runs only these levels: at the levels before, its
 * window held padding only (or, for leggy stencils, images of cells it does not compute), and
 * at those after its tile does, so the run is the same as from level 1 to g.nlev without the
 * steps through padding. The window of level la is loaded whole: the cells that were never
 * this tower's are in memory as they would have been fetched, and the others are padding,
 * which holds zero.
 */
template <typename R, int M, int N>
__device__ __forceinline__ void dt_levels(const DtArgs<R> &g, int s, int t, int &la, int &lb)
{
	const int X0 = N * s, Y0 = N * (s & 1) + 2 * N * t;
	int lo = INT_MAX, hi = INT_MIN;

	for (int y = -(N - 1); y <= N - 1; y++) {
		const int Y = Y0 + y;
		int2 r;

		if (Y < 0 || Y >= k_dims.ny)
			continue;
		r = g.xr[Y];
		if (r.x <= r.y) {
			lo = min(lo, r.x - N + dt_abs(y));
			hi = max(hi, r.y + N - 1 - dt_abs(y));
		}
	}
	la = 1;
	lb = 0;
	if (lo <= hi) {	/* L - 1 from ceil((lo - X0) / M) to floor((hi - X0) / M) */
		la = max(1, -dt_fdiv(X0 - lo, M) + 1);
		lb = min(g.nlev, dt_fdiv(hi - X0, M) + 1);
	}
}

/*
 * One stage of a leggy stencil (M > 1; the 7-point scheme runs k_dt7, below): block b runs
 * the tower (g.s, g.t0 + b) through the levels of g.nlev at which its tile holds room columns
 * (dt_levels). The tile of level L is the base tile moved M (L - 1) along x; its base tile is
 * centred at (N s, N (s & 1) + 2 N t), so that the stages s and the towers t tile the plane.
 */
template <typename R, int M, int DTS>
__global__ void __launch_bounds__(DtShape<R, M, DTS>::threads) k_diamond(DtArgs<R> g)
{
	static_assert(M > 1, "the 7-point scheme runs k_dt7");
	constexpr int N = M * DTS, O = N - 1 + M, SX = 2 * N + 2 * M, SY = 2 * N - 1 + 2 * M;
	extern __shared__ unsigned char smem[];
	R *sh = reinterpret_cast<R *>(smem);	/* [tile column][M + z - zlo], z ghosts 0 */
	const KDims &d = k_dims;
	const KCoefs<R> &c = kc<R>();
	const int zs = blockDim.x + 2 * M, tz = threadIdx.x, z = g.zlo + tz;
	const bool live = z <= g.zhi;
	const int X0 = N * g.s, Y0 = N * (g.s & 1) + 2 * N * (g.t0 + (int)blockIdx.x);
	const long long snx = (long long)d.nz * d.nx;
	R P[SY][SX], Q[SY][SX];
	unsigned long long room = 0, fast = 0;
	int la, lb;

	dt_levels<R, M, N>(g, g.s, g.t0 + (int)blockIdx.x, la, lb);
	if (la > lb)
		return;
	for (int i = tz; i < 2 * N * N * 2 * M; i += blockDim.x) {
		const int col = i / (2 * M), e = i % (2 * M);

		sh[col * zs + (e < M ? e : (int)blockDim.x + e)] = R(0);
	}
#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			const int x = ix - O, y = iy - O, X = X0 + M * (la - 1) + x;

			if (dt_in_w(M, N, x, y))
				P[iy][ix] = dt_load<R, M>(g.lev[(la - 1) & 1], X, Y0 + y, z, live);
			if (dt_in_d(N, x, y)) {
				Q[iy][ix] = dt_load<R, M>(g.lev[la & 1], X, Y0 + y, z, live);
				dt_bits(g, X, Y0 + y, z, live, 1ull << dt_bit(N, x, y), room, fast);
			}
		}
	for (int L = la; L <= lb; L++) {
		const int Xf = X0 + M * (L - 1);
		R *out = g.lev[L & 1];
		const long long base = z + (long long)d.nz * Xf + snx * Y0;
		/* a leggy tower whose windows of this level or the next reach past a wall */
		const bool near = M > 1 && (Xf - (N - 1) - M < d.halo || Xf + N + 2 * M > d.hi[0] ||
					    Y0 - (N - 1) - M < d.halo || Y0 + N - 1 + M > d.hi[1]);
		R T[SY][SX];
		unsigned long long nroom = 0, nfast = 0;

		__syncthreads();	/* the last level's z neighbours are read */
#pragma unroll
		for (int iy = 0; iy < SY; iy++)
#pragma unroll
			for (int ix = 0; ix < SX; ix++)
				if (dt_in_d(N, ix - O, iy - O))
					sh[dt_slot(N, ix - O, iy - O) * zs + M + tz] = P[iy][ix];
		if (L < lb && !near)	/* the next window's edge, in flight during the level */
			dt_fetch<R, M, N, false>(g, T, out, Xf + M, Y0, z, live, nroom, nfast);
		if (__syncthreads_or(room != 0)) {
#pragma unroll
			for (int iy = 0; iy < SY; iy++)
#pragma unroll
				for (int ix = 0; ix < SX; ix++) {
					const int x = ix - O, y = iy - O, b = dt_bit(N, x, y);
					R v;

					if (!dt_in_d(N, x, y) || !((room >> b) & 1))
						continue;
					const R *col = sh + dt_slot(N, x, y) * zs + M;
					const R u = P[iy][ix];
					double s = sfirst(u);

#pragma unroll
					for (int m = 1; m <= M; m++) {
						const double w = kw(6 * m - 5);

						s += sterm(w, P[iy][ix - m], u);
						s += sterm(w, P[iy][ix + m], u);
						s += sterm(w, P[iy - m][ix], u);
						s += sterm(w, P[iy + m][ix], u);
						s += sterm(w, col[kfold(2, z - m) - g.zlo], u);
						s += sterm(w, col[kfold(2, z + m) - g.zlo], u);
					}
					if ((fast >> b) & 1)
						v = u + ((u - Q[iy][ix]) + c.l2 * (R)s);
					else
						v = dt_slow<R>(g, base + x * d.nz + y * snx,
								     Xf + x + d.nx * (Y0 + y), z, L,
								     P[iy][ix], (R)s, Q[iy][ix]);
					Q[iy][ix] = v;
					/* the trailing 2M columns, all at the top two levels */
					if (!dt_in_d(N, x - 2 * M, y) || L >= g.nlev - 1 || near)
						out[base + x * d.nz + y * snx] = v;
				}
		}
		if (L == lb)
			break;
		if (near) {
			dt_fetch<R, M, N, true>(g, T, out, Xf + M, Y0, z, live, nroom, nfast);
			dt_shift<R, M, N, true>(P, Q, T, Xf + M, Y0, room, fast, nroom, nfast);
		} else {
			dt_shift<R, M, N, false>(P, Q, T, Xf + M, Y0, room, fast, nroom, nfast);
		}
	}
}

/* After a sweep: each receiver's samples from its cells' values, summed as k_inject_record. */
__global__ void k_dt_record(const double *__restrict__ pval, const double *__restrict__ rw,
			    double *rec, int nrec, size_t cap, long long n0, int nlev, int pstride)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x, r = i / nlev, L = i % nlev + 1;
	double y = 0;

	if (r >= nrec || (size_t)(n0 + L) >= cap)
		return;
	for (int q = 0; q < 8; q++)
		y += rw[8 * r + q] * pval[(size_t)(8 * r + q) * pstride + L - 1];
	rec[(size_t)r * cap + n0 + L] = y;
}

#endif
