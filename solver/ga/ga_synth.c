/*
 * ga_synth.c - a pressure impulse response from the geometric engine's arrivals and energy
 * histograms (ga.h; docs/physics.md, "Synthesis"), and the crossover that joins it to the
 * wave engine's response. FFTW does the filtering, in the frequency domain, zero phase.
 */
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ga_impl.h"

#define SINC_HALF 16		/* taps each side of an arrival's fractional-delay sinc */
#define DIRAC_MAX 0.5		/* the Dirac sequence's density, at most this times fs */

double ga_band_weight(int b, double f)
{
	const double x = log2(fmax(f, 1e-9) / 1000);
	/* exact octave centres 1000 2^k: 62.5 Hz ... 16 kHz */
	const double xb = b - 4;

	if ((b == 0 && x <= xb) || (b == GA_BANDS - 1 && x >= xb))
		return 1;
	if (x <= xb - 1 || x >= xb + 1)
		return 0;
	return pow(cos(0.5 * M_PI * (x - xb)), 2);
}

double ga_crossover_gain(double f, double fc)
{
	const double x = log2(fmax(f, 1e-9) / fc);

	if (x <= -0.25)
		return 1;
	if (x >= 0.25)
		return 0;
	return pow(cos(M_PI * (x + 0.25)), 2);
}

/* The FFT length for n samples at fs with room for the filters' tails: a power of two. */
static size_t fft_len(size_t n, double fs)
{
	size_t m = 1;

	while (m < n + (size_t)(0.25 * fs) + 2 * SINC_HALF)
		m *= 2;
	return m;
}

/* Add an impulse of amplitude a at time t (s) to x (rate fs, m samples), as a Hann-windowed
 * sinc: its fractional delay exact in the band. */
static void add_impulse(double *x, size_t m, double fs, double t, double a)
{
	const double at = t * fs;
	const long i0 = (long)floor(at);

	for (long i = i0 - SINC_HALF + 1; i <= i0 + SINC_HALF; i++) {
		const double u = (double)i - at;
		const double w = 0.5 + 0.5 * cos(M_PI * u / SINC_HALF);
		const double s = fabs(u) < 1e-12 ? 1 : sin(M_PI * u) / (M_PI * u);

		if (i >= 0 && (size_t)i < m)
			x[i] += a * w * s;
	}
}

/* A Poisson count of mean lambda. */
static long poisson(uint64_t *s, double lambda)
{
	if (lambda > 50) {	/* normal approximation */
		const double u1 = fmax(ga_rand(s), 1e-300), u2 = ga_rand(s);
		const double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

		return (long)fmax(0, lround(lambda + sqrt(lambda) * z));
	} else {
		const double l = exp(-lambda);
		double p = 1;
		long k = -1;

		do {
			k++;
			p *= ga_rand(s);
		} while (p > l);
		return k;
	}
}

/* The rays' energies of receiver q as a Dirac sequence per band into x[b] (m samples). */
static void add_rays(const struct ga *g, const struct ga_hist *h, int q, double fs, size_t n,
		     size_t m, uint64_t seed, double **x)
{
	const double k4 = 4 * M_PI * g->c * g->c * g->c / (3 * fmax(g->volume, 1e-9));
	const double bin = GA_BIN * fs;	/* samples per bin */
	uint64_t s = seed;
	long *at = malloc((size_t)(DIRAC_MAX * GA_BIN * fs + 2) * sizeof(long));
	int *sg = malloc((size_t)(DIRAC_MAX * GA_BIN * fs + 2) * sizeof(int));

	if (!at || !sg)
		goto out;
	for (size_t k = 0; k < h->nbins; k++) {
		const double *e = h->e + ((size_t)q * h->nbins + k) * GA_BANDS;
		const double t0 = k * GA_BIN, t1 = (k + 1) * GA_BIN;
		const size_t i0 = (size_t)ceil(k * bin), i1 = (size_t)ceil((k + 1) * bin);
		const double cap = DIRAC_MAX * (double)(i1 - i0);
		double lambda = fmin(cap, k4 * (t1 * t1 * t1 - t0 * t0 * t0)), etot = 0;
		long cnt;

		for (int b = 0; b < GA_BANDS; b++)
			etot += e[b];
		cnt = poisson(&s, lambda);
		if (!(etot > 0) || i0 >= n || i1 <= i0)
			continue;
		cnt = cnt < 1 ? 1 : cnt > (long)cap + 1 ? (long)cap + 1 : cnt;
		for (long j = 0; j < cnt; j++) {
			at[j] = (long)(i0 + (size_t)(ga_rand(&s) * (double)(i1 - i0)));
			sg[j] = ga_rand(&s) < 0.5 ? -1 : 1;
		}
		for (int b = 0; b < GA_BANDS; b++) {
			const double gain = sqrt(e[b] / (double)cnt);

			for (long j = 0; j < cnt; j++)
				if ((size_t)at[j] < m)
					x[b][at[j]] += sg[j] * gain;
		}
	}
out:
	free(at);
	free(sg);
}

