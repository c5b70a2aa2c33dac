/*
 * test_snapshots - the snapshot planes hold the field within the run's band
 * (output.snapshots.band: fmax, the default; docs/output.md, "Snapshots"):
 *  - each band-limited frame is the raw planes of the steps around it filtered offline with
 *    the same filter (sig_band_fir), to the bit;
 *  - in a box with the default example's grid (fmax 1 kHz, 10.5 points per wavelength) and
 *    walls, less than 1 % of a frame's energy lies above the wavenumber of fmax, early and
 *    late, where the raw field (band: full) holds most of its energy there;
 *  - a run resumed from a checkpoint taken in the middle of the frames' windows writes the
 *    same frames as one that never stopped.
 * The binary is $ROOMSIM (default build/roomsim).
 */
#include "helper.h"

#include <fftw3.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/signal.h"

static char dir[] = "/tmp/roomsim-test-snapshots-XXXXXX";
static const char *roomsim;

/* Dataset `name` of the file at path as floats (malloc'd); its dimensions in dims. */
static float *h5_floats(const char *path, const char *name, hsize_t dims[3])
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d, sp;
	float *v;

	assert_true(f >= 0);
	assert_true((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
	sp = H5Dget_space(d);
	assert_int_equal(H5Sget_simple_extent_dims(sp, dims, NULL), 3);
	assert_non_null(v = malloc(sizeof(float) * dims[0] * dims[1] * dims[2]));
	assert_true(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
	return v;
}

/* The attribute `name` (a double) of dataset `set` in the file at path. */
static double h5_attr(const char *path, const char *set, const char *name)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d, a;
	double v = 0;

	assert_true(f >= 0);
	assert_true((d = H5Dopen2(f, set, H5P_DEFAULT)) >= 0);
	assert_true((a = H5Aopen(d, name, H5P_DEFAULT)) >= 0);
	assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
	H5Aclose(a);
	H5Dclose(d);
	H5Fclose(f);
	return v;
}

/*
 * A run of every step's raw planes (band: full, every: 1) and one of band-limited frames
 * every 25 steps: frame j of the second is sum_k h[k] (float)(raw step j 25 - m + k), in
 * step order in float, the same bits; frames whose window passes the run's end are left out.
 */
static void frames_are_the_raw_field_filtered(void **state)
{
	char a[512], b[512];
	hsize_t da[3], db[3];
	float *raw, *band;
	double *h, dt;
	int m;
	const long every = 25;

	(void)state;
	assert_int_equal(sh("sed -e 's/^duration: .*/duration: 0.06/' -e 's/snapshots: {every: 20,/"
			    "snapshots: {every: 1, band: full,/' tests/small.yaml > %s/raw.yaml && "
			    "sed -e 's/^duration: .*/duration: 0.06/' -e 's/snapshots: {every: 20,/"
			    "snapshots: {every: 25, band: fmax,/' tests/small.yaml > %s/band.yaml",
			    dir, dir), 0);
	assert_int_equal(sh("%s run %s/raw.yaml --out %s/raw --backend cpu -q && %s run "
			    "%s/band.yaml --out %s/band --backend cpu -q", roomsim, dir, dir,
			    roomsim, dir, dir), 0);
	assert_int_equal(sh("h5dump -a band %s/band/S1_snapshots.h5 | grep -q 'fmax: low-passed'",
			    dir), 0);
	for (int plane = 0; plane < 2; plane++) {
		const char *name = plane ? "x_1.000" : "z_0.600";
		long frames = 0;

		snprintf(a, sizeof(a), "%s/raw/S1_snapshots.h5", dir);
		snprintf(b, sizeof(b), "%s/band/S1_snapshots.h5", dir);
		raw = h5_floats(a, name, da);
		band = h5_floats(b, name, db);
		dt = h5_attr(a, name, "frame_interval");
		m = sig_band_fir(500, 1 / dt, &h);
		assert_true(m > 20);
		assert_true(da[1] == db[1] && da[2] == db[2]);
		for (long j = 0; j * every + m < (long)da[0]; j++)
			frames++;
		print_message("# %s: %llu raw planes, %llu frames of the band (m = %d steps), "
			      "%ld expected\n", name, (unsigned long long)da[0],
			      (unsigned long long)db[0], m, frames);
		assert_int_equal(db[0], frames);
		for (long j = 0; j < frames; j++) {
			const size_t n = da[1] * da[2];
			size_t differ = 0;

			for (size_t i = 0; i < n; i++) {
				float sum = 0;

				for (int k = 0; k <= 2 * m; k++) {
					const long step = j * every - m + k;

					if (step >= 0)
						sum += (float)(h[k] * (double)raw[(size_t)step * n + i]);
				}
				differ += memcmp(&sum, &band[(size_t)j * n + i], sizeof(float)) != 0;
			}
			if (differ)
				fail_msg("%s frame %ld: %zu of %zu values differ from the raw planes "
					 "filtered", name, j, differ, n);
		}
		free(h);
		free(raw);
		free(band);
	}
}

/* The share of a frame's energy above wavenumber kmax (rad/m): its cosine transform (the
 * even extension, as rigid walls mirror the field) over the n1 x n2 plane of spacing hh. */
static double above(const float *v, int n1, int n2, double hh, double kmax)
{
	double *x = fftw_alloc_real((size_t)n1 * n2), *y = fftw_alloc_real((size_t)n1 * n2);
	fftw_plan p = fftw_plan_r2r_2d(n1, n2, x, y, FFTW_REDFT10, FFTW_REDFT10, FFTW_ESTIMATE);
	double hi = 0, all = 0;

	for (size_t i = 0; i < (size_t)n1 * n2; i++)
		x[i] = v[i];
	fftw_execute(p);
	for (int a = 0; a < n1; a++)
		for (int b = 0; b < n2; b++) {
			const double ka = M_PI * a / (n1 * hh), kb = M_PI * b / (n2 * hh);
			const double e = y[(size_t)a * n2 + b] * y[(size_t)a * n2 + b];

			all += e;
			hi += ka * ka + kb * kb > kmax * kmax ? e : 0;
		}
	fftw_destroy_plan(p);
	fftw_free(x);
	fftw_free(y);
	return all > 0 ? hi / all : 0;
}

/*
 * The default example's grid, walls and source in a 2.5 x 2 x 1.5 m box: frames at 11 ms and
 * 55 ms. Band-limited, under 1 % of each frame's energy lies above the wavenumber of fmax;
 * raw, a third of it or more (the grid's own band, which the impulse fills).
 */
static void band_holds_the_energy_below_fmax(void **state)
{
	char path[512];
	const double c = 343.0, fmax = 1000;

	(void)state;
	for (int full = 0; full < 2; full++) {
		hsize_t d[3];
		float *v;
		double hh;

		assert_int_equal(sh("sed -e 's/^duration: .*/duration: 0.07/' -e 's/box: .*/box: "
				    "[2.5, 2.0, 1.5]/' -e 's/position: \\[1.2, 1.5, 1.4\\]/position: "
				    "[0.7, 0.6, 0.5]/' -e 's/position: \\[3.7, 2.5, 1.2\\]/position: "
				    "[1.8, 1.4, 1.0]/' -e 's/position: \\[2.5, 3.1, 1.6\\]/position: "
				    "[1.3, 1.1, 0.9]/' -e 's/snapshots: {every: 200,/snapshots: {every: "
				    "200, band: %s,/' -e 's/at: 1.4/at: 0.7/' examples/shoebox.yaml > "
				    "%s/ex%d.yaml", full ? "full" : "fmax", dir, full), 0);
		assert_int_equal(sh("%s run %s/ex%d.yaml --out %s/ex%d --backend cpu -q", roomsim,
				    dir, full, dir, full), 0);
		snprintf(path, sizeof(path), "%s/ex%d/S1_snapshots.h5", dir, full);
		v = h5_floats(path, "z_0.700", d);
		hh = h5_attr(path, "z_0.700", "spacing");
		assert_true(d[0] >= 6);
		for (int f = 1; f <= 5; f += 4) {	/* 11 ms and 55 ms */
			const double share = above(v + (size_t)f * d[1] * d[2], (int)d[1], (int)d[2],
						   hh, 2 * M_PI * fmax / c);

			print_message("# band %s, frame at %2.0f ms: %.4f %% of its energy above "
				      "the wavenumber of fmax\n", full ? "full" : "fmax",
				      1e3 * f * h5_attr(path, "z_0.700", "frame_interval"), 100 * share);
			if (full)	/* 46 % at 11 ms, 82 % at 55 ms when written */
				assert_true(share > 0.3);
			else
				assert_true(share < 0.01);
		}
		free(v);
	}
}

/* SIGTERM in the middle of frames' windows (held at step 1111 of frames every 50, each over
 * 265 steps, so six sums under way): the checkpoint keeps the sums, and --resume writes the
 * frames of a run that never stopped. */
static void resumed_frames_are_the_same(void **state)
{
	pid_t pid;
	char err[512];

	(void)state;
	assert_int_equal(sh("sed -e 's/^duration: .*/duration: 0.3/' -e 's/snapshots: {every: 20,/"
			    "snapshots: {every: 50, band: fmax,/' tests/small.yaml > %s/r.yaml && "
			    "%s run %s/r.yaml --out %s/r-ref --backend cpu -q", dir, roomsim, dir,
			    dir), 0);
	snprintf(err, sizeof(err), "%s/r.err", dir);
	pid = start_held(err, 1111, "exec %s run %s/r.yaml --out %s/r --backend cpu 2> %s", roomsim,
			 dir, dir, err);
	kill(pid, SIGTERM);
	assert_int_equal(exit_status(pid), 1);
	assert_int_equal(sh("%s run %s/r.yaml --out %s/r --backend cpu --resume -q && cd %s && "
			    "for f in S1_snapshots.h5 S2_snapshots.h5; do h5diff r-ref/$f r/$f || "
			    "exit 1; done && cmp r-ref/S1_R1.wav r/S1_R1.wav", roomsim, dir, dir,
			    dir), 0);
}

static int setup(void **state)
{
	(void)state;
	roomsim = getenv("ROOMSIM") ? getenv("ROOMSIM") : "build/roomsim";
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return sh("rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames_are_the_raw_field_filtered),
		cmocka_unit_test(band_holds_the_energy_below_fmax),
		cmocka_unit_test(resumed_frames_are_the_same),
	};

	return cmocka_run_group_tests_name("snapshots", tests, setup, teardown);
}
