/*
 * gpu.h - what the parts of test_gpu share (test_gpu.c: the kernels against the CPU engine;
 * test_gpu_run.c: `roomsim run` end to end; test_gpu_phys.c: energy and receiver grids).
 */
#ifndef TESTS_GPU_H
#define TESTS_GPU_H

#include "../helper.h"

#define STEPS 600		/* at least 500 (the issue), not a multiple of the chunk */
#define CHUNK 64		/* steps per fdtd_advance, as roomsim run chunks */
#define TOL_F32 1e-4		/* of the peak: float32 rounding over many steps */
#define TOL_F64 1e-11		/* of the peak: float64 */
#define ENERGY_STEPS 5000
#define ENERGY_TOL 1e-10
#define LONG_STEPS 1000000	/* at least 10^6 (the DC issue) */
#define LONG_CHUNK 100000	/* steps between energy checks of the long runs */
/* The late mean over the peak: a float32 run keeps a static offset of 10^-7 to a few 10^-5 of
 * the peak, the rounding while its sound decays (docs/physics.md, "What remains"); the
 * product form reached 10^5 in the mesh room. */
#define MEAN_TOL 1e-4
/* The long runs' mean over their last tenth less that over their second, over the peak: the
 * offset is fixed once the sound has decayed (a few 10^-9 here), and it must not move. */
#define DRIFT_TOL 1e-6
#define SOURCE_TIME 0.05	/* s: the long runs' source is cut there */

extern int quick;		/* ROOMSIM_GPU_QUICK: a few short cases */
extern const char *roomsim;	/* the binary, for diamond_run: $ROOMSIM or build/roomsim */
/* ROOMSIM_GPU_KERNELS=PREFIX: only the larger stencils, through kernels named PREFIX... */
extern const char *only_kernels;

/* The rooms of the kernel comparisons (test_gpu.c), and their names. */
extern const char *const rooms[];
extern const char *const room_names[];

/* Carve s's grid into the L (no cells with x > 1.6 and y > 0.9; a lowered ceiling where
 * x < 1.0) and rebuild nothing. */
void carve(struct sim *s);

/* The largest |a - b| over the largest |b|; fails the test when b is silent. */
double rel_diff(const double *a, const double *b, size_t n);

/* test_gpu_run.c */
void diamond_run(void **state);
void ranks_on_gpus(void **state);
void resume_on_gpu(void **state);
void band_frames_on_gpu(void **state);
void device_memory_on_gpu(void **state);

/* test_gpu_phys.c */
void energy_on_gpu(void **state);
void receiver_grids_on_gpu(void **state);

#endif