int ga_synth(const struct ga *g, const struct ga_image *im, size_t nim, const struct ga_hist *h,
	     int q, double fs, size_t n, unsigned long seed, double *out, struct rs_error *err)
{
	const size_t m = fft_len(n, fs), nf = m / 2 + 1;
	double *x[GA_BANDS] = { 0 }, *y = fftw_alloc_real(m);
	fftw_complex *X = fftw_alloc_complex(nf), *Y = fftw_alloc_complex(nf);
	fftw_plan fwd = NULL, inv = NULL;
	int rc = 0;

	for (int b = 0; b < GA_BANDS; b++)
		if (!(x[b] = calloc(m, sizeof(double))))
			rc = -1;
	if (rc || !y || !X || !Y) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the geometric response");
		goto out;
	}
	for (size_t i = 0; i < nim; i++)
		for (int b = 0; b < GA_BANDS; b++)
			add_impulse(x[b], m, fs, im[i].t, im[i].amp[b]);
	if (h && h->e)
		add_rays(g, h, q, fs, n, m, 0x9d2c5680ull ^ ((uint64_t)seed << 20) ^ (uint64_t)q, x);
	fwd = fftw_plan_dft_r2c_1d((int)m, y, X, FFTW_ESTIMATE);
	inv = fftw_plan_dft_c2r_1d((int)m, Y, y, FFTW_ESTIMATE);
	if (!fwd || !inv) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
	memset(Y, 0, nf * sizeof(*Y));
	for (int b = 0; b < GA_BANDS; b++) {
		memcpy(y, x[b], m * sizeof(double));
		fftw_execute(fwd);
		for (size_t k = 0; k < nf; k++) {
			const double w = ga_band_weight(b, (double)k * fs / (double)m);

			Y[k][0] += w * X[k][0];
			Y[k][1] += w * X[k][1];
		}
	}
	fftw_execute(inv);
	for (size_t i = 0; i < n; i++)
		out[i] = y[i] / (double)m;
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	for (int b = 0; b < GA_BANDS; b++)
		free(x[b]);
	fftw_free(y);
	fftw_free(X);
	fftw_free(Y);
	return rc;
}

int ga_crossover(double *low, const double *high, size_t n, double fs, double fc,
		 struct rs_error *err)
{
	const size_t m = fft_len(n, fs), nf = m / 2 + 1;
	double *y = fftw_alloc_real(m);
	fftw_complex *L = fftw_alloc_complex(nf), *H = fftw_alloc_complex(nf);
	fftw_plan fl = NULL, fh = NULL, inv = NULL;
	int rc = 0;

	if (!y || !L || !H) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the crossover");
		goto out;
	}
	fl = fftw_plan_dft_r2c_1d((int)m, y, L, FFTW_ESTIMATE);
	fh = fftw_plan_dft_r2c_1d((int)m, y, H, FFTW_ESTIMATE);
	inv = fftw_plan_dft_c2r_1d((int)m, L, y, FFTW_ESTIMATE);
	if (!fl || !fh || !inv) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
	memset(y, 0, m * sizeof(double));
	memcpy(y, high, n * sizeof(double));
	fftw_execute(fh);
	memset(y, 0, m * sizeof(double));
	memcpy(y, low, n * sizeof(double));
	fftw_execute(fl);
	for (size_t k = 0; k < nf; k++) {
		const double w = ga_crossover_gain((double)k * fs / (double)m, fc);

		L[k][0] = w * L[k][0] + (1 - w) * H[k][0];
		L[k][1] = w * L[k][1] + (1 - w) * H[k][1];
	}
	fftw_execute(inv);
	for (size_t i = 0; i < n; i++)
		low[i] = y[i] / (double)m;
out:
	if (fl)
		fftw_destroy_plan(fl);
	if (fh)
		fftw_destroy_plan(fh);
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(y);
	fftw_free(L);
	fftw_free(H);
	return rc;
}
