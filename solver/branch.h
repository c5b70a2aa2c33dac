/*
 * branch.h - the frequency-dependent walls of a run (docs/physics.md, "Branch walls"): which
 * boundary nodes carry them, the state of their branches, and the update that turns such a
 * node's scheme update with rigid walls into one with the walls' admittance.
 *
 * A material given by band is a bank of branches (solver/wall.h): beta(w) = sum over b of
 * 1 / (r_b + i w m_b + k_b / (i w)). Each branch's normalised velocity w_b follows the
 * bilinear (trapezoidal) discretisation of r w + m w' + k integral(w) = p between steps n and
 * n + 1, and the node's scheme update takes the wall term gamma (W^(n+1) - W^(n-1)), W the
 * branches' velocity sum and gamma the term's weight (lambda / 2 times the wall's area per
 * h^2 on the cubic grid; on the fcc grid in a box, whose walls pass through the nodes, lambda
 * times the number of walls the node lies on; in a carved room lambda times its links'
 * weights, voxel.h). With one real branch (m = k = 0) this is exactly the scheme's own
 * update of a wall of admittance 1 / r. The scheme's energy plus the branches' stays within
 * rounding of non-increasing: physics.md derives it and tests/test_branch.c measures it.
 *
 * The update runs after the scheme's step has written every node's u^(n+1) with rigid branch
 * walls (p_k) and before the sources are added, in the CPU engine (branch_step) and the CUDA
 * engine (solver/cuda/branch.cu), in the same order of operations, so that both round alike.
 * Each branch keeps w and y = u - v, v = k^ g (g the integral of w over steps), and the node:
 *   acc  = sum over its entries e of gam_e (S_e - W_e),
 *          S_e = sum over the entry's branches of bb (y + cc w)
 *   d    = (A (p_k - u) - acc) * inv,   u^(n+1) = u + d
 *   then per branch: w+ = bb ((y + d / 2) + cc w),  y += d - kk ((w+ + w) / 2)
 *   W_e  = the sum of the entry's w before the update (its W^n for the next step),
 * u the node's u^n, A = 1 + g_s (g_s the kind's scalar-wall term), inv = 1 / (A + sum of
 * gam_e bh_e), bh half the sum of a material's bb. Like the scheme's own increment form, every
 * rounded constant multiplies a difference: a uniform field with its branches at rest stays
 * exactly as it is (physics.md, "A uniform field stays uniform").
 */
#ifndef SOLVER_BRANCH_H
#define SOLVER_BRANCH_H

#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"
#include "../geometry/voxel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wall_model;	/* wall.h (C only: it uses complex) */

/* The walls of a run, built by branch_create from the grid and the materials' banks. */
struct branch_walls {
	size_t nodes;		/* boundary nodes with at least one branch wall: those with one
				 * entry first, material by material, then the others (seg) */
	size_t entries;		/* (node, material) pairs: a node has one per branch material */
	size_t states;		/* state values: two per branch of every entry */
	size_t *cell;		/* per node: its index in the field (folded on the fcc grid) */
	size_t *at;		/* per node: its cell in the grid (vox_index) */
	double *ew;		/* per node: its weight in the energy (the fcc grid in a box: its
				 * share of its dual cell, 1/2 per wall it lies on; else 1) */
	uint32_t *first;	/* per node: its first entry; nodes + 1 of them */
	double *A, *inv;	/* per node: 1 + g_s and 1 / (A + sum of gam bh) */
	double *gam;		/* per entry: the weight of its wall term */
	uint32_t *mat;		/* per entry: its material (index into the tables below) */
	size_t *so;		/* per entry: its first state value: w of branch q at
				 * so + q stride, y at so + (nb + q) stride (its material's) */
	/* per material that has branches: */
	int nmat;
	size_t *seg;		/* nmat + 2: the nodes with one entry of material x are seg[x]
				 * to seg[x + 1] - 1, their entries the same numbers and their
				 * state consecutive (so = that material's first + (n - seg[x]));
				 * the nodes with several entries follow, seg[nmat] on */
	int *nb;		/* branches */
	size_t *stride;		/* entries: a material's state is w of its first branch for
				 * every entry, then of the second, ..., then the y alike */
	int *boff;		/* first branch in bb, cc, kk, mh */
	double *bh;		/* half the sum of its bb */
	/* per branch, over every material: */
	int nbranch;
	double *bb, *cc, *kk;	/* 1 / D, m^ - r / 2 - k^ / 4, k^ (D = m^ + r / 2 + k^ / 4) */
	double *mh, *rr;	/* m^ = m / T and r, for the energy */
	int material_of[VOX_NO_WALL];	/* room material -> index above, -1: scalar wall */
	int precision;
	void *state;		/* w and y of every branch of every entry (precision) */
	void *W;		/* per entry: its branches' velocity sum one level back */
};

/*
 * Build the branch walls of grid g (g->walls lists every boundary cell or fcc node) for the
 * materials whose bank is banks[m] (NULL: a scalar wall, already in the kinds): lambda is
 * the Courant number, T the time step (s), precision 4 or 8. NULL and nothing made when no
 * boundary cell has a branch wall; NULL and err on failure (err->code != 0).
 */
struct branch_walls *branch_create(const struct vox_grid *g,
				   const struct wall_model *const *banks, int nbanks,
				   double lambda, double T, int precision, struct rs_error *err);
void branch_free(struct branch_walls *b);

/* Bytes the branch walls of `cells` boundary cells take at most when every cell has one
 * wall of a bank of `branches` branches (roomsim info's memory figure; cells with walls of
 * two band materials take a second entry). */
size_t branch_memory(size_t cells, int branches, int precision);

/* Zero the branch states. */
void branch_reset(struct branch_walls *b);

/* The update above over every node, u = u^n and next = the scheme's p_k (OpenMP threads). */
void branch_step(struct branch_walls *b, const void *u, void *next, int threads);

/*
 * The branches' energy at the half step between the last two levels, in the units of
 * fdtd_energy(): 4 gam sum over branches of (m^ (w+ - w)^2 / 2 + k^ (w+ + w)^2 / 8). cur and
 * prev are u^(n+1) and u^n as doubles over the grid's cells (fdtd_field's layout): w+ - w
 * follows from the state and
 * h = (cur + prev) / 2 through the update, dividing by m^ - r / 2 + k^ / 4, which is far
 * from 0 for every fitted bank (m^ is large where k^ is small).
 */
double branch_energy(const struct branch_walls *b, const double *cur, const double *prev);

/* Value i of the state or W arrays as double (tests, the GPU's download). */
double branch_value(const struct branch_walls *b, const void *arr, size_t i);

#ifdef __cplusplus
}
#endif

#endif
