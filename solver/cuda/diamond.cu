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

/* The 7-point towers of tile size DTS, with branch walls (br 1, or 2 with the towers a few
 * levels apart) or without (0), split over a cluster (cl, br 1 at most) or in one block. */
template <typename R, int DTS> static const void *dt7_instance(int br, bool cl)
{
	if (cl)
		return br ? (const void *)k_dt7<R, DTS, 1, true>
			  : (const void *)k_dt7<R, DTS, 0, true>;
	if (br == 2)
		return (const void *)k_dt7<R, DTS, 2, false>;
	return br ? (const void *)k_dt7<R, DTS, 1, false> : (const void *)k_dt7<R, DTS, 0, false>;
}

/* The kernel of reach M and tile size dts, with branch walls (br, as dt7_instance) or
 * without, split over a cluster (cl) or not; NULL where none is built. */
template <typename R> static const void *dt_instance(int M, int dts, int br, bool cl)
{
	if (M > 1 && cl)
		return NULL;
	switch (M * 8 + dts) {
	case 9: return dt7_instance<R, 1>(br, cl);
	case 10: return dt7_instance<R, 2>(br, cl);
	case 11: return dt7_instance<R, 3>(br, cl);
	case 12: return dt7_instance<R, 4>(br, cl);
	case 17: return (const void *)k_diamond<R, 2, 1>;
	case 18: return (const void *)k_diamond<R, 2, 2>;
	case 25: return (const void *)k_diamond<R, 3, 1>;
	case 33: return (const void *)k_diamond<R, 4, 1>;
	default: return NULL;
	}
}

/*
 * With branch walls k_dt7 runs its towers a few levels apart, each publishing its levels every
 * ROOMSIM_DT_PUBLISH (every 4 when unset), or, with ROOMSIM_DT_PUBLISH=0, awaits its
 * neighbours' whole towers. Unset (-1 here), dt_advance times both on a run's first full
 * sweeps and keeps the faster (dt_mode): apart is faster where a few towers are slow (band
 * walls on a box's sides), whole where every tower has them (its state is then read through
 * L1).
 */
static int dt_publish(void)
{
	const char *env = getenv("ROOMSIM_DT_PUBLISH");

	return env && *env ? max(0, atoi(env)) : -1;
}

/* The towers with branch walls: 0 (none), 1 (whole towers awaited) or 2 (apart). */
static int dt_br(const struct cuda_engine *e)
{
	const int pub = dt_publish();

	if (!e->branch)
		return 0;
	if (pub >= 0)
		return pub > 0 ? 2 : 1;
	return e->dt_mode ? e->dt_mode : e->dt_tried == 2 ? 2 : 1;
}

