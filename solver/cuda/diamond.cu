/*
 * diamond.cu - the diamond kernel's host side: its tables (class bytes z fastest, row and
 * probe ranges), tile size and tower height, the sweeps that launch the towers of
 * diamond_towers.cuh and diamond7.cuh, and the receivers' samples after each sweep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diamond7.cuh"

#define DT_DTS_7 2	/* default tile size of the 7-point scheme */
#define DT_NT 64	/* default tower height of the leggy stencils */
#define DT_NT_WIDE 256	/* of the 7-point scheme where a stage has a tower per multiprocessor */
#define DT_NT_NARROW 32	/* and where it has fewer (docs/performance.md, "DiamondTorre") */

static int floor_div(int a, int b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The kernel of reach M and tile size dts, with branch walls (br) or without; NULL where
 * none is built. */
template <typename R> static const void *dt_instance(int M, int dts, bool br)
{
	switch (M * 8 + dts) {
	case 9: return br ? (const void *)k_dt7<R, 1, true> : (const void *)k_dt7<R, 1, false>;
	case 10: return br ? (const void *)k_dt7<R, 2, true> : (const void *)k_dt7<R, 2, false>;
	case 11: return br ? (const void *)k_dt7<R, 3, true> : (const void *)k_dt7<R, 3, false>;
	case 12: return br ? (const void *)k_dt7<R, 4, true> : (const void *)k_dt7<R, 4, false>;
	case 17: return (const void *)k_diamond<R, 2, 1>;
	case 18: return (const void *)k_diamond<R, 2, 2>;
	case 25: return (const void *)k_diamond<R, 3, 1>;
	case 33: return (const void *)k_diamond<R, 4, 1>;
	default: return NULL;
	}
}

static const void *dt_kernel(const struct cuda_engine *e, int dts)
{
	return e->precision == 4 ? dt_instance<float>(e->leggy_m, dts, e->branch != NULL)
				 : dt_instance<double>(e->leggy_m, dts, e->branch != NULL);
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
	*t_hi = floor_div(e->k.dims.hi[1] + N - 1 - N * par, 2 * N);
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
int dt_prepare(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err)
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
	    (kconst_sync(e, err) || CK(cudaMalloc(&e->dt_cls, p->cells)) ||
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
long long dt_index(const struct cuda_engine *e, long long n, int *col, int *z)
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
	const int s_hi = floor_div(e->k.dims.hi[0] + N - 1, N);
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
	g.br = e->branch ? (const BranchDev<R> *)e->branch->dev : NULL;
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
int dt_advance(struct cuda_engine *e, long nsteps, volatile sig_atomic_t *stop,
	       struct rs_error *err)
{
	if (kconst_sync(e, err) || dt_probes(e, err))
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

void dt_free(struct cuda_engine *e)
{
	cudaFree(e->dt_cls);
	cudaFree(e->dt_probez);
	cudaFree(e->dt_xr);
	cudaFree(e->dt_src);
	cudaFree(e->dt_probe);
	cudaFree(e->dt_pval);
	cudaFree(e->dt_flags);
	cudaFree(e->dt_ticket);
	free(e->h_probez);
}

/* ---- the family's entry points (solver/kernels.h) -------------------------------------- */

int diamond_launch(struct cuda_engine *e, enum kernel_id k, int nlev, struct rs_error *err)
{
	(void)k;
	return kconst_sync(e, err) || dt_run(e, nlev, 0, err) ? RS_EDEVICE : 0;
}

int diamond_check(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len)
{
	(void)k;
	return dt_check(e, dt_dts(e), dt_nt(e), why, len);
}

const void *diamond_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem)
{
	(void)k;
	*smem = dt_smem(e, dt_dts(e));
	return dt_kernel(e, dt_dts(e));
}

int diamond_levels(const struct cuda_engine *e)
{
	return dt_nt(e);
}
