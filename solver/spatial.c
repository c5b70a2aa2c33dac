/*
 * spatial.c - spherical harmonics and the ambisonic encoder (spatial.h).
 *
 * A plane wave from direction u with spectrum S gives the point r the pressure
 * S exp(i k u.r) = S 4 pi sum_n i^n j_n(k r) sum_m Y_nm(r^) Y_nm(u) (orthonormal real
 * harmonics), so the points' spectra are linear in a_nm = S Y_nm(u): per frequency the encoder
 * solves for them by least squares, Tikhonov-regularised so that no order gains more than
 * max_gain over order 0, and rescales them to SN3D. The points are grouped in shells of equal
 * radius, so that the normal equations cost one product per shell and not per point.
 */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spatial.h"

void sp_sh(int order, const double d[3], double *y)
{
	const double x = fmax(-1, fmin(1, d[2])), cx = sqrt(fmax(0, 1 - x * x));
	const double az = atan2(d[1], d[0]);
	double P[SP_MAX_ORDER + 1][SP_MAX_ORDER + 1] = { { 0 } };

	/* associated Legendre functions of sin(elevation), without the Condon-Shortley phase */
	for (int m = 0; m <= order; m++) {
		double pmm = 1;

		for (int k = 1; k <= m; k++)
			pmm *= (2 * k - 1) * cx;
		P[m][m] = pmm;
		if (m + 1 <= order)
			P[m + 1][m] = x * (2 * m + 1) * pmm;
		for (int n = m + 2; n <= order; n++)
			P[n][m] = ((2 * n - 1) * x * P[n - 1][m] - (n + m - 1) * P[n - 2][m]) / (n - m);
	}
	for (int n = 0; n <= order; n++)
		for (int m = -n; m <= n; m++) {
			const int a = abs(m);
			double ratio = 1;	/* (n - |m|)! / (n + |m|)! */

			for (int k = n - a + 1; k <= n + a; k++)
				ratio /= k;
			y[n * n + n + m] = sqrt((m ? 2 : 1) * ratio) * P[n][a] *
					   (m >= 0 ? cos(a * az) : sin(a * az));
		}
}

double sp_bessel(int n, double x)
{
	if (x < n + 1.0) {	/* the power series: x^n / (2n + 1)!! sum (-x^2 / 2)^k / ... */
		double term = 1, sum = 1, lead = 1;

		for (int k = 1; k <= n; k++)
			lead *= x / (2 * k + 1);
		for (int k = 1; k < 60 && fabs(term) > 1e-17 * fabs(sum); k++) {
			term *= -x * x / (2.0 * k * (2 * n + 2 * k + 1));
			sum += term;
		}
		return lead * sum;
	} else {		/* upward recurrence, stable for x > n */
		double j0 = sin(x) / x, j1 = sin(x) / (x * x) - cos(x) / x;

		if (n == 0)
			return j0;
		for (int k = 1; k < n; k++) {
			const double j2 = (2 * k + 1) / x * j1 - j0;

			j0 = j1;
			j1 = j2;
		}
		return j1;
	}
}

