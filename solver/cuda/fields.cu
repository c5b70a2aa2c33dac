/*
 * fields.cu - the fields to and from the host (checkpoints, tests) and the planes of the
 * snapshots, on the cubic grid in either layout and on the fcc lattice (fcc.cu).
 */
#include <stdlib.h>
#include <string.h>

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

/*
 * One level as stored (precision bytes a value) to or from host memory in the grid's own
 * order (vox_index, or folded on the fcc lattice), whatever the kernel's layout on the
 * device (diamond's z-fastest one: dt_index).
 */
static int level_copy(const struct cuda_engine *e, int older, void *host, int to_device,
		      struct rs_error *err)
{
	const size_t n = e->values, bytes = n * (size_t)e->precision;
	void *dev = e->u[older ? 1 - e->cur : e->cur];
	char *tmp = e->zfast ? (char *)malloc(bytes) : (char *)host;
	int col, z, rc = 0;

	if (!tmp)
		return rs_fail(err, RS_ENOMEM, "out of memory copying the field");
	for (size_t i = 0; e->zfast && to_device && i < n; i++)
		memcpy(tmp + (size_t)dt_index(e, (long long)i, &col, &z) * e->precision,
		       (const char *)host + i * e->precision, (size_t)e->precision);
	if (CK(to_device ? cudaMemcpy(dev, tmp, bytes, cudaMemcpyHostToDevice)
			 : cudaMemcpy(tmp, dev, bytes, cudaMemcpyDeviceToHost)))
		rc = RS_EDEVICE;
	for (size_t i = 0; !rc && e->zfast && !to_device && i < n; i++)
		memcpy((char *)host + i * e->precision,
		       tmp + (size_t)dt_index(e, (long long)i, &col, &z) * e->precision,
		       (size_t)e->precision);
	if (tmp != host)
		free(tmp);
	return rc;
}

int cuda_field(const struct cuda_engine *e, int older, double *out, struct rs_error *err)
{
	const size_t n = e->values;
	void *tmp = malloc(n * (size_t)e->precision);
	int rc;

	if (!tmp)
		return rs_fail(err, RS_ENOMEM, "out of memory copying the field");
	rc = level_copy(e, older, tmp, 0, err);
	for (size_t i = 0; !rc && i < n; i++)
		out[i] = e->precision == 4 ? ((const float *)tmp)[i] : ((const double *)tmp)[i];
	free(tmp);
	return rc;
}

int cuda_set_field(struct cuda_engine *e, int older, const double *in, struct rs_error *err)
{
	const size_t n = e->values;
	void *tmp = malloc(n * (size_t)e->precision);
	int rc;

	if (!tmp)
		return rs_fail(err, RS_ENOMEM, "out of memory copying the field");
	for (size_t i = 0; i < n; i++)
		if (e->precision == 4)
			((float *)tmp)[i] = (float)in[i];
		else
			((double *)tmp)[i] = in[i];
	rc = level_copy(e, older, tmp, 1, err);
	free(tmp);
	return rc;
}

int cuda_levels(const struct cuda_engine *e, void *cur, void *prev, struct rs_error *err)
{
	return level_copy(e, 0, cur, 0, err) || level_copy(e, 1, prev, 0, err) ? err->code : 0;
}

int cuda_set_state(struct cuda_engine *e, long step, const void *cur, const void *prev,
		   const void *bstate, const void *bW, struct rs_error *err)
{
	if (level_copy(e, 0, (void *)cur, 1, err) || level_copy(e, 1, (void *)prev, 1, err) ||
	    cuda_branch_load(e, bstate, bW, err))
		return err->code ? err->code : RS_EDEVICE;
	e->step = step;
	e->gbase = step + 1;
	e->ctl_fresh = 0;	/* the graphs read the step from ctl */
	return 0;
}

int cuda_set_receiver(struct cuda_engine *e, int r, const double *samples, size_t n,
		      struct rs_error *err)
{
	const size_t off = (size_t)r * e->cap;

	if (r < 0 || r >= e->nrec || n > e->cap)
		return rs_fail(err, RS_EINTERNAL, "receiver %d: %zu samples do not fit", r, n);
	memcpy(e->h_rec + off, samples, n * sizeof(double));
	return CK(cudaMemcpy(e->rec + off, samples, n * sizeof(double), cudaMemcpyHostToDevice))
		       ? RS_EDEVICE : 0;
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

/*
 * The frames' part of a step: sum[slot of j] += (float)(h[step - j every + m] * plane) for
 * each frame j whose window holds the step (fdtd.h, fdtd_frames_setup; the CPU's order).
 */
__global__ void k_frames_add(const float *__restrict__ plane, float *sum, size_t n, int slots,
			     const double *__restrict__ h, int m, long every, long long step,
			     const long long *ctl)
{
	const long long s = ctl ? ctl[0] : step;
	const long long first = s - m <= 0 ? 0 : (s - m + every - 1) / every, last = (s + m) / every;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		const double v = plane[i];

		for (long long j = first; j <= last; j++)
			sum[(size_t)(j % slots) * n + i] += (float)(h[s - j * every + m] * v);
	}
}

