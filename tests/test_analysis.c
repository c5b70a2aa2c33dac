/*
 * test_analysis - the room acoustic parameters of solver/iso3382.h (docs/analysis.md): the
 * band filters against IEC 61260-1's class 1 mask, exponentially decaying noise against the
 * closed forms of its T, EDT, C80 and D50, and a response against a reference written here
 * from ISO 3382-1's definitions.
 */
#include "helper.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/iso3382.h"

#define FS 48000.0
#define G10 1.9952623149688795	/* 10^(3/10) */

static double gain_db(const struct sig_filter *f, double freq, double fs)
{
	const double complex z1 = cexp(-I * 2 * M_PI * freq / fs), z2 = z1 * z1;
	double complex h = 1;

	for (int i = 0; i < f->nsections; i++) {
		const struct sig_biquad *s = &f->s[i];

		h *= (s->b0 + s->b1 * z1 + s->b2 * z2) / (1 + s->a1 * z1 + s->a2 * z2);
	}
	return 20 * log10(cabs(h));
}

/*
 * IEC 61260-1:2014, class 1: the relative gain (dB) at the breakpoints G^(x / b) fm, the
 * lower limit within the band and the upper limit beyond it. The breakpoints are taken at
 * G^(x / b) for third octaves too, which is stricter than the standard's mapping of the
 * octave breakpoints onto narrower bands.
 */
static const struct {
	double x, lo, hi;
} mask[] = { { 0, -0.3, 0.3 },     { 0.125, -0.4, 0.3 }, { 0.25, -0.6, 0.3 },
	     { 0.375, -1.3, 0.3 }, { 0.5, -5.0, 0.3 },   { 1, -INFINITY, -17.5 },
	     { 2, -INFINITY, -42 }, { 3, -INFINITY, -61 }, { 4, -INFINITY, -70 } };

static void class_1_filters(void **state)
{
	(void)state;
	for (int third = 0; third < 2; third++) {
		struct iso_band b[ISO_MAX_BANDS];
		const int n = iso_bands(third, 12000, FS, b);
		double worst = INFINITY;

		assert_int_equal(n, third ? 24 : 8);	/* 50 Hz to 10 kHz, 63 Hz to 8 kHz */
		for (int k = 0; k < n; k++) {
			struct sig_filter f;

			iso_band_filter(&b[k], FS, &f);
			for (size_t m = 0; m < sizeof(mask) / sizeof(mask[0]); m++)
				for (int side = -1; side <= 1; side += 2) {
					const double fr = b[k].fm * pow(G10, side * mask[m].x /
									(third ? 3 : 1));
					double g;

					if (fr >= FS / 2)
						continue;
					g = gain_db(&f, fr, FS);
					if (g < mask[m].lo || g > mask[m].hi)
						fail_msg("%s band %s: %.2f dB at %.1f Hz, outside [%g, %g]",
							 third ? "third" : "octave", b[k].name, g, fr,
							 mask[m].lo, mask[m].hi);
					if (mask[m].hi < 0)
						worst = fmin(worst, mask[m].hi - g);
				}
		}
		print_message("# %s bands: every gain inside the class 1 mask, the stop band "
			      "%.1f dB below its limit at least\n", third ? "third-octave" : "octave",
			      worst);
	}
}

