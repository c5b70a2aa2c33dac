/*
 * frames.c - band-limited snapshot frames (fdtd.h, fdtd_frames_setup): each step's planes
 * added with the filter's weights into the sums of the frames whose window holds the step,
 * on the CPU here, on the GPU by the CUDA engine (solver/cuda/frames.cu).
 */
#include "fdtd_impl.h"

#include <string.h>

#ifdef ROOMSIM_CUDA
#include "cuda/fdtd_cuda.h"
#define GPU_CALL(expr) (expr)
#else
#define GPU_CALL(expr) RS_ENODEV
#endif

void frames_free(struct fdtd_frames *fr)
{
	if (!fr)
		return;
	free(fr->axis);
	free(fr->index);
	free(fr->size);
	free(fr->off);
	free(fr->h);
	free(fr->sum);
	free(fr->plane);
	free(fr);
}

int fdtd_frames_setup(struct fdtd *f, int nplanes, const int *axis, const int *index,
		      const double *h, int m, long every)
{
	const struct vox_plan *p = &f->grid->plan;
	struct fdtd_frames *fr;
	size_t most = 0;

	if (every < 1 || m < 0 || nplanes < 1)
		return rs_fail(&f->err, RS_EINTERNAL, "frames: %d planes, m %d, every %ld", nplanes,
			       m, every);
	if (f->gpu && fdtd_kernel(f) == KERNEL_DIAMOND)
		return rs_fail(&f->err, RS_EINPUT, "the diamond kernel does not keep every step's "
			       "field, which band-limited snapshots add up (valid: another kernel, "
			       "or output.snapshots.band: full)");
	fr = calloc(1, sizeof(*fr));
	frames_free(f->frames);
	f->frames = fr;
	if (!fr || !(fr->axis = malloc(sizeof(int) * (size_t)nplanes)) ||
	    !(fr->index = malloc(sizeof(int) * (size_t)nplanes)) ||
	    !(fr->size = malloc(sizeof(size_t) * (size_t)nplanes)) ||
	    !(fr->off = malloc(sizeof(size_t) * (size_t)nplanes)) ||
	    !(fr->h = malloc(sizeof(double) * (size_t)(2 * m + 1))))
		return rs_fail(&f->err, RS_ENOMEM, "out of memory for the snapshot frames");
	fr->n = nplanes;
	fr->m = m;
	fr->every = every;
	fr->slots = (int)(2 * m / every) + 1;
	memcpy(fr->h, h, sizeof(double) * (size_t)(2 * m + 1));
	for (int q = 0; q < nplanes; q++) {
		fr->axis[q] = axis[q];
		fr->index[q] = index[q];
		fr->size[q] = (size_t)p->room[axis[q] == 2 ? 1 : 2] *
			      (size_t)p->room[axis[q] == 0 ? 1 : 0];
		fr->off[q] = fr->total;
		fr->total += fr->size[q] * (size_t)fr->slots;
		most = fr->size[q] > most ? fr->size[q] : most;
	}
	if (f->gpu)
		return GPU_CALL(cuda_frames_setup(f->gpu, fr->n, fr->axis, fr->index, fr->size,
						  fr->off, fr->total, fr->h, m, every, fr->slots,
						  &f->err));
	if (!(fr->sum = calloc(fr->total, sizeof(float))) ||
	    !(fr->plane = malloc(most * sizeof(float))))
		return rs_fail(&f->err, RS_ENOMEM, "out of memory for the snapshot frames (%zu "
			       "floats)", fr->total);
	return 0;
}

/* One term of a frame's sum: sum[i] += (float)(w * plane[i]) over its n values. */
static void add(float *sum, const float *plane, double w, size_t n, int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 16384)
	for (size_t i = 0; i < n; i++)
		sum[i] += (float)(w * (double)plane[i]);
}

void cpu_frames_add(struct fdtd *f, long step)
{
	const struct fdtd_frames *fr = f->frames;
	/* the frames j whose window [j every - m, j every + m] holds step */
	const long first = step - fr->m <= 0 ? 0 : (step - fr->m + fr->every - 1) / fr->every;
	const long last = (step + fr->m) / fr->every;

	for (int p = 0; p < fr->n && first <= last; p++) {
		cpu_plane(f, fr->axis[p], fr->index[p], fr->plane);
		for (long j = first; j <= last; j++)
			add(fr->sum + fr->off[p] + (size_t)(j % fr->slots) * fr->size[p], fr->plane,
			    fr->h[step - j * fr->every + fr->m], fr->size[p], f->threads);
	}
}

int fdtd_frame_take(struct fdtd *f, int p, long j, float *out)
{
	const struct fdtd_frames *fr = f->frames;
	float *slot;

	if (!fr || p < 0 || p >= fr->n || j < 0)
		return rs_fail(&f->err, RS_EINTERNAL, "no frame %ld of plane %d", j, p);
	if (f->gpu)
		return GPU_CALL(cuda_frame_take(f->gpu, fr->off[p] + (size_t)(j % fr->slots) *
							       fr->size[p], fr->size[p], out, &f->err));
	slot = fr->sum + fr->off[p] + (size_t)(j % fr->slots) * fr->size[p];
	memcpy(out, slot, fr->size[p] * sizeof(float));
	memset(slot, 0, fr->size[p] * sizeof(float));
	return 0;
}

size_t fdtd_frames_size(const struct fdtd *f)
{
	return f->frames ? f->frames->total : 0;
}

int fdtd_frames_get(struct fdtd *f, float *out)
{
	if (!f->frames)
		return 0;
	if (f->gpu)
		return GPU_CALL(cuda_frames_copy(f->gpu, out, f->frames->total, 0, &f->err));
	memcpy(out, f->frames->sum, f->frames->total * sizeof(float));
	return 0;
}

int fdtd_frames_set(struct fdtd *f, const float *in)
{
	if (!f->frames)
		return 0;
	if (f->gpu)
		return GPU_CALL(cuda_frames_copy(f->gpu, (float *)in, f->frames->total, 1, &f->err));
	memcpy(f->frames->sum, in, f->frames->total * sizeof(float));
	return 0;
}
