/*
 * engine.cu - the CUDA engine: the kernels of seeds 000 and 003 and their host launchers.
 *
 * Every kernel updates u^(n+1) over u^(n-1) in place (seed 003 section 4.3.1) with the cell
 * update of solver/fdtd.h. Air cells are found through a one-bit-per-cell mask (1/8 byte
 * per cell of traffic); only the few non-air cells read their class byte and the per-kind
 * coefficients. Padding keeps its zeros. Per-column start/stop heights (and their per-block
 * reduction) keep the kernels away from padding (seed 003 section 4.3.3).
 *
 * Kernels (docs/kernels.md):
 *   naive3d            3-D blocks, one thread per cell, reads through __ldg (seed 000, KernelA)
 *   tiled-global       the volume as a 1-D tiled 2-D plane, all reads global (seed 003 4.1)
 *   tiled-shared       the same with the block's tile in shared memory (seed 003 4.1)
 *   slice-naive        2-D front marching z, register shifting, global reads (seed 003 4.2.1)
 *   slice-texture      the same, every read a texture fetch, stacked sub-volumes (4.2.2)
 *   slice-ldg          the same, reads through __ldg (seed 000 section 3.3)
 *   slice-shared       front with the slice in shared memory, edges from global (4.2.3)
 *   slice-shared-tex   the same, edges from textures (seed 003 4.2.3)
 *   slice-vec          the slicing front with 16-byte loads: each thread owns 16 aligned
 *                      bytes of a row, x neighbours by warp shuffles (docs/kernels.md)
 *   general            any stencil: offsets and weights from constant memory (seed 000
 *                      KernelA), reads mirrored at the walls like the CPU engine's
 *   leggy              leggy stencils of order 2M, offsets computed (seed 000 KernelB)
 *   leggy-shared(2)    leggy stencils: an x-y tile with a halo of M in shared memory, z by a
 *                      register queue of 2M + 1 values, 1 (2) cells per thread (seeds 001, 004)
 *   shell-shared       stencils of whole shells of reach 1 to 3: shared slab, plane sums
 *   shell-vec          stencils of reach 1: slice-vec's front with plane sums
 *   fcc, fcc-vec       the fcc scheme on its folded lattice (the only kernels that run it),
 *                      one node per thread, or an aligned pair
 */
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdtd_cuda.h"

#define MAX_SUBVOLUMES 64	/* texture sub-volumes; 64 x 2^28 texels is far past any GPU */
#define AUTO_STEPS 4		/* steps each kernel is timed for by kernel auto */
#define STREAM_BYTES (1ull << 30)	/* per array of the bandwidth test: far beyond L2 */

/* ---- errors ---------------------------------------------------------------------------- */

static int check(cudaError_t e, const char *call, const char *file, int line,
		 struct rs_error *err)
{
	if (e == cudaSuccess)
		return 0;
	return rs_fail(err, RS_EDEVICE, "%s:%d: %s: %s", file, line, call, cudaGetErrorString(e));
}

/* Evaluates to 0 or RS_EDEVICE; a debug build (-DROOMSIM_SYNC_CHECK) syncs after launches. */
#define CK(call) check((call), #call, __FILE__, __LINE__, err)
#ifdef ROOMSIM_SYNC_CHECK
#define CK_LAUNCH() (CK(cudaGetLastError()) || CK(cudaDeviceSynchronize()))
#else
#define CK_LAUNCH() CK(cudaGetLastError())
#endif

/* ---- constants ------------------------------------------------------------------------- */

/* The per-kind coefficients of solver/fdtd.h (struct fdtd_coefs) in the run's precision. */
template <typename R> struct KCoefs {
	int tdiff;		/* kinds t >= tdiff sum neighbour - u (voxel.h, diff) */
	R be[VOX_MAX_KINDS];	/* the centre's multiple added to T */
	R cb[VOX_MAX_KINDS];	/* 1 - g */
	R sc[VOX_MAX_KINDS];	/* 1 / (1 + g) */
	R l2;			/* lambda^2, rounded down to R (fdtd.c) */
};

struct KDims {
	int nx, ny, nz;
	long long sy, sz;	/* strides of y and z */
	int kc;			/* slabs per z-chunk of the slicing kernels (grid z) */
	int halo;		/* padding before the room on each axis */
	int hi[3];		/* last room cell along each axis */
};

/* The stencil of the general and leggy kernels (solver/stencil.h), in stencil order. */
struct KStencil {
	int K;
	int reach;
	int off[STN_MAX_POINTS][3];
};



__constant__ KCoefs<float> k_f32;
__constant__ KCoefs<double> k_f64;
__constant__ KDims k_dims;
__constant__ KStencil k_st;
__constant__ double k_wd[STN_MAX_POINTS];

/*
 * The shell kernels (k_shells) take a stencil whose weight depends only on the shell of the
 * point, (|l1|, |l2|, |l3|) sorted, up to SH_MAX_REACH: the weight per point of shell
 * (q1, q2, q3) is at [q1][q2][q3] (0 where the stencil has none).
 */
#define SH_MAX_REACH 3
#define SH_N (SH_MAX_REACH + 1)
__constant__ double k_shd[SH_N][SH_N][SH_N];
/* The stencil's total weight in the slab at z distance d (float64's column differences). */
__constant__ double k_shc[SH_N];

/*
 * Slicing kernels march z in chunks of KCHUNK slabs, one chunk per grid z index: a block
 * marching all of z makes too few blocks for the chip, and the last wave runs mostly empty.
 * Each chunk re-reads two slabs at its start (2 / KCHUNK of the u^n traffic); on the H200,
 * chunks of 8 to 16 slabs ran fastest (docs/kernels.md).
 */
#define KCHUNK 16

/* The slabs block (blockIdx.x, blockIdx.y, blockIdx.z) marches: its heights, its chunk. */
__device__ __forceinline__ int2 block_range(const int2 *__restrict__ blockk, int kfrom, int kto)
{
	const int2 bk = blockk[blockIdx.x + gridDim.x * blockIdx.y];
	const int c0 = 1 + (int)blockIdx.z * k_dims.kc;

	return make_int2(max(max(bk.x, kfrom), c0), min(min(bk.y, kto), c0 + k_dims.kc - 1));
}

template <typename R> __device__ __forceinline__ const KCoefs<R> &kc();
template <> __device__ __forceinline__ const KCoefs<float> &kc<float>() { return k_f32; }
template <> __device__ __forceinline__ const KCoefs<double> &kc<double>() { return k_f64; }

/* ---- reads ----------------------------------------------------------------------------- */

template <typename R> __device__ __forceinline__ R tex_at(cudaTextureObject_t t, int i);
template <> __device__ __forceinline__ float tex_at<float>(cudaTextureObject_t t, int i)
{
	return tex1Dfetch<float>(t, i);
}
template <> __device__ __forceinline__ double tex_at<double>(cudaTextureObject_t t, int i)
{
	int2 v = tex1Dfetch<int2>(t, i);

	return __hiloint2double(v.y, v.x);
}

/* Plain global loads: the pointer may alias the written array, so no read-only path. */
template <typename R> struct RdGlobal {
	const R *p;
	__device__ __forceinline__ R operator()(long long n) const { return p[n]; }
};

/* Loads through the read-only data cache (seed 000 section 3.3). */
template <typename R> struct RdLdg {
	const R *__restrict__ p;
	__device__ __forceinline__ R operator()(long long n) const { return __ldg(p + n); }
};

/* Texture fetches of one sub-volume, whose first texel is cell `base`. */
template <typename R> struct RdTex {
	cudaTextureObject_t t;
	long long base;
	__device__ __forceinline__ R operator()(long long n) const
	{
		return tex_at<R>(t, (int)(n - base));
	}
};

/* ---- the cell update (solver/fdtd.h) ----------------------------------------------------- */

/*
 * What a cell's update needs besides its neighbours, loaded together with them so that no
 * load waits on another (the air bit decides only after all are in flight).
 */
template <typename R> struct Cell {
	R old;			/* u^(n-1) */
	unsigned word;		/* the 32 air bits around the cell */
};

template <typename R>
__device__ __forceinline__ Cell<R> cell_at(const R *__restrict__ b,
					   const unsigned *__restrict__ mask, long long n)
{
	Cell<R> c;

	c.old = b[n];
	c.word = __ldg(mask + (n >> 5));
	return c;
}

/*
 * The air update of solver/fdtd.h, u + ((u - u-) + l2 (S - 6 u)), s the neighbours' sum
 * ((x- + x+) + (y- + y+)) + (z- + z+) as the CPU engine sums it (cpu_step.inc, air_row):
 * exactly u for a uniform field (docs/physics.md, "A uniform field stays uniform").
 */
template <typename R> __device__ __forceinline__ R air_update(R l2, R u, R old, R s)
{
	return u + ((u - old) + l2 * (s - R(6) * u));
}

/* u + sc (cb (u - u-) + l2 L) of a cell of kind t, L the stencil's exact sum. */
template <typename R> __device__ __forceinline__ R inc_update(const KCoefs<R> &c, unsigned t,
							      R u, R old, R L)
{
	return u + c.sc[t] * (c.cb[t] * (u - old) + c.l2 * L);
}

/* The kind update of a kind t < tdiff, whose plain sum s is exact: kind_update's value. */
template <typename R>
__device__ __forceinline__ R plain_update(const KCoefs<R> &c, unsigned t, R u, R old, R s)
{
	return inc_update(c, t, u, old, s + c.be[t] * u);
}

/*
 * The update of a cell of kind t from its six neighbours (padding reads 0), cpu_step.inc's
 * kind_update: for air (a = +0, be = -6, sc = cb = 1) it rounds as air_update does, and for
 * any kind t < tdiff as plain_update (x - (+0) is x, bit for bit).
 */
template <typename R>
__device__ __forceinline__ R kind_update(const KCoefs<R> &c, unsigned t, R u, R old, R xm, R xp,
					 R ym, R yp, R zm, R zp)
{
	const R a = (int)t >= c.tdiff ? u : R(0);
	const R s = (((xm - a) + (xp - a)) + ((ym - a) + (yp - a))) + ((zm - a) + (zp - a));

	return inc_update(c, t, u, old, s + c.be[t] * u);
}

/* The update of cell n from its neighbours: air by its bit, the others by their class byte;
 * padding keeps its zeros. */
template <typename R>
__device__ __forceinline__ void update(R *__restrict__ b, const uint8_t *__restrict__ cls,
				       long long n, Cell<R> cell, R u, R xm, R xp, R ym, R yp,
				       R zm, R zp)
{
	const KCoefs<R> &c = kc<R>();
	unsigned t;

	if ((cell.word >> (n & 31)) & 1u) {
		b[n] = air_update(c.l2, u, cell.old, ((xm + xp) + (ym + yp)) + (zm + zp));
		return;
	}
	t = cls[n];
	if (t != VOX_PAD)
		b[n] = kind_update(c, t, u, cell.old, xm, xp, ym, yp, zm, zp);
}

/* ---- kernels --------------------------------------------------------------------------- */

/*
 * One thread per cell, 3-D blocks (bx, by, bz), neighbours through __ldg. Every load of the
 * cell is issued before the column test, so none waits on another.
 */
template <typename R>
__global__ void k_naive3d(const R *__restrict__ a, R *__restrict__ b,
			  const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls,
			  const int2 *__restrict__ colk, const int2 *__restrict__ blockk)
{
	const KDims d = k_dims;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int k = blockIdx.z * blockDim.z + threadIdx.z;
	const int2 bk = blockk[blockIdx.x + gridDim.x * blockIdx.y];

	if (k < max(bk.x, 1) || k > bk.y || i < 1 || i >= d.nx - 1 || j < 1 || j >= d.ny - 1)
		return;
	const long long n = i + d.sy * j + d.sz * k;
	const int2 ck = colk[i + d.nx * j];
	const Cell<R> cell = cell_at(b, mask, n);
	const R centre = __ldg(a + n);
	const R xm = __ldg(a + n - 1), xp = __ldg(a + n + 1);
	const R ym = __ldg(a + n - d.sy), yp = __ldg(a + n + d.sy);
	const R zm = __ldg(a + n - d.sz), zp = __ldg(a + n + d.sz);

	if (k >= ck.x && k <= ck.y)
		update(b, cls, n, cell, centre, xm, xp, ym, yp, zm, zp);
}

/*
 * 1-D tiling (seed 003 section 4.1): the plane (c, r) = (i, j + ny k), one thread per cell,
 * k = r / ny and j = r mod ny. SHARED keeps the block's tile in shared memory, so inner
 * threads read only z neighbours from global memory and edge threads one more value.
 */