static const void *dt_kernel(const struct cuda_engine *e, int dts, int split)
{
	const int br = dt_br(e);

	return e->precision == 4 ? dt_instance<float>(e->leggy_m, dts, br, split > 1)
				 : dt_instance<double>(e->leggy_m, dts, br, split > 1);
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

/* The room's height in cells. */
static int dt_height(const struct cuda_engine *e)
{
	return e->dt_cls ? e->dt_zhi - e->dt_zlo + 1 : 0;
}

/* The fewest blocks that hold a tower of tile size dts: one thread per z cell, at most the
 * threads the kernel's instance is built for. */
static int dt_split_min(const struct cuda_engine *e, int dts)
{
	const int most = dt_shape_threads(e->precision, e->leggy_m, dts);

	return max(1, (dt_height(e) + most - 1) / most);
}

/* One thread per z cell of a tower's part, in whole warps. */
static int dt_threads(const struct cuda_engine *e, int split)
{
	return ((dt_height(e) + split - 1) / split + 31) / 32 * 32;
}

/* Whether split blocks can hold a tower of tile size dts: no more than the room's height
 * needs, no fewer than it takes, and none of them without cells. */
static bool dt_split_fits(const struct cuda_engine *e, int dts, int split)
{
	return split >= dt_split_min(e, dts) && split <= ROOM_MAX_SPLIT &&
	       (split - 1) * dt_threads(e, split) < dt_height(e);
}

/*
 * The blocks a tower is split over, as asked (0: the default, the fewest that hold the
 * room's height). A split tower pays a cluster barrier a level and starts later (its blocks
 * meet before and after it), so more blocks than the height needs were slower wherever
 * measured, narrow rooms included (docs/performance.md, "Towers split in z").
 */
static int dt_split_of(const struct cuda_engine *e, int dts, int split)
{
	return split ? split : dt_split_min(e, dts);
}

static int dt_split(const struct cuda_engine *e)
{
	return dt_split_of(e, dt_dts(e), e->split);
}

/*
 * The default tower height of the 7-point scheme: tall where every multiprocessor has a
 * tower of the stage to run, since a tower's start costs a wait and a load of its window;
 * short where the stages are narrower, since the sweep then waits on the chain of towers
 * from stage to stage, whose length grows with nt (docs/performance.md measures both).
 */
static int dt_nt_of(const struct cuda_engine *e, int dts, int nt, int split)
{
	if (nt)
		return nt;
	if (e->leggy_m != 1)
		return DT_NT;
	return dt_towers(e, dt_dts_of(e, dts)) * split >= e->nsm ? DT_NT_WIDE : DT_NT_NARROW;
}

static int dt_nt(const struct cuda_engine *e)
{
	return dt_nt_of(e, e->dts, e->nt, dt_split(e));
}

/* The z exchange: one value per tile column and thread, with M ghosts at each end; k_dt7
 * keeps two, at an odd stride, and the staging of the edge, and with branch walls a node per
 * tile column and thread and a round's places (diamond7.cuh, Dt7Br). */
static size_t dt_smem(const struct cuda_engine *e, int dts, int split)
{
	const int N = e->leggy_m * dts, th = dt_threads(e, split);

	if (e->leggy_m == 1)
		return (size_t)2 * (dt7_stride(N) * (th + 2) + dt7_estride(N) * th) *
			       e->precision +
		       (e->branch ? (size_t)th * (2 * e->precision + 4 * (1 + 2 * N * N)) : 0);
	return (size_t)2 * N * N * (th + 2 * e->leggy_m) * e->precision;
}

/* 0 when the diamond kernel can run tile size dts, towers of nt levels and split blocks a
 * tower here; else 1 and why, with what would be valid, in why. */
static int dt_check(const struct cuda_engine *e, int dts, int nt, int split, char *why,
		    size_t len)
{
	struct cudaFuncAttributes a;
	int optin = 0, cl = 0;
	const void *fn;

	if (e->fcc || e->leggy_m < 1 || e->leggy_m > 4 ||
	    (e->leggy_m > 1 && (e->fallback || e->lines)))
		return snprintf(why, len, "it runs the 7-point scheme in any room and leggy "
				"stencils of order 4, 6 and 8 in a box"), 1;
	if (!e->dt_made && e->dt_nomem)
		return snprintf(why, len, "its tables (%.2f GiB) do not fit beside the fields in "
				"device memory", cuda_diamond_memory(&e->plan, 0) / 1073741824.0), 1;
	if (e->dt_made && !e->dt_cls)
		return snprintf(why, len, "the room has no cells"), 1;
	if (!dt_kernel(e, dts, 1))
		return snprintf(why, len, "no tile size %d for order %d (valid dts: 1 to 4 for "
				"order 2, 1 or 2 for order 4, 1 for orders 6 and 8)", dts,
				2 * e->leggy_m), 1;
	if (e->leggy_m > 1 && split > 1)
		return snprintf(why, len, "the grid is %d cells along z, and a leggy tower of "
				"tile size %d runs in one block of at most %d threads (one per z cell; "
				"valid: a coarser grid, grid.slab_axis along which the room is shorter, "
				"or the 7-point scheme, whose towers split in z)", dt_height(e), dts,
				dt_shape_threads(e->precision, e->leggy_m, dts)), 1;
	if (nt < 1 || nt > DT_MAX_NT)
		return snprintf(why, len, "nt %d (valid: 1 to %d)", nt, DT_MAX_NT), 1;
	if (!dt_split_fits(e, dts, split)) {
		char ok[64] = "";
		size_t n = 0;

		if (dt_split_min(e, dts) > ROOM_MAX_SPLIT)
			return snprintf(why, len, "the grid is %d cells along z, and %d blocks of "
					"tile size %d hold %d (one thread per z cell; valid: a smaller "
					"dts, a coarser grid, or grid.slab_axis along which the room is "
					"shorter)", dt_height(e), ROOM_MAX_SPLIT, dts,
					ROOM_MAX_SPLIT * dt_shape_threads(e->precision, 1, dts)), 1;
		for (int s = 1; s <= ROOM_MAX_SPLIT && n < sizeof(ok); s++)
			if (dt_split_fits(e, dts, s))
				n += snprintf(ok + n, sizeof(ok) - n, "%s%d", n ? ", " : "", s);
		return snprintf(why, len, "split %d (valid here: %s blocks a tower, for a grid of %d "
				"cells along z at tile size %d: each block holds whole warps of cells, "
				"and the last some)", split, ok, dt_height(e), dts), 1;
	}
	fn = dt_kernel(e, dts, split);
	if (cudaFuncGetAttributes(&a, fn) != cudaSuccess ||
	    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) !=
		    cudaSuccess ||
	    cudaDeviceGetAttribute(&cl, cudaDevAttrClusterLaunch, 0) != cudaSuccess)
		return snprintf(why, len, "the device does not report the kernel's resources"), 1;
	if (split > 1 && !cl)
		return snprintf(why, len, "a tower split over %d blocks needs thread block clusters "
				"(compute capability 9.0 on), and this device has none (valid: "
				"a coarser grid)", split), 1;
	if (dt_threads(e, split) > a.maxThreadsPerBlock)
		return snprintf(why, len, "the grid is %d cells along z, and %d blocks of tile size "
				"%d hold %d (one thread per z cell; valid: split %d or more)",
				dt_height(e), split, dts, split * a.maxThreadsPerBlock,
				dt_split_min(e, dts)), 1;
	if (dt_smem(e, dts, split) > (size_t)optin)
		return snprintf(why, len, "tile size %d needs %zu bytes of shared memory, the "
				"device has %d (valid: a smaller dts)", dts, dt_smem(e, dts, split),
				optin), 1;
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

	e->dt_made = 1;
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
	    (kconst_sync(e, err) || cuda_branch_columns_make(e, err) ||
	     CK(cudaMalloc(&e->dt_cls, p->cells)) ||
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
 * many persistent blocks as fit on the device at once; for towers split in z, as many
 * clusters of split blocks.
 */
template <typename R>
static int dt7_launch(struct cuda_engine *e, DtArgs<R> &g, const void *fn, int s_hi, int s_lo,
		      size_t smem, struct rs_error *err)
{
	const int N = dt_dts(e), split = dt_split(e), th = dt_threads(e, split);
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
		if (CK(cudaMalloc(&e->dt_flags, need * sizeof(*e->dt_flags))) ||
		    CK(cudaMemset(e->dt_flags, 0, need * sizeof(*e->dt_flags))))
			return RS_EDEVICE;
		e->dt_nflags = need;
		e->dt_epoch = 0;
	}
	if (!e->dt_ticket && CK(cudaMalloc(&e->dt_ticket, sizeof(int))))
		return RS_EDEVICE;
	g.flags = e->dt_flags;
	g.ticket = e->dt_ticket;
	g.epoch = ++e->dt_epoch;
	g.pub = dt_br(e) == 2 ? (dt_publish() > 0 ? dt_publish() : 4) : 0;
	if (CK(cudaMemsetAsync(e->dt_ticket, 0, sizeof(int))))
		return RS_EDEVICE;
	if (split > 1) {	/* clusters wait for whole towers (k_dt7) */
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute at;

		at.id = cudaLaunchAttributeClusterDimension;
		at.val.clusterDim.x = split;
		at.val.clusterDim.y = at.val.clusterDim.z = 1;
		cfg.blockDim = dim3(th);
		cfg.dynamicSmemBytes = smem;
		cfg.attrs = &at;
		cfg.numAttrs = 1;
		cfg.gridDim = dim3(split * e->nsm);
		if (CK(cudaOccupancyMaxActiveClusters(&per, fn, &cfg)))
			return RS_EDEVICE;
		if (per < 1)
			return rs_fail(err, RS_EDEVICE, "a cluster of %d diamond blocks does not fit "
				       "on the device", split);
		cfg.gridDim = dim3(split * min(g.ntow, per));
		g.pub = 0;
		return CK(cudaLaunchKernelExC(&cfg, fn, args));
	}
	if (CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, th, smem)))
		return RS_EDEVICE;
	if (per < 1)
		return rs_fail(err, RS_EDEVICE, "the diamond kernel does not fit on a multiprocessor");
	/* towers a few levels apart need one block a multiprocessor (its registers allow no
	 * more), so that L1 holds only lines its tower read since it started (k_dt7) */
	if (per > 1)
		g.pub = 0;
	return CK(cudaLaunchKernel(fn, dim3(min(g.ntow, e->nsm * per)), dim3(th), args, smem, 0));
}

