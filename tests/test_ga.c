/*
 * test_ga.c - the geometric engine (solver/ga/ga.h) against closed forms: a box's image
 * sources (times and amplitudes to order 6), a diffuse box's reverberation against Eyring's
 * in every octave, energy kept by rigid walls, the synthesis's absolute scale, the crossover's
 * flat sum, rooms of shapes, rays kept in at an acute edge, the same bits on any number of
 * threads, and an open mesh refused.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper.h"
#include "../solver/air.h"
#include "../solver/ga/ga.h"
#include "../solver/iso3382.h"

static struct room *load(const char *yaml)
{
	struct rs_error err = { 0 };
	struct room *r = cfg_load_string(yaml, "test.yaml", &err);

	if (!r)
		fail_msg("%s", err.msg);
	return r;
}

static struct ga *open_ga(const struct room *r)
{
	struct rs_error err = { 0 };
	struct ga *g;

	if (ga_open(r, &g, &err))
		fail_msg("%s", err.msg);
	return g;
}

/* The room of a mesh whose OBJ text is obj, written to a new directory dir (mkdtemp's
 * template; the file's path into path, 128 bytes), its YAML "geometry: {mesh: PATH}" and
 * rest; drop_mesh() removes both. */
static struct room *mesh_room(char *dir, char *path, const char *obj, const char *rest)
{
	char yaml[1024];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, 128, "%s/room.obj", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(obj, f);
	fclose(f);
	snprintf(yaml, sizeof(yaml), "geometry: {mesh: %s}\n%s", path, rest);
	return load(yaml);
}

static void drop_mesh(const char *dir, const char *path)
{
	unlink(path);
	rmdir(dir);
}

/* ---- image sources ---- */

static const char box_yaml[] =
	"grid: {fmax: 500}\nduration: 0.5\ngeometry: {box: [5.0, 4.0, 3.0]}\n"
	"medium: {air_absorption: false}\n"
	"materials:\n"
	"  a: {absorption: 0.1, scattering: 0.2}\n  b: {absorption: 0.3, scattering: 0.05}\n"
	"  c: {absorption: {125: 0.05, 250: 0.1, 500: 0.2, 1000: 0.3, 2000: 0.4, 4000: 0.5},"
	" scattering: {125: 0.1, 250: 0.2, 500: 0.3, 1000: 0.4}}\n"
	"surfaces: {default: a, floor: b, x1: c}\n"
	"sources: [{name: S, position: [1.3, 1.7, 1.1]}]\n"
	"receivers: [{name: R, position: [3.6, 2.45, 1.75]}]\n"
	"hybrid: {crossover: 300, image_order: 6}\n";

/* The reflection factor sqrt((1 - alpha)(1 - s)) of material m in band b, as the engine's
 * inputs define it (log-frequency interpolation of band values). */
static double refl(const struct room *r, int m, int b)
{
	const struct room_material *mat = &r->materials[m];
	const double f = ga_band_f[b];
	double a = mat->absorption, s;

	if (mat->nbands) {
		a = mat->band_alpha[0];
		for (int i = 1; i < mat->nbands; i++)
			if (f >= mat->band_f[i])
				a = mat->band_alpha[i];
			else if (f > mat->band_f[i - 1])
				a = mat->band_alpha[i - 1] + log(f / mat->band_f[i - 1]) /
					log(mat->band_f[i] / mat->band_f[i - 1]) *
					(mat->band_alpha[i] - mat->band_alpha[i - 1]);
	}
	s = mat->scat[0];
	for (int i = 1; i < mat->nscat; i++)
		if (f >= mat->scat_f[i])
			s = mat->scat[i];
		else if (f > mat->scat_f[i - 1])
			s = mat->scat[i - 1] + log(f / mat->scat_f[i - 1]) /
				log(mat->scat_f[i] / mat->scat_f[i - 1]) * (mat->scat[i] - mat->scat[i - 1]);
	return sqrt((1 - a) * (1 - s));
}

/* Allen and Berkley's images of a box: x = (1 - 2q) xs + 2 m L, reflected |m - q| times by
 * the wall at 0 and |m| times by the wall at L. */
