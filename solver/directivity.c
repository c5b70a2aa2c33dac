/*
 * directivity.c - the node filters of a source with a balloon (solver/directivity.h;
 * docs/physics.md, "Directional sources").
 */
#include <complex.h>
#include <fftw3.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "directivity.h"
#include "signal.h"

#define NB (DIR_NODES * DIR_NODES * DIR_NODES)
#define NF (DIR_FFT / 2 + 1)
#define TAPER 1.5		/* the pattern's fit fades out from ftop to TAPER x ftop */
#define FLOOR_DB (-20.0)	/* the check leaves out directions this far below a band's loudest */

/* n directions spread evenly over the sphere (a Fibonacci lattice). */
static void spread(int n, double (*u)[3])
{
	for (int i = 0; i < n; i++) {
		const double z = 1 - 2 * (i + 0.5) / n, r = sqrt(1 - z * z);
		const double ph = M_PI * (1 + sqrt(5)) * (i + 0.5);

		u[i][0] = r * cos(ph);
		u[i][1] = r * sin(ph);
		u[i][2] = z;
	}
}

/* The block's node n at offset x[n] from its centre, m: DIR_NODES per side, x fastest. */
static void block(double h, double (*x)[3])
{
	for (int n = 0; n < NB; n++) {
		const int i[3] = { n % DIR_NODES, n / DIR_NODES % DIR_NODES,
				   n / (DIR_NODES * DIR_NODES) };

		for (int a = 0; a < 3; a++)
			x[n][a] = (i[a] - 0.5 * (DIR_NODES - 1)) * h;
	}
}

/* 1 for the eight nodes of the centre's cell (its monopole: 1/8 each). */
static int central(int n)
{
	const int lo = DIR_NODES / 2 - 1;
	const int i[3] = { n % DIR_NODES, n / DIR_NODES % DIR_NODES, n / (DIR_NODES * DIR_NODES) };

	return i[0] >= lo && i[0] <= lo + 1 && i[1] >= lo && i[1] <= lo + 1 && i[2] >= lo &&
	       i[2] <= lo + 1;
}

/*
 * The minimum-phase response towards each of the directions u[0..nu) at the design's
 * frequencies (bin k of DIR_FFT at step dt), of the source's levels there, the levels held
 * above ftop (sig_min_phase). out[q * NF + k].
 */
static int min_phase(const struct room_source *s, const double (*u)[3], int nu, double dt,
		     double ftop, double complex *out)
{
	for (int q = 0; q < nu; q++) {
		double complex *o = out + (size_t)q * NF;

		for (int k = 0; k < NF; k++)
			o[k] = log(fmax(room_source_gain(s, u[q], fmin(k / (DIR_FFT * dt), ftop)),
					1e-5));
		if (sig_min_phase((double *)o, DIR_FFT))
			return -1;
	}
	return 0;
}

/*
 * Per bin below TAPER ftop: the weights W (NB per bin) whose far fields sum_n W_n
 * exp(i k u.x_n) fit the targets D on the directions u, the central monopole taking the
 * rest: W = cen + argmin |A (W - cen) - (D - A cen) taper|^2 + DIR_REG nu |W - cen|^2.
 */
static int fit(const double (*u)[3], int nu, const double (*x)[3], const double complex *D,
	       double dt, double c, double ftop, double complex *W)
{
	const int kt = (int)fmin(NF, ceil(TAPER * ftop * DIR_FFT * dt) + 1);
	int fail = 0;

	for (int k = 0; k < NF; k++)
		for (int n = 0; n < NB; n++)
			W[(size_t)k * NB + n] = central(n) ? 1.0 / 8 : 0;
#pragma omp parallel reduction(| : fail)
	{
		double complex *A = malloc((size_t)nu * NB * sizeof(*A));
		double complex *M = malloc((size_t)NB * NB * sizeof(*M));
		double complex *b = malloc((size_t)NB * sizeof(*b));

		fail = !A || !M || !b;
#pragma omp for schedule(dynamic, 4)
		for (int k = 1; k < kt; k++) {
			const double f = k / (DIR_FFT * dt), kw = 2 * M_PI * f / c;
			const double taper = f <= ftop ? 1 : 0.5 + 0.5 * cos(M_PI * (f - ftop) /
									     ((TAPER - 1) * ftop));

			if (fail)
				continue;
			for (int q = 0; q < nu; q++) {
				double complex r = D[(size_t)q * NF + k];

				for (int n = 0; n < NB; n++) {
					A[(size_t)q * NB + n] = cexp(I * kw * (u[q][0] * x[n][0] +
									       u[q][1] * x[n][1] +
									       u[q][2] * x[n][2]));
					if (central(n))
						r -= A[(size_t)q * NB + n] / 8;
				}
				r *= taper;
				for (int n = 0; n < NB; n++)	/* b = A^H r, summed over q */
					b[n] = (q ? b[n] : 0) + conj(A[(size_t)q * NB + n]) * r;
			}
			for (int i = 0; i < NB; i++)	/* M = A^H A + DIR_REG nu I, lower half */
				for (int j = 0; j <= i; j++) {
					double complex sum = i == j ? DIR_REG * nu : 0;

					for (int q = 0; q < nu; q++)
						sum += conj(A[(size_t)q * NB + i]) * A[(size_t)q * NB + j];
					M[(size_t)i * NB + j] = sum;
				}
			if (LAPACKE_zposv(LAPACK_ROW_MAJOR, 'L', NB, 1, M, NB, b, 1)) {
				fail = 1;
				continue;
			}
			for (int n = 0; n < NB; n++)
				W[(size_t)k * NB + n] += b[n];
		}
		free(A);
		free(M);
		free(b);
	}
	return fail ? -1 : 0;
}

