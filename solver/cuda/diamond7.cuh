/*
 * diamond7.cuh - k_dt7, the DiamondTorre towers of the 7-point scheme (diamond_towers.cuh
 * describes the towers); included by diamond.cu.
 */
#ifndef SOLVER_CUDA_DIAMOND7_CUH
#define SOLVER_CUDA_DIAMOND7_CUH

#include "diamond_towers.cuh"

/*
 * ---- k_dt7: the 7-point towers, scheduled by dependency flags ------------------------------
 *
 * The same towers for M = 1, built for speed (docs/kernels.md, "diamond", measures each step):
 *  - persistent blocks take towers in stage order from a ticket counter, and a tower waits
 *    only for the two towers of the stage before it whose tiles border it in y (seed 002's
 *    asynchrony: no launch per stage, no stage-wide barrier, no wave quantisation); with
 *    branch walls only as far as each of its levels needs, as they publish the levels they
 *    have finished (DtDep, k_dt7). Every tower whose data meets this one's is one of
 *    those two or an ancestor of them, and the tickets are taken in an order that only ever
 *    waits on running blocks. A tower runs only the levels at which its tile holds room
 *    columns (padding is skipped, row by row).
 *  - a warp whose cells of the level are all air takes a straight path, without per-cell
 *    tests; the others give every cell the update of its kind (for air it rounds as the air
 *    update does), padding keeps its value, and a source or receiver cell goes to dt_probe.
 *  - the z exchange is double-buffered by level parity, so one barrier a level suffices,
 *    and that barrier is split (an mbarrier): a warp arrives when its cells are in the
 *    exchange, does the work that needs no neighbour (the next level's bits and, at dts 1
 *    and 2, the fetch of the level after), then waits, so the warps that are ahead fill the
 *    wait for the last one. Each thread's row of the exchange holds the tile's columns at an
 *    odd stride, so that a warp's accesses hit 32 banks.
 *  - the edge a level's shift needs is copied ahead (from the level before's start at dts 1
 *    and 2, else from its end) by cp.async into the thread's staging row in shared memory;
 *    the class bytes of the columns entering the tile are loaded with it into registers.
 *  - the window's shape is a constexpr table (Dt7Map), so every test in the unrolled loops is
 *    a constant.
 * Towers run on other multiprocessors within the same launch, and L1 is not coherent: what a
 * tower reads was written before the releases it acquired (one thread's acquire load, then
 * the block's barrier), which the memory model orders before every later load of the block,
 * cp.async's included; the tower's first loads also bypass L1 (__ldcg). With the towers a
 * few levels apart (band walls, k_dt7), a tower may read cells written after its start; but
 * it reads each address of the fields once, each multiprocessor runs one block, and every
 * tower starts with an acquire, so L1 holds no stale line of them; the branch state, read
 * at every level, is read past L1.
 */

__device__ __forceinline__ unsigned long long dt_acquire(const unsigned long long *p)
{
	unsigned long long v;

	asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void dt_release(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/*
 * A tower's dependencies, as its lead thread holds them: the flags of the two towers of the
 * stage before that border it in y (NULL where there is none), the least number of levels
 * both have published as finished in this sweep (seen), and its own flag. A flag holds
 * epoch << 32 | levels; a tower publishes L only once its own stores of levels up to L are
 * made and both its neighbours have published at least L, so that L also holds for every
 * tower to their right whose data meets this one's.
 */
struct DtDep {
	const unsigned long long *f[2];
	unsigned long long *mine;
	unsigned long long tag;	/* the sweep's epoch << 32 */
	unsigned seen;
	unsigned pubat;		/* it publishes again once it has finished this level */
};

/* dt_ensure's wait, out of line, so that the tower's loop holds no registers for it. */
__device__ __noinline__ void dt_wait(DtDep &d, unsigned need)
{
	while (d.seen < need) {
		unsigned m = UINT_MAX;

		for (int e = 0; e < 2; e++)
			if (d.f[e]) {
				const unsigned long long v = dt_acquire(d.f[e]);

				m = min(m, (v >> 32) == (d.tag >> 32) ? (unsigned)v : 0u);
			}
		d.seen = m;
		if (m < need)
			__nanosleep(64);
	}
}

/* Wait until both neighbours have finished level need (both flags polled at once). */
__device__ __forceinline__ void dt_ensure(DtDep &d, unsigned need)
{
	if (d.seen < need)
		dt_wait(d, need);
}

__device__ __forceinline__ void dt_publish(DtDep &d, unsigned levels)
{
	dt_release(d.mine, d.tag | levels);
}

/* The block's level barrier, an mbarrier in shared memory (sm_80 on) that every thread
 * arrives at and then waits on, so that a warp can do other work between the two. */
__device__ __forceinline__ void dt_bar_init(unsigned long long *bar, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(
			     (unsigned)__cvta_generic_to_shared(bar)),
		     "r"(count)
		     : "memory");
}

__device__ __forceinline__ void dt_bar_arrive(unsigned long long *bar)
{
	asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(
			     (unsigned)__cvta_generic_to_shared(bar))
		     : "memory");
}

/* Wait for the completion of the phase of this parity (acquire: the arrivals' stores seen). */
__device__ __forceinline__ void dt_bar_wait(unsigned long long *bar, unsigned parity)
{
	unsigned done;

	do
		asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
			     "selp.b32 %0, 1, 0, p; }"
			     : "=r"(done)
			     : "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(parity)
			     : "memory");
	while (!done);
}

/* The cluster's level barrier (sm_90 on): every thread of every block of the cluster arrives,
 * its shared-memory stores released, then waits, acquiring those of the others. */
__device__ __forceinline__ void dt_cl_arrive()
{
	asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}

