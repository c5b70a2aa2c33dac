/*
 * receivers.c - the points of a receiver grid (receivers.h). A plane grid is a lattice in the
 * plane; a grid over `floor` stands each lattice point of the plan on the lowest room cell of
 * its column; a grid over a mesh name on the highest of that name's triangles above it.
 */
#include "receivers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int grid_lattice(double lo, double hi, double s, double *first)
{
	const int n = (int)floor((hi - lo) / s + 1e-9) + 1;

	*first = lo + 0.5 * ((hi - lo) - (n - 1) * s);
	return n;
}

void grid_points_free(struct grid_points *p)
{
	free(p->pos);
	free(p->ij);
	memset(p, 0, sizeof(*p));
}

/* The triangles of mesh parts named `name` (any of their names), as a flag per part. */
static int *named_parts(const struct mesh *m, const char *name)
{
	const int idx = mesh_name(m, name);
	int *on = calloc((size_t)m->nparts + 1, sizeof(int));

	for (int t = 0; on && t < m->nparts; t++)
		for (int i = 0; i < m->parts[t].nnames; i++)
			on[t] |= m->parts[t].names[i] == idx;
	return on;
}

/* The highest z of the named triangles over each lattice point into top (NAN: none). */
static void surface_heights(const struct mesh *m, const int *on, const struct grid_points *p,
			    double *top)
{
	const double s = p->spacing;

	for (size_t t = 0; t < m->ntri; t++) {
		const double *a = m->v[m->tri[t][0]], *b = m->v[m->tri[t][1]], *c = m->v[m->tri[t][2]];
		const double det = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]);
		int i0, i1, j0, j1;

		if (!on[m->part[t]] || det == 0)	/* other names, or vertical */
			continue;
		i0 = (int)ceil((fmin(a[0], fmin(b[0], c[0])) - p->first[0]) / s - 1e-9);
		i1 = (int)floor((fmax(a[0], fmax(b[0], c[0])) - p->first[0]) / s + 1e-9);
		j0 = (int)ceil((fmin(a[1], fmin(b[1], c[1])) - p->first[1]) / s - 1e-9);
		j1 = (int)floor((fmax(a[1], fmax(b[1], c[1])) - p->first[1]) / s + 1e-9);
		i0 = i0 < 0 ? 0 : i0;
		j0 = j0 < 0 ? 0 : j0;
		i1 = i1 >= p->dims[0] ? p->dims[0] - 1 : i1;
		j1 = j1 >= p->dims[1] ? p->dims[1] - 1 : j1;
		for (int j = j0; j <= j1; j++)
			for (int i = i0; i <= i1; i++) {
				const double x = p->first[0] + i * s, y = p->first[1] + j * s;
				/* barycentric coordinates of (x, y) in the triangle's plan */
				const double u = ((x - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (y - a[1])) / det;
				const double v = ((b[0] - a[0]) * (y - a[1]) - (x - a[0]) * (b[1] - a[1])) / det;
				const double e = 1e-9, z = a[2] + u * (b[2] - a[2]) + v * (c[2] - a[2]);
				double *h = &top[(size_t)i + (size_t)p->dims[0] * j];

				if (u >= -e && v >= -e && u + v <= 1 + e && (isnan(*h) || z > *h))
					*h = z;
			}
	}
}

/* The extent of the named triangles in x and y. */
static void surface_bounds(const struct mesh *m, const int *on, double lo[2], double hi[2])
{
	lo[0] = lo[1] = HUGE_VAL;
	hi[0] = hi[1] = -HUGE_VAL;
	for (size_t t = 0; t < m->ntri; t++)
		for (int k = 0; on[m->part[t]] && k < 3; k++)
			for (int d = 0; d < 2; d++) {
				lo[d] = fmin(lo[d], m->v[m->tri[t][k]][d]);
				hi[d] = fmax(hi[d], m->v[m->tri[t][k]][d]);
			}
}

int grid_points_none(const struct room *room, const struct room_grid *g, size_t total,
		     struct rs_error *err)
{
	char key[48];

	snprintf(key, sizeof(key), "receivers[%d].grid", g->entry);
	return room_at(err, room, g->mark, key, "grid %s: none of the grid's %zu lattice points "
		       "lies in the air, half a cell inside the walls (valid: a plane or height "
		       "through the room's air, an extent inside it)", g->name, total);
}

