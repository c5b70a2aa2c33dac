/*
 * wall.c - passive admittance models of band absorption, and Paris' formula (solver/wall.h).
 */
#include "wall.h"

#include <math.h>
#include <stdlib.h>

#include "../model/room.h"

_Static_assert(ROOM_MAX_BRANCHES <= WALL_MAX_BRANCHES, "a material's branches fit a model");

/*
 * The banks tried, sparsest first (wall_fit): resonant branches per band and their quality
 * per branch (Q = spread qper for octave bands, 3 spread qper for third-octave ones). Each
 * branch costs the engines two state values per wall node and step, so the first bank that
 * meets every band's tolerance wins. Third-octave data try first a branch per octave and per
 * two thirds (spread 1/3, 1/2) of two qualities each, then one per band of a lower Q; about
 * half the library's materials given by thirds fit within 12 branches so (tests/test_wall).
 */
static const struct {
	double spread;
	double qper;
	int third_only;
} ladder[] = { { 1 / 3.0, 0.8, 1 }, { 1 / 3.0, 0.5, 1 }, { 0.5, 0.8, 1 }, { 0.5, 0.5, 1 },
	       { 1, 0.6, 1 }, { 1, 1.2, 0 }, { 2, 1.0, 0 }, { 3, 1.0, 0 } };
#define IMAG_WEIGHT 0.2		/* weight of the reactance against the resistance in the fit */
#define BAND_POINTS 9		/* log-spaced points of a band's average */
#define FIT_OUTER 40		/* corrections of the band absorptions */
#define RIPPLE 0.03		/* the absorption between band centres (smooth) */
#define RIPPLE_REL 0.1

double complex wall_admittance(const struct wall_model *w, double f)
{
	const double om = 2 * M_PI * f;
	double complex beta = 0;

	for (int b = 0; b < w->n; b++)
		beta += 1 / (w->r[b] + I * (om * w->m[b] - (w->k[b] > 0 ? w->k[b] / om : 0)));
	return beta;
}

/*
 * Paris' formula for the impedance z = 1 / beta = x + i y (Kuttruff, Room Acoustics, the
 * diffuse-field absorption of a locally reacting wall):
 *     8 x / |z|^2 [1 - x / |z|^2 ln((1 + x)^2 + y^2)
 *                    + (x^2 - y^2) / (y |z|^2) atan(y / (1 + x))],
 * whose last term tends to 1 / (1 + x) as y goes to 0 (model/room.c has the real case).
 */
double wall_alpha_of_beta(double complex beta)
{
	double complex z;
	double x, y, z2, t;

	if (cabs(beta) == 0 || creal(beta) <= 0)
		return 0;
	z = 1 / beta;
	x = creal(z);
	y = cimag(z);
	z2 = x * x + y * y;
	if (fabs(y) < 1e-9 * (1 + x))
		t = 1 / (1 + x);
	else
		t = (x * x - y * y) / (y * z2) * atan(y / (1 + x));
	return 8 * x / z2 * (1 - x / z2 * log((1 + x) * (1 + x) + y * y) + t);
}

double wall_alpha(const struct wall_model *w, double f)
{
	return wall_alpha_of_beta(wall_admittance(w, f));
}

double wall_alpha_band(const struct wall_model *w, double fc, int third)
{
	const double half = third ? 1.0 / 6 : 0.5;	/* the band's half-width in octaves */
	double s = 0;

	for (int q = 0; q < BAND_POINTS; q++)
		s += wall_alpha(w, fc * exp2(half * (2.0 * q / (BAND_POINTS - 1) - 1)));
	return s / BAND_POINTS;
}

int wall_band_missed(double fitted, double target)
{
	return fabs(fitted - target) > fmax(0.02, 0.05 * target) + 1e-12;
}

