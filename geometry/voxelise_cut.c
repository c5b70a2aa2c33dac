/*
 * voxelise_cut.c - the cut cells of grid.walls: fitted (docs/physics.md, "Fitted walls").
 *
 * Each cell near the surface gets the share of its box that lies inside the room (its volume
 * V, in h^3) and the share of each of its six faces (its open fractions, in h^2), measured
 * from points on a lattice SUB times finer than the grid: SUB^3 in the box, SUB^2 on each
 * face, each inside or not by the room's own rule (the last shape that holds it, else the
 * base: the box, or the mesh by the parity of its crossings along z). A face's points are the
 * same numbers from both its cells, so the two agree on its open fraction bit for bit. The
 * cells whose update then differs from the staircase's (part of the box outside, a face
 * partly closed, or a staircase wall) take the finite-volume update of struct vox_cut; a cell
 * whose volume is too small for the scheme's step joins the group of the neighbour across its
 * widest open face, until every group is stable.
 */
#include "voxelise.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#define SUB 8		/* points per cell along each axis */
#define BIN 4		/* cells per side of a square bin of triangles, for rays along z */

/* The triangles in square bins of the x-y plane, for the rays along z. */
struct zbins {
	int n[2];
	double lo[2], w;
	size_t *at;		/* bin q holds idx[at[q] .. at[q + 1]) */
	uint32_t *idx;
};

static int bin_of(const struct zbins *z, int d, double x)
{
	const int q = (int)floor((x - z->lo[d]) / z->w);

	return q < 0 ? 0 : q >= z->n[d] ? z->n[d] - 1 : q;
}

static int zbins_make(struct zbins *z, const struct build *b)
{
	size_t total = 0;

	z->w = BIN * b->g->plan.h;
	for (int d = 0; d < 2; d++) {
		z->lo[d] = b->room->origin[d];
		z->n[d] = (int)ceil(b->room->box[d] / z->w) + 1;
	}
	if (!(z->at = calloc((size_t)z->n[0] * z->n[1] + 1, sizeof(*z->at))))
		return RS_ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < b->ntri; t++) {
			const struct tri *tr = &b->tri[t];

			for (int j = bin_of(z, 1, tr->lo[1]); j <= bin_of(z, 1, tr->hi[1]); j++)
				for (int i = bin_of(z, 0, tr->lo[0]); i <= bin_of(z, 0, tr->hi[0]); i++) {
					const size_t q = (size_t)i + (size_t)z->n[0] * j;

					if (pass)
						z->idx[z->at[q + 1]++] = (uint32_t)t;
					else
						z->at[q + 1]++;
				}
		}
		if (pass)
			break;
		for (size_t q = 0; q < (size_t)z->n[0] * z->n[1]; q++) {
			const size_t c = z->at[q + 1];

			z->at[q + 1] = total;
			total += c;
		}
		if (!(z->idx = malloc((total ? total : 1) * sizeof(*z->idx))))
			return RS_ENOMEM;
	}
	return 0;
}

/* A ray along z at (x, y): the mesh's crossings, rising. */
struct zray {
	double x, y;
	double *at;
	int n, cap;
};

static int cmp_double(const void *pa, const void *pb)
{
	const double a = *(const double *)pa, c = *(const double *)pb;

	return (a > c) - (a < c);
}

static int zray_cast(struct zray *r, const struct build *b, const struct zbins *z)
{
	const size_t q = (size_t)bin_of(z, 0, r->x) + (size_t)z->n[0] * bin_of(z, 1, r->y);

	r->n = 0;
	for (size_t e = z->at[q]; e < z->at[q + 1]; e++) {
		double at;

		if (!vx_crossing(&b->tri[z->idx[e]], 2, r->x, r->y, &at))
			continue;
		if (r->n == r->cap) {
			double *m = realloc(r->at, (size_t)(r->cap = 2 * r->cap + 16) * sizeof(*m));

			if (!m)
				return RS_ENOMEM;
			r->at = m;
		}
		r->at[r->n++] = at;
	}
	if (r->n > 1)
		qsort(r->at, (size_t)r->n, sizeof(*r->at), cmp_double);
	return 0;
}