/* Gaussian noise from a fixed generator (Box-Muller over a 64-bit LCG). */
static double gauss(unsigned long long *s)
{
	double u, v;

	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	u = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	v = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/*
 * Noise whose energy falls 60 dB in T, cut after 0.8 T + 0.3 s (so that the decay curve
 * needs its tail added): T20 and T30 within 2 % of T, EDT within 3 %, C80 within 0.2 dB and
 * D50 within 0.01 of 10 log10(10^(0.48 / T) - 1) and 1 - 10^(-0.3 / T): broadband, the
 * mean over NOISES / 8 noises; in the octaves from 1 kHz up, the mean over NOISES: one
 * band of noise fluctuates by more than these tolerances (its envelope has about bandwidth
 * times 50 ms independent values in D50's window), and below 1 kHz the mean of NOISES does.
 */
#define NOISES 128

static void decaying_noise(void **state)
{
	static const double Ts[] = { 0.3, 1, 3 };

	(void)state;
	for (size_t t = 0; t < sizeof(Ts) / sizeof(Ts[0]); t++) {
		const double T = Ts[t];
		const size_t n = (size_t)((0.8 * T + 0.3) * FS);
		const double c80 = 10 * log10(pow(10, 0.48 / T) - 1), d50 = 1 - pow(10, -0.3 / T);
		double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
		struct iso_band b[ISO_MAX_BANDS];
		const int nb = iso_bands(0, 12000, FS, b);

		assert_non_null(x);
		assert_non_null(y);
		for (int k = -1; k < nb; k++) {	/* broadband, then the bands */
			const int runs = k < 0 ? NOISES / 8 : NOISES;
			struct iso_params m = { 0 };
			struct sig_filter f;

			if (k >= 0 && b[k].fm < 900)
				continue;
			if (k >= 0)
				iso_band_filter(&b[k], FS, &f);
			for (int r = 0; r < runs; r++) {
				unsigned long long seed = 12345 + 1000 * t + (unsigned long long)r;
				struct iso_params p;

				for (size_t i = 0; i < n; i++)
					x[i] = gauss(&seed) * pow(10, -3 * (double)i / FS / T);
				memcpy(y, x, n * sizeof(double));
				if (k >= 0)
					sig_apply_reversed(&f, y, n);
				iso_analyse(y, n, FS, iso_onset(x, n), NAN, &p, NULL);
				assert_true(isnan(p.g));
				m.t20 += p.t20 / runs;
				m.t30 += p.t30 / runs;
				m.edt += p.edt / runs;
				m.c80 += p.c80 / runs;
				m.d50 += p.d50 / runs;
			}
			print_message("# T %.1f s, %5s: T20 %.3f, T30 %.3f, EDT %.3f s; C80 %+.2f "
				      "(%+.2f) dB, D50 %.3f (%.3f)\n", T, k < 0 ? "broad" : b[k].name,
				      m.t20, m.t30, m.edt, m.c80, c80, m.d50, d50);
			assert_true(fabs(m.t20 / T - 1) < 0.02);
			assert_true(fabs(m.t30 / T - 1) < 0.02);
			assert_true(fabs(m.edt / T - 1) < 0.03);
			assert_true(fabs(m.c80 - c80) < 0.2);
			assert_true(fabs(m.d50 - d50) < 0.01);
		}
		free(x);
		free(y);
	}
}

/*
 * The reference: ISO 3382-1's definitions written out plainly on a response long enough
 * that nothing is lost past its end: Schroeder's integral as the total minus a running sum,
 * the decay times by least squares over the samples in range, the ratios by their sums.
 */
struct ref {
	double edt, t20, t30, c50, c80, d50, ts;
};

static double ref_fit(const double *db, size_t n, double fs, double hi, double lo)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	size_t m = 0;
	int started = 0;

	for (size_t i = 0; i < n; i++) {
		if (db[i] <= hi)
			started = 1;
		if (db[i] < lo)
			break;
		if (!started)
			continue;
		sx += (double)i / fs;
		sy += db[i];
		sxx += (double)i / fs * ((double)i / fs);
		sxy += (double)i / fs * db[i];
		m++;
	}
	return -60 / ((m * sxy - sx * sy) / (m * sxx - sx * sx));
}

static void reference(const double *h, size_t n, double fs, struct ref *r)
{
	double *db = malloc(n * sizeof(double)), total = 0, run = 0, early50 = 0, early80 = 0;
	double moment = 0;

	assert_non_null(db);
	for (size_t i = 0; i < n; i++)
		total += h[i] * h[i];
	for (size_t i = 0; i < n; i++) {
		db[i] = 10 * log10((total - run) / total);
		run += h[i] * h[i];
		if ((double)i < 0.05 * fs)
			early50 += h[i] * h[i];
		if ((double)i < 0.08 * fs)
			early80 += h[i] * h[i];
		moment += (double)i / fs * h[i] * h[i];
	}
	r->edt = ref_fit(db, n, fs, 0, -10);
	r->t20 = ref_fit(db, n, fs, -5, -25);
	r->t30 = ref_fit(db, n, fs, -5, -35);
	r->c50 = 10 * log10(early50 / (total - early50));
	r->c80 = 10 * log10(early80 / (total - early80));
	r->d50 = early50 / total;
	r->ts = moment / total;
	free(db);
}

/*
 * A response with a direct sound, a few reflections and a double-slope tail (T 0.6 s, then
 * 1.4 s), 4 s long (the tail then lies 120 dB down), broadband and in the 500 Hz octave:
 * every parameter within 1 % of the reference (0.1 dB for C50 and C80).
 */