template <typename R, bool SHARED>
__global__ void k_tiled(const R *a, R *b, const unsigned *__restrict__ mask,
			const uint8_t *__restrict__ cls, const int2 *__restrict__ colk)
{
	extern __shared__ unsigned char smem[];
	R *tile = reinterpret_cast<R *>(smem);
	const KDims d = k_dims;
	const int c = blockIdx.x * blockDim.x + threadIdx.x;
	/* rows r = j + ny k run over grid y and z: grid y alone stops at 65535 blocks */
	const int r = (blockIdx.z * gridDim.y + blockIdx.y) * blockDim.y + threadIdx.y;
	const int k = r / d.ny, j = r - k * d.ny;
	const int t = threadIdx.y * blockDim.x + threadIdx.x;
	const bool in = c < d.nx && k < d.nz;
	const long long n = c + d.sy * (long long)r;
	const bool live = in && c >= 1 && c < d.nx - 1 && j >= 1 && j < d.ny - 1 && k >= 1 &&
			  k < d.nz - 1;
	int2 ck = make_int2(1, 0);
	Cell<R> cell;
	R centre = 0, xm, xp, ym, yp;

	if (live) {	/* issue the cell's loads before any of them is needed */
		ck = colk[c + d.nx * j];
		cell = cell_at(b, mask, n);
	}
	if (SHARED) {
		tile[t] = in ? a[n] : R(0);
		__syncthreads();
		centre = tile[t];
	} else if (live) {
		centre = a[n];
	}
	if (!live || k < ck.x || k > ck.y)
		return;
	if (SHARED) {
		xm = threadIdx.x > 0 ? tile[t - 1] : a[n - 1];
		xp = threadIdx.x < blockDim.x - 1 ? tile[t + 1] : a[n + 1];
		ym = threadIdx.y > 0 ? tile[t - blockDim.x] : a[n - d.sy];
		yp = threadIdx.y < blockDim.y - 1 ? tile[t + blockDim.x] : a[n + d.sy];
	} else {
		xm = a[n - 1];
		xp = a[n + 1];
		ym = a[n - d.sy];
		yp = a[n + d.sy];
	}
	update(b, cls, n, cell, centre, xm, xp, ym, yp, a[n - d.sz], a[n + d.sz]);
}

/*
 * Slicing (seed 003 section 4.2): a 2-D thread front marches z from the block's start to
 * its stop height; below, centre and above shift through registers, so each step reads the
 * four in-plane neighbours and the cell above. Rd chooses global, __ldg or texture reads;
 * [kfrom, kto] limits the march to one texture sub-volume.
 *
 * Software pipelining: u^n above and the cell's own u^(n-1) and air bits are loaded
 * PREFETCH slabs ahead into a register queue (constant indices only, fully unrolled), so
 * each thread keeps several independent loads in flight: one thread per column has too few
 * otherwise to cover the memory latency at full bandwidth (docs/kernels.md).
 */
#define PREFETCH 4

template <typename R, typename Rd>
__global__ void k_slice(Rd rd, R *__restrict__ b, const unsigned *__restrict__ mask,
			const uint8_t *__restrict__ cls, const int2 *__restrict__ colk,
			const int2 *__restrict__ blockk, int kfrom, int kto)
{
	const KDims d = k_dims;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int2 kr = block_range(blockk, kfrom, kto);
	const int k0 = kr.x, k1 = kr.y;
	long long n;
	int2 ck;
	R below, centre, up[PREFETCH + 1];	/* up[q]: u^n at slab k + 1 + q */
	Cell<R> cq[PREFETCH + 1];		/* cq[q]: the cell at slab k + q */

	if (k0 > k1 || i < 1 || i >= d.nx - 1 || j < 1 || j >= d.ny - 1)
		return;
	ck = colk[i + d.nx * j];
	ck.x = max(ck.x, k0);
	ck.y = min(ck.y, k1);
	if (ck.x > ck.y)
		return;
	n = i + d.sy * j + d.sz * ck.x;
	below = rd(n - d.sz);
	centre = rd(n);
#pragma unroll
	for (int q = 0; q <= PREFETCH; q++) {
		const bool in = ck.x + q <= ck.y;

		up[q] = in ? rd(n + (q + 1) * d.sz) : R(0);
		cq[q] = in ? cell_at(b, mask, n + q * d.sz) : Cell<R>{};
	}
	for (int k = ck.x; k <= ck.y; k++, n += d.sz) {
		const bool in = k + PREFETCH + 1 <= ck.y;

		update(b, cls, n, cq[0], centre, rd(n - 1), rd(n + 1), rd(n - d.sy), rd(n + d.sy),
		       below, up[0]);
		below = centre;
		centre = up[0];
#pragma unroll
		for (int q = 0; q < PREFETCH; q++) {
			up[q] = up[q + 1];
			cq[q] = cq[q + 1];
		}
		up[PREFETCH] = in ? rd(n + (PREFETCH + 2) * d.sz) : R(0);
		cq[PREFETCH] = in ? cell_at(b, mask, n + (PREFETCH + 1) * d.sz) : Cell<R>{};
	}
}

/*
 * Slicing with the current slice in shared memory (seed 003 section 4.2.3): in-plane
 * neighbours inside the block come from the tile, those past its edge through Rd (global
 * for Shared Global, texture for Shared Texture Fetching).
 */
template <typename R, typename Rd>
__global__ void k_slice_shared(Rd rd, R *__restrict__ b, const unsigned *__restrict__ mask,
			       const uint8_t *__restrict__ cls, const int2 *__restrict__ colk,
			       const int2 *__restrict__ blockk, int kfrom, int kto)
{
	extern __shared__ unsigned char smem[];
	R *tile = reinterpret_cast<R *>(smem);
	const KDims d = k_dims;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int t = threadIdx.y * blockDim.x + threadIdx.x;
	const int2 kr = block_range(blockk, kfrom, kto);
	const int k0 = kr.x, k1 = kr.y;
	const bool in = i < d.nx && j < d.ny;
	const bool inner = i >= 1 && i < d.nx - 1 && j >= 1 && j < d.ny - 1;
	int2 ck = inner ? colk[i + d.nx * j] : make_int2(1, 0);
	long long n = i + d.sy * j + d.sz * (long long)k0;
	R below = 0, centre = 0;

	if (k0 > k1)	/* the whole block returns together: no barrier is skipped */
		return;
	R up[PREFETCH + 1];		/* u^n at slab k + 1 + q, as in k_slice */
	Cell<R> cq[PREFETCH + 1];	/* the cell at slab k + q */

	if (in) {
		below = rd(n - d.sz);
		centre = rd(n);
	}
#pragma unroll
	for (int q = 0; q <= PREFETCH; q++) {
		const bool ok = k0 + q <= k1;

		up[q] = in && ok ? rd(n + (q + 1) * d.sz) : R(0);
		cq[q] = inner && ok ? cell_at(b, mask, n + q * d.sz) : Cell<R>{};
	}
	for (int k = k0; k <= k1; k++, n += d.sz) {
		const bool ahead = k + PREFETCH + 1 <= k1;

		__syncthreads();	/* the previous slice's tile is no longer read */
		tile[t] = centre;
		__syncthreads();
		if (inner && k >= ck.x && k <= ck.y) {
			const R xm = threadIdx.x > 0 ? tile[t - 1] : rd(n - 1);
			const R xp = threadIdx.x < blockDim.x - 1 ? tile[t + 1] : rd(n + 1);
			const R ym = threadIdx.y > 0 ? tile[t - blockDim.x] : rd(n - d.sy);
			const R yp = threadIdx.y < blockDim.y - 1 ? tile[t + blockDim.x] : rd(n + d.sy);

			update(b, cls, n, cq[0], centre, xm, xp, ym, yp, below, up[0]);
		}
		below = centre;
		centre = up[0];
#pragma unroll
		for (int q = 0; q < PREFETCH; q++) {
			up[q] = up[q + 1];
			cq[q] = cq[q + 1];
		}
		up[PREFETCH] = in && ahead ? rd(n + (PREFETCH + 2) * d.sz) : R(0);
		cq[PREFETCH] = inner && ahead ? cell_at(b, mask, n + (PREFETCH + 1) * d.sz)
					      : Cell<R>{};
	}
}

/* 16 bytes of a row: four float or two double cells. */
template <typename R> struct Vec;
template <> struct Vec<float> {
	typedef float4 T;
	static const int N = 4;
};
template <> struct Vec<double> {
	typedef double2 T;
	static const int N = 2;
};

/* 8 bytes of a row: two float cells (shell-vec in float32, docs/kernels.md). */
template <typename R> struct Vec8;
template <> struct Vec8<float> {
	typedef float2 T;
	static const int N = 2;
};
template <> struct Vec8<double> {
	typedef double2 T;	/* 16 bytes: a double pair is the narrowest pair */
	static const int N = 2;
};

template <typename R, typename T> __device__ __forceinline__ R &elem(T &v, int q)
{
	return reinterpret_cast<R *>(&v)[q];	/* q is a constant after unrolling */
}

/*
 * The slicing front with 16-byte accesses: thread g of a row owns cells [g V, g V + V) (rows
 * are aligned, voxel.h), reads u^n below, centre, above, y-1 and y+1 and u^(n-1) as single
 * 16-byte loads, and takes its x neighbours from the next lanes by warp shuffles (one extra
 * load at each end of a warp). Loads of the next slab are issued before the current one is
 * computed. Warps march the block's height range together (the shuffles need every lane);
 * padding cells inside it keep their zeros by being written back unchanged.
 */
template <typename R>
__global__ void k_slice_vec(const R *__restrict__ a, R *__restrict__ b,
			    const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls,
			    const int2 *__restrict__ blockk)
{
	typedef typename Vec<R>::T T;
	const int V = Vec<R>::N;
	const KDims d = k_dims;
	const KCoefs<R> &c = kc<R>();
	const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const unsigned lane = threadIdx.x & 31;
	const int2 bk = block_range(blockk, 1, d.nz - 2);
	const bool in = i0 < d.nx;
	const T zero = {};

	if (bk.x > bk.y || j < 1 || j >= d.ny - 1)	/* uniform over each warp */
		return;
	long long n = i0 + d.sy * j + d.sz * (long long)bk.x;
	T below = in ? __ldg((const T *)(a + n - d.sz)) : zero;
	T centre = in ? __ldg((const T *)(a + n)) : zero;
	T up1 = in ? __ldg((const T *)(a + n + d.sz)) : zero;
	T old0 = in ? *(const T *)(b + n) : zero;
	unsigned w0 = in ? __ldg(mask + (n >> 5)) : 0;

	for (int k = bk.x; k <= bk.y; k++, n += d.sz) {
		const bool ahead = in && k + 1 <= bk.y;
		const T up2 = ahead ? __ldg((const T *)(a + n + 2 * d.sz)) : zero;
		const T old1 = ahead ? *(const T *)(b + n + d.sz) : zero;
		const unsigned w1 = ahead ? __ldg(mask + ((n + d.sz) >> 5)) : 0;
		T ym = in ? __ldg((const T *)(a + n - d.sy)) : zero;
		T yp = in ? __ldg((const T *)(a + n + d.sy)) : zero;
		R left = __shfl_up_sync(0xffffffffu, elem<R>(centre, V - 1), 1);
		R right = __shfl_down_sync(0xffffffffu, elem<R>(centre, 0), 1);
		T out = old0;

		if (lane == 0)
			left = in && i0 > 0 ? __ldg(a + n - 1) : R(0);
		if (lane == 31)
			right = i0 + V < d.nx ? __ldg(a + n + V) : R(0);
#pragma unroll
		for (int q = 0; q < V; q++) {
			const R xm = q ? elem<R>(centre, q - 1) : left;
			const R xp = q < V - 1 ? elem<R>(centre, q + 1) : right;
			const R u = elem<R>(centre, q), o = elem<R>(old0, q);

			if ((w0 >> ((n + q) & 31)) & 1u) {
				elem<R>(out, q) = air_update(
					c.l2, u, o,
					((xm + xp) + (elem<R>(ym, q) + elem<R>(yp, q))) +
						(elem<R>(below, q) + elem<R>(up1, q)));
			} else {
				const unsigned t = cls[n + q];

				if (t != VOX_PAD)
					elem<R>(out, q) = kind_update(c, t, u, o, xm, xp, elem<R>(ym, q),
								      elem<R>(yp, q), elem<R>(below, q),
								      elem<R>(up1, q));
			}
		}
		if (in)
			*(T *)(b + n) = out;
		below = centre;
		centre = up1;
		up1 = up2;
		old0 = old1;
		w0 = w1;
	}
}