/* x solving a x = y by Gaussian elimination with partial pivoting (n small); a is lost. */
static void gauss(int n, double a[][WALL_MAX_BRANCHES], double *y, double *x)
{
	for (int c = 0; c < n; c++) {
		int p = c;

		for (int r = c + 1; r < n; r++)
			if (fabs(a[r][c]) > fabs(a[p][c]))
				p = r;
		for (int k = 0; k < n; k++) {
			const double t = a[c][k];

			a[c][k] = a[p][k];
			a[p][k] = t;
		}
		{
			const double t = y[c];

			y[c] = y[p];
			y[p] = t;
		}
		for (int r = c + 1; r < n; r++) {
			const double f = a[r][c] / a[c][c];

			for (int k = c; k < n; k++)
				a[r][k] -= f * a[c][k];
			y[r] -= f * y[c];
		}
	}
	for (int c = n - 1; c >= 0; c--) {
		double s = y[c];

		for (int k = c + 1; k < n; k++)
			s -= a[c][k] * x[k];
		x[c] = s / a[c][c];
	}
}

/*
 * The branch bank: `spread` resonant branches per fitted band (1, 2 or 3), 1 / spread of a band
 * apart around its centre, or with spread 1 / d one at every d-th band's centre (from the band
 * that centres them on the fitted ones), quality Q; and two that open the ends, a mass branch
 * flat below the lowest band and a stiffness branch flat above the highest.
 * Branch j of unit conductance has the admittance shape(j, f); conductance g_j gives
 * r = 1 / g_j and m, k scaled alike.
 */
struct bank {
	int n;
	double fj[WALL_MAX_BRANCHES];	/* resonance or corner, Hz */
	int kind[WALL_MAX_BRANCHES];	/* BR_RES, BR_MASS, BR_STIFF or BR_FLAT */
	double q[WALL_MAX_BRANCHES];	/* a resonant branch's quality */
};

enum { BR_RES, BR_MASS, BR_STIFF, BR_FLAT };	/* mass only: flat below fj; stiffness: above */

static void bank_add(struct bank *k, double fj, int kind, double q)
{
	k->fj[k->n] = fj;
	k->kind[k->n] = kind;
	k->q[k->n++] = q;
}

static void bank_of(const struct wall_bands *bd, int used, double spread, double qper,
		    struct bank *k)
{
	const double step = (bd->third ? 1.0 / 3 : 1.0) / spread;	/* octaves apart */
	const int every = spread < 1 ? (int)lround(1 / spread) : 1;
	const int per = spread < 1 ? 1 : (int)lround(spread);
	const double q = (bd->third ? 3 : 1) * qper * spread;

	k->n = 0;
	bank_add(k, bd->f[0], BR_MASS, 0);
	for (int b = (used - 1) % every / 2; b < used; b += every)
		for (int s = 0; s < per; s++)
			bank_add(k, bd->f[b] * exp2((s - 0.5 * (per - 1)) * step), BR_RES, q);
	bank_add(k, bd->f[used - 1], BR_STIFF, 0);
}

/*
 * The free bank for third-octave data that no regular bank fits within MAX_SPARSE branches
 * (wall_fit): at every third from a band below the lowest to a band above the highest,
 * resonant branches of two qualities, a mass and a stiffness branch; and one flat branch.
 * The least-squares fit over it picks a few, and prune takes the rest out.
 */
#define MAX_SPARSE 12
#define DICT_Q0 0.7
#define DICT_Q1 2.5

static void dict_of(const struct wall_bands *bd, int used, struct bank *k)
{
	k->n = 0;
	bank_add(k, 0, BR_FLAT, 0);
	for (int b = -1; b <= used && k->n + 4 <= WALL_MAX_BRANCHES; b++) {
		const double f = bd->f[0] * exp2(b / 3.0);

		bank_add(k, f, BR_RES, DICT_Q0);
		bank_add(k, f, BR_RES, DICT_Q1);
		bank_add(k, f, BR_MASS, 0);
		bank_add(k, f, BR_STIFF, 0);
	}
}

/* The wall of conductances g over the bank (branches of g = 0 left out). */
static void model_of(const struct bank *k, const double *g, struct wall_model *w)
{
	w->n = 0;
	for (int j = 0; j < k->n; j++) {
		const double om = 2 * M_PI * k->fj[j], r = 1 / g[j];

		if (!(g[j] > 0))
			continue;
		w->r[w->n] = r;
		w->m[w->n] = k->kind[j] == BR_RES ? k->q[j] * r / om : k->kind[j] == BR_MASS ? r / om : 0;
		w->k[w->n] = k->kind[j] == BR_RES ? k->q[j] * r * om : k->kind[j] == BR_STIFF ? r * om : 0;
		w->n++;
	}
}

