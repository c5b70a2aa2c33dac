/* stencil.c - stencil families and the von Neumann analysis of their schemes. */
#include "stencil.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Fornberg (1988), "Generation of finite difference formulas on arbitrarily spaced grids":
 * weights c[i] of the second derivative at 0 from the values at nodes x[0..n).
 */
static void fornberg2(const double *x, int n, double *c)
{
	double d[2 * STN_MAX_LEGGY + 1][3] = { { 0 } }, c1 = 1, c4 = x[0];

	d[0][0] = 1;
	for (int i = 1; i < n; i++) {
		const int mn = i < 2 ? i : 2;
		double c2 = 1, c5 = c4;

		c4 = x[i];
		for (int j = 0; j < i; j++) {
			const double c3 = x[i] - x[j];

			c2 *= c3;
			if (j == i - 1) {
				for (int k = mn; k >= 1; k--)
					d[i][k] = c1 * (k * d[i - 1][k - 1] - c5 * d[i - 1][k]) / c2;
				d[i][0] = -c1 * c5 * d[i - 1][0] / c2;
			}
			for (int k = mn; k >= 1; k--)
				d[j][k] = (c4 * d[j][k] - k * d[j][k - 1]) / c3;
			d[j][0] = c4 * d[j][0] / c3;
		}
		c1 = c2;
	}
	for (int i = 0; i < n; i++)
		c[i] = d[i][2];
}

/*
 * Round the weights so that the sum of w_k u_k over the stencil is exactly 0 in double for a
 * uniform float32 field u (docs/physics.md, "A uniform field stays uniform"): every
 * neighbour's weight to a multiple of a power of two q, the centre's to minus their sum, which
 * is then exact. With sum |w_k| / q below 2^28, each product w_k u of a float u (24 bits) and
 * every partial sum of them, even with a carved room's modified centre (fdtd.c), is an integer
 * multiple of q ulp(u) below 2^53 of them: exact in double, in any order. The weights move by
 * at most q / 2, below 10^-7 for every stencil here: the dispersion does not change.
 */
static void quantise(struct stn_stencil *s)
{
	double total = 0, q, centre = 0;
	int e;

	for (int k = 0; k < s->K; k++)
		total += fabs(s->w[k]);
	frexp(total, &e);	/* total < 2^e */
	q = ldexp(1, e - 28);
	for (int k = 1; k < s->K; k++) {
		s->w[k] = nearbyint(s->w[k] / q) * q;
		centre -= s->w[k];
	}
	s->w[0] = centre;
}

int stn_leggy(struct stn_stencil *s, int M)
{
	double x[2 * STN_MAX_LEGGY + 1], c[2 * STN_MAX_LEGGY + 1];
	int n = 0;

	if (M < 1 || M > STN_MAX_LEGGY)
		return -1;
	x[n++] = 0;
	for (int m = 1; m <= M; m++) {
		x[n++] = m;
		x[n++] = -m;
	}
	fornberg2(x, n, c);
	memset(s, 0, sizeof(*s));
	s->w[0] = 3 * c[0];	/* the centre appears once per axis */
	s->K = 1;
	for (int m = 1; m <= M; m++)
		for (int a = 0; a < 3; a++)
			for (int sign = -1; sign <= 1; sign += 2) {
				s->off[s->K][a] = sign * m;
				s->w[s->K++] = c[2 * m - 1];	/* c(m) = c(-m) */
			}
	s->reach = M;
	quantise(s);
	snprintf(s->name, sizeof(s->name), "leggy order %d (%d points)", 2 * M, s->K);
	return 0;
}

static int norm2(const int q[3])
{
	return q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
}