static void box_images_match_closed_form(void **state)
{
	struct room *r = load(box_yaml);
	struct ga *g = open_ga(r);
	const double *S = r->sources[0].pos, *R = r->receivers[0].pos, *L = r->box;
	const double rec[1][3] = { { R[0], R[1], R[2] } };
	struct ga_image *im;
	struct rs_error err = { 0 };
	size_t n, expected = 0, matched = 0;

	(void)state;
	assert_int_equal(ga_images(g, S, rec, 1, 6, &im, &n, &err), 0);
	for (int mx = -4; mx <= 4; mx++)
		for (int qx = 0; qx < 2; qx++)
			for (int my = -4; my <= 4; my++)
				for (int qy = 0; qy < 2; qy++)
					for (int mz = -4; mz <= 4; mz++)
						for (int qz = 0; qz < 2; qz++) {
		const int m[3] = { mx, my, mz }, q[3] = { qx, qy, qz };
		int lo[3], hi[3], order = 0;
		double p[3], d2 = 0;

		for (int a = 0; a < 3; a++) {
			p[a] = (1 - 2 * q[a]) * S[a] + 2 * m[a] * L[a];
			lo[a] = abs(m[a] - q[a]);
			hi[a] = abs(m[a]);
			order += lo[a] + hi[a];
			d2 += (p[a] - R[a]) * (p[a] - R[a]);
		}
		if (order > 6)
			continue;
		expected++;
		for (size_t i = 0; i < n; i++) {
			const double d = sqrt(d2);

			int same = fabs(im[i].t - d / r->c) < 1e-12 && im[i].order == order;

			/* the image arrives from its own direction (images of equal delay differ) */
			for (int ax = 0; ax < 3 && same; ax++)
				same = fabs(im[i].dir[ax] - (p[ax] - R[ax]) / d) < 1e-9;
			if (!same)
				continue;
			for (int b = 0; b < GA_BANDS; b++) {
				double a = 1 / d;

				for (int ax = 0; ax < 3; ax++) {
					a *= pow(refl(r, r->face_material[2 * ax], b), lo[ax]);
					a *= pow(refl(r, r->face_material[2 * ax + 1], b), hi[ax]);
				}
				if (fabs(im[i].amp[b] - a) > 1e-9 * a)
					fail_msg("order %d band %d: %.12g, expected %.12g", order, b,
						 im[i].amp[b], a);
			}
			matched++;
			break;
		}
	}
	print_message("%zu images to order 6, %zu expected, %zu matched\n", n, expected, matched);
	assert_int_equal(expected, 1 + 6 + 18 + 38 + 66 + 102 + 146);	/* 2 n^2 + ... : 377 */
	assert_int_equal(n, expected);
	assert_int_equal(matched, expected);
	free(im);
	ga_close(g);
	room_free(r);
}

/* ---- rays ---- */

/* T30 of a band's histogram (energy per bin of GA_BIN): the Schroeder curve's -5 to -35 dB
 * fit. */
static double hist_t30(const double *e, size_t nbins, int band)
{
	double *edc = malloc(nbins * sizeof(double)), tot = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	size_t k0 = 0, k1 = 0, cnt = 0;

	for (size_t k = nbins; k-- > 0;) {
		tot += e[k * GA_BANDS + band];
		edc[k] = tot;
	}
	for (size_t k = 0; k < nbins; k++) {
		const double db = 10 * log10(edc[k] / edc[0]);

		if (db > -5)
			k0 = k;
		if (db > -35)
			k1 = k;
	}
	assert_true(k1 > k0 + 10 && k1 < nbins - 1);
	for (size_t k = k0; k <= k1; k++) {
		const double x = (double)k * GA_BIN, y = 10 * log10(edc[k] / edc[0]);

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		cnt++;
	}
	free(edc);
	return -60 / ((cnt * sxy - sx * sy) / (cnt * sxx - sx * sx));
}

static const char diffuse_yaml[] =
	"grid: {fmax: 500}\nduration: 2.0\ngeometry: {box: [7.0, 5.0, 3.5]}\n"
	"medium: {temperature: 20, humidity: 40}\n"
	"materials:\n  w: {absorption: 0.15, scattering: 1}\n"
	"surfaces: {default: w}\n"
	"sources: [{name: S, position: [1.5, 1.2, 1.4]}]\n"
	"receivers: [{name: R, position: [5.1, 3.3, 1.9]}]\n"
	"hybrid: {}\n";

/* A box with scattering 1 and uniform absorption decays at Eyring's rate in every octave,
 * the air's absorption included (m from ISO 9613-1). */
static void diffuse_box_decays_as_eyring(void **state)
{
	struct room *r = load(diffuse_yaml);
	struct ga *g = open_ga(r);
	const struct air air = { r->temperature, r->humidity, r->pressure };
	const double rec[1][3] = { { r->receivers[0].pos[0], r->receivers[0].pos[1],
				     r->receivers[0].pos[2] } };
	const double V = 7.0 * 5.0 * 3.5, S = 2 * (7.0 * 5.0 + 7.0 * 3.5 + 5.0 * 3.5);
	struct ga_hist h;
	struct rs_error err = { 0 };

	(void)state;
	assert_int_equal(ga_trace(g, r->sources[0].pos, rec, 1, 0.5, 2.0, 100000, -1, 7, &h, &err),
			 0);
	assert_int_equal(h.escaped, 0);
	for (int b = 0; b < GA_BANDS - 1; b++) {
		const double m = air_attenuation(&air, ga_band_f[b]) * log(10) / 10;
		const double eyring = 24 * log(10) * V / (r->c * (-S * log(1 - 0.15) + 4 * m * V));
		const double t = hist_t30(h.e, h.nbins, b);

		print_message("%6g Hz: T30 %.3f s, Eyring %.3f s (%+.1f %%)\n", ga_band_f[b], t,
			      eyring, 100 * (t / eyring - 1));
		assert_true(fabs(t / eyring - 1) < 0.05);
	}
	ga_hist_free(&h);
	ga_close(g);
	room_free(r);
}

/* Rigid walls keep the energy: once the sound fills the room, every bin holds the steady
 * density's share, 4 pi c dt / V (units of the direct sound's energy at 1 m). */