static double complex shape(const struct bank *k, int j, double f)
{
	const double x = f / k->fj[j];

	switch (k->kind[j]) {
	case BR_MASS:
		return 1 / (1 + I * x);
	case BR_STIFF:
		return 1 / (1 - I / x);
	case BR_FLAT:
		return 1;
	default:
		return 1 / (1 + I * k->q[j] * (x - 1 / x));
	}
}

/*
 * Non-negative least squares (Lawson and Hanson): x >= 0 minimising |A x - y| for the m x n
 * matrix a (row-major, n <= WALL_MAX_BRANCHES), the passive set's problem solved through its
 * normal equations.
 */
static void nnls(int m, int n, const double *a, const double *y, double *x)
{
	int in[WALL_MAX_BRANCHES] = { 0 };
	double z[WALL_MAX_BRANCHES], res[2 * (WALL_MAX_BANDS + 1) * BAND_POINTS];

	for (int j = 0; j < n; j++)
		x[j] = 0;
	for (int outer = 0; outer < 3 * n; outer++) {
		double best = 1e-12;
		int t = -1;

		for (int i = 0; i < m; i++) {	/* the residual y - A x */
			res[i] = y[i];
			for (int l = 0; l < n; l++)
				res[i] -= a[i * n + l] * x[l];
		}
		for (int j = 0; j < n; j++) {	/* the gradient A^T (y - A x) off the set */
			double w = 0;

			if (in[j])
				continue;
			for (int i = 0; i < m; i++)
				w += a[i * n + j] * res[i];
			if (w > best) {
				best = w;
				t = j;
			}
		}
		if (t < 0)
			return;
		in[t] = 1;
		for (int inner = 0; inner < 3 * n; inner++) {
			double nm[WALL_MAX_BRANCHES][WALL_MAX_BRANCHES], rhs[WALL_MAX_BRANCHES];
			double sol[WALL_MAX_BRANCHES];
			int idx[WALL_MAX_BRANCHES], p = 0, ok = 1;
			double step = 1;

			for (int j = 0; j < n; j++)
				if (in[j])
					idx[p++] = j;
			for (int r = 0; r < p; r++) {
				rhs[r] = 0;
				for (int i = 0; i < m; i++)
					rhs[r] += a[i * n + idx[r]] * y[i];
				for (int c = 0; c < p; c++) {
					nm[r][c] = r == c ? 1e-14 : 0;	/* keeps it regular */
					for (int i = 0; i < m; i++)
						nm[r][c] += a[i * n + idx[r]] * a[i * n + idx[c]];
				}
			}
			gauss(p, nm, rhs, sol);
			for (int j = 0; j < n; j++)
				z[j] = 0;
			for (int r = 0; r < p; r++) {
				z[idx[r]] = sol[r];
				if (sol[r] <= 0)
					ok = 0;
			}
			if (ok) {
				for (int j = 0; j < n; j++)
					x[j] = z[j];
				break;
			}
			for (int j = 0; j < n; j++)	/* back towards x until z's first zero */
				if (in[j] && z[j] <= 0)
					step = fmin(step, x[j] / (x[j] - z[j]));
			for (int j = 0; j < n; j++) {
				x[j] += step * (z[j] - x[j]);
				if (in[j] && x[j] <= 1e-15) {
					in[j] = 0;
					x[j] = 0;
				}
			}
		}
	}
}

/*
 * The bank's conductances whose admittance is real and want[b] across each band b, and
 * want[0] over the two octaves below the lowest band (a band below the lowest given holds
 * its value, as far as the next bands' tails allow).
 */
