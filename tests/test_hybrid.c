/*
 * test_hybrid.c - the hybrid run: the wave engine and the geometric engine give the same room
 * the same octave-band energies and decay where both are valid, their join at the crossover
 * has no step in level, and `roomsim run` writes full-band WAVs and rirs.h5 that `roomsim
 * analyze` reads to 8 kHz.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper.h"
#include "../io/rirs.h"
#include "../io/wav.h"
#include "../solver/ga/ga.h"
#include "../solver/iso3382.h"

#define WAV_RATE 48000.0

/* x (n samples at fs, a unit-gain response) through band [f1, f2] of width third or octave
 * centred on fm: its energy times fs (the same for any rate) and its T30. */
static void band(const double *x, size_t n, double fs, double fm, int third, double *e,
		 double *t)
{
	const double half = pow(2, third ? 1.0 / 6 : 0.5);
	struct iso_band b = { .fm = fm, .f1 = fm / half, .f2 = fm * half };
	struct sig_filter f;
	double *y = malloc(n * sizeof(double)), sum = 0;

	assert_non_null(y);
	memcpy(y, x, n * sizeof(double));
	iso_band_filter(&b, fs, &f);
	sig_apply_reversed(&f, y, n);
	for (size_t i = 0; i < n; i++)
		sum += y[i] * y[i];
	*e = sum * fs;
	if (t)
		*t = t30(y, n, fs);
	free(y);
}

/* A mono WAV's samples (malloc'd) and their count. */
static const char box_yaml[] =
	"grid: {fmax: 1500}\nduration: 0.6\nscheme: {precision: float32}\n"
	"geometry: {box: [4.0, 3.0, 2.5]}\n"
	"medium: {air_absorption: false}\n"
	"materials: {w: {absorption: 0.15, scattering: 0.1}}\n"
	"surfaces: {default: w}\n"
	"sources: [{name: S, position: [1.1, 0.9, 1.3], signal: impulse}]\n"
	"receivers: [{name: R1, position: [2.7, 2.25, 1.65]}, {name: R2, position: [3.3, 0.8, 1.1]},"
	" {name: R3, position: [1.6, 2.4, 0.7]}, {name: R4, position: [3.1, 1.7, 2.0]}]\n"
	"hybrid: {crossover: 1000}\n";

#define NREC 4

/* The strongest check there is: both engines, the same box. At four receivers, the octaves
 * where the wave part is valid (500 Hz and 1 kHz below fmax 1.5 kHz) agree within 1 dB in
 * energy and 10 % in T30, averaged over the receivers as ISO 3382-1 averages positions (one
 * point of a small room's field departs from the mean by its modes); joined at 1 kHz, the
 * thirds round the crossover lie between the two parts. */
static void wave_and_geometric_agree_in_a_box(void **state)
{
	struct sim *s = sim_open(box_yaml);
	const struct room *r = s->room;
	const double fs = 1 / s->dt;
	const size_t n = (size_t)s->steps + 1, nw = (size_t)(r->duration * WAV_RATE);
	double rec[NREC][3], *wave[NREC], *geo[NREC], *joined = malloc(nw * sizeof(double));
	double ew[2] = { 0 }, eg[2] = { 0 }, tw_sum[2] = { 0 }, tg_sum[2] = { 0 };
	struct ga *g;
	struct ga_image *im[NREC];
	size_t nim[NREC];
	struct ga_hist h;
	struct rs_error err = { 0 };

	(void)state;
	assert_int_equal(r->nreceivers, NREC);
	sim_run(s, 0, -1);
	assert_int_equal(ga_open(r, &g, &err), 0);
	for (int q = 0; q < NREC; q++)
		memcpy(rec[q], r->receivers[q].pos, sizeof(rec[q]));
	assert_int_equal(ga_images(g, r->sources[0].pos, (const double (*)[3])rec, NREC, 3, im, nim,
				   &err), 0);
	assert_int_equal(ga_trace(g, r->sources[0].pos, (const double (*)[3])rec, NREC, 0.3,
				  r->duration, 200000, 3, 1, &h, &err), 0);
	for (int q = 0; q < NREC; q++) {
		wave[q] = malloc(nw * sizeof(double));
		geo[q] = calloc(nw, sizeof(double));
		assert_non_null(wave[q]);
		/* the wave part at the WAV rate, as the run's WAVs have it: unit in-band gain */
		assert_int_equal(wav_resample(fdtd_receiver(s->engine, q), n, fs, WAV_RATE, wave[q],
					      nw, &err), 0);
		for (size_t i = 0; i < nw; i++)
			wave[q][i] *= fs / WAV_RATE;
		assert_int_equal(ga_synth(g, im[q], nim[q], &h, q, WAV_RATE, nw, 1, geo[q], &err), 0);
		for (int k = 0; k < 2; k++) {
			const double fm = k ? 1000 : 500;
			double e1, e2, tw, tg;

			band(wave[q], nw, WAV_RATE, fm, 0, &e1, &tw);
			band(geo[q], nw, WAV_RATE, fm, 0, &e2, &tg);
			ew[k] += e1;
			eg[k] += e2;
			tw_sum[k] += tw / NREC;
			tg_sum[k] += tg / NREC;
			print_message("R%d %4g Hz octave: energy wave %.4g, geometric %.4g (%+.2f dB); "
				      "T30 %.3f s, %.3f s (%+.1f %%)\n", q + 1, fm, e1, e2,
				      10 * log10(e2 / e1), tw, tg, 100 * (tg / tw - 1));
		}
	}
	for (int k = 0; k < 2; k++) {
		print_message("%4g Hz octave, the receivers' mean: energy %+.2f dB, T30 %.3f s and "
			      "%.3f s (%+.1f %%)\n", k ? 1000.0 : 500.0, 10 * log10(eg[k] / ew[k]),
			      tw_sum[k], tg_sum[k], 100 * (tg_sum[k] / tw_sum[k] - 1));
		assert_true(fabs(10 * log10(eg[k] / ew[k])) < 1);
		assert_true(fabs(tg_sum[k] / tw_sum[k] - 1) < 0.10);
	}
	memcpy(joined, wave[0], nw * sizeof(double));
	assert_int_equal(ga_crossover(joined, geo[0], nw, WAV_RATE, 1000, ga_mixing_time(g), &err),
			 0);
	for (int k = -3; k <= 3; k++) {
		const double fm = 1000 * pow(2, k / 3.0);
		double e1, e2, ej;

		band(wave[0], nw, WAV_RATE, fm, 1, &e1, NULL);
		band(geo[0], nw, WAV_RATE, fm, 1, &e2, NULL);
		band(joined, nw, WAV_RATE, fm, 1, &ej, NULL);
		print_message("%6.0f Hz third: wave %+.2f dB, geometric %+.2f dB, joined %+.2f dB\n",
			      fm, 10 * log10(e1), 10 * log10(e2), 10 * log10(ej));
		assert_true(10 * log10(ej) > 10 * log10(fmin(e1, e2)) - 0.5);
		assert_true(10 * log10(ej) < 10 * log10(fmax(e1, e2)) + 0.5);
	}
	for (int q = 0; q < NREC; q++) {
		free(im[q]);
		free(wave[q]);
		free(geo[q]);
	}
	ga_hist_free(&h);
	ga_close(g);
	free(joined);
	sim_close(s);
}

