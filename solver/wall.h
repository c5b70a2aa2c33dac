/*
 * wall.h - frequency-dependent walls: a material's absorption per band as a passive
 * normal-incidence admittance, and its random-incidence absorption (docs/physics.md,
 * "Frequency-dependent walls").
 *
 * A wall's normalised specific admittance (rho c times the normal velocity over the pressure)
 * is a parallel bank of branches, each a resistance r, a mass m and a stiffness k in series:
 *     beta(w) = sum over b of 1 / (r_b + i w m_b + k_b / (i w)),
 * r_b > 0, m_b >= 0, k_b >= 0, so Re beta >= 0 at every frequency: the wall is passive by
 * construction. A branch with m = k = 0 is a frequency-independent wall of admittance 1 / r.
 * The random-incidence absorption of a locally reacting wall is Paris' average over a diffuse
 * field, which has a closed form for a complex impedance (wall_alpha_of_beta).
 */
#ifndef SOLVER_WALL_H
#define SOLVER_WALL_H

#include <complex.h>

#include "../model/room.h"

#define WALL_MAX_BANDS 32	/* third octaves from 20 Hz to 20 kHz are 31 */
#define WALL_MAX_BRANCHES (3 * WALL_MAX_BANDS + 2)	/* three per band, two at the ends */

/* A material's absorption per band, as given: centre frequencies ascending. */
struct wall_bands {
	int n;
	double f[WALL_MAX_BANDS];	/* Hz, nominal centres */
	double alpha[WALL_MAX_BANDS];	/* random-incidence absorption, 0 to 1 */
	int third;			/* 1: third-octave bands; 0: octave bands */
};

struct wall_model {
	int n;				/* branches */
	double r[WALL_MAX_BRANCHES];	/* resistance, > 0 (normalised by rho c) */
	double m[WALL_MAX_BRANCHES];	/* mass, s (>= 0) */
	double k[WALL_MAX_BRANCHES];	/* stiffness, 1/s (>= 0) */
};

/* The fit of a material: the model and, per given band, the fitted band absorption. */
struct wall_fit {
	struct wall_model model;
	int used;			/* bands 0 .. used - 1 are fitted: those up to fmax */
	double fitted[WALL_MAX_BANDS];	/* band-averaged absorption of the model, every band */
	double target[WALL_MAX_BANDS];	/* what was aimed at: alpha, capped at the Paris maximum */
	int misses;			/* fitted bands outside the tolerance (wall_band_missed) */
};

/* The model's admittance at frequency f (Hz). */
double complex wall_admittance(const struct wall_model *w, double f);

/*
 * The model's conductance at 0 Hz: its branches without stiffness. It damps the room's
 * uniform mode, which float32 rounding feeds (docs/physics.md, "The uniform mode in
 * float32"); every fit keeps some (wall_fit).
 */
double wall_dc_conductance(const struct wall_model *w);

/* Paris' random-incidence absorption of a locally reacting wall of admittance beta. */
double wall_alpha_of_beta(double complex beta);

/* The model's random-incidence absorption at f, and averaged over the band around fc
 * (an octave, or a third when third is set; log-spaced points). */
double wall_alpha(const struct wall_model *w, double f);
double wall_alpha_band(const struct wall_model *w, double fc, int third);

/* Whether a fitted band absorption misses its target: by more than 0.02 absolute and 5 %
 * relative (the larger of the two allowed). */
int wall_band_missed(double fitted, double target);

/*
 * Fit the bands up to fmax (at least the lowest). A bank: one, two or three resonant
 * branches per band around its centre, a mass branch that holds the lowest band's value
 * below it and a stiffness branch that holds the highest's above it. Their conductances
 * (1 / r) are the non-negative least-squares fit of a real admittance equal, across each band,
 * to the one whose Paris absorption is the band's, corrected until the band averages of the
 * absorption meet the targets; branches of conductance 0 are dropped. Each branch costs the
 * engines state and traffic, so the sparsest bank wins that meets every band and stays near
 * the bands between their centres (0.03, or 10 %); else the richest that misses fewest. Its
 * branches are then pruned while the rest still meet every band. Third-octave data that still
 * take more than 12 branches, or miss a band, try a free bank, and the branches themselves are
 * refined (Levenberg-Marquardt) and pruned further (docs/physics.md). A fit ends with a
 * conductance at 0 Hz of at least a tenth of its conductance at the lowest band's centre.
 * Passive by construction. Returns 0, or -1 when the bands are not usable (none, unsorted,
 * alpha outside 0..1) or memory runs out.
 */
int wall_fit(const struct wall_bands *b, double fmax, struct wall_fit *fit);

/* The banks of a room's materials given by band, each fitted up to the room's fmax, or given
 * as branches: bank[m] is material m's model, NULL for a scalar material; any is 0 when no
 * material has either. */
struct wall_banks {
	int any;
	const struct wall_model *bank[ROOM_MAX_MATERIALS];
	struct wall_fit fit[ROOM_MAX_MATERIALS];
};

/* Fit them into *out (allocated: free() it, also on failure). 0; or 1 + the index of the
 * first material whose bands cannot be fitted; or -1 when memory runs out. */
int wall_banks_of(const struct room *room, struct wall_banks **out);

#endif