__device__ __forceinline__ void dt_cl_wait()
{
	asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ void dt_cl_sync()
{
	dt_cl_arrive();
	dt_cl_wait();
}

/* This block's rank in its cluster, and the cluster's blocks. */
__device__ __forceinline__ unsigned dt_cl_rank()
{
	unsigned r;

	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}

__device__ __forceinline__ unsigned dt_cl_size()
{
	unsigned n;

	asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
	return n;
}

/* The address of p, a variable of this block's shared memory, in block rank's of the
 * cluster (a generic address, so that stores through it reach that block). */
template <typename T> __device__ __forceinline__ T *dt_cl_map(T *p, unsigned rank)
{
	unsigned long long a;

	asm volatile("mapa.u64 %0, %1, %2;" : "=l"(a) : "l"(p), "r"(rank));
	return reinterpret_cast<T *>(a);
}

/* The bits of the tile's columns in a thread's masks. */
__host__ __device__ constexpr unsigned long long dt_tile(int N)
{
	unsigned long long k = 0;

	for (int y = -(N - 1); y <= N - 1; y++)
		for (int x = -(N - 1); x <= N; x++)
			if (dt_in_d(N, x, y))
				k |= 1ull << dt_bit(N, x, y);
	return k;
}

/* Rows of the z exchange: one per thread and a ghost above and below, at an odd stride. */
__host__ __device__ constexpr int dt7_stride(int N)
{
	return 2 * N * N + 1;
}

/* Whether window column (x, y) is on the edge: not in the tile one level before, so loaded. */
__host__ __device__ constexpr bool dt7_edge(int N, int x, int y)
{
	return dt_in_w(1, N, x, y) && !dt_in_d(N, x + 1, y);
}

/* The edge column's slot in a thread's staging row: its rank, row by row. */
__host__ __device__ constexpr int dt7_eslot(int N, int x, int y)
{
	int n = 0;

	for (int yy = -N; yy <= N; yy++)
		for (int xx = -N; xx <= N + 1; xx++)
			if (dt7_edge(N, xx, yy) && (yy < y || (yy == y && xx < x)))
				n++;
	return n;
}

/* The staging row's stride, odd: the 4 N + 2 edge columns and one more. */
__host__ __device__ constexpr int dt7_estride(int N)
{
	return 4 * N + 3;
}

/*
 * The window's shape as a table, [y + N][x + N]: in the window (w), in the tile (d), entering
 * the tile (n: not in it a level before), trailing (t: stored every level), on the edge (e),
 * the tile column's exchange slot and the edge column's staging slot. The kernel reads it
 * through a constexpr local, so every lookup is a constant: the functions above, called in
 * unrolled loops, were left to run at run time for N = 3 and 4.
 */
template <int N> struct Dt7Map {
	bool w[2 * N + 1][2 * N + 2], d[2 * N + 1][2 * N + 2], n[2 * N + 1][2 * N + 2];
	bool t[2 * N + 1][2 * N + 2], e[2 * N + 1][2 * N + 2];
	int slot[2 * N + 1][2 * N + 2], eslot[2 * N + 1][2 * N + 2];
	int rw[2 * N + 1], roff[2 * N + 1];	/* a tile row's columns, and those of the rows before */
	int nk[2 * N + 1][2 * N + 2];	/* an entering column's rank, row by row */
};

template <int N> __host__ __device__ constexpr Dt7Map<N> dt7_map()
{
	Dt7Map<N> m{};

	for (int y = -N; y <= N; y++)
		for (int x = -N; x <= N + 1; x++) {
			const int iy = y + N, ix = x + N;

			m.w[iy][ix] = dt_in_w(1, N, x, y);
			m.d[iy][ix] = dt_in_d(N, x, y);
			m.n[iy][ix] = dt_in_d(N, x, y) && !dt_in_d(N, x + 1, y);
			m.t[iy][ix] = dt_in_d(N, x, y) && !dt_in_d(N, x - 2, y);
			m.e[iy][ix] = dt7_edge(N, x, y);
			m.slot[iy][ix] = m.d[iy][ix] ? dt_slot(N, x, y) : -1;
			m.eslot[iy][ix] = m.e[iy][ix] ? dt7_eslot(N, x, y) : -1;
		}
	for (int iy = 0, k = 0; iy < 2 * N + 1; iy++)
		for (int ix = 0; ix < 2 * N + 2; ix++)
			m.nk[iy][ix] = m.n[iy][ix] ? k++ : -1;
	for (int iy = 1, o = 0; iy < 2 * N; iy++) {
		m.rw[iy] = 2 * N - 2 * dt_abs(iy - N);
		m.roff[iy] = o;
		o += m.rw[iy];
	}
	return m;
}

/* An asynchronous copy of one value from global to shared memory (cp.async, sm_80 on). */
template <typename R> __device__ __forceinline__ void dt7_cp(R *dst, const R *src)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(
			     (unsigned)__cvta_generic_to_shared(dst)),
		     "l"(src), "n"(sizeof(R))
		     : "memory");
}

/* u at column (X, Y) and z, or 0 off the grid; through L2. */
template <typename R>
__device__ __forceinline__ R dt7_load(const R *a, int X, int Y, int z, bool live)
{
	const KDims &d = k_dims;

	if (!live || X < 0 || X >= d.nx || Y < 0 || Y >= d.ny)
		return R(0);
	return __ldcg(a + z + (long long)d.nz * (X + (long long)d.nx * Y));
}

/*
 * What the shift after a level needs, fetched during the level before: the level's values
 * (finished by the towers to the right) of the window at frame Xn that were not in the tile,
 * copied asynchronously into this thread's staging row E (read back after
 * cp.async.wait_group, by this thread only, so no barrier), and the class bytes and probe
 * ranges of the tile's entering columns (CB, PZ). Padding threads (past the room's top) copy
 * nothing: their rows stay zero. Every call commits one group of copies, so that a wait for
 * all but the newest always means this one.
 */