/* Is the point (r->x, r->y, zz) inside the room: the last shape holding it, else the base. */
static int inside(const struct build *b, const struct zray *r, double zz)
{
	const struct room_geometry *geo = &b->room->geo;
	const double x[3] = { r->x, r->y, zz };
	int below = 0;

	for (int s = geo->nshapes - 1; s >= 0; s--)
		if (vox_shape_holds(&geo->shapes[s], x))
			return !geo->shapes[s].remove;
	if (geo->has_box || !b->room->shaped) {
		const double *L = b->room->shaped ? geo->box : b->room->box;

		for (int d = 0; d < 3; d++)
			if (!(x[d] > 0 && x[d] < L[d]))
				return 0;
		return 1;
	}
	while (below < r->n && r->at[below] < zz)
		below++;
	return below < r->n && r->at[below] == zz ? 0 : below & 1;	/* on the surface: out */
}

/* Room coordinate along d of room cell m's node plus off cells (off a multiple of 1/8, so
 * that a face's points are the same numbers from both its cells). */
static double at_cell(const struct build *b, int d, int m, double off)
{
	return b->room->origin[d] + ((double)m + 0.5 + off) * b->g->plan.h;
}

/* One cut cell as measured: its cell, its volume and its faces' open fractions. */
struct cand {
	size_t cell;
	int ijk[3];
	float vol, open[6];
};

/* Does room cell (i, j, k) have a neighbour (of 26) whose node differs from its own? */
static int near_surface(const struct vox_grid *g, int i, int j, int k)
{
	const struct vox_plan *p = &g->plan;
	const int h = p->halo;
	const int me = g->cls[vox_index(p, i + h, j + h, k + h)] != VOX_PAD;

	for (int c = -1; c <= 1; c++)
		for (int bb = -1; bb <= 1; bb++)
			for (int a = -1; a <= 1; a++) {
				const int x = i + a, y = j + bb, z = k + c;
				int it = 0;

				if (x >= 0 && y >= 0 && z >= 0 && x < p->room[0] && y < p->room[1] &&
				    z < p->room[2])
					it = g->cls[vox_index(p, x + h, y + h, z + h)] != VOX_PAD;
				if (it != me)
					return 1;
			}
	return 0;
}

/*
 * The cells of column (i, j) near the surface, measured into out (at most room[2] of them);
 * returns how many. rays: SUB^2 + 4 SUB rays of the column, reused.
 */
static int measure_column(const struct build *b, const struct zbins *z, int i, int j,
			  struct zray *rays, struct cand *out, int *rc)
{
	const struct vox_plan *p = &b->g->plan;
	const double w = 1.0 / SUB, ww = w * w, www = ww * w;
	int nc = 0, cast = 0;

	for (int k = 0; k < p->room[2]; k++) {
		struct cand *c = &out[nc];
		float open[6] = { 0 }, vol = 0;

		if (!near_surface(b->g, i, j, k))
			continue;
		if (!cast) {	/* the column's rays: SUB^2 through the box, SUB on each side face */
			int q = 0;

			for (int a = 0; a < SUB; a++)
				for (int e = 0; e < SUB; e++, q++) {
					rays[q].x = at_cell(b, 0, i, (a + 0.5) * w - 0.5);
					rays[q].y = at_cell(b, 1, j, (e + 0.5) * w - 0.5);
				}
			for (int side = 0; side < 2; side++)
				for (int a = 0; a < SUB; a++, q++) {
					rays[q].x = at_cell(b, 0, i, side - 0.5);	/* -x, +x faces */
					rays[q].y = at_cell(b, 1, j, (a + 0.5) * w - 0.5);
				}
			for (int side = 0; side < 2; side++)
				for (int a = 0; a < SUB; a++, q++) {
					rays[q].x = at_cell(b, 0, i, (a + 0.5) * w - 0.5);
					rays[q].y = at_cell(b, 1, j, side - 0.5);	/* -y, +y faces */
				}
			if (b->tri)
				for (int r = 0; r < q && !*rc; r++)
					*rc = zray_cast(&rays[r], b, z);
			cast = 1;
		}
		for (int q = 0; q < SUB * SUB; q++) {
			const struct zray *r = &rays[q];

			for (int c3 = 0; c3 < SUB; c3++)
				vol += (float)(inside(b, r, at_cell(b, 2, k, (c3 + 0.5) * w - 0.5)) * www);
			open[4] += (float)(inside(b, r, at_cell(b, 2, k, -0.5)) * ww);
			open[5] += (float)(inside(b, r, at_cell(b, 2, k, 0.5)) * ww);
		}
		for (int f = 0; f < 4; f++)
			for (int a = 0; a < SUB; a++) {
				const struct zray *r = &rays[SUB * SUB + f * SUB + a];

				for (int c3 = 0; c3 < SUB; c3++)
					open[f] += (float)(inside(b, r, at_cell(b, 2, k,
										 (c3 + 0.5) * w - 0.5)) *
							   ww);
			}
		c->cell = vox_index(p, i + p->halo, j + p->halo, k + p->halo);
		c->ijk[0] = i;
		c->ijk[1] = j;
		c->ijk[2] = k;
		c->vol = vol;
		memcpy(c->open, open, sizeof(open));
		nc++;
	}
	return nc;
}

