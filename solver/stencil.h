/*
 * stencil.h - discrete Laplacians on the cubic lattice and the analysis of the two-step
 * schemes built from them (seed 000 section 2; docs/stencils.md).
 *
 * A stencil is a set of K offsets l_k with weights w_k such that
 *     sum_k w_k u(x + l_k h) / h^2  ~  Laplacian u(x),
 * and the scheme is u+ = 2u - u- + lambda^2 sum_k w_k u_{i + l_k} (seed 000 eq. 2 and 5).
 * stn_* functions fill a caller-owned struct stn_stencil; nothing is allocated. Every
 * constructor rounds the weights so that they sum to exactly 0 and a uniform float32 field's
 * weighted sum is exactly 0 in double (stencil.c, quantise).
 */
#ifndef STN_STENCIL_H
#define STN_STENCIL_H

#include <stddef.h>

#include "../model/room.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STN_MAX_POINTS 729	/* a 9 x 9 x 9 box: every stencil of reach 4 fits */
#define STN_MAX_SHELLS 64
#define STN_MAX_LEGGY 8		/* orders 2 to 16 */
#define STN_MAX_RADIUS2 22	/* compact-in-space up to R = 22 (461 points) */

struct stn_stencil {
	int K;				/* points, the centre included */
	int reach;			/* largest |offset| along an axis: the halo it needs */
	int off[STN_MAX_POINTS][3];	/* offsets l_k; off[0] is the centre */
	double w[STN_MAX_POINTS];	/* Laplacian weights (per h^2) */
	double courant;			/* a named scheme's published Courant number; 0: none */
	int fcc;			/* 1: run on the FCC sub-lattice, stored folded (stn_fcc) */
	char name[64];			/* e.g. "leggy order 4 (13 points)" */
};

/* One shell P(q): the unique permutations of (+-q1, +-q2, +-q3) (seed 000 section 2.2). */
struct stn_shell {
	int q[3];			/* q1 >= q2 >= q3 >= 0, q1 >= 1 */
	int count;			/* |P(q)|: 6, 8, 12, 24 or 48 */
};

/* The leggy (6M + 1)-point stencil with the 2M-th order 1-D weights (Fornberg), M = 1..8. */
int stn_leggy(struct stn_stencil *s, int M);

/* The shells q with |q|^2 <= R (compact-in-space) or q <= (q1, q2, q3) (box-compact). */
int stn_compact_shells(int R, struct stn_shell *shells, int max);
int stn_box_shells(const int q[3], struct stn_shell *shells, int max);

/*
 * The stencil of the given shells with shell weights a[p] (their sum must be 1): each shell
 * alone is a second-order Laplacian, (6 / (|P| |q|^2)) sum over P of (u(x + p h) - u(x)),
 * so any weights summing to one keep second order. a = NULL: equal weights (the default of a
 * room file is stn_default_weights()). Shells of weight 0 contribute no points.
 */
int stn_from_shells(struct stn_stencil *s, const struct stn_shell *shells, int n,
		    const double *a, const char *family);

/*
 * The default shell weights of a compact or box stencil (docs/stencils.md): a least-squares
 * fit of the symbol to the dispersion-free one, kept when it is stable and a run at its limit
 * does less work (ppw^4 / lambda for 1 % worst-case error) than with equal weights. Fills
 * a[0..n); returns 1 when the fit was kept, 0 when a holds equal weights.
 */
int stn_default_weights(const struct stn_shell *shells, int n, double *a);

/*
 * The 27-point compact explicit schemes of Kowalczyk and van Walstijn (2011), by name
 * (stn_variant_names, NULL-terminated; SLF is another name of SRL). Each is the compact R = 3
 * stencil with shell weights (1 - 4a + 4b, 4a - 8b, 4b) from its published (a, b), and carries
 * its published Courant number. Shells of weight 0 are left out (CCP has 13 points).
 */
