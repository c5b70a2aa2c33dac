/*
 * convolve.c - overlap-add convolution (convolve.h).
 */
#include "convolve.h"

#include <complex.h>	/* before fftw3.h: fftw_complex is double complex */
#include <fftw3.h>
#include <string.h>

int conv_ola(const double *x, size_t nx, const double *h, size_t nh, double *y)
{
	size_t b = 4096;
	double *buf;
	fftw_complex *H, *X;
	fftw_plan fwd = NULL, inv = NULL;
	int rc = -1;

	if (!nx || !nh)
		return memset(y, 0, (nx + nh ? nx + nh - 1 : 0) * sizeof(double)), 0;
	while (b < nh)
		b *= 2;
	buf = fftw_alloc_real(2 * b);
	H = fftw_alloc_complex(b + 1);
	X = fftw_alloc_complex(b + 1);
	if (!buf || !H || !X)
		goto out;
	fwd = fftw_plan_dft_r2c_1d((int)(2 * b), buf, X, FFTW_ESTIMATE);
	inv = fftw_plan_dft_c2r_1d((int)(2 * b), X, buf, FFTW_ESTIMATE);
	if (!fwd || !inv)
		goto out;
	memset(buf, 0, 2 * b * sizeof(double));
	memcpy(buf, h, nh * sizeof(double));
	fftw_execute(fwd);
	memcpy(H, X, (b + 1) * sizeof(fftw_complex));
	memset(y, 0, (nx + nh - 1) * sizeof(double));
	for (size_t at = 0; at < nx; at += b) {
		const size_t len = nx - at < b ? nx - at : b, out_len = len + nh - 1;

		memset(buf, 0, 2 * b * sizeof(double));
		memcpy(buf, x + at, len * sizeof(double));
		fftw_execute(fwd);
		for (size_t k = 0; k <= b; k++)
			X[k] *= H[k] / (double)(2 * b);	/* FFTW's transforms are unscaled */
		fftw_execute(inv);
		for (size_t i = 0; i < out_len; i++)
			y[at + i] += buf[i];
	}
	rc = 0;
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(buf);
	fftw_free(H);
	fftw_free(X);
	return rc;
}