template <typename R, int N>
__device__ __forceinline__ void dt7_fetch(const DtArgs<R> &g, const R *lev, int Xn, int Y0, int z,
					  bool live, R *E, int (&CB)[2 * N + 1][2 * N + 2],
					  int2 (&PZ)[2 * N + 1][2 * N + 2])
{
	constexpr int O = N, SX = 2 * N + 2, SY = 2 * N + 1;
	constexpr Dt7Map<N> m = dt7_map<N>();
	const KDims &d = k_dims;

	if (Xn - N >= 0 && Xn + N + 1 < d.nx && Y0 - N >= 0 && Y0 + N < d.ny) {
		const long long n0 = z + (long long)d.nz * Xn + (long long)d.nz * d.nx * Y0;
		const R *e = lev + n0;
		const uint8_t *cb = g.cls + n0;
		const char *pz = reinterpret_cast<const char *>(g.probez + Xn + d.nx * Y0);

#pragma unroll
		for (int iy = 0; iy < SY; iy++)
#pragma unroll
			for (int ix = 0; ix < SX; ix++) {
				const int k = iy * SX + ix;

				if (m.e[iy][ix] && live)
					dt7_cp(E + m.eslot[iy][ix],
					       reinterpret_cast<const R *>(
						       reinterpret_cast<const char *>(e) + g.ro[k]));
				if (m.n[iy][ix]) {
					CB[iy][ix] = live ? cb[g.eo[k]] : VOX_PAD;
					PZ[iy][ix] = *reinterpret_cast<const int2 *>(pz + g.po[k]);
				}
			}
		asm volatile("cp.async.commit_group;" ::: "memory");
		return;
	}
#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			const int x = ix - O, y = iy - O;

			if (m.e[iy][ix] && live)
				E[m.eslot[iy][ix]] = dt7_load(lev, Xn + x, Y0 + y, z, live);
			if (m.n[iy][ix])
				dt_class(g, Xn + x, Y0 + y, z, live, CB[iy][ix], PZ[iy][ix]);
		}
	asm volatile("cp.async.commit_group;" ::: "memory");	/* an empty group */
}

/* A source or receiver cell at level L: the source's value added, then the receivers' record
 * of the cell (dt_slow's tail; scalar arguments, so that no caller copies its DtArgs). */
template <typename R>
__device__ __noinline__ R dt_probe(const long long *src, const double *inj, int ninj,
				   const long long *probe, double *pval, int nprobe, int pstride,
				   long long n, int L, R v)
{
	if (inj && L <= ninj)
		for (int q = 0; q < 8; q++)
			if (src[q] == n)
				v += (R)inj[8 * (L - 1) + q];
	for (int q = 0; q < nprobe; q++)
		if (probe[q] == n)
			pval[(size_t)q * pstride + L - 1] = (double)v;
	return v;
}

/* The room, fast and probe bits of the columns entering the tile, from their class bytes
 * and probe ranges (dt7_fetch's CB and PZ). */
template <int N>
__device__ __forceinline__ void dt7_bits(const int (&CB)[2 * N + 1][2 * N + 2],
					 const int2 (&PZ)[2 * N + 1][2 * N + 2], int z,
					 unsigned long long &room, unsigned long long &fast,
					 unsigned long long &prob)
{
	constexpr Dt7Map<N> m = dt7_map<N>();

#pragma unroll
	for (int iy = 0; iy < 2 * N + 1; iy++)
#pragma unroll
		for (int ix = 0; ix < 2 * N + 2; ix++)
			if (m.n[iy][ix])
				dt_class_bits(CB[iy][ix], PZ[iy][ix], z, 1ull << dt_bit(N, ix - N, iy - N),
					      room, fast, prob);
}

template <bool B> struct DtBool {
	static constexpr bool value = B;
};

/*
 * The branch walls of k_dt7 (BR): each thread keeps the node of its cell in every tile column
 * (BRANCH_NONE where it has none) in the node cache, nc[place * blockDim.x + thread], a
 * column's place being its tile row's first plus its x modulo the row's width, so that a
 * column keeps its place while it crosses the tile and one entering takes that of the one
 * that left a level before. The nodes of the tile are looked up as a tower starts, and those
 * of the entering columns at each level between the barrier's arrive and wait, from their
 * columns' ends and lists copied in two levels ahead (dt7_columns), so that a level's branch
 * updates wait for no lookup. bu, bv and bn: a warp's 32 cells of a round of
 * branch updates (dt7_branches), at [the warp's first thread + i].
 */
template <typename R> struct Dt7Br {
	unsigned *nc;
	R *bu, *bv;
	unsigned *bn;
	int4 *col;	/* the entering columns' ends and lists (dt7_columns) */
};

/* The node cache's place of the cell of tile column (iy, ix) at the level of frame Xf. */
template <int N> __device__ __forceinline__ int dt7_place(int iy, int ix, int Xf)
{
	constexpr Dt7Map<N> m = dt7_map<N>();
	const int w = m.rw[iy], r = (Xf + ix - N) % w;

	return m.roff[iy] + (r < 0 ? r + w : r);
}

/* The columns entering the tile at each level: 2 N - 1, one per tile row. */
__host__ __device__ constexpr int dt7_nenter(int N)
{
	return 2 * N - 1;
}

/*
 * The ends and list (bzc, bcol) of the columns entering the tile at the level of frame Xn,
 * into part Xn & 3 of the block's column ring, thread k copying those of the column of rank
 * k: by cp.async (ASYNC, committed by the caller), else loaded. Written two levels before
 * they are read (dt7_enter) and read within the level's barrier, so a part that is written
 * was last read before the level barrier that its writer has passed: four parts.
 */
