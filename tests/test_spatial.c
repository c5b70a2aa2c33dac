/*
 * test_spatial.c - spherical harmonics (ACN, SN3D) and the ambisonic encoder of
 * solver/spatial.h: the harmonics against their closed forms and their orthogonality, and
 * plane waves from known directions sampled at a ball of grid points encoded to order 3,
 * whose direction of arrival and channel gains must match within the encoder's band.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"
#include "../solver/spatial.h"

/* The first orders in closed form (AmbiX), and SN3D: sum over m of Y_nm^2 is 1. */
static void harmonics(void **state)
{
	const double az = 0.7, el = -0.3;
	const double d[3] = { cos(el) * cos(az), cos(el) * sin(az), sin(el) };
	double y[64], gram[16][16] = { { 0 } }, dw = 0;

	(void)state;
	sp_sh(7, d, y);
	assert_true(fabs(y[0] - 1) < 1e-15);
	assert_true(fabs(y[1] - cos(el) * sin(az)) < 1e-15);
	assert_true(fabs(y[2] - sin(el)) < 1e-15);
	assert_true(fabs(y[3] - cos(el) * cos(az)) < 1e-15);
	assert_true(fabs(y[6] - 0.5 * (3 * sin(el) * sin(el) - 1)) < 1e-14);	/* ACN 6: R */
	assert_true(fabs(y[8] - sqrt(3) / 2 * cos(el) * cos(el) * cos(2 * az)) < 1e-14);
	for (int n = 0; n <= 7; n++) {
		double sum = 0;

		for (int m = -n; m <= n; m++)
			sum += y[n * n + n + m] * y[n * n + n + m];
		assert_true(fabs(sum - 1) < 1e-12);
	}
	/* orthogonal over the sphere, each of norm 4 pi / (2n + 1) (midpoint rule) */
	for (int i = 0; i < 400; i++)
		for (int j = 0; j < 800; j++) {
			const double t = (i + 0.5) / 400 * M_PI - M_PI / 2, p = (j + 0.5) / 800 * 2 * M_PI;
			const double u[3] = { cos(t) * cos(p), cos(t) * sin(p), sin(t) };
			const double w = cos(t) * (M_PI / 400) * (2 * M_PI / 800);

			sp_sh(3, u, y);
			dw += w;
			for (int a = 0; a < 16; a++)
				for (int b = 0; b < 16; b++)
					gram[a][b] += w * y[a] * y[b];
		}
	for (int a = 0; a < 16; a++)
		for (int b = 0; b < 16; b++) {
			const int n = (int)floor(sqrt(a + 0.5));

			assert_true(fabs(gram[a][b] - (a == b ? 4 * M_PI / (2 * n + 1) : 0)) < 1e-4);
		}
	assert_true(fabs(dw - 4 * M_PI) < 1e-4);
	/* the spherical Bessel functions against their closed forms */
	for (double x = 0.01; x < 30; x *= 1.3) {
		assert_true(fabs(sp_bessel(0, x) - sin(x) / x) < 1e-12);
		assert_true(fabs(sp_bessel(2, x) - ((3 / (x * x) - 1) * sin(x) / x -
						    3 * cos(x) / (x * x))) < 1e-9);
	}
}

#define FS 48000.0
#define C 343.0

/* A tone burst at f0 around t0: the plane wave's signal. */
static double burst(double t, double f0)
{
	const double t0 = 0.02, s = 3 / f0;

	return exp(-((t - t0) / s) * ((t - t0) / s)) * sin(2 * M_PI * f0 * (t - t0));
}

/*
 * Plane waves from six directions at frequencies across the encoder's band (order 3, fit 5,
 * a ball of radius 6 h, h = 2 cm): the first order's intensity points to the source within
 * 3 degrees, and every channel's energy is its harmonic's squared times W's within 0.5 dB
 * (where that harmonic is not near zero).
 */
static void plane_waves(void **state)
{
	const double h = 0.02;
	struct sp_encoder e;
	struct rs_error err = { 0 };
	const size_t n = 4096;
	double lo, hi, worst_doa = 0, worst_db = 0;
	static const double dirs[6][2] = { { 0, 0 }, { 90, 0 }, { 200, 30 }, { -60, -45 },
					   { 135, 70 }, { 10, -10 } };

	(void)state;
	assert_int_equal(sp_encoder_ball(&e, 3, 5, h, 6 * h, 1000, &err), 0);
	sp_band(&e, C, &lo, &hi);
	print_message("%d points in %d shells; band %.0f to %.0f Hz\n", e.npoints, e.nshells, lo, hi);
	assert_true(lo < hi);
	for (int di = 0; di < 6; di++)
		for (double f0 = fmax(lo, 100) * 1.2; f0 < hi * 0.95; f0 *= 1.6) {
			const double az = dirs[di][0] * M_PI / 180, el = dirs[di][1] * M_PI / 180;
			const double u[3] = { cos(el) * cos(az), cos(el) * sin(az), sin(el) };
			double **p = malloc((size_t)e.npoints * sizeof(double *)), *out[16], y[16];
			double v[3] = { 0, 0, 0 }, ew = 0, doa;

			sp_sh(3, u, y);
			for (int q = 0; q < e.npoints; q++) {
				const double lead = (u[0] * e.off[q][0] + u[1] * e.off[q][1] +
						     u[2] * e.off[q][2]) / C;

				p[q] = malloc(n * sizeof(double));
				for (size_t i = 0; i < n; i++)
					p[q][i] = burst((double)i / FS + lead, f0);
			}
			for (int a = 0; a < 16; a++)
				out[a] = malloc(n * sizeof(double));
			assert_int_equal(sp_encode(&e, (const double *const *)p, n, FS, C, FS / 2, out, &err), 0);
			for (size_t i = 0; i < n; i++) {
				ew += out[0][i] * out[0][i];
				v[0] += out[0][i] * out[3][i];	/* X */
				v[1] += out[0][i] * out[1][i];	/* Y */
				v[2] += out[0][i] * out[2][i];	/* Z */
			}
			doa = acos(fmin(1, (v[0] * u[0] + v[1] * u[1] + v[2] * u[2]) /
					    sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))) * 180 / M_PI;
			worst_doa = fmax(worst_doa, doa);
			for (int a = 1; a < 16; a++) {
				double ea = 0;

				if (y[a] * y[a] < 0.05)
					continue;
				for (size_t i = 0; i < n; i++)
					ea += out[a][i] * out[a][i];
				worst_db = fmax(worst_db, fabs(10 * log10(ea / (ew * y[a] * y[a]))));
				if (fabs(10 * log10(ea / (ew * y[a] * y[a]))) > 0.5)
					print_message("dir %d, %.0f Hz, channel %d: %+.2f dB\n", di, f0, a,
						      10 * log10(ea / (ew * y[a] * y[a])));
			}
			for (int q = 0; q < e.npoints; q++)
				free(p[q]);
			free(p);
			for (int a = 0; a < 16; a++)
				free(out[a]);
		}
	print_message("worst direction error %.2f degrees, worst channel gain %.2f dB\n", worst_doa,
		      worst_db);
	assert_true(worst_doa < 3);
	assert_true(worst_db < 0.5);
	sp_encoder_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(harmonics),
		cmocka_unit_test(plane_waves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
