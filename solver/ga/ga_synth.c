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

/* Where f lies in the crossover's transition: 0 below it, 1 above, raised in log frequency. */
static double transition(double f, double fc)
{
	const double x = log2(fmax(f, 1e-9) / fc);

	return x <= -0.25 ? 0 : x >= 0.25 ? 1 : 2 * (x + 0.25);
}

double ga_crossover_gain(double f, double fc, int coherent)
{
	const double c = cos(0.5 * M_PI * transition(f, fc));

	return coherent ? c * c : c;
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

	double wh[GA_BANDS];

	/* The diffuse field's energy near the walls (Waterhouse's interference zone, a
	 * quarter wavelength deep) is not in the room's interior, where receivers are: the
	 * interior holds V / (V + S lambda / 8) of it (ISO 3741's correction). */
	for (int b = 0; b < GA_BANDS; b++)
		wh[b] = 1 / (1 + g->area * g->c / ga_band_f[b] / (8 * fmax(g->volume, 1e-9)));
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
			const double gain = sqrt(wh[b] * e[b] / (double)cnt);

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

#define MIX_FADE 0.005	/* s: the crossfade from the early to the late part */

int ga_crossover(double *low, const double *high, size_t n, double fs, double fc, double t_mix,
		 struct rs_error *err)
{
	const size_t m = fft_len(n, fs), nf = m / 2 + 1;
	double *y = fftw_alloc_real(m);
	fftw_complex *F[4] = { fftw_alloc_complex(nf), fftw_alloc_complex(nf),
			       fftw_alloc_complex(nf), fftw_alloc_complex(nf) };
	fftw_plan fwd[4] = { NULL }, inv = NULL;
	int rc = 0;

	for (int k = 0; k < 4; k++)
		if (!F[k])
			rc = -1;
	if (rc || !y) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the crossover");
		goto out;
	}
	for (int k = 0; k < 4 && !rc; k++)
		if (!(fwd[k] = fftw_plan_dft_r2c_1d((int)m, y, F[k], FFTW_ESTIMATE)))
			rc = -1;
	if (rc || !(inv = fftw_plan_dft_c2r_1d((int)m, F[0], y, FFTW_ESTIMATE))) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
	/* F: the low part early and late, the high part early and late */
	for (int k = 0; k < 4; k++) {
		const double *x = k < 2 ? low : high;

		memset(y, 0, m * sizeof(double));
		for (size_t i = 0; i < n; i++) {
			const double u = ((double)i / fs - t_mix) / MIX_FADE + 0.5;
			const double early = u <= 0 ? 1 : u >= 1 ? 0 : 0.5 + 0.5 * cos(M_PI * u);

			y[i] = x[i] * (k % 2 ? 1 - early : early);
		}
		fftw_execute(fwd[k]);
	}
	for (size_t k = 0; k < nf; k++) {
		const double f = (double)k * fs / (double)m;
		const double la = ga_crossover_gain(f, fc, 1), lp = ga_crossover_gain(f, fc, 0);
		const double hp = sqrt(fmax(0, 1 - lp * lp));

		for (int c = 0; c < 2; c++)
			F[0][k][c] = la * F[0][k][c] + lp * F[1][k][c] + (1 - la) * F[2][k][c] +
				     hp * F[3][k][c];
	}
	fftw_execute(inv);
	for (size_t i = 0; i < n; i++)
		low[i] = y[i] / (double)m;
out:
	for (int k = 0; k < 4; k++) {
		if (fwd[k])
			fftw_destroy_plan(fwd[k]);
		fftw_free(F[k]);
	}
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(y);
	return rc;
}