/* Weight q of the stencil: the sums are in double in every precision (cpu_general.inc). */
__device__ __forceinline__ double kw(int q)
{
	return k_wd[q];
}

/*
 * The stencil sums of cpu_general.inc, exactly 0 for a uniform field: in float32 the plain
 * sum of w_k u_k from the centre on (the weights make it exact in double, stencil.c), in
 * float64 the sum of w_k (u_k - u) from k = 1. DIFF<R> says which; sterm is one term.
 */
template <typename R> struct Diff {
	static constexpr int value = sizeof(R) == sizeof(double);
};

template <typename R> __device__ __forceinline__ double sterm(double w, R v, R u)
{
	return Diff<R>::value ? w * ((double)v - (double)u) : w * (double)v;
}

/* The sum's first term: the centre's in float32, none in float64. */
template <typename R> __device__ __forceinline__ double sfirst(R u)
{
	return Diff<R>::value ? 0.0 : 0 + kw(0) * (double)u;
}

/* The mirror image of index x along axis a (docs/physics.md, "Larger stencils"). */
__device__ __forceinline__ int kfold(int a, int x)
{
	const int lo = k_dims.halo, hi = k_dims.hi[a];

	return x < lo ? 2 * lo - 1 - x : x > hi ? 2 * hi + 1 - x : x;
}

/*
 * u+ = u + sc (cb (u - u-) + lambda^2 S) of a cell with S already summed in double and rounded
 * to R once, as the CPU engine does (cpu_general.inc).
 */
template <typename R> __device__ __forceinline__ R general_update(const KCoefs<R> &c, unsigned t,
								  R u, R old, R s)
{
	if (t == VOX_AIR)	/* sc = cb = 1: the same value without the two multiplies */
		return u + ((u - old) + c.l2 * s);
	return inc_update(c, t, u, old, s);
}

template <typename R>
__device__ __forceinline__ void update_general(R *__restrict__ b,
					       const unsigned *__restrict__ mask,
					       const uint8_t *__restrict__ cls, long long n, R u,
					       double s)
{
	unsigned t = ((__ldg(mask + (n >> 5)) >> (n & 31)) & 1u) ? VOX_AIR : cls[n];

	if (t != VOX_PAD)
		b[n] = general_update(kc<R>(), t, u, b[n], (R)s);
}

/* Whether cell (i, j, k) reads past a wall with a stencil of the given reach. */
__device__ __forceinline__ bool near_wall(int i, int j, int k, int r)
{
	const KDims &d = k_dims;

	return i - d.halo < r || d.hi[0] - i < r || j - d.halo < r || d.hi[1] - j < r ||
	       k - d.halo < r || d.hi[2] - k < r;
}

/*
 * Seed 000's KernelA: one thread per cell (blocks of bx x by x 1 over x, y and z), any
 * stencil, offsets and weights from constant memory (every thread of a warp reads the same
 * entry: a broadcast), summed in stencil order as the CPU engine sums them.
 */
template <typename R>
__global__ void k_general(const R *__restrict__ a, R *__restrict__ b,
			  const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls,
			  const unsigned *__restrict__ fallback, const unsigned *__restrict__ touch)
{
	const KDims d = k_dims;
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const int k = blockIdx.z;
	const int K = k_st.K;
	double s = 0;

	if (i < d.halo || i > d.hi[0] || j < d.halo || j > d.hi[1] || k < d.halo || k > d.hi[2])
		return;
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
	if (near_wall(i, j, k, k_st.reach)) {
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
	       const uint8_t *__restrict__ cls)
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
static const void *shell_fn_r(int l)
{
	return l == 2 ? (const void *)k_shell_shared<R, RR, 2>
	       : l == 4 ? (const void *)k_shell_shared<R, RR, 4>
	       : l == SH_LOADS ? (const void *)k_shell_shared<R, RR, SH_LOADS> : NULL;
}

template <typename R>
static const void *shell_fn(int r, int l)
{
	return r == 1 ? shell_fn_r<R, 1>(l) : r == 2 ? shell_fn_r<R, 2>(l)
	       : r == 3 ? shell_fn_r<R, 3>(l) : NULL;
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
					  const uint8_t *__restrict__ cls, int chunk)
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
	unsigned word = 0;

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
		unsigned nword = 0;
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

					if (t != VOX_PAD)
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
	}
}

/* Four blocks of SV_THREADS threads per SM (64 registers, none spilled): 152 Gvox/s on the
 * H100 where the 66 registers the compiler takes unbounded ran 137 (docs/performance.md). */
#define SV_THREADS 256	/* threads per block at most of shell-vec in float32 */
__global__ void __launch_bounds__(SV_THREADS, 4)
k_shell_vec32(const float *__restrict__ a, float *__restrict__ b, const unsigned *__restrict__ mask,
	      const uint8_t *__restrict__ cls, int chunk)
{
	shell_vec<float, float>(a, b, mask, cls, chunk);
}

__global__ void k_shell_vec64(const double *__restrict__ a, double *__restrict__ b,
			      const unsigned *__restrict__ mask, const uint8_t *__restrict__ cls,
			      int chunk)
{
	shell_vec<double, double>(a, b, mask, cls, chunk);
}

static void shell_vec_launch(dim3 g, dim3 blk, const float *a, float *b, const unsigned *mask,
			     const uint8_t *cls, int chunk)
{
	k_shell_vec32<<<g, blk>>>(a, b, mask, cls, chunk);
}

static void shell_vec_launch(dim3 g, dim3 blk, const double *a, double *b,
			     const unsigned *mask, const uint8_t *cls, int chunk)
{
	k_shell_vec64<<<g, blk>>>(a, b, mask, cls, chunk);
}

/* After the update of a step: add the source's values, then record every receiver. */
#include "diamond.inc"

template <typename R>
__global__ void k_inject_record(R *u, const long long *__restrict__ src, const double *inj,
				const long long *__restrict__ rcell, const double *__restrict__ rw,
				double *out, int nrec, size_t cap, long long sample)
{
	if (inj && threadIdx.x < 8)
		u[src[threadIdx.x]] += (R)inj[threadIdx.x];
	__syncthreads();
	for (int r = threadIdx.x; r < nrec; r += blockDim.x) {
		double y = 0;

		for (int c = 0; c < 8; c++)
			y += rw[8 * r + c] * (double)u[rcell[8 * r + c]];
		out[(size_t)r * cap + sample] = y;
	}
}

/* The room cells of plane `index` along `axis`, slower in-plane axis first (fdtd_plane). */
template <typename R>
__global__ void k_plane(const R *__restrict__ u, float *__restrict__ out, int axis, int index,
			int n2, int zfast)
{
	const KDims d = k_dims;
	const int uax = axis == 2 ? 1 : 2, vax = axis == 0 ? 1 : 0;
	const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
	int ijk[3];

	if (c >= n2)
		return;
	ijk[axis] = index;
	ijk[uax] = r + d.halo;
	ijk[vax] = c + d.halo;
	out[(size_t)r * n2 + c] =
		(float)u[zfast ? ijk[2] + (long long)d.nz * (ijk[0] + (long long)d.nx * ijk[1])
			       : ijk[0] + d.sy * ijk[1] + d.sz * ijk[2]];
}

/*
 * The fcc scheme (solver/cpu_fcc.inc, whose expression and order it follows): one thread per
 * folded column (i', j), marching a chunk of slabs; node i = 2 i' + p with p = (j + k) & 1.
 * Away from the walls the twelve reads are direct, through the read-only cache; the nodes on
 * the walls mirror their reads about them. k_dims holds the folded strides.
 */
__constant__ int k_fcc_order[12][3] = {
	{ -1, -1, 0 }, { 1, -1, 0 }, { -1, 1, 0 }, { 1, 1, 0 },
	{ -1, 0, -1 }, { 1, 0, -1 }, { -1, 0, 1 }, { 1, 0, 1 },
	{ 0, -1, -1 }, { 0, 1, 1 },  { 0, -1, 1 }, { 0, 1, -1 },
};

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

/* Node (i, j, k) at folded index n, parity p, of a room cell: direct or mirrored. */
template <typename R>
__device__ __forceinline__ void fcc_node(const R *__restrict__ a, R *__restrict__ b,
					 const uint8_t *__restrict__ cls, int i, int j, int k,
					 long long n, int p)
{
	const KDims &d = k_dims;
	const KCoefs<R> &c = kc<R>();

	if (i > d.halo && i < d.hi[0] && j > d.halo && j < d.hi[1] && k > d.halo && k < d.hi[2]) {
		const R *x = a + n + p - 1;	/* the (i - 1) reads of the other parity */
		const R s = ((__ldg(x - d.sy) + __ldg(x + 1 - d.sy)) +
			     (__ldg(x + d.sy) + __ldg(x + 1 + d.sy))) +
			    ((__ldg(x - d.sz) + __ldg(x + 1 - d.sz)) +
			     (__ldg(x + d.sz) + __ldg(x + 1 + d.sz))) +
			    ((__ldg(a + n - d.sy - d.sz) + __ldg(a + n + d.sy + d.sz)) +
			     (__ldg(a + n + d.sz - d.sy) + __ldg(a + n + d.sy - d.sz)));

		b[n] = fcc_air(c.l2, __ldg(a + n), b[n], s);
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
			fcc_node(a, b, cls, i, j, k, ip + d.sy * j + d.sz * k, p);
	}
}

/*
 * fcc-vec: the same with two folded nodes per thread (i', i' + 1 with i' even, an aligned
 * pair), so that the centre, u^(n-1), the four diagonal rows and the store are single 8-byte
 * (float) or 16-byte (double) accesses, and each row of the other parity is one pair plus
 * one value: 14 loads for two nodes instead of 28. Pairs off the air take fcc_node.
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

		if (i > d.halo && i + 2 < d.hi[0] && j > d.halo && j < d.hi[1] && k > d.halo &&
		    k < d.hi[2]) {
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
			const R s0 = ((lo0[0] + hi0[0]) + (lo0[1] + hi0[1])) +
				     ((lo0[2] + hi0[2]) + (lo0[3] + hi0[3])) +
				     ((mm.x + pp.x) + (mp.x + pm.x));
			const R s1 = ((lo1[0] + hi1[0]) + (lo1[1] + hi1[1])) +
				     ((lo1[2] + hi1[2]) + (lo1[3] + hi1[3])) +
				     ((mm.y + pp.y) + (mp.y + pm.y));

			old.x = fcc_air(c.l2, ctr.x, old.x, s0);
			old.y = fcc_air(c.l2, ctr.y, old.y, s1);
			*(P *)(b + n) = old;
			continue;
		}
		for (int m = 0; m < 2; m++)
			if (ip + m < d.nx && i + 2 * m >= d.halo && i + 2 * m <= d.hi[0])
				fcc_node(a, b, cls, i + 2 * m, j, k, n + m, p);
	}
}

/* The fcc field at room cell (i, j, k) of a plane across axis (fdtd.c, fcc_plane). */
template <typename R>
__global__ void k_plane_fcc(const R *__restrict__ u, float *__restrict__ out, int axis,
			    int index, int n2)
{
	const KDims d = k_dims;
	const int uax = axis == 2 ? 1 : 2, vax = axis == 0 ? 1 : 0;
	const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
	int ijk[3];
	R v[4];
	int q = 0;

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

			at[a] = fcc_mirror(at[a] + s, a);
			v[q++] = u[fcc_at(at[0], at[1], at[2])];
		}
	out[(size_t)r * n2 + c] = (float)(((v[0] + v[1]) + (v[2] + v[3])) * (R)0.25);
}

template <typename R> __global__ void k_noise(R *u, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;

		h ^= h >> 15;
		h *= 2246822519u;
		h ^= h >> 13;
		u[i] = (R)((double)(h & 0xffffff) / 16777216.0 - 0.5) * (R)1e-3;
	}
}

__global__ void k_copy(const float4 *__restrict__ a, float4 *__restrict__ c, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		c[i] = a[i];
}

__global__ void k_add(const float4 *__restrict__ a, const float4 *__restrict__ b,
		      float4 *__restrict__ c, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float4 x = a[i], y = b[i];

		c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
	}
}

/* ---- the engine ------------------------------------------------------------------------ */

struct subvolume {
	int k0, k1;			/* slabs updated from this texture */
	long long base;			/* first cell the texture holds */
	cudaTextureObject_t tex[2];	/* over u[0] and u[1] */
};

