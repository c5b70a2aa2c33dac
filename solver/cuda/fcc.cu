/*
 * fcc.cu - the fcc scheme's kernels on its folded lattice (docs/kernels.md): fcc, one node per
 * thread, fcc-vec, an aligned pair per thread, and fcc-split, whose air pairs and wall nodes
 * (from a list) are two kernels; and the plane of a snapshot on that lattice.
 */
#include "device.cuh"

#include <cuda_pipeline.h>

/*
 * The fcc scheme (solver/cpu_fcc.inc, whose expression and order it follows): one thread per
 * folded column (i', j), marching a chunk of slabs; node i = 2 i' + p with p = (j + k) & 1.
 * Away from the walls the twelve reads are direct, through the read-only cache; the nodes on
 * the walls mirror their reads about them. k_dims holds the folded strides.
 */
static __constant__ int k_fcc_order[12][3] = {
	{ -1, -1, 0 }, { 1, -1, 0 }, { -1, 1, 0 }, { 1, 1, 0 },
	{ -1, 0, -1 }, { 1, 0, -1 }, { -1, 0, 1 }, { 1, 0, 1 },
	{ 0, -1, -1 }, { 0, 1, 1 },  { 0, -1, 1 }, { 0, 1, -1 },
};

/* A wall link's tetrahedra and stiffness (geometry/voxel.h, VOX_FCC_WEIGHT), the latter in
 * each precision, rounded from the double table as the CPU engine rounds it. */
static __constant__ unsigned k_fcc_tet[12][2] = VOX_FCC_TET;
static constexpr double h_fcc_weight[3][3] = VOX_FCC_WEIGHT;
#define W(R, a, b) (R) h_fcc_weight[a][b]
#define ROW(R, a) W(R, a, 0), W(R, a, 1), W(R, a, 2)
static __constant__ float k_fcc_weight_f[9] = { ROW(float, 0), ROW(float, 1), ROW(float, 2) };
static __constant__ double k_fcc_weight_d[9] = { ROW(double, 0), ROW(double, 1),
						 ROW(double, 2) };
#undef ROW
#undef W

template <typename R> __device__ __forceinline__ R fcc_weight(int i);
template <> __device__ __forceinline__ float fcc_weight<float>(int i)
{
	return k_fcc_weight_f[i];
}
template <> __device__ __forceinline__ double fcc_weight<double>(int i)
{
	return k_fcc_weight_d[i];
}

/* The same weight picked by selects from immediates, for fcc_wall's one-pass form. */
template <typename R> __device__ __forceinline__ R fcc_weight_sel(int a, int b)
{
	constexpr R w00 = (R)h_fcc_weight[0][0], w01 = (R)h_fcc_weight[0][1],
		    w02 = (R)h_fcc_weight[0][2], w10 = (R)h_fcc_weight[1][0],
		    w11 = (R)h_fcc_weight[1][1], w12 = (R)h_fcc_weight[1][2],
		    w20 = (R)h_fcc_weight[2][0], w21 = (R)h_fcc_weight[2][1],
		    w22 = (R)h_fcc_weight[2][2];
	const R r0 = b == 0 ? w00 : b == 1 ? w01 : w02, r1 = b == 0 ? w10 : b == 1 ? w11 : w12,
		r2 = b == 0 ? w20 : b == 1 ? w21 : w22;

	return a == 0 ? r0 : a == 1 ? r1 : r2;
}

__device__ __forceinline__ int fcc_mirror(int x, int a)
{
	const int lo = k_dims.halo, hi = k_dims.hi[a];

	return x < lo ? 2 * lo - x : x > hi ? 2 * hi - x : x;
}

__device__ __forceinline__ long long fcc_at(int i, int j, int k)
{
	return (i >> 1) + k_dims.sy * j + k_dims.sz * k;
}