static void rigid_walls_keep_energy(void **state)
{
	struct room *r = load("grid: {fmax: 500}\nduration: 0.6\ngeometry: {box: [4.0, 3.0, 2.5]}\n"
			      "medium: {air_absorption: false}\n"
			      "materials: {w: {absorption: 0, scattering: 0.5}}\n"
			      "surfaces: {default: w}\n"
			      "sources: [{name: S, position: [1.1, 0.9, 1.3]}]\n"
			      "receivers: [{name: R, position: [2.9, 2.1, 1.2]}]\nhybrid: {}\n");
	struct ga *g = open_ga(r);
	const double rec[1][3] = { { 2.9, 2.1, 1.2 } };
	const double expect = 4 * M_PI * r->c * GA_BIN / (4.0 * 3.0 * 2.5);
	struct ga_hist h;
	struct rs_error err = { 0 };

	(void)state;
	assert_int_equal(ga_trace(g, r->sources[0].pos, rec, 1, 0.5, 0.6, 50000, -1, 3, &h, &err),
			 0);
	for (int b = 0; b < GA_BANDS; b++) {
		double sum = 0;
		size_t cnt = 0;

		for (size_t k = h.nbins / 3; k < h.nbins; k++, cnt++)
			sum += h.e[k * GA_BANDS + b];
		print_message("band %d: %.5g per bin, %.5g expected\n", b, sum / cnt, expect);
		assert_true(fabs(sum / cnt / expect - 1) < 0.02);
	}
	ga_hist_free(&h);
	ga_close(g);
	room_free(r);
}

/* The same seed gives the same bits with one thread and with several. */
static void same_bits_on_any_threads(void **state)
{
	struct room *r = load(diffuse_yaml);
	struct ga *g = open_ga(r);
	const double rec[1][3] = { { 5.1, 3.3, 1.9 } };
	struct ga_hist h1, h3;
	struct rs_error err = { 0 };
	const int nth = omp_get_max_threads();

	(void)state;
	omp_set_num_threads(1);
	assert_int_equal(ga_trace(g, r->sources[0].pos, rec, 1, 0.5, 0.5, 20000, 2, 9, &h1, &err),
			 0);
	omp_set_num_threads(3);
	assert_int_equal(ga_trace(g, r->sources[0].pos, rec, 1, 0.5, 0.5, 20000, 2, 9, &h3, &err),
			 0);
	omp_set_num_threads(nth);
	assert_memory_equal(h1.e, h3.e, h1.nbins * GA_BANDS * sizeof(double));
	ga_hist_free(&h1);
	ga_hist_free(&h3);
	ga_close(g);
	room_free(r);
}

/* ---- spatial rendering ---- */

/* ga_render's first-order ambisonic filters: 1, y, z, x. */
static void first_order(void *ctx, const double d[3], double *out, double *delay)
{
	(void)ctx;
	out[0] = 1;
	out[1] = d[1];
	out[2] = d[2];
	out[3] = d[0];
	memset(delay, 0, 4 * sizeof(double));
}

/*
 * A spatial receiver in the diffuse box: with directions traced on three threads and on one,
 * the same bits; its directional histograms hold the energy of its plain ones (each bin of
 * GA_DIR_BIN the sum of its 1 ms bins, within 1e-9); rendered through first-order filters, W
 * is ga_synth's response exactly and each image arrives in X, Y, Z as its direction times W;
 * the late part's intensity averages out (a diffuse field): |I| / W^2 below 0.2 after 0.1 s.
 */
static void spatial_render(void **state)
{
	struct room *r = load(diffuse_yaml);
	struct ga *g = open_ga(r);
	const double rec[1][3] = { { 5.1, 3.3, 1.9 } }, fs = 48000;
	const int spatial[1] = { 1 };
	const size_t n = (size_t)(0.5 * fs);
	const struct ga_render rd = { 4, 1, first_order, NULL };
	struct ga_hist h1, h3;
	struct ga_image *im = NULL;
	size_t nim = 0;
	double *mono = calloc(n, sizeof(double)), *amb[4], iw = 0, ix[3] = { 0, 0, 0 };
	struct rs_error err = { 0 };
	const int nth = omp_get_max_threads();

	(void)state;
	omp_set_num_threads(1);
	assert_int_equal(ga_trace_spatial(g, r->sources[0].pos, rec, 1, spatial, 0.5, 0.5, 20000, 2,
					  9, &h1, &err), 0);
	omp_set_num_threads(3);
	assert_int_equal(ga_trace_spatial(g, r->sources[0].pos, rec, 1, spatial, 0.5, 0.5, 20000, 2,
					  9, &h3, &err), 0);
	omp_set_num_threads(nth);
	assert_int_equal(h1.ndbins, (size_t)50);
	assert_memory_equal(h1.d, h3.d, h1.ndbins * GA_DIR_CELLS * GA_BANDS * sizeof(double));
	for (size_t kd = 0; kd < h1.ndbins; kd++)
		for (int b = 0; b < GA_BANDS; b++) {
			double sd = 0, se = 0;

			for (int c = 0; c < GA_DIR_CELLS; c++)
				sd += h1.d[(kd * GA_DIR_CELLS + c) * GA_BANDS + b];
			for (size_t k = kd * 10; k < kd * 10 + 10; k++)
				se += h1.e[k * GA_BANDS + b];
			assert_true(fabs(sd - se) <= 1e-9 * se + 1e-300);
		}
	assert_int_equal(ga_images(g, r->sources[0].pos, rec, 1, 2, &im, &nim, &err), 0);
	assert_true(nim > 6);
	for (int c = 0; c < 4; c++)
		amb[c] = calloc(n, sizeof(double));
	assert_int_equal(ga_synth(g, im, nim, &h1, 0, fs, n, 9, mono, &err), 0);
	assert_int_equal(ga_synth_render(g, im, nim, &h1, 0, &rd, fs, n, 9, amb, &err), 0);
	assert_memory_equal(mono, amb[0], n * sizeof(double));
	{	/* the images alone: X, Y, Z are the direction times W */
		double *w[4];

		for (int c = 0; c < 4; c++)
			w[c] = calloc(n, sizeof(double));
		assert_int_equal(ga_synth_render(g, im, 1, NULL, 0, &rd, fs, n, 9, w, &err), 0);
		for (size_t i = 0; i < n; i++) {
			assert_true(fabs(w[3][i] - im[0].dir[0] * w[0][i]) < 1e-12);
			assert_true(fabs(w[1][i] - im[0].dir[1] * w[0][i]) < 1e-12);
			assert_true(fabs(w[2][i] - im[0].dir[2] * w[0][i]) < 1e-12);
		}
		for (int c = 0; c < 4; c++)
			free(w[c]);
	}
	for (size_t i = (size_t)(0.1 * fs); i < n; i++) {
		iw += amb[0][i] * amb[0][i];
		for (int a = 0; a < 3; a++)
			ix[a] += amb[0][i] * amb[a == 0 ? 3 : a][i];
	}
	print_message("late intensity against W: %.3f\n",
		      sqrt(ix[0] * ix[0] + ix[1] * ix[1] + ix[2] * ix[2]) / iw);
	assert_true(sqrt(ix[0] * ix[0] + ix[1] * ix[1] + ix[2] * ix[2]) / iw < 0.2);
	for (int c = 0; c < 4; c++)
		free(amb[c]);
	free(mono);
	free(im);
	ga_hist_free(&h1);
	ga_hist_free(&h3);
	ga_close(g);
	room_free(r);
}