static int solve_bank(const struct wall_bands *bd, int used, const struct bank *k,
		      const double *want, double *g)
{
	double *a = malloc(sizeof(double) * 2 * (WALL_MAX_BANDS + 1) * BAND_POINTS * WALL_MAX_BRANCHES);
	double y[2 * (WALL_MAX_BANDS + 1) * BAND_POINTS];
	const double half = bd->third ? 1.0 / 6 : 0.5;
	int m = 0;

	if (!a)
		return -1;
	for (int b = -1; b < used; b++)
		for (int q = 0; q < BAND_POINTS; q++) {
			const double x = (double)q / (BAND_POINTS - 1);
			const double f = b < 0 ? bd->f[0] * exp2(-2 + (2 - half) * x)
					       : bd->f[b] * exp2(half * (2 * x - 1));

			for (int j = 0; j < k->n; j++) {
				const double complex s = shape(k, j, f);

				a[m * k->n + j] = creal(s);
				a[(m + 1) * k->n + j] = IMAG_WEIGHT * cimag(s);
			}
			y[m] = want[b < 0 ? 0 : b];
			y[m + 1] = 0;
			m += 2;
		}
	nnls(m, k->n, a, y, g);
	free(a);
	return 0;
}

/* The real admittance of absorption a on Paris' rising branch [0, bpeak] (bisection). */
static double peak(double a, double bpeak)
{
	double lo = 0, hi = bpeak;

	for (int i = 0; i < 60; i++) {
		const double mid = 0.5 * (lo + hi);

		if (room_absorption_of_beta(mid) < a)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* fit's band averages of its model, and how many of bands 0 .. fit->used - 1 miss. */
static void assess(const struct wall_bands *bd, struct wall_fit *fit)
{
	fit->misses = 0;
	for (int b = 0; b < bd->n; b++) {
		fit->fitted[b] = wall_alpha_band(&fit->model, bd->f[b], bd->third);
		if (b < fit->used && wall_band_missed(fit->fitted[b], bd->alpha[b]))
			fit->misses++;
	}
}

/* The fit of bands 0 .. used - 1 over bank k; k keeps only the branches the fit uses. */
static int fit_over(const struct wall_bands *bd, int used, struct bank *k, struct wall_fit *fit)
{
	const double amax = room_absorption_max();
	const double bpeak = room_beta_of_absorption(amax);
	double g[WALL_MAX_BRANCHES], want[WALL_MAX_BANDS];

	fit->used = used;
	for (int b = 0; b < bd->n; b++) {
		fit->target[b] = fmin(bd->alpha[b], amax);
		want[b] = peak(fit->target[b], bpeak);
	}
	/*
	 * The conductances for which the admittance is real and want[b] across each band b (in
	 * the least-squares sense); then want[b] moved by what the band average of the
	 * absorption still misses, in admittance on Paris' rising branch, never past its peak.
	 */
	for (int outer = 0; outer < FIT_OUTER; outer++) {
		int done = 1;

		if (solve_bank(bd, used, k, want, g))
			return -1;
		model_of(k, g, &fit->model);
		for (int b = 0; b < used; b++) {
			const double a = fmin(wall_alpha_band(&fit->model, bd->f[b], bd->third),
					      amax * (1 - 1e-9));

			if (fabs(a - fit->target[b]) > 1e-3)
				done = 0;
			if (a > 0 && want[b] > 0)
				want[b] = fmin(want[b] * peak(fit->target[b], bpeak) / peak(a, bpeak),
					       bpeak);
		}
		if (done)
			break;
	}
	assess(bd, fit);
	int n = 0;

	for (int j = 0; j < k->n; j++)
		if (g[j] > 0) {
			k->fj[n] = k->fj[j];
			k->kind[n] = k->kind[j];
			k->q[n++] = k->q[j];
		}
	k->n = n;
	return 0;
}

/* The fit of bands 0 .. used - 1 over the bank of ladder step l (k: its branches in use). */
static int fit_bank(const struct wall_bands *bd, int used, int l, struct bank *k,
		    struct wall_fit *fit)
{
	bank_of(bd, used, ladder[l].spread, ladder[l].qper, k);
	return fit_over(bd, used, k, fit);
}

/* The target between the centres at log2 f = x. */
static double target_at(const struct wall_bands *bd, const struct wall_fit *fit, double x)
{
	double t = fit->target[0];

	for (int b = 0; b + 1 < fit->used; b++) {
		const double x0 = log2(bd->f[b]), x1 = log2(bd->f[b + 1]);

		if (x >= x0 && x <= x1)
			t = fit->target[b] + (fit->target[b + 1] - fit->target[b]) * (x - x0) / (x1 - x0);
		else if (x > x1)
			t = fit->target[b + 1];
	}
	return t;
}

/*
 * Whether the model's absorption stays near the bands' between their centres: within
 * RIPPLE absolute (or RIPPLE_REL relative) of the targets interpolated linearly in log f,
 * from two octaves below the lowest band (its value) to half a band above the highest. A sparse
 * bank can meet every band average and still swing between them.
 */

static int smooth(const struct wall_bands *bd, const struct wall_fit *fit)
{
	const double half = bd->third ? 1.0 / 6 : 0.5;
	const int n = fit->used;

	for (double x = log2(bd->f[0]) - 2; x <= log2(bd->f[n - 1]) + half; x += half / 4) {
		const double t = target_at(bd, fit, x);

		if (fabs(wall_alpha(&fit->model, exp2(x)) - t) > fmax(RIPPLE, RIPPLE_REL * t))
			return 0;
	}
	return 1;
}

/*
 * Refinement of a fit by Levenberg-Marquardt on its branches themselves: each branch's
 * conductance, corner or resonance, and quality, in logarithms (so that the wall stays passive),
 * to bring the band averages of the absorption within their tolerances (residuals of 1 at
 * REFINE_MARGIN of it) and the absorption between the centres near the targets' line (smooth,
 * weighed by REFINE_SMOOTH). A sparse bank that no linear fit over fixed shapes can make meet
 * every band often does once its branches move.
 */
#define REFINE_ITER 40
#define REFINE_MARGIN 0.8
#define REFINE_SMOOTH 0.3
#define REFINE_MOST (2 * MAX_SPARSE)	/* branches refined at most */
#define REFINE_MAXP (3 * REFINE_MOST)
#define REFINE_MAXR (WALL_MAX_BANDS + 256)

static int params_of(const struct bank *k, const double *g, double *p)
{
	int n = 0;

	for (int j = 0; j < k->n; j++) {
		p[n++] = log(g[j]);
		if (k->kind[j] != BR_FLAT)
			p[n++] = log(k->fj[j]);
		if (k->kind[j] == BR_RES)
			p[n++] = log(k->q[j]);
	}
	return n;
}

static void bank_of_params(struct bank *k, double *g, const double *p)
{
	int n = 0;

	for (int j = 0; j < k->n; j++) {
		g[j] = exp(p[n++]);
		if (k->kind[j] != BR_FLAT)
			k->fj[j] = exp(p[n++]);
		if (k->kind[j] == BR_RES)
			k->q[j] = exp(p[n++]);
	}
}

static int residuals(const struct wall_bands *bd, const struct wall_fit *fit,
		     const struct wall_model *w, double *res)
{
	const double half = bd->third ? 1.0 / 6 : 0.5;
	const int used = fit->used;
	int n = 0;

	for (int b = 0; b < used; b++)
		res[n++] = (wall_alpha_band(w, bd->f[b], bd->third) - fit->target[b]) /
			   (REFINE_MARGIN * fmax(0.02, 0.05 * bd->alpha[b]));
	for (double x = log2(bd->f[0]) - 2; x <= log2(bd->f[used - 1]) + half && n < REFINE_MAXR;
	     x += half / 4) {
		const double t = target_at(bd, fit, x);
		const double e = (wall_alpha(w, exp2(x)) - t) / fmax(RIPPLE, RIPPLE_REL * t);

		res[n++] = REFINE_SMOOTH * e + copysign(fmax(0, fabs(e) - REFINE_MARGIN), e);
	}
	return n;
}

/*
 * Pruning and refinement keep at least DC_KEEP of the conductance at 0 Hz
 * (wall_dc_conductance), and every fit ends with at least DC_FLOOR of its conductance at the
 * lowest band's centre, DC_FLOOR_LEAST where that misses a band (hold_dc). In the test box
 * of tests/test_branch (three faces of a fit without it) 0.05 holds the fcc scheme's float32
 * energy level over 10^6 steps and 0.03 does not.
 */
#define DC_KEEP 0.5
#define DC_FLOOR 0.1
#define DC_FLOOR_LEAST 0.05

double wall_dc_conductance(const struct wall_model *w)
{
	double g = 0;

	for (int j = 0; j < w->n; j++)
		if (w->k[j] == 0)
			g += 1 / w->r[j];
	return g;
}

/* Bank k less its branch c into out, and with g, the others' conductances in model w (k's). */
static void bank_without(const struct bank *k, int c, const struct wall_model *w,
			 struct bank *out, double *g)
{
	out->n = 0;
	for (int j = 0; j < k->n; j++)
		if (j != c) {
			if (g)
				g[out->n] = 1 / w->r[j];
			bank_add(out, k->fj[j], k->kind[j], k->q[j]);
		}
}

/* The model's branches by conductance, least first. */
static void by_conductance(const struct wall_model *w, int *order)
{
	for (int j = 0; j < w->n; j++) {
		int i = j;

		for (; i > 0 && w->r[order[i - 1]] < w->r[j]; i--)
			order[i] = order[i - 1];
		order[i] = j;
	}
}

/* fit over bank k refined in place (k and fit->model alike); its misses counted again. */
static void refine(const struct wall_bands *bd, struct bank *k, struct wall_fit *fit)
{
	double g[WALL_MAX_BRANCHES], p[REFINE_MAXP], r[REFINE_MAXR], jac[REFINE_MAXP][REFINE_MAXR];
	double lambda = 1e-2, cost = 0;
	struct bank kt = *k;
	struct wall_model w;
	int np, nr;

	if (k->n > REFINE_MOST)
		return;
	for (int j = 0; j < k->n; j++)
		g[j] = 1 / fit->model.r[j];
	np = params_of(k, g, p);
	model_of(k, g, &w);
	nr = residuals(bd, fit, &w, r);
	for (int i = 0; i < nr; i++)
		cost += r[i] * r[i];
	for (int it = 0; it < REFINE_ITER; it++) {
		double a[WALL_MAX_BRANCHES][WALL_MAX_BRANCHES], y[WALL_MAX_BRANCHES];
		double d[WALL_MAX_BRANCHES], pt[REFINE_MAXP], rt[REFINE_MAXR], gt[WALL_MAX_BRANCHES];
		int better = 0;

		for (int c = 0; c < np; c++) {	/* the Jacobian by forward differences */
			for (int i = 0; i < np; i++)
				pt[i] = p[i];
			pt[c] += 1e-6;
			bank_of_params(&kt, gt, pt);
			model_of(&kt, gt, &w);
			residuals(bd, fit, &w, rt);
			for (int i = 0; i < nr; i++)
				jac[c][i] = (rt[i] - r[i]) / 1e-6;
		}
		for (int tries = 0; tries < 8 && !better; tries++) {
			double ct = 0;

			for (int a0 = 0; a0 < np; a0++) {
				y[a0] = 0;
				for (int i = 0; i < nr; i++)
					y[a0] -= jac[a0][i] * r[i];
				for (int a1 = 0; a1 < np; a1++) {
					a[a0][a1] = 0;
					for (int i = 0; i < nr; i++)
						a[a0][a1] += jac[a0][i] * jac[a1][i];
				}
				a[a0][a0] *= 1 + lambda;
				a[a0][a0] += 1e-12;
			}
			gauss(np, a, y, d);
			for (int i = 0; i < np; i++)
				pt[i] = p[i] + fmax(-1, fmin(1, d[i]));
			bank_of_params(&kt, gt, pt);
			model_of(&kt, gt, &w);
			residuals(bd, fit, &w, rt);
			for (int i = 0; i < nr; i++)
				ct += rt[i] * rt[i];
			if (ct < cost) {
				better = 1;
				cost = ct;
				for (int i = 0; i < np; i++)
					p[i] = pt[i];
				for (int i = 0; i < nr; i++)
					r[i] = rt[i];
				lambda = fmax(lambda / 4, 1e-6);
			} else
				lambda *= 8;
		}
		if (!better)
			break;
	}
	bank_of_params(k, g, p);
	model_of(k, g, &fit->model);
	assess(bd, fit);
}

/*
 * Branches taken out of bank k (fit's, which meets every band) one at a time, the least
 * conductance first, while the fit without one still meets every band and stays smooth if
 * it was: where the absorption is level, a regular bank holds more branches than it needs.
 */
static int prune(const struct wall_bands *bd, int used, double dc, struct bank *k,
		 struct wall_fit *fit)
{
	const int was_smooth = smooth(bd, fit);

	for (int cut = 1; cut && k->n > 1;) {
		int order[WALL_MAX_BRANCHES];

		cut = 0;
		by_conductance(&fit->model, order);
		for (int c = 0; c < k->n && !cut; c++) {
			struct bank less;
			struct wall_fit f;

			bank_without(k, order[c], &fit->model, &less, NULL);
			if (fit_over(bd, used, &less, &f))
				return -1;
			if (!f.misses && wall_dc_conductance(&f.model) >= dc &&
			    (!was_smooth || smooth(bd, &f))) {
				*k = less;
				*fit = f;
				cut = 1;
			}
		}
	}
	return 0;
}

/*
 * A conductance at 0 Hz of at least share of the conductance at the lowest band's centre: a
 * fit with less (only stiffness-bearing branches: 5 of the library's 90 by octaves) takes the
 * rest as a frequency-independent branch, added to the one it has or new.
 */
static void hold_dc_at(const struct wall_bands *bd, double share, struct wall_fit *fit)
{
	struct wall_model *w = &fit->model;
	const double re = creal(wall_admittance(w, bd->f[0])), have = wall_dc_conductance(w);
	/* what is added raises the conductance at the centre too */
	const double add = (share * re - have) / (1 - share);
	int j = 0;

	if (!(add > 0))
		return;
	while (j < w->n && (w->m[j] != 0 || w->k[j] != 0))
		j++;
	if (j == w->n) {
		if (w->n == WALL_MAX_BRANCHES)
			return;
		w->n++;
		w->r[j] = INFINITY;
		w->m[j] = w->k[j] = 0;
	}
	w->r[j] = 1 / (1 / w->r[j] + add);
	assess(bd, fit);
}

/*
 * DC_FLOOR, or DC_FLOOR_LEAST where DC_FLOOR would miss more bands: that raises the absorption
 * at the lowest band by under a tenth, and brings no library fit a new miss (tests/test_wall).
 */
static void hold_dc(const struct wall_bands *bd, struct wall_fit *fit)
{
	struct wall_fit f = *fit;

	hold_dc_at(bd, DC_FLOOR, &f);
	if (f.misses > fit->misses)
		hold_dc_at(bd, DC_FLOOR_LEAST, fit);
	else
		*fit = f;
}

/*
 * Third-octave fits still over MAX_SPARSE branches, or missing bands: refined (refine), then
 * a branch taken out at a time, the first by least conductance whose removal the refinement
 * makes good (no more misses; smooth if it was), down to MAX_SPARSE.
 */
static void reduce(const struct wall_bands *bd, double dc, struct bank *k, struct wall_fit *fit)
{
	const int was_smooth = smooth(bd, fit);
	struct wall_fit f = *fit;
	struct bank kt = *k;

	refine(bd, &kt, &f);
	if (wall_dc_conductance(&f.model) >= dc &&
	    (f.misses < fit->misses || (f.misses == fit->misses && (smooth(bd, &f) || !was_smooth)))) {
		*k = kt;
		*fit = f;
	}
	while (fit->model.n > MAX_SPARSE) {
		int order[WALL_MAX_BRANCHES], cut = 0;

		by_conductance(&fit->model, order);
		for (int c = 0; c < k->n && !cut; c++) {
			double g[WALL_MAX_BRANCHES];

			bank_without(k, order[c], &fit->model, &kt, g);
			f = *fit;
			model_of(&kt, g, &f.model);
			refine(bd, &kt, &f);
			if (f.misses <= fit->misses && wall_dc_conductance(&f.model) >= dc &&
			    (!was_smooth || smooth(bd, &f))) {
				*k = kt;
				*fit = f;
				cut = 1;
			}
		}
		if (!cut)
			break;
	}
}

int wall_fit(const struct wall_bands *bd, double fmax, struct wall_fit *fit)
{
	struct wall_fit next;
	struct bank bank, nbank;
	int used = 0;

	if (bd->n < 1 || bd->n > WALL_MAX_BANDS)
		return -1;
	for (int b = 0; b < bd->n; b++) {
		if (bd->alpha[b] < 0 || bd->alpha[b] > 1 || bd->f[b] <= 0 ||
		    (b && bd->f[b] <= bd->f[b - 1]))
			return -1;
		if (b == 0 || bd->f[b] <= fmax)
			used = b + 1;
	}
	/* the sparsest bank that meets every band without swinging between them, else the
	 * richest that misses fewest */
	size_t l = 0;

	while (ladder[l].third_only && !bd->third)
		l++;
	if (fit_bank(bd, used, (int)l, &bank, fit))
		return -1;
	for (l++; (fit->misses || !smooth(bd, fit)) && l < sizeof(ladder) / sizeof(ladder[0]);
	     l++) {
		if (ladder[l].third_only && !bd->third)
			continue;
		if (fit_bank(bd, used, (int)l, &nbank, &next))
			return -1;
		/* octave data: the richer of two that miss alike; third-octave data, whose
		 * banks grow fast, the sparser unless the richer is smooth and it is not */
		if (bd->third ? next.misses < fit->misses ||
				(next.misses == fit->misses && !smooth(bd, fit) && smooth(bd, &next))
			      : next.misses <= fit->misses) {
			*fit = next;
			bank = nbank;
		}
	}
	/* the conductance at 0 Hz that pruning and refinement keep */
	const double dc = DC_KEEP * wall_dc_conductance(&fit->model);

	if (!fit->misses && prune(bd, used, dc, &bank, fit))
		return -1;
	/* third-octave data a regular bank fits only with many branches, or not at all: the
	 * free bank, when it does better */
	if (bd->third && (fit->misses || fit->model.n > MAX_SPARSE)) {
		dict_of(bd, used, &nbank);
		if (fit_over(bd, used, &nbank, &next))
			return -1;
		if ((!next.misses && prune(bd, used, dc, &nbank, &next)))
			return -1;
		refine(bd, &nbank, &next);
		if (wall_dc_conductance(&next.model) >= dc &&
		    (next.misses < fit->misses ||
		     (next.misses == fit->misses && next.model.n < fit->model.n &&
		      (smooth(bd, &next) || !smooth(bd, fit))))) {
			*fit = next;
			bank = nbank;
		}
	}
	if (bd->third && (fit->misses || fit->model.n > MAX_SPARSE))
		reduce(bd, dc, &bank, fit);
	hold_dc(bd, fit);
	return 0;
}

int wall_banks_of(const struct room *room, struct wall_banks **out)
{
	struct wall_banks *w = calloc(1, sizeof(*w));

	if (!(*out = w))
		return -1;
	for (int i = 0; i < room->nmaterials; i++) {
		const struct room_material *m = &room->materials[i];
		struct wall_bands b = { .n = m->nbands, .third = m->third };

		if (m->nbranches) {	/* given directly: no fit */
			struct wall_model *md = &w->fit[i].model;

			md->n = m->nbranches;
			for (int q = 0; q < m->nbranches; q++) {
				md->r[q] = m->br_r[q];
				md->m[q] = m->br_m[q];
				md->k[q] = m->br_k[q];
			}
			w->bank[i] = md;
			w->any = 1;
			continue;
		}
		if (!m->nbands)
			continue;
		for (int k = 0; k < m->nbands; k++) {
			b.f[k] = m->band_f[k];
			b.alpha[k] = m->band_alpha[k];
		}
		if (wall_fit(&b, room->fmax, &w->fit[i]))
			return i + 1;
		w->bank[i] = &w->fit[i].model;
		w->any = 1;
	}
	return 0;
}
