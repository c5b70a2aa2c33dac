/*
 * seed.cu - the 7-point kernels of seeds 000 and 003 (docs/kernels.md): naive3d, the tiled
 * pair, and the slicing front with global, texture, __ldg and shared-memory reads.
 *
 * Every kernel updates u^(n+1) over u^(n-1) in place (seed 003 section 4.3.1) with the cell
 * update of solver/fdtd.h (device.cuh). Air cells are found through a one-bit-per-cell mask
 * (1/8 byte per cell of traffic); only the few non-air cells read their class byte and the
 * per-kind coefficients. Padding keeps its zeros. Per-column start/stop heights (and their
 * per-block reduction) keep the kernels away from padding (seed 003 section 4.3.3).
 */
#include "device.cuh"


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

/* ---- the launcher ---------------------------------------------------------------------- */

template <typename R> static int seed_run(struct cuda_engine *e, enum kernel_id kern,
					  struct rs_error *err)
{
	const R *a = (const R *)e->u[e->cur];
	R *b = (R *)e->u[1 - e->cur];
	const dim3 blk(e->block[0], e->block[1]);
	const size_t tile = sizeof(R) * e->block[0] * e->block[1];
	const int kz = e->plan.n[2] - 2;

	switch (kern) {
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
		return rs_fail(err, RS_EINTERNAL, "seed.cu has no kernel %s", kernel_names[kern]);
	}
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

ONE_LEVEL_FAMILY(seed, seed_run)

NO_FAMILY_LIMITS(seed)

template <typename R> static const void *seed_instance(enum kernel_id k)
{
	switch (k) {
	case KERNEL_NAIVE3D: return (const void *)k_naive3d<R>;
	case KERNEL_TILED_GLOBAL: return (const void *)k_tiled<R, false>;
	case KERNEL_TILED_SHARED: return (const void *)k_tiled<R, true>;
	case KERNEL_SLICE_NAIVE: return (const void *)k_slice<R, RdGlobal<R> >;
	case KERNEL_SLICE_TEXTURE: return (const void *)k_slice<R, RdTex<R> >;
	case KERNEL_SLICE_LDG: return (const void *)k_slice<R, RdLdg<R> >;
	case KERNEL_SLICE_SHARED: return (const void *)k_slice_shared<R, RdGlobal<R> >;
	case KERNEL_SLICE_SHARED_TEX: return (const void *)k_slice_shared<R, RdTex<R> >;
	default: return NULL;
	}
}

const void *seed_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem)
{
	const int tiles = k == KERNEL_TILED_SHARED || k == KERNEL_SLICE_SHARED ||
			  k == KERNEL_SLICE_SHARED_TEX;

	*smem = tiles ? (size_t)e->precision * e->block[0] * e->block[1] : 0;
	return e->precision == 4 ? seed_instance<float>(k) : seed_instance<double>(k);
}
