/*
 * slice_vec.cu - slice-vec: the 7-point slicing front with 16-byte accesses (docs/kernels.md).
 */
#include "device.cuh"


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
			    const int2 *__restrict__ blockk, int kfrom, int kto)
{
	typedef typename Vec<R>::T T;
	const int V = Vec<R>::N;
	const KDims d = k_dims;
	const KCoefs<R> &c = kc<R>();
	const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
	const int j = blockIdx.y * blockDim.y + threadIdx.y;
	const unsigned lane = threadIdx.x & 31;
	const int2 bk = block_span(blockk, kfrom, kto);
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

/* The slabs kfrom..kto of b from a (a z chunk per block layer of the launch), on stream st. */
template <typename R> static int slice_vec_span(struct cuda_engine *e, const void *a, void *b,
						int kfrom, int kto, cudaStream_t st,
						struct rs_error *err)
{
	const dim3 blk(e->block[0], e->block[1]);
	dim3 g = e->gridv;

	if (kfrom > kto)
		return 0;
	g.z = (unsigned)((kto - kfrom + KCHUNK) / KCHUNK);
	k_slice_vec<R><<<g, blk, 0, st>>>((const R *)a, (R *)b, e->mask, e->cls, e->blockkv,
					   kfrom, kto);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

template <typename R> static int slice_vec_run(struct cuda_engine *e, enum kernel_id kern,
					       struct rs_error *err)
{
	(void)kern;
	return slice_vec_span<R>(e, e->u[e->cur], e->u[1 - e->cur], 1, e->k.dims.nz - 2,
				 cudaStreamPerThread, err);
}

ONE_LEVEL_FAMILY(slice_vec, slice_vec_run)

int slice_vec_layers(struct cuda_engine *e, const void *a, void *b, int kfrom, int kto,
		     void *stream, struct rs_error *err)
{
	const cudaStream_t st = stream ? (cudaStream_t)stream : cudaStreamPerThread;

	if (kconst_sync(e, err))
		return err->code;
	return e->precision == 4 ? slice_vec_span<float>(e, a, b, kfrom, kto, st, err)
				 : slice_vec_span<double>(e, a, b, kfrom, kto, st, err);
}

NO_FAMILY_LIMITS(slice_vec)

const void *slice_vec_fn(const struct cuda_engine *e, enum kernel_id k, size_t *smem)
{
	(void)k;
	*smem = 0;
	return e->precision == 4 ? (const void *)k_slice_vec<float> : (const void *)k_slice_vec<double>;
}
