/*
 * test_gpu_phys.c - test_gpu's energy and receiver-grid cases on the GPU (gpu.h).
 */
#include "gpu.h"

#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../solver/kernels.h"
#include "../../solver/signal.h"

/* The foundation's energy test, on the GPU, for every kernel. */
void energy_on_gpu(void **state)
{
	struct sim *s = sim_open(rooms[0]);
	const size_t cells = s->grid->plan.cells;
	double *cur = malloc(cells * sizeof(double)), *prev = malloc(cells * sizeof(double));
	double sig[1] = { 1 };

	(void)state;
	assert_non_null(cur);
	assert_non_null(prev);
	for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
		struct fdtd_setup g = { .grid = s->grid, .lambda = s->lambda, .precision = 8,
					.cuda = 1, .kernel = (enum kernel_id)k };

		if (k >= KERNEL_GENERAL && k != KERNEL_DIAMOND)	/* 7-point kernels */
			continue;
		struct rs_error err = { 0 };
		struct fdtd *f = fdtd_create(&g, &err);
		double e0 = 0, worst = 0;

		if (!f)
			fail_msg("%s", err.msg);
		assert_int_equal(fdtd_add_source(f, s->room->sources[0].pos, sig, 1), 0);
		for (int n = 0; n <= ENERGY_STEPS; n += quick ? 50 : 500) {
			double e;

			assert_int_equal(fdtd_advance(f, n ? (quick ? 50 : 500) : 1, NULL), 0);
			fdtd_field(f, 0, cur);
			fdtd_field(f, 1, prev);
			e = fdtd_energy_of(s->grid, s->lambda, NULL, cur, prev);
			if (!n)
				e0 = e;
			worst = fmax(worst, fabs(e - e0) / e0);
			if (quick && n >= 100)
				break;
		}
		print_message("# %-16s energy drift over %d steps: %.2e\n", kernel_names[k],
			      ENERGY_STEPS, worst);
		assert_true(e0 > 0 && worst < ENERGY_TOL);
		fdtd_destroy(f);
	}
	free(cur);
	free(prev);
	sim_close(s);
}

/* The grid samples of steps steps on an engine made from setup, or NULL when it cannot be
 * made (*why says why). */
static float *grid_run(struct sim *s, struct fdtd_setup *setup, const double *pos, size_t n,
		       long steps, char *why, size_t len)
{
	struct rs_error err = { 0 };
	struct fdtd *f = fdtd_create(setup, &err);
	float *out = malloc((size_t)steps * n * sizeof(float));
	double *sig = malloc((size_t)steps * sizeof(double));
	long first;

	assert_non_null(out);
	assert_non_null(sig);
	if (!f) {
		snprintf(why, len, "%s", err.msg);
		free(out);
		free(sig);
		return NULL;
	}
	if (fdtd_grid_set(f, pos, n, CHUNK))
		fail_msg("grid: %s", fdtd_error(f));
	sig_source(&s->room->sources[0], s->dt, (size_t)steps, sig);
	assert_int_equal(fdtd_add_source(f, s->room->sources[0].pos, sig, (size_t)steps), 0);
	for (long done = 0; done < steps; done += CHUNK) {
		if (fdtd_advance(f, steps - done < CHUNK ? steps - done : CHUNK, NULL))
			fail_msg("advance: %s", fdtd_error(f));
		if (fdtd_grid_take(f, out + (size_t)done * n, &first) < 0 || first != done + 1)
			fail_msg("take: %s", fdtd_error(f));
	}
	fdtd_destroy(f);
	free(sig);
	return out;
}

/*
 * Receiver grids: every per-step kernel records a lattice of points (the absorbing box and
 * the carved L, both precisions) bitwise as the CPU engine does; diamond refuses a grid and
 * auto leaves it out.
 */
void receiver_grids_on_gpu(void **state)
{
	static const int which[] = { 1, 2 };

	(void)state;
	for (int w = 0; w < 2; w++)
		for (int precision = 4; precision <= 8; precision += 4) {
			struct sim *s = sim_open(rooms[which[w]]);
			struct fdtd_setup cpu = { .grid = s->grid, .lambda = s->lambda,
						  .precision = precision, .grid_receivers = 1 };
			const long steps = quick ? 40 : 300;
			double *pos = malloc(4000 * 3 * sizeof(double)), wt[8];
			int node[8][3];
			size_t n = 0;
			float *ref;
			char why[1100];

			assert_non_null(pos);
			if (which[w] == 2)
				carve(s);
			for (double z = 0.2; z < 1.2; z += 0.3)	/* a lattice, in air only */
				for (double y = 0.07; y < 1.7; y += 0.11)
					for (double x = 0.05; x < 3.1; x += 0.13) {
						const double p[3] = { x, y, z };

						if (!vox_point(s->grid, p, node, wt, NULL) && n < 4000)
							memcpy(pos + 3 * n++, p, sizeof(p));
					}
			ref = grid_run(s, &cpu, pos, n, steps, why, sizeof(why));
			assert_non_null(ref);
			for (int k = KERNEL_AUTO; k < NKERNELS; k++) {
				struct fdtd_setup gpu = cpu;
				float *got;
				size_t diff = 0;

				if (k >= KERNEL_GENERAL && k != KERNEL_DIAMOND)
					continue;	/* the 7-point kernels, auto and diamond */
				gpu.cuda = 1;
				gpu.kernel = (enum kernel_id)k;
				got = grid_run(s, &gpu, pos, n, steps, why, sizeof(why));
				if (k == KERNEL_DIAMOND) {
					assert_null(got);
					assert_non_null(strstr(why, "receiver grid"));
					continue;
				}
				if (!got)
					fail_msg("%s: %s", kernel_names[k], why);
				for (size_t i = 0; i < (size_t)steps * n; i++)
					diff += memcmp(&got[i], &ref[i], sizeof(float)) != 0;
				print_message("# %-9s %s %-16s %zu points x %ld steps: %zu differ\n",
					      room_names[which[w]], precision == 4 ? "f32" : "f64",
					      kernel_names[k], n, steps, diff);
				assert_int_equal(diff, 0);
				free(got);
			}
			free(ref);
			free(pos);
			sim_close(s);
		}
}
