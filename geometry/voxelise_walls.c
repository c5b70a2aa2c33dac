/*
 * voxelise_walls.c - the walls of the cubic grid: the surface responsible for each wall, by
 * the nearest triangle or the shapes, and its area correction (voxelise.c, step 4).
 */
#include "voxelise.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

/* Bins of BIN_CELLS cells holding the triangles whose bounds meet them. */
int vx_make_bins(struct build *b, struct rs_error *err)
{
	const struct vox_plan *p = &b->whole;
	const double side = BIN_CELLS * p->h;
	size_t nbins = 1;
	int top;

	for (int d = 0; d < 3; d++)
		b->nbin[d] = (p->room[d] + BIN_CELLS - 1) / BIN_CELLS;
	b->all_k = b->nbin[2];
	b->bin_k0 = b->k0 / BIN_CELLS - BIN_BESIDE;
	b->bin_k0 = b->bin_k0 < 0 ? 0 : b->bin_k0;
	top = b->k1 / BIN_CELLS + BIN_BESIDE;
	b->nbin[2] = (top < b->all_k - 1 ? top : b->all_k - 1) - b->bin_k0 + 1;
	for (int d = 0; d < 3; d++)
		nbins *= (size_t)b->nbin[d];
	if (!(b->bin_at = calloc(nbins + 1, sizeof(*b->bin_at))))
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu bins", nbins);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < b->ntri; t++) {
			int m0[3], m1[3];

			for (int d = 0; d < 3; d++) {
				const struct tri *tr = &b->tri[t];
				/* a triangle on the bounds' far side (the mesh's own walls lie
				 * there) goes into the last bin, as a point there finds it */
				const double last = (d == 2 ? b->all_k : b->nbin[d]) - 1;

				m0[d] = (int)fmin(last, fmax(0, floor((tr->lo[d] - b->room->origin[d]) /
								      side)));
				m1[d] = (int)fmax(0, fmin(last, floor((tr->hi[d] - b->room->origin[d]) /
								     side)));
			}
			m0[2] = (m0[2] > b->bin_k0 ? m0[2] : b->bin_k0) - b->bin_k0;	/* held */
			m1[2] = (m1[2] < b->bin_k0 + b->nbin[2] - 1 ? m1[2]
								   : b->bin_k0 + b->nbin[2] - 1) - b->bin_k0;
			for (int k = m0[2]; k <= m1[2]; k++)
				for (int j = m0[1]; j <= m1[1]; j++)
					for (int i = m0[0]; i <= m1[0]; i++) {
						size_t bin = (size_t)i + (size_t)b->nbin[0] *
							     ((size_t)j + (size_t)b->nbin[1] * k);

						if (pass)	/* bin_at[bin] moves on */
							b->bin_tri[b->bin_at[bin]++] = (uint32_t)t;
						else
							b->bin_at[bin + 1]++;
					}
		}
		if (pass)
			break;
		for (size_t bin = 0; bin < nbins; bin++)
			b->bin_at[bin + 1] += b->bin_at[bin];
		if (!(b->bin_tri = malloc((b->bin_at[nbins] + 1) * sizeof(*b->bin_tri))))
			return rs_fail(err, RS_ENOMEM, "out of memory for the triangle bins");
	}
	/* each bin_at[bin] now ends its bin, where bin + 1 starts */
	memmove(b->bin_at + 1, b->bin_at, nbins * sizeof(*b->bin_at));
	b->bin_at[0] = 0;
	return 0;
}

