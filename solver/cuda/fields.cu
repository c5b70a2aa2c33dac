/*
 * fields.cu - the fields to and from the host (checkpoints, tests) and the planes of the
 * snapshots, on the cubic grid in either layout and on the fcc lattice (fcc.cu).
 */
#include <stdlib.h>

#include "device.cuh"

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
static int plane_launch(const struct cuda_engine *e, dim3 g, float *out, int axis, int index,
			int n2, struct rs_error *err)
{
	const void *u = e->u[e->cur];

	if (e->fcc)
		return fcc_plane(e, g, out, axis, index, n2, err);
	if (kconst_sync(e, err))
		return RS_EDEVICE;
	if (e->precision == 4)
		k_plane<float><<<g, 128>>>((const float *)u, out, axis, index, n2, e->zfast);
	else
		k_plane<double><<<g, 128>>>((const double *)u, out, axis, index, n2, e->zfast);
	return CK_LAUNCH() ? RS_EDEVICE : 0;
}

int cuda_plane(struct cuda_engine *e, int axis, int index, float *out, struct rs_error *err)
{
	const int n1 = e->plan.room[axis == 2 ? 1 : 2], n2 = e->plan.room[axis == 0 ? 1 : 0];
	const size_t bytes = sizeof(float) * (size_t)n1 * n2;
	const dim3 g((n2 + 127) / 128, n1);
	float *d = NULL;
	int rc;

	if (CK(cudaMalloc(&d, bytes)))
		return RS_EDEVICE;
	rc = plane_launch(e, g, d, axis, index, n2, err) ||
	     CK(cudaMemcpy(out, d, bytes, cudaMemcpyDeviceToHost)) ? RS_EDEVICE : 0;
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
	if (plane_launch(e, g, e->stage, axis, index, n2, err) ||
	    CK(cudaMemcpyAsync(out, e->stage, bytes, cudaMemcpyDeviceToHost, 0)) ||
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