/* The taps: each node's impulse response, from DIR_LEAD steps before 0 on. */
static int taps(const double complex *W, struct dir_design *d)
{
	double *buf = fftw_alloc_real(DIR_FFT);
	fftw_complex *X = fftw_alloc_complex(NF);
	fftw_plan inv = NULL;
	int rc = -1;

	if (!buf || !X || !(inv = fftw_plan_dft_c2r_1d(DIR_FFT, X, buf, FFTW_ESTIMATE)))
		goto out;
	for (int n = 0; n < NB; n++) {
		for (int k = 0; k < NF; k++)
			X[k] = W[(size_t)k * NB + n];
		X[NF - 1] = creal(X[NF - 1]);	/* Nyquist: real */
		fftw_execute(inv);
		for (int j = 0; j < DIR_TAPS; j++)
			d->g[n][j] = buf[(j - DIR_LEAD + DIR_FFT) % DIR_FFT] / DIR_FFT;
	}
	rc = 0;
out:
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(buf);
	fftw_free(X);
	return rc;
}

/* The check: the taps' far field, band by band, against the source's levels, on
 * DIR_CHECK_DIRECTIONS directions; the delay DIR_LEAD is common to all and leaves levels. */
static void check(const struct room_source *s, const double (*x)[3], double dt, double c,
		  double ftop, struct dir_design *d)
{
	const int nv = DIR_CHECK_DIRECTIONS;
	double v[DIR_CHECK_DIRECTIONS][3];
	double complex G[NB];
	int unbroken = 1;

	spread(nv, v);
	d->nbands = 0;
	d->fvalid = 0;
	for (int b = 0; b < DIR_BANDS && 31.25 * pow(2, b) <= ftop; b++) {
		const double fc = 31.25 * pow(2, b), lo = fc / M_SQRT2, hi = fmin(fc * M_SQRT2, ftop);
		double got[DIR_CHECK_DIRECTIONS] = { 0 }, want[DIR_CHECK_DIRECTIONS] = { 0 };
		double top = 0, worst = 0;

		for (int k = (int)ceil(lo * DIR_FFT * dt); k / (DIR_FFT * dt) <= hi; k++) {
			const double f = k / (DIR_FFT * dt), kw = 2 * M_PI * f / c;

			if (k == 0)
				continue;
			for (int n = 0; n < NB; n++) {
				G[n] = 0;
				for (int j = 0; j < DIR_TAPS; j++)
					G[n] += d->g[n][j] * cexp(-I * 2 * M_PI * k * j / DIR_FFT);
			}
			for (int q = 0; q < nv; q++) {
				double complex p = 0;
				const double w = room_source_gain(s, v[q], f);

				for (int n = 0; n < NB; n++)
					p += G[n] * cexp(I * kw * (v[q][0] * x[n][0] + v[q][1] * x[n][1] +
								  v[q][2] * x[n][2]));
				got[q] += creal(p * conj(p));
				want[q] += w * w;
			}
		}
		for (int q = 0; q < nv; q++)
			top = fmax(top, want[q]);
		for (int q = 0; q < nv && top > 0; q++)
			if (10 * log10(want[q] / top) > FLOOR_DB)
				worst = fmax(worst, fabs(10 * log10(got[q] / want[q])));
		d->band_f[d->nbands] = fc;
		d->band_err[d->nbands++] = worst;
		unbroken = unbroken && worst <= DIR_TOL_DB;
		if (unbroken)
			d->fvalid = fc;
	}
}

int dir_design(const struct room_source *s, double h, double dt, double c, double ftop,
	       struct dir_design *d, struct rs_error *err)
{
	double (*u)[3] = malloc(DIR_DIRECTIONS * sizeof(*u)), x[NB][3];
	double complex *D = malloc((size_t)DIR_DIRECTIONS * NF * sizeof(*D));
	double complex *W = malloc((size_t)NF * NB * sizeof(*W));
	int rc = 0;

	if (!u || !D || !W) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for a directional source's filters");
		goto out;
	}
	spread(DIR_DIRECTIONS, u);
	block(h, x);
	if (min_phase(s, (const double (*)[3])u, DIR_DIRECTIONS, dt, ftop, D) ||
	    fit((const double (*)[3])u, DIR_DIRECTIONS, (const double (*)[3])x, D, dt, c, ftop,
		W) ||
	    taps(W, d)) {
		rc = rs_fail(err, RS_ENOMEM, "cannot design a directional source's filters "
			     "(out of memory, or its fit failed)");
		goto out;
	}
	check(s, (const double (*)[3])x, dt, c, ftop, d);
out:
	free(u);
	free(D);
	free(W);
	return rc;
}