struct cuda_engine {
	int precision;
	enum kernel_id kernel;
	int block[2];
	struct vox_plan plan;
	KDims dims;
	KStencil st;			/* the stencil of the general and leggy kernels */
	double wd[STN_MAX_POINTS];
	int leggy_m;			/* M of a leggy stencil, 0 for others */
	int shell_r;			/* reach of a stencil the shell kernels run, else 0 */
	double shd[SH_N][SH_N][SH_N];	/* its weight per point of each shell */
	double shc[SH_N];		/* its weight in the slab at z distance d (k_shc) */
	int general;			/* 1: a stencil other than the 7-point one */
	int fcc;			/* 1: the fcc scheme: folded fields, kernel fcc only */
	size_t values;			/* entries of each field (folded: half the cells) */
	void *u[2];			/* the two levels */
	int cur;			/* u[cur] is u^n */
	unsigned *mask;			/* air bit per cell */
	uint8_t *cls;			/* class byte per cell */
	unsigned *fallback;		/* carved rooms: cells taking the 7-point rule, or NULL */
	unsigned *touch;		/* carved rooms: cells with edges to fallback cells */
	int2 *colk;			/* per column (kstart, kstop) */
	int2 *blockk;			/* per (bx, by) block of columns: min kstart, max kstop */
	int2 *blockk3;			/* the same for naive3d's block footprint */
	int2 *blockkv;			/* the same for slice-vec's (V times wider) footprint */
	dim3 grid2, grid3, block3, gridv;
	struct subvolume sub[MAX_SUBVOLUMES];
	int nsub;
	KCoefs<float> cf;
	KCoefs<double> cd;
	long long *src;			/* 8 cells of the source */
	double *inj;			/* nsteps x 8 values */
	size_t inj_steps;
	long long *rcell;		/* 8 cells per receiver */
	double *rw;			/* 8 weights per receiver */
	long long *h_rcell;
	double *h_rw;
	int nrec;
	double *rec;			/* device samples, nrec x cap */
	double *h_rec;			/* host samples, nrec x cap */
	float *stage;			/* device staging of snapshot planes */
	double auto_rate[NKERNELS];	/* kernel auto: each kernel's voxel updates/s */
	/* the diamond kernel (diamond.inc) */
	int zfast;			/* 1: the fields are laid out z fastest (diamond runs) */
	int dts, nt;			/* its tile size and tower height; 0 = default */
	int dt_zlo, dt_zhi;		/* z range of the room's cells */
	uint8_t *dt_cls;		/* class bytes, z fastest; NULL: diamond cannot run */
	int2 *dt_probez;		/* per column: z range of its source and receiver cells */
	int2 *dt_xr;			/* per row y: x range of its room columns */
	int nsm;			/* the device's multiprocessors */
	int2 *h_probez;			/* the same on the host */
	long long h_src[8];		/* the source's cells (x fastest, as cuda_set_source) */
	long long *dt_src, *dt_probe;	/* the source's and receivers' cells, z fastest */
	double *dt_pval;		/* receiver cells' values per level of a sweep */
	size_t dt_pval_n;		/* doubles dt_pval holds */
	int dt_dirty;			/* the source or receivers changed since the last sweep */
	unsigned *dt_flags;		/* k_dt7: per tower, the epoch of the sweep that ran it */
	size_t dt_nflags;
	int *dt_ticket;			/* k_dt7's ticket counter */
	unsigned dt_epoch;		/* the last sweep's */
	size_t stage_bytes;
	size_t cap;
	long step;
};

static const struct cuda_engine *uploaded;	/* whose constants are in constant memory */

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

size_t cuda_memory(const struct vox_plan *p, int precision, enum kernel_id k, int nrec,
		   size_t nsamples, size_t nsteps)
{
	const size_t cols = (size_t)p->n[0] * p->n[1];
	size_t diamond = 0;

	if (p->fcc)	/* folded fields and class bytes */
		return (2 * (size_t)precision + 1) * (p->cells / 2) +
		       (size_t)nrec * nsamples * sizeof(double) + nsteps * 8 * sizeof(double);
	/* the diamond kernel's class bytes, probe ranges, row ranges, receiver values per level
	 * and tower flags */
	if (k == KERNEL_DIAMOND || k == KERNEL_AUTO)
		diamond = p->cells + cols * sizeof(int2) + p->n[1] * sizeof(int2) +
			  (size_t)nrec * 8 * DT_MAX_NT * 8 +
			  sizeof(unsigned) * (p->n[0] + DT_MAX_NT) * (p->n[1] / 2 + 2);
	return 2 * p->cells * (size_t)precision + p->cells + (p->cells / 32 + 1) * 4 +
	       2 * sizeof(int2) * cols + (size_t)nrec * nsamples * sizeof(double) +
	       nsteps * 8 * sizeof(double) + diamond;
}

template <typename R> static void fill_coefs(KCoefs<R> *k, const struct fdtd_coefs *c)
{
	k->tdiff = c->first_diff;
	for (int t = 0; t < VOX_MAX_KINDS; t++) {
		k->be[t] = (R)c->be[t];
		k->cb[t] = (R)c->cb[t];
		k->sc[t] = (R)c->sc[t];
	}
	k->l2 = (R)c->l2;
}

static int upload(struct cuda_engine *e, struct rs_error *err)
{
	if (uploaded == e)
		return 0;
	if (CK(cudaMemcpyToSymbol(k_dims, &e->dims, sizeof(e->dims))) ||
	    CK(cudaMemcpyToSymbol(k_st, &e->st, sizeof(e->st))) ||
	    CK(cudaMemcpyToSymbol(k_wd, e->wd, sizeof(e->wd))) ||
	    CK(cudaMemcpyToSymbol(k_shd, e->shd, sizeof(e->shd))) ||
	    CK(cudaMemcpyToSymbol(k_shc, e->shc, sizeof(e->shc))) ||
	    CK(e->precision == 4 ? cudaMemcpyToSymbol(k_f32, &e->cf, sizeof(e->cf))
				 : cudaMemcpyToSymbol(k_f64, &e->cd, sizeof(e->cd))))
		return RS_EDEVICE;
	uploaded = e;
	return 0;
}

/* Per block of bx x by columns: the lowest start and highest stop height (seed 003 4.3.3). */
static int block_heights(const struct vox_grid *g, int bx, int by, int2 **out, dim3 *grid,
			 struct rs_error *err)
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
			const size_t c = (size_t)i + (size_t)p->n[0] * j;

			if (g->kstart[c] > g->kstop[c])
				continue;
			v->x = min(v->x, g->kstart[c]);
			v->y = max(v->y, g->kstop[c]);
		}
	*grid = dim3(gx, gy, 1);
	rc = CK(cudaMalloc(out, sizeof(int2) * (size_t)gx * gy)) ||
	     CK(cudaMemcpy(*out, h, sizeof(int2) * (size_t)gx * gy, cudaMemcpyHostToDevice));
	free(h);
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
	for (size_t n = 0; n < p->cells; n++)
		if (g->cls[n] == VOX_AIR)
			mask[n >> 5] |= 1u << (n & 31);
	for (size_t c = 0; c < cols; c++)
		colk[c] = make_int2(g->kstart[c], g->kstop[c]);
	rc = RS_EDEVICE;
	if (CK(cudaMalloc(&e->mask, words * sizeof(unsigned))) ||
	    CK(cudaMalloc(&e->cls, p->cells)) || CK(cudaMalloc(&e->colk, cols * sizeof(int2))) ||
	    CK(cudaMemcpy(e->mask, mask, words * sizeof(unsigned), cudaMemcpyHostToDevice)) ||
	    CK(cudaMemcpy(e->cls, g->cls, p->cells, cudaMemcpyHostToDevice)) ||
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

/* The fcc grid: the class bytes of its nodes, folded like the fields (voxel.h). */
static int upload_folded(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	uint8_t *f = (uint8_t *)malloc(e->values);
	int rc;

	if (!f)
		return rs_fail(err, RS_ENOMEM, "out of host memory preparing the grid");
	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = (j + k) & 1; i < p->n[0]; i += 2)
				f[vox_folded(p, i, j, k)] = g->cls[vox_index(p, i, j, k)];
	rc = CK(cudaMalloc(&e->cls, e->values)) ||
	     CK(cudaMemcpy(e->cls, f, e->values, cudaMemcpyHostToDevice)) ? RS_EDEVICE : 0;
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
	const long long sz = e->dims.sz;
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

	return e->precision == 4 ? shell_fn<float>(r, l) : shell_fn<double>(r, l);
}

/* The shell kernel of reach r; -1 where it does not fit (shell_fits). */
template <typename R>
static int launch_shell(const struct cuda_engine *e, int r, dim3 blk, const R *a, R *b)
{
	const dim3 g((e->plan.room[0] + blk.x - 1) / blk.x, (e->plan.room[1] + blk.y - 1) / blk.y,
		     (e->plan.room[2] + SH_CHUNK - 1) / SH_CHUNK);
	const size_t smem = 2 * sizeof(R) * (blk.x + 2 * r) * (blk.y + 2 * r);
	const unsigned *mask = e->mask;
	const uint8_t *cls = e->cls;
	void *args[] = { &a, &b, &mask, &cls };

	if (!shell_fits(e, r))
		return -1;
	/* CK_LAUNCH sees its error */
	(void)cudaLaunchKernel(shell_instance(e, r), g, blk, args, smem, 0);
	return 0;
}