template <typename R, int N, bool ASYNC>
__device__ __forceinline__ void dt7_columns(const DtArgs<R> &g, int4 *ring, int Xn, int Y0)
{
	constexpr Dt7Map<N> m = dt7_map<N>();
	constexpr int NE = dt7_nenter(N);
	const KDims &d = k_dims;

	if ((int)threadIdx.x >= NE)
		return;
#pragma unroll
	for (int iy = 0; iy < 2 * N + 1; iy++)
#pragma unroll
		for (int ix = 0; ix < 2 * N + 2; ix++) {
			if (!m.n[iy][ix] || m.nk[iy][ix] != (int)threadIdx.x)
				continue;
			const int X = Xn + ix - N, Y = Y0 + iy - N;
			int4 *const p = ring + 2 * ((Xn & 3) * NE + m.nk[iy][ix]);
			const long long c = X + (long long)d.nx * Y;

			if (X < 0 || X >= d.nx || Y < 0 || Y >= d.ny) {
				p[0] = make_int4(1, 0, 0, 0);	/* no nodes */
				p[1] = make_int4(0, 0, 0, 0);
			} else if (ASYNC) {
				asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
						     (unsigned)__cvta_generic_to_shared(p)),
					     "l"(g.br->bzc + c)
					     : "memory");
				asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
						     (unsigned)__cvta_generic_to_shared(p + 1)),
					     "l"(g.br->bcol + c)
					     : "memory");
			} else {
				p[0] = g.br->bzc[c];
				p[1] = g.br->bcol[c];
			}
		}
}

/* The nodes of the thread's cells in the columns entering the tile at the level of frame Xf,
 * those of the bits of want (slow room cells), into the node cache, from the column ring. */
template <typename R, int N>
__device__ __forceinline__ void dt7_enter(const DtArgs<R> &g, const Dt7Br<R> &br, int Xf, int z,
					  unsigned long long want)
{
	constexpr Dt7Map<N> m = dt7_map<N>();
	constexpr int NE = dt7_nenter(N);

#pragma unroll
	for (int iy = 0; iy < 2 * N + 1; iy++)
#pragma unroll
		for (int ix = 0; ix < 2 * N + 2; ix++)
			if (m.n[iy][ix] && ((want >> dt_bit(N, ix - N, iy - N)) & 1)) {
				const int4 *p = br.col + 2 * ((Xf & 3) * NE + m.nk[iy][ix]);

				br.nc[dt7_place<N>(iy, ix, Xf) * blockDim.x + threadIdx.x] =
					branch_node_in(*g.br, p[0], p[1], z);
			}
}

/* The nodes of the thread's cells in the tile columns of the bits of want (room columns
 * whose cell is slow), at the level of frame Xf, into the node cache. */
template <typename R, int N>
__device__ __forceinline__ void dt7_nodes(const DtArgs<R> &g, const Dt7Br<R> &br, int Xf, int Y0,
					  int z, unsigned long long want)
{
	constexpr Dt7Map<N> m = dt7_map<N>();
	const KDims &d = k_dims;

#pragma unroll
	for (int iy = 0; iy < 2 * N + 1; iy++)
#pragma unroll
		for (int ix = 0; ix < 2 * N + 2; ix++)
			if (m.d[iy][ix] && ((want >> dt_bit(N, ix - N, iy - N)) & 1))
				br.nc[dt7_place<N>(iy, ix, Xf) * blockDim.x + threadIdx.x] =
					branch_node_of(*g.br, (long long)(Xf + ix - N) +
								      (long long)d.nx * (Y0 + iy - N),
						       z);
}

/* The bits of the tile columns of want whose cell has a node (the node cache's). */
template <typename R, int N>
__device__ __forceinline__ unsigned long long dt7_need(const Dt7Br<R> &br, int Xf,
						       unsigned long long want)
{
	constexpr Dt7Map<N> m = dt7_map<N>();
	unsigned long long need = 0;

#pragma unroll
	for (int iy = 0; iy < 2 * N + 1; iy++)
#pragma unroll
		for (int ix = 0; ix < 2 * N + 2; ix++) {
			const int b = dt_bit(N, ix - N, iy - N);

			if (m.d[iy][ix] && ((want >> b) & 1) &&
			    br.nc[dt7_place<N>(iy, ix, Xf) * blockDim.x + threadIdx.x] != BRANCH_NONE)
				need |= 1ull << b;
		}
	return need;
}

/*
 * The branch walls of the warp's cells at one level, shared out over its lanes: the cells of
 * the bits of need, whose u^n is in P and whose scheme update is in Q, where the update with
 * its branches replaces it. The warp's cells are numbered slot by slot, lane by lane; in
 * round r the lane holding cell 32 r + i writes its node, u^n and update to place i of the
 * warp's part of bn, bu and bv, lane i updates that node (branch_at) and writes the result
 * back, and the cell's lane takes it. A floor or ceiling thread's cells then take one
 * update's chain of loads a level, on several lanes at once, not one after another on its
 * own lane. CG: the state is read past L1 (the towers run a few levels apart, k_dt7).
 */
template <typename R, int N, bool CG>
__device__ __forceinline__ void dt7_branches(const DtArgs<R> &g, const Dt7Br<R> &br,
					     const R (&P)[2 * N + 1][2 * N + 2],
					     R (&Q)[2 * N + 1][2 * N + 2], int Xf,
					     unsigned long long need)
{
	constexpr int SX = 2 * N + 2, SY = 2 * N + 1;
	constexpr Dt7Map<N> m = dt7_map<N>();
	constexpr unsigned ALL = 0xffffffffu;
	const int w0 = threadIdx.x & ~31;
	unsigned lane, below, total = 0;

	asm("mov.u32 %0, %%laneid;" : "=r"(lane));
	below = (1u << lane) - 1;
#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++)
			if (m.d[iy][ix])
				total += __popc(
					__ballot_sync(ALL, (need >> dt_bit(N, ix - N, iy - N)) & 1));
	for (unsigned r = 0; 32 * r < total; r++) {
		unsigned before = 0;	/* cells numbered in the slots before this one */

#pragma unroll
		for (int iy = 0; iy < SY; iy++)
#pragma unroll
			for (int ix = 0; ix < SX; ix++) {
				if (!m.d[iy][ix])
					continue;
				const bool mine = (need >> dt_bit(N, ix - N, iy - N)) & 1;
				const unsigned mk = __ballot_sync(ALL, mine);
				const unsigned i = before + __popc(mk & below) - 32 * r;

				if (mine && i < 32) {
					br.bn[w0 + i] = br.nc[dt7_place<N>(iy, ix, Xf) * blockDim.x +
							      threadIdx.x];
					br.bu[w0 + i] = P[iy][ix];
					br.bv[w0 + i] = Q[iy][ix];
				}
				before += __popc(mk);
			}
		__syncwarp();
		if (lane < total - 32 * r)
			br.bv[w0 + lane] = branch_at<R, CG>(g.br, br.bn[w0 + lane], br.bu[w0 + lane],
							    br.bv[w0 + lane]);
		__syncwarp();
		before = 0;
#pragma unroll
		for (int iy = 0; iy < SY; iy++)
#pragma unroll
			for (int ix = 0; ix < SX; ix++) {
				if (!m.d[iy][ix])
					continue;
				const bool mine = (need >> dt_bit(N, ix - N, iy - N)) & 1;
				const unsigned mk = __ballot_sync(ALL, mine);
				const unsigned i = before + __popc(mk & below) - 32 * r;

				if (mine && i < 32)
					Q[iy][ix] = br.bv[w0 + i];
				before += __popc(mk);
			}
		__syncwarp();	/* the places are read before the next round writes them */
	}
}