/* Threads' lists of measured cells, joined. */
struct cand_list {
	struct cand *c;
	size_t n, cap;
};

static int cand_cmp(const void *pa, const void *pb)
{
	const size_t a = ((const struct cand *)pa)->cell, c = ((const struct cand *)pb)->cell;

	return (a > c) - (a < c);
}

/* The index in the sorted list of the member at cell, or -1. */
static long find(const struct cand *m, size_t n, size_t cell)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (m[mid].cell < cell)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && m[lo].cell == cell ? (long)lo : -1;
}

static size_t root(size_t *par, size_t x)
{
	while (par[x] != x)
		x = par[x] = par[par[x]];
	return x;
}

/* The material of the surface nearest cell c's node: the last shape whose bounds reach it,
 * else the box's nearest face, else the mesh's nearest triangle. */
static int cell_material(const struct build *b, const struct cand *c, const struct tri **hint)
{
	const struct room *room = b->room;
	const struct room_geometry *geo = &room->geo;
	const double h = b->g->plan.h;
	double x[3];
	int mat = geo->default_material;

	for (int d = 0; d < 3; d++)
		x[d] = at_cell(b, d, c->ijk[d], 0);
	for (int s = geo->nshapes - 1; s >= 0; s--) {
		const struct room_shape *sh = &geo->shapes[s];
		int near = 1;

		for (int d = 0; d < 3; d++)
			near &= x[d] >= sh->lo[d] - 1.5 * h && x[d] <= sh->hi[d] + 1.5 * h;
		if (near)
			return sh->material;
	}
	if (geo->has_box || !room->shaped) {
		const double *L = room->shaped ? geo->box : room->box;
		static const int face[6] = { ROOM_X0, ROOM_X1, ROOM_Y0, ROOM_Y1, ROOM_FLOOR,
					     ROOM_CEILING };
		double best = INFINITY;

		for (int f = 0; f < 6; f++) {
			const double dist = f % 2 ? L[f / 2] - x[f / 2] : x[f / 2];

			if (dist < best) {
				best = dist;
				mat = room->face_material[face[f]];
			}
		}
	} else if (b->tri) {
		const struct tri *t = vx_nearest_tri(b, x, *hint);

		*hint = t;
		if (t)
			mat = t->material;
	}
	return mat;
}

static void cut_free(struct vox_cut *c)
{
	if (!c)
		return;
	free(c->cell);
	free(c->gstart);
	free(c->open);
	free(c->area);
	free(c->material);
	free(c->vol);
	free(c->loss);
	free(c);
}

size_t vox_cut_memory(size_t boundary, int device)
{
	/* per member: its cell, faces, area and material, and a group's lists (the engines'
	 * coefficients and u^(n-1) among them); building: a measured cell and its parent */
	const size_t member = sizeof(size_t) + 6 * sizeof(float) + sizeof(float) + 1,
		     group = 7 * sizeof(double) + sizeof(size_t);

	return 2 * boundary *
	       (device ? sizeof(long long) + 6 * sizeof(float) + 5 * sizeof(double)
		       : member + group + sizeof(struct cand) + sizeof(size_t));
}