int sp_encoder_ball(struct sp_encoder *e, int order, int fit, double h, double radius,
		    double max_gain, struct rs_error *err)
{
	const int q = (int)floor(radius / h + 1e-9), nh = (fit + 1) * (fit + 1);
	int cap = (2 * q + 1) * (2 * q + 1) * (2 * q + 1), r2max = 0;
	int *r2;

	memset(e, 0, sizeof(*e));
	if (order < 1 || fit < order || fit > SP_MAX_ORDER)
		return rs_fail(err, RS_EINPUT, "ambisonic order %d, fit %d (valid: 1 <= order <= "
			       "fit <= %d)", order, fit, SP_MAX_ORDER);
	e->order = order;
	e->fit = fit;
	e->max_gain = max_gain;
	e->off = malloc((size_t)cap * sizeof(*e->off));
	e->shell = malloc((size_t)cap * sizeof(int));
	e->y = malloc((size_t)cap * (size_t)nh * sizeof(double));
	r2 = calloc((size_t)(3 * q * q + 1), sizeof(int));
	if (!e->off || !e->shell || !e->y || !r2) {
		free(r2);
		sp_encoder_free(e);
		return rs_fail(err, RS_ENOMEM, "out of memory for an ambisonic receiver");
	}
	for (int i = -q; i <= q; i++)
		for (int j = -q; j <= q; j++)
			for (int k = -q; k <= q; k++) {
				const int s = i * i + j * j + k * k;

				if (s > q * q)
					continue;
				e->off[e->npoints][0] = i * h;
				e->off[e->npoints][1] = j * h;
				e->off[e->npoints][2] = k * h;
				e->shell[e->npoints++] = s;	/* renumbered below */
				r2[s] = 1;
				r2max = s > r2max ? s : r2max;
			}
	/* shells: the distinct radii, in order */
	e->r = malloc((size_t)(r2max + 1) * sizeof(double));
	if (!e->r) {
		free(r2);
		sp_encoder_free(e);
		return rs_fail(err, RS_ENOMEM, "out of memory for an ambisonic receiver");
	}
	for (int s = 0; s <= r2max; s++)
		if (r2[s]) {
			e->r[e->nshells] = sqrt((double)s) * h;
			r2[s] = e->nshells++;
		}
	for (int p = 0; p < e->npoints; p++) {
		double d[3] = { 0, 0, 1 }, len = sqrt((double)e->shell[p]) * h;
		double *y = e->y + (size_t)p * nh;

		e->shell[p] = r2[e->shell[p]];
		for (int a = 0; a < 3 && len > 0; a++)
			d[a] = e->off[p][a] / len;
		sp_sh(fit, d, y);
		for (int n = 0; n <= fit; n++)	/* SN3D to orthonormal */
			for (int m = -n; m <= n; m++)
				y[n * n + n + m] *= sqrt((2 * n + 1) / (4 * M_PI));
	}
	free(r2);
	return 0;
}

void sp_encoder_free(struct sp_encoder *e)
{
	free(e->off);
	free(e->shell);
	free(e->y);
	free(e->r);
	memset(e, 0, sizeof(*e));
}

/* G[s][h][h'] = sum over shell s's points of Y_h Y_h' (the normal equations' angular part). */
static double *grams(const struct sp_encoder *e)
{
	const int nh = (e->fit + 1) * (e->fit + 1);
	double *g = calloc((size_t)e->nshells * nh * nh, sizeof(double));

	for (int p = 0; g && p < e->npoints; p++) {
		const double *y = e->y + (size_t)p * nh;
		double *gs = g + (size_t)e->shell[p] * nh * nh;

		for (int a = 0; a < nh; a++)
			for (int b = 0; b < nh; b++)
				gs[a * nh + b] += y[a] * y[b];
	}
	return g;
}

/* Order n's weight in the normal equations against order 0's, at wavenumber k. */
static double order_weight(const struct sp_encoder *e, const double *g, int n, double k)
{
	const int nh = (e->fit + 1) * (e->fit + 1), h = n * n + n;
	double wn = 0, w0 = 0;

	for (int s = 0; s < e->nshells; s++) {
		const double jn = sp_bessel(n, k * e->r[s]), j0 = sp_bessel(0, k * e->r[s]);

		wn += jn * jn * g[(size_t)s * nh * nh + h * nh + h];
		w0 += j0 * j0 * g[(size_t)s * nh * nh];
	}
	return w0 > 0 ? wn / w0 : 0;
}

void sp_band(const struct sp_encoder *e, double c, double *lo, double *hi)
{
	sp_band_clear(e, e->order, c, SP_BAND_CLEAR, lo, hi);
}