template <typename R>
__device__ R fcc_mirrored(const R *__restrict__ a, int i, int j, int k)
{
	R v[12];

#pragma unroll
	for (int q = 0; q < 12; q++)
		v[q] = __ldg(a + fcc_at(fcc_mirror(i + k_fcc_order[q][0], 0),
					fcc_mirror(j + k_fcc_order[q][1], 1),
					fcc_mirror(k + k_fcc_order[q][2], 2)));
	return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])) +
	       ((v[8] + v[9]) + (v[10] + v[11]));
}

/*
 * The fcc air update of cpu_fcc.inc, u + ((u - u-) + l2 (S - 12 u)): S's (8 u + 4 u) and 12 u
 * round alike, so a uniform field stays (docs/physics.md, "A uniform field stays uniform");
 * the walls' u + sc (cb (u - u-) + l2 (S + be u)), be = -12, rounds the same for air.
 */
template <typename R> __device__ __forceinline__ R fcc_air(R l2, R u, R old, R s)
{
	return u + ((u - old) + l2 * (s - R(12) * u));
}

/*
 * The air's S of a folded node from its twelve neighbours, as fcc-vec and fcc-split add them:
 * lo[q] and hi[q] its (i -+ 1) neighbours in the axial rows (j -+ 1, k), (j, k -+ 1), then
 * the four diagonal rows (j -+ 1, k -+ 1) at its own i.
 */
template <typename R>
__device__ __forceinline__ R fcc_air_sum(const R (&lo)[4], const R (&hi)[4], R mm, R pp, R mp,
					 R pm)
{
	return ((lo[0] + hi[0]) + (lo[1] + hi[1])) + ((lo[2] + hi[2]) + (lo[3] + hi[3])) +
	       ((mm + pp) + (mp + pm));
}

/* S of a node whose twelve neighbours are all in the array, read directly, in fcc_order. */
template <typename R>
__device__ __forceinline__ R fcc_direct(const R *__restrict__ a, long long n, int p)
{
	const KDims &d = k_dims;
	const R *x = a + n + p - 1;	/* the (i - 1) reads of the other parity */

	return ((__ldg(x - d.sy) + __ldg(x + 1 - d.sy)) + (__ldg(x + d.sy) + __ldg(x + 1 + d.sy))) +
	       ((__ldg(x - d.sz) + __ldg(x + 1 - d.sz)) + (__ldg(x + d.sz) + __ldg(x + 1 + d.sz))) +
	       ((__ldg(a + n - d.sy - d.sz) + __ldg(a + n + d.sy + d.sz)) +
		(__ldg(a + n + d.sz - d.sy) + __ldg(a + n + d.sy - d.sz)));
}

/* The folded index of node n's link q (parity p): an (i -+ 1) neighbour is p - 1 or p on. */
__device__ __forceinline__ long long fcc_link_at(long long n, int p, int q)
{
	const int ox = k_fcc_order[q][0];

	return n + (ox ? p + (ox < 0 ? -1 : 0) : 0) + k_dims.sy * k_fcc_order[q][1] +
	       k_dims.sz * k_fcc_order[q][2];
}

/*
 * A node on a wall of a carved room (cpu_fcc.inc, fcc_carved): u + sc (cb (u - u-) + l2 S'),
 * S' the sum over its present links of w (u_n - u) in fcc_order, grouped as S is, w by what
 * the link's tetrahedra miss; a link to padding adds an exact 0. Two forms, the same values,
 * each the faster in its kernel (docs/performance.md, "The fcc scheme's walls in carved
 * rooms"): ONE_PASS loads the twelve class bytes and neighbours at once (k_fcc: 59 against
 * 52 G nodes/s in the small seminar room); the other reads the class bytes four at a time and
 * holds fewer registers (k_fcc_vec: 40 against 56, 137 against 129 G nodes/s in the hall).
 */