/* One update of the whole grid by kernel kern: u[cur] is read, u[1 - cur] written. */
template <typename R>
static int launch_update(struct cuda_engine *e, enum kernel_id kern, struct rs_error *err)
{
	const R *a = (const R *)e->u[e->cur];
	R *b = (R *)e->u[1 - e->cur];
	const dim3 blk(e->block[0], e->block[1]);
	const size_t tile = sizeof(R) * e->block[0] * e->block[1];
	const int kz = e->plan.n[2] - 2;

	if (!cuda_kernel_runs(e, kern))
		return rs_fail(err, RS_EINPUT, "kernel %s cannot run %s", kernel_names[kern],
			       e->general ? "this stencil (valid: general, or leggy for leggy "
					    "stencils)" : "the 7-point stencil (valid: the others)");
	switch (kern) {
	case KERNEL_GENERAL:
	case KERNEL_LEGGY: {
		const dim3 g((e->plan.n[0] + blk.x - 1) / blk.x, (e->plan.n[1] + blk.y - 1) / blk.y,
			     e->plan.n[2]);

		if (kern == KERNEL_GENERAL)
			k_general<R><<<g, blk>>>(a, b, e->mask, e->cls, e->fallback, e->touch);
		else if (launch_leggy<R>(e->leggy_m, g, blk, a, b, e->mask, e->cls))
			return rs_fail(err, RS_EINPUT, "kernel leggy runs leggy stencils of order 2 "
				       "to 16 only");
		break;
	}
	case KERNEL_LEGGY_SHARED:
	case KERNEL_LEGGY_SHARED2:
		if ((kern == KERNEL_LEGGY_SHARED ? launch_leggy_shared<R, 1>(e, e->leggy_m, blk, a, b)
						     : launch_leggy_shared<R, 2>(e, e->leggy_m, blk, a, b)))
			return rs_fail(err, RS_EINPUT, "kernel %s runs leggy orders 4 to 16",
				       kernel_names[kern]);
		break;
	case KERNEL_SHELL_VEC: {
		const int span = (int)blk.x * Vec8<R>::N;
		/* chunks of at most SV_CHUNK slabs, as equal as they can be */
		const int nchunk = (e->plan.room[2] + SV_CHUNK - 1) / SV_CHUNK;
		const int chunk = (e->plan.room[2] + nchunk - 1) / nchunk;
		const dim3 g((e->plan.n[0] + span - 1) / span, (e->plan.room[1] + blk.y - 1) / blk.y,
			     (e->plan.room[2] + chunk - 1) / chunk);

		if (e->shell_r != 1)
			return rs_fail(err, RS_EINPUT, "kernel shell-vec runs stencils of reach 1");
		if (sizeof(R) == sizeof(float) && blk.x * blk.y > SV_THREADS)
			return rs_fail(err, RS_EINPUT, "kernel shell-vec runs float32 with blocks of "
				       "at most %d threads, not %u x %u", SV_THREADS, blk.x, blk.y);
		shell_vec_launch(g, blk, a, b, e->mask, e->cls, chunk);
		break;
	}
	case KERNEL_SHELL_SHARED:
		if (launch_shell<R>(e, e->shell_r, blk, a, b))
			return rs_fail(err, RS_EINPUT, "kernel %s runs stencils of reach 1 to %d "
				       "with blocks of at most %d threads and (x + 2 reach)(y + 2 "
				       "reach) <= %d x y", kernel_names[kern], SH_MAX_REACH,
				       SH_THREADS, SH_LOADS);
		break;
	case KERNEL_FCC:
	case KERNEL_FCC_VEC: {
		const int per = kern == KERNEL_FCC ? 1 : 2;	/* nodes per thread */
		const dim3 g((e->dims.nx + per * blk.x - 1) / (per * blk.x),
			     (e->plan.n[1] + blk.y - 1) / blk.y,
			     (e->plan.room[2] + KCHUNK - 1) / KCHUNK);

		if (kern == KERNEL_FCC)
			k_fcc<R><<<g, blk>>>(a, b, e->cls);
		else
			k_fcc_vec<R><<<g, blk>>>(a, b, e->cls);
		break;
	}
	case KERNEL_NAIVE3D:
		k_naive3d<R><<<e->grid3, e->block3>>>(a, b, e->mask, e->cls, e->colk, e->blockk3);
		break;
	case KERNEL_TILED_GLOBAL:
	case KERNEL_TILED_SHARED: {
		const long long rows = ((long long)e->plan.n[1] * e->plan.n[2] + blk.y - 1) / blk.y;
		const unsigned gz = (unsigned)((rows + 65534) / 65535);
		const dim3 g((e->plan.n[0] + blk.x - 1) / blk.x, (unsigned)((rows + gz - 1) / gz), gz);

		if (kern == KERNEL_TILED_GLOBAL)
			k_tiled<R, false><<<g, blk>>>(a, b, e->mask, e->cls, e->colk);
		else
			k_tiled<R, true><<<g, blk, tile>>>(a, b, e->mask, e->cls, e->colk);
		break;
	}
	case KERNEL_SLICE_NAIVE:
		k_slice<R, RdGlobal<R> ><<<e->grid2, blk>>>(RdGlobal<R>{ a }, b, e->mask, e->cls,
							   e->colk, e->blockk, 1, kz);
		break;
	case KERNEL_SLICE_LDG:
		k_slice<R, RdLdg<R> ><<<e->grid2, blk>>>(RdLdg<R>{ a }, b, e->mask, e->cls, e->colk,
							e->blockk, 1, kz);
		break;
	case KERNEL_SLICE_SHARED:
		k_slice_shared<R, RdGlobal<R> ><<<e->grid2, blk, tile>>>(
			RdGlobal<R>{ a }, b, e->mask, e->cls, e->colk, e->blockk, 1, kz);
		break;
	case KERNEL_SLICE_VEC:
		k_slice_vec<R><<<e->gridv, blk>>>(a, b, e->mask, e->cls, e->blockkv);
		break;
	case KERNEL_SLICE_TEXTURE:
	case KERNEL_SLICE_SHARED_TEX:
		for (int v = 0; v < e->nsub; v++) {
			const RdTex<R> rd = { e->sub[v].tex[e->cur], e->sub[v].base };

			if (kern == KERNEL_SLICE_TEXTURE)
				k_slice<R, RdTex<R> ><<<e->grid2, blk>>>(rd, b, e->mask, e->cls, e->colk,
									e->blockk, e->sub[v].k0,
									e->sub[v].k1);
			else
				k_slice_shared<R, RdTex<R> ><<<e->grid2, blk, tile>>>(
					rd, b, e->mask, e->cls, e->colk, e->blockk, e->sub[v].k0,
					e->sub[v].k1);
			if (CK_LAUNCH())
				return RS_EDEVICE;
		}
		break;
	default:
		return rs_fail(err, RS_EINTERNAL, "no kernel %d", (int)kern);
	}
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

static int update_once(struct cuda_engine *e, enum kernel_id kern, struct rs_error *err)
{
	return e->precision == 4 ? launch_update<float>(e, kern, err)
				 : launch_update<double>(e, kern, err);
}

/* ---- the diamond kernel's host side (diamond.inc) ---------------------------------------- */

#define DT_DTS_7 2	/* default tile size of the 7-point scheme */
#define DT_NT 64	/* default tower height of the leggy stencils */
#define DT_NT_WIDE 256	/* of the 7-point scheme where a stage has a tower per multiprocessor */
#define DT_NT_NARROW 32	/* and where it has fewer (docs/performance.md, "DiamondTorre") */

static int floor_div(int a, int b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The kernel of reach M and tile size dts; NULL where none is built. */
template <typename R> static const void *dt_fn(int M, int dts)
{
	switch (M * 8 + dts) {
	case 9: return (const void *)k_dt7<R, 1>;
	case 10: return (const void *)k_dt7<R, 2>;
	case 11: return (const void *)k_dt7<R, 3>;
	case 12: return (const void *)k_dt7<R, 4>;
	case 17: return (const void *)k_diamond<R, 2, 1>;
	case 18: return (const void *)k_diamond<R, 2, 2>;
	case 25: return (const void *)k_diamond<R, 3, 1>;
	case 33: return (const void *)k_diamond<R, 4, 1>;
	default: return NULL;
	}
}

static const void *dt_kernel(const struct cuda_engine *e, int dts)
{
	return e->precision == 4 ? dt_fn<float>(e->leggy_m, dts) : dt_fn<double>(e->leggy_m, dts);
}

/* A tile size and tower height as asked (0: the default). */
static int dt_dts_of(const struct cuda_engine *e, int dts)
{
	return dts ? dts : e->leggy_m == 1 ? DT_DTS_7 : 1;
}

static int dt_dts(const struct cuda_engine *e)
{
	return dt_dts_of(e, e->dts);
}

/* The first and last tower of the stages of parity par whose tiles (half-size N) meet the
 * room's rows. */
static void dt_trange(const struct cuda_engine *e, int N, int par, int *t_lo, int *t_hi)
{
	*t_lo = floor_div(e->plan.halo - (N - 1) - N * par, 2 * N);
	*t_hi = floor_div(e->dims.hi[1] + N - 1 - N * par, 2 * N);
}

/* Towers in the stages of tile size dts (the larger count of the two parities). */
static int dt_towers(const struct cuda_engine *e, int dts)
{
	int n = 0, t_lo, t_hi;

	for (int par = 0; par < 2; par++) {
		dt_trange(e, e->leggy_m * dts, par, &t_lo, &t_hi);
		n = max(n, t_hi - t_lo + 1);
	}
	return n;
}

/*
 * The default tower height of the 7-point scheme: tall where every multiprocessor has a
 * tower of the stage to run, since a tower's start costs a wait and a load of its window;
 * short where the stages are narrower, since the sweep then waits on the chain of towers
 * from stage to stage, whose length grows with nt (docs/performance.md measures both).
 */
static int dt_nt_of(const struct cuda_engine *e, int dts, int nt)
{
	if (nt)
		return nt;
	if (e->leggy_m != 1)
		return DT_NT;
	return dt_towers(e, dt_dts_of(e, dts)) >= e->nsm ? DT_NT_WIDE : DT_NT_NARROW;
}

static int dt_nt(const struct cuda_engine *e)
{
	return dt_nt_of(e, e->dts, e->nt);
}

/* One thread per z cell of the room, in whole warps. */
static int dt_threads(const struct cuda_engine *e)
{
	return (e->dt_zhi - e->dt_zlo + 32) / 32 * 32;
}

/* The z exchange: one value per tile column and thread, with M ghosts at each end; k_dt7
 * keeps two, at an odd stride. */
static size_t dt_smem(const struct cuda_engine *e, int dts)
{
	const int N = e->leggy_m * dts;

	if (e->leggy_m == 1)	/* and the staging of the edge */
		return (size_t)2 * (dt7_stride(N) * (dt_threads(e) + 2) +
				    dt7_estride(N) * dt_threads(e)) * e->precision;
	return (size_t)2 * N * N * (dt_threads(e) + 2 * e->leggy_m) * e->precision;
}

/* 0 when the diamond kernel can run tile size dts and towers of nt levels here; else 1 and
 * why, with what would be valid, in why. */
static int dt_check(const struct cuda_engine *e, int dts, int nt, char *why, size_t len)
{
	struct cudaFuncAttributes a;
	int optin = 0;
	const void *fn;

	if (e->fcc || e->leggy_m < 1 || e->leggy_m > 4 || (e->leggy_m > 1 && e->fallback))
		return snprintf(why, len, "it runs the 7-point scheme in any room and leggy "
				"stencils of order 4, 6 and 8 in a box"), 1;
	if (!e->dt_cls)
		return snprintf(why, len, "the room has no cells"), 1;
	if (!(fn = dt_kernel(e, dts)))
		return snprintf(why, len, "no tile size %d for order %d (valid dts: 1 to 4 for "
				"order 2, 1 or 2 for order 4, 1 for orders 6 and 8)", dts,
				2 * e->leggy_m), 1;
	if (nt < 1 || nt > DT_MAX_NT)
		return snprintf(why, len, "nt %d (valid: 1 to %d)", nt, DT_MAX_NT), 1;
	if (cudaFuncGetAttributes(&a, fn) != cudaSuccess ||
	    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) !=
		    cudaSuccess)
		return snprintf(why, len, "the device does not report the kernel's resources"), 1;
	if (dt_threads(e) > a.maxThreadsPerBlock)
		return snprintf(why, len, "the room is %d cells tall, and a block of tile size %d "
				"holds %d (one thread per z cell; valid: a smaller dts, or a coarser "
				"grid)", e->dt_zhi - e->dt_zlo + 1, dts, a.maxThreadsPerBlock), 1;
	if (dt_smem(e, dts) > (size_t)optin)
		return snprintf(why, len, "tile size %d needs %zu bytes of shared memory, the "
				"device has %d (valid: a smaller dts)", dts, dt_smem(e, dts), optin), 1;
	return 0;
}

/* The class bytes laid out z fastest. */
__global__ void k_dt_cls(const uint8_t *__restrict__ cls, uint8_t *__restrict__ out, size_t n)
{
	const KDims &d = k_dims;

	for (size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x; c < n;
	     c += (size_t)gridDim.x * blockDim.x) {
		const size_t i = c % d.nx, j = c / d.nx % d.ny, k = c / ((size_t)d.nx * d.ny);

		out[k + d.nz * (i + d.nx * j)] = cls[c];
	}
}

/* The diamond kernel's tables: its class bytes, the room's z range, each row's x range,
 * empty probe ranges. */
static int dt_prepare(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	const size_t cols = (size_t)p->n[0] * p->n[1];
	int2 *xr;
	int rc;

	e->dt_zlo = INT_MAX;
	e->dt_zhi = -1;
	xr = (int2 *)malloc(p->n[1] * sizeof(int2));
	if (!(e->h_probez = (int2 *)malloc(cols * sizeof(int2))) || !xr) {
		free(xr);
		return rs_fail(err, RS_ENOMEM, "out of host memory preparing the grid");
	}
	for (int j = 0; j < p->n[1]; j++)
		xr[j] = make_int2(INT_MAX, INT_MIN);
	for (size_t c = 0; c < cols; c++) {
		e->h_probez[c] = make_int2(INT_MAX, INT_MIN);
		if (g->kstart[c] <= g->kstop[c]) {
			int2 *r = &xr[c / p->n[0]];

			e->dt_zlo = min(e->dt_zlo, g->kstart[c]);
			e->dt_zhi = max(e->dt_zhi, g->kstop[c]);
			r->x = min(r->x, (int)(c % p->n[0]));
			r->y = max(r->y, (int)(c % p->n[0]));
		}
	}
	rc = 0;
	if (e->dt_zhi >= 0 &&
	    (upload(e, err) || CK(cudaMalloc(&e->dt_cls, p->cells)) ||
	     CK(cudaMalloc(&e->dt_probez, cols * sizeof(int2))) ||
	     CK(cudaMemcpy(e->dt_probez, e->h_probez, cols * sizeof(int2),
			   cudaMemcpyHostToDevice)) ||
	     CK(cudaMalloc(&e->dt_xr, p->n[1] * sizeof(int2))) ||
	     CK(cudaMemcpy(e->dt_xr, xr, p->n[1] * sizeof(int2), cudaMemcpyHostToDevice))))
		rc = RS_EDEVICE;
	free(xr);
	if (rc || e->dt_zhi < 0)
		return rc;
	k_dt_cls<<<1024, 256>>>(e->cls, e->dt_cls, p->cells);
	e->dt_dirty = 1;
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

/* Cell n of the x-fastest grid in the z-fastest layout; its column and z. */
static long long dt_index(const struct cuda_engine *e, long long n, int *col, int *z)
{
	const long long nx = e->plan.n[0], ny = e->plan.n[1], i = n % nx, j = n / nx % ny;

	*col = (int)(i + nx * j);
	*z = (int)(n / (nx * ny));
	return *z + e->plan.n[2] * (i + nx * j);
}

/* After the source or the receivers changed: their cells, z fastest, and the z range of such
 * cells in each column, which makes them slow cells of the kernel. */
static int dt_probes(struct cuda_engine *e, struct rs_error *err)
{
	const size_t cols = (size_t)e->plan.n[0] * e->plan.n[1];
	const int nprobe = 8 * e->nrec;
	long long *zc;
	int *colof, rc = RS_EDEVICE;

	if (!e->dt_dirty)
		return 0;
	zc = (long long *)malloc(sizeof(long long) * (8 + nprobe));
	colof = (int *)malloc(sizeof(int) * (8 + nprobe));
	if (!zc || !colof) {
		free(zc);
		free(colof);
		return rs_fail(err, RS_ENOMEM, "out of memory for the receiver cells");
	}
	for (int q = 0; q < 8 + nprobe; q++) {
		const long long n = q < 8 ? e->h_src[q] : e->h_rcell[q - 8];
		int z;
		int2 *pz;

		zc[q] = dt_index(e, n, &colof[q], &z);
		pz = &e->h_probez[colof[q]];
		pz->x = min(pz->x, z);
		pz->y = max(pz->y, z);
	}
	cudaFree(e->dt_src);
	cudaFree(e->dt_probe);
	cudaFree(e->dt_pval);
	e->dt_src = e->dt_probe = NULL;
	e->dt_pval = NULL;
	e->dt_pval_n = (size_t)nprobe * dt_nt(e);
	if (CK(cudaMemcpy(e->dt_probez, e->h_probez, cols * sizeof(int2), cudaMemcpyHostToDevice)) ||
	    CK(cudaMalloc(&e->dt_src, 8 * sizeof(long long))) ||
	    CK(cudaMemcpy(e->dt_src, zc, 8 * sizeof(long long), cudaMemcpyHostToDevice)) ||
	    (nprobe && (CK(cudaMalloc(&e->dt_probe, nprobe * sizeof(long long))) ||
			CK(cudaMemcpy(e->dt_probe, zc + 8, nprobe * sizeof(long long),
				      cudaMemcpyHostToDevice)) ||
			CK(cudaMalloc(&e->dt_pval, e->dt_pval_n * sizeof(double))))))
		goto out;
	e->dt_dirty = 0;
	rc = 0;
out:
	for (int q = 0; q < 8 + nprobe; q++)	/* the host table stays empty between calls */
		e->h_probez[colof[q]] = make_int2(INT_MAX, INT_MIN);
	free(zc);
	free(colof);
	return rc;
}

/*
 * k_dt7's launch for stages s_hi down to s_lo: a ticket per tower slot of every stage, flags
 * for as many (grown and zeroed when short; each sweep raises them to a new epoch), and as
 * many persistent blocks as fit on the device at once.
 */
template <typename R>
static int dt7_launch(struct cuda_engine *e, DtArgs<R> &g, const void *fn, int s_hi, int s_lo,
		      size_t smem, struct rs_error *err)
{
	const int N = dt_dts(e);
	void *args[] = { &g };
	int per = 0;
	size_t need;

	for (int par = 0; par < 2; par++)
		dt_trange(e, N, par, &g.tlo[par], &g.thi[par]);
	for (int y = -N; y <= N; y++)
		for (int x = -N; x <= N + 1; x++) {
			const int k = (y + N) * (2 * N + 2) + x + N;

			g.eo[k] = (long long)e->plan.n[2] * (x + (long long)e->plan.n[0] * y);
			g.ro[k] = g.eo[k] * e->precision;
			g.po[k] = (long long)sizeof(int2) * (x + (long long)e->plan.n[0] * y);
		}
	g.s_hi = s_hi;
	g.ntw = dt_towers(e, N);
	g.ntow = (s_hi - s_lo + 1) * g.ntw;
	need = (size_t)g.ntow;
	if (e->dt_nflags < need || e->dt_epoch == UINT_MAX) {
		cudaFree(e->dt_flags);
		e->dt_flags = NULL;
		e->dt_nflags = 0;
		if (CK(cudaMalloc(&e->dt_flags, need * sizeof(unsigned))) ||
		    CK(cudaMemset(e->dt_flags, 0, need * sizeof(unsigned))))
			return RS_EDEVICE;
		e->dt_nflags = need;
		e->dt_epoch = 0;
	}
	if (!e->dt_ticket && CK(cudaMalloc(&e->dt_ticket, sizeof(int))))
		return RS_EDEVICE;
	g.flags = e->dt_flags;
	g.ticket = e->dt_ticket;
	g.epoch = ++e->dt_epoch;
	if (CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, dt_threads(e), smem)) ||
	    CK(cudaMemsetAsync(e->dt_ticket, 0, sizeof(int))))
		return RS_EDEVICE;
	if (per < 1)
		return rs_fail(err, RS_EDEVICE, "the diamond kernel does not fit on a multiprocessor");
	return CK(cudaLaunchKernel(fn, dim3(min(g.ntow, e->nsm * per)), dim3(dt_threads(e)), args, smem,
				   0));
}

