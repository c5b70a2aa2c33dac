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

/* Wall wl's entries: its branch materials (their room indices) and the areas of their faces,
 * a material's faces summed in face order; their number. */
static int wall_entries(const struct vox_wall *wl, const int *material_of, int mats[6],
			double area[6])
{
	int ns = 0;

	for (int f = 0; f < 6; f++) {
		const int m = wl->material[f];
		int e;

		if (m == VOX_NO_WALL || material_of[m] < 0)
			continue;
		for (e = 0; e < ns && mats[e] != m; e++)
			;
		if (e < ns) {	/* a second face of the same material: one entry */
			area[e] += wl->area[f];
			continue;
		}
		mats[ns] = m;
		area[ns++] = wl->area[f];
	}
	return ns;
}

/* What a run of walls holds: per material index x its nodes of one entry (node[x]) and its
 * entries on nodes of several (in_multi[x]); the nodes of several (node[nmat]), their
 * entries (multi), and the state values of all. */
struct walk_count {
	size_t node[VOX_NO_WALL + 1], in_multi[VOX_NO_WALL], multi, states;
};

static void count_walls(const struct vox_grid *g, const struct wall_model *const *banks,
			const int *material_of, int nmat, size_t w0, size_t w1,
			struct walk_count *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t w = w0; w < w1; w++) {
		int mats[6];
		double area[6];
		const int ns = wall_entries(&g->walls[w], material_of, mats, area);

		if (!ns)
			continue;
		c->node[ns == 1 ? material_of[mats[0]] : nmat]++;
		for (int e = 0; e < ns; e++) {
			if (ns > 1)
				c->in_multi[material_of[mats[e]]]++;
			c->states += 2 * (size_t)banks[mats[e]]->n;
		}
		if (ns > 1)
			c->multi += (size_t)ns;
	}
}

/* The runs of walls that count and walk share out over the threads. */
#define WALK_RUNS 64

/*
 * The nodes and entries of g's walls with a branch material, in branch.h's order. Without
 * fill: count them, each material's entries into b->stride, the state values, and into
 * b->seg the groups' starts (the nodes with one entry, material by material, then those with
 * several; seg[nmat + 1] = nodes). With fill (after the count, the lists allocated): write
 * each node where its group puts it, in the walls' order within the group, its entries
 * following the nodes alike (a node with one entry has the entry of its own number), the
 * areas per entry into gam (unscaled, a material's faces of one node summed in face order),
 * and each entry's first state value: its material's first, then one a entry in that order.
 * The walls are counted in WALK_RUNS runs on the threads, and each run is written from the
 * places the counts of the runs before it give, so the lists are those of one pass in order.
 */