template <typename R, bool ONE_PASS>
__device__ __forceinline__ void fcc_wall(const R *__restrict__ a, R *__restrict__ b,
					 const uint8_t *__restrict__ cls, long long n, int p,
					 unsigned t)
{
	const KCoefs<R> &c = kc<R>();
	const R u = __ldg(a + n);
	unsigned gone = 0;
	R s = 0;

	if (ONE_PASS) {
		R d[12];

#pragma unroll
		for (int q = 0; q < 12; q++) {
			const long long m = fcc_link_at(n, p, q);

			gone |= (unsigned)(__ldg(cls + m) == VOX_PAD) << q;
			d[q] = __ldg(a + m) - u;
		}
#pragma unroll
		for (int q = 0; q < 12; q++)
			d[q] = gone >> q & 1 ? R(0)
					     : d[q] * fcc_weight_sel<R>(__popc(gone & k_fcc_tet[q][0]),
									__popc(gone & k_fcc_tet[q][1]));
		s = ((d[0] + d[1]) + (d[2] + d[3])) + ((d[4] + d[5]) + (d[6] + d[7])) +
		    ((d[8] + d[9]) + (d[10] + d[11]));
	} else {
#pragma unroll 4
		for (int q = 0; q < 12; q++)
			gone |= (unsigned)(__ldg(cls + fcc_link_at(n, p, q)) == VOX_PAD) << q;
#pragma unroll
		for (int g = 0; g < 3; g++) {
			R v[4];

#pragma unroll
			for (int r = 0; r < 4; r++) {
				const int q = 4 * g + r;

				v[r] = gone >> q & 1
					       ? R(0)
					       : (__ldg(a + fcc_link_at(n, p, q)) - u) *
							 fcc_weight<R>(3 * __popc(gone & k_fcc_tet[q][0]) +
								       __popc(gone & k_fcc_tet[q][1]));
			}
			s = g ? s + ((v[0] + v[1]) + (v[2] + v[3])) : (v[0] + v[1]) + (v[2] + v[3]);
		}
	}
	b[n] = u + c.sc[t] * (c.cb[t] * (u - b[n]) + c.l2 * s);
}

/* Whether node (i, j, k) with class byte t (read in a carved room only) takes the air update
 * (fcc_node's first cases): the others are padding or on the walls (fcc-split's list). */
__device__ __forceinline__ bool fcc_direct_node(unsigned t, int i, int j, int k)
{
	const KDims &d = k_dims;

	return i >= d.halo && i <= d.hi[0] &&
	       (d.carved ? t == VOX_AIR
			 : i > d.halo && i < d.hi[0] && j > d.halo && j < d.hi[1] && k > d.halo &&
				   k < d.hi[2]);
}

/*
 * Node (i, j, k) at folded index n, parity p, of a room cell. In a box: direct away from the
 * walls, mirrored on them. In a carved room: padding is left at 0, air (all twelve links
 * present) is direct, a node on a wall takes fcc_wall.
 */
template <typename R, bool ONE_PASS>
__device__ __forceinline__ void fcc_node(const R *__restrict__ a, R *__restrict__ b,
					 const uint8_t *__restrict__ cls, int i, int j, int k,
					 long long n, int p)
{
	const KDims &d = k_dims;
	const KCoefs<R> &c = kc<R>();

	if (d.carved) {
		const unsigned t = __ldg(cls + n);

		if (t == VOX_AIR)
			b[n] = fcc_air(c.l2, __ldg(a + n), b[n], fcc_direct(a, n, p));
		else if (t != VOX_PAD)
			fcc_wall<R, ONE_PASS>(a, b, cls, n, p, t);
	} else if (i > d.halo && i < d.hi[0] && j > d.halo && j < d.hi[1] && k > d.halo &&
		   k < d.hi[2]) {
		b[n] = fcc_air(c.l2, __ldg(a + n), b[n], fcc_direct(a, n, p));
	} else {
		const unsigned t = cls[n];
		const R u = __ldg(a + n);

		b[n] = u + c.sc[t] * (c.cb[t] * (u - b[n]) +
				      c.l2 * (fcc_mirrored(a, i, j, k) + c.be[t] * u));
	}
}

