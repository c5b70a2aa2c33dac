/*
 * dispatch.cu - the kernel table's CUDA side: each row's family launcher, check and resource
 * query (engine.h, struct cuda_kernel), whether a kernel runs on an engine and why not, kernel
 * `auto`, and the timing and bandwidth measurements of `roomsim bench`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.cuh"

#define AUTO_STEPS 4		/* steps each kernel is timed for by kernel auto */
#define AUTO_NEAR 1.15		/* kernel auto times again those this near the fastest */
#define AUTO_RUNS 3		/* ... this many times, taking the median */
#define STREAM_BYTES (1ull << 30)	/* per array of the bandwidth test: far beyond L2 */

/* In enum kernel_id's order (C++ has no designated array initialisers): auto, then the rows. */
#define CUDA_ROW_(id, name, family, runs, line)                                                    \
	{ family##_launch, family##_check, family##_fn, family##_levels },
const struct cuda_kernel cuda_kernels[NKERNELS] = { { NULL, NULL, NULL, NULL },
						    KERNEL_TABLE(CUDA_ROW_) };
#undef CUDA_ROW_

int cuda_check(cudaError_t e, const char *call, const char *file, int line,
	       struct rs_error *err)
{
	if (e == cudaSuccess)
		return 0;
	return rs_fail(err, RS_EDEVICE, "%s:%d: %s: %s", file, line, call, cudaGetErrorString(e));
}

int cuda_kernel_why(const struct cuda_engine *e, enum kernel_id k, char *why, size_t len)
{
	const struct kernel_need need = { e->fcc, e->general, e->leggy_m > 0, e->shell_r,
					  e->fallback || e->lines };

	if (k <= KERNEL_AUTO || k >= NKERNELS)
		return snprintf(why, len, "no such kernel"), 1;
	if (k == KERNEL_DIAMOND && e->exchange)
		return snprintf(why, len, "a decomposed run exchanges its halos every step, and "
				"diamond keeps many steps inside its towers"), 1;
	if (k == KERNEL_DIAMOND && e->band_frames)
		return snprintf(why, len, "band-limited snapshots add up the planes of every step, "
				"and diamond keeps many steps inside its towers (or set "
				"output.snapshots.band: full)"), 1;
	if (k == KERNEL_DIAMOND && e->block_sources)
		return snprintf(why, len, "a directional source from a balloon: diamond takes "
				"sources of eight nodes, and its block has 64"), 1;
	if (k == KERNEL_DIAMOND && e->cut)
		return snprintf(why, len, "fitted walls (grid.walls): their cut cells take a pass "
				"after each step, and diamond keeps many steps inside its towers"), 1;
	if (k == KERNEL_DIAMOND && e->grid_receivers)
		return snprintf(why, len, "a receiver grid: diamond keeps each level inside its "
				"towers and reads only a few receivers there (every per-step kernel "
				"records a grid)"), 1;
	return kernel_why(k, &need, why, len) || cuda_kernels[k].check(e, k, why, len);
}

/* One step of per-step kernel k with the passes after it: the cut cells' (u^(n-1) saved
 * before), the branch walls', and the cut groups' values spread. */
int cuda_step_walls(struct cuda_engine *e, enum kernel_id k, struct rs_error *err)
{
	return cuda_cut_save(e, err) || cuda_kernels[k].launch(e, k, 1, err) ||
	       cuda_cut_step(e, err) || cuda_branch_step(e, err) || cuda_cut_spread(e, err)
		       ? (err->code ? err->code : RS_EDEVICE)
		       : 0;
}

int cuda_kernel_runs(const struct cuda_engine *e, enum kernel_id k)
{
	char why[256];

	return !cuda_kernel_why(e, k, why, sizeof(why));
}

void cuda_kernel_resources(const struct cuda_engine *e, enum kernel_id k, int *regs,
			   size_t *shared)
{
	struct cudaFuncAttributes a;
	size_t dyn = 0;
	const void *fn = k > KERNEL_AUTO && k < NKERNELS ? cuda_kernels[k].fn(e, k, &dyn) : NULL;

	*regs = 0;
	*shared = 0;
	if (!fn || cudaFuncGetAttributes(&a, fn))
		return;
	*regs = a.numRegs;
	*shared = a.sharedSizeBytes + dyn;
}

/* ---- timing ---------------------------------------------------------------------------- */

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

/* Steps of kernel kern (checked) for timing: launches of as many levels as each takes. */
static int run_steps(struct cuda_engine *e, enum kernel_id kern, int steps, struct rs_error *err)
{
	for (int s = 0; s < steps;) {
		const int n = min(cuda_kernels[kern].levels(e), steps - s);

		if (cuda_kernels[kern].levels(e) == 1 ? cuda_step_walls(e, kern, err)
						       : cuda_kernels[kern].launch(e, kern, n, err))
			return err->code;
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
	char why[256];
	cudaEvent_t e0, e1;
	int rc = RS_EDEVICE;

	if (runs > 16)
		runs = 16;
	if (cuda_kernel_why(e, kern, why, sizeof(why)))
		return rs_fail(err, RS_EINPUT, "kernel %s cannot run here: %s", kernel_names[kern],
			       why);
	if (fill_noise(e, err) || CK(cudaEventCreate(&e0)) || CK(cudaEventCreate(&e1)))
		return RS_EDEVICE;
	/* warm-up: one launch */
	if (run_steps(e, kern, min(steps, cuda_kernels[kern].levels(e)), err) ||
	    CK(cudaDeviceSynchronize()))
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

/*
 * Kernel auto: time every kernel on the run's own grid and keep the fastest. Each is timed
 * once; those within AUTO_NEAR of the fastest single time are timed AUTO_RUNS times, and the
 * least median wins, so that a kernel far behind costs one run, not several.
 */
int cuda_choose_kernel(struct cuda_engine *e, struct rs_error *err)
{
	double once[NKERNELS], first = HUGE_VAL, best = HUGE_VAL;
	int steps[NKERNELS];

	for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
		once[k] = HUGE_VAL;
		if (!cuda_kernel_runs(e, (enum kernel_id)k))
			continue;
		/* diamond updates branch walls cell by cell inside its towers, reading their
		 * state from memory at every level: correct, but far slower than the per-step
		 * kernels (docs/performance.md, "Band materials"), and its trial sweep long */
		if (e->branch && k == KERNEL_DIAMOND)
			continue;
		/* a sweep of whole towers: a shorter one would time only its ramps */
		steps[k] = max(AUTO_STEPS, cuda_kernels[k].levels(e));
		if (cuda_time_kernel(e, (enum kernel_id)k, steps[k], 1, &once[k], err))
			return RS_EDEVICE;
		e->auto_rate[k] = (double)vox_nodes(&e->plan) * steps[k] / once[k];
		first = fmin(first, once[k]);
	}
	for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
		double t;

		if (!(once[k] < HUGE_VAL && once[k] <= AUTO_NEAR * first))
			continue;
		if (cuda_time_kernel(e, (enum kernel_id)k, steps[k], AUTO_RUNS, &t, err))
			return RS_EDEVICE;
		e->auto_rate[k] = (double)vox_nodes(&e->plan) * steps[k] / t;
		if (t < best) {
			best = t;
			e->kernel = (enum kernel_id)k;
		}
	}
	return cuda_reset(e, err);
}

/* ---- the device's bandwidth ------------------------------------------------------------ */

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