void sp_band_clear(const struct sp_encoder *e, int order, double c, double clear, double *lo,
		   double *hi)
{
	double *g = grams(e), rmax = 0;

	*lo = *hi = 0;
	for (int s = 0; s < e->nshells; s++)
		rmax = fmax(rmax, e->r[s]);
	/* above: the fit resolves orders to `fit` while k rmax stays below it */
	*hi = c * e->fit / (2 * M_PI * rmax);
	/* below: where the order's weight clears the gain limit `clear` times over */
	for (double f = 1; g && f < *hi; f *= 1.01)
		if (order_weight(e, g, order, 2 * M_PI * f / c) * e->max_gain * e->max_gain >=
		    clear) {
			*lo = f;
			break;
		}
	free(g);
}

/* Solve the n x n complex system A x = b in place (Gaussian elimination, partial pivoting). */
static void solve(double complex *A, double complex *b, int n)
{
	for (int c = 0; c < n; c++) {
		int piv = c;

		for (int r = c + 1; r < n; r++)
			if (cabs(A[r * n + c]) > cabs(A[piv * n + c]))
				piv = r;
		if (piv != c) {
			for (int k = 0; k < n; k++) {
				const double complex t = A[c * n + k];

				A[c * n + k] = A[piv * n + k];
				A[piv * n + k] = t;
			}
			{
				const double complex t = b[c];

				b[c] = b[piv];
				b[piv] = t;
			}
		}
		if (cabs(A[c * n + c]) == 0)
			continue;
		for (int r = c + 1; r < n; r++) {
			const double complex f = A[r * n + c] / A[c * n + c];

			for (int k = c; k < n; k++)
				A[r * n + k] -= f * A[c * n + k];
			b[r] -= f * b[c];
		}
	}
	for (int c = n - 1; c >= 0; c--) {
		double complex s = b[c];

		for (int k = c + 1; k < n; k++)
			s -= A[c * n + k] * b[k];
		b[c] = cabs(A[c * n + c]) > 0 ? s / A[c * n + c] : 0;
	}
}

int sp_encode(const struct sp_encoder *e, const double *const *p, size_t n, double fs, double c,
	      double ftop, double **out, struct rs_error *err)
{
	const int nh = (e->fit + 1) * (e->fit + 1), no = (e->order + 1) * (e->order + 1);
	const int ns = e->nshells;
	size_t m = 1, nf, kt;
	double *g = grams(e);
	double complex *R = NULL, *B = NULL;
	fftw_plan fwd = NULL, inv = NULL;
	double *buf0 = NULL;
	fftw_complex *X0 = NULL;
	int rc = 0, fail = 0;

	while (m < 2 * n)
		m *= 2;
	nf = m / 2 + 1;
	kt = (size_t)fmin((double)nf, ceil(ftop * (double)m / fs) + 1);	/* bins to solve */
	R = calloc((size_t)nh * kt, sizeof(*R));
	B = calloc((size_t)no * nf, sizeof(*B));
	buf0 = fftw_alloc_real(m);
	X0 = fftw_alloc_complex(nf);
	if (!g || !R || !B || !buf0 || !X0) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory encoding an ambisonic receiver");
		goto out;
	}
	/* plans made once here (the planner is not thread-safe), run on each thread's arrays */
	fwd = fftw_plan_dft_r2c_1d((int)m, buf0, X0, FFTW_ESTIMATE);
	inv = fftw_plan_dft_c2r_1d((int)m, X0, buf0, FFTW_ESTIMATE);
	if (!fwd || !inv) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
	/* R[h](f) = sum over shells of 4 pi (-i)^n j_n(k r_s) times the spectrum of the sum over
	 * shell s's points of Y_h(point) p(point): the normal equations' right-hand side, a row
	 * per thread, its shells summed in order (the same bits on any number of threads) */