template <typename R>
__global__ void k_fcc(const R *__restrict__ a, R *__restrict__ b, const uint8_t *__restrict__ cls)
{
	const KDims d = k_dims;
	const int ip = blockIdx.x * blockDim.x + threadIdx.x;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int k0 = d.halo + (int)blockIdx.z * d.kc, k1 = min(d.hi[2], k0 + d.kc - 1);

	if (j < d.halo || j > d.hi[1])
		return;
	for (int k = k0; k <= k1; k++) {
		const int p = (j + k) & 1, i = 2 * ip + p;

		if (i >= d.halo && i <= d.hi[0])
			fcc_node<R, true>(a, b, cls, i, j, k, ip + d.sy * j + d.sz * k, p);
	}
}

/*
 * fcc-vec: the same with two folded nodes per thread (i', i' + 1 with i' even, an aligned
 * pair), so that the centre, u^(n-1), the four diagonal rows and the store are single 8-byte
 * (float) or 16-byte (double) accesses, and each row of the other parity is one pair plus
 * one value: 14 loads for two nodes instead of 28. Pairs off the air (in a box: on or next to
 * its walls; in a carved room: with a node that is not VOX_AIR) take fcc_node.
 */
template <typename R>
__global__ void k_fcc_vec(const R *__restrict__ a, R *__restrict__ b,
			  const uint8_t *__restrict__ cls)
{
	typedef typename Vec8<R>::T P;
	const KDims d = k_dims;
	const KCoefs<R> &c = kc<R>();
	const int ip = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int k0 = d.halo + (int)blockIdx.z * d.kc, k1 = min(d.hi[2], k0 + d.kc - 1);

	if (j < d.halo || j > d.hi[1] || ip >= d.nx)
		return;
	for (int k = k0; k <= k1; k++) {
		const int p = (j + k) & 1, i = 2 * ip + p;
		const long long n = ip + d.sy * j + d.sz * k;

		if (d.carved ? ip + 1 < d.nx && __ldg(cls + n) == VOX_AIR &&
				       __ldg(cls + n + 1) == VOX_AIR
			     : i > d.halo && i + 2 < d.hi[0] && j > d.halo && j < d.hi[1] &&
				       k > d.halo && k < d.hi[2]) {
			const long long row[4] = { n - d.sy, n + d.sy, n - d.sz, n + d.sz };
			R lo0[4], hi0[4], lo1[4], hi1[4];	/* (i -+ 1) of nodes 0 and 1 */

#pragma unroll
			for (int q = 0; q < 4; q++) {
				const P v = __ldg((const P *)(a + row[q]));
				const R e = __ldg(a + row[q] + (p ? 2 : -1));

				lo0[q] = p ? v.x : e;
				hi0[q] = p ? v.y : v.x;
				lo1[q] = p ? v.y : v.x;
				hi1[q] = p ? e : v.y;
			}
			const P mm = __ldg((const P *)(a + n - d.sy - d.sz));
			const P pp = __ldg((const P *)(a + n + d.sy + d.sz));
			const P mp = __ldg((const P *)(a + n + d.sz - d.sy));
			const P pm = __ldg((const P *)(a + n + d.sy - d.sz));
			const P ctr = __ldg((const P *)(a + n));
			P old = *(const P *)(b + n);
			old.x = fcc_air(c.l2, ctr.x, old.x,
					fcc_air_sum(lo0, hi0, mm.x, pp.x, mp.x, pm.x));
			old.y = fcc_air(c.l2, ctr.y, old.y,
					fcc_air_sum(lo1, hi1, mm.y, pp.y, mp.y, pm.y));
			*(P *)(b + n) = old;
			continue;
		}
		for (int m = 0; m < 2; m++)
			if (ip + m < d.nx && i + 2 * m >= d.halo && i + 2 * m <= d.hi[0])
				fcc_node<R, false>(a, b, cls, i + 2 * m, j, k, n + m, p);
	}
}