void vox_cut_free(struct vox_cut *c)
{
	cut_free(c);
}

/* Cell index c's room cell (no halo). */
static void room_cell(const struct vox_plan *p, size_t c, int ijk[3])
{
	ijk[0] = (int)(c % (size_t)p->n[0]) - p->halo;
	ijk[1] = (int)(c / (size_t)p->n[0] % (size_t)p->n[1]) - p->halo;
	ijk[2] = (int)(c / ((size_t)p->n[0] * (size_t)p->n[1])) - p->halo;
}

/*
 * Merge each unstable group into its neighbour across its widest open face (a full air cell
 * there joins as a member): until V >= l2 D / 2 for every group, D the open fractions of its
 * faces to cells outside it (Gershgorin's bound on the finite-volume Laplacian: the leapfrog
 * step is then stable). Returns the members merged; *m and *n grow with the air cells taken,
 * the list staying sorted by cell.
 */
static long merge_groups(const struct vox_grid *g, struct cand **m, size_t *n, size_t **par,
			 double l2)
{
	const struct vox_plan *p = &g->plan;
	const ptrdiff_t step[3] = { 1, p->n[0], (ptrdiff_t)p->n[0] * p->n[1] };
	long merged = 0;

	for (;;) {
		double *V = calloc(*n + 1, sizeof(*V)), *D = calloc(*n + 1, sizeof(*D));
		float *best = calloc(*n + 1, sizeof(*best));
		long *to = malloc((*n + 1) * sizeof(*to));	/* a member, or -2 - the air cell */
		size_t *air = NULL, nair = 0;
		int any = 0;

		if (!V || !D || !best || !to)
			goto fail;
		for (size_t q = 0; q < *n; q++) {
			const size_t r = root(*par, q);

			V[r] += (*m)[q].vol;
			to[q] = -1;
			for (int f = 0; f < 6; f++) {
				const size_t c = (*m)[q].cell + (f % 2 ? 1 : -1) * step[f / 2];
				const long o = find(*m, *n, c);
				const float op = (*m)[q].open[f];

				if (o >= 0 && root(*par, (size_t)o) == r)
					continue;
				D[r] += op;
				if (op > best[r]) {
					best[r] = op;
					to[r] = o >= 0 ? o : -2 - (long)c;
				}
			}
		}
		for (size_t q = 0; q < *n; q++) {
			if (root(*par, q) != q || V[q] >= 0.5 * l2 * D[q] || to[q] == -1)
				continue;
			any = 1;
			merged++;
			if (to[q] >= 0) {
				const size_t r = root(*par, (size_t)to[q]);

				if (r != q)
					(*par)[q] = r;
				continue;
			}
			/* a full air cell: it joins once the list is extended below */
			{
				size_t *t = realloc(air, (nair + 1) * 2 * sizeof(*t));

				if (!t)
					goto fail;
				air = t;
				air[2 * nair] = (size_t)(-2 - to[q]);
				air[2 * nair + 1] = q;
				nair++;
			}
		}
		if (nair) {	/* the air cells taken, in order of cell, merged into the list */
			struct cand *nm = malloc((*n + nair) * sizeof(*nm));
			size_t *at = malloc(*n * sizeof(*at));
			size_t e = 0, a = 0, w = 0;

			if (!nm || !at) {
				free(nm);
				free(at);
				goto fail;
			}
			/* sort the taken cells (few) by cell, dropping repeats */
			for (size_t x = 1; x < nair; x++)
				for (size_t y = x; y > 0 && air[2 * (y - 1)] > air[2 * y]; y--) {
					const size_t c0 = air[2 * y], c1 = air[2 * y + 1];

					air[2 * y] = air[2 * (y - 1)];
					air[2 * y + 1] = air[2 * (y - 1) + 1];
					air[2 * (y - 1)] = c0;
					air[2 * (y - 1) + 1] = c1;
				}
			while (e < *n || a < nair) {
				if (a < nair && (e == *n || air[2 * a] < (*m)[e].cell)) {
					if (w && nm[w - 1].cell == air[2 * a]) {	/* taken twice */
						a++;
						continue;
					}
					memset(&nm[w], 0, sizeof(nm[w]));
					nm[w].cell = air[2 * a];
					nm[w].vol = 1;
					for (int f = 0; f < 6; f++)
						nm[w].open[f] = 1;
					room_cell(p, air[2 * a], nm[w].ijk);
					w++;
					a++;
				} else {
					nm[w] = (*m)[e];
					at[e] = w;
					w++;
					e++;
				}
			}
			/* parents: old members map through at[], new ones are their own roots
			 * until the groups that took them join them */
			{
				size_t *pp = malloc(w * sizeof(*pp));

				if (!pp) {
					free(nm);
					free(at);
					goto fail;
				}
				for (size_t x = 0; x < w; x++)
					pp[x] = x;
				for (size_t x = 0; x < *n; x++)
					pp[at[x]] = at[root(*par, x)];
				for (size_t x = 0; x < nair; x++) {
					const long o = find(nm, w, air[2 * x]);
					const size_t r = at[root(*par, air[2 * x + 1])];

					if (o >= 0 && r != (size_t)o)
						pp[r] = (size_t)o;
				}
				free(*par);
				*par = pp;
			}
			free(*m);
			*m = nm;
			*n = w;
			free(at);
		}
		free(V);
		free(D);
		free(best);
		free(to);
		free(air);
		if (!any)
			return merged;
		continue;
fail:
		free(V);
		free(D);
		free(best);
		free(to);
		free(air);
		return -1;
	}
}