/* `roomsim run` of a hybrid room: WAVs that hold rir_full, rir_geometric beside it, and an
 * analysis from 63 Hz to 8 kHz. */
static void hybrid_run_writes_full_band(void **state)
{
	char dir[] = "/tmp/roomsim-hybrid-XXXXXX", yaml[1200], path[256], out[512];
	struct rirs_data d;
	struct rs_error err = { 0 };
	double *w;
	size_t frames;
	int rate, channels;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(yaml, sizeof(yaml),
		 "grid: {fmax: 500}\nduration: 0.4\ngeometry: {box: [4.0, 3.0, 2.5]}\n"
		 "materials: {w: {absorption: 0.2, scattering: 0.1},"
		 " seats: {library: audience_upholstered_chairs_2, scattering: theatre_audience}}\n"
		 "surfaces: {default: w, floor: seats}\n"
		 "sources: [{name: S, position: [1.1, 0.9, 1.3], signal: impulse}]\n"
		 "receivers: [{name: R, position: [2.7, 2.25, 1.65]}]\n"
		 "output: {dir: %s/out, wav: {samplerate: 48000}}\n"
		 "hybrid: {crossover: 300, rays: 20000}\n", dir);
	snprintf(path, sizeof(path), "%s/room.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(yaml, f);
	fclose(f);
	assert_int_equal(sh("%s run %s -q", getenv("ROOMSIM") ? getenv("ROOMSIM") :
			    "build/roomsim", path), 0);
	snprintf(out, sizeof(out), "%s/out/rirs.h5", dir);
	assert_int_equal(rirs_read(out, &d, &err), 0);
	assert_int_equal(d.full, 1);
	assert_true(d.fs == 48000);
	snprintf(out, sizeof(out), "%s/out/S_R.wav", dir);
	w = wav_read(out, &frames, &channels, &rate);
	assert_int_equal(channels, 1);
	assert_int_equal(rate, 48000);
	assert_int_equal(frames, (size_t)(0.4 * 48000));
	for (size_t i = 0; i < frames; i++)	/* float32 WAVs: the joined response */
		assert_true(fabs(w[i] - d.signals[i]) <= 1e-7 * fabs(d.signals[i]) + 1e-12);
	{	/* full band: the 8 kHz octave has the 1 kHz octave's order of energy */
		double e1, e8;

		band(d.signals, d.nsamples, d.fs, 1000, 0, &e1, NULL);
		band(d.signals, d.nsamples, d.fs, 8000, 0, &e8, NULL);
		print_message("1 kHz octave %.3g, 8 kHz octave %.3g\n", e1, e8);
		assert_true(e8 > 0.1 * e1);
	}
	assert_int_equal(sh("%s analyze %s/out --no-plots -q", getenv("ROOMSIM") ?
			    getenv("ROOMSIM") : "build/roomsim", dir), 0);
	snprintf(out, sizeof(out), "grep -q '\"8k\"\\|8000' %s/out/analysis.json", dir);
	assert_int_equal(sh("%s", out), 0);
	free(w);
	rirs_free(&d);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wave_and_geometric_agree_in_a_box),
		cmocka_unit_test(hybrid_run_writes_full_band),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
