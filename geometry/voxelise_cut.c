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
 * widest open face, until every group is stable. On the fcc lattice the cell is the node's
 * rhombic dodecahedron, measured from the same boxes' points (measure_fcc), a small cell is
 * first lent volume by its neighbour (lend_volume), and the result's stability is checked
 * (check_stability). The measuring, the sorts, the neighbour lists and the check run on the
 * threads, their sums in fixed blocks, so that any number of threads gives the same cut cells
 * (test_geometry, fitted_cells_on_threads); lending and merging, which go in order, do not.
 */
#include "voxelise.h"

#include "../common/rs_phase.h"

#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

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

/* One cut cell as measured: its cell, its volume (h^3) and its faces' open fractions (6 on
 * the cubic grid, 12 on the fcc lattice). */
struct cand {
	size_t cell;
	int ijk[3];
	float vol, open[12];
	float kappa;		/* fcc: its bound's factor, raised where a mode was unstable */
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
		float open[12] = { 0 }, vol = 0;

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
		c->kappa = 1;
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

/* The index in the sorted list of the first member at or past cell (n: none). */
static size_t lower(const struct cand *m, size_t n, size_t cell)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (m[mid].cell < cell)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index in the sorted list of the member at cell, or -1. */
static long find(const struct cand *m, size_t n, size_t cell)
{
	const size_t lo = lower(m, n, cell);

	return lo < n && m[lo].cell == cell ? (long)lo : -1;
}

#define PSORT_SLICES 64	/* the pieces a list is cut into for the threads */

/* memcpy on all threads, in PSORT_SLICES pieces */
static void pcopy(void *dst, const void *src, size_t bytes)
{
#pragma omp parallel for schedule(static)
	for (int e = 0; e < PSORT_SLICES; e++) {
		const size_t lo = bytes * (size_t)e / PSORT_SLICES,
			     hi = bytes * (size_t)(e + 1) / PSORT_SLICES;

		memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
	}
}

/*
 * Where the first k items of the merge of sorted runs a (na items) and b (nb) end in a: the
 * merge takes a's item first when the two compare equal, so the split is the least i with
 * a[i] after b[k - i - 1] (or none of either left).
 */
static size_t merge_split(const char *a, size_t na, const char *b, size_t nb, size_t k,
			  size_t sz, int (*cmp)(const void *, const void *))
{
	size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;

	while (lo < hi) {
		const size_t i = lo + (hi - lo) / 2, j = k - i;

		if (j == 0 || cmp(a + i * sz, b + (j - 1) * sz) > 0)
			hi = i;
		else
			lo = i + 1;
	}
	return lo;
}

/* Merge sorted runs a (na items) and b (nb) into dst, a's item first of two equal. */
static void merge_runs(char *dst, const char *a, size_t na, const char *b, size_t nb, size_t sz,
		       int (*cmp)(const void *, const void *))
{
	size_t i = 0, j = 0, w = 0;

	while (i < na && j < nb)
		if (cmp(a + i * sz, b + j * sz) <= 0)
			memcpy(dst + w++ * sz, a + i++ * sz, sz);
		else
			memcpy(dst + w++ * sz, b + j++ * sz, sz);
	memcpy(dst + w * sz, a + i * sz, (na - i) * sz);
	w += na - i;
	memcpy(dst + w * sz, b + j * sz, (nb - j) * sz);
}

/*
 * qsort on all threads: each sorts a slice, then pairs of sorted runs are merged, in rounds,
 * each merge cut into as many pieces as there are threads (merge_split), so that the last
 * rounds too run on all of them. The order of items that compare equal is unspecified, as
 * qsort's; every list sorted here has no two such items that differ.
 */

static void psort(void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	size_t cut[PSORT_SLICES + 1];
	char *src = base, *dst;
	int t = omp_get_max_threads();

	t = t > PSORT_SLICES ? PSORT_SLICES : t;
	if (t < 2 || n < 4096 || !(dst = malloc(n * sz))) {
		if (n > 1)
			qsort(base, n, sz, cmp);
		return;
	}
	for (int e = 0; e <= t; e++)
		cut[e] = n * (size_t)e / (size_t)t;
#pragma omp parallel for num_threads(t) schedule(static, 1)
	for (int e = 0; e < t; e++)
		qsort(src + cut[e] * sz, cut[e + 1] - cut[e], sz, cmp);
	for (int width = 1; width < t; width *= 2) {
		/* piece x of pair e: the output's items [x m / t, (x + 1) m / t), m the pair's */
#pragma omp parallel for num_threads(t) schedule(static, 1) collapse(2)
		for (int e = 0; e < t; e += 2 * width)
			for (int x = 0; x < t; x++) {
				const size_t a = cut[e], mid = cut[e + width < t ? e + width : t],
					     hi = cut[e + 2 * width < t ? e + 2 * width : t];
				const size_t na = mid - a, nb = hi - mid, m = na + nb;
				const size_t k0 = m * (size_t)x / (size_t)t,
					     k1 = m * (size_t)(x + 1) / (size_t)t;
				const char *ra = src + a * sz, *rb = src + mid * sz;
				const size_t i0 = merge_split(ra, na, rb, nb, k0, sz, cmp),
					     i1 = merge_split(ra, na, rb, nb, k1, sz, cmp);

				merge_runs(dst + (a + k0) * sz, ra + i0 * sz, i1 - i0,
					   rb + (k0 - i0) * sz, (k1 - i1) - (k0 - i0), sz, cmp);
			}
		{
			char *x = src;

			src = dst;
			dst = x;
		}
	}
	if (src != base) {
		pcopy(base, src, n * sz);
		free(src);
	} else {
		free(dst);
	}
}

/* The cell beside c across a face of step off, or 0 when that lies before the grid's start:
 * where a walk to the cells beside a sorted list starts. */
static size_t beside(size_t c, ptrdiff_t off)
{
	return off < 0 && c < (size_t)-off ? 0 : c + (size_t)off;
}

/*
 * Each member's neighbour across each face: its index in the list sorted by cell, or -1; in
 * nb[q faces + f]. Along one face the neighbours' cells rise with the members', so each
 * slice of the list walks them in one pass.
 */
static int32_t *neighbours(const struct vox_plan *p, const struct cand *m, size_t n, int faces)
{
	int32_t *nb;

	if (n >= INT32_MAX || !(nb = malloc((n ? n : 1) * (size_t)faces * sizeof(*nb))))
		return NULL;
#pragma omp parallel for schedule(static) collapse(2)
	for (int f = 0; f < faces; f++)
		for (int slice = 0; slice < PSORT_SLICES; slice++) {
			const ptrdiff_t off = vox_cut_offset(p, faces, f);
			const size_t lo = n * (size_t)slice / PSORT_SLICES,
				     hi = n * (size_t)(slice + 1) / PSORT_SLICES;
			size_t r;

			if (lo == hi)
				continue;
			/* the first member at or past the first neighbour's cell */
			r = lower(m, n, beside(m[lo].cell, off));
			for (size_t q = lo; q < hi; q++) {
				const size_t want = m[q].cell + (size_t)off;

				if (off < 0 && m[q].cell < (size_t)-off) {	/* off the grid */
					nb[q * (size_t)faces + (size_t)f] = -1;
					continue;
				}
				while (r < n && m[r].cell < want)
					r++;
				nb[q * (size_t)faces + (size_t)f] =
					r < n && m[r].cell == want ? (int32_t)r : -1;
			}
		}
	return nb;
}

static size_t root(size_t *par, size_t x)
{
	while (par[x] != x)
		x = par[x] = par[par[x]];
	return x;
}

/*
 * The fcc lattice (docs/physics.md, "On the fcc lattice"). Node A's dual cell, its rhombic
 * dodecahedron, is its own cell's box and, of each of the six boxes beside it (cells of odd
 * parity, which hold no node), the pyramid on the face they share. Its face towards the
 * neighbour across link o, o_a and o_b its two nonzero steps, is two triangles: one between
 * the pyramids of the odd cell A + o_a e_a that face A and the neighbour, one in A + o_b e_b.
 * An odd cell's points go to the pyramid of their largest coordinate (a tie splits a point
 * evenly), and the points tying on two axes lie on a triangle: (SUB / 2)^2 of them per
 * triangle, counting those on its edges (a tie on three axes) by halves.
 */
#define TRI_POINTS ((SUB / 2) * (SUB / 2))

/* An odd cell's shares: each pyramid's volume inside (h^3) and each triangle's points inside. */
struct odd_cell {
	size_t key;		/* (j room[0] + i) room[2] + k: by column, then k */
	float pyr[6], tri[12];	/* pyramids -x +x -y +y -z +z; triangles by tri_index() */
};

/* The triangle between the pyramids on axes a < b with signs sa and sb (-1 or 1). */
static int tri_index(int a, int sa, int b, int sb)
{
	return 4 * (a + b - 1) + (sa > 0) + 2 * (sb > 0);
}

static size_t odd_key(const struct vox_plan *p, int i, int j, int k)
{
	return ((size_t)j * (size_t)p->room[0] + (size_t)i) * (size_t)p->room[2] + (size_t)k;
}

/* The SUB^2 rays of column (i, j), through its boxes' points. */
static int cast_column(const struct build *b, const struct zbins *z, int i, int j,
		       struct zray *rays)
{
	const double w = 1.0 / SUB;
	int rc = 0;