/*
 * A directional source: each image's amplitude is the omni one's times the pattern towards
 * the path's first leg (exactly, to rounding; the direct sound's towards the receiver), and
 * the rays' late energy is the omni one's times the pattern's mean square over the sphere,
 * a^2 + (1 - a)^2 / 3 (a third for a cardioid), within 5 %.
 */
static void directional_source(void **state)
{
	struct room *r = load(box_yaml);
	struct ga *g = open_ga(r);
	const double rec[1][3] = { { 3.1, 1.7, 1.1 } };
	const double aim[3] = { 0.6, 0.8, 0 }, a = 0.5;
	struct room_source src = { .pattern_a = a, .aim = { aim[0], aim[1], aim[2] } };
	struct ga_image *omni = NULL, *card = NULL;
	size_t n0 = 0, n1 = 0;
	struct rs_error err = { 0 };

	(void)state;
	assert_int_equal(ga_images(g, r->sources[0].pos, rec, 1, 2, &omni, &n0, &err), 0);
	ga_directivity(g, &src, 0);
	assert_int_equal(ga_images(g, r->sources[0].pos, rec, 1, 2, &card, &n1, &err), 0);
	ga_directivity(g, NULL, 0);
	assert_int_equal(n0, n1);
	for (size_t i = 0; i < n0; i++) {
		/* the first leg's direction from the source: towards the image seen from the
		 * receiver, mirrored back: for the direct sound the receiver's direction */
		double ratio = card[i].amp[3] / omni[i].amp[3];

		assert_true(ratio > -0.001 && ratio < 1.001);
		if (card[i].order == 0) {
			double u[3], len = 0;

			for (int k = 0; k < 3; k++) {
				u[k] = rec[0][k] - r->sources[0].pos[k];
				len += u[k] * u[k];
			}
			len = sqrt(len);
			assert_true(fabs(ratio - (a + (1 - a) * (u[0] * aim[0] + u[1] * aim[1] +
							      u[2] * aim[2]) / len)) < 1e-12);
		}
		for (int b = 0; b < GA_BANDS; b++)
			assert_true(fabs(card[i].amp[b] - ratio * omni[i].amp[b]) <
				    1e-12 * fabs(omni[i].amp[b]) + 1e-300);
	}
	{	/* a talker's balloon: per band its gain towards the direct sound, every arrival
		 * `lead` later */
		struct room_balloon tb;
		struct room_source ts = { .aim = { 0, 1, 0 } };
		struct ga_image *tk = NULL;
		size_t n2 = 0;
		const double lead = 1.5e-3;
		double u[3], len = 0;

		assert_int_equal(room_balloon_library("talker", &tb), 0);
		ts.balloon = &tb;
		room_source_frame(&ts);
		ga_directivity(g, &ts, lead);
		assert_int_equal(ga_images(g, r->sources[0].pos, rec, 1, 2, &tk, &n2, &err), 0);
		ga_directivity(g, NULL, 0);
		assert_int_equal(n2, n0);
		for (int k = 0; k < 3; k++) {
			u[k] = rec[0][k] - r->sources[0].pos[k];
			len += u[k] * u[k];
		}
		for (int k = 0; k < 3; k++)
			u[k] /= sqrt(len);
		for (size_t i = 0; i < n0; i++) {
			assert_true(fabs(tk[i].t - omni[i].t - lead) < 1e-12);
			for (int b = 0; b < GA_BANDS && tk[i].order == 0; b++)
				assert_true(fabs(tk[i].amp[b] / omni[i].amp[b] -
						 room_source_gain(&ts, u, ga_band_f[b])) < 1e-12);
		}
		free(tk);
		free(tb.db);
	}
	{	/* in the diffuse room, where the walls forget where a ray came from */
		struct room *rd = load(diffuse_yaml);
		struct ga *gd = open_ga(rd);
		const double rr[1][3] = { { 5.1, 3.3, 1.9 } };
		struct ga_hist h0, h1;
		double e0 = 0, e1 = 0;

		assert_int_equal(ga_trace(gd, rd->sources[0].pos, rr, 1, 0.5, 0.5, 20000, -1, 5, &h0,
					  &err), 0);
		ga_directivity(gd, &src, 0);
		assert_int_equal(ga_trace(gd, rd->sources[0].pos, rr, 1, 0.5, 0.5, 20000, -1, 5, &h1,
					  &err), 0);
		ga_close(gd);
		room_free(rd);
		for (size_t k = 100; k < h0.nbins; k++) {
			e0 += h0.e[k * GA_BANDS + 3];
			e1 += h1.e[k * GA_BANDS + 3];
		}
		print_message("cardioid's late energy against omni's: %.4f (%.4f expected)\n",
			      e1 / e0, a * a + (1 - a) * (1 - a) / 3);
		assert_true(fabs(e1 / e0 / (a * a + (1 - a) * (1 - a) / 3) - 1) < 0.05);
		ga_hist_free(&h0);
		ga_hist_free(&h1);
	}
	free(omni);
	free(card);
	ga_close(g);
	room_free(r);
}