/*
 * fcc-split's first kernel: fcc-vec's update of aligned runs of folded nodes, with u^n staged
 * in shared memory. Each thread updates FCC_V = 16 bytes of a row (four float nodes, or two
 * double ones), so that each of its fourteen reads of the tile is one 16-byte load and a
 * few of them one value more. A block of bx x by threads (a warp per row) owns FCC_V bx
 * folded nodes of by rows and marches a chunk of slabs; its tile of each slab, rows j0 - 1 ..
 * j0 + by with one value either side, comes in by asynchronous copies (cp.async: each lane
 * its 16 bytes, two lanes the ends) FCC_AHEAD slabs ahead of the one computed, in a ring of
 * FCC_RING, so that several slabs' loads are in flight at once. Each slab: wait for slab
 * k + 1, one barrier (every thread is then past the slabs whose slots the load ahead reuses),
 * then the thread's nodes of slab k from the tile, with u^(n-1) and the class bytes read a
 * slab ahead. A node that is not air (fcc_direct_node) is left to the second kernel, so no
 * warp walks fcc_node's long path for one lane; the air ones take fcc-vec's expression in
 * its order, so that the values are fcc's.
 */
#define FCC_AHEAD 3
#define FCC_RING 8	/* a power of two, at least FCC_AHEAD + 3 */
#define FCC_SPLIT_CHUNK 32

/* 16 bytes of a row: the nodes one thread of k_fcc_tiled updates. */
template <typename R> struct Vec16;
template <> struct Vec16<float> {
	typedef float4 T;
	typedef unsigned C;	/* their class bytes */
};
template <> struct Vec16<double> {
	typedef double2 T;
	typedef unsigned short C;
};
#define FCC_V(R) ((int)(16 / sizeof(R)))

/* The tile's row width in values: the block's FCC_V bx at FCC_V .. (bx + 1) FCC_V - 1
 * (aligned for the 16-byte loads), the ends just before and after them; its rows: the
 * block's by and one either side. */
static __host__ __device__ int fcc_tile_width(int bx, int v)
{
	return v * (bx + 2);
}

static size_t fcc_split_smem(int bx, int by, int precision)
{
	return (size_t)FCC_RING * (by + 2) * fcc_tile_width(bx, 16 / precision) * precision;
}

int fcc_split_width(const struct cuda_engine *e)
{
	return 16 / e->precision * e->block[0];
}

/* Slab kk's tile into ring slot kk % FCC_RING (rows and values outside the grid are left). */
template <typename R>
__device__ __forceinline__ void fcc_tile_load(R *tile, const R *__restrict__ a, int kk, int x0,
					      int j0)
{
	constexpr int V = FCC_V(R);
	const KDims &d = k_dims;
	const int w = fcc_tile_width(blockDim.x, V), rows = blockDim.y + 2;
	const int x = x0 + V * (int)threadIdx.x;
	R *slot = tile + (size_t)(kk & (FCC_RING - 1)) * rows * w;

	if (kk < 0 || kk >= d.nz)
		return;
	for (int r = threadIdx.y; r < rows; r += blockDim.y) {
		const int j = j0 - 1 + r;
		const R *row = a + d.sy * j + d.sz * (long long)kk;
		R *to = slot + r * w;

		if (j < 0 || j >= d.ny)
			continue;
		if (x < d.nx)
			__pipeline_memcpy_async(to + V + V * threadIdx.x, row + x, 16);
		if (threadIdx.x == 0 && x0 > 0)
			__pipeline_memcpy_async(to + V - 1, row + x0 - 1, sizeof(R));
		if (threadIdx.x == 1 && x0 + V * (int)blockDim.x < d.nx)
			__pipeline_memcpy_async(to + V * (blockDim.x + 1), row + x0 + V * blockDim.x,
						sizeof(R));
	}
}

/* What a thread's update reads outside the tile: its u^(n-1) and, in a carved room, its class
 * bytes; loaded a slab ahead (fcc_tiled_ahead), so that their wait overlaps a slab's work. */
template <typename R> struct FccAhead {
	typename Vec16<R>::T old;
	typename Vec16<R>::C cls;
};