#pragma omp parallel reduction(| : fail)
	{
		double *buf = fftw_alloc_real(m);
		fftw_complex *X = fftw_alloc_complex(nf);

		fail = !buf || !X;
#pragma omp for schedule(dynamic, 1)
		for (int h = 0; h < nh; h++) {
			const int nn = (int)floor(sqrt(h + 0.5));

			for (int s = 0; s < ns && buf && X; s++) {
				int any = 0;

				memset(buf, 0, m * sizeof(double));
				for (int q = 0; q < e->npoints; q++) {
					const double w = e->y[(size_t)q * nh + h];

					if (e->shell[q] != s || w == 0)
						continue;
					any = 1;
					for (size_t i = 0; i < n; i++)
						buf[i] += w * p[q][i];
				}
				if (!any)
					continue;
				fftw_execute_dft_r2c(fwd, buf, X);
				for (size_t k = 0; k < kt; k++) {
					const double kw = 2 * M_PI * (double)k * fs / (double)m / c;

					R[(size_t)h * kt + k] += 4 * M_PI * cpow(-I, nn) *
								 sp_bessel(nn, kw * e->r[s]) * X[k];
				}
			}
		}
		fftw_free(buf);
		fftw_free(X);
	}
	/* per frequency: normal equations, regularised, solved */
#pragma omp parallel reduction(| : fail)
	{
		double complex *A = malloc((size_t)nh * nh * sizeof(*A));
		double complex *rhs = malloc((size_t)nh * sizeof(*rhs));
		double *jn = malloc((size_t)ns * (e->fit + 1) * sizeof(double));

		fail |= !A || !rhs || !jn;
#pragma omp for schedule(static)
		for (size_t k = 0; k < kt; k++) {
			const double kw = 2 * M_PI * (double)k * fs / (double)m / c;
			double lambda;

			if (!A || !rhs || !jn)
				continue;
			for (int s = 0; s < ns; s++)
				for (int o = 0; o <= e->fit; o++)
					jn[s * (e->fit + 1) + o] = sp_bessel(o, kw * e->r[s]);
			/* M = sum_s conj(b_h) b_h' G_s, b_h = 4 pi i^n j_n(k r_s) */
			for (int a = 0; a < nh; a++) {
				const int na = (int)floor(sqrt(a + 0.5));

				rhs[a] = R[(size_t)a * kt + k];
				for (int b = 0; b < nh; b++) {
					const int nb = (int)floor(sqrt(b + 0.5));
					double sum = 0;

					for (int s = 0; s < ns; s++)
						sum += jn[s * (e->fit + 1) + na] * jn[s * (e->fit + 1) + nb] *
						       g[((size_t)s * nh + a) * nh + b];
					A[a * nh + b] = 16 * M_PI * M_PI * cpow(I, nb - na) * sum;
				}
			}
			/* no order gains more than max_gain over order 0 */
			lambda = creal(A[0]) / (e->max_gain * e->max_gain);
			for (int a = 0; a < nh; a++)
				A[a * nh + a] += lambda;
			solve(A, rhs, nh);
			for (int a = 0; a < no; a++) {
				const int na = (int)floor(sqrt(a + 0.5));

				B[(size_t)a * nf + k] = rhs[a] * sqrt(4 * M_PI / (2 * na + 1));
			}
		}
		free(A);
		free(rhs);
		free(jn);
	}
	if (fail) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory encoding an ambisonic receiver");
		goto out;
	}
#pragma omp parallel
	{
		double *buf = fftw_alloc_real(m);
		fftw_complex *X = fftw_alloc_complex(nf);

#pragma omp for schedule(dynamic, 1)
		for (int a = 0; a < no; a++) {
			if (!buf || !X)
				continue;
			for (size_t k = 0; k < nf; k++)	/* complex.h first: fftw_complex is one */
				X[k] = B[(size_t)a * nf + k];
			fftw_execute_dft_c2r(inv, X, buf);
			for (size_t i = 0; i < n; i++)
				out[a][i] = buf[i] / (double)m;
		}
		fftw_free(buf);
		fftw_free(X);
	}
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(buf0);
	fftw_free(X0);
	free(R);
	free(B);
	free(g);
	return rc;
}
