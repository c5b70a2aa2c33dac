/*
 * test_air - the air's absorption (solver/air.h; docs/physics.md, "Air absorption"): ISO
 * 9613-1's coefficient against the standard's tabulated values, and the time-varying filter
 * against the coefficient for pulses that have travelled 100 m and 343 m.
 */
#include "helper.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "../solver/air.h"

/*
 * ISO 9613-2, Table 2 (computed from ISO 9613-1 at the exact octave midbands 1000 10^(3k/10)
 * Hz, 101.325 kPa), dB/km, 63 Hz to 8 kHz: 20 degrees and 70 %, 10 degrees and 70 %.
 */
static const double table_20_70[8] = { 0.1, 0.3, 1.1, 2.8, 5.0, 9.0, 22.9, 76.6 };
static const double table_10_70[8] = { 0.1, 0.4, 1.0, 1.9, 3.7, 9.7, 32.8, 117 };

static void iso_table(void **state)
{
	const struct air a = { 20, 70, 101.325 }, b = { 10, 70, 101.325 };

	(void)state;
	for (int k = 0; k < 8; k++) {
		const double f = 1000 * pow(10, 0.3 * (k - 4));
		const double x = 1000 * air_attenuation(&a, f), y = 1000 * air_attenuation(&b, f);

		print_message("# %6.0f Hz: %.2f (table %.1f) and %.2f (table %.1f) dB/km\n", f, x,
			      table_20_70[k], y, table_10_70[k]);
		/* the table is rounded to 0.1 dB/km, or to three figures */
		assert_true(fabs(x - table_20_70[k]) <= 0.05 + 0.005 * table_20_70[k]);
		assert_true(fabs(y - table_10_70[k]) <= 0.05 + 0.005 * table_10_70[k]);
	}
}

/* The loss of a unit impulse at distance d (sample at d / c), in dB, at f. */
static double loss_db(const struct air *a, double c, double fs, double d, double f)
{
	const size_t n = (size_t)(fs * (d / c + 0.2));
	const size_t at = (size_t)llround(fs * d / c);
	double *x = calloc(n, sizeof(double));
	double complex y = 0;

	assert_non_null(x);
	x[at] = 1;
	assert_int_equal(air_apply(a, c, fs, x, n), 0);
	for (size_t i = 0; i < n; i++)
		y += x[i] * cexp(-2 * I * M_PI * f * ((double)i - (double)at) / fs);
	free(x);
	return 20 * log10(cabs(y));
}

/* At every octave centre up to 8 kHz (fs 48 kHz), within 0.5 dB of a(f) d. */
static void pulse_loss(void **state)
{
	const struct air a = { 20, 50, 101.325 };
	const double c = air_sound_speed(&a), fs = 48000;
	double worst = 0;

	(void)state;
	for (double d = 100; d < 400; d += 243)
		for (double f = 125; f <= 8000; f *= 2) {
			const double want = -air_attenuation(&a, f) * d, got = loss_db(&a, c, fs, d, f);

			print_message("# %3.0f m, %5.0f Hz: %.3f dB, ISO 9613-1 %.3f dB\n", d, f, got,
				      want);
			worst = fmax(worst, fabs(got - want));
		}
	assert_true(worst < 0.5);
}

/* No loss at the start; what it does is linear (two pulses filter as their sum). */
static void start_and_linearity(void **state)
{
	const struct air a = { 20, 50, 101.325 };
	const double fs = 16000, c = 343;
	const size_t n = 20000;
	double *x = calloc(n, sizeof(double)), *y = calloc(n, sizeof(double));
	double *z = calloc(n, sizeof(double));

	(void)state;
	assert_true(x && y && z);
	x[0] = 1;
	y[12345] = -0.5;
	z[0] = 1;
	z[12345] = -0.5;
	assert_int_equal(air_apply(&a, c, fs, x, n), 0);
	assert_int_equal(air_apply(&a, c, fs, y, n), 0);
	assert_int_equal(air_apply(&a, c, fs, z, n), 0);
	assert_true(fabs(x[0] - 1) < 1e-6);	/* 0 m travelled: the impulse stays */
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(z[i] - x[i] - y[i]) < 1e-12);
	free(x);
	free(y);
	free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(iso_table),
		cmocka_unit_test(pulse_loss),
		cmocka_unit_test(start_and_linearity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