template <typename R>
__device__ __forceinline__ FccAhead<R> fcc_tiled_ahead(const R *b,
						       const uint8_t *__restrict__ cls, int ip,
						       int j, int k)
{
	typedef typename Vec16<R>::T P;
	typedef typename Vec16<R>::C C;
	const KDims &d = k_dims;
	const long long n = ip + d.sy * j + d.sz * (long long)k;
	FccAhead<R> x;

	x.old = *(const P *)(b + n);
	x.cls = d.carved ? __ldg((const C *)(cls + n)) : 0;
	return x;
}

/* The thread's nodes of row j from folded x ip of slab k, from the tile (um, u0, up: their
 * place in the slots of slabs k - 1, k, k + 1; w: a row) and x, as fcc-vec's air path. */
template <typename R>
__device__ __forceinline__ void fcc_tiled_nodes(const R *um, const R *u0, const R *up, int w,
						R *__restrict__ b, const FccAhead<R> &x, int ip,
						int j, int k)
{
	typedef typename Vec16<R>::T P;
	constexpr int V = FCC_V(R);
	const KDims &d = k_dims;
	const KCoefs<R> &c = kc<R>();
	const int p = (j + k) & 1, i = 2 * ip + p;
	const long long n = ip + d.sy * j + d.sz * (long long)k;
	bool air[V], all = true, any = false;

#pragma unroll
	for (int m = 0; m < V; m++) {
		air[m] = fcc_direct_node((x.cls >> (8 * m)) & 0xff, i + 2 * m, j, k);
		all &= air[m];
		any |= air[m];
	}
	if (!any)
		return;
	/* the axial rows (j -+ 1, k), (j, k -+ 1), of the other parity: node m's neighbours
	 * there are the row's m - 1 and m (p 0, the value before the thread's from e) or m
	 * and m + 1 (p 1, the value after from e) */
	const R *row[4] = { u0 - w, u0 + w, um, up };
	R lo[V][4], hi[V][4];

#pragma unroll
	for (int q = 0; q < 4; q++) {
		P v = *(const P *)row[q];	/* not const: elem() takes a reference */
		const R e = row[q][p ? V : -1];

#pragma unroll
		for (int m = 0; m < V; m++) {
			lo[m][q] = p ? elem<R>(v, m) : m ? elem<R>(v, m - 1) : e;
			hi[m][q] = p ? (m < V - 1 ? elem<R>(v, m + 1) : e) : elem<R>(v, m);
		}
	}
	P mm = *(const P *)(um - w), pp = *(const P *)(up + w);
	P mp = *(const P *)(up - w), pm = *(const P *)(um + w);
	P ctr = *(const P *)u0, old = x.old;

#pragma unroll
	for (int m = 0; m < V; m++)
		elem<R>(old, m) = fcc_air(c.l2, elem<R>(ctr, m), elem<R>(old, m),
					  fcc_air_sum(lo[m], hi[m], elem<R>(mm, m), elem<R>(pp, m),
						      elem<R>(mp, m), elem<R>(pm, m)));
	if (all) {
		*(P *)(b + n) = old;
		return;
	}
#pragma unroll
	for (int m = 0; m < V; m++)
		if (air[m])
			b[n + m] = elem<R>(old, m);
}

/* fcc-split's first kernel: a block's chunk of slabs, cut to its span (engine.cu, fcc_spans;
 * NULL: every slab), each slab's tiles loaded FCC_AHEAD slabs ahead into a ring. */