/* The distinct points of P(q). */
static int shell_points(const int q[3], int pts[48][3])
{
	static const int perm[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	int n = 0;

	for (int p = 0; p < 6; p++)
		for (int sg = 0; sg < 8; sg++) {
			int v[3], dup = 0;

			for (int a = 0; a < 3; a++)
				v[a] = q[perm[p][a]] * (sg >> a & 1 ? -1 : 1);
			for (int i = 0; i < n && !dup; i++)
				dup = pts[i][0] == v[0] && pts[i][1] == v[1] && pts[i][2] == v[2];
			if (!dup)
				memcpy(pts[n++], v, sizeof(v));
		}
	return n;
}

/* Every q of the set Q of seed 000 eq. 6 with q1 <= qmax, in lexicographic order. */
static int each_q(int qmax, struct stn_shell *out, int max, int (*keep)(const int *, const void *),
		  const void *arg)
{
	int n = 0, pts[48][3];

	for (int a = 1; a <= qmax; a++)
		for (int b = 0; b <= a; b++)
			for (int c = 0; c <= b; c++) {
				const int q[3] = { a, b, c };

				if (!keep(q, arg))
					continue;
				if (n == max)
					return -1;
				memcpy(out[n].q, q, sizeof(q));
				out[n++].count = shell_points(q, pts);
			}
	return n;
}

static int within_radius(const int *q, const void *arg)
{
	return norm2(q) <= *(const int *)arg;
}

static int precedes(const int *q, const void *arg)
{
	const int *top = arg;

	return q[0] < top[0] || (q[0] == top[0] && (q[1] < top[1] ||
						     (q[1] == top[1] && q[2] <= top[2])));
}

int stn_compact_shells(int R, struct stn_shell *shells, int max)
{
	int n, exact = 0;

	if (R < 1 || R > STN_MAX_RADIUS2)
		return -1;
	n = each_q((int)floor(sqrt((double)R)), shells, max, within_radius, &R);
	for (int i = 0; i < n; i++)
		exact |= norm2(shells[i].q) == R;
	return exact ? n : -1;	/* R must be a sum of three squares: a new shell at |q|^2 = R */
}

int stn_box_shells(const int q[3], struct stn_shell *shells, int max)
{
	if (q[0] < 1 || q[1] < 0 || q[2] < 0 || q[0] < q[1] || q[1] < q[2] || q[0] > 4)
		return -1;
	return each_q(q[0], shells, max, precedes, q);
}

int stn_from_shells(struct stn_stencil *s, const struct stn_shell *shells, int n,
		    const double *a, const char *family)
{
	double sum = 0;
	int pts[48][3];

	memset(s, 0, sizeof(*s));
	s->K = 1;
	for (int p = 0; p < n; p++) {
		const double ap = a ? a[p] : 1.0 / n, q2 = norm2(shells[p].q);
		const int np = shell_points(shells[p].q, pts);

		if (s->K + np > STN_MAX_POINTS)
			return -1;
		sum += ap;
		if (ap == 0)
			continue;
		s->w[0] -= ap * 6 / q2;
		for (int i = 0; i < np; i++) {
			memcpy(s->off[s->K], pts[i], sizeof(pts[i]));
			s->w[s->K++] = ap * 6 / (np * q2);
		}
		s->reach = shells[p].q[0] > s->reach ? shells[p].q[0] : s->reach;
	}
	if (fabs(sum - 1) > 1e-12)
		return -1;
	quantise(s);
	snprintf(s->name, sizeof(s->name), "%s (%d points)", family, s->K);
	return 0;
}

double stn_symbol(const struct stn_stencil *s, const double xi[3])
{
	double w = 0;

	for (int k = 0; k < s->K; k++)
		w += s->w[k] * cos(xi[0] * s->off[k][0] + xi[1] * s->off[k][1] + xi[2] * s->off[k][2]);
	return w;
}

/* Samples per axis of the Brillouin-zone search, then a shrinking pattern search. */
#define ZONE_SAMPLES 24
#define REFINE_ROUNDS 60

/* Largest value of sign * W over [0, pi]^3 (W is even in each xi). */
static double zone_max(const struct stn_stencil *s, double sign)
{
	double best = -HUGE_VAL, at[3] = { 0, 0, 0 }, step = M_PI / ZONE_SAMPLES;

	for (int i = 0; i <= ZONE_SAMPLES; i++)
		for (int j = 0; j <= ZONE_SAMPLES; j++)
			for (int k = 0; k <= ZONE_SAMPLES; k++) {
				const double xi[3] = { i * step, j * step, k * step };
				const double v = sign * stn_symbol(s, xi);

				if (v > best) {
					best = v;
					memcpy(at, xi, sizeof(at));
				}
			}
	for (int r = 0; r < REFINE_ROUNDS; r++, step *= 0.7)
		for (int a = 0; a < 3; a++)
			for (int d = -1; d <= 1; d += 2) {
				double xi[3] = { at[0], at[1], at[2] }, v;

				xi[a] = fmin(M_PI, fmax(0, xi[a] + d * step));
				v = sign * stn_symbol(s, xi);
				if (v > best) {
					best = v;
					memcpy(at, xi, sizeof(at));
				}
			}
	return best;
}

double stn_lambda2_limit(const struct stn_stencil *s)
{
	double scale = 0, wmax, neg;

	if (stn_is_seven_point(s))	/* exactly (seed 000 eq. 3), not to the search's precision */
		return 1 / 3.0;
	for (int k = 0; k < s->K; k++)
		scale += fabs(s->w[k]);
	wmax = zone_max(s, 1);
	neg = zone_max(s, -1);
	/* W(0) = 0 for a consistent Laplacian; W > 0 anywhere else means growth for any lambda. */
	if (wmax > 1e-12 * scale || neg <= 0)
		return 0;
	return 4 / neg;
}

double stn_courant_limit(const struct stn_stencil *s)
{
	return stn_is_seven_point(s) ? 1 / sqrt(3.0) : sqrt(stn_lambda2_limit(s));
}

static const double dirs[STN_NDIRS][3] = {
	{ 1, 0, 0 },
	{ 0.70710678118654752, 0.70710678118654752, 0 },
	{ 0.57735026918962576, 0.57735026918962576, 0.57735026918962576 },
};

static double error_along(const struct stn_stencil *s, double lambda, const double n[3],
			  double ppw)
{
	const double kh = 2 * M_PI / ppw, xi[3] = { kh * n[0], kh * n[1], kh * n[2] };
	const double arg = 1 + 0.5 * lambda * lambda * stn_symbol(s, xi);

	if (arg < -1 || arg > 1)
		return NAN;
	/* v / c = (omega k) / (lambda kappa h), since c = lambda h / k */
	return acos(arg) / (lambda * kh) - 1;
}

double stn_phase_error(const struct stn_stencil *s, double lambda, enum stn_dir d, double ppw)
{
	return error_along(s, lambda, dirs[d], ppw);
}

/*
 * |error| over m directions of the first octant (a Fibonacci lattice, z uniform, so equally
 * spaced in area): their mean (mean), else their largest; NAN past the cut-off in any.
 */
static double octant_error(const struct stn_stencil *s, double lambda, double ppw, int m,
			   int mean)
{
	double acc = 0;

	for (int i = 0; i < m; i++) {
		const double z = (i + 0.5) / m, r = sqrt(1 - z * z);
		const double phi = fmod(i * 2.39996322972865332, M_PI / 2);
		const double n[3] = { r * cos(phi), r * sin(phi), z };
		const double e = error_along(s, lambda, n, ppw);

		if (isnan(e))
			return NAN;
		acc = mean ? acc + fabs(e) : fmax(acc, fabs(e));
	}
	return mean ? acc / m : acc;
}

/* Directions sampled in the first octant for the worst case and for the mean. */
#define WORST_DIRECTIONS 150
#define MEAN_DIRECTIONS 600

double stn_worst_error(const struct stn_stencil *s, double lambda, double ppw)
{
	const double sampled = octant_error(s, lambda, ppw, WORST_DIRECTIONS, 0);
	double worst = sampled;

	if (isnan(sampled))
		return NAN;
	for (int d = 0; d < STN_NDIRS; d++)
		worst = fmax(worst, fabs(error_along(s, lambda, dirs[d], ppw)));
	return worst;
}

double stn_mean_error(const struct stn_stencil *s, double lambda, double ppw)
{
	return octant_error(s, lambda, ppw, MEAN_DIRECTIONS, 1);
}

/* A measure of a scheme's error at ppw points per wavelength: its scheme, Courant number and,
 * for matching, the reference scheme's mean error at each of MATCH_POINTS frequencies. */
#define MATCH_POINTS 48
#define MATCH_SPAN 64.0	/* from fmax down to fmax / MATCH_SPAN */

struct measure {
	const struct stn_stencil *s;
	double lambda;
	double ref[MATCH_POINTS];
};

static double worst_of(const struct measure *m, double ppw)
{
	return stn_worst_error(m->s, m->lambda, ppw);
}

/* Frequency i of the matching: fmax / MATCH_SPAN^(i / (MATCH_POINTS - 1)), as the factor on
 * the points per wavelength at fmax. */
static double match_factor(int i)
{
	return pow(MATCH_SPAN, i / (double)(MATCH_POINTS - 1));
}

/* The largest ratio of the scheme's mean error to the reference's over the frequencies. */
static double match_of(const struct measure *m, double ppw)
{
	double worst = 0;

	for (int i = 0; i < MATCH_POINTS; i++) {
		const double e = stn_mean_error(m->s, m->lambda, ppw * match_factor(i));

		if (isnan(e))
			return NAN;
		worst = fmax(worst, e / m->ref[i]);
	}
	return worst;
}

/* The points per wavelength from which error() stays within tol (bisection). */
static double ppw_for(const struct measure *m, double (*error)(const struct measure *, double),
		      double tol)
{
	double lo = 2, hi = 2;

	/* Walk up until the error is met, then bisect: the error falls as ppw grows. */
	for (;;) {
		const double e = error(m, hi);

		if (!isnan(e) && e <= tol)
			break;
		lo = hi;
		hi *= 1.5;
		if (hi > 1e5)
			return NAN;
	}
	for (int i = 0; i < 60; i++) {
		const double mid = 0.5 * (lo + hi), e = error(m, mid);

		if (!isnan(e) && e <= tol)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

double stn_ppw_for(const struct stn_stencil *s, double lambda, double tol)
{
	const struct measure m = { .s = s, .lambda = lambda };

	return ppw_for(&m, worst_of, tol);
}

/*
 * Matching holds at ppw when it holds at every frequency; it then holds at any larger ppw too
 * (each frequency's error is then at most a lower frequency's, whose reference is larger), so
 * the bisection finds where it starts.
 */
double stn_ppw_matching(const struct stn_stencil *s, double lambda, const struct stn_stencil *r,
			double r_lambda, double r_ppw)
{
	struct measure m = { .s = s, .lambda = lambda };

	for (int i = 0; i < MATCH_POINTS; i++) {
		m.ref[i] = stn_mean_error(r, r_lambda, r_ppw * match_factor(i));
		if (isnan(m.ref[i]) || m.ref[i] <= 0)
			return NAN;
	}
	return ppw_for(&m, match_of, 1);
}

/*
 * Default shell weights (docs/stencils.md, "Default weights"). For a given lambda, the weights
 * a (sum 1) whose symbol is closest, least squares relative to |xi|^2, to the dispersion-free
 * W*(xi) = 2 (cos(lambda |xi|) - 1) / lambda^2 over FIT_DIRS directions of the octant and
 * FIT_RADII wavenumbers up to FIT_KH (4 points per wavelength) are a linear problem (LAPACK's
 * dgels). A scheme runs at its own limit, which depends on the weights, so the fit is made at
 * FIT_LAMBDAS values of lambda around the limit of equal weights, and the stable fit that does
 * the least work for 1 % worst-case error at its own limit is kept, if it beats equal weights:
 * at ppw points per wavelength and Courant number lambda, a room and duration cost
 * ppw^3 cells times ppw / lambda steps, so the work is ppw^4 / lambda.
 */
#define FIT_DIRS 48
#define FIT_RADII 12
#define FIT_KH (M_PI / 2)
#define FIT_LAMBDAS 10	/* 0.4 to 1.3 times the limit of equal weights */

/* The symbol of shell q alone, normalised as in stn_from_shells(). */
static double shell_symbol(const int q[3], const double xi[3])
{
	int pts[48][3];
	const int np = shell_points(q, pts);
	double w = 0;

	for (int i = 0; i < np; i++)
		w += cos(xi[0] * pts[i][0] + xi[1] * pts[i][1] + xi[2] * pts[i][2]) - 1;
	return w * 6 / (np * norm2(q));
}

/* One least-squares fit at lambda into a[0..n); -1 when LAPACK fails. */
static int fit_weights(const struct stn_shell *sh, int n, double lambda, double *a)
{
	const int rows = FIT_DIRS * FIT_RADII, cols = n - 1;
	double *m = malloc(sizeof(double) * (size_t)rows * (size_t)cols);
	double *rhs = malloc(sizeof(double) * (size_t)rows), wn, sum = 0;
	int rc = -1;

	if (!m || !rhs)
		goto out;
	for (int d = 0; d < FIT_DIRS; d++)
		for (int r = 0; r < FIT_RADII; r++) {
			const double z = (d + 0.5) / FIT_DIRS, rho = sqrt(1 - z * z);
			const double phi = fmod(d * 2.39996322972865332, M_PI / 2);
			const double kh = FIT_KH * (r + 1) / FIT_RADII, k2 = kh * kh;
			const double xi[3] = { kh * rho * cos(phi), kh * rho * sin(phi), kh * z };
			const double target = 2 * (cos(lambda * kh) - 1) / (lambda * lambda);
			const int row = d * FIT_RADII + r;

			/* a_n = 1 - sum of the others: W = W_n + sum_p a_p (W_p - W_n) */
			wn = shell_symbol(sh[n - 1].q, xi);
			for (int p = 0; p < cols; p++)
				m[(size_t)p * rows + row] = (shell_symbol(sh[p].q, xi) - wn) / k2;
			rhs[row] = (target - wn) / k2;
		}
	if (LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', rows, cols, 1, m, rows, rhs, rows))
		goto out;
	for (int p = 0; p < cols; p++)
		sum += a[p] = rhs[p];
	a[n - 1] = 1 - sum;
	rc = 0;
out:
	free(m);
	free(rhs);
	return rc;
}

/* ppw^4 / lambda for 1 % worst-case error at lambda: the work of a run (see above). */
static double work(const struct stn_stencil *s, double lambda)
{
	const double ppw = stn_ppw_for(s, lambda, 0.01);

	return ppw * ppw * ppw * ppw / lambda;
}

int stn_default_weights(const struct stn_shell *sh, int n, double *a)
{
	static struct stn_stencil s;	/* large */
	static struct {			/* the last answer: a room file asks more than once */
		struct stn_shell sh[STN_MAX_SHELLS];
		double a[STN_MAX_SHELLS];
		int n, kept;
	} memo;
	double fit[STN_MAX_SHELLS], best, lambda0;
	int kept = 0;

	if (n == memo.n && !memcmp(sh, memo.sh, sizeof(*sh) * (size_t)n)) {
		memcpy(a, memo.a, sizeof(double) * (size_t)n);
		return memo.kept;
	}
	for (int p = 0; p < n; p++)
		a[p] = 1.0 / n;
	if (n < 2 || n > STN_MAX_SHELLS || stn_from_shells(&s, sh, n, a, "equal"))
		return 0;
	lambda0 = stn_courant_limit(&s);
	best = work(&s, lambda0);
	for (int c = 0; c < FIT_LAMBDAS; c++) {
		double limit, w;

		if (fit_weights(sh, n, lambda0 * (0.4 + 0.1 * c), fit) ||
		    stn_from_shells(&s, sh, n, fit, "fit") || (limit = stn_courant_limit(&s)) <= 0)
			continue;
		if ((w = work(&s, limit)) < best) {
			best = w;
			memcpy(a, fit, sizeof(double) * (size_t)n);
			kept = 1;
		}
	}
	memo.n = n;
	memo.kept = kept;
	memcpy(memo.sh, sh, sizeof(*sh) * (size_t)n);
	memcpy(memo.a, a, sizeof(double) * (size_t)n);
	return kept;
}

/*
 * Kowalczyk and van Walstijn, "Room acoustics simulation using 3-D compact explicit FDTD
 * schemes", IEEE TASLP 19(1), 2011: u+ = d1 S1 + d2 S2 + d3 S3 + d4 u - u- with
 * d1 = l^2 (1 - 4a + 4b), d2 = l^2 (a - 2b), d3 = l^2 b over the 6 axial, 12 side-diagonal and
 * 8 diagonal neighbours. Dividing each shell sum by its own second-order factor (1, 4, 4) gives
 * the shell weights below. The parameters and Courant numbers are the published ones.
 */
const char *const stn_variant_names[] = { "SRL", "SLF", "CCP", "OCTA", "IWB", "IISO", "IISO2",
					  "IDWM", NULL };
static const struct {
	double a, b, courant;
} variants[] = {
	{ 0, 0, 0.57735026918962576 },		/* SRL: standard rectilinear, 1/sqrt(3) */
	{ 0, 0, 0.57735026918962576 },		/* SLF: standard leapfrog, the same scheme */
	{ 0.25, 0, 1 },				/* CCP: cubic close-packed (the FCC lattice) */
	{ 0.5, 0.25, 1 },			/* OCTA: octahedral */
	{ 0.25, 0.0625, 1 },			/* IWB: interpolated wideband */
	{ 1.0 / 6, 0, 0.86602540378443865 },	/* IISO: interpolated isotropic, sqrt(3/4) */
	{ 1.0 / 6, 1.0 / 48, 0.86602540378443865 },	/* IISO2 */
	{ 0.2034, 0.0438, 0.57735026918962576 },	/* IDWM: interpolated waveguide mesh */
};

int stn_interpolated(struct stn_stencil *s, int v)
{
	struct stn_shell sh[3];
	double a[3];

	if (v < 0 || v >= (int)(sizeof(variants) / sizeof(variants[0])) ||
	    stn_compact_shells(3, sh, 3) != 3)
		return -1;
	a[0] = 1 - 4 * variants[v].a + 4 * variants[v].b;
	a[1] = 4 * (variants[v].a - 2 * variants[v].b);
	a[2] = 4 * variants[v].b;
	/* sum a = 1 exactly in exact arithmetic; fold the rounding into the axial shell */
	a[0] = 1 - a[1] - a[2];
	if (stn_from_shells(s, sh, 3, a, "interpolated"))
		return -1;
	s->courant = variants[v].courant;
	snprintf(s->name, sizeof(s->name), "interpolated %s (%d points)", stn_variant_names[v],
		 s->K);
	return 0;
}

int stn_fcc(struct stn_stencil *s)
{
	if (stn_interpolated(s, 2))	/* CCP: the twelve side diagonals */
		return -1;
	s->fcc = 1;
	snprintf(s->name, sizeof(s->name), "fcc (13 points on the FCC lattice)");
	return 0;
}

int stn_from_config(const struct room *r, struct stn_stencil *s)
{
	struct stn_shell sh[STN_MAX_SHELLS];
	double a[STN_MAX_SHELLS];
	int n;

	if (r->stencil == ROOM_STENCIL_LEGGY)
		return stn_leggy(s, r->order / 2);
	if (r->stencil == ROOM_STENCIL_INTERPOLATED)
		return stn_interpolated(s, r->variant);
	if (r->stencil == ROOM_STENCIL_FCC)
		return stn_fcc(s);
	n = r->stencil == ROOM_STENCIL_COMPACT ? stn_compact_shells(r->radius2, sh, STN_MAX_SHELLS)
					       : stn_box_shells(r->boxq, sh, STN_MAX_SHELLS);
	if (n < 0 || (r->nweights && r->nweights != n))
		return -1;
	if (!r->nweights)
		stn_default_weights(sh, n, a);
	return stn_from_shells(s, sh, n, r->nweights ? r->weights : a,
			       r->stencil == ROOM_STENCIL_COMPACT ? "compact-in-space" : "box-compact");
}

int stn_is_seven_point(const struct stn_stencil *s)
{
	return s->K == 7 && s->reach == 1;
}

int stn_is_axial(const struct stn_stencil *s)
{
	if (s->fcc)
		return 0;
	for (int q = 1; q < s->K; q++)
		if (!!s->off[q][0] + !!s->off[q][1] + !!s->off[q][2] != 1)
			return 0;
	return 1;
}
