/*
 * test_io - the formats: WAV round trip through libsndfile, time alignment of resampling,
 * HDF5 snapshot shape and attributes, rirs.h5, and the YAML defaults and conversions.
 */
#include "helper.h"

#include <hdf5.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../io/rirs.h"
#include "../io/snapshot.h"
#include "../io/wav.h"
#include "../geometry/voxel.h"
#include "../solver/stencil.h"

static char dir[] = "/tmp/roomsim-test-io-XXXXXX";

static void wav_round_trip(void **state)
{
	static const enum room_wavfmt fmts[] = { ROOM_WAV_FLOAT32, ROOM_WAV_PCM24, ROOM_WAV_PCM16 };
	static const double quantum[] = { 1e-7, 1.0 / (1 << 23), 1.0 / (1 << 15) };
	const size_t n = 4801;
	double x[4801], y[4801];
	char path[256];

	(void)state;
	for (size_t i = 0; i < n; i++)
		x[i] = 0.9 * sin(0.01 * (double)i) * exp(-1e-3 * (double)i);
	for (int f = 0; f < 3; f++) {
		struct rs_error err = { 0 };
		SF_INFO info = { 0 };
		SNDFILE *sf;
		size_t clipped;

		snprintf(path, sizeof(path), "%s/t%d.wav", dir, f);
		assert_int_equal(wav_write(path, x, n, 44100, fmts[f], &clipped, &err), 0);
		assert_int_equal(clipped, 0);
		sf = sf_open(path, SFM_READ, &info);
		assert_non_null(sf);
		assert_int_equal(info.samplerate, 44100);
		assert_int_equal(info.channels, 1);
		assert_int_equal(info.frames, (sf_count_t)n);
		assert_int_equal(sf_read_double(sf, y, (sf_count_t)n), (sf_count_t)n);
		sf_close(sf);
		for (size_t i = 0; i < n; i++)
			if (fabs(x[i] - y[i]) > quantum[f])
				fail_msg("format %d sample %zu: %g read back as %g", f, i, x[i], y[i]);
		snprintf(path, sizeof(path), "%s/t%d.wav.tmp", dir, f);
		assert_int_not_equal(access(path, F_OK), 0);	/* no temporary left behind */
	}
}

/* A pulse keeps its time through resampling: soxr's output is time aligned. */
static void resampling_keeps_time(void **state)
{
	const double fs_in = 18204.7, fs_out = 48000, t0 = 0.0123;
	const size_t n = 2000, m = (size_t)llround(n / fs_in * fs_out);
	double *x = malloc(n * sizeof(double)), *y = malloc(m * sizeof(double));
	struct rs_error err = { 0 };
	double t;

	(void)state;
	for (size_t i = 0; i < n; i++)
		x[i] = exp(-pow(M_PI * 1000 * ((double)i / fs_in - t0), 2));
	assert_int_equal(wav_resample(x, n, fs_in, fs_out, y, m, &err), 0);
	t = peak_refined(y, peak_index(y, 1, m - 1)) / fs_out;
	print_message("# pulse at %.5f ms resampled to %.5f ms\n", t0 * 1e3, t * 1e3);
	assert_true(fabs(t - t0) < 0.2 / fs_out);
	free(x);
	free(y);
}

