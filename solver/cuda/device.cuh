/*
 * device.cuh - what the kernels of every family file share: constant memory, the reads, the
 * cell update of solver/fdtd.h, the stencil sums of cpu_general.inc, and 16- and 8-byte
 * vectors. Each family file has its own copy of the constants (no relocatable device code),
 * which its launcher brings up to date with kconst_sync() before it launches.
 */
#ifndef SOLVER_CUDA_DEVICE_CUH
#define SOLVER_CUDA_DEVICE_CUH

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* ---- constants ------------------------------------------------------------------------- */

/* The per-kind coefficients of the run's precision: the C structs of engine.h. */
template <typename R> struct KCoefs;
template <> struct KCoefs<float> : kcoefs_f32 {};
template <> struct KCoefs<double> : kcoefs_f64 {};

static __constant__ KCoefs<float> k_f32;
static __constant__ KCoefs<double> k_f64;
static __constant__ KDims k_dims;
static __constant__ KStencil k_st;
static __constant__ double k_wd[STN_MAX_POINTS];
static __constant__ double k_shd[SH_N][SH_N][SH_N];
/* The stencil's total weight in the slab at z distance d (float64's column differences). */
static __constant__ double k_shc[SH_N];

/* The engine whose constants this file's constant memory holds (0: none yet). */
static unsigned long long kconst_here;

/* Bring this file's constant memory to the engine's values (a no-op when it holds them). */
static inline int kconst_sync(const struct cuda_engine *e, struct rs_error *err)
{
	const struct kconst *c = &e->k;

	if (kconst_here == c->serial)
		return 0;
	if (CK(cudaMemcpyToSymbol(k_dims, &c->dims, sizeof(c->dims))) ||
	    CK(cudaMemcpyToSymbol(k_st, &c->st, sizeof(c->st))) ||
	    CK(cudaMemcpyToSymbol(k_wd, c->wd, sizeof(c->wd))) ||
	    CK(cudaMemcpyToSymbol(k_shd, c->shd, sizeof(c->shd))) ||
	    CK(cudaMemcpyToSymbol(k_shc, c->shc, sizeof(c->shc))) ||
	    CK(e->precision == 4 ? cudaMemcpyToSymbol(k_f32, &c->cf, sizeof(c->cf))
				 : cudaMemcpyToSymbol(k_f64, &c->cd, sizeof(c->cd))))
		return RS_EDEVICE;
	kconst_here = c->serial;
	cuda_graph_serial = 0;	/* some file's constants changed: no graph until a step */
	return 0;
}


/* The slabs block (blockIdx.x, blockIdx.y, blockIdx.z) marches: its heights, its chunk. */
__device__ __forceinline__ int2 block_range(const int2 *__restrict__ blockk, int kfrom, int kto)
{
	const int2 bk = blockk[blockIdx.x + gridDim.x * blockIdx.y];
	const int c0 = 1 + (int)blockIdx.z * k_dims.kc;

	return make_int2(max(max(bk.x, kfrom), c0), min(min(bk.y, kto), c0 + k_dims.kc - 1));
}

/* The same for a launch over slabs kfrom..kto only, its z chunks counted from kfrom. */
__device__ __forceinline__ int2 block_span(const int2 *__restrict__ blockk, int kfrom, int kto)
{
	const int2 bk = blockk[blockIdx.x + gridDim.x * blockIdx.y];
	const int c0 = kfrom + (int)blockIdx.z * k_dims.kc;

	return make_int2(max(bk.x, c0), min(min(bk.y, kto), c0 + k_dims.kc - 1));
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


/* ---- the stencil sums of cpu_general.inc ------------------------------------------------ */


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


/* ---- vectors --------------------------------------------------------------------------- */

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
 * A family whose launch advances one level: FAMILY_launch brings the file's constants up to
 * date, runs RUN<float> or RUN<double>(e, k, err) and makes the new level current;
 * FAMILY_levels is 1.
 */
#define ONE_LEVEL_FAMILY(family, run)                                                             \
	int family##_launch(struct cuda_engine *e, enum kernel_id k, int nlev,                     \
			    struct rs_error *err)                                                  \
	{                                                                                         \
		int rc = nlev == 1 ? kconst_sync(e, err)                                          \
				   : rs_fail(err, RS_EINTERNAL, "kernel %s advances one level",   \
					     kernel_names[k]);                                    \
                                                                                                  \
		if (!rc)                                                                          \
			rc = e->precision == 4 ? run<float>(e, k, err) : run<double>(e, k, err);  \
		if (!rc)                                                                          \
			e->cur = 1 - e->cur;                                                      \
		return rc;                                                                        \
	}                                                                                         \
	int family##_levels(const struct cuda_engine *e)                                          \
	{                                                                                         \
		(void)e;                                                                          \
		return 1;                                                                         \
	}

/* A family with no limits beyond its rows' `runs`: FAMILY_check accepts every engine. */
#define NO_FAMILY_LIMITS(family)                                                                  \
	int family##_check(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len)   \
	{                                                                                         \
		(void)e, (void)k, (void)why, (void)len;                                           \
		return 0;                                                                         \
	}

#endif
