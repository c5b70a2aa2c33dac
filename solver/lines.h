/*
 * lines.h - the legs of an axial stencil (every point on an axis through the centre: the
 * leggy family) in a room that is not a box (docs/physics.md, "Larger stencils"): each leg
 * reads along its own line, mirrored about the first walls along that line, so that the
 * room's carved walls take the mirror that a box's walls take. Shared by the CPU engine
 * (cpu_general.inc) and the CUDA kernels (solver/cuda/general.cu), which must agree bit for
 * bit.
 */
#ifndef SOLVER_LINES_H
#define SOLVER_LINES_H

#include <stdint.h>

#include "../geometry/voxel.h"

#ifdef __CUDACC__
#define LINES_FN __host__ __device__ static inline
#else
#define LINES_FN static inline
#endif

/*
 * The run of room cells through cell n along a line, as far as `reach` from it: x is n's
 * index along the line, lo and hi the box's first and last room index there, stride the step
 * to the next cell along the line. *a and *b: the run's first and last index, at most reach
 * from x (a read at most reach away never passes a bound that was cut short).
 */
LINES_FN void line_run(const uint8_t *cls, long long n, long long stride, int x, int lo, int hi,
		       int reach, int *a, int *b)
{
	int s = x, e = x;

	while (s > lo && x - s < reach && cls[n + (long long)(s - 1 - x) * stride] != VOX_PAD)
		s--;
	while (e < hi && e - x < reach && cls[n + (long long)(e + 1 - x) * stride] != VOX_PAD)
		e++;
	*a = s;
	*b = e;
}

/* Index y folded into the run [a, b]: mirrored about the walls half a cell beyond its ends,
 * again as long as it lies outside (a run shorter than the reach reflects a leg twice). */
LINES_FN int line_fold(int y, int a, int b)
{
	while (y < a || y > b)
		y = y < a ? 2 * a - 1 - y : 2 * b + 1 - y;
	return y;
}

#endif
