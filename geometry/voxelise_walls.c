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
	const struct vox_plan *p = &b->g->plan;
	const double side = BIN_CELLS * p->h;
	size_t nbins = 1, *fill;

	for (int d = 0; d < 3; d++) {
		b->nbin[d] = (p->room[d] + BIN_CELLS - 1) / BIN_CELLS;
		nbins *= (size_t)b->nbin[d];
	}
	b->bin_at = calloc(nbins + 1, sizeof(*b->bin_at));
	fill = malloc(nbins * sizeof(*fill));
	if (!b->bin_at || !fill) {
		free(fill);
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu bins", nbins);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < b->ntri; t++) {
			int m0[3], m1[3];

			for (int d = 0; d < 3; d++) {
				const struct tri *tr = &b->tri[t];

				m0[d] = (int)fmax(0, floor((tr->lo[d] - b->room->origin[d]) / side));
				m1[d] = (int)fmin(b->nbin[d] - 1,
						  floor((tr->hi[d] - b->room->origin[d]) / side));
			}
			for (int k = m0[2]; k <= m1[2]; k++)
				for (int j = m0[1]; j <= m1[1]; j++)
					for (int i = m0[0]; i <= m1[0]; i++) {
						size_t bin = (size_t)i + (size_t)b->nbin[0] *
							     ((size_t)j + (size_t)b->nbin[1] * k);

						if (pass)
							b->bin_tri[fill[bin]++] = (uint32_t)t;
						else
							b->bin_at[bin + 1]++;
					}
		}
		if (pass)
			break;
		for (size_t bin = 0; bin < nbins; bin++) {
			b->bin_at[bin + 1] += b->bin_at[bin];
			fill[bin] = b->bin_at[bin];
		}
		if (!(b->bin_tri = malloc((b->bin_at[nbins] + 1) * sizeof(*b->bin_tri)))) {
			free(fill);
			return rs_fail(err, RS_ENOMEM, "out of memory for the triangle bins");
		}
	}
	free(fill);
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