static void against_reference(void **state)
{
	const size_t n = (size_t)(4 * FS), d = (size_t)(0.01 * FS);
	double *h = calloc(n, sizeof(double));
	unsigned long long seed = 99;
	struct iso_band b[ISO_MAX_BANDS];
	const int nb = iso_bands(0, 1000, FS, b);

	(void)state;
	assert_non_null(h);
	h[d] = 1;
	h[d + 211] = 0.5;
	h[d + 587] = -0.4;
	h[d + 1333] = 0.3;
	for (size_t i = d + 100; i < n; i++) {
		const double t = (double)(i - d) / FS;

		h[i] += 0.05 * gauss(&seed) * (pow(10, -3 * t / 0.6) + 0.05 * pow(10, -3 * t / 1.4));
	}
	for (int pass = 0; pass < 2; pass++) {
		struct iso_params p;
		struct ref r;
		const size_t on = iso_onset(h, n);

		if (pass) {	/* the 500 Hz octave */
			struct sig_filter f;

			assert_string_equal(b[nb - 1].name, "500");
			iso_band_filter(&b[nb - 1], FS, &f);
			sig_apply_reversed(&f, h, n);
		}
		iso_analyse(h, n, FS, on, NAN, &p, NULL);
		reference(h + on, n - on, FS, &r);
		print_message("# %s: EDT %.4f/%.4f T20 %.4f/%.4f T30 %.4f/%.4f s, C50 %.3f/%.3f "
			      "C80 %.3f/%.3f dB, D50 %.4f/%.4f, Ts %.4f/%.4f s (tail %.1e)\n",
			      pass ? "500 Hz" : "broadband", p.edt, r.edt, p.t20, r.t20, p.t30,
			      r.t30, p.c50, r.c50, p.c80, r.c80, p.d50, r.d50, p.ts, r.ts, p.tail);
		assert_true(fabs(p.edt / r.edt - 1) < 0.01);
		assert_true(fabs(p.t20 / r.t20 - 1) < 0.01);
		assert_true(fabs(p.t30 / r.t30 - 1) < 0.01);
		assert_true(fabs(p.c50 - r.c50) < 0.1);
		assert_true(fabs(p.c80 - r.c80) < 0.1);
		assert_true(fabs(p.d50 / r.d50 - 1) < 0.01);
		assert_true(fabs(p.ts / r.ts - 1) < 0.01);
	}
	free(h);
}

/* A response cut short: without its tail T30 would come out short; with it, within 2 %. */
static void truncation(void **state)
{
	const double T = 2;
	const size_t n = (size_t)(0.6 * T * FS);
	double *x = malloc(n * sizeof(double)), *edc = malloc(n * sizeof(double));
	unsigned long long seed = 7;
	struct iso_params p;
	double plain;

	(void)state;
	assert_non_null(x);
	assert_non_null(edc);
	for (size_t i = 0; i < n; i++)
		x[i] = gauss(&seed) * pow(10, -3 * (double)i / FS / T);
	iso_analyse(x, n, FS, 0, NAN, &p, edc);
	{
		double total = 0, run = 0;

		for (size_t i = 0; i < n; i++)
			total += x[i] * x[i];
		for (size_t i = 0; i < n; i++) {
			edc[i] = 10 * log10((total - run) / total);
			run += x[i] * x[i];
		}
		plain = iso_decay(edc, n, FS, -5, -35, NULL, NULL);
	}
	print_message("# T %.1f s cut at %.1f s: T30 %.3f s with the tail (%.1e of the energy), "
		      "%.3f s without\n", T, 0.6 * T, p.t30, p.tail, plain);
	assert_true(fabs(p.t30 / T - 1) < 0.02);
	assert_true(plain < 0.97 * T);
	free(x);
	free(edc);
}

/* LF and LFC (ISO 3382-1 A.2.6) of a first-order ambisonic response of arrivals from known
 * directions: direct sound from the front (no lateral part), 0.5 from the side at 20 ms,
 * 0.4 from 30 degrees at 40 ms (its lateral part 0.4 sin 30), 0.3 from the side at 100 ms
 * (past 80 ms): LF = (0.5^2 + 0.2^2) / (1 + 0.5^2 + 0.4^2), LFC = (0.5 0.5 + 0.2 0.4) / the
 * same. */
static void lateral_fractions(void **state)
{
	const size_t n = (size_t)(0.2 * FS), at = 480;
	double *w = calloc(n, sizeof(double)), *y = calloc(n, sizeof(double)), lf, lfc;

	(void)state;
	w[at] = 1;
	w[at + 960] = y[at + 960] = 0.5;
	w[at + 1920] = 0.4;
	y[at + 1920] = 0.4 * sin(M_PI / 6);
	w[at + 4800] = y[at + 4800] = 0.3;
	iso_lateral(w, y, n, FS, at, &lf, &lfc);
	assert_true(fabs(lf - 0.29 / 1.41) < 1e-12);
	assert_true(fabs(lfc - 0.33 / 1.41) < 1e-12);
	iso_lateral(w, y, (size_t)(0.05 * FS), FS, at, &lf, &lfc);	/* shorter than 80 ms */
	assert_true(isnan(lf) && isnan(lfc));
	free(w);
	free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(class_1_filters),
		cmocka_unit_test(decaying_noise),
		cmocka_unit_test(against_reference),
		cmocka_unit_test(truncation),
		cmocka_unit_test(lateral_fractions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