/* ---- synthesis and crossover ---- */

/* The energy of x (rate fs) in the band centred on fm, half an octave (an octave band) or a
 * sixth of one (a third octave) either side: an 8th-order Butterworth band-pass. */
static double band_energy(const double *x, size_t n, double fs, double fm, double half)
{
	struct iso_band b = { .fm = fm, .f1 = fm / pow(2, half), .f2 = fm * pow(2, half) };
	struct sig_filter f;
	double *y = malloc(n * sizeof(double)), e = 0;

	memcpy(y, x, n * sizeof(double));
	iso_band_filter(&b, fs, &f);
	sig_apply(&f, y, n);
	for (size_t k = 0; k < n; k++)
		e += y[k] * y[k];
	free(y);
	return e;
}

/* An arrival of amplitude a per band at time t synthesises to a peak at t with a's energy
 * in each octave (a unit impulse has energy 1 over the whole band: each octave its share);
 * a histogram's band energy comes out in the same octave within 1 dB. */
static void synthesis_keeps_the_scale(void **state)
{
	struct room *r = load(box_yaml);
	struct ga *g = open_ga(r);
	const double fs = 48000;
	const size_t n = 48000;
	struct ga_image im = { .t = 0.2123456, .order = 1 };
	size_t ntri;
	int np;
	double vol, area;
	struct ga_hist h = { .nrec = 1, .nbins = (size_t)(1.0 / GA_BIN) };
	double *y = calloc(n, sizeof(double)), *ref = calloc(n, sizeof(double));
	struct rs_error err = { 0 };

	(void)state;
	for (int b = 0; b < GA_BANDS; b++)
		im.amp[b] = 0.5;
	assert_int_equal(ga_synth(g, &im, 1, NULL, 0, fs, n, 1, y, &err), 0);
	assert_int_equal(peak_index(y, 0, n), (size_t)lround(im.t * fs));
	/* equal amplitudes in every band: exactly the band-limited impulse at t */
	for (long i = lround(im.t * fs) - 8; i <= lround(im.t * fs) + 8; i++) {
		const double u = (double)i - im.t * fs;

		assert_true(fabs(y[i] - 0.5 * sin(M_PI * u) / (M_PI * u) *
				 (0.5 + 0.5 * cos(M_PI * u / 16))) < 1e-9);
	}
	ref[lround(0.2 * fs)] = 0.5;
	for (int b = 1; b < GA_BANDS - 1; b++) {
		const double e = band_energy(y, n, fs, ga_band_f[b], 0.5),
			     e0 = band_energy(ref, n, fs, ga_band_f[b], 0.5);

		assert_true(fabs(10 * log10(e / e0)) < 0.1);
	}
	/* a histogram falling 3 dB per octave, 1e-3 / 2^b per bin in band b from 0.1 to 0.9 s:
	 * the interior's share of it comes out (Waterhouse's correction for the energy near
	 * the walls) */
	ga_describe(g, &ntri, &np, &vol, &area);
	h.e = calloc(h.nbins * GA_BANDS, sizeof(double));
	for (size_t k = 100; k < 900; k++)
		for (int b = 0; b < GA_BANDS; b++)
			h.e[k * GA_BANDS + b] = 1e-3 / pow(2, b);
	memset(y, 0, n * sizeof(double));
	assert_int_equal(ga_synth(g, NULL, 0, &h, 0, fs, n, 1, y, &err), 0);
	for (int b = 1; b < GA_BANDS - 1; b++) {
		/* the octave's share of a white signal of the band's energy, 0.8 s of it */
		const double fc = ga_band_f[b], e = band_energy(y, n, fs, fc, 0.5);
		const double want = 0.8 / pow(2, b) * (fc * sqrt(2) - fc / sqrt(2)) / (fs / 2) /
				    (1 + area * r->c / fc / (8 * vol));

		print_message("%5g Hz octave: %.4g, %.4g expected (%+.2f dB)\n", fc, e, want,
			      10 * log10(e / want));
		assert_true(fabs(10 * log10(e / want)) < 1);	/* 0.8 s of noise: 125 Hz +-0.5 dB */
	}
	free(h.e);
	free(y);
	free(ref);
	ga_close(g);
	room_free(r);
}