int vx_cut_cells(struct build *b, struct rs_error *err)
{
	struct vox_grid *g = b->g;
	const struct vox_plan *p = &g->plan;
	const ptrdiff_t step[3] = { 1, p->n[0], (ptrdiff_t)p->n[0] * p->n[1] };
	const double l2 = b->room->courant * b->room->courant / 3;	/* the 7-point scheme's */
	struct zbins z = { 0 };
	struct cand_list all = { 0 };
	struct cand *m = NULL;
	size_t n = 0, *par = NULL;
	struct vox_cut *cut = NULL;
	const struct tri *hint = NULL;
	long merged;
	int rc = 0;

	if (g->zbase != 0 || p->room[2] != b->whole.room[2])
		return rs_fail(err, RS_EINPUT, "grid.walls: fitted builds the whole grid in one "
			       "process so far: run it without ranks");
	if (b->tri && zbins_make(&z, b))
		goto out_nomem;
#pragma omp parallel
	{
		struct zray rays[SUB * SUB + 4 * SUB] = { { 0 } };
		struct cand *col = malloc((size_t)p->room[2] * sizeof(*col));
		struct cand_list mine = { 0 };
		int trc = col ? 0 : RS_ENOMEM;

#pragma omp for schedule(dynamic, 16)
		for (long q = 0; q < (long)p->room[0] * p->room[1]; q++) {
			const int i = (int)(q % p->room[0]), j = (int)(q / p->room[0]);
			int nc;

			if (trc)
				continue;
			nc = measure_column(b, &z, i, j, rays, col, &trc);
			if (nc && mine.n + (size_t)nc > mine.cap) {
				struct cand *t = realloc(mine.c, (mine.cap = 2 * mine.cap + (size_t)nc) *
								 sizeof(*t));

				if (!t) {
					trc = RS_ENOMEM;
					continue;
				}
				mine.c = t;
			}
			for (int e = 0; e < nc; e++)
				if (col[e].vol > 0)
					mine.c[mine.n++] = col[e];
		}
#pragma omp critical
		{
			if (trc)
				rc = trc;
			else if (mine.n) {
				struct cand *t = realloc(all.c, (all.n + mine.n) * sizeof(*t));

				if (t) {
					memcpy(t + all.n, mine.c, mine.n * sizeof(*t));
					all.c = t;
					all.n += mine.n;
				} else {
					rc = RS_ENOMEM;
				}
			}
		}
		for (int r = 0; r < SUB * SUB + 4 * SUB; r++)
			free(rays[r].at);
		free(col);
		free(mine.c);
	}
	if (rc)
		goto out_nomem;
	if (all.n > 1)
		qsort(all.c, all.n, sizeof(*all.c), cand_cmp);
	/* the members: cells whose update differs from the staircase's */
	for (size_t q = 0; q < all.n; q++) {
		const struct cand *c = &all.c[q];
		int full = c->vol == 1 && g->cls[c->cell] == VOX_AIR;

		for (int f = 0; f < 6; f++)
			full &= c->open[f] == 1;
		if (!full)
			all.c[n++] = *c;
	}
	m = all.c;
	all.c = NULL;
	/* a face towards a cell of no volume is shut, one towards a full air cell open: both
	 * sides of every face then weigh it alike */
	for (size_t q = 0; q < n; q++)
		for (int f = 0; f < 6; f++) {
			const size_t c = m[q].cell + (f % 2 ? 1 : -1) * step[f / 2];

			if (find(m, n, c) < 0)
				m[q].open[f] = g->cls[c] == VOX_PAD ? 0 : 1;
		}
	if (!(par = malloc((n ? n : 1) * sizeof(*par))))
		goto out_nomem;
	for (size_t q = 0; q < n; q++)
		par[q] = q;
	if ((merged = merge_groups(g, &m, &n, &par, l2)) < 0)
		goto out_nomem;
	/* the groups, each's members together in the order of their cells */
	if (!(cut = calloc(1, sizeof(*cut))) ||
	    !(cut->cell = malloc((n ? n : 1) * sizeof(*cut->cell))) ||
	    !(cut->open = malloc((n ? n : 1) * sizeof(*cut->open))) ||
	    !(cut->area = calloc(n ? n : 1, sizeof(*cut->area))) ||
	    !(cut->material = calloc(n ? n : 1, sizeof(*cut->material))) ||
	    !(cut->gstart = malloc((n + 1) * sizeof(*cut->gstart))) ||
	    !(cut->vol = calloc(n ? n : 1, sizeof(*cut->vol))) ||
	    !(cut->loss = calloc(n ? n : 1, sizeof(*cut->loss))))
		goto out_nomem;
	{
		size_t *count = calloc(n + 1, sizeof(*count)), *gid = malloc((n ? n : 1) * sizeof(*gid));
		size_t ng = 0;

		if (!count || !gid) {
			free(count);
			free(gid);
			goto out_nomem;
		}
		for (size_t q = 0; q < n; q++)	/* groups numbered by their first member */
			count[q] = (size_t)-1;
		for (size_t q = 0; q < n; q++) {
			const size_t r = root(par, q);

			if (count[r] == (size_t)-1)
				count[r] = ng++;
			gid[q] = count[r];
		}
		memset(cut->gstart, 0, (n + 1) * sizeof(*cut->gstart));
		for (size_t q = 0; q < n; q++)
			cut->gstart[gid[q] + 1]++;
		for (size_t e = 0; e < ng; e++)
			cut->gstart[e + 1] += cut->gstart[e];
		memcpy(count, cut->gstart, (ng + 1) * sizeof(*count));
		for (size_t q = 0; q < n; q++) {
			const size_t at = count[gid[q]]++;
			double dd = 0;

			cut->cell[at] = m[q].cell;
			memcpy(cut->open[at], m[q].open, sizeof(m[q].open));
			cut->vol[gid[q]] += m[q].vol;
			for (int d = 0; d < 3; d++)
				dd += (double)(m[q].open[2 * d] - m[q].open[2 * d + 1]) *
				      (m[q].open[2 * d] - m[q].open[2 * d + 1]);
			if (dd > 0) {	/* the wall inside the cell: its projections' norm, in h^2 */
				const int mat = cell_material(b, &m[q], &hint);
				const struct room_material *rm = &b->room->materials[mat];

				cut->area[at] = (float)sqrt(dd);
				cut->material[at] = (uint8_t)mat;
				if (!room_material_banded(rm))
					cut->loss[gid[q]] += rm->beta * cut->area[at];
			}
			cut->volume += m[q].vol;
		}
		cut->n = n;
		cut->ngroups = ng;
		cut->merged = (size_t)merged;
		free(count);
		free(gid);
	}
	g->cut = cut;
	cut = NULL;
	goto out;

out_nomem:
	rc = rs_fail(err, RS_ENOMEM, "out of memory for the fitted walls' cut cells");
out:
	cut_free(cut);
	free(par);
	free(m);
	free(all.c);
	free(z.at);
	free(z.idx);
	return rc;
}