/* k_plane and k_frames_add in one launch (the cubic grid's layouts), one thread a value. */
template <typename R>
__global__ void k_frames_add_u(const R *__restrict__ u, float *sum, int axis, int index, int n2,
			       int zfast, size_t n, int slots, const double *__restrict__ h, int m,
			       long every, long long step, const long long *ctl)
{
	const KDims d = k_dims;
	const int uax = axis == 2 ? 1 : 2, vax = axis == 0 ? 1 : 0;
	const int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
	const long long s = ctl ? ctl[0] : step;
	const long long first = s - m <= 0 ? 0 : (s - m + every - 1) / every, last = (s + m) / every;
	const size_t i = (size_t)r * n2 + c;
	int ijk[3];
	double v;

	if (c >= n2)
		return;
	ijk[axis] = index;
	ijk[uax] = r + d.halo;
	ijk[vax] = c + d.halo;
	v = (float)u[zfast ? ijk[2] + (long long)d.nz * (ijk[0] + (long long)d.nx * ijk[1])
			   : ijk[0] + d.sy * ijk[1] + d.sz * ijk[2]];
	for (long long j = first; j <= last; j++)
		sum[(size_t)(j % slots) * n + i] += (float)(h[s - j * every + m] * v);
}

int cuda_frames_setup(struct cuda_engine *e, int n, const int *axis, const int *index,
		      const size_t *size, const size_t *off, size_t total, const double *h, int m,
		      long every, int slots, struct rs_error *err)
{
	size_t most = 0;

	for (int p = 0; p < n; p++)
		most = size[p] > most ? size[p] : most;
	cudaFree(e->fr_sum);
	cudaFree(e->fr_stage);
	cudaFree(e->fr_h);
	e->fr_sum = e->fr_stage = NULL;
	e->fr_h = NULL;
	if (CK(cudaMalloc(&e->fr_sum, total * sizeof(float))) ||
	    CK(cudaMemset(e->fr_sum, 0, total * sizeof(float))) ||
	    CK(cudaMalloc(&e->fr_stage, most * sizeof(float))) ||
	    CK(cudaMalloc(&e->fr_h, (size_t)(2 * m + 1) * sizeof(double))) ||
	    CK(cudaMemcpy(e->fr_h, h, (size_t)(2 * m + 1) * sizeof(double),
			  cudaMemcpyHostToDevice)))
		return rs_fail(err, RS_EDEVICE, "snapshot frames: %zu floats of device memory",
			       total);
	e->fr_n = n;
	e->fr_m = m;
	e->fr_slots = slots;
	e->fr_every = every;
	e->fr_axis = axis;
	e->fr_index = index;
	e->fr_size = size;
	e->fr_off = off;
	e->band_frames = 1;
	cuda_graph_drop(e);	/* the frames join the steps' launches */
	return 0;
}

int cuda_frames_add(struct cuda_engine *e, long long step, const long long *ctl,
		    struct rs_error *err)
{
	for (int p = 0; p < e->fr_n; p++) {
		const int axis = e->fr_axis[p];
		const int n1 = e->plan.room[axis == 2 ? 1 : 2], n2 = e->plan.room[axis == 0 ? 1 : 0];
		const size_t n = e->fr_size[p];
		const unsigned blocks = (unsigned)((n + 255) / 256 < 65535 ? (n + 255) / 256 : 65535);

		const dim3 g((n2 + 127) / 128, n1);
		float *sum = e->fr_sum + e->fr_off[p];

		if (e->fcc) {	/* the lattice's own plane kernel, then the sums */
			if (plane_launch(e, g, e->fr_stage, axis, e->fr_index[p], n2, err))
				return err->code ? err->code : RS_EDEVICE;
			k_frames_add<<<blocks, 256>>>(e->fr_stage, sum, n, e->fr_slots, e->fr_h,
						      e->fr_m, e->fr_every, step, ctl);
		} else if (kconst_sync(e, err)) {
			return RS_EDEVICE;
		} else if (e->precision == 4) {
			k_frames_add_u<float><<<g, 128>>>((const float *)e->u[e->cur], sum, axis,
							   e->fr_index[p], n2, e->zfast, n,
							   e->fr_slots, e->fr_h, e->fr_m,
							   e->fr_every, step, ctl);
		} else {
			k_frames_add_u<double><<<g, 128>>>((const double *)e->u[e->cur], sum, axis,
							    e->fr_index[p], n2, e->zfast, n,
							    e->fr_slots, e->fr_h, e->fr_m,
							    e->fr_every, step, ctl);
		}
		if (CK_LAUNCH())
			return RS_EDEVICE;
	}
	return 0;
}

int cuda_frame_take(struct cuda_engine *e, size_t at, size_t n, float *out, struct rs_error *err)
{
	(void)err;
	return CK(cudaMemcpy(out, e->fr_sum + at, n * sizeof(float), cudaMemcpyDeviceToHost)) ||
			       CK(cudaMemset(e->fr_sum + at, 0, n * sizeof(float)))
		       ? RS_EDEVICE : 0;
}

int cuda_frames_copy(struct cuda_engine *e, float *host, size_t total, int to_device,
		     struct rs_error *err)
{
	(void)err;
	if (!e->fr_sum)
		return 0;
	if (!host)
		return CK(cudaMemset(e->fr_sum, 0, total * sizeof(float))) ? RS_EDEVICE : 0;
	return CK(to_device ? cudaMemcpy(e->fr_sum, host, total * sizeof(float),
					 cudaMemcpyHostToDevice)
			    : cudaMemcpy(host, e->fr_sum, total * sizeof(float),
					 cudaMemcpyDeviceToHost)) ? RS_EDEVICE : 0;
}
