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
	int kind[WALL_MAX_BRANCHES];	/* 0 resonant, 1 mass only (low end), 2 stiffness only */
	double q;
};

static void bank_of(const struct wall_bands *bd, int used, double spread, double qper,
		    struct bank *k)
{
	const double step = (bd->third ? 1.0 / 3 : 1.0) / spread;	/* octaves apart */
	const int every = spread < 1 ? (int)lround(1 / spread) : 1;
	const int per = spread < 1 ? 1 : (int)lround(spread);

	k->q = (bd->third ? 3 : 1) * qper * spread;
	k->n = 0;
	k->fj[k->n] = bd->f[0];
	k->kind[k->n++] = 1;
	for (int b = (used - 1) % every / 2; b < used; b += every)
		for (int s = 0; s < per; s++) {
			k->fj[k->n] = bd->f[b] * exp2((s - 0.5 * (per - 1)) * step);
			k->kind[k->n++] = 0;
		}
	k->fj[k->n] = bd->f[used - 1];
	k->kind[k->n++] = 2;
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
		w->m[w->n] = k->kind[j] == 2 ? 0 : k->kind[j] == 1 ? r / om : k->q * r / om;
		w->k[w->n] = k->kind[j] == 1 ? 0 : k->kind[j] == 2 ? r * om : k->q * r * om;
		w->n++;
	}
}

static double complex shape(const struct bank *k, int j, double f)
{
	const double x = f / k->fj[j];

	return k->kind[j] == 1 ? 1 / (1 + I * x) : k->kind[j] == 2 ? 1 / (1 - I / x)
									: 1 / (1 + I * k->q * (x - 1 / x));
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

/* The fit of bands 0 .. used - 1 over the bank of ladder step l. */
static int fit_bank(const struct wall_bands *bd, int used, int l, struct wall_fit *fit)
{
	const double amax = room_absorption_max();
	const double bpeak = room_beta_of_absorption(amax);
	double g[WALL_MAX_BRANCHES], want[WALL_MAX_BANDS];
	struct bank bank;

	fit->used = used;
	bank_of(bd, used, ladder[l].spread, ladder[l].qper, &bank);
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

		if (solve_bank(bd, used, &bank, want, g))
			return -1;
		model_of(&bank, g, &fit->model);
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
	fit->misses = 0;
	for (int b = 0; b < bd->n; b++) {
		fit->fitted[b] = wall_alpha_band(&fit->model, bd->f[b], bd->third);
		if (b < used && wall_band_missed(fit->fitted[b], bd->alpha[b]))
			fit->misses++;
	}
	return 0;
}

/*
 * Whether the model's absorption stays near the bands' between their centres: within
 * RIPPLE absolute (or RIPPLE_REL relative) of the targets interpolated linearly in log f,
 * from two octaves below the lowest band (its value) to half a band above the highest. A sparse
 * bank can meet every band average and still swing between them.
 */
#define RIPPLE 0.03
#define RIPPLE_REL 0.1

static int smooth(const struct wall_bands *bd, const struct wall_fit *fit)
{
	const double half = bd->third ? 1.0 / 6 : 0.5;
	const int n = fit->used;

	for (double x = log2(bd->f[0]) - 2; x <= log2(bd->f[n - 1]) + half; x += half / 4) {
		double t = fit->target[0];

		for (int b = 0; b + 1 < n; b++) {
			const double x0 = log2(bd->f[b]), x1 = log2(bd->f[b + 1]);

			if (x >= x0 && x <= x1)
				t = fit->target[b] + (fit->target[b + 1] - fit->target[b]) *
							 (x - x0) / (x1 - x0);
			else if (x > x1)
				t = fit->target[b + 1];
		}
		if (fabs(wall_alpha(&fit->model, exp2(x)) - t) > fmax(RIPPLE, RIPPLE_REL * t))
			return 0;
	}
	return 1;
}

int wall_fit(const struct wall_bands *bd, double fmax, struct wall_fit *fit)
{
	struct wall_fit next;
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
	if (fit_bank(bd, used, (int)l, fit))
		return -1;
	for (l++; (fit->misses || !smooth(bd, fit)) && l < sizeof(ladder) / sizeof(ladder[0]);
	     l++) {
		if (ladder[l].third_only && !bd->third)
			continue;
		if (fit_bank(bd, used, (int)l, &next))
			return -1;
		/* octave data: the richer of two that miss alike; third-octave data, whose
		 * banks grow fast, the sparser unless the richer is smooth and it is not */
		if (bd->third ? next.misses < fit->misses ||
				(next.misses == fit->misses && !smooth(bd, fit) && smooth(bd, &next))
			      : next.misses <= fit->misses)
			*fit = next;
	}
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