/*
 * One sweep of nlev levels: every stage from +x to -x (seed 002 section 6), one launch each,
 * or for the 7-point scheme one launch of persistent blocks (k_dt7); then, with probes, the
 * receivers' samples of those levels.
 */
template <typename R>
static int dt_sweep(struct cuda_engine *e, int nlev, int probes, struct rs_error *err)
{
	const int M = e->leggy_m, dts = dt_dts(e), N = M * dts;
	const int s_hi = floor_div(e->dims.hi[0] + N - 1, N);
	const int s_lo = floor_div(e->plan.halo - N - M * (nlev - 1), N);
	const size_t smem = dt_smem(e, dts);
	const void *fn = dt_kernel(e, dts);
	DtArgs<R> g;
	void *args[] = { &g };

	memset(&g, 0, sizeof(g));
	g.lev[0] = (R *)e->u[e->cur];
	g.lev[1] = (R *)e->u[1 - e->cur];
	g.cls = e->dt_cls;
	g.probez = e->dt_probez;
	g.xr = e->dt_xr;
	g.nlev = nlev;
	g.zlo = e->dt_zlo;
	g.zhi = e->dt_zhi;
	if (probes) {
		g.src = e->dt_src;
		g.inj = (size_t)e->step < e->inj_steps ? e->inj + 8 * e->step : NULL;
		g.ninj = (int)min((size_t)nlev, e->inj_steps - min(e->inj_steps, (size_t)e->step));
		g.probe = e->dt_probe;
		g.pval = e->dt_pval;
		g.nprobe = 8 * e->nrec;
		g.pstride = dt_nt(e);
		if (g.nprobe && CK(cudaMemset(e->dt_pval, 0, e->dt_pval_n * sizeof(double))))
			return RS_EDEVICE;
	}
	if (CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)))
		return RS_EDEVICE;
	if (M == 1) {
		if (dt7_launch(e, g, fn, s_hi, s_lo, smem, err))
			return RS_EDEVICE;
	} else for (int st = s_hi; st >= s_lo; st--) {
		int t_lo, t_hi;

		dt_trange(e, N, st & 1, &t_lo, &t_hi);

		g.s = st;
		g.t0 = t_lo;
		if (CK(cudaLaunchKernel(fn, dim3(t_hi - t_lo + 1), dim3(dt_threads(e)), args, smem, 0)))
			return RS_EDEVICE;
	}
	if (probes && e->nrec) {
		k_dt_record<<<(e->nrec * nlev + 127) / 128, 128>>>(e->dt_pval, e->rw, e->rec, e->nrec,
								    e->cap, e->step, nlev, g.pstride);
		if (CK_LAUNCH())
			return RS_EDEVICE;
	}
	e->cur = (e->cur + nlev) & 1;
	return 0;
}

static int dt_run(struct cuda_engine *e, int nlev, int probes, struct rs_error *err)
{
	return e->precision == 4 ? dt_sweep<float>(e, nlev, probes, err)
				 : dt_sweep<double>(e, nlev, probes, err);
}

/* Advance nsteps by sweeps of nt levels (the last one shorter), stopping between sweeps. */
static int dt_advance(struct cuda_engine *e, long nsteps, volatile sig_atomic_t *stop,
		      struct rs_error *err)
{
	if (dt_probes(e, err))
		return err->code;
	for (long done = 0; done < nsteps;) {
		const int n = (int)min((long)dt_nt(e), nsteps - done);

		if (stop && *stop)
			return rs_fail(err, RS_EINTR, "interrupted");
		if (dt_run(e, n, 1, err))
			return RS_EDEVICE;
		e->step += n;
		done += n;
	}
	return 0;
}

int cuda_diamond_tables(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err)
{
	return e->dt_cls || e->fcc ? 0 : dt_prepare(e, g, err);
}

int cuda_set_diamond(struct cuda_engine *e, int dts, int nt, struct rs_error *err)
{
	char why[256];

	if (dt_check(e, dt_dts_of(e, dts), dt_nt_of(e, dts, nt), why, sizeof(why)))
		return rs_fail(err, RS_EINPUT, "kernel diamond cannot run here: %s", why);
	e->dts = dts;
	e->nt = nt;
	e->dt_dirty = 1;	/* the receiver buffer holds nt levels */
	return 0;
}

void cuda_diamond(const struct cuda_engine *e, int *dts, int *nt)
{
	*dts = dt_dts(e);
	*nt = dt_nt(e);
}

/* Steps of kernel kern for timing: one launch a step, or diamond sweeps without probes. */
static int run_steps(struct cuda_engine *e, enum kernel_id kern, int steps, struct rs_error *err)
{
	for (int s = 0; s < steps;) {
		const int n = kern == KERNEL_DIAMOND ? min(dt_nt(e), steps - s) : 1;

		if (kern == KERNEL_DIAMOND ? dt_run(e, n, 0, err) : update_once(e, kern, err))
			return RS_EDEVICE;
		if (kern != KERNEL_DIAMOND)
			e->cur = 1 - e->cur;
		s += n;
	}
	return 0;
}

