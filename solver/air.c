/*
 * air.c - ISO 9613-1's atmospheric absorption and the time-varying filter of air.h.
 */
#include "air.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T0 293.15	/* K, the reference temperature */
#define T01 273.16	/* K, the triple point of water */
#define PR 101.325	/* kPa, the reference pressure */

double air_attenuation(const struct air *a, double f)
{
	const double T = a->temperature + 273.15, p = a->pressure / PR, t = T / T0;
	/* the molar concentration of water vapour, %, from the saturation pressure */
	const double psat = pow(10, -6.8346 * pow(T01 / T, 1.261) + 4.6151);
	const double h = a->humidity * psat / p;
	/* the relaxation frequencies of oxygen and nitrogen, Hz */
	const double fro = p * (24 + 4.04e4 * h * (0.02 + h) / (0.391 + h));
	const double frn = p / sqrt(t) * (9 + 280 * h * exp(-4.170 * (pow(t, -1.0 / 3) - 1)));
	const double f2 = f * f;

	return 8.686 * f2 *
	       (1.84e-11 / p * sqrt(t) +
		pow(t, -2.5) * (0.01275 * exp(-2239.1 / T) / (fro + f2 / fro) +
				0.1068 * exp(-3352.0 / T) / (frn + f2 / frn)));
}

double air_sound_speed(const struct air *a)
{
	return 343.0 * sqrt((a->temperature + 273.15) / T0);
}

size_t air_frame(double fs)
{
	size_t n = 256;

	while ((double)n < 0.01 * fs)	/* about 10 ms: the loss grows 3.4 m a frame */
		n *= 2;
	return n;
}

/*
 * Frames of N samples every N / 2, weighted by the periodic Hann window (whose shifted
 * copies sum to exactly 1), each placed in the middle of a zero-padded buffer of 2 N so that
 * its filtered tails, up to N / 2 either side, do not wrap; its spectrum is scaled by the
 * loss at the frame's centre time (zero phase), and the whole buffer is added back.
 */
int air_apply(const struct air *a, double c, double fs, double *x, size_t n)
{
	const size_t N = air_frame(fs), M = 2 * N, nb = M / 2 + 1;
	double *buf = fftw_malloc(M * sizeof(double)), *out = calloc(n + M, sizeof(double));
	double *alpha = malloc(nb * sizeof(double)), *win = malloc(N * sizeof(double));
	fftw_complex *spec = fftw_malloc(nb * sizeof(fftw_complex));
	fftw_plan fwd = NULL, inv = NULL;
	int rc = -1;

	if (!buf || !out || !alpha || !win || !spec)
		goto out;
	fwd = fftw_plan_dft_r2c_1d((int)M, buf, spec, FFTW_ESTIMATE);
	inv = fftw_plan_dft_c2r_1d((int)M, spec, buf, FFTW_ESTIMATE);
	if (!fwd || !inv)
		goto out;
	for (size_t k = 0; k < nb; k++)	/* dB per metre at each bin */
		alpha[k] = air_attenuation(a, (double)k * fs / (double)M);
	for (size_t i = 0; i < N; i++)
		win[i] = 0.5 - 0.5 * cos(2 * M_PI * (double)i / (double)N);
	/* frame f covers samples [f N/2 - N/2, f N/2 + N/2): the first starts half a frame early */
	for (size_t f = 0; f * (N / 2) < n + N / 2; f++) {
		const ptrdiff_t start = (ptrdiff_t)(f * (N / 2)) - (ptrdiff_t)(N / 2);
		const double dist = c * (double)(start + (ptrdiff_t)(N / 2)) / fs;

		memset(buf, 0, M * sizeof(double));
		for (size_t i = 0; i < N; i++) {
			const ptrdiff_t s = start + (ptrdiff_t)i;

			if (s >= 0 && (size_t)s < n)
				buf[N / 2 + i] = x[s] * win[i];
		}
		fftw_execute(fwd);
		for (size_t k = 0; k < nb; k++) {
			const double g = pow(10, -alpha[k] * dist / 20) / (double)M;

			spec[k][0] *= g;
			spec[k][1] *= g;
		}
		fftw_execute(inv);
		/* buffer index j is sample start - N/2 + j; out is offset by N */
		for (size_t j = 0; j < M; j++) {
			const ptrdiff_t s = start - (ptrdiff_t)(N / 2) + (ptrdiff_t)j + (ptrdiff_t)N;

			if (s >= 0 && (size_t)s < n + M)
				out[s] += buf[j];
		}
	}
	memcpy(x, out + N, n * sizeof(double));
	rc = 0;
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(buf);
	fftw_free(spec);
	free(out);
	free(alpha);
	free(win);
	return rc;
}