/* The triangles of the bins that box [lo, hi] meets: best and best2 updated. */
static void search_box(const struct build *b, const double lo[3], const double hi[3],
		       const double x[3], const struct tri **best, double *best2)
{
	const double side = BIN_CELLS * b->g->plan.h;
	int m0[3], m1[3];

	for (int d = 0; d < 3; d++) {
		m0[d] = (int)fmax(0, floor((lo[d] - b->room->origin[d]) / side));
		m1[d] = (int)fmin(b->nbin[d] - 1, floor((hi[d] - b->room->origin[d]) / side));
	}
	for (int k = m0[2]; k <= m1[2]; k++)
		for (int j = m0[1]; j <= m1[1]; j++)
			for (int i = m0[0]; i <= m1[0]; i++) {
				size_t bin = (size_t)i + (size_t)b->nbin[0] *
					     ((size_t)j + (size_t)b->nbin[1] * k);

				for (size_t q = b->bin_at[bin]; q < b->bin_at[bin + 1]; q++) {
					const struct tri *t = &b->tri[b->bin_tri[q]];
					double d2 = tri_distance2(t, x);

					if (d2 < *best2) {
						*best2 = d2;
						*best = t;
					}
				}
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
		if (r < 2 * side) {	/* else the rings are cheaper */
			search_box(b, lo, hi, x, &best, &best2);
			return best;
		}
		best = NULL;
		best2 = INFINITY;
	}

	for (int d = 0; d < 3; d++) {
		c[d] = (int)floor((x[d] - b->room->origin[d]) / side);
		c[d] = c[d] < 0 ? 0 : c[d] >= b->nbin[d] ? b->nbin[d] - 1 : c[d];
		rmax = b->nbin[d] > rmax ? b->nbin[d] : rmax;
	}
	for (int r = 0; r <= rmax; r++) {
		if (best && best2 <= (double)(r - 1) * (r - 1) * side * side)
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
					for (size_t q = b->bin_at[bin]; q < b->bin_at[bin + 1]; q++) {
						const struct tri *t = &b->tri[b->bin_tri[q]];
						double d2 = tri_distance2(t, x);

						if (d2 < best2) {
							best2 = d2;
							best = t;
						}
					}
				}
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
	wall->cell = vox_index(p, c[0] + p->halo, c[1] + p->halo, c[2] + p->halo);
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

int vx_slabs_open(struct slabs *s, int n, struct rs_error *err)
{
	s->n = n;
	s->list = calloc((size_t)n, sizeof(*s->list));
	s->count = calloc((size_t)n, sizeof(*s->count));
	s->cap = calloc((size_t)n, sizeof(*s->cap));
	if (s->list && s->count && s->cap)
		return 0;
	free(s->list);
	free(s->count);
	free(s->cap);
	return rs_fail(err, RS_ENOMEM, "out of memory for the walls");
}

/* A place for one more wall in slab k, or NULL when out of memory. */
struct vox_wall *vx_slab_next(struct slabs *s, int k)
{
	if (s->count[k] == s->cap[k]) {
		const size_t cap = s->cap[k] ? 2 * s->cap[k] : 1024;
		struct vox_wall *grown = realloc(s->list[k], cap * sizeof(*grown));

		if (!grown)
			return NULL;
		s->list[k] = grown;
		s->cap[k] = cap;
	}
	return &s->list[k][s->count[k]++];
}

/* Join the slabs into g->walls (unless failed) and free them; `what` names the walls. */
int vx_slabs_join(struct slabs *s, struct vox_grid *g, int failed, const char *what,
		  struct rs_error *err)
{
	size_t total = 0;

	for (int k = 0; k < s->n; k++)
		total += s->count[k];
	if (!failed && (g->walls = malloc((total + 1) * sizeof(*g->walls)))) {
		for (int k = 0; k < s->n; k++) {
			if (s->count[k])	/* an empty slab's list may be NULL */
				memcpy(g->walls + g->nwalls, s->list[k],
				       s->count[k] * sizeof(*s->list[k]));
			g->nwalls += s->count[k];
		}
	} else {
		failed = 1;
	}
	for (int k = 0; k < s->n; k++)
		free(s->list[k]);
	free(s->list);
	free(s->count);
	free(s->cap);
	return failed ? rs_fail(err, RS_ENOMEM, "out of memory for %zu %s", total, what) : 0;
}

/* The walls of every air cell with a solid neighbour, in cell order: a list per z-slab, joined. */
int vx_make_walls(struct build *b, struct rs_error *err)
{
	const struct vox_plan *p = &b->g->plan;
	const int *n = p->room;
	const ptrdiff_t sy = p->n[0], sz = (ptrdiff_t)p->n[0] * p->n[1];
	struct slabs sl;
	int failed = 0;

	if (vx_slabs_open(&sl, n[2], err))
		return err ? err->code : RS_ENOMEM;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
	for (int k = 0; k < n[2]; k++) {
		const struct tri *hint = NULL;

		for (int j = 0; j < n[1]; j++)
			for (int i0 = 0; i0 < n[0]; i0 += 8) {
				/* eight cells at once: the air ones with a solid neighbour. Past the
				 * room's end the bytes are the halo's, never air; the halo also keeps
				 * every neighbour inside the array. */
				const uint8_t *c8 = cell(b, i0, j, k);
				uint64_t m = air8(c8) & ~(air8(c8 - 1) & air8(c8 + 1) & air8(c8 - sy) &
							  air8(c8 + sy) & air8(c8 - sz) & air8(c8 + sz));

				for (; m && !failed; m &= m - 1) {
					const int c[3] = { i0 + __builtin_ctzll(m) / 8, j, k };
					struct vox_wall *w = vx_slab_next(&sl, k);

					if (!w) {
						failed = 1;
						break;
					}
					vx_cell_walls(b, c, &hint, w);
				}
			}
	}
	return vx_slabs_join(&sl, b->g, failed, "boundary cells", err);
}
