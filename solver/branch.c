/*
 * branch.c - the branch walls of a run: their node and entry lists, the branch constants
 * from each material's bank, the CPU update and the branches' energy (branch.h).
 */
#include "branch.h"

#include "wall.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The bank's branches as the update's constants (branch.h), for time step T. */
static void constants(const struct wall_model *w, double T, int j, double *bb, double *cc,
		      double *kk, double *mh, double *rr)
{
	const double m = w->m[j] / T, k = w->k[j] * T, r = w->r[j];

	*bb = 1 / (m + 0.5 * r + 0.25 * k);
	*cc = m - 0.5 * r - 0.25 * k;
	*kk = k;
	*mh = m;
	*rr = r;
}

/* The room materials of banks that have a bank: their index among those, or -1. */
static int index_banks(const struct wall_model *const *banks, int nbanks, int *material_of,
		       int *nbranch)
{
	int n = 0;

	*nbranch = 0;
	for (int m = 0; m < VOX_NO_WALL; m++) {
		material_of[m] = -1;
		if (m < nbanks && banks[m] && banks[m]->n > 0) {
			material_of[m] = n++;
			*nbranch += banks[m]->n;
		}
	}
	return n;
}

/*
 * Count the nodes and entries of g's walls with a branch material, each material's entries
 * into b->stride (when fill is 0) and the state values; with fill, fill the lists: the areas
 * per entry into gam (unscaled), and each entry's first state value (branch.h's layout).
 */
static void walk(const struct vox_grid *g, const struct wall_model *const *banks,
		 const int *material_of, struct branch_walls *b, int fill)
{
	size_t next[VOX_NO_WALL] = { 0 }, at = 0;	/* per material: its next entry's first */

	for (int x = 0, m = 0; fill && m < VOX_NO_WALL; m++)
		if (material_of[m] >= 0) {
			next[x] = at;
			at += 2 * (size_t)banks[m]->n * b->stride[x++];
		}
	b->nodes = b->entries = b->states = 0;
	for (size_t w = 0; g->walls && w < g->nwalls; w++) {
		const struct vox_wall *wl = &g->walls[w];
		int seen[6], ns = 0;

		for (int f = 0; f < 6; f++) {
			const int m = wl->material[f];
			int e;

			if (m == VOX_NO_WALL || material_of[m] < 0)
				continue;
			for (e = 0; e < ns && seen[e] != m; e++)
				;
			if (e < ns) {	/* a second face of the same material: one entry */
				if (fill)
					b->gam[b->entries - ns + e] += wl->area[f];
				continue;
			}
			seen[ns++] = m;
			if (fill) {
				b->gam[b->entries] = wl->area[f];
				b->mat[b->entries] = (uint32_t)material_of[m];
				b->so[b->entries] = next[material_of[m]]++;
			} else {
				b->stride[material_of[m]]++;
			}
			b->entries++;
			b->states += 2 * (size_t)banks[m]->n;
		}
		if (!ns)
			continue;
		if (fill) {
			const struct vox_plan *p = &g->plan;
			const size_t c = wl->cell, nx = (size_t)p->n[0], ny = (size_t)p->n[1];

			b->at[b->nodes] = c;
			b->ew[b->nodes] = 1;
			for (int f = 0; f < 6 && p->on_nodes; f++)
				if (wl->material[f] != VOX_NO_WALL)
					b->ew[b->nodes] *= 0.5;
			b->cell[b->nodes] = p->fcc ? vox_folded(p, (int)(c % nx), (int)(c / nx % ny),
							       (int)(c / nx / ny))
						   : c;
			b->first[b->nodes] = (uint32_t)(b->entries - ns);
		}
		b->nodes++;
	}
	if (fill)
		b->first[b->nodes] = (uint32_t)b->entries;
}

/*
 * Put the nodes in the order of branch.h: those with one entry, material by material, then
 * those with several, each group in the order walk() found them (cell order); the entries
 * follow their nodes, and each material's state is renumbered in the new entry order.
 */