	for (int a = 0, q = 0; a < SUB; a++)
		for (int e = 0; e < SUB; e++, q++) {
			rays[q].x = at_cell(b, 0, i, (a + 0.5) * w - 0.5);
			rays[q].y = at_cell(b, 1, j, (e + 0.5) * w - 0.5);
			if (b->tri && !rc)
				rc = zray_cast(&rays[q], b, z);
		}
	return rc;
}

/* A point's shares of an odd cell, in whole numbers: (d) its offsets from the box's centre
 * in half points, 2 q / SUB + 1 - SUB etc.; pyr: sixths of a point to each pyramid it lies
 * in (a tie on n axes gives each 6 / n); tri: halves of a point to each triangle (a tie on
 * two axes 2, on three 1 to each of its three). */
struct shares {
	int vol, pyr[6], tri[12];
};

static void point_shares(const int d[3], struct shares *s)
{
	int top = 0, tie[3], nt = 0;

	s->vol++;
	for (int a = 0; a < 3; a++)
		top = abs(d[a]) > top ? abs(d[a]) : top;
	for (int a = 0; a < 3; a++)
		if (abs(d[a]) == top)
			tie[nt++] = a;
	for (int t = 0; t < nt; t++)
		s->pyr[2 * tie[t] + (d[tie[t]] > 0)] += 6 / nt;
	for (int t = 0; t < nt; t++)
		for (int u = t + 1; u < nt; u++)
			s->tri[tri_index(tie[t], d[tie[t]], tie[u], d[tie[u]])] += nt == 2 ? 2 : 1;
}

/* The shares of the SUB points of each ray through a box, all inside. */
static void ray_shares(struct shares seg[SUB * SUB])
{
	memset(seg, 0, SUB * SUB * sizeof(*seg));
	for (int q = 0; q < SUB * SUB; q++)
		for (int c3 = 0; c3 < SUB; c3++) {
			const int d[3] = { 2 * (q / SUB) + 1 - SUB, 2 * (q % SUB) + 1 - SUB,
					   2 * c3 + 1 - SUB };

			point_shares(d, &seg[q]);
		}
}

/*
 * Box k of a cast column: its volume inside (h^3), and, given o, its odd cell's shares. In a
 * room of a mesh alone, a ray that no crossing meets within the box has its points all in or
 * all out: seg (ray_shares()) gives their shares at once.
 */
static float sample_box(const struct build *b, const struct zray *rays, int k,
			const struct shares seg[SUB * SUB], struct odd_cell *o)
{
	const double w = 1.0 / SUB, www = w * w * w;
	const int parity = b->tri && !b->room->geo.nshapes && !b->room->geo.has_box &&
			   b->room->shaped;	/* inside() counts crossings alone */
	const double z0 = at_cell(b, 2, k, 0.5 * w - 0.5), z1 = at_cell(b, 2, k, 0.5 - 0.5 * w);
	struct shares s = { 0 };

	for (int q = 0; q < SUB * SUB; q++) {
		const struct zray *r = &rays[q];

		if (parity) {
			int below = 0;

			while (below < r->n && r->at[below] < z0)
				below++;
			if (below == r->n || r->at[below] > z1) {	/* none within */
				if (below & 1) {
					s.vol += seg[q].vol;
					for (int e = 0; e < 6; e++)
						s.pyr[e] += seg[q].pyr[e];
					for (int e = 0; e < 12; e++)
						s.tri[e] += seg[q].tri[e];
				}
				continue;
			}
		}
		for (int c3 = 0; c3 < SUB; c3++) {
			const int d[3] = { 2 * (q / SUB) + 1 - SUB, 2 * (q % SUB) + 1 - SUB,
					   2 * c3 + 1 - SUB };

			if (inside(b, r, at_cell(b, 2, k, (c3 + 0.5) * w - 0.5)))
				point_shares(d, &s);
		}
	}
	if (o) {
		for (int e = 0; e < 6; e++)
			o->pyr[e] = (float)(s.pyr[e] * (www / 6));
		for (int e = 0; e < 12; e++)
			o->tri[e] = 0.5f * (float)s.tri[e];
	}
	return (float)(s.vol * www);
}

static int key_cmp(const void *pa, const void *pb)
{
	const size_t a = *(const size_t *)pa, c = *(const size_t *)pb;

	return (a > c) - (a < c);
}

/* Sort a[0..n) and drop repeats; returns how many are left. */
static size_t sort_unique(size_t *a, size_t n)
{
	size_t w = 0;

	psort(a, n, sizeof(*a), key_cmp);
	for (size_t q = 0; q < n; q++)
		if (!w || a[w - 1] != a[q])
			a[w++] = a[q];
	return w;
}

/* The first index of the sorted a[0..n) at or past key (n when none). */
static size_t lower_key(const size_t *a, size_t n, size_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct odd_cell *find_odd(const struct odd_cell *o, size_t n,
				       const struct vox_plan *p, int i, int j, int k)
{
	size_t lo = 0, hi = n, key;

	if (i < 0 || j < 0 || k < 0 || i >= p->room[0] || j >= p->room[1] || k >= p->room[2])
		return NULL;
	key = odd_key(p, i, j, k);
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (o[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && o[lo].key == key ? &o[lo] : NULL;
}

/* Append n items of size sz from src to *dst (holding *dn), under the caller's lock. */
static int append(void **dst, size_t *dn, const void *src, size_t n, size_t sz)
{
	char *t;

	if (!n)
		return 0;
	if (!(t = realloc(*dst, (*dn + n) * sz)))
		return RS_ENOMEM;
	memcpy(t + *dn * sz, src, n * sz);
	*dst = t;
	*dn += n;
	return 0;
}

/*
 * The lattice nodes near the surface: those that differ from one of their twelve neighbours
 * in being padding or not (every surface that crosses a node's dual cell parts it from one of
 * them: the cell lies in their hull), among the room's nodes and those of the layer of cells
 * around it. Found row by row in the grid's own order, a whole row's twelve comparisons at
 * once: a fitted fcc grid's halo of 2 (voxel.c) keeps every cell read in the array, and its
 * halo is padding. Each one's key ((j + 1) (room[0] + 2) + i + 1) (room[2] + 2) + k + 1, by
 * column, then k; sorted, in *count. NULL without memory.
 */
static size_t *near_nodes(const struct vox_grid *g, size_t *count)
{
	const struct vox_plan *p = &g->plan;
	const long rows = (long)(p->room[1] + 2) * (p->room[2] + 2);
	size_t *all = NULL, nall = 0;
	int fail = 0;

#pragma omp parallel
	{
		size_t *mine = NULL, nmine = 0, cap = 0;
		uint8_t *diff = malloc((size_t)p->room[0] + 2);

		if (!diff) {
#pragma omp atomic write
			fail = 1;
		}
#pragma omp for schedule(dynamic, 64)
		for (long r = 0; r < rows; r++) {
			const int j = (int)(r % (p->room[1] + 2)) - 1, k = (int)(r / (p->room[1] + 2)) - 1;
			const uint8_t *at[9];

			if (fail)
				continue;
			for (int e = 0; e < 9; e++) {	/* own row, then y, z and y-z neighbours */
				static const int o[9][2] = { { 0, 0 },	 { -1, 0 }, { 1, 0 },
							    { 0, -1 },	 { 0, 1 },  { -1, -1 },
							    { -1, 1 },	 { 1, -1 }, { 1, 1 } };

				at[e] = g->cls + vox_index(p, p->halo, j + o[e][0] + p->halo,
							     k + o[e][1] + p->halo);
			}
			for (int i = -1; i <= p->room[0]; i++) {	/* the links (+-1, +-1, 0) etc. */
				const uint8_t me = at[0][i] != VOX_PAD;

				diff[i + 1] = (uint8_t)(((at[1][i - 1] != VOX_PAD) ^ me) |
							((at[1][i + 1] != VOX_PAD) ^ me) |
							((at[2][i - 1] != VOX_PAD) ^ me) |
							((at[2][i + 1] != VOX_PAD) ^ me) |
							((at[3][i - 1] != VOX_PAD) ^ me) |
							((at[3][i + 1] != VOX_PAD) ^ me) |
							((at[4][i - 1] != VOX_PAD) ^ me) |
							((at[4][i + 1] != VOX_PAD) ^ me) |
							((at[5][i] != VOX_PAD) ^ me) |
							((at[6][i] != VOX_PAD) ^ me) |
							((at[7][i] != VOX_PAD) ^ me) |
							((at[8][i] != VOX_PAD) ^ me));
			}
			for (int i = (j + k + 3 * p->halo) & 1 ? -1 : 0; i <= p->room[0] && !fail; i += 2) {
				if (!diff[i + 1])
					continue;
				if (nmine == cap) {
					size_t *t = realloc(mine, (cap = 2 * cap + 1024) * sizeof(*t));

					if (!t) {
#pragma omp atomic write
						fail = 1;
						break;
					}
					mine = t;
				}
				mine[nmine++] = ((size_t)(j + 1) * (size_t)(p->room[0] + 2) + (size_t)(i + 1)) *
							(size_t)(p->room[2] + 2) + (size_t)(k + 1);
			}
		}
#pragma omp critical
		{
			if (append((void **)&all, &nall, mine, nmine, sizeof(*mine)))
				fail = 1;
		}
		free(mine);
		free(diff);
	}
	if (fail) {
		free(all);
		return NULL;
	}
	psort(all, nall, sizeof(*all), key_cmp);
	*count = nall;
	return all ? all : malloc(1);
}

static int int_cmp(const void *pa, const void *pb)
{
	const int a = *(const int *)pa, c = *(const int *)pb;

	return (a > c) - (a < c);
}

/* The room cells a column's odd cells can number: its own near nodes' twice (k - 1 and k + 1)
 * and its four neighbours' once, each column holding at most room[2] / 2 + 2 lattice nodes. */
#define ODD_ZS(p) ((size_t)6 * ((size_t)(p)->room[2] / 2 + 3))

/* The odd cells of room column (i, j) beside a node near the surface (near, its columns'
 * starts in col_at, as measure_fcc() keeps them): their k, ascending, into zs (ODD_ZS);
 * returns how many. */
static int odd_column(const struct vox_plan *p, const size_t *near, const size_t *col_at, int i,
		      int j, int *zs)
{
	static const int side[5][2] = { { 0, 0 }, { -1, 0 }, { 1, 0 }, { 0, -1 }, { 0, 1 } };
	int n = 0, w = 0;

	for (int s = 0; s < 5; s++) {
		const size_t col = (size_t)(j + 1 + side[s][1]) * (size_t)(p->room[0] + 2) +
				   (size_t)(i + 1 + side[s][0]);

		for (size_t x = col_at[col]; x < col_at[col + 1]; x++) {
			const int k = (int)(near[x] % (size_t)(p->room[2] + 2)) - 1;

			if (s) {
				zs[n++] = k;
			} else {
				zs[n++] = k - 1;
				zs[n++] = k + 1;
			}
		}
	}
	if (n > 1)
		qsort(zs, (size_t)n, sizeof(*zs), int_cmp);
	for (int e = 0; e < n; e++)
		if (zs[e] >= 0 && zs[e] < p->room[2] && (!w || zs[w - 1] != zs[e]))
			zs[w++] = zs[e];
	return w;
}

/*
 * The fcc lattice's measured nodes into *out (*nout): every node near the surface
 * whose dual cell holds some volume inside, with its volume and its twelve faces' open
 * fractions. The nodes near the surface are found in the grid's order (near_nodes), then
 * their own boxes measured column by column, then the odd cells beside them, column by column
 * in the order of their keys (odd_column: each column's counted first, so that its cells go
 * straight to their places in the sorted list), then each node's sum.
 */
static int measure_fcc(const struct build *b, const struct zbins *z, struct cand **out,
		       size_t *nout)
{
	const struct vox_plan *p = &b->g->plan;
	struct cand *ev = NULL;
	const size_t ncol = (size_t)(p->room[0] + 2) * (size_t)(p->room[1] + 2);
	size_t nev = 0, nodd = 0, *near = NULL, nnear = 0, *col_at = NULL, *at = NULL;
	struct odd_cell *odd = NULL;
	struct shares seg[SUB * SUB];
	int rc = 0;

	ray_shares(seg);
	if (!(near = near_nodes(b->g, &nnear)))
		return RS_ENOMEM;
	rs_phase("grid: fitted walls: the nodes near the surface");
	/* where each column's nodes start in near */
	if (!(col_at = calloc(ncol + 1, sizeof(*col_at))) ||
	    !(ev = malloc((nnear ? nnear : 1) * sizeof(*ev))))
		goto nomem;
	for (size_t x = 0; x < nnear; x++)
		col_at[near[x] / (size_t)(p->room[2] + 2) + 1]++;
	for (size_t c = 0; c < ncol; c++)
		col_at[c + 1] += col_at[c];
	/* their boxes, column by column, each node's in its place */
#pragma omp parallel
	{
		struct zray rays[SUB * SUB] = { { 0 } };
		int trc = 0;

#pragma omp for schedule(dynamic, 16)
		for (size_t col = 0; col < ncol; col++) {
			const int i = (int)(col % (size_t)(p->room[0] + 2)) - 1;
			const int j = (int)(col / (size_t)(p->room[0] + 2)) - 1;
			const int in_range = i >= 0 && j >= 0 && i < p->room[0] && j < p->room[1];

			if (trc || col_at[col] == col_at[col + 1])
				continue;
			if (in_range && (trc = cast_column(b, z, i, j, rays)))
				continue;
			for (size_t on = col_at[col]; on < col_at[col + 1]; on++) {
				const int k = (int)(near[on] % (size_t)(p->room[2] + 2)) - 1;
				struct cand *c = &ev[on];

				memset(c, 0, sizeof(*c));
				c->cell = vox_index(p, i + p->halo, j + p->halo, k + p->halo);
				c->ijk[0] = i;
				c->ijk[1] = j;
				c->ijk[2] = k;
				c->vol = in_range && k >= 0 && k < p->room[2]
						 ? sample_box(b, rays, k, seg, NULL) : 0;
			}
		}
		if (trc) {
#pragma omp atomic write
			rc = trc;
		}
		for (int r = 0; r < SUB * SUB; r++)
			free(rays[r].at);
	}
	nev = nnear;
	if (rc)
		goto out;
	rs_phase("grid: fitted walls: the nodes' boxes");
	/* the odd cells beside them, column by column in the order of their keys: counted,
	 * then each column's measured into its place */
	if (!(at = malloc(((size_t)p->room[0] * p->room[1] + 1) * sizeof(*at))))
		goto nomem;
	at[0] = 0;
#pragma omp parallel
	{
		int *zs = malloc(ODD_ZS(p) * sizeof(*zs));

#pragma omp for schedule(dynamic, 256)
		for (long q = 0; q < (long)p->room[0] * p->room[1]; q++)
			at[q + 1] = zs ? odd_column(p, near, col_at, (int)(q % p->room[0]),
						    (int)(q / p->room[0]), zs) : 0;
		if (!zs) {
#pragma omp atomic write
			rc = RS_ENOMEM;
		}
		free(zs);
	}
	if (rc)
		goto out;
	for (long q = 0; q < (long)p->room[0] * p->room[1]; q++)
		at[q + 1] += at[q];
	nodd = at[(size_t)p->room[0] * p->room[1]];
	if (!(odd = malloc((nodd ? nodd : 1) * sizeof(*odd))))
		goto nomem;
#pragma omp parallel
	{
		struct zray rays[SUB * SUB] = { { 0 } };
		int *zs = malloc(ODD_ZS(p) * sizeof(*zs)), trc = zs ? 0 : RS_ENOMEM;

#pragma omp for schedule(dynamic, 16)
		for (long q = 0; q < (long)p->room[0] * p->room[1]; q++) {
			const int i = (int)(q % p->room[0]), j = (int)(q / p->room[0]);
			int nz;

			if (trc || at[q + 1] == at[q])
				continue;
			nz = odd_column(p, near, col_at, i, j, zs);
			if ((trc = cast_column(b, z, i, j, rays)))
				continue;
			for (int e = 0; e < nz; e++) {
				struct odd_cell *o = &odd[at[q] + (size_t)e];

				memset(o, 0, sizeof(*o));
				o->key = odd_key(p, i, j, zs[e]);
				sample_box(b, rays, zs[e], seg, o);
			}
		}
		if (trc) {
#pragma omp atomic write
			rc = trc;
		}
		free(zs);
		for (int r = 0; r < SUB * SUB; r++)
			free(rays[r].at);
	}
	if (rc)
		goto out;
	rs_phase("grid: fitted walls: the odd cells' boxes");
	/* each node's volume and faces */
	{
		size_t w = 0;

#pragma omp parallel for schedule(static)
		for (size_t q = 0; q < nev; q++) {
			struct cand c = ev[q];
			const int *a = c.ijk;
			const struct odd_cell *six[6];	/* the odd cells beside: -x +x -y +y -z +z */
			double vol = c.vol;

			for (int s = 0; s < 6; s++) {	/* the pyramids facing the node */
				const int ax = s / 2, sg = s % 2 ? 1 : -1;
				const int x[3] = { a[0] + (ax == 0) * sg, a[1] + (ax == 1) * sg,
						   a[2] + (ax == 2) * sg };

				six[s] = find_odd(odd, nodd, p, x[0], x[1], x[2]);
				if (six[s])
					vol += six[s]->pyr[2 * ax + (sg < 0)];
			}
			for (int e = 0; e < 12; e++) {
				const int *l = vox_fcc_link[e];
				int ax[2], n = 0;
				float t = 0;

				for (int d = 0; d < 3; d++)
					if (l[d])
						ax[n++] = d;
				for (int h = 0; h < 2; h++) {	/* the odd cell A + o_a e_a, then A + o_b e_b */
					const int d = ax[h];
					const struct odd_cell *o = six[2 * d + (l[d] > 0)];

					if (o)
						t += o->tri[tri_index(ax[0], h ? l[ax[0]] : -l[ax[0]],
								      ax[1], h ? -l[ax[1]] : l[ax[1]])];
				}
				c.open[e] = t / (2 * TRI_POINTS);
			}
			c.vol = (float)vol;
			ev[q] = c;
		}
		for (size_t q = 0; q < nev; q++)
			if (ev[q].vol > 0)
				ev[w++] = ev[q];
		nev = w;
	}
	goto out;
nomem:
	rc = RS_ENOMEM;
out:
	free(near);
	free(col_at);
	free(at);
	free(odd);
	if (rc) {
		free(ev);
		return rc;
	}
	*out = ev;
	*nout = nev;
	return 0;
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

/* A shape's surface, at most (an extrusion's caps and sides, taken whole). */
static double shape_area(const struct room_shape *s)
{
	const double e[3] = { s->hi[0] - s->lo[0], s->hi[1] - s->lo[1], s->hi[2] - s->lo[2] };
	double len = 0, cap = 0;

	switch (s->kind) {
	case ROOM_SHAPE_SPHERE:
		return 4 * M_PI * s->radius * s->radius;
	case ROOM_SHAPE_CYLINDER:
		return 2 * M_PI * s->radius * (s->radius + e[s->axis]);
	case ROOM_SHAPE_EXTRUSION:
		for (int i = 0; i < s->npolygon; i++) {
			const double *a = s->polygon[i], *b = s->polygon[(i + 1) % s->npolygon];

			len += hypot(b[0] - a[0], b[1] - a[1]);
			cap += a[0] * b[1] - a[1] * b[0];
		}
		return len * e[s->axis] + fabs(cap);
	default:
		return 2 * (e[0] * e[1] + e[1] * e[2] + e[2] * e[0]);
	}
}

void vox_room_measure(const struct room *room, double *volume, double *area)
{
	const struct room_geometry *geo = &room->geo;
	double v = 0, a = 0;

	if (geo->voxels_path[0]) {	/* known once the file is read */
		*volume = *area = 0;
		return;
	}
	if (geo->mesh.ntri)
		vox_mesh_measure(&geo->mesh, &v, &a);
	else if (geo->has_box) {
		v = room->box[0] * room->box[1] * room->box[2];
		a = 2 * (room->box[0] * room->box[1] + room->box[1] * room->box[2] +
			 room->box[2] * room->box[0]);
	}
	for (int s = 0; s < geo->nshapes; s++)
		a += shape_area(&geo->shapes[s]);
	*volume = geo->nshapes ? 0 : v;
	*area = a;
}

size_t vox_cut_members(const struct room *room, const struct vox_plan *p)
{
	double volume, area;

	vox_room_measure(room, &volume, &area);
	if (!(area > 0))	/* a voxel file */
		return 2 * p->boundary;
	/* the cells a plane crosses per h^2 of it: |nx| + |ny| + |nz| <= sqrt 3 on the cubic
	 * grid; on the fcc lattice the dual cells' width along the normal over their volume
	 * 2 h^3, at most 1; edges and corners add more on coarse grids (measured in the rooms
	 * of rooms/ at 65 and 131 mm: at most 1.51 and 1.06) */
	return (size_t)ceil((p->fcc ? 1.35 : 2.0) * area / (p->h * p->h)) + 1024;
}

/* A member's bytes kept for the run: its cell, faces, area and material, and a group's lists
 * (the engines' coefficients and u^(n-1) among them). */
static size_t cut_kept(const struct vox_plan *p)
{
	return sizeof(size_t) + (p->fcc ? 12 : 6) * sizeof(float) + sizeof(float) + 1 +
	       7 * sizeof(double) + sizeof(size_t);
}

size_t vox_cut_kept(const struct vox_plan *p, size_t members)
{
	return members * cut_kept(p);
}

size_t vox_cut_memory(const struct vox_plan *p, size_t members, int device)
{
	const size_t faces = p->fcc ? 12 : 6, kept = cut_kept(p);
	size_t build;

	if (device)
		return members * (sizeof(long long) + faces * sizeof(float) + 5 * sizeof(double));
	if (!p->fcc)	/* building: a measured cell, its copy while sorting, its neighbours'
			 * indices, its parent, and its wall's area and material */
		return members * (kept + 2 * sizeof(struct cand) + faces * sizeof(int32_t) +
				  sizeof(size_t) + sizeof(float) + 1);
	/*
	 * On the fcc lattice the building's largest phases, each beside what is alive then:
	 * measuring (the keys of about two nodes near the surface and their copy while
	 * sorting, a measured cell for each, and the odd cells beside them, where about 1.8
	 * are: three allowed), and the stability check with the lists kept (over a member and
	 * about two nodes beside it: their neighbours, then the Lanczos iteration's vectors in
	 * their place, the operator's entries, at most one a neighbour, each a column and a
	 * value, and three numbers a row); and two counts per column of the grid.
	 */
	build = 4 * sizeof(size_t) + 2 * sizeof(struct cand) + 3 * sizeof(struct odd_cell);
	if (build < kept + 3 * (faces * (2 * sizeof(uint32_t) + sizeof(float)) +
				3 * sizeof(double)))
		build = kept + 3 * (faces * (2 * sizeof(uint32_t) + sizeof(float)) +
				    3 * sizeof(double));
	return members * build +
	       2 * (size_t)(p->room[0] + 2) * (size_t)(p->room[1] + 2) * sizeof(size_t);
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
 * Lend volume to each member below its bound (V < stab D, D the open fractions of its faces):
 * what it lacks comes from the member across one of its open faces with the most to spare
 * above its own bound, when that is enough. The mass matrix stays positive and the total
 * volume the same; since a wave varies little across two neighbours, moving volume between
 * them changes the room's modes far less than merging them would (merged, a sliver's links
 * would join its neighbour to nodes two cells away). Members it cannot help are merged next.
 */
static void lend_volume(struct cand *m, size_t n, const int32_t *nb, double stab, int faces)
{
	for (size_t q = 0; q < n; q++) {
		double D = 0, need, spare = 0;
		long best = -1;

		for (int f = 0; f < faces; f++)
			D += m[q].open[f];
		need = stab * (m[q].kappa > 1 ? m[q].kappa : 1) * D - m[q].vol;
		if (!(need > 0))
			continue;
		need *= 1 + 1e-6;	/* above the bound after rounding to float */
		for (int f = 0; f < faces; f++) {
			const long o = m[q].open[f] > 0 ? nb[q * (size_t)faces + (size_t)f] : -1;
			double Dj = 0, s;

			if (o < 0)
				continue;
			for (int e = 0; e < faces; e++)
				Dj += m[o].open[e];
			s = m[o].vol - stab * (m[o].kappa > 1 ? m[o].kappa : 1) * Dj * (1 + 1e-6);
			if (s > spare) {
				spare = s;
				best = o;
			}
		}
		if (best >= 0 && spare >= need) {
			m[q].vol = (float)(m[q].vol + need);
			m[best].vol = (float)(m[best].vol - need);
		}
	}
}

/*
 * Merge each unstable group into its neighbour across its widest open face (a full air cell
 * there joins as a member): until V >= stab D for every group, D the open fractions of its
 * faces to cells outside it (vx_cut_cells() gives stab). Returns the members merged; *m and
 * *n grow with the air cells taken, the list staying sorted by cell, and *nb (neighbours())
 * is made again for it.
 */
static long merge_groups(const struct vox_grid *g, struct cand **m, size_t *n, size_t **par,
			 int32_t **nb, double stab, int faces)
{
	const struct vox_plan *p = &g->plan;
	long merged = 0;

	for (;;) {
		double *V = calloc(*n + 1, sizeof(*V)), *D = calloc(*n + 1, sizeof(*D));
		float *K = calloc(*n + 1, sizeof(*K));
		float *best = calloc(*n + 1, sizeof(*best));
		long *to = malloc((*n + 1) * sizeof(*to));	/* a member, or -2 - the air cell */
		size_t *air = NULL, nair = 0;
		int any = 0;

		if (!V || !D || !best || !to || !K)
			goto fail;
		for (size_t q = 0; q < *n; q++) {
			const size_t r = root(*par, q);

			V[r] += (*m)[q].vol;
			K[r] = fmaxf(K[r], fmaxf((*m)[q].kappa, 1));
			to[q] = -1;
			for (int f = 0; f < faces; f++) {
				const size_t c = (*m)[q].cell + vox_cut_offset(p, faces, f);
				const long o = (*nb)[q * (size_t)faces + (size_t)f];
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
			if (root(*par, q) != q || V[q] >= stab * K[q] * D[q] || to[q] == -1)
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
					nm[w].vol = faces == 12 ? 2 : 1;
					for (int f = 0; f < faces; f++)
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
			free(*nb);
			if (!(*nb = neighbours(p, *m, *n, faces)))
				goto fail;
		}
		free(V);
		free(D);
		free(K);
		free(best);
		free(to);
		free(air);
		if (!any)
			return merged;
		continue;
fail:
		free(V);
		free(D);
		free(K);
		free(best);
		free(to);
		free(air);
		return -1;
	}
}

/* A walk along two sorted lists of cells at once (the members', the layers'), to cells that
 * rise: as neighbours() walks, without a search for each. */
struct walk {
	size_t a, e;
};

static void walk_from(struct walk *w, const size_t *mc, size_t n, const size_t *r, size_t nr,
		      size_t c)
{
	w->a = lower_key(mc, n, c);
	w->e = lower_key(r, nr, c);
}

/* To cell c, no lower than the last: its index in mc in *im (or -1), in r in *ir (or nr). */
static void walk_to(struct walk *w, const size_t *mc, size_t n, const size_t *r, size_t nr,
		    size_t c, long *im, size_t *ir)
{
	while (w->a < n && mc[w->a] < c)
		w->a++;
	while (w->e < nr && r[w->e] < c)
		w->e++;
	*im = w->a < n && mc[w->a] == c ? (long)w->a : -1;
	*ir = w->e < nr && r[w->e] == c ? w->e : nr;
}

/*
 * The fcc lattice's step is stable when lambda^2 a E <= 4, E the largest eigenvalue of
 * M^-1 K (M the groups' volumes, K the faces' open fractions; a = 1/2, cut_coefficients() in
 * solver/fdtd.c); the interior alone has E = 8, at the limit lambda = 1. The bound lend_volume()
 * and merge_groups() keep, V >= stab D, holds each cell against its own neighbours; a layer of
 * small cells along a wall can still move against the nodes behind it faster than that. So E
 * is measured: by the Lanczos iteration (lanczos()) over the groups and two layers of the
 * nodes beside them (the others held at 0, which can only lower E: Cauchy's interlacing).
 * Below lambda = 1 the interior's modes lie below the bound by 1 / lambda^2, so an unstable
 * mode stands apart. In the concert hall at 1 kHz the iteration's E settled to 9 digits in 60
 * steps, where 120 steps of power iteration reached 9.53 of its 9.84. Returns 1 when unstable,
 * with the groups' amplitudes in amp (per member), 0 when stable, -1 without memory; the
 * Lanczos steps taken in *steps.
 */
#define CHECK_MIN_STEPS 40	/* steps of the Lanczos iteration, at least */
#define CHECK_MAX_STEPS 200	/* and at most */
#define CHECK_EVERY 10		/* its eigenvalue looked at every so many steps */
#define CHECK_SETTLED 1e-5	/* and settled when it moved by no more (relative) over two looks */
#define CHECK_MARGIN 0.998	/* E is found from below */
#define STABLE_ROUNDS 12	/* rounds of lending and merging, at most */

/* Deterministic sums over [0, n): fixed blocks, each summed in order on some thread, then the
 * blocks in order, so that the result does not depend on the number of threads. */
#define SUM_BLOCKS 256

/* Block e's first index of [0, n) (its last is block e + 1's first, less one). */
static inline size_t block_at(size_t n, int e)
{
	return n * (size_t)e / SUM_BLOCKS;
}

/* The blocks' sums, in order. */
static double blocks_sum(const double *part)
{
	double t = 0;

	for (int e = 0; e < SUM_BLOCKS; e++)
		t += part[e];
	return t;
}

/* a . b, and b . b in *bb when bb is given, summed alike */
static double dot_blocks(const double *a, const double *b, size_t n, double *bb)
{
	double part[SUM_BLOCKS], part2[SUM_BLOCKS];

#pragma omp parallel for schedule(static)
	for (int e = 0; e < SUM_BLOCKS; e++) {
		double x = 0, x2 = 0;

		for (size_t i = block_at(n, e), hi = block_at(n, e + 1); i < hi; i++) {
			x += a[i] * b[i];
			x2 += b[i] * b[i];
		}
		part[e] = x;
		part2[e] = x2;
	}
	if (bb)
		*bb = blocks_sum(part2);
	return blocks_sum(part);
}

/* The operator whose largest eigenvalue the check finds, A = V^-1/2 K V^-1/2 over the groups
 * (rows 0 to ng - 1) and the layers beside them (V the volumes; the nodes beyond the layers
 * held at 0), as a sparse matrix: each row's diagonal in diag, the others by column. */
struct op {
	size_t N, ng, n;
	const size_t *at;	/* row i's entries: at[i] .. at[i + 1] */
	const uint32_t *col;
	const float *val;
	const double *diag;
	const double *V;	/* the volumes' square roots */
	const size_t *gid;	/* each member's group */
};

/* w = A y - b p (p read only when b is not 0); returns y . w, summed as dot_blocks() sums.
 * The blocks are taken as they come: their sums do not depend on which thread made them. */
static double op_apply(const struct op *o, const double *y, const double *p, double b, double *w)
{
	double part[SUM_BLOCKS];
	const size_t N = o->N;

#pragma omp parallel for schedule(dynamic, 1)
	for (int e = 0; e < SUM_BLOCKS; e++) {
		double x = 0;

		for (size_t i = block_at(N, e), hi = block_at(N, e + 1); i < hi; i++) {
			double r = o->diag[i] * y[i];

			for (size_t k = o->at[i]; k < o->at[i + 1]; k++)
				r += (double)o->val[k] * y[o->col[k]];
			if (b != 0)
				r -= b * p[i];
			w[i] = r;
			x += y[i] * r;
		}
		part[e] = x;
	}
	return blocks_sum(part);
}

/* w -= a v, then returns w . w, summed as dot_blocks() sums */
static double axpy_norm(double *w, const double *v, double a, size_t n)
{
	double part[SUM_BLOCKS];

#pragma omp parallel for schedule(static)
	for (int e = 0; e < SUM_BLOCKS; e++) {
		double x = 0;

		for (size_t i = block_at(n, e), hi = block_at(n, e + 1); i < hi; i++) {
			w[i] -= a * v[i];
			x += w[i] * w[i];
		}
		part[e] = x;
	}
	return blocks_sum(part);
}

/* The largest eigenvalue of the k x k tridiagonal matrix of al and be; d: work space of 2 k. */
static double top_ritz(const double *al, const double *be, int k, double *d)
{
	memcpy(d, al, (size_t)k * sizeof(*d));
	memcpy(d + k, be, (size_t)k * sizeof(*d));
	if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', k, d, d + k, NULL, 1))
		return NAN;
	return d[k - 1];	/* ascending */
}

/*
 * The Lanczos iteration on A from a fixed start, spread over every mode: the tridiagonal
 * matrix's diagonal in al, its off-diagonal in be; returns the steps taken. Without s it runs
 * until the largest eigenvalue of that matrix (top_ritz) moves by at most CHECK_SETTLED of
 * itself over 2 CHECK_EVERY steps, between CHECK_MIN_STEPS and CHECK_MAX_STEPS (or until the
 * Krylov space closes), the eigenvalue in *top; given s, it runs `steps` steps again through
 * the same vectors, bit for bit, and sums s_j v_j into acc. v, u, w: vectors of N + 1; d: work
 * space of 2 CHECK_MAX_STEPS.
 */
static int lanczos_run(const struct op *o, int steps, double *al, double *be, double *top,
		       const double *s, double *acc, double *v, double *u, double *w, double *d)
{
	const size_t N = o->N;
	double vv, *t, was[2] = { NAN, NAN };
	int k = 0;

#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < N; i++)
		v[i] = 1 + 0.5 * sin(12.9898 * (double)i);
	vv = sqrt(dot_blocks(v, v, N, NULL));
#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < N; i++) {
		v[i] /= vv;
		if (s)
			acc[i] = 0;
	}
	while (k < steps) {
		double b;

		al[k] = op_apply(o, v, u, k ? be[k - 1] : 0, w);
		if (s) {
#pragma omp parallel for schedule(static)
			for (size_t i = 0; i < N; i++)
				acc[i] += s[k] * v[i];
		}
		be[k] = b = sqrt(axpy_norm(w, v, al[k], N));
		k++;
		if (!(b > 1e-12 * fabs(al[0])))
			break;	/* an invariant subspace: al holds its eigenvalues */
		if (!s && k % CHECK_EVERY == 0) {
			const double now = top_ritz(al, be, k, d);

			if (k >= CHECK_MIN_STEPS && fabs(now - was[0]) <= CHECK_SETTLED * fabs(now))
				break;
			was[0] = was[1];
			was[1] = now;
		}
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < N; i++)
			w[i] /= b;
		t = u;
		u = v;
		v = w;
		w = t;
	}
	if (top)
		*top = top_ritz(al, be, k, d);
	return k;
}

/*
 * The check's eigenvalue E: the largest of the Lanczos iteration's tridiagonal matrix, which
 * lies below A's largest and approaches it far faster than power iteration's Rayleigh
 * quotient. c: lambda^2 a. Returns 1 when c E passes the bound, with each member's share of
 * the mode (|z| over the largest, from the Ritz vector) in amp; 0 when it does not; -1
 * without memory.
 */
static int lanczos(const struct op *o, double c, double *E, int *steps_taken, float *amp,
		   double *v, double *u, double *w)
{
	const size_t steps = CHECK_MAX_STEPS;
	double *al = malloc(4 * steps * sizeof(*al)), *be = al + steps, *d = be + steps;
	double *s = NULL, *acc = NULL, top = 0;
	int k, rc = -1;

	if (!al)
		return -1;
	if (!o->N) {	/* nothing to check */
		*E = 0;
		rc = 0;
		goto out;
	}
	*steps_taken = k = lanczos_run(o, (int)steps, al, be, E, NULL, NULL, v, u, w, d);
	if (isnan(*E))
		goto out;
	if (!(rc = c * *E > 4 * CHECK_MARGIN))
		goto out;
	rc = -1;
	memcpy(d, al, (size_t)k * sizeof(*d));
	memcpy(d + k, be, (size_t)k * sizeof(*d));
	if (!(s = malloc((size_t)k * (size_t)k * sizeof(*s))) ||
	    !(acc = malloc((o->N + 1) * sizeof(*acc))) ||
	    LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', k, d, d + k, s, k))
		goto out;
	memcpy(d, s + (size_t)(k - 1) * (size_t)k, (size_t)k * sizeof(*d));	/* its vector */
	lanczos_run(o, k, al, be, NULL, d, acc, v, u, w, d + k);
	for (size_t i = 0; i < o->ng; i++)
		top = fmax(top, fabs(acc[i] / o->V[i]));
	for (size_t q = 0; q < o->n; q++)
		amp[q] = (float)(top > 0 ? fabs(acc[o->gid[q]] / o->V[o->gid[q]]) / top : 0);
	rc = 1;
out:
	free(al);
	free(s);
	free(acc);
	return rc;
}

/* What k_row() reads: the members, their groups and each member's and layer node's
 * neighbours (nb: an index below N, N for air held at 0, above N for none). */
struct k_rows {
	const struct cand *m;
	const uint32_t *nb;
	const size_t *gat, *gmem;
	size_t n, ng, N;
	int faces;
};

/*
 * Row i of K (the groups' rows, then the layers'): its diagonal in *d, the rest merged by
 * column, in order of column, into c and k; returns their number. A member's face towards
 * its own group adds nothing; one towards air held at 0 only the diagonal. c and k hold
 * faces times the group's members.
 */
static size_t k_row(const struct k_rows *r, size_t i, uint32_t *c, double *k, double *d)
{
	const int faces = r->faces;
	size_t nk = 0, u = 0;
	double dd = 0;

	if (i < r->ng) {
		for (size_t x = r->gat[i]; x < r->gat[i + 1]; x++) {
			const size_t q = r->gmem[x];

			for (int f = 0; f < faces; f++) {
				const uint32_t to = r->nb[q * (size_t)faces + (size_t)f];

				if (to > r->N || to == i)
					continue;
				dd += r->m[q].open[f];
				if (to < r->N) {
					c[nk] = to;
					k[nk++] = -(double)r->m[q].open[f];
				}
			}
		}
	} else {
		const size_t q = r->n + (i - r->ng);

		for (int f = 0; f < faces; f++) {
			const uint32_t to = r->nb[q * (size_t)faces + (size_t)f];

			if (to > r->N)
				continue;
			dd += 1;
			if (to < r->N) {
				c[nk] = to;
				k[nk++] = -1;
			}
		}
	}
	for (size_t a = 1; a < nk; a++) {	/* by column, keeping the faces' order */
		const uint32_t cc = c[a];
		const double kk = k[a];
		size_t b = a;

		for (; b > 0 && c[b - 1] > cc; b--) {
			c[b] = c[b - 1];
			k[b] = k[b - 1];
		}
		c[b] = cc;
		k[b] = kk;
	}
	for (size_t a = 0; a < nk; a++) {
		if (u && c[u - 1] == c[a]) {
			k[u - 1] += k[a];
		} else {
			c[u] = c[a];
			k[u++] = k[a];
		}
	}
	*d = dd;
	return u;
}

/*
 * A = V^-1/2 K V^-1/2 as a sparse matrix into o (V: the volumes' square roots), in two
 * passes over K's rows: their lengths, then their entries. Returns 0, or -1 without memory,
 * with what it allocated in *at, *col, *val and *diag either way.
 */
static int op_build(struct op *o, const struct k_rows *r, const double *V, size_t **at,
		    uint32_t **col, float **val, double **diag)
{
	const size_t N = r->N;
	int fail = 0;

	*at = malloc((N + 1) * sizeof(**at));
	*diag = malloc((N ? N : 1) * sizeof(**diag));
	if (!*at || !*diag)
		return -1;
	(*at)[0] = 0;
	for (int pass = 0; pass < 2 && !fail; pass++) {
#pragma omp parallel
		{
			size_t cap = 0;
			uint32_t *c = NULL;
			double *k = NULL;

#pragma omp for schedule(dynamic, 4096)
			for (size_t i = 0; i < N; i++) {
				const size_t need = (size_t)r->faces *
						    (i < r->ng ? r->gat[i + 1] - r->gat[i] : 1);
				size_t nk;
				double d;

				if (fail)
					continue;
				if (need > cap) {
					uint32_t *tc = realloc(c, need * sizeof(*c));
					double *tk = tc ? realloc(k, need * sizeof(*k)) : NULL;

					if (tc)
						c = tc;
					if (tk)
						k = tk;
					if (!tc || !tk) {
#pragma omp atomic write
						fail = 1;
						continue;
					}
					cap = need;
				}
				nk = k_row(r, i, c, k, &d);
				if (!pass) {
					(*at)[i + 1] = nk;
					(*diag)[i] = d / (V[i] * V[i]);
					continue;
				}
				for (size_t e = 0; e < nk; e++) {
					(*col)[(*at)[i] + e] = c[e];
					(*val)[(*at)[i] + e] = (float)(k[e] / (V[i] * V[c[e]]));
				}
			}
			free(c);
			free(k);
		}
		if (pass || fail)
			continue;
		for (size_t i = 0; i < N; i++)
			(*at)[i + 1] += (*at)[i];
		*col = malloc(((*at)[N] ? (*at)[N] : 1) * sizeof(**col));
		*val = malloc(((*at)[N] ? (*at)[N] : 1) * sizeof(**val));
		fail = !*col || !*val;
	}
	if (fail)
		return -1;
	o->N = N;
	o->ng = r->ng;
	o->n = r->n;
	o->at = *at;
	o->col = *col;
	o->val = *val;
	o->diag = *diag;
	o->V = V;
	return 0;
}

static int check_stability(const struct vox_grid *g, const struct cand *m, size_t n,
			   size_t *par, double lambda, int faces, float *amp,
			   double *E, int *steps)
{
	const struct vox_plan *p = &g->plan;
	const double a = faces == 12 ? 0.5 : 1, whole = faces == 12 ? 2 : 1;
	size_t *gid = malloc((n ? n : 1) * sizeof(*gid)), ng = 0, nring = 0;
	size_t *ring = NULL;	/* the nodes beside, sorted by cell */
	size_t *mc = malloc((n ? n : 1) * sizeof(*mc));	/* the members' cells, as m's */
	size_t *gat = NULL, *gmem = NULL;	/* group e's members: gmem[gat[e] .. gat[e + 1]) */
	double *V = NULL, *y = NULL, *w = NULL, *u = NULL, *diag = NULL;
	uint32_t *nb = NULL;	/* each member's and each layer node's neighbours */
	size_t *at = NULL;	/* A's rows */
	uint32_t *col = NULL;
	float *val = NULL;
	int rc = -1;

	if (!gid || !mc) {
		free(gid);
		free(mc);
		return -1;
	}
	for (size_t q = 0; q < n; q++) {
		gid[q] = SIZE_MAX;
		mc[q] = m[q].cell;
	}
	for (size_t q = 0; q < n; q++) {	/* groups numbered by their roots */
		const size_t r = root(par, q);

		if (gid[r] == SIZE_MAX)
			gid[r] = ng++;
		gid[q] = gid[r];
	}
	if (!(gat = calloc(ng + 2, sizeof(*gat))) || !(gmem = malloc((n ? n : 1) * sizeof(*gmem))))
		goto out;
	for (size_t q = 0; q < n; q++)
		gat[gid[q] + 2]++;
	for (size_t e = 0; e < ng; e++)
		gat[e + 2] += gat[e + 1];
	for (size_t q = 0; q < n; q++)
		gmem[gat[gid[q] + 1]++] = q;
	/* two layers of air nodes beside the members, each thread's found apart, then joined */
	for (int layer = 0; layer < 2; layer++) {
		const size_t count = layer ? nring : n;
		size_t *add = NULL, nadd = 0;
		int fail = 0;	/* a thread ran out of memory */

#pragma omp parallel
		{
			size_t *mine = NULL, nmine = 0, cap = 0;

#pragma omp for schedule(static) collapse(2)
			for (int f = 0; f < faces; f++)
				for (int slice = 0; slice < PSORT_SLICES; slice++) {
					const ptrdiff_t off = vox_cut_offset(p, faces, f);
					const size_t lo = count * (size_t)slice / PSORT_SLICES,
						     hi = count * (size_t)(slice + 1) / PSORT_SLICES;
					struct walk wk;

					if (lo == hi)
						continue;
					walk_from(&wk, mc, n, ring, nring,
						  beside(layer ? ring[lo] : mc[lo], off));
					for (size_t q = lo; q < hi && !fail; q++) {
						const size_t c0 = layer ? ring[q] : mc[q];
						const size_t c = c0 + (size_t)off;
						long im;
						size_t ir;

						if ((off < 0 && c0 < (size_t)-off) || c >= p->cells ||
						    g->cls[c] == VOX_PAD)
							continue;
						walk_to(&wk, mc, n, ring, nring, c, &im, &ir);
						if (im >= 0 || ir < nring)
							continue;
						if (nmine == cap) {
							size_t *t = realloc(mine, (2 * cap + 64) *
											  sizeof(*t));

							if (!t) {
#pragma omp atomic write
								fail = 1;
								break;
							}
							mine = t;
							cap = 2 * cap + 64;
						}
						mine[nmine++] = c;
					}
				}
#pragma omp critical
			{
				if (append((void **)&add, &nadd, mine, nmine, sizeof(*mine)))
					fail = 1;
			}
			free(mine);
		}
		if (fail || append((void **)&ring, &nring, add, nadd, sizeof(*add))) {
			free(add);
			goto out;
		}
		free(add);
		nring = sort_unique(ring, nring);
		rs_phase(layer ? "grid: fitted walls' check: the second layer beside"
			       : "grid: fitted walls' check: the first layer beside");
	}
	{
		const size_t N = ng + nring;

		if (N + 2 > UINT32_MAX)	/* the neighbours' indices are 32 bits */
			goto out;
		if (!(V = calloc(N + 1, sizeof(*V))))
			goto out;
		for (size_t q = 0; q < n; q++)
			V[gid[q]] += m[q].vol;
		for (size_t r = 0; r < nring; r++)
			V[ng + r] = whole;
		/* each member's and each layer node's neighbours: an index, or N for none (held
		 * at 0), in nb[] (faces per member, then per layer node) */
		if (!(nb = malloc((n + nring) * (size_t)faces * sizeof(*nb))))
			goto out;
#pragma omp parallel for schedule(static) collapse(2)
		for (int f = 0; f < faces; f++)
			for (int slice = 0; slice < 2 * PSORT_SLICES; slice++) {
				const ptrdiff_t off = vox_cut_offset(p, faces, f);
				const int ofr = slice >= PSORT_SLICES;	/* the layers' slices */
				const size_t cnt = ofr ? nring : n, e = (size_t)(slice % PSORT_SLICES);
				const size_t lo = cnt * e / PSORT_SLICES, hi = cnt * (e + 1) / PSORT_SLICES;
				struct walk wk;

				if (lo == hi)
					continue;
				walk_from(&wk, mc, n, ring, nring, beside(ofr ? ring[lo] : mc[lo], off));
				for (size_t q = lo; q < hi; q++) {
					const size_t c0 = ofr ? ring[q] : mc[q], c = c0 + (size_t)off;
					size_t to = N + 1, ir;
					long im;

					/* else off the grid, or a member's shut face */
					if (!(off < 0 && c0 < (size_t)-off) && c < p->cells &&
					    (ofr || m[q].open[f] > 0)) {
						walk_to(&wk, mc, n, ring, nring, c, &im, &ir);
						if (im >= 0)
							to = gid[im];
						else if (ir < nring)
							to = ng + ir;
						else if (g->cls[c] != VOX_PAD)
							to = N;	/* air beyond the layers: held at 0 */
					}
					nb[((ofr ? n : 0) + q) * (size_t)faces + (size_t)f] = (uint32_t)to;
				}
			}
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < N; i++)
			V[i] = sqrt(V[i]);	/* from here V holds the volumes' square roots */
		{
			const struct k_rows kr = { m, nb, gat, gmem, n, ng, N, faces };
			struct op o = { 0 };

			rs_phase("grid: fitted walls' check: neighbours");
			if (op_build(&o, &kr, V, &at, &col, &val, &diag))
				goto out;
			rs_phase("grid: fitted walls' check: the operator");
			free(nb);
			nb = NULL;
			y = malloc((N + 1) * sizeof(*y));
			w = malloc((N + 1) * sizeof(*w));
			u = malloc((N + 1) * sizeof(*u));
			if (!y || !w || !u)
				goto out;
			o.gid = gid;
			rc = lanczos(&o, lambda * lambda * a, E, steps, amp, y, u, w);
		}
	}
out:
	free(gid);
	free(mc);
	free(gat);
	free(gmem);
	free(ring);
	free(V);
	free(y);
	free(w);
	free(u);
	free(nb);
	free(at);
	free(col);
	free(val);
	free(diag);
	return rc;
}

int vx_cut_cells(struct build *b, struct rs_error *err)
{
	struct vox_grid *g = b->g;
	const struct vox_plan *p = &g->plan;
	const int faces = p->fcc ? 12 : 6;
	/*
	 * A group is stable when V >= stab D. On the cubic grid, lambda = courant / sqrt 3 and
	 * stab = lambda^2 / 2: Gershgorin's bound on the finite-volume Laplacian, which the
	 * interior meets at the Courant limit. On the fcc lattice (lambda = courant, faces of
	 * weight 1/2) Gershgorin's bound is 3/2 times the interior's largest eigenvalue, which
	 * sets the limit; stab = lambda^2 / 6 is the bound scaled to it, as the interior meets it.
	 */
	const double stab = b->room->courant * b->room->courant / 6;	/* both, alike */
	struct zbins z = { 0 };
	struct cand_list all = { 0 };
	struct cand *m = NULL;
	size_t n = 0, *par = NULL, n0 = 0;
	int round;
	struct cand *saved = NULL;	/* fcc: the members as measured */
	int32_t *nb = NULL;		/* neighbours() of m */
	float *amp = NULL;
	struct vox_cut *cut = NULL;
	long merged;
	int rc = 0;

	if (g->zbase != 0 || p->room[2] != b->whole.room[2])
		return rs_fail(err, RS_EINPUT, "grid.walls: fitted builds the whole grid in one "
			       "process so far: run it without ranks");
	if (b->tri && zbins_make(&z, b))
		goto out_nomem;
	if (p->fcc) {
		if ((rc = measure_fcc(b, &z, &all.c, &all.n)))
			goto out_nomem;
		goto measured;
	}
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
measured:
	rs_phase("grid: fitted walls' cells measured");
	psort(all.c, all.n, sizeof(*all.c), cand_cmp);
	/* the members: cells whose update differs from the staircase's (on the fcc lattice a
	 * node with a link to padding has walls) */
	for (size_t q = 0; q < all.n; q++) {
		const struct cand *c = &all.c[q];
		int full = c->vol == (faces == 12 ? 2 : 1) &&
			   (faces == 12 || g->cls[c->cell] == VOX_AIR);

		for (int f = 0; f < faces; f++)
			full &= c->open[f] == 1 &&
				(faces == 6 ||
				 g->cls[c->cell + vox_cut_offset(p, faces, f)] != VOX_PAD);
		if (!full)
			all.c[n++] = *c;
	}
	m = all.c;
	all.c = NULL;
	if (!(nb = neighbours(p, m, n, faces)))
		goto out_nomem;
	/* a face towards a cell of no volume is shut, one towards a full air cell open: both
	 * sides of every face then weigh it alike */
#pragma omp parallel for schedule(static)
	for (size_t q = 0; q < n; q++)
		for (int f = 0; f < faces; f++)
			if (nb[q * (size_t)faces + (size_t)f] < 0)
				m[q].open[f] = g->cls[m[q].cell + vox_cut_offset(p, faces, f)] ==
							       VOX_PAD
						       ? 0 : 1;
	if (!(par = malloc((n ? n : 1) * sizeof(*par))))
		goto out_nomem;
	if (faces == 12) {	/* the measured members, kept for another round */
		if (!(saved = malloc((n ? n : 1) * sizeof(*saved))) ||
		    !(amp = malloc((n ? n : 1) * sizeof(*amp))))
			goto out_nomem;
		pcopy(saved, m, n * sizeof(*m));
		n0 = n;
	}
	for (round = 0;; round++) {
		double E = 0;
		int unstable, steps = 0;

		for (size_t q = 0; q < n; q++)
			par[q] = q;
		if (round) {	/* the list is the measured one again */
			free(nb);
			if (!(nb = neighbours(p, m, n, faces)))
				goto out_nomem;
		}
		if (faces == 12)
			lend_volume(m, n, nb, stab, faces);
		if ((merged = merge_groups(g, &m, &n, &par, &nb, stab, faces)) < 0)
			goto out_nomem;
		if (faces != 12)
			break;
		if (n > n0) {
			float *t = realloc(amp, n * sizeof(*amp));

			if (!t)
				goto out_nomem;
			amp = t;
		}
		rs_phase("grid: fitted walls' volumes lent and merged");
		if ((unstable = check_stability(g, m, n, par, b->room->courant, faces, amp, &E,
						&steps)) < 0)
			goto out_nomem;
		if (rs_phases()) {
			char what[160];

			snprintf(what, sizeof(what), "grid: fitted walls' stability checked (lambda^2 "
				 "E / 8 = %.6f, %d Lanczos steps)",
				 b->room->courant * b->room->courant * E / 8, steps);
			rs_phase(what);
		}
		if (!unstable)
			break;
		if (round == STABLE_ROUNDS) {
			rc = rs_fail(err, RS_EINPUT, "grid.walls: fitted: the cut cells are not stable "
				     "at grid.courant %g after %d rounds of lending and merging "
				     "(lower grid.courant)", b->room->courant, round);
			goto out;
		}
		/* the members the unstable mode moves most ask more of the bound, and it starts
		 * again from the measured members */
		for (size_t q = 0; q < n; q++) {
			const long o = amp[q] >= 0.3f ? find(saved, n0, m[q].cell) : -1;

			if (o >= 0)
				saved[o].kappa = 1.5f * fmaxf(saved[o].kappa, 1);
		}
		{
			struct cand *t = realloc(m, n0 * sizeof(*m));
			size_t *u = realloc(par, n0 * sizeof(*par));

			if (t)
				m = t;
			if (u)
				par = u;
			if (!t || !u)
				goto out_nomem;
		}
		memcpy(m, saved, n0 * sizeof(*m));
		n = n0;
	}
	/* the groups, each's members together in the order of their cells */
	if (!(cut = calloc(1, sizeof(*cut))) ||
	    !(cut->cell = malloc((n ? n : 1) * sizeof(*cut->cell))) ||
	    !(cut->open = malloc((n ? n : 1) * (size_t)faces * sizeof(*cut->open))) ||
	    !(cut->area = calloc(n ? n : 1, sizeof(*cut->area))) ||
	    !(cut->material = calloc(n ? n : 1, sizeof(*cut->material))) ||
	    !(cut->gstart = malloc((n + 1) * sizeof(*cut->gstart))) ||
	    !(cut->vol = calloc(n ? n : 1, sizeof(*cut->vol))) ||
	    !(cut->loss = calloc(n ? n : 1, sizeof(*cut->loss))))
		goto out_nomem;
	{
		size_t *count = calloc(n + 1, sizeof(*count)), *gid = malloc((n ? n : 1) * sizeof(*gid));
		float *area = malloc((n ? n : 1) * sizeof(*area));	/* by member, as in m */
		uint8_t *mat = calloc(n ? n : 1, sizeof(*mat));
		size_t ng = 0;

		if (!count || !gid || !area || !mat) {
			free(count);
			free(gid);
			free(area);
			free(mat);
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
		/* the wall inside each member closes its open faces: its area is the norm of their
		 * area vectors' sum (a face's: on the cubic grid the unit step, on the fcc lattice
		 * the link over 2), in h^2; its material the nearest surface's */
#pragma omp parallel
		{
			const struct tri *near = NULL;

#pragma omp for schedule(dynamic, 1024)
			for (size_t q = 0; q < n; q++) {
				double wall[3] = { 0, 0, 0 }, dd = 0;

				for (int f = 0; f < faces; f++)
					for (int d = 0; d < 3; d++) {
						const int o = faces == 12 ? vox_fcc_link[f][d]
									  : (f / 2 == d) * (f % 2 ? 1 : -1);

						wall[d] += (double)m[q].open[f] * o;
					}
				for (int d = 0; d < 3; d++)
					dd += (faces == 12 ? 0.25 : 1) * wall[d] * wall[d];
				area[q] = (float)sqrt(dd);
				if (dd > 0)
					mat[q] = (uint8_t)cell_material(b, &m[q], &near);
			}
		}
		for (size_t q = 0; q < n; q++) {
			const size_t at = count[gid[q]]++;

			cut->cell[at] = m[q].cell;
			memcpy(&cut->open[at * (size_t)faces], m[q].open,
			       (size_t)faces * sizeof(*cut->open));
			cut->vol[gid[q]] += m[q].vol;
			if (area[q] > 0) {
				const struct room_material *rm = &b->room->materials[mat[q]];

				cut->area[at] = area[q];
				cut->material[at] = mat[q];
				if (!room_material_banded(rm))
					cut->loss[gid[q]] += rm->beta * area[q];
			}
			cut->volume += m[q].vol;
		}
		cut->n = n;
		cut->faces = faces;
		cut->rounds = round;
		cut->ngroups = ng;
		cut->merged = (size_t)merged;
		free(count);
		free(gid);
		free(area);
		free(mat);
	}
	g->cut = cut;
	cut = NULL;
	goto out;

out_nomem:
	rc = rs_fail(err, RS_ENOMEM, "out of memory for the fitted walls' cut cells");
out:
	cut_free(cut);
	free(nb);
	free(par);
	free(m);
	free(saved);
	free(amp);
	free(all.c);
	free(z.at);
	free(z.idx);
	return rc;
}