/* dt7_level's cells, every tile cell's update; PLAIN: no cell of the warp has a kind t >=
 * tdiff, so the kinds take plain_update. With branch walls (BR 1, or 2 with the towers a
 * few levels apart, k_dt7) the cells' updates are
 * first all made, then the warp updates the branch walls of its cells (dt7_branches), then
 * the probes and the output rows take the values. */
template <typename R, int N, bool ALL, bool DEAD, int BR, typename PLAIN>
__device__ __forceinline__ void dt7_cells(const DtArgs<R> &g, R (&P)[2 * N + 1][2 * N + 2],
					  R (&Q)[2 * N + 1][2 * N + 2], const R *xz, R *ob, long long n0,
					  int L, bool live, bool top, unsigned long long room,
					  unsigned long long prob, const unsigned (&T)[2 * N + 1][2 * N + 2],
					  const Dt7Br<R> &br, int Xf, unsigned long long need, PLAIN)
{
	constexpr int O = N, SX = 2 * N + 2, SY = 2 * N + 1, SS = dt7_stride(N);
	constexpr Dt7Map<N> m = dt7_map<N>();
	constexpr bool SPLIT = BR && !ALL;	/* the branch walls between two passes */
	const KCoefs<R> &c = kc<R>();

#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			const int x = ix - O, y = iy - O, b = dt_bit(N, x, y);

			if (!m.d[iy][ix])
				continue;
			const int sl = m.slot[iy][ix], k = iy * SX + ix;
			const bool in = ALL || ((room >> b) & 1);
			const R s = ((P[iy][ix - 1] + P[iy][ix + 1]) + (P[iy - 1][ix] + P[iy + 1][ix])) +
				    (xz[sl] + xz[2 * SS + sl]);
			R v;

			if (ALL) {
				v = air_update(c.l2, P[iy][ix], Q[iy][ix], s);
				if (DEAD && !live)
					v = R(0);
			} else {
				const unsigned t = T[iy][ix];

				if (PLAIN::value)
					v = plain_update(c, t, P[iy][ix], Q[iy][ix], s);
				else
					v = kind_update(c, t, P[iy][ix], Q[iy][ix], P[iy][ix - 1],
							P[iy][ix + 1], P[iy - 1][ix], P[iy + 1][ix],
							xz[sl], xz[2 * SS + sl]);
				if (!in)
					v = Q[iy][ix];	/* padding keeps its value */
				else if (!SPLIT && ((prob >> b) & 1))
					v = dt_probe<R>(g.src, g.inj, g.ninj, g.probe, g.pval, g.nprobe,
							g.pstride, n0 + g.eo[k], L, v);
			}
			Q[iy][ix] = v;
			/* the trailing 2 columns, all at the top two levels */
			if (!SPLIT && live && in && (m.t[iy][ix] || top))
				*reinterpret_cast<R *>(reinterpret_cast<char *>(ob) + g.ro[k]) = v;
		}
	if (!SPLIT)
		return;
	dt7_branches<R, N, BR == 2>(g, br, P, Q, Xf, need);
#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			const int b = dt_bit(N, ix - O, iy - O), k = iy * SX + ix;

			if (!m.d[iy][ix] || !((room >> b) & 1))
				continue;
			if ((prob >> b) & 1)
				Q[iy][ix] = dt_probe<R>(g.src, g.inj, g.ninj, g.probe, g.pval, g.nprobe,
							g.pstride, n0 + g.eo[k], L, Q[iy][ix]);
			if (live && (m.t[iy][ix] || top))
				*reinterpret_cast<R *>(reinterpret_cast<char *>(ob) + g.ro[k]) =
					Q[iy][ix];
		}
}

/*
 * One level of the tower, every tile cell. ALL: every cell of the warp is air, the air update
 * straight (DEAD: and the warp's padding threads past the room's top keep their zeros).
 * Otherwise each cell takes the update of its kind (device.cuh, kind_update), which for air
 * (a = 0, be = -6, sc = cb = 1) rounds exactly as the air update does: the warp's class
 * bytes are loaded together, not cell by cell; padding keeps its value. A warp none of whose
 * cells has a kind t >= tdiff (in a box: every warp but those at the x and y walls) takes the
 * kinds' plain update, the same values without the per-neighbour differences.
 */