static int order_nodes(struct branch_walls *b)
{
	const size_t nn = b->nodes, ne = b->entries;
	size_t *perm = malloc(nn * sizeof(*perm)), *cell = malloc(nn * sizeof(*cell));
	size_t *at = malloc(nn * sizeof(*at)), *so = malloc(ne * sizeof(*so));
	double *ew = malloc(nn * sizeof(*ew)), *gam = malloc(ne * sizeof(*gam));
	uint32_t *first = malloc((nn + 1) * sizeof(*first)), *mat = malloc(ne * sizeof(*mat));
	size_t base[VOX_NO_WALL], e = 0;
	int ok = perm && cell && at && so && ew && gam && first && mat;

	for (size_t n = 0; ok && n < nn; n++) {	/* group counts, then their starts */
		const int single = b->first[n + 1] - b->first[n] == 1;

		b->seg[(single ? (int)b->mat[b->first[n]] : b->nmat) + 1]++;
	}
	for (int x = 0; ok && x <= b->nmat; x++)
		b->seg[x + 1] += b->seg[x];
	for (size_t n = 0; ok && n < nn; n++) {
		const int single = b->first[n + 1] - b->first[n] == 1;

		perm[b->seg[single ? (int)b->mat[b->first[n]] : b->nmat]++] = n;
	}
	for (int x = b->nmat; ok && x > 0; x--)	/* the counters back to the starts */
		b->seg[x] = b->seg[x - 1];
	if (ok)
		b->seg[0] = 0;
	for (int x = 0; ok && x < b->nmat; x++)	/* base[x]: the material's next value */
		base[x] = x ? base[x - 1] + 2 * (size_t)b->nb[x - 1] * b->stride[x - 1] : 0;
	for (size_t i = 0; ok && i < nn; i++) {
		const size_t n = perm[i];

		cell[i] = b->cell[n];
		at[i] = b->at[n];
		ew[i] = b->ew[n];
		first[i] = (uint32_t)e;
		for (uint32_t en = b->first[n]; en < b->first[n + 1]; en++, e++) {
			gam[e] = b->gam[en];
			mat[e] = b->mat[en];
			so[e] = base[mat[e]]++;
		}
	}
	if (ok) {
		first[nn] = (uint32_t)e;
		free(b->cell), b->cell = cell, cell = NULL;
		free(b->at), b->at = at, at = NULL;
		free(b->ew), b->ew = ew, ew = NULL;
		free(b->first), b->first = first, first = NULL;
		free(b->gam), b->gam = gam, gam = NULL;
		free(b->mat), b->mat = mat, mat = NULL;
		free(b->so), b->so = so, so = NULL;
	}
	free(perm);
	free(cell);
	free(at);
	free(so);
	free(ew);
	free(gam);
	free(first);
	free(mat);
	return ok ? 0 : -1;
}

static size_t bytes_of(const struct branch_walls *b, int precision)
{
	return b->nodes * (2 * sizeof(size_t) + sizeof(uint32_t) + 3 * sizeof(double)) +
	       sizeof(uint32_t) +
	       b->entries * (sizeof(double) + sizeof(uint32_t) + sizeof(size_t) +
			     (size_t)precision) +
	       b->states * (size_t)precision +
	       (size_t)b->nmat * (2 * sizeof(int) + sizeof(double) + sizeof(size_t)) +
	       (size_t)b->nbranch * 5 * sizeof(double);
}

size_t branch_memory(size_t cells, int branches, int precision)
{
	struct branch_walls b = { .nodes = cells, .entries = cells,
				  .states = 2 * (size_t)branches * cells };

	return branches > 0 ? bytes_of(&b, precision) : 0;
}