extern const char *const stn_variant_names[];
int stn_interpolated(struct stn_stencil *s, int variant);

/*
 * The 13-point scheme of the face-centred cubic lattice (docs/stencils.md, "FCC"): the nodes
 * with i + j + k even, each coupled to its twelve nearest neighbours (the side diagonals) with
 * weight 1/4 per h^2, Courant limit 1. It is CCP's stencil, whose side-diagonal steps never
 * leave a sub-lattice, so the engines run one sub-lattice only, stored folded at half the
 * memory (solver/fdtd.h), with walls through nodes (docs/physics.md, "FCC walls").
 */
int stn_fcc(struct stn_stencil *s);

/* The stencil a room file configures (scheme.stencil and its parameters); -1 when its shell
 * weights do not match its shells. */
int stn_from_config(const struct room *room, struct stn_stencil *s);

/* 1 for the 7-point stencil, which the optimised engines run. */
int stn_is_seven_point(const struct stn_stencil *s);

/* 1 when every point lies on an axis through the centre (the leggy family): in a room that
 * is not a box its legs are mirrored line by line (solver/lines.h). */
int stn_is_axial(const struct stn_stencil *s);

/* The symbol W(xi) = sum_k w_k cos(xi . l_k): the stencil's Fourier multiplier (x h^2). */
double stn_symbol(const struct stn_stencil *s, const double xi[3]);

/*
 * The Courant limit of the scheme, 2 / sqrt(max over the Brillouin zone of -W(xi)) (von
 * Neumann: |z| = 1 needs -4 <= lambda^2 W <= 0), 1/sqrt(3) exactly for the 7-point stencil.
 * Returns 0 when W > 0 somewhere, i.e. the scheme is unstable for every lambda.
 */
double stn_courant_limit(const struct stn_stencil *s);

/* Its square, 4 / max(-W), computed as such (1/3 for the 7-point stencil): the largest
 * lambda^2 an engine may use (fdtd_coefficients), which squaring the limit may pass by an ulp. */
double stn_lambda2_limit(const struct stn_stencil *s);

/* The directions of the dispersion analysis. */
enum stn_dir { STN_AXIAL, STN_SIDE_DIAGONAL, STN_DIAGONAL, STN_NDIRS };

/*
 * Relative phase-velocity error v / c - 1 along direction d for a wave of `ppw` points per
 * wavelength at Courant number lambda (cos(omega k) = 1 + lambda^2 W / 2). NAN past the
 * scheme's cut-off (no real frequency).
 */
double stn_phase_error(const struct stn_stencil *s, double lambda, enum stn_dir d, double ppw);

/* The worst |error| over the three directions and a sampled sphere of directions. */
double stn_worst_error(const struct stn_stencil *s, double lambda, double ppw);

/*
 * The mean |error| over all directions (a sampled sphere): what a diffuse field's many
 * directions of travel see on average. At the same worst case it differs between schemes:
 * the 7-point scheme's is 0.4 of its worst (none along the diagonals at its limit), an
 * isotropic scheme's close to its worst (docs/stencils.md, "Worst case and mean").
 */
double stn_mean_error(const struct stn_stencil *s, double lambda, double ppw);

/* The points per wavelength needed for a worst-case error of at most tol (bisection). */
double stn_ppw_for(const struct stn_stencil *s, double lambda, double tol);

/*
 * The points per wavelength at fmax from which scheme s, at Courant number lambda, has at
 * every frequency from fmax down to fmax / 64 a mean error at most the reference scheme r's
 * (at r_lambda, with r_ppw points per wavelength at fmax): the spacing at which s is as
 * accurate as r across the band. NAN where none up to 10^5 points per wavelength is.
 */
double stn_ppw_matching(const struct stn_stencil *s, double lambda, const struct stn_stencil *r,
			double r_lambda, double r_ppw);

#ifdef __cplusplus
}
#endif

#endif