/*
 * One sweep of nlev levels: every stage from +x to -x (seed 002 section 6), one launch each,
 * or for the 7-point scheme one launch of persistent blocks (k_dt7); then, with probes, the
 * receivers' samples of those levels.
 */
template <typename R>
static int dt_sweep(struct cuda_engine *e, int nlev, int probes, struct rs_error *err)
{
	const int M = e->leggy_m, dts = dt_dts(e), N = M * dts, split = dt_split(e);
	const int s_hi = floor_div(e->k.dims.hi[0] + N - 1, N);
	const int s_lo = floor_div(e->plan.halo - N - M * (nlev - 1), N);
	const size_t smem = dt_smem(e, dts, split);
	const void *fn = dt_kernel(e, dts, split);
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
		if (CK(cudaLaunchKernel(fn, dim3(t_hi - t_lo + 1), dim3(dt_threads(e, 1)), args, smem,
				       0)))
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

/* A sweep of nlev levels, its time per level in *ms. */
static int dt_timed(struct cuda_engine *e, int nlev, float *ms, struct rs_error *err)
{
	cudaEvent_t ev[2] = { NULL, NULL };
	int rc = RS_EDEVICE;

	if (!CK(cudaEventCreate(&ev[0])) && !CK(cudaEventCreate(&ev[1])) &&
	    !CK(cudaEventRecord(ev[0], 0)) && !dt_run(e, nlev, 1, err) &&
	    !CK(cudaEventRecord(ev[1], 0)) && !CK(cudaEventSynchronize(ev[1])) &&
	    !CK(cudaEventElapsedTime(ms, ev[0], ev[1]))) {
		*ms /= (float)nlev;
		rc = 0;
	}
	for (int i = 0; i < 2; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
	return rc;
}

/*
 * Advance nsteps by sweeps of nt levels (the last one shorter), stopping between sweeps.
 * With branch walls and the towers' schedule not fixed (ROOMSIM_DT_PUBLISH), the first full
 * sweep runs the towers awaited whole, the second is timed so, the third timed with the
 * towers apart, and the faster is kept; the fields are the same bits either way.
 */
int dt_advance(struct cuda_engine *e, long nsteps, volatile sig_atomic_t *stop,
	       struct rs_error *err)
{
	if (kconst_sync(e, err) || dt_probes(e, err))
		return err->code;
	for (long done = 0; done < nsteps;) {
		const int n = (int)min((long)dt_nt(e), nsteps - done);
		const bool trial = e->branch && !e->dt_mode && dt_publish() < 0 &&
				   e->leggy_m == 1 && dt_split(e) == 1 && n == dt_nt(e);

		if (stop && *stop)
			return rs_fail(err, RS_EINTR, "interrupted");
		if (trial && e->dt_tried > 0) {
			if (dt_timed(e, n, &e->dt_ms[e->dt_tried - 1], err))
				return RS_EDEVICE;
			if (++e->dt_tried == 3)
				e->dt_mode = e->dt_ms[1] < e->dt_ms[0] ? 2 : 1;
		} else {
			if (dt_run(e, n, 1, err))
				return RS_EDEVICE;
			e->dt_tried += trial;
		}
		e->step += n;
		done += n;
	}
	return 0;
}

int cuda_diamond_tables(struct cuda_engine *e, const struct vox_grid *g, struct rs_error *err)
{
	return e->dt_made || e->fcc ? 0 : dt_prepare(e, g, err);
}

int cuda_set_diamond(struct cuda_engine *e, int dts, int nt, int split, struct rs_error *err)
{
	const int d = dt_dts_of(e, dts), sp = dt_split_of(e, d, split);
	char why[320];

	if (dt_check(e, d, dt_nt_of(e, dts, nt, sp), sp, why, sizeof(why)))
		return rs_fail(err, RS_EINPUT, "kernel diamond cannot run here: %s", why);
	e->dts = dts;
	e->nt = nt;
	e->split = split;
	e->dt_dirty = 1;	/* the receiver buffer holds nt levels */
	e->dt_mode = e->dt_tried = 0;	/* the towers' schedule timed again */
	return 0;
}

void cuda_diamond(const struct cuda_engine *e, int *dts, int *nt, int *split)
{
	*dts = dt_dts(e);
	*nt = dt_nt(e);
	*split = dt_split(e);
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
	return dt_check(e, dt_dts(e), dt_nt(e), dt_split(e), why, len);
}

const void *diamond_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem)
{
	(void)k;
	*smem = dt_smem(e, dt_dts(e), dt_split(e));
	return dt_kernel(e, dt_dts(e), dt_split(e));
}

int diamond_levels(const struct cuda_engine *e)
{
	return dt_nt(e);
}