template <typename R>
__global__ void k_fcc_tiled(const R *__restrict__ a, R *__restrict__ b,
			    const uint8_t *__restrict__ cls, const int2 *__restrict__ span)
{
	constexpr int V = FCC_V(R);
	extern __shared__ __align__(16) unsigned char fcc_smem[];
	R *tile = (R *)fcc_smem;
	const KDims &d = k_dims;
	const int x0 = V * blockIdx.x * blockDim.x, ip = x0 + V * threadIdx.x;
	const int j0 = blockIdx.y * blockDim.y, j = j0 + threadIdx.y;
	const int c0 = d.halo + (int)blockIdx.z * FCC_SPLIT_CHUNK;
	const int2 s = span ? span[blockIdx.x + gridDim.x * blockIdx.y] : make_int2(c0, d.hi[2]);
	const int k0 = max(c0, s.x), k1 = min(min(d.hi[2], c0 + FCC_SPLIT_CHUNK - 1), s.y);
	const int w = fcc_tile_width(blockDim.x, V), plane = (blockDim.y + 2) * w;
	const int at = (threadIdx.y + 1) * w + V + V * threadIdx.x;	/* the nodes in a slot */
	const bool mine = ip < d.nx && j >= d.halo && j <= d.hi[1];

	FccAhead<R> next;

	if (k0 > k1)
		return;
	for (int kk = k0 - 1; kk <= k0 + FCC_AHEAD; kk++) {
		fcc_tile_load(tile, a, kk, x0, j0);
		__pipeline_commit();
	}
	if (mine)
		next = fcc_tiled_ahead(b, cls, ip, j, k0);
	for (int k = k0; k <= k1; k++) {
		__pipeline_wait_prior(FCC_AHEAD - 1);
		__syncthreads();
		if (k + 1 + FCC_AHEAD <= k1 + 1)
			fcc_tile_load(tile, a, k + 1 + FCC_AHEAD, x0, j0);
		__pipeline_commit();
		if (mine) {
			const FccAhead<R> x = next;

			if (k < k1)	/* the next slab's, its own nodes: no other thread's */
				next = fcc_tiled_ahead(b, cls, ip, j, k + 1);
			fcc_tiled_nodes(tile + ((k - 1) & (FCC_RING - 1)) * plane + at,
					tile + (k & (FCC_RING - 1)) * plane + at,
					tile + ((k + 1) & (FCC_RING - 1)) * plane + at, w, b, x, ip,
					j, k);
		}
	}
	__pipeline_wait_prior(0);
}

/*
 * fcc-split's second kernel: the nodes of e->fcc_walls (the room's nodes that fcc_direct_node
 * leaves: on the walls, in a box on its faces; less fitted walls' members, which cut.cu
 * writes), one thread each, by fcc_node; the first kernel updated the air, so each node is
 * written once a step, with fcc's values.
 */
template <typename R>
__global__ void k_fcc_listed(const R *__restrict__ a, R *__restrict__ b,
			     const uint8_t *__restrict__ cls, const long long *__restrict__ list,
			     long long count)
{
	const KDims d = k_dims;
	const long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;

	if (w >= count)
		return;
	const long long n = list[w], r = n % d.sz;
	const int k = (int)(n / d.sz), j = (int)(r / d.sy), p = (j + k) & 1;

	fcc_node<R, true>(a, b, cls, 2 * (int)(r % d.sy) + p, j, k, n, p);
}

/*
 * The fcc field at room cell (i, j, k) of a plane across axis (cpu_fcc.inc, fcc_plane): a
 * node's value; between nodes the mean of the four in-plane neighbours, mirrored at a box's
 * walls, in a carved room the mean of those that are not padding (padding holds 0).
 */
template <typename R>
__global__ void k_plane_fcc(const R *__restrict__ u, const uint8_t *__restrict__ cls,
			    float *__restrict__ out, int axis, int index, int n2)
{
	const KDims d = k_dims;
	const int uax = axis == 2 ? 1 : 2, vax = axis == 0 ? 1 : 0;
	const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
	int ijk[3];
	R v[4];
	int q = 0, present = 0;

	if (c >= n2)
		return;
	ijk[axis] = index;
	ijk[uax] = r + d.halo;
	ijk[vax] = c + d.halo;
	if (((ijk[0] + ijk[1] + ijk[2]) & 1) == 0) {
		out[(size_t)r * n2 + c] = (float)u[fcc_at(ijk[0], ijk[1], ijk[2])];
		return;
	}
	for (int a = 0; a < 3; a++)
		for (int s = -1; s <= 1 && a != axis; s += 2) {
			int at[3] = { ijk[0], ijk[1], ijk[2] };

			at[a] = d.carved ? at[a] + s : fcc_mirror(at[a] + s, a);
			v[q++] = u[fcc_at(at[0], at[1], at[2])];
			present += !d.carved || cls[fcc_at(at[0], at[1], at[2])] != VOX_PAD;
		}
	out[(size_t)r * n2 + c] =
		present ? (float)(((v[0] + v[1]) + (v[2] + v[3])) * (R(1) / R(present))) : 0.0f;
}