/* Squared distance from x to triangle t (Ericson, Real-Time Collision Detection 5.1.5). */
static double tri_distance2(const struct tri *t, const double x[3])
{
	const double *a = t->v[0], *b = t->v[1], *c = t->v[2];
	double ab[3], ac[3], ap[3], bp[3], cp[3], q[3], d1, d2, d3, d4, d5, d6, va, vb, vc, v, w;
	double r = 0;

	for (int i = 0; i < 3; i++) {
		ab[i] = b[i] - a[i];
		ac[i] = c[i] - a[i];
		ap[i] = x[i] - a[i];
		bp[i] = x[i] - b[i];
		cp[i] = x[i] - c[i];
	}
#define DOT(p, s) ((p)[0] * (s)[0] + (p)[1] * (s)[1] + (p)[2] * (s)[2])
	d1 = DOT(ab, ap);
	d2 = DOT(ac, ap);
	d3 = DOT(ab, bp);
	d4 = DOT(ac, bp);
	d5 = DOT(ab, cp);
	d6 = DOT(ac, cp);
#undef DOT
	vc = d1 * d4 - d3 * d2;
	vb = d5 * d2 - d1 * d6;
	va = d3 * d6 - d5 * d4;
	if (d1 <= 0 && d2 <= 0) {
		v = 0, w = 0;
	} else if (d3 >= 0 && d4 <= d3) {
		v = 1, w = 0;
	} else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
		v = d1 / (d1 - d3), w = 0;
	} else if (d6 >= 0 && d5 <= d6) {
		v = 0, w = 1;
	} else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
		v = 0, w = d2 / (d2 - d6);
	} else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
		w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
		v = 1 - w;
	} else {
		v = vb / (va + vb + vc);
		w = vc / (va + vb + vc);
	}
	for (int i = 0; i < 3; i++) {
		q[i] = a[i] + ab[i] * v + ac[i] * w - x[i];
		r += q[i] * q[i];
	}
	return r;
}

/* t instead of *best when nearer x, or as near and first in b->tri: the nearest triangle
 * whatever the order they are looked at in. */
static void closer(const struct tri *t, const double x[3], const struct tri **best,
		   double *best2)
{
	const double d2 = tri_distance2(t, x);

	if (d2 < *best2 || (d2 == *best2 && t < *best)) {
		*best2 = d2;
		*best = t;
	}
}

/* The triangles of the bins that box [lo, hi] meets: best and best2 updated. */
static void search_box(const struct build *b, const double lo[3], const double hi[3],
		       const double x[3], const struct tri **best, double *best2)
{
	const double side = BIN_CELLS * b->g->plan.h;
	int m0[3], m1[3];

	for (int d = 0; d < 3; d++) {	/* along z, of the bins held */
		const int o = d == 2 ? b->bin_k0 : 0;

		m0[d] = (int)fmax(0, floor((lo[d] - b->room->origin[d]) / side) - o);
		m1[d] = (int)fmin(b->nbin[d] - 1, floor((hi[d] - b->room->origin[d]) / side) - o);
	}
	for (int k = m0[2]; k <= m1[2]; k++)
		for (int j = m0[1]; j <= m1[1]; j++)
			for (int i = m0[0]; i <= m1[0]; i++) {
				size_t bin = (size_t)i + (size_t)b->nbin[0] *
					     ((size_t)j + (size_t)b->nbin[1] * k);

				for (size_t q = b->bin_at[bin]; q < b->bin_at[bin + 1]; q++)
					closer(&b->tri[b->bin_tri[q]], x, best, best2);
			}
}

/*
 * The triangle nearest x. With a hint (the last answer, usually the same surface), only the
 * bins within the hint's distance of x can hold a nearer one; without, rings of bins
 * outwards until no nearer one can lie further out.
 */