template <typename R, int N, bool ALL, bool DEAD, int BR>
__device__ __forceinline__ void dt7_level(const DtArgs<R> &g, R (&P)[2 * N + 1][2 * N + 2],
					  R (&Q)[2 * N + 1][2 * N + 2], const R *xz, R *ob,
					  const uint8_t *cls, long long n0, int L, bool live, bool top,
					  unsigned long long room, unsigned long long fast,
					  unsigned long long prob, const Dt7Br<R> &br, int Xf)
{
	const KCoefs<R> &c = kc<R>();
	unsigned T[2 * N + 1][2 * N + 2];
	bool diff = false;	/* a cell of the thread's has a kind t >= tdiff */
	const unsigned long long need = BR && !ALL ? dt7_need<R, N>(br, Xf, room & ~fast) : 0;

	if (!ALL)
#pragma unroll
		for (int iy = 0; iy < 2 * N + 1; iy++)
#pragma unroll
			for (int ix = 0; ix < 2 * N + 2; ix++) {
				constexpr Dt7Map<N> m = dt7_map<N>();
				const int b = dt_bit(N, ix - N, iy - N);

				if (m.d[iy][ix]) {
					T[iy][ix] = ((room & ~fast) >> b) & 1 ? cls[g.eo[iy * (2 * N + 2) + ix]]
									      : VOX_AIR;
					diff |= (int)T[iy][ix] >= c.tdiff;
				}
			}
	if (ALL || __any_sync(0xffffffffu, diff))
		dt7_cells<R, N, ALL, DEAD, BR>(g, P, Q, xz, ob, n0, L, live, top, room, prob, T,
					       br, Xf, need, DtBool<false>());
	else
		dt7_cells<R, N, ALL, DEAD, BR>(g, P, Q, xz, ob, n0, L, live, top, room, prob, T,
					       br, Xf, need, DtBool<true>());
}

/*
 * Tower (s, t) through levels la to lb of the sweep, those whose tile holds room columns
 * (dt_levels). xch: the two z exchanges, their ghost rows zero; stage: the two staging areas
 * of the edge (level parity), a row of dt7_estride(N) a thread. CL: the tower is split in z
 * over the blocks of a cluster, block r holding the blockDim.x cells from zlo + r blockDim.x
 * up; a block's end threads also write their cells into the ghost row of the block beside
 * (distributed shared memory), and the level barrier is the cluster's.
 */
