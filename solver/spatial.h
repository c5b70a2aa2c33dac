/*
 * spatial.h - spherical harmonics and the ambisonic encoding of a pressure field sampled at
 * points around a receiver (docs/physics.md, "Spatial receivers"):
 * real spherical harmonics in ACN order with SN3D normalisation (AmbiX), and a least-squares
 * plane-wave decomposition of the points' signals, per frequency, with the spherical Bessel
 * functions of each point's radius.
 */
#ifndef SOLVER_SPATIAL_H
#define SOLVER_SPATIAL_H

#include <stddef.h>

#include "../common/rs_error.h"

#define SP_MAX_ORDER 7
/* sp_band: an order is exact where its weight clears the gain limit this many times over */
#define SP_BAND_CLEAR 1000.0

/* The (order + 1)^2 real spherical harmonics at the unit vector d (x front, y left, z up),
 * ACN order, SN3D (the first four: 1, y, z, x), into y. */
void sp_sh(int order, const double d[3], double *y);

/* The spherical Bessel function of the first kind j_n(x), n >= 0, x >= 0. */
double sp_bessel(int n, double x);

/*
 * An encoder of order `order` from points at offsets off[0..npoints) (m) from the receiver:
 * it fits orders up to `fit` (>= order, so that higher orders do not alias into the kept
 * ones) and keeps those up to `order`; the fit's gain is held to at most max_gain (a factor)
 * for each order, which sets the band where it is exact (sp_band).
 */
struct sp_encoder {
	int order, fit;
	int npoints;
	double (*off)[3];
	/* the points grouped by radius: shell s holds radius r[s] and, per harmonic of the fit,
	 * the sum of Y(p) over its points as weights w[s][point][harmonic] */
	int nshells;
	double *r;
	int *shell;		/* per point */
	double *y;		/* [npoints][(fit + 1)^2]: orthonormal harmonics of each point */
	double max_gain;
};

/* The points of the grid of spacing h within radius (and the receiver's own), as offsets
 * in cells times h; RS_ENOMEM. */
int sp_encoder_ball(struct sp_encoder *e, int order, int fit, double h, double radius,
		    double max_gain, struct rs_error *err);
void sp_encoder_free(struct sp_encoder *e);

/* The frequencies between which the encoder of order `order` is exact (within its gain
 * limit below, within its fit's aliasing above), Hz, for sound speed c. */
void sp_band(const struct sp_encoder *e, double c, double *lo, double *hi);
/* The same for order `order` (at most e's), its weight clearing the gain limit `clear` times
 * over (sp_band: SP_BAND_CLEAR, within 0.5 dB; 10: usable, within a few dB). */
void sp_band_clear(const struct sp_encoder *e, int order, double c, double clear, double *lo,
		   double *hi);

/*
 * Encode: p[i] the pressure at point i (n samples at fs), out[(order + 1)^2][n] the ambisonic
 * signals (ACN, SN3D): a plane wave from direction d with signal s at the receiver gives
 * s Y(d) in each channel, up to ftop Hz (above it the signals are 0). On OpenMP's threads.
 * RS_ENOMEM.
 */
int sp_encode(const struct sp_encoder *e, const double *const *p, size_t n, double fs, double c,
	      double ftop, double **out, struct rs_error *err);

#endif