/*
 * The floor under x[0], x[1]: the lowest room cell of the line of cells along the room's z,
 * its height into x[2]; -1 when the line has none or lies outside the grid.
 */
static int floor_height(const struct vox_grid *vg, const int32_t *floor, int layers,
			double x[3])
{
	const struct vox_plan *pl = &vg->plan;
	const int gz = room_grid_axis(pl->slab, 2);
	double q[3];
	int c[3], f;

	x[2] = 0;
	vox_to_grid(pl, x, q);
	for (int d = 0; d < 3; d++) {
		const long m = lround((q[d] - vg->origin[d]) / pl->h);
		const long n = d == 2 && floor ? layers : pl->n[d];

		if (d != gz && (m < 0 || m >= n))
			return -1;
		c[d] = (int)m;
	}
	c[gz] = 0;
	if (floor) {
		f = floor[vox_floor_line(pl, c)];
	} else {	/* the column's own */
		const size_t k = (size_t)c[0] + (size_t)pl->n[0] * c[1];

		f = vg->kstop[k] < vg->kstart[k] ? INT32_MAX : vg->kstart[k];
	}
	if (f == INT32_MAX)
		return -1;
	q[gz] = vg->origin[gz] + (f - (pl->fcc ? 0 : 0.5)) * pl->h;
	vox_to_room(pl, q, x);
	return 0;
}

int grid_points_make(const struct room *room, const struct room_grid *g,
		     const struct vox_grid *vg, const int32_t *floor, int layers,
		     struct grid_points *out, struct rs_error *err)
{
	const int mesh = g->axis < 0 && strcmp(g->surface, "floor");
	double lo[2] = { g->lo[0], g->lo[1] }, hi[2] = { g->hi[0], g->hi[1] };
	double *top = NULL, w[8];
	int *on = NULL, node[8][3];
	size_t total;

	memset(out, 0, sizeof(*out));
	out->axes[0] = g->axis == 0 ? 1 : 0;
	out->axes[1] = g->axis == 2 || g->axis < 0 ? 1 : 2;
	out->spacing = g->spacing;
	if (mesh) {
		if (!(on = named_parts(&room->geo.mesh, g->surface)))
			return rs_fail(err, RS_ENOMEM, "out of memory for receiver grid %s", g->name);
		if (!g->extent)
			surface_bounds(&room->geo.mesh, on, lo, hi);
	}
	for (int a = 0; a < 2; a++) {
		out->dims[a] = grid_lattice(lo[a], hi[a], g->spacing, &out->first[a]);
		out->lo[a] = lo[a];
		out->hi[a] = hi[a];
	}
	total = (size_t)out->dims[0] * (size_t)out->dims[1];
	out->pos = malloc(total * sizeof(*out->pos));
	out->ij = malloc(total * sizeof(*out->ij));
	if (mesh && (top = malloc(total * sizeof(double))))
		for (size_t q = 0; q < total; q++)
			top[q] = NAN;
	if (!out->pos || !out->ij || (mesh && !top)) {
		free(on);
		free(top);
		grid_points_free(out);
		return rs_fail(err, RS_ENOMEM, "out of memory for receiver grid %s (%zu points)",
			       g->name, total);
	}
	if (mesh)
		surface_heights(&room->geo.mesh, on, out, top);
	for (int j = 0; j < out->dims[1]; j++)
		for (int i = 0; i < out->dims[0]; i++) {
			double x[3];

			x[out->axes[0]] = out->first[0] + i * g->spacing;
			x[out->axes[1]] = out->first[1] + j * g->spacing;
			if (g->axis >= 0) {
				x[g->axis] = g->at;
			} else if (mesh) {
				x[2] = top[(size_t)i + (size_t)out->dims[0] * j] + g->height;
				if (isnan(x[2]))
					continue;
			} else if (floor_height(vg, floor, layers, x)) {
				continue;
			} else {
				x[2] += g->height;
			}
			if (vox_point(vg, x, node, w, NULL))
				continue;
			memcpy(out->pos[out->n], x, sizeof(x));
			out->ij[out->n][0] = i;
			out->ij[out->n][1] = j;
			out->n++;
		}
	free(on);
	free(top);
	if (!out->n && !floor) {
		grid_points_free(out);
		return grid_points_none(room, g, total, err);
	}
	return 0;
}