/* The crossover sums flat: the same signal in both parts before the mixing time comes out
 * as it went in (the branches' gains sum to one), two independent noises of one spectrum
 * after it keep their energy in every third octave round the crossover (their squares sum
 * to one); and the band weights sum to one at every frequency. */
static void crossover_sums_flat(void **state)
{
	const double fs = 48000;
	const size_t n = 8192, nl = (size_t)(20 * fs);
	double *lo = calloc(n, sizeof(double)), *hi = calloc(n, sizeof(double));
	double *a = malloc(nl * sizeof(double)), *b = malloc(nl * sizeof(double));
	struct rs_error err = { 0 };
	uint64_t seed = 1;
	double worst = 0;

	(void)state;
	for (size_t i = 0; i < n; i++)
		lo[i] = hi[i] = sin(0.01 * (double)i * (double)i) * exp(-1e-3 * (double)i);
	assert_int_equal(ga_crossover(lo, hi, n, fs, 700, 1.0, &err), 0);
	for (size_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(lo[i] - hi[i]));
	assert_true(worst < 1e-12);
	for (size_t i = 0; i < nl; i++) {	/* white noises, independent */
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		a[i] = (double)(seed >> 11) * 0x1.0p-53 - 0.5;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (double)(seed >> 11) * 0x1.0p-53 - 0.5;
	}
	{
		double *j = malloc(nl * sizeof(double));

		memcpy(j, a, nl * sizeof(double));
		assert_int_equal(ga_crossover(j, b, nl, fs, 700, 0, &err), 0);
		for (int k = -4; k <= 4; k++) {
			const double fm = 700 * pow(2, k / 6.0);
			const double ea = band_energy(a, nl, fs, fm, 1.0 / 6);
			const double ej = band_energy(j, nl, fs, fm, 1.0 / 6);

			print_message("%5.0f Hz third: joined %+.3f dB\n", fm, 10 * log10(ej / ea));
			assert_true(fabs(10 * log10(ej / ea)) < 0.1);
		}
		free(j);
	}
	for (double f = 10; f < 24000; f *= 1.01) {
		double s = 0;

		for (int k = 0; k < GA_BANDS; k++)
			s += ga_band_weight(k, f);
		assert_true(fabs(s - 1) < 1e-12);
		if (f < 700 * pow(2, -0.25))
			assert_true(ga_crossover_gain(f, 700, 1) == 1 && ga_crossover_gain(f, 700, 0) == 1);
		if (f > 700 * pow(2, 0.25))
			assert_true(ga_crossover_gain(f, 700, 1) < 1e-15 &&
				    ga_crossover_gain(f, 700, 0) < 1e-15);
	}
	free(a);
	free(b);
	free(lo);
	free(hi);
}

/* ---- rooms of shapes, open meshes ---- */

/* Trace 20000 rays of room g from src for duration seconds (receivers rec of radius, image
 * order skip, seed): none leaves the room. */
static void no_ray_leaves(const struct ga *g, const double src[3], const double (*rec)[3],
			  int nrec, double radius, double duration, int skip, unsigned long seed)
{
	struct rs_error err = { 0 };
	struct ga_hist h;

	assert_int_equal(ga_trace(g, src, rec, nrec, radius, duration, 20000, skip, seed, &h, &err),
			 0);
	print_message("%ld of %ld rays escaped, %.1f reflections each\n", h.escaped, h.rays,
		      h.reflections);
	assert_int_equal(h.escaped, 0);
	ga_hist_free(&h);
}

/* The L-shaped room of rooms/: from its leg a receiver does not see a source round the
 * corner (no direct sound), the rays stay inside, and the shapes' shared faces are no walls:
 * every first-order image lands on a wall. */
static void l_room_of_shapes(void **state)
{
	struct room *r = load("grid: {fmax: 500}\nduration: 0.5\n"
			      "geometry:\n  shapes:\n"
			      "    - {add: box, min: [0, 0, 0], max: [8, 4, 3]}\n"
			      "    - {add: box, min: [0, 4, 0], max: [4, 9, 3]}\n"
			      "    - {remove: cylinder, center: [4.6, 3.4, 0], radius: 0.25,"
			      " height: 3, material: c}\n"
			      "materials: {p: {absorption: 0.1, scattering: 0.1},"
			      " c: {absorption: 0.02, scattering: 0.5}}\n"
			      "surfaces: {default: p}\n"
			      "sources: [{name: S, position: [6.5, 2.0, 1.5]}]\n"
			      "receivers: [{name: corner, position: [2.0, 2.0, 1.2]},"
			      " {name: leg, position: [2.0, 7.5, 1.6]}]\nhybrid: {}\n");
	struct ga *g = open_ga(r);
	const double rec[2][3] = { { 2.0, 2.0, 1.2 }, { 2.0, 7.5, 1.6 } };
	struct ga_image *im[2];
	size_t n[2], ntri;
	struct rs_error err = { 0 };
	double vol, area;
	int np;

	(void)state;
	ga_describe(g, &ntri, &np, &vol, &area);
	print_message("%zu triangles, %d planes, %.2f m^3 (%.2f), %.1f m^2\n", ntri, np, vol,
		      (32 + 20) * 3 - M_PI * 0.0625 * 3, area);
	assert_true(fabs(vol / ((32 + 20) * 3 - M_PI * 0.0625 * 3) - 1) < 0.02);
	assert_int_equal(ga_images(g, r->sources[0].pos, rec, 2, 2, im, n, &err), 0);
	/* corner: sees the source directly, and its six walls' images */
	assert_true(n[0] > 7);
	assert_int_equal(im[0][0].order, 0);
	/* leg: round the corner, no direct sound */
	for (size_t i = 0; i < n[1]; i++)
		assert_int_not_equal(im[1][i].order, 0);
	assert_true(n[1] > 0);
	no_ray_leaves(g, r->sources[0].pos, rec, 2, 0.5, 0.5, 2, 1);
	free(im[0]);
	free(im[1]);
	ga_close(g);
	room_free(r);
}