static void snapshot_file(void **state)
{
	struct snap_plane pl[2] = {
		{ "z_1.000", 2, 1.0, 3, 4, { 0.5, 0.5, 1.0 }, NULL, 2, 0 },
		{ "x_0.500", 0, 0.5, 2, 3, { 0.5, 0.25, 0.25 }, NULL, 0, 0 },
	};
	float frame[12];
	struct rs_error err = { 0 };
	char path[256];
	struct snap_file *s;
	hid_t f, d, sp, a;
	hsize_t dims[3];
	double times[3], spacing;

	(void)state;
	snprintf(path, sizeof(path), "%s/snap.h5", dir);
	s = snap_open(path, pl, 2, 0.1, 0.002, &err);
	assert_non_null(s);
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 12; i++)
			frame[i] = (float)(k * 100 + i);
		assert_int_equal(snap_append(s, 0, frame, 0.002 * k, &err), 0);
		assert_int_equal(snap_append(s, 1, frame, 0.002 * k, &err), 0);
	}
	assert_int_equal(snap_close(s, &err), 0);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	assert_true(f >= 0);
	d = H5Dopen2(f, "z_1.000", H5P_DEFAULT);
	assert_true(d >= 0);
	sp = H5Dget_space(d);
	assert_int_equal(H5Sget_simple_extent_dims(sp, dims, NULL), 3);
	assert_int_equal(dims[0], 3);
	assert_int_equal(dims[1], 3);
	assert_int_equal(dims[2], 4);
	assert_true(H5Tget_size(H5Dget_type(d)) == 4);
	a = H5Aopen(d, "times", H5P_DEFAULT);
	assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, times) >= 0);
	H5Aclose(a);
	assert_true(fabs(times[2] - 0.004) < 1e-15);
	a = H5Aopen(d, "spacing", H5P_DEFAULT);
	assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &spacing) >= 0);
	H5Aclose(a);
	assert_true(spacing == 0.1);
	assert_true(H5Aexists(d, "origin") > 0);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
	/* read back as roomsim render does: the planes, their room cells (all, as none were
	 * given for the first; the second's as given), times and a frame */
	{
		static const unsigned char room[6] = { 1, 0, 1, 1, 1, 0 };
		struct snap_reader *r;
		const struct snap_info *p;

		pl[1].room = room;
		snprintf(path, sizeof(path), "%s/snap2.h5", dir);
		s = snap_open(path, pl, 2, 0.1, 0.002, &err);
		assert_non_null(s);
		for (int k = 0; k < 2; k++)
			assert_int_equal(snap_append(s, 1, frame, 0.002 * k, &err), 0);
		assert_int_equal(snap_close(s, &err), 0);
		assert_non_null(r = snap_ropen(path, &err));
		assert_int_equal(snap_rcount(r), 2);
		p = snap_rinfo(r, 0);	/* names in order: x_0.500, z_1.000 */
		assert_string_equal(p->name, "x_0.500");
		assert_int_equal(p->frames, 2);
		assert_int_equal(p->n1 * p->n2, 6);
		assert_memory_equal(p->room, room, 6);
		assert_true(fabs(p->times[1] - 0.002) < 1e-15);
		assert_int_equal(snap_rframe(r, 0, 1, frame, &err), 0);
		assert_true(frame[5] == 205);
		p = snap_rinfo(r, 1);
		assert_int_equal(p->frames, 0);
		for (int i = 0; i < 12; i++)
			assert_int_equal(p->room[i], 1);
		snap_rclose(r);
		assert_null(snap_ropen(dir, &err));
	}
}

static void config_defaults_and_paris(void **state)
{
	struct rs_error err = { 0 };
	struct room *r = cfg_load_string(
		"grid: {fmax: 500}\nduration: 0.5\ngeometry: {box: [3, 2, 2]}\n"
		"materials: {a: {absorption: 0.3}, b: {reflection: 0.5}}\n"
		"surfaces: {floor: a, x0: b}\n"
		"sources: [{name: S, position: [1, 1, 1]}]\n"
		"receivers: [{name: R, position: [2, 1, 1]}]\n", "t.yaml", &err);

	(void)state;
	if (!r)
		fail_msg("%s", err.msg);
	assert_true(r->c == 343.0 && r->rho == 1.204 && r->ppw == 10.5 && r->courant == 1.0);
	assert_true(fabs(r->spacing - 343.0 / (500 * 10.5)) < 1e-15);
	assert_int_equal(r->precision, 4);
	assert_int_equal(r->wav_rate, 48000);
	assert_true(fabs(r->materials[0].absorption - 0.3) < 1e-9);	/* Paris inverted */
	assert_true(fabs(r->materials[1].beta - 1.0 / 3) < 1e-15);	/* (1 - R)/(1 + R) */
	assert_string_equal(r->materials[r->face_material[ROOM_CEILING]].name, "rigid");
	/* Small beta: alpha ~ 8 beta; the largest diffuse absorption is 0.951 (at beta ~ 1.6). */
	assert_true(fabs(room_absorption_of_beta(1e-6) / 8e-6 - 1) < 1e-3);
	print_message("# largest diffuse absorption %.5f\n", room_absorption_max());
	assert_true(fabs(room_absorption_max() - 0.9512) < 5e-4);
	room_free(r);
}