static int walk(const struct vox_grid *g, const struct wall_model *const *banks,
		const int *material_of, struct branch_walls *b, int fill)
{
	struct walk_count *run = malloc(WALK_RUNS * sizeof(*run)), total;
	size_t first[VOX_NO_WALL] = { 0 }, at = 0;	/* per material: its state's first */
	const size_t nw = g->walls ? g->nwalls : 0;
	const int nmat = b->nmat;

	if (!run)
		return -1;
#pragma omp parallel for schedule(dynamic, 1)
	for (int r = 0; r < WALK_RUNS; r++)
		count_walls(g, banks, material_of, nmat, nw * (size_t)r / WALK_RUNS,
			    nw * (size_t)(r + 1) / WALK_RUNS, &run[r]);
	if (!fill) {
		memset(&total, 0, sizeof(total));
		for (int r = 0; r < WALK_RUNS; r++) {
			for (int x = 0; x <= nmat; x++)
				total.node[x] += run[r].node[x];
			for (int x = 0; x < nmat; x++)
				total.in_multi[x] += run[r].in_multi[x];
			total.multi += run[r].multi;
			total.states += run[r].states;
		}
		memset(b->seg, 0, ((size_t)nmat + 2) * sizeof(*b->seg));
		b->nodes = b->entries = 0;
		for (int x = 0; x <= nmat; x++) {
			b->seg[x + 1] = b->seg[x] + total.node[x];	/* the groups' starts */
			b->nodes += total.node[x];
			b->entries += x < nmat ? total.node[x] : 0;
		}
		for (int x = 0; x < nmat; x++)
			b->stride[x] = total.node[x] + total.in_multi[x];
		b->entries += total.multi;
		b->states = total.states;
		free(run);
		return 0;
	}
	for (int x = 0, m = 0; m < VOX_NO_WALL; m++)
		if (material_of[m] >= 0) {
			first[x] = at;
			at += 2 * (size_t)banks[m]->n * b->stride[x++];
		}
	/* each run's places: the group's start, then the runs before it */
	{
		size_t node[VOX_NO_WALL + 1], in_multi[VOX_NO_WALL] = { 0 }, multi = b->seg[nmat];

		for (int x = 0; x <= nmat; x++)
			node[x] = b->seg[x];
		for (int r = 0; r < WALK_RUNS; r++) {
			struct walk_count c = run[r];

			for (int x = 0; x <= nmat; x++) {
				run[r].node[x] = node[x];
				node[x] += c.node[x];
			}
			for (int x = 0; x < nmat; x++) {
				run[r].in_multi[x] = in_multi[x];
				in_multi[x] += c.in_multi[x];
			}
			run[r].multi = multi;
			multi += c.multi;
		}
	}
#pragma omp parallel for schedule(dynamic, 1)
	for (int r = 0; r < WALK_RUNS; r++) {
		struct walk_count *c = &run[r];
		const struct vox_plan *p = &g->plan;
		const size_t nx = (size_t)p->n[0], ny = (size_t)p->n[1];

		for (size_t w = nw * (size_t)r / WALK_RUNS; w < nw * (size_t)(r + 1) / WALK_RUNS;
		     w++) {
			const struct vox_wall *wl = &g->walls[w];
			int mats[6];
			double area[6];
			const int ns = wall_entries(wl, material_of, mats, area);
			size_t n, e0;

			if (!ns)
				continue;
			if (ns == 1) {
				const int x = material_of[mats[0]];

				n = e0 = c->node[x]++;
				b->so[e0] = first[x] + (n - b->seg[x]);
			} else {
				n = c->node[nmat]++;
				e0 = c->multi;
				c->multi += (size_t)ns;
				for (int e = 0; e < ns; e++) {
					const int x = material_of[mats[e]];
					const size_t singles = b->seg[x + 1] - b->seg[x];

					b->so[e0 + (size_t)e] = first[x] + singles + c->in_multi[x]++;
				}
			}
			for (int e = 0; e < ns; e++) {
				b->gam[e0 + (size_t)e] = area[e];
				b->mat[e0 + (size_t)e] = (uint32_t)material_of[mats[e]];
			}
			b->at[n] = wl->cell;
			b->ew[n] = 1;
			for (int f = 0; f < 6 && p->on_nodes; f++)
				if (wl->material[f] != VOX_NO_WALL)
					b->ew[n] *= 0.5;
			b->cell[n] = p->fcc ? vox_folded(p, (int)(wl->cell % nx),
							 (int)(wl->cell / nx % ny),
							 (int)(wl->cell / nx / ny))
					    : wl->cell;
			b->first[n] = (uint32_t)e0;
		}
	}
	b->first[b->nodes] = (uint32_t)b->entries;
	free(run);
	return 0;
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

/*
 * grid.walls: fitted (voxel.h, struct vox_cut): the groups' walls as walls of their first
 * members, in the order of the groups: each banded material's wall area over the group's
 * volume (its wall term's weight, gam / (lambda / 2), is that of a cut box: docs/physics.md,
 * "Fitted walls"), at most six materials a group. NULL with *n 0 when there are none.
 */
static struct vox_wall *cut_walls(const struct vox_grid *g, const int *material_of,
				  size_t *n)
{
	const struct vox_cut *c = g->cut;
	struct vox_wall *w = malloc((c->ngroups ? c->ngroups : 1) * sizeof(*w));

	*n = 0;
	if (!w)
		return NULL;
	for (size_t q = 0; q < c->ngroups; q++) {
		struct vox_wall *wl = &w[*n];
		int ns = 0;

		memset(wl, 0, sizeof(*wl));
		memset(wl->material, VOX_NO_WALL, sizeof(wl->material));
		wl->cell = c->cell[c->gstart[q]];
		for (size_t m = c->gstart[q]; m < c->gstart[q + 1]; m++) {
			const int mat = c->material[m];
			int e;

			if (!(c->area[m] > 0) || material_of[mat] < 0)
				continue;
			for (e = 0; e < ns && wl->material[e] != mat; e++)
				;
			if (e == ns && ns == 6)	/* a seventh material: the last one's */
				e = 5;
			if (e == ns)
				wl->material[ns++] = (uint8_t)mat;
			wl->area[e] += (float)(c->area[m] / c->vol[q]);
		}
		*n += ns > 0;
	}
	return w;
}

/* grid.walls: fitted: the group whose first member is at cell (the groups' firsts rise). */
static size_t cut_group_at(const struct vox_cut *c, size_t cell)
{
	size_t lo = 0, hi = c->ngroups;

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (c->cell[c->gstart[mid]] < cell)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct branch_walls *branch_create(const struct vox_grid *g,
				   const struct wall_model *const *banks, int nbanks,
				   double lambda, double T, int precision, struct rs_error *err)
{
	struct branch_walls *b = calloc(1, sizeof(*b));
	struct vox_grid cg;	/* fitted: the grid with the groups' walls */
	int j = 0;

	if (!b)
		goto nomem;
	b->precision = precision;
	b->nmat = index_banks(banks, nbanks, b->material_of, &b->nbranch);
	if (g->cut) {
		cg = *g;
		if (!(cg.walls = cut_walls(g, b->material_of, &cg.nwalls)))
			goto nomem;
		g = &cg;
	}
	if (b->nmat && (!(b->stride = calloc((size_t)b->nmat, sizeof(*b->stride))) ||
			!(b->seg = calloc((size_t)b->nmat + 2, sizeof(*b->seg)))))
		goto nomem;
	if (b->nmat && walk(g, banks, b->material_of, b, 0))
		goto nomem;
	if (!b->nodes || b->entries > UINT32_MAX) {
		const size_t entries = b->entries;

		if (g == &cg)
			free(cg.walls);
		branch_free(b);
		if (entries > UINT32_MAX)
			rs_fail(err, RS_EINPUT, "more than %u boundary entries with branch walls",
				UINT32_MAX);
		return NULL;
	}
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
	if (walk(g, banks, b->material_of, b, 1))
		goto nomem;
#pragma omp parallel for schedule(static)
	for (size_t n = 0; n < b->nodes; n++) {
		/* the kind's scalar walls, as fdtd_coefficients() has them: g = (lambda / 2) beta
		 * on the cubic grid, lambda beta on the fcc grid; a cut group's (lambda / 2)
		 * beta area / V on both */
		const double gl = (g->plan.fcc && !g->cut ? 1 : 0.5) * lambda;
		double d;

		if (g->cut) {	/* the group's scalar walls, as the cut step has them */
			const size_t q = cut_group_at(g->cut, b->at[n]);

			b->A[n] = 1 + gl * g->cut->loss[q] / g->cut->vol[q];
		} else {
			b->A[n] = 1 + gl * g->kinds[g->cls[b->at[n]]].beta_sum;
		}
		d = b->A[n];
		for (uint32_t e = b->first[n]; e < b->first[n + 1]; e++) {
			b->gam[e] *= gl;
			d += b->gam[e] * b->bh[b->mat[e]];
		}
		b->inv[n] = 1 / d;
	}
	if (g == &cg)
		free(cg.walls);
	return b;

nomem:
	if (g == &cg)
		free(cg.walls);
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