const struct tri *vx_nearest_tri(const struct build *b, const double x[3],
				 const struct tri *hint)
{
	const double side = BIN_CELLS * b->g->plan.h;
	/* how far the bins held reach below and above x: beyond, the whole room's */
	const double below = b->bin_k0 > 0 ? x[2] - (b->room->origin[2] + b->bin_k0 * side)
					   : INFINITY;
	const double above = b->bin_k0 + b->nbin[2] < b->all_k
		? b->room->origin[2] + (b->bin_k0 + b->nbin[2]) * side - x[2] : INFINITY;
	const double reach = below < above ? below : above;
	const struct tri *best = NULL;
	double best2 = INFINITY;
	int c[3], rmax = 0;

	if (hint) {
		double lo[3], hi[3], r;

		best = hint;
		best2 = tri_distance2(hint, x);
		r = sqrt(best2);
		for (int d = 0; d < 3; d++) {
			lo[d] = x[d] - r;
			hi[d] = x[d] + r;
		}
		if (r < 2 * side && r < reach) {	/* else the rings are cheaper */
			search_box(b, lo, hi, x, &best, &best2);
			return best;
		}
		best = NULL;
		best2 = INFINITY;
	}

	for (int d = 0; d < 3; d++) {
		const int o = d == 2 ? b->bin_k0 : 0;

		c[d] = (int)floor((x[d] - b->room->origin[d]) / side) - o;
		c[d] = c[d] < 0 ? 0 : c[d] >= b->nbin[d] ? b->nbin[d] - 1 : c[d];
		rmax = b->nbin[d] > rmax ? b->nbin[d] : rmax;
	}
	for (int r = 0; r <= rmax; r++) {
		if (best && best2 < (double)(r - 1) * (r - 1) * side * side)
			break;	/* every bin of ring r lies at least (r - 1) bins away */
		for (int k = c[2] - r; k <= c[2] + r; k++)
			for (int j = c[1] - r; j <= c[1] + r; j++)
				for (int i = c[0] - r; i <= c[0] + r; i++) {
					size_t bin;

					if (abs(i - c[0]) != r && abs(j - c[1]) != r &&
					    abs(k - c[2]) != r)
						continue;	/* inside the ring: seen */
					if (i < 0 || j < 0 || k < 0 || i >= b->nbin[0] ||
					    j >= b->nbin[1] || k >= b->nbin[2])
						continue;
					bin = (size_t)i + (size_t)b->nbin[0] *
					      ((size_t)j + (size_t)b->nbin[1] * k);
					for (size_t q = b->bin_at[bin]; q < b->bin_at[bin + 1]; q++)
						closer(&b->tri[b->bin_tri[q]], x, &best, &best2);
				}
	}
	if (!(best2 < reach * reach)) {	/* a nearer one may lie beyond the bins held */
		best = NULL;
		best2 = INFINITY;
		for (size_t t = 0; t < b->ntri; t++)
			closer(&b->tri[t], x, &best, &best2);
	}
	return best;
}

/* The correction of a wall on a surface of unit normal n (docs/physics.md). */
float vx_area_of(const double n[3])
{
	const double l1 = fabs(n[0]) + fabs(n[1]) + fabs(n[2]);

	return l1 > 0 ? (float)(1 / l1) : 1.0f;
}

/*
 * The last shape that holds exactly one of the nodes at xc and xs: 1, its material and its
 * surface's normal n at mid; 0 when none does (the base is responsible).
 */
int vx_shape_between(const struct room_geometry *geo, const double xc[3],
		     const double xs[3], const double mid[3], double n[3], uint8_t *material)
{
	for (int q = geo->nshapes - 1; q >= 0; q--) {
		const struct room_shape *sh = &geo->shapes[q];

		if (vox_shape_holds(sh, xc) == vox_shape_holds(sh, xs))
			continue;
		vox_shape_normal(sh, mid, n);
		*material = (uint8_t)sh->material;
		return 1;
	}
	return 0;
}

/*
 * The wall between air cell c and solid neighbour s across face f: the material and area
 * correction of the surface responsible, the last of base and shapes to hold exactly one.
 */
void vx_face_wall(const struct build *b, const int c[3], const int s[3], int f,
		  uint8_t *material, float *area, const struct tri **hint)
{
	const struct room_geometry *geo = &b->room->geo;
	double xc[3], xs[3], mid[3], n[3];

	for (int d = 0; d < 3; d++) {
		xc[d] = node_at(b, d, c[d]);
		xs[d] = node_at(b, d, s[d]);
		mid[d] = 0.5 * (xc[d] + xs[d]);
	}
	if (vx_shape_between(geo, xc, xs, mid, n, material)) {
		*area = vx_area_of(n);
		return;
	}
	*area = 1;
	*material = (uint8_t)geo->default_material;
	if (geo->has_box) {	/* the box's own faces; s lies beyond one of them */
		static const int face[6] = { ROOM_X0, ROOM_X1, ROOM_Y0, ROOM_Y1, ROOM_FLOOR,
					     ROOM_CEILING };

		*material = (uint8_t)b->room->face_material[face[f]];
	} else if (b->tri) {
		const struct tri *t = vx_nearest_tri(b, mid, *hint);

		*hint = t;
		if (t) {
			*material = (uint8_t)t->material;
			*area = vx_area_of(t->n);
		}
	} else if (b->file) {
		b->room->geo.voxels->wall_of(b->file, c, f, material, area);
	}
}