/* The rays of an 8 x 4 x 3 m box traced as one shape (halves 0) or as two boxes that share
 * the face x = 4.1 (halves 1), into h; its receiver across that face from the source. */
static void box_halves(int halves, struct ga_hist *h)
{
	static const char *shapes[2] = {
		"    - {add: box, min: [0, 0, 0], max: [8, 4, 3]}\n",
		"    - {add: box, min: [0, 0, 0], max: [4.1, 4, 3]}\n"
		"    - {add: box, min: [4.1, 0, 0], max: [8, 4, 3]}\n",
	};
	struct rs_error err = { 0 };
	char yaml[1024];
	struct room *r;
	struct ga *g;

	snprintf(yaml, sizeof(yaml),
		 "grid: {fmax: 300}\nduration: 0.5\ngeometry:\n  shapes:\n%s"
		 "materials: {p: {absorption: 0.1, scattering: 0.2}}\nsurfaces: {default: p}\n"
		 "sources: [{name: S, position: [2.0, 1.7, 1.5]}]\n"
		 "receivers: [{name: R, position: [6.0, 2.1, 1.2]}]\nhybrid: {}\n",
		 shapes[halves]);
	r = load(yaml);
	g = open_ga(r);
	assert_int_equal(ga_trace(g, r->sources[0].pos, (const double (*)[3])r->receivers[0].pos,
				  1, 0.5, 0.3, 20000, -1, 5, h, &err), 0);
	ga_close(g);
	room_free(r);
}

/*
 * A face two shapes share is no wall, wherever a ray meets it: a box made of two halves
 * traces as the whole box does, ray for ray (the same reflections, the same energy at a
 * receiver across the seam). A hit's point, rounded, lies a little inside one half or the
 * other; judged there, the face reflected about half the rays that met it.
 */
static void shared_face_is_open(void **state)
{
	struct ga_hist one, two;
	double e1 = 0, e2 = 0;

	(void)state;
	box_halves(0, &one);
	box_halves(1, &two);
	for (size_t i = 0; i < one.nbins * GA_BANDS; i++) {
		e1 += one.e[i];
		e2 += two.e[i];
	}
	print_message("reflections a ray %.3f and %.3f, energy %.6g and %.6g, escaped %ld\n",
		      one.reflections, two.reflections, e1, e2, two.escaped);
	assert_true(fabs(two.reflections / one.reflections - 1) < 1e-3);
	assert_true(fabs(e2 / e1 - 1) < 1e-3);
	assert_int_equal(two.escaped, 0);
	ga_hist_free(&one);
	ga_hist_free(&two);
}

/*
 * The walls' area counts the part of a face that a shape beside it leaves open: a 4 x 3 x 2.5
 * m box with a 2 x 2.1 x 2.5 m box added on its face x = 4, which covers 2.1 of that face's
 * 3 m. The union's surface is 77.4 m^2 (59 + 28.9 less twice the 5.25 m^2 they share).
 * Judged whole at each triangle's centroid, both triangles of the large box's face x = 4
 * (their centroids 1 and 2 m along y) counted as shared, 2.25 m^2 too little.
 */
static void partly_shared_face_area(void **state)
{
	struct room *r = load("grid: {fmax: 300}\nduration: 0.5\ngeometry:\n  shapes:\n"
			      "    - {add: box, min: [0, 0, 0], max: [4, 3, 2.5]}\n"
			      "    - {add: box, min: [4, 0, 0], max: [6, 2.1, 2.5], material: q}\n"
			      "materials: {p: {absorption: 0.1, scattering: 0.1},"
			      " q: {absorption: 0.3, scattering: 0.1}}\n"
			      "surfaces: {default: p}\n"
			      "sources: [{name: S, position: [1.0, 1.0, 1.2]}]\n"
			      "receivers: [{name: R, position: [5.0, 1.0, 1.2]}]\nhybrid: {}\n");
	struct ga *g = open_ga(r);
	size_t ntri;
	double vol, area;
	int np;

	(void)state;
	ga_describe(g, &ntri, &np, &vol, &area);
	print_message("%zu triangles, %.3f m^2 of walls (the union's 77.4)\n", ntri, area);
	assert_true(fabs(area - 77.4) < 0.1);
	ga_close(g);
	room_free(r);
}

/*
 * Curved shapes hold rays in and out: a box with a dome added on top (its air inside the
 * sphere's facets) and a column and a ball removed. A point just outside one facet, near its
 * edge, lies inside the plane of the facet beside it; judged by that one facet alone it was
 * held by the sphere, so a ray leaving the dome found no wall there and left (the room of
 * test_parallel's hybrid run refused: its rays left the room).
 */