/* ---- the launchers --------------------------------------------------------------------- */

template <typename R> static int fcc_run(struct cuda_engine *e, enum kernel_id kern,
					 struct rs_error *err)
{
	const R *a = (const R *)e->u[e->cur];
	R *b = (R *)e->u[1 - e->cur];
	const dim3 blk(e->block[0], e->block[1]);
	const int per = kern == KERNEL_FCC ? 1 : kern == KERNEL_FCC_VEC ? 2 : FCC_V(R);
	const int chunk = kern == KERNEL_FCC_SPLIT ? FCC_SPLIT_CHUNK : KCHUNK;
	const dim3 g((e->k.dims.nx + per * blk.x - 1) / (per * blk.x),
		     (e->plan.n[1] + blk.y - 1) / blk.y, (e->plan.room[2] + chunk - 1) / chunk);

	if (kern == KERNEL_FCC) {
		k_fcc<R><<<g, blk>>>(a, b, e->cls);
	} else if (kern == KERNEL_FCC_VEC) {
		k_fcc_vec<R><<<g, blk>>>(a, b, e->cls);
	} else {
		k_fcc_tiled<R><<<g, blk, fcc_split_smem(blk.x, blk.y, sizeof(R))>>>(a, b, e->cls,
										 e->fcc_span);
		if (e->nfcc_walls)
			k_fcc_listed<R><<<(unsigned)((e->nfcc_walls + 255) / 256), 256>>>(
				a, b, e->cls, e->fcc_walls, e->nfcc_walls);
	}
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

ONE_LEVEL_FAMILY(fcc, fcc_run)

/* fcc-split's tiles: at most 48 KiB of shared memory a block (the default limit). */
#define FCC_SMEM_MAX 49152

int fcc_check(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len)
{
	if (k == KERNEL_FCC_SPLIT &&
	    fcc_split_smem(e->block[0], e->block[1], e->precision) > FCC_SMEM_MAX)
		return snprintf(why, len, "its ring of %d slabs' tiles takes %zu bytes of shared "
				"memory with blocks of %d x %d, at most %d (a narrower block)",
				FCC_RING, fcc_split_smem(e->block[0], e->block[1], e->precision),
				e->block[0], e->block[1], FCC_SMEM_MAX), 1;
	return 0;
}

const void *fcc_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem)
{
	*smem = k == KERNEL_FCC_SPLIT ? fcc_split_smem(e->block[0], e->block[1], e->precision) : 0;
	if (e->precision == 4)
		return k == KERNEL_FCC	    ? (const void *)k_fcc<float>
		       : k == KERNEL_FCC_VEC ? (const void *)k_fcc_vec<float>
					     : (const void *)k_fcc_tiled<float>;
	return k == KERNEL_FCC	    ? (const void *)k_fcc<double>
	       : k == KERNEL_FCC_VEC ? (const void *)k_fcc_vec<double>
				     : (const void *)k_fcc_tiled<double>;
}

int fcc_plane(const struct cuda_engine *e, dim3 g, float *out, int axis, int index, int n2,
	      struct rs_error *err)
{
	const void *u = e->u[e->cur];

	if (kconst_sync(e, err))
		return RS_EDEVICE;
	if (e->precision == 4)
		k_plane_fcc<float><<<g, 128>>>((const float *)u, e->cls, out, axis, index, n2);
	else
		k_plane_fcc<double><<<g, 128>>>((const double *)u, e->cls, out, axis, index, n2);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}