/* The walls of air cell c (room indices), which has a solid neighbour. */
void vx_cell_walls(const struct build *b, const int c[3], const struct tri **hint,
		   struct vox_wall *wall)
{
	const struct vox_plan *p = &b->g->plan;
	const ptrdiff_t step[3] = { 1, p->n[0], (ptrdiff_t)p->n[0] * p->n[1] };
	const uint8_t *cl = cell(b, c[0], c[1], c[2]);

	memset(wall, 0, sizeof(*wall));
	wall->cell = cell_index(b, c[0], c[1], c[2]);
	for (int f = 0; f < 6; f++) {
		int s[3] = { c[0], c[1], c[2] };

		s[f / 2] += f % 2 ? 1 : -1;
		wall->material[f] = VOX_NO_WALL;
		if (is_air(cl[(f % 2 ? 1 : -1) * step[f / 2]]))
			continue;
		vx_face_wall(b, c, s, f, &wall->material[f], &wall->area[f], hint);
		if (!b->room->geo.area_correction)
			wall->area[f] = 1;
	}
}

int vx_layer_walls(struct build *b, size_t (*count)(const struct build *b, int k),
		   void (*fill)(const struct build *b, int k, struct vox_wall *w), const char *what,
		   struct rs_error *err)
{
	const int n = b->wk1 - b->wk0 + 1;
	size_t *at = calloc((size_t)n + 1, sizeof(*at));

	if (!at)
		return rs_fail(err, RS_ENOMEM, "out of memory for the %s", what);
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k < n; k++)
		at[k + 1] = count(b, b->wk0 + k);
	for (int k = 0; k < n; k++)
		at[k + 1] += at[k];
	if (!(b->g->walls = malloc((at[n] + 1) * sizeof(*b->g->walls)))) {
		const size_t total = at[n];

		free(at);
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu %s", total, what);
	}
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k < n; k++)
		fill(b, b->wk0 + k, b->g->walls + at[k]);
	b->g->nwalls = at[n];
	free(at);
	return 0;
}

/* Eight cells of room row (j, k) from i0 on: the air ones with a solid neighbour, one bit a
 * byte. Past the room's end the bytes are the halo's, never air; the halo also keeps every
 * neighbour inside the array. */
static uint64_t walled8(const struct build *b, int i0, int j, int k)
{
	const ptrdiff_t sy = b->g->plan.n[0], sz = (ptrdiff_t)b->g->plan.n[0] * b->g->plan.n[1];
	const uint8_t *c8 = cell(b, i0, j, k);

	return air8(c8) & ~(air8(c8 - 1) & air8(c8 + 1) & air8(c8 - sy) & air8(c8 + sy) &
			    air8(c8 - sz) & air8(c8 + sz));
}

static size_t count_walls(const struct build *b, int k)
{
	size_t n = 0;

	for (int j = 0; j < b->whole.room[1]; j++)
		for (int i0 = 0; i0 < b->whole.room[0]; i0 += 8)
			n += (size_t)__builtin_popcountll(walled8(b, i0, j, k));
	return n;
}

static void fill_walls(const struct build *b, int k, struct vox_wall *w)
{
	const struct tri *hint = NULL;

	for (int j = 0; j < b->whole.room[1]; j++)
		for (int i0 = 0; i0 < b->whole.room[0]; i0 += 8)
			for (uint64_t m = walled8(b, i0, j, k); m; m &= m - 1) {
				const int c[3] = { i0 + __builtin_ctzll(m) / 8, j, k };

				vx_cell_walls(b, c, &hint, w++);
			}
}

/* The walls of every air cell with a solid neighbour, in cell order, layer by layer. */
int vx_make_walls(struct build *b, struct rs_error *err)
{
	return vx_layer_walls(b, count_walls, fill_walls, "boundary cells", err);
}