static void curved_shapes_keep_rays(void **state)
{
	struct room *r = load("grid: {fmax: 600}\nduration: 0.3\n"
			      "geometry: {shapes: [{add: box, min: [0, 0, 0], max: [1.4, 1.1, 1.2]},\n"
			      "  {add: sphere, center: [0.7, 0.55, 1.2], radius: 0.45},\n"
			      "  {remove: box, min: [0.9, 0, 0], max: [1.4, 0.4, 0.7]},\n"
			      "  {remove: cylinder, center: [0.3, 0.3, 0], radius: 0.1, height: 1.2},\n"
			      "  {remove: sphere, center: [0.4, 0.8, 0.4], radius: 0.15}]}\n"
			      "materials: {w: {absorption: 0.05, scattering: 0.3}}\n"
			      "surfaces: {default: w}\n"
			      "sources: [{name: S, position: [0.42, 0.61, 0.71]}]\n"
			      "receivers: [{name: R, position: [0.7, 0.55, 1.45]}]\nhybrid: {}\n");
	struct ga *g = open_ga(r);

	(void)state;
	no_ray_leaves(g, r->sources[0].pos, (const double (*)[3])r->receivers[0].pos, 1, 0.1, 0.3,
		      -1, 7);
	ga_close(g);
	room_free(r);
}

/*
 * A closed mesh with an acute edge: a prism 10 m long whose floor and sloping ceiling meet at
 * 4 degrees, a source 5 cm from the edge. Its rays reflect ever nearer to the edge; each must
 * restart inside the room, off the wall it hit but not through the one beside it, so none
 * leaves (a full move off the wall along its normal let 13 of these rays out).
 */
static void acute_edge_keeps_rays(void **state)
{
	char dir[] = "/tmp/roomsim-ga-XXXXXX", path[128], obj[512];
	const double top = 10 * tan(4 * M_PI / 180), rec[1][3] = { { 8, 1.5, 0.3 } };
	struct room *r;
	struct ga *g;

	(void)state;
	/* the edge along y at x = z = 0; the floor z = 0, the ceiling z = x tan 4, x = 10 */
	snprintf(obj, sizeof(obj), "v 0 0 0\nv 10 0 0\nv 10 0 %.9f\nv 0 3 0\nv 10 3 0\n"
		 "v 10 3 %.9f\nf 1 3 2\nf 4 5 6\nf 1 2 5\nf 1 5 4\nf 1 4 6\nf 1 6 3\n"
		 "f 2 3 6\nf 2 6 5\n", top, top);
	r = mesh_room(dir, path, obj,
		      "grid: {fmax: 300}\nduration: 1\n"
		      "materials: {w: {absorption: 0.02, scattering: 0.05}}\n"
		      "surfaces: {default: w}\n"
		      "sources: [{name: S, position: [0.05, 1.5, 0.0015]}]\n"
		      "receivers: [{name: R, position: [8, 1.5, 0.3]}]\nhybrid: {}\n");
	g = open_ga(r);
	no_ray_leaves(g, r->sources[0].pos, rec, 1, 0.1, 0.2, -1, 3);
	ga_close(g);
	room_free(r);
	drop_mesh(dir, path);
}

/* A mesh with a face missing: the rays leave, and the error names geometry.mesh. */
static void open_mesh_is_refused(void **state)
{
	char dir[] = "/tmp/roomsim-ga-XXXXXX", path[128];
	struct room *r;
	struct ga *g;
	struct rs_error err = { 0 };

	(void)state;
	/* a 4 x 3 x 2.5 box without its ceiling */
	r = mesh_room(dir, path,
		      "v 0 0 0\nv 4 0 0\nv 4 3 0\nv 0 3 0\nv 0 0 2.5\nv 4 0 2.5\nv 4 3 2.5\n"
		      "v 0 3 2.5\nf 1 2 3\nf 1 3 4\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\n"
		      "f 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n",
		      "grid: {fmax: 300}\nduration: 0.2\n"
		      "materials: {w: {absorption: 0.1, scattering: 0.1}}\n"
		      "surfaces: {default: w}\n"
		      "sources: [{name: S, position: [1, 1, 1]}]\n"
		      "receivers: [{name: R, position: [3, 2, 1]}]\nhybrid: {}\n");
	assert_int_equal(ga_open(r, &g, &err), RS_EINPUT);
	print_message("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "geometry.mesh"));
	assert_non_null(strstr(err.msg, "leave the room"));
	room_free(r);
	drop_mesh(dir, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(box_images_match_closed_form),
		cmocka_unit_test(diffuse_box_decays_as_eyring),
		cmocka_unit_test(rigid_walls_keep_energy),
		cmocka_unit_test(same_bits_on_any_threads),
		cmocka_unit_test(spatial_render),
		cmocka_unit_test(directional_source),
		cmocka_unit_test(synthesis_keeps_the_scale),
		cmocka_unit_test(crossover_sums_flat),
		cmocka_unit_test(l_room_of_shapes),
		cmocka_unit_test(shared_face_is_open),
		cmocka_unit_test(partly_shared_face_area),
		cmocka_unit_test(curved_shapes_keep_rays),
		cmocka_unit_test(acute_edge_keeps_rays),
		cmocka_unit_test(open_mesh_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