template <typename R, int N, int BR, bool CL>
__device__ __forceinline__ void dt7_tower(const DtArgs<R> &g, int s, int t, int la, int lb,
					  R *xch, R *stage, unsigned long long *bar, unsigned &phase,
					  bool lead, DtDep &dep)
{
	constexpr int O = N, SX = 2 * N + 2, SY = 2 * N + 1, SS = dt7_stride(N);
	constexpr int ES = dt7_estride(N);
	constexpr Dt7Map<N> m = dt7_map<N>();
	constexpr unsigned long long KEEP = dt_keep(1, N), TILE = dt_tile(N);
	/* The fetch of the level after next goes between the barrier's arrive and wait where
	 * registers allow (dts 1 and 2); larger tiles fetch after the shift, as their window
	 * already fills the registers (docs/performance.md measures both). */
	constexpr bool EARLY = N <= 2;
	constexpr bool PIPE = BR == 2 && !CL;	/* towers a few levels apart (k_dt7) */
	const KDims &d = k_dims;
	const int tz = threadIdx.x, nzr = g.zhi - g.zlo + 1;
	/* The thread's z, as an offset from zlo: warp 2 holds the room's 16 top and 16 bottom
	 * cells, so the floor and the ceiling (boundary cells in a box) put one warp, not two,
	 * on the general path; the other warps hold the cells between in order, the padding
	 * threads last. (Warps go to schedulers by index mod 4: of 14 warps, warp 2 shares its
	 * scheduler with 2 others, warp 0 with 3.) Rooms under 128 cells tall keep z = zlo + tz. */
	const int off = CL ? (int)(dt_cl_rank() * blockDim.x) + tz
			: nzr < 128 ? tz
			: tz < 64 ? tz + 16
			: tz < 80 ? nzr - 80 + tz
			: tz < 96 ? tz - 80
			: tz < nzr ? tz - 16 : tz;
	const int row = CL ? tz : off;	/* the thread's row of the z exchange, less one */
	/* CL: where the block's bottom and top threads also write (the ghost rows of the blocks
	 * below and above), NULL at the cluster's ends */
	R *xnb = NULL;

	if (CL && tz == 0 && dt_cl_rank() > 0)
		xnb = dt_cl_map(xch, dt_cl_rank() - 1) + (blockDim.x + 1) * SS;
	if (CL && tz == (int)blockDim.x - 1 && dt_cl_rank() + 1 < dt_cl_size())
		xnb = dt_cl_map(xch, dt_cl_rank() + 1);
	const int z = g.zlo + off;
	const bool live = off < nzr;
	const unsigned long long dead = live ? 0 : ~0ull;
	const int X0 = N * s, Y0 = N * (s & 1) + 2 * N * t;
	const size_t half = (size_t)(blockDim.x + 2) * SS, ehalf = (size_t)blockDim.x * ES;
	R *const erow = stage + tz * ES;
	R P[SY][SX], Q[SY][SX];
	int CB[SY][SX];
	int2 PZ[SY][SX];
	unsigned long long room = 0, fast = 0, prob = 0;
	/* the branch walls' node cache and round places, after the staging areas */
	__shared__ int4 ring[BR ? 8 * dt7_nenter(N) : 1];
	R *const bu = stage + 2 * blockDim.x * ES;
	const Dt7Br<R> br = { reinterpret_cast<unsigned *>(bu + 2 * blockDim.x) + blockDim.x, bu,
			      bu + blockDim.x, reinterpret_cast<unsigned *>(bu + 2 * blockDim.x),
			      ring };

#pragma unroll
	for (int iy = 0; iy < SY; iy++)
#pragma unroll
		for (int ix = 0; ix < SX; ix++) {
			const int x = ix - O, y = iy - O, X = X0 + la - 1 + x;

			if (m.w[iy][ix])
				P[iy][ix] = dt7_load(g.lev[(la - 1) & 1], X, Y0 + y, z, live);
			if (m.d[iy][ix]) {
				int cb;
				int2 pz;

				Q[iy][ix] = dt7_load(g.lev[la & 1], X, Y0 + y, z, live);
				dt_class(g, X, Y0 + y, z, live, cb, pz);
				dt_class_bits(cb, pz, z, 1ull << dt_bit(N, x, y), room, fast, prob);
			}
		}
	if (BR)
		dt7_nodes<R, N>(g, br, X0 + la - 1, Y0, z, room & ~fast);
	if (BR && la < lb)	/* the columns entering next level, seen after this level's barrier */
		dt7_columns<R, N, false>(g, br.col, X0 + la, Y0);
	if (la < lb)
		dt7_fetch<R, N>(g, g.lev[la & 1], X0 + la, Y0, z, live, erow + (la & 1) * ehalf, CB,
				PZ);
	for (int L = la; L <= lb; L++) {
		const int Xf = X0 + L - 1;
		const bool more = L < lb, ahead = L + 1 < lb;
		R *x0 = xch + (L & 1) * half;
		const long long n0 = z + (long long)d.nz * Xf + (long long)d.nz * d.nx * Y0;
		unsigned long long nroom = 0, nfast = 0, nprob = 0;

#pragma unroll
		for (int iy = 0; iy < SY; iy++)
#pragma unroll
			for (int ix = 0; ix < SX; ix++)
				if (m.d[iy][ix])
					x0[(row + 1) * SS + m.slot[iy][ix]] = P[iy][ix];
		if (CL && xnb) {
			R *const xr = xnb + (L & 1) * half;

#pragma unroll
			for (int iy = 0; iy < SY; iy++)
#pragma unroll
				for (int ix = 0; ix < SX; ix++)
					if (m.d[iy][ix])
						xr[m.slot[iy][ix]] = P[iy][ix];
		}
		/* the level after next's edge is fetched at the next level, after this barrier */
		if (PIPE && lead)
			dt_ensure(dep, (unsigned)min(L + 2, g.nlev));
		if (CL)
			dt_cl_arrive();
		else
			dt_bar_arrive(bar);
		/* the columns entering two levels on, copied in by the shift after this level */
		if (BR && L + 2 <= lb) {
			dt7_columns<R, N, true>(g, br.col, Xf + 2, Y0);
			asm volatile("cp.async.commit_group;" ::: "memory");
		}
		/* while the other warps write theirs: the bits of the columns entering the tile
		 * next level (their bytes loaded a level ago), and the edge of the level after */
		if (EARLY && more)
			dt7_bits<N>(CB, PZ, z, nroom, nfast, nprob);
		if (EARLY && ahead)
			dt7_fetch<R, N>(g, g.lev[(L + 1) & 1], Xf + 2, Y0, z, live,
					erow + ((L + 1) & 1) * ehalf, CB, PZ);
		/* the nodes of the entering columns (the places of those that left, which the
		 * level before has used) */
		if (BR && L > la)
			dt7_enter<R, N>(g, br, Xf, z, room & ~fast & (TILE & ~KEEP));
		if (CL) {
			dt_cl_wait();
		} else {
			dt_bar_wait(bar, phase);
			phase ^= 1;
			/* every thread's stores of the level before are made */
			if (PIPE && lead && g.pub && (unsigned)L > dep.pubat) {
				dt_publish(dep, (unsigned)(L - 1));
				dep.pubat = (unsigned)(L - 1 + g.pub);
			}
		}
		if (__any_sync(0xffffffffu, room != 0)) {
			const R *xz = x0 + row * SS;
			R *ob = g.lev[L & 1] + n0;
			const bool top = L >= g.nlev - 1;

			if (!__all_sync(0xffffffffu, ((fast | dead) & TILE) == TILE))
				dt7_level<R, N, false, false, BR>(g, P, Q, xz, ob, g.cls + n0, n0, L, live,
							      top, room, fast, prob, br, Xf);
			else if (__any_sync(0xffffffffu, !live))
				dt7_level<R, N, true, true, BR>(g, P, Q, xz, ob, g.cls + n0, n0, L, live,
							    top, room, fast, prob, br, Xf);
			else
				dt7_level<R, N, true, false, BR>(g, P, Q, xz, ob, g.cls + n0, n0, L, live,
							     top, room, fast, prob, br, Xf);
		}
		if (!more)
			break;
		/* the window and tile of the next level: the tile moves one cell along x; this
		 * level's edge is in (the next level's may still be in flight) */
		const R *E = erow + (L & 1) * ehalf;
		R Pn[SY][SX];

		if (EARLY && ahead)
			asm volatile("cp.async.wait_group 1;" ::: "memory");
		else
			asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
		for (int iy = 0; iy < SY; iy++)
#pragma unroll
			for (int ix = 0; ix < SX; ix++)
				if (m.w[iy][ix])
					Pn[iy][ix] = m.e[iy][ix] ? E[m.eslot[iy][ix]] : Q[iy][ix + 1];
#pragma unroll
		for (int iy = 0; iy < SY; iy++)
#pragma unroll
			for (int ix = 0; ix < SX; ix++) {
				if (m.d[iy][ix])
					Q[iy][ix] = P[iy][ix + 1];
				if (m.w[iy][ix])
					P[iy][ix] = Pn[iy][ix];
			}
		if (!EARLY)
			dt7_bits<N>(CB, PZ, z, nroom, nfast, nprob);
		room = ((room >> 1) & KEEP) | nroom;
		fast = ((fast >> 1) & KEEP) | nfast;
		prob = ((prob >> 1) & KEEP) | nprob;
		if (!EARLY && ahead)
			dt7_fetch<R, N>(g, g.lev[(L + 1) & 1], Xf + 2, Y0, z, live,
					erow + ((L + 1) & 1) * ehalf, CB, PZ);
	}
}