static int fill_noise(struct cuda_engine *e, struct rs_error *err)
{
	for (int b = 0; b < 2; b++) {
		if (e->precision == 4)
			k_noise<float><<<1024, 256>>>((float *)e->u[b], e->values, 17u + b);
		else
			k_noise<double><<<1024, 256>>>((double *)e->u[b], e->values, 17u + b);
		if (CK_LAUNCH())
			return RS_EDEVICE;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int cuda_time_kernel(struct cuda_engine *e, enum kernel_id kern, int steps, int runs,
		     double *seconds, struct rs_error *err)
{
	double t[16];
	cudaEvent_t e0, e1;
	int rc = RS_EDEVICE;

	if (runs > 16)
		runs = 16;
	if (upload(e, err) || fill_noise(e, err) || CK(cudaEventCreate(&e0)) ||
	    CK(cudaEventCreate(&e1)))
		return RS_EDEVICE;
	if (run_steps(e, kern, kern == KERNEL_DIAMOND ? min(steps, dt_nt(e)) : 1, err) ||
	    CK(cudaDeviceSynchronize()))	/* warm-up */
		goto out;
	for (int r = 0; r < runs; r++) {
		float ms;

		if (CK(cudaEventRecord(e0)) || run_steps(e, kern, steps, err))
			goto out;
		if (CK(cudaEventRecord(e1)) || CK(cudaEventSynchronize(e1)) ||
		    CK(cudaEventElapsedTime(&ms, e0, e1)))
			goto out;
		t[r] = ms * 1e-3;
	}
	qsort(t, (size_t)runs, sizeof(double), cmp_double);
	*seconds = t[runs / 2];
	rc = 0;
out:
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	return rc;
}

static const void *kernel_fn(int precision, enum kernel_id k)
{
	if (precision == 4) {
		switch (k) {
		case KERNEL_NAIVE3D: return (const void *)k_naive3d<float>;
		case KERNEL_TILED_GLOBAL: return (const void *)k_tiled<float, false>;
		case KERNEL_TILED_SHARED: return (const void *)k_tiled<float, true>;
		case KERNEL_SLICE_NAIVE: return (const void *)k_slice<float, RdGlobal<float> >;
		case KERNEL_SLICE_TEXTURE: return (const void *)k_slice<float, RdTex<float> >;
		case KERNEL_SLICE_LDG: return (const void *)k_slice<float, RdLdg<float> >;
		case KERNEL_SLICE_SHARED:
			return (const void *)k_slice_shared<float, RdGlobal<float> >;
		case KERNEL_SLICE_SHARED_TEX:
			return (const void *)k_slice_shared<float, RdTex<float> >;
		case KERNEL_SLICE_VEC: return (const void *)k_slice_vec<float>;
		case KERNEL_GENERAL: return (const void *)k_general<float>;
		case KERNEL_LEGGY: return (const void *)k_leggy<float, 2>;
		case KERNEL_LEGGY_SHARED: return (const void *)k_leggy_shared<float, 4, 1>;
		case KERNEL_LEGGY_SHARED2: return (const void *)k_leggy_shared<float, 4, 2>;
		case KERNEL_SHELL_VEC: return (const void *)k_shell_vec32;
		case KERNEL_FCC: return (const void *)k_fcc<float>;
		case KERNEL_FCC_VEC: return (const void *)k_fcc_vec<float>;
		default: return NULL;
		}
	}
	switch (k) {
	case KERNEL_NAIVE3D: return (const void *)k_naive3d<double>;
	case KERNEL_TILED_GLOBAL: return (const void *)k_tiled<double, false>;
	case KERNEL_TILED_SHARED: return (const void *)k_tiled<double, true>;
	case KERNEL_SLICE_NAIVE: return (const void *)k_slice<double, RdGlobal<double> >;
	case KERNEL_SLICE_TEXTURE: return (const void *)k_slice<double, RdTex<double> >;
	case KERNEL_SLICE_LDG: return (const void *)k_slice<double, RdLdg<double> >;
	case KERNEL_SLICE_SHARED: return (const void *)k_slice_shared<double, RdGlobal<double> >;
	case KERNEL_SLICE_SHARED_TEX:
		return (const void *)k_slice_shared<double, RdTex<double> >;
	case KERNEL_SLICE_VEC: return (const void *)k_slice_vec<double>;
	case KERNEL_GENERAL: return (const void *)k_general<double>;
	case KERNEL_LEGGY: return (const void *)k_leggy<double, 2>;
	case KERNEL_LEGGY_SHARED: return (const void *)k_leggy_shared<double, 4, 1>;
	case KERNEL_LEGGY_SHARED2: return (const void *)k_leggy_shared<double, 4, 2>;
	case KERNEL_SHELL_VEC: return (const void *)k_shell_vec64;
	case KERNEL_FCC: return (const void *)k_fcc<double>;
	case KERNEL_FCC_VEC: return (const void *)k_fcc_vec<double>;
	default: return NULL;
	}
}

void cuda_kernel_resources(const struct cuda_engine *e, enum kernel_id k, int *regs,
			   size_t *shared)
{
	struct cudaFuncAttributes a;
	const int tiles = k == KERNEL_TILED_SHARED || k == KERNEL_SLICE_SHARED ||
			  k == KERNEL_SLICE_SHARED_TEX;

	const void *fn = k == KERNEL_DIAMOND ? dt_kernel(e, dt_dts(e))
			 : k == KERNEL_SHELL_SHARED ? shell_instance(e, e->shell_r ? e->shell_r : 1)
			 : kernel_fn(e->precision, k);

	*regs = 0;
	*shared = 0;
	if (!fn || cudaFuncGetAttributes(&a, fn))
		return;
	*regs = a.numRegs;
	*shared = a.sharedSizeBytes +
		  (tiles ? (size_t)e->precision * e->block[0] * e->block[1] : 0) +
		  (k == KERNEL_DIAMOND ? dt_smem(e, dt_dts(e)) : 0);
}

/*
 * The seed kernels run the 7-point stencil (with the K-neighbour walls of physics.md); the
 * general and leggy kernels every other stencil (with mirrored walls), whose oracle is the CPU
 * engine's general step. Each evaluates its oracle's expression in the same order.
 */
int cuda_kernel_runs(const struct cuda_engine *e, enum kernel_id k)
{
	/* the folded lattice has its own kernels */
	const int fcc_kernel = k == KERNEL_FCC || k == KERNEL_FCC_VEC;

	char why[256];

	if (k == KERNEL_DIAMOND)
		return !dt_check(e, dt_dts(e), dt_nt(e), why, sizeof(why));
	if (e->fcc || fcc_kernel)
		return e->fcc && fcc_kernel;
	/* in a carved room only `general` has the fallback cells */
	if (k == KERNEL_LEGGY || k == KERNEL_LEGGY_SHARED || k == KERNEL_LEGGY_SHARED2)
		return e->general && e->leggy_m > 0 && !e->fallback;
	if (k == KERNEL_SHELL_SHARED)
		return e->general && shell_fits(e, e->shell_r) && !e->fallback;
	if (k == KERNEL_SHELL_VEC)
		return e->general && e->shell_r == 1 && !e->fallback &&
		       (e->precision == 8 || e->block[0] * e->block[1] <= SV_THREADS);
	return (k == KERNEL_GENERAL) == (e->general != 0);
}

/* Kernel auto: time every kernel on the run's own grid and keep the fastest. */
static int choose_kernel(struct cuda_engine *e, struct rs_error *err)
{
	double best = HUGE_VAL;

	for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
		double t;

		/* a sweep of whole towers: a shorter one would time only its ramps */
		const int steps = k == KERNEL_DIAMOND ? dt_nt(e) : AUTO_STEPS;

		if (!cuda_kernel_runs(e, (enum kernel_id)k))
			continue;
		if (cuda_time_kernel(e, (enum kernel_id)k, steps, 3, &t, err))
			return RS_EDEVICE;
		e->auto_rate[k] = (double)vox_nodes(&e->plan) * steps / t;
		if (t < best) {
			best = t;
			e->kernel = (enum kernel_id)k;
		}
	}
	return cuda_reset(e, err);
}

/*
 * The weight per point of each shell (|l| sorted) of a stencil for the shell kernels, and its
 * reach; 0 when the stencil reaches past SH_MAX_REACH, or when a shell is incomplete or its
 * points differ in weight.
 */
static int shell_weights(const struct stn_stencil *s, double wd[SH_N][SH_N][SH_N])
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

/* The stencil the general and leggy kernels run: the given one, or the 7-point one. */
static int set_stencil(struct cuda_engine *e, const struct stn_stencil *st,
		       const struct vox_grid *g, const uint32_t *fallback, struct rs_error *err)
{
	static struct stn_stencil seven;
	const struct stn_stencil *s = st;

	if (!s) {
		stn_leggy(&seven, 1);
		s = &seven;
	}
	e->general = !stn_is_seven_point(s);
	if (e->general && g->carved && !fallback)
		return rs_fail(err, RS_EINTERNAL, "%s in a room that is not a box needs the "
			       "fallback cells of the CPU engine", s->name);
	e->st.K = s->K;
	e->st.reach = s->reach;
	memcpy(e->st.off, s->off, sizeof(e->st.off));
	memset(e->shc, 0, sizeof(e->shc));
	for (int q = 0; q < s->K; q++) {
		e->wd[q] = s->w[q];
		if (s->off[q][2] > 0 && s->off[q][2] < SH_N)
			e->shc[s->off[q][2]] += s->w[q];
	}
	e->shell_r = shell_weights(s, e->shd);
	/* a leggy stencil: 6M + 1 points along the axes only */
	e->leggy_m = (s->K - 1) % 6 == 0 && s->reach == (s->K - 1) / 6 ? s->reach : 0;
	for (int q = 1; e->leggy_m && q < s->K; q++)
		if ((s->off[q][0] != 0) + (s->off[q][1] != 0) + (s->off[q][2] != 0) != 1)
			e->leggy_m = 0;
	return 0;
}

struct cuda_engine *cuda_create(const struct cuda_setup *s, struct rs_error *err)
{
	const struct vox_plan *p = &s->grid->plan;
	struct cuda_engine *e = (struct cuda_engine *)calloc(1, sizeof(*e));
	size_t free_b = 0, total_b = 0, need = cuda_memory(p, s->precision, s->kernel, 0, 0, 0);
	const int bz = 4;	/* naive3d's blocks are bx x (by / bz) x bz */

	if (!e) {
		rs_fail(err, RS_ENOMEM, "out of memory");
		return NULL;
	}
	e->precision = s->precision;
	e->kernel = s->kernel;
	e->dts = s->dts;
	e->nt = s->nt;
	e->block[0] = s->block[0];
	e->block[1] = s->block[1];
	e->plan = *p;
	e->fcc = p->fcc;
	e->values = p->fcc ? p->cells / 2 : p->cells;
	e->dims.nx = p->fcc ? p->n[0] / 2 : p->n[0];	/* the fcc kernels index folded rows */
	e->dims.ny = p->n[1];
	e->dims.nz = p->n[2];
	e->dims.sy = e->dims.nx;
	e->dims.sz = (long long)e->dims.nx * p->n[1];
	e->dims.kc = KCHUNK;
	e->dims.halo = p->halo;
	for (int d = 0; d < 3; d++)
		e->dims.hi[d] = p->halo + p->room[d] - 1;
	if (set_stencil(e, s->stencil, s->grid, s->fallback, err))
		goto out_free;
	fill_coefs(&e->cf, s->coefs);
	fill_coefs(&e->cd, s->coefs);
	if (CK(cudaMemGetInfo(&free_b, &total_b)) ||
	    CK(cudaDeviceGetAttribute(&e->nsm, cudaDevAttrMultiProcessorCount, 0)))
		goto out_free;
	if (need > free_b) {
		rs_fail(err, RS_ENOMEM, "the grid needs %.2f GiB of device memory, %.2f GiB is free",
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
		    upload_folded(e, s->grid, err) || cuda_reset(e, err))
			goto out_free;
		if (e->kernel != KERNEL_AUTO && !cuda_kernel_runs(e, e->kernel)) {
			rs_fail(err, RS_EINPUT, "kernel %s cannot run the fcc scheme (valid: fcc, "
				"fcc-vec, auto)", kernel_names[e->kernel]);
			goto out_free;
		}
		if (e->kernel == KERNEL_AUTO && choose_kernel(e, err))
			goto out_free;
		return e;
	}
	e->block3 = dim3(s->block[0], max(1, s->block[1] / bz), bz);
	if (CK(cudaMalloc(&e->u[0], p->cells * (size_t)s->precision)) ||
	    CK(cudaMalloc(&e->u[1], p->cells * (size_t)s->precision)) ||
	    upload_grid(e, s->grid, err) ||
	    block_heights(s->grid, s->block[0], s->block[1], &e->blockk, &e->grid2, err) ||
	    block_heights(s->grid, e->block3.x, e->block3.y, &e->blockk3, &e->grid3, err) ||
	    block_heights(s->grid, s->block[0] * 16 / s->precision, s->block[1], &e->blockkv,
			  &e->gridv, err) ||
	    make_textures(e, s->tex_limit, err))
		goto out_free;
	if (e->general && s->fallback &&
	    (CK(cudaMalloc(&e->fallback, (p->cells / 32 + 1) * sizeof(unsigned))) ||
	     CK(cudaMalloc(&e->touch, (p->cells / 32 + 1) * sizeof(unsigned))) ||
	     CK(cudaMemcpy(e->fallback, s->fallback, (p->cells / 32 + 1) * sizeof(unsigned),
			   cudaMemcpyHostToDevice)) ||
	     CK(cudaMemcpy(e->touch, s->touch, (p->cells / 32 + 1) * sizeof(unsigned),
			   cudaMemcpyHostToDevice))))
		goto out_free;
	e->grid3.z = (p->n[2] + bz - 1) / bz;
	e->grid2.z = e->gridv.z = (p->n[2] - 2 + KCHUNK - 1) / KCHUNK;
	/* naive3d's per-block heights cover bz slabs: a block is skipped when none is inside */
	if (cuda_reset(e, err) || ((e->kernel == KERNEL_DIAMOND || e->kernel == KERNEL_AUTO) &&
				   dt_prepare(e, s->grid, err)))
		goto out_free;
	if (e->kernel == KERNEL_DIAMOND) {
		char why[256];

		if (dt_check(e, dt_dts(e), dt_nt(e), why, sizeof(why))) {
			rs_fail(err, RS_EINPUT, "kernel diamond cannot run here: %s", why);
			goto out_free;
		}
	} else if (e->kernel != KERNEL_AUTO && !cuda_kernel_runs(e, e->kernel)) {
		rs_fail(err, RS_EINPUT, "kernel %s cannot run %s here (valid: %s)",
			kernel_names[e->kernel], s->stencil && e->general ? s->stencil->name :
			"the 7-point stencil", !e->general ? "naive3d ... slice-vec"
			: e->fallback ? "general, the only one with the fallback cells of a room "
					"that is not a box"
			: "general; leggy, leggy-shared(2) for leggy stencils; shell-shared for "
			  "whole shells of reach 1 to 3, blocks of at most 256 threads; shell-vec "
			  "for reach 1");
		goto out_free;
	}
	if (e->kernel == KERNEL_AUTO && choose_kernel(e, err))
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
	if (uploaded == e)
		uploaded = NULL;
	for (int v = 0; v < e->nsub; v++)
		for (int b = 0; b < 2; b++)
			cudaDestroyTextureObject(e->sub[v].tex[b]);
	cudaFree(e->u[0]);
	cudaFree(e->u[1]);
	cudaFree(e->mask);
	cudaFree(e->cls);
	cudaFree(e->fallback);
	cudaFree(e->touch);
	cudaFree(e->colk);
	cudaFree(e->blockk);
	cudaFree(e->blockk3);
	cudaFree(e->blockkv);
	cudaFree(e->src);
	cudaFree(e->inj);
	cudaFree(e->rcell);
	cudaFree(e->rw);
	cudaFree(e->rec);
	cudaFree(e->stage);
	cudaFree(e->dt_cls);
	cudaFree(e->dt_probez);
	cudaFree(e->dt_xr);
	cudaFree(e->dt_src);
	cudaFree(e->dt_probe);
	cudaFree(e->dt_pval);
	cudaFree(e->dt_flags);
	cudaFree(e->dt_ticket);
	free(e->h_probez);
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

int cuda_set_source(struct cuda_engine *e, const size_t cell[8], const double *inj,
		    size_t nsteps, struct rs_error *err)
{
	long long c[8];

	for (int i = 0; i < 8; i++)
		e->h_src[i] = c[i] = (long long)cell[i];
	e->dt_dirty = 1;
	cudaFree(e->inj);
	e->inj = NULL;
	if (!e->src && CK(cudaMalloc(&e->src, sizeof(c))))
		return RS_EDEVICE;
	if (CK(cudaMalloc(&e->inj, nsteps * 8 * sizeof(double))) ||
	    CK(cudaMemcpy(e->src, c, sizeof(c), cudaMemcpyHostToDevice)) ||
	    CK(cudaMemcpy(e->inj, inj, nsteps * 8 * sizeof(double), cudaMemcpyHostToDevice)))
		return RS_EDEVICE;
	e->inj_steps = nsteps;
	return 0;
}

int cuda_add_receiver(struct cuda_engine *e, const size_t cell[8], const double w[8],
		      struct rs_error *err)
{
	long long *c = (long long *)realloc(e->h_rcell, sizeof(long long) * 8 * (e->nrec + 1));
	double *ww;

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

int cuda_reserve(struct cuda_engine *e, size_t nsamples, struct rs_error *err)
{
	const size_t bytes = sizeof(double) * nsamples * (size_t)(e->nrec ? e->nrec : 1);

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
	cudaFree(e->inj);
	e->inj = NULL;
	e->inj_steps = 0;
	if (e->h_rec)
		memset(e->h_rec, 0, sizeof(double) * e->cap * (size_t)(e->nrec ? e->nrec : 1));
	if (e->rec &&
	    CK(cudaMemset(e->rec, 0, sizeof(double) * e->cap * (size_t)(e->nrec ? e->nrec : 1))))
		return RS_EDEVICE;
	return CK(cudaMemset(e->u[0], 0, bytes)) || CK(cudaMemset(e->u[1], 0, bytes)) ||
	       CK(cudaDeviceSynchronize()) ? RS_EDEVICE : 0;
}

static int inject_record(struct cuda_engine *e, struct rs_error *err)
{
	const double *inj = (size_t)e->step < e->inj_steps ? e->inj + 8 * e->step : NULL;
	const long long sample = e->step + 1;

	if (!inj && (!e->nrec || (size_t)sample >= e->cap))
		return 0;
	if (e->precision == 4)
		k_inject_record<float><<<1, 128>>>((float *)e->u[1 - e->cur], e->src, inj, e->rcell,
						    e->rw, e->rec, (size_t)sample < e->cap ? e->nrec : 0,
						    e->cap, sample);
	else
		k_inject_record<double><<<1, 128>>>((double *)e->u[1 - e->cur], e->src, inj,
						     e->rcell, e->rw, e->rec,
						     (size_t)sample < e->cap ? e->nrec : 0, e->cap,
						     sample);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

int cuda_advance(struct cuda_engine *e, long nsteps, volatile sig_atomic_t *stop,
		 struct rs_error *err)
{
	const long first = e->step + 1;
	int rc = 0;

	if (e->kernel == KERNEL_AUTO)
		return rs_fail(err, RS_EINTERNAL, "no kernel chosen");
	if (upload(e, err))
		return RS_EDEVICE;
	if (e->kernel == KERNEL_DIAMOND && (rc = dt_advance(e, nsteps, stop, err)) &&
	    rc != RS_EINTR)
		return rc;
	for (long i = 0; i < nsteps && e->kernel != KERNEL_DIAMOND; i++) {
		if (stop && *stop) {
			rc = rs_fail(err, RS_EINTR, "interrupted");
			break;
		}
		if (update_once(e, e->kernel, err) || inject_record(e, err))
			return RS_EDEVICE;
		e->cur = 1 - e->cur;
		e->step++;
	}
	/* Copy back the samples of this chunk: one synchronisation per call, none per step. */
	for (int r = 0; r < e->nrec && (size_t)first < e->cap; r++) {
		const size_t last = min((size_t)e->step, e->cap - 1), off = (size_t)r * e->cap + first;

		if (last >= (size_t)first &&
		    CK(cudaMemcpy(e->h_rec + off, e->rec + off, sizeof(double) * (last - first + 1),
				  cudaMemcpyDeviceToHost)))
			return RS_EDEVICE;
	}
	return rc ? rc : CK(cudaDeviceSynchronize()) ? RS_EDEVICE : 0;
}

long cuda_steps(const struct cuda_engine *e)
{
	return e->step;
}

const double *cuda_receiver(const struct cuda_engine *e, int r)
{
	return e->h_rec + (size_t)r * e->cap;
}

int cuda_field(const struct cuda_engine *e, int older, double *out, struct rs_error *err)
{
	const size_t n = e->values;
	const void *src = e->u[older ? 1 - e->cur : e->cur];
	void *tmp = malloc(n * (size_t)e->precision);
	int col, z;

	if (!tmp)
		return rs_fail(err, RS_ENOMEM, "out of memory copying the field");
	if (CK(cudaMemcpy(tmp, src, n * (size_t)e->precision, cudaMemcpyDeviceToHost))) {
		free(tmp);
		return RS_EDEVICE;
	}
	for (size_t i = 0; i < n; i++) {
		const size_t m = e->zfast ? (size_t)dt_index(e, (long long)i, &col, &z) : i;

		out[i] = e->precision == 4 ? ((const float *)tmp)[m] : ((const double *)tmp)[m];
	}
	free(tmp);
	return 0;
}

int cuda_set_field(struct cuda_engine *e, int older, const double *in, struct rs_error *err)
{
	const size_t n = e->values;
	void *dst = e->u[older ? 1 - e->cur : e->cur];
	void *tmp = malloc(n * (size_t)e->precision);
	int col, z, rc;

	if (!tmp)
		return rs_fail(err, RS_ENOMEM, "out of memory copying the field");
	for (size_t i = 0; i < n; i++) {
		const size_t m = e->zfast ? (size_t)dt_index(e, (long long)i, &col, &z) : i;

		if (e->precision == 4)
			((float *)tmp)[m] = (float)in[i];
		else
			((double *)tmp)[m] = in[i];
	}
	rc = CK(cudaMemcpy(dst, tmp, n * (size_t)e->precision, cudaMemcpyHostToDevice));
	free(tmp);
	return rc ? RS_EDEVICE : 0;
}

/* The plane kernel of the engine's lattice and precision, into device memory out. */
static void plane_launch(const struct cuda_engine *e, dim3 g, float *out, int axis, int index,
			 int n2)
{
	const void *u = e->u[e->cur];

	if (e->precision == 4 && e->fcc)
		k_plane_fcc<float><<<g, 128>>>((const float *)u, out, axis, index, n2);
	else if (e->precision == 4)
		k_plane<float><<<g, 128>>>((const float *)u, out, axis, index, n2, e->zfast);
	else if (e->fcc)
		k_plane_fcc<double><<<g, 128>>>((const double *)u, out, axis, index, n2);
	else
		k_plane<double><<<g, 128>>>((const double *)u, out, axis, index, n2, e->zfast);
}

int cuda_plane(struct cuda_engine *e, int axis, int index, float *out, struct rs_error *err)
{
	const int n1 = e->plan.room[axis == 2 ? 1 : 2], n2 = e->plan.room[axis == 0 ? 1 : 0];
	const size_t bytes = sizeof(float) * (size_t)n1 * n2;
	const dim3 g((n2 + 127) / 128, n1);
	float *d = NULL;
	int rc;

	if (upload(e, err) || CK(cudaMalloc(&d, bytes)))
		return RS_EDEVICE;
	plane_launch(e, g, d, axis, index, n2);
	rc = CK_LAUNCH() || CK(cudaMemcpy(out, d, bytes, cudaMemcpyDeviceToHost)) ? RS_EDEVICE : 0;
	cudaFree(d);
	return rc;
}

int cuda_plane_start(struct cuda_engine *e, int axis, int index, float *out, void **event,
		     struct rs_error *err)
{
	const int n1 = e->plan.room[axis == 2 ? 1 : 2], n2 = e->plan.room[axis == 0 ? 1 : 0];
	const size_t bytes = sizeof(float) * (size_t)n1 * n2;
	const dim3 g((n2 + 127) / 128, n1);
	cudaEvent_t ev;

	/* One staging buffer serves every plane: copies and kernels run in stream order. */
	if (bytes > e->stage_bytes) {
		cudaFree(e->stage);
		e->stage = NULL;
		if (CK(cudaMalloc(&e->stage, bytes)))
			return RS_EDEVICE;
		e->stage_bytes = bytes;
	}
	if (upload(e, err))
		return RS_EDEVICE;
	plane_launch(e, g, e->stage, axis, index, n2);
	if (CK_LAUNCH() || CK(cudaMemcpyAsync(out, e->stage, bytes, cudaMemcpyDeviceToHost, 0)) ||
	    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) || CK(cudaEventRecord(ev, 0)))
		return RS_EDEVICE;
	*event = ev;
	return 0;
}

int cuda_plane_finish(void *event, struct rs_error *err)
{
	int rc = CK(cudaEventSynchronize((cudaEvent_t)event)) ? RS_EDEVICE : 0;

	cudaEventDestroy((cudaEvent_t)event);
	return rc;
}

float *cuda_host_alloc(size_t n)
{
	void *p = NULL;

	return cudaMallocHost(&p, n * sizeof(float)) == cudaSuccess ? (float *)p : NULL;
}

void cuda_host_free(float *p)
{
	cudaFreeHost(p);
}

int cuda_bandwidth(double *copy, double *add, struct rs_error *err)
{
	const size_t n = STREAM_BYTES / sizeof(float4);
	float4 *a = NULL, *b = NULL, *c = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	int rc = RS_EDEVICE, sms = 0;

	*copy = *add = 0;
	if (CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0)) ||
	    CK(cudaMalloc(&a, STREAM_BYTES)) || CK(cudaMalloc(&b, STREAM_BYTES)) ||
	    CK(cudaMalloc(&c, STREAM_BYTES)) || CK(cudaMemset(a, 1, STREAM_BYTES)) ||
	    CK(cudaMemset(b, 2, STREAM_BYTES)) || CK(cudaEventCreate(&e0)) ||
	    CK(cudaEventCreate(&e1)))
		goto out;
	for (int r = 0; r < 6; r++) {
		float ms;

		if (CK(cudaEventRecord(e0)))
			goto out;
		k_copy<<<sms * 8, 256>>>(a, c, n);
		if (CK_LAUNCH() || CK(cudaEventRecord(e1)) || CK(cudaEventSynchronize(e1)) ||
		    CK(cudaEventElapsedTime(&ms, e0, e1)))
			goto out;
		if (r)	/* the first run is the warm-up */
			*copy = fmax(*copy, 2.0 * STREAM_BYTES / (ms * 1e-3));
		if (CK(cudaEventRecord(e0)))
			goto out;
		k_add<<<sms * 8, 256>>>(a, b, c, n);
		if (CK_LAUNCH() || CK(cudaEventRecord(e1)) || CK(cudaEventSynchronize(e1)) ||
		    CK(cudaEventElapsedTime(&ms, e0, e1)))
			goto out;
		if (r)
			*add = fmax(*add, 3.0 * STREAM_BYTES / (ms * 1e-3));
	}
	rc = 0;
out:
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	return rc;
}