struct branch_walls *branch_create(const struct vox_grid *g,
				   const struct wall_model *const *banks, int nbanks,
				   double lambda, double T, int precision, struct rs_error *err)
{
	struct branch_walls *b = calloc(1, sizeof(*b));
	int j = 0;

	if (!b)
		goto nomem;
	b->precision = precision;
	b->nmat = index_banks(banks, nbanks, b->material_of, &b->nbranch);
	if (b->nmat && !(b->stride = calloc((size_t)b->nmat, sizeof(*b->stride))))
		goto nomem;
	if (b->nmat)
		walk(g, banks, b->material_of, b, 0);
	if (!b->nodes) {
		branch_free(b);
		return NULL;
	}
	if (b->entries > UINT32_MAX)
		return branch_free(b), rs_fail(err, RS_EINPUT, "more than %u boundary entries "
					       "with branch walls", UINT32_MAX), NULL;
	b->cell = malloc(b->nodes * sizeof(*b->cell));
	b->at = malloc(b->nodes * sizeof(*b->at));
	b->ew = malloc(b->nodes * sizeof(*b->ew));
	b->first = malloc((b->nodes + 1) * sizeof(*b->first));
	b->A = malloc(b->nodes * sizeof(*b->A));
	b->inv = malloc(b->nodes * sizeof(*b->inv));
	b->gam = malloc(b->entries * sizeof(*b->gam));
	b->mat = malloc(b->entries * sizeof(*b->mat));
	b->so = malloc(b->entries * sizeof(*b->so));
	b->nb = malloc((size_t)b->nmat * sizeof(*b->nb));
	b->boff = malloc((size_t)b->nmat * sizeof(*b->boff));
	b->bh = malloc((size_t)b->nmat * sizeof(*b->bh));
	b->bb = malloc((size_t)b->nbranch * sizeof(double));
	b->cc = malloc((size_t)b->nbranch * sizeof(double));
	b->kk = malloc((size_t)b->nbranch * sizeof(double));
	b->mh = malloc((size_t)b->nbranch * sizeof(double));
	b->rr = malloc((size_t)b->nbranch * sizeof(double));
	b->state = calloc(b->states, (size_t)precision);
	b->W = calloc(b->entries, (size_t)precision);
	if (!b->cell || !b->at || !b->ew || !b->first || !b->A || !b->inv || !b->gam || !b->mat || !b->so || !b->nb ||
	    !b->boff || !b->bh || !b->bb || !b->cc || !b->kk || !b->mh || !b->rr || !b->state ||
	    !b->W)
		goto nomem;
	for (int m = 0; m < VOX_NO_WALL; m++) {
		const int x = b->material_of[m];
		double sum = 0;

		if (x < 0)
			continue;
		b->nb[x] = banks[m]->n;
		b->boff[x] = j;
		for (int q = 0; q < banks[m]->n; q++, j++) {
			constants(banks[m], T, q, &b->bb[j], &b->cc[j], &b->kk[j], &b->mh[j],
				  &b->rr[j]);
			sum += b->bb[j];
		}
		b->bh[x] = 0.5 * sum;
	}
	walk(g, banks, b->material_of, b, 1);
	if (!(b->seg = calloc((size_t)b->nmat + 2, sizeof(*b->seg))) || order_nodes(b))
		goto nomem;
	for (size_t n = 0; n < b->nodes; n++) {
		/* the kind's scalar walls, as fdtd_coefficients() has them: g = (lambda / 2) beta
		 * on the cubic grid, lambda beta on the fcc grid */
		const double gl = (g->plan.fcc ? 1 : 0.5) * lambda;
		double d;

		b->A[n] = 1 + gl * g->kinds[g->cls[b->at[n]]].beta_sum;
		d = b->A[n];
		for (uint32_t e = b->first[n]; e < b->first[n + 1]; e++) {
			b->gam[e] *= gl;
			d += b->gam[e] * b->bh[b->mat[e]];
		}
		b->inv[n] = 1 / d;
	}
	return b;

nomem:
	branch_free(b);
	rs_fail(err, RS_ENOMEM, "out of memory for the branch walls");
	return NULL;
}

void branch_free(struct branch_walls *b)
{
	if (!b)
		return;
	free(b->cell);
	free(b->at);
	free(b->ew);
	free(b->first);
	free(b->A);
	free(b->inv);
	free(b->gam);
	free(b->mat);
	free(b->so);
	free(b->stride);
	free(b->seg);
	free(b->nb);
	free(b->boff);
	free(b->bh);
	free(b->bb);
	free(b->cc);
	free(b->kk);
	free(b->mh);
	free(b->rr);
	free(b->state);
	free(b->W);
	free(b);
}

void branch_reset(struct branch_walls *b)
{
	if (!b)
		return;
	memset(b->state, 0, b->states * (size_t)b->precision);
	memset(b->W, 0, b->entries * (size_t)b->precision);
}

double branch_value(const struct branch_walls *b, const void *arr, size_t i)
{
	return b->precision == 4 ? ((const float *)arr)[i] : ((const double *)arr)[i];
}

#define REAL float
#define SFX _f32
#include "branch_step.inc"
#undef REAL
#undef SFX
#define REAL double
#define SFX _f64
#include "branch_step.inc"
#undef REAL
#undef SFX

void branch_step(struct branch_walls *b, const void *u, void *next, int threads)
{
	if (!b)
		return;
	if (b->precision == 4)
		step_f32(b, u, next, threads);
	else
		step_f64(b, u, next, threads);
}

double branch_energy(const struct branch_walls *b, const double *cur, const double *prev)
{
	double e = 0;

	for (size_t n = 0; b && n < b->nodes; n++) {
		const size_t c = b->at[n];

		for (uint32_t en = b->first[n]; en < b->first[n + 1]; en++) {
			const int x = (int)b->mat[en], o = b->boff[x], nb = b->nb[x];
			const size_t st = b->stride[x];
			double s = 0;

			for (int q = 0; q < nb; q++) {
				const double w = branch_value(b, b->state, b->so[en] + (size_t)q * st);
				const double y = branch_value(b, b->state,
							      b->so[en] + (size_t)(nb + q) * st);
				const double m = b->mh[o + q], k = b->kk[o + q], r = b->rr[o + q];
				/* h - v = y - (u^(n+1) - u^n) / 2, v = u^(n+1) - y */
				const double dw = (y - 0.5 * (cur[c] - prev[c]) - (r - 0.5 * k) * w) /
						  (m - 0.5 * r + 0.25 * k);
				const double sig = w - 0.5 * dw;

				s += 0.5 * m * dw * dw + 0.5 * k * sig * sig;
			}
			e += 4 * b->ew[n] * b->gam[en] * s;
		}
	}
	return e;
}