/* grid.dispersion picks the spacing from the scheme's own dispersion (docs/stencils.md). */
static void config_dispersion(void **state)
{
	static struct stn_stencil st;
	struct rs_error err = { 0 };
	struct room *r = cfg_load_string(
		"grid: {fmax: 500, dispersion: 0.02}\nscheme: {stencil: leggy, order: 4}\n"
		"duration: 0.5\ngeometry: {box: [3, 2, 2]}\n"
		"sources: [{name: S, position: [1, 1, 1]}]\n"
		"receivers: [{name: R, position: [2, 1, 1]}]\n", "t.yaml", &err);

	(void)state;
	if (!r)
		fail_msg("%s", err.msg);
	assert_int_equal(stn_leggy(&st, 2), 0);
	print_message("# leggy order 4 at its limit: %.3f ppw for 2 %%\n", r->ppw);
	assert_true(fabs(r->ppw - stn_ppw_for(&st, stn_courant_limit(&st), 0.02)) < 1e-9);
	assert_true(fabs(stn_worst_error(&st, 0.5, r->ppw) - 0.02) < 1e-6);
	assert_true(fabs(r->spacing - 343.0 / (500 * r->ppw)) < 1e-12);
	room_free(r);
}

/*
 * grid.fit: the spacing shrinks by at most a tenth until the box's sides are within 0.05 of
 * whole cells, and on while that brings them closer (3 x 2.5 x 2 m at fmax 500 Hz and
 * dispersion 0.01: 0.33 cells off; 62.5 mm, 0.958 of the spacing, makes them 40, 32 and 48
 * cells, where the first spacing within 0.05 left each side about 0.04 cells long), ppw
 * follows, and the planned grid simulates each side within 0.002 cells; a box whose sides
 * are whole cells already keeps its spacing; a room of shapes has its bounds fitted.
 */
static void config_fit(void **state)
{
	const char *text = "grid: {fmax: 500, dispersion: 0.01, fit: true}\nduration: 0.5\n"
			   "geometry: {box: [3, 2.5, 2]}\n"
			   "sources: [{name: S, position: [1, 1, 1]}]\n"
			   "receivers: [{name: R, position: [2, 1, 1]}]\n";
	const double whole[3] = { 2.0, 1.5, 1.0 };
	struct rs_error err = { 0 };
	struct room *r = cfg_load_string(text, "t.yaml", &err);
	struct vox_plan plan;
	double worst;

	(void)state;
	if (!r)
		fail_msg("%s", err.msg);
	assert_true(r->fit);
	assert_true(fabs(r->unfitted - 343.0 / (500 * 10.518)) < 1e-4);
	assert_true(r->spacing < r->unfitted && r->spacing >= VOX_FIT_LEAST * r->unfitted);
	assert_true(vox_fit_residual(r->box, r->unfitted) > 0.3);
	assert_true(vox_fit_residual(r->box, r->spacing) < 0.002);
	assert_true(fabs(r->spacing - 0.0625) < 0.002 * 0.0625 / 48);
	assert_true(fabs(r->ppw - 343.0 / (500 * r->spacing)) < 1e-9);
	vox_plan(r, &plan);
	for (int d = 0; d < 3; d++)
		assert_true(fabs(plan.size[d] - r->box[room_axis_of(plan.slab, d)]) <=
			    0.002 * r->spacing);
	room_free(r);
	assert_true(vox_fit_spacing(whole, 0.05, &worst) == 0.05 && worst < 1e-9);
	/* a room of shapes: its bounds, 3.2 x 2.5 x 2.1 m, fitted as close as a tenth allows */
	r = cfg_load_string("grid: {fmax: 500, dispersion: 0.01, fit: true}\nduration: 0.5\n"
			    "geometry:\n  shapes:\n    - {add: box, min: [0, 0, 0], max: [3.2, 2.5, 2]}\n"
			    "    - {add: box, min: [0, 0, 1], max: [1, 1, 2.1]}\n"
			    "sources: [{name: S, position: [1.5, 1.5, 1]}]\n"
			    "receivers: [{name: R, position: [2, 1, 1]}]\n", "t.yaml", &err);
	if (!r)
		fail_msg("%s", err.msg);
	assert_true(r->shaped && fabs(r->box[2] - 2.1) < 1e-12);
	assert_true(r->spacing == vox_fit_spacing(r->box, r->unfitted, &worst));
	print_message("# shapes: bounds %.3f cells off at the spacing fmax gives, %.3f fitted\n",
		      vox_fit_residual(r->box, r->unfitted), worst);
	assert_true(worst < 0.5 * vox_fit_residual(r->box, r->unfitted));
	room_free(r);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wav_round_trip),
		cmocka_unit_test(resampling_keeps_time),
		cmocka_unit_test(snapshot_file),
		cmocka_unit_test(config_defaults_and_paris),
		cmocka_unit_test(config_dispersion),
		cmocka_unit_test(config_fit),
	};

	return cmocka_run_group_tests_name("io", tests, setup, teardown);
}
