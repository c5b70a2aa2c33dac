/* signal.c - source pulses and Butterworth sections (docs/physics.md, "Sources"). */
#include "signal.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Q of the sections of Butterworth filters: 1 / (2 cos(theta)) over the pole angles. */
static const double butter_q2[1] = { 0.70710678118654752 };
static const double butter_q4[2] = { 0.54119610014619698, 1.30656296487637653 };

static struct sig_biquad section(int highpass, double fc, double fs, double q)
{
	double w0 = 2 * M_PI * fc / fs, cw = cos(w0), alpha = sin(w0) / (2 * q);
	double a0 = 1 + alpha;
	struct sig_biquad s;

	if (highpass) {
		s.b0 = (1 + cw) / 2 / a0;
		s.b1 = -(1 + cw) / a0;
	} else {
		s.b0 = (1 - cw) / 2 / a0;
		s.b1 = (1 - cw) / a0;
	}
	s.b2 = s.b0;
	s.a1 = -2 * cw / a0;
	s.a2 = (1 - alpha) / a0;
	return s;
}

void sig_butterworth(struct sig_filter *f, int highpass, int order, double fc, double fs)
{
	const double *q = order == 4 ? butter_q4 : butter_q2;

	f->nsections = order == 4 ? 2 : 1;
	for (int i = 0; i < f->nsections; i++)
		f->s[i] = section(highpass, fc, fs, q[i]);
}

static void biquad(const struct sig_biquad *s, double *x, size_t n, ptrdiff_t stride)
{
	double z1 = 0, z2 = 0;

	for (size_t i = 0; i < n; i++, x += stride) {
		double in = *x, out = s->b0 * in + z1;

		z1 = s->b1 * in - s->a1 * out + z2;
		z2 = s->b2 * in - s->a2 * out;
		*x = out;
	}
}

void sig_apply(const struct sig_filter *f, double *x, size_t n)
{
	for (int i = 0; i < f->nsections; i++)
		biquad(&f->s[i], x, n, 1);
}

void sig_apply_reversed(const struct sig_filter *f, double *x, size_t n)
{
	for (int i = 0; n && i < f->nsections; i++)
		biquad(&f->s[i], x + n - 1, n, -1);
}

void sig_apply_zero_phase(const struct sig_filter *f, double *x, size_t n)
{
	sig_apply(f, x, n);
	sig_apply_reversed(f, x, n);
}

/* The pulses peak this many periods 1/fc after the delay, so they start from ~1e-9. */
#define PULSE_LEAD 1.5

void sig_source(const struct room_source *s, double k, size_t n, double *out)
{
	memset(out, 0, n * sizeof(*out));
	if (s->signal == ROOM_SIG_IMPULSE) {
		/* One sample of amplitude 1 at the simulation rate (physics.md explains the scale). */
		size_t at = (size_t)llround(s->delay / k);

		if (at < n)
			out[at] = s->amplitude;
	} else {
		double t0 = s->delay + PULSE_LEAD / s->fc, a = M_PI * s->fc;

		for (size_t i = 0; i < n; i++) {
			double x = a * (i * k - t0), g = exp(-x * x);

			out[i] = s->amplitude * (s->signal == ROOM_SIG_RICKER ? (1 - 2 * x * x) * g : g);
		}
	}
	if (s->highpass > 0) {
		struct sig_filter hp;

		/* Second order: a double zero at DC, so the net injected volume is zero. */
		sig_butterworth(&hp, 1, 2, s->highpass, 1 / k);
		sig_apply(&hp, out, n);
	}
}

/* The modified Bessel function of the first kind and order 0 (its power series). */
static double bessel_i0(double x)
{
	double sum = 1, term = 1;

	for (int k = 1; k < 200 && term > 1e-17 * sum; k++) {
		term *= (x / (2 * k)) * (x / (2 * k));
		sum += term;
	}
	return sum;
}

int sig_band_fir(double fmax, double fs, double **h)
{
	/* Kaiser's design rules: beta and the length for the attenuation A over a transition
	 * of dw radians per sample */
	const double a = SIG_BAND_STOP_DB, dw = 2 * M_PI * SIG_BAND_WIDTH * fmax / fs;
	const double beta = 0.1102 * (a - 8.7), fc = (1 - SIG_BAND_WIDTH / 2) * fmax / fs;
	const int m = fmax < 0.45 * fs ? (int)ceil((a - 8) / (2.285 * dw) / 2) : 0;
	double sum = 0;

	if (!(*h = malloc((size_t)(2 * m + 1) * sizeof(double))))
		return -1;
	for (int k = -m; k <= m; k++) {
		const double r = m ? (double)k / m : 0;
		const double sinc = k ? sin(2 * M_PI * fc * k) / (M_PI * k) : 2 * fc;

		(*h)[k + m] = m ? sinc * bessel_i0(beta * sqrt(1 - r * r)) / bessel_i0(beta) : 1;
		sum += (*h)[k + m];
	}
	for (int k = 0; k <= 2 * m; k++)
		(*h)[k] /= sum;
	return m;
}

int sig_min_phase(double *spec, size_t L)
{
	const size_t nf = L / 2 + 1;
	double *x = fftw_alloc_real(L);
	fftw_complex *X = fftw_alloc_complex(nf);
	fftw_plan fwd = x && X ? fftw_plan_dft_r2c_1d((int)L, x, X, FFTW_ESTIMATE) : NULL;
	fftw_plan inv = x && X ? fftw_plan_dft_c2r_1d((int)L, X, x, FFTW_ESTIMATE) : NULL;
	int rc = -1;

	if (!fwd || !inv)
		goto out;
	for (size_t k = 0; k < nf; k++) {
		X[k][0] = spec[2 * k];
		X[k][1] = 0;
	}
	fftw_execute(inv);	/* the cepstrum, times L, folded onto its causal half */
	for (size_t i = 1; i < L; i++)
		x[i] = i < L / 2 ? 2 * x[i] / (double)L : i == L / 2 ? x[i] / (double)L : 0;
	x[0] /= (double)L;
	fftw_execute(fwd);
	for (size_t k = 0; k < nf; k++) {
		const double m = exp(X[k][0]);

		spec[2 * k] = m * cos(X[k][1]);
		spec[2 * k + 1] = m * sin(X[k][1]);
	}
	rc = 0;
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(x);
	fftw_free(X);
	return rc;
}