/*
 * The persistent blocks of a sweep: tickets in stage order (stage g.s_hi - i, tower
 * g.tlo[parity] + j for ticket i g.ntw + j). A tower waits for its two neighbours of the stage
 * before (DtDep). BR: none (0), branch walls (1), or branch walls with the towers a few
 * levels apart (2, PIPE), where a tower waits only as far as each level needs: to start,
 * their levels up to its first's next (its first window, and the edge its first shift
 * reads), and before each level L, up to L + 2 (the edge fetched at the next level), so
 * that the towers of successive stages run at once, a few levels apart, and a tower slowed by
 * its branch walls delays those after it by a few of its levels, not by all of them; it
 * publishes its levels every g.pub. Otherwise (or with g.pub 0) a tower waits for its
 * neighbours' whole towers and publishes only its end: where every tower does the same work,
 * running them apart gained nothing (docs/performance.md), and its checks cost. Thread 0 takes
 * a block's next ticket as its tower starts, so that the atomic's latency hides behind the
 * tower. The acquire loads invalidate L1 and the release stores fence (ld.acquire and
 * st.release at gpu scope), so no other fence is needed; what a later tower reads was
 * written before a release it acquired, or by itself. With PIPE, branch state, which the
 * towers of other multiprocessors rewrite meanwhile, is read past L1 (branch.cuh).
 * CL: a cluster runs each tower, split in z, and waits for whole towers (the launch sets
 * g.pub 0); block 0's thread 0 takes the tickets and publishes. The other blocks read the
 * ticket from its shared memory; their stores reach the end's release through the cluster
 * barrier (release, then acquire by block 0) and a fence.
 */
template <typename R, int DTS, int BR, bool CL>
__global__ void __launch_bounds__(DtShape<R, 1, DTS>::threads, 1) k_dt7(DtArgs<R> g)
{
	constexpr int N = DTS, SS = dt7_stride(N), ES = dt7_estride(N);
	constexpr bool PIPE = BR == 2 && !CL;	/* towers a few levels apart */
	extern __shared__ unsigned char smem[];
	__shared__ int tk[5];
	__shared__ unsigned long long bar;
	R *xch = reinterpret_cast<R *>(smem);
	const int rows = blockDim.x + 2;
	R *stage = xch + 2 * rows * SS;
	const bool lead = threadIdx.x == 0 && (!CL || dt_cl_rank() == 0);
	const int *tkr = CL ? dt_cl_map(tk, 0) : tk;	/* the ticket's block */
	int next = 0;
	unsigned phase = 0;	/* of the level barrier: its waits so far, mod 2 */
	__shared__ DtDep dep;	/* the lead thread's (in shared memory: no registers held) */

	if (lead)
		dep.tag = (unsigned long long)g.epoch << 32;
	for (int i = threadIdx.x; i < 4 * SS; i += blockDim.x)	/* the ghost rows */
		xch[(i / (2 * SS)) * rows * SS + (i / SS % 2 ? rows - 1 : 0) * SS + i % SS] = R(0);
	for (int i = threadIdx.x; i < 2 * (int)blockDim.x * ES; i += blockDim.x)
		stage[i] = R(0);	/* what the padding threads read as their edge */
	if (!CL && threadIdx.x == 0)
		dt_bar_init(&bar, blockDim.x);
	if (lead)
		next = atomicAdd(g.ticket, 1);
	if (CL) {	/* every block's ghost rows are zero before a block beside writes them */
		__syncthreads();	/* the cluster's barrier orders this too; racecheck sees this one */
		dt_cl_sync();
	}
	for (;;) {
		if (lead) {
			const int k = next, i = k / g.ntw, s = g.s_hi - i;
			const int t = g.tlo[s & 1] + k % g.ntw;
			int la = 1, lb = 0;

			dep.f[0] = dep.f[1] = NULL;
			dep.seen = 0;
			if (k < g.ntow) {
				next = atomicAdd(g.ticket, 1);
				dep.mine = g.flags + k;
				if (t <= g.thi[s & 1])
					dt_levels<R, 1, N>(g, s, t, la, lb);
			}
			if (k < g.ntow && t <= g.thi[s & 1] && i > 0) {
				const int p1 = (s + 1) & 1, yc = N * (s & 1) + 2 * N * t;

				for (int e = 0; e < 2; e++) {
					const int j = (yc + (2 * e - 1) * N - N * p1) / (2 * N) - g.tlo[p1];

					dep.f[e] = j >= 0 && j < g.ntw ? g.flags + (size_t)(i - 1) * g.ntw + j
								       : NULL;
				}
			}
			if (k < g.ntow) {
				if (!dep.f[0] && !dep.f[1])	/* L1 invalidated all the same (PIPE) */
					(void)dt_acquire(dep.mine);
				dt_ensure(dep, la <= lb && PIPE && g.pub
						       ? (unsigned)min(la + 1, g.nlev)
						       : (unsigned)g.nlev);
				if (la <= lb && la > 1)	/* its tile held no room column before la */
					dt_publish(dep, (unsigned)(la - 1));
			}
			dep.pubat = (unsigned)la;
			tk[0] = k;
			tk[1] = s;
			tk[2] = t;
			tk[3] = la;
			tk[4] = lb;
		}
		if (CL)
			dt_cl_sync();
		else
			__syncthreads();
		const int k = tkr[0], s = tkr[1], t = tkr[2], la = tkr[3], lb = tkr[4];

		if (k >= g.ntow) {
			if (CL)	/* block 0's ticket is read before it exits */
				dt_cl_sync();
			return;
		}
		if (la <= lb)
			dt7_tower<R, N, BR, CL>(g, s, t, la, lb, xch, stage, &bar, phase, lead, dep);
		if (CL) {	/* the towers' stores are made and the ticket is read */
			__threadfence();
			dt_cl_sync();
		} else {
			__syncthreads();	/* the tower's stores are made, tk is read */
		}
		if (lead) {
			dt_ensure(dep, (unsigned)g.nlev);
			dt_publish(dep, (unsigned)g.nlev);
		}
	}
}

#endif
