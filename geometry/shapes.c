/*
 * shapes.c - the shapes of geometry.shapes: which nodes they hold, and the normal of their
 * surface nearest a point, for the surface-area correction (docs/physics.md, "Staircase
 * walls"). Closed shapes: a node on the surface is inside.
 */
#include "build.h"

#include <math.h>

/* Even-odd rule: is (x, y) inside the polygon? */
static int in_polygon(const struct room_shape *s, double x, double y)
{
	int in = 0;

	for (int i = 0, j = s->npolygon - 1; i < s->npolygon; j = i++) {
		const double *a = s->polygon[i], *b = s->polygon[j];

		if ((a[1] > y) != (b[1] > y) &&
		    x < (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1]) + a[0])
			in = !in;
	}
	return in;
}

int vox_shape_holds(const struct room_shape *s, const double x[3])
{
	double r2 = 0;

	for (int d = 0; d < 3; d++)
		if (x[d] < s->lo[d] || x[d] > s->hi[d])
			return 0;
	switch (s->kind) {
	case ROOM_SHAPE_BOX:
		return 1;
	case ROOM_SHAPE_SPHERE:
		for (int d = 0; d < 3; d++)
			r2 += (x[d] - s->center[d]) * (x[d] - s->center[d]);
		return r2 <= s->radius * s->radius;
	case ROOM_SHAPE_CYLINDER:
		for (int d = 0; d < 3; d++)
			if (d != s->axis)
				r2 += (x[d] - s->center[d]) * (x[d] - s->center[d]);
		return r2 <= s->radius * s->radius;
	default:
		return in_polygon(s, x[(s->axis + 1) % 3], x[(s->axis + 2) % 3]);
	}
}

/* Distance from (x, y) to segment ab, and the segment's unit normal in *n. */
static double segment_distance(const double *a, const double *b, double x, double y,
			       double n[2])
{
	const double dx = b[0] - a[0], dy = b[1] - a[1], len2 = dx * dx + dy * dy;
	double t = len2 > 0 ? ((x - a[0]) * dx + (y - a[1]) * dy) / len2 : 0;

	t = t < 0 ? 0 : t > 1 ? 1 : t;
	n[0] = dy / sqrt(len2);
	n[1] = -dx / sqrt(len2);
	return hypot(x - a[0] - t * dx, y - a[1] - t * dy);
}

/* The nearest of the box faces lo[d], hi[d] over the axes in mask: its axis. */
static int nearest_face(const struct room_shape *s, const double x[3], int mask, double *dist)
{
	int axis = -1;

	for (int d = 0; d < 3; d++) {
		double e;

		if (!(mask >> d & 1))
			continue;
		e = fmin(fabs(x[d] - s->lo[d]), fabs(x[d] - s->hi[d]));
		if (axis < 0 || e < *dist) {
			*dist = e;
			axis = d;
		}
	}
	return axis;
}

void vox_shape_normal(const struct room_shape *s, const double x[3], double n[3])
{
	double r = 0, cap = INFINITY, side, e[2];
	int axis;

	n[0] = n[1] = n[2] = 0;
	switch (s->kind) {
	case ROOM_SHAPE_BOX:
		n[nearest_face(s, x, 7, &cap)] = 1;
		return;
	case ROOM_SHAPE_SPHERE:
		for (int d = 0; d < 3; d++)
			r += (x[d] - s->center[d]) * (x[d] - s->center[d]);
		r = sqrt(r);
		for (int d = 0; d < 3; d++)
			n[d] = r > 0 ? (x[d] - s->center[d]) / r : d == 2;
		return;
	case ROOM_SHAPE_CYLINDER:
		axis = nearest_face(s, x, 1 << s->axis, &cap);
		for (int d = 0; d < 3; d++)
			if (d != s->axis)
				r += (x[d] - s->center[d]) * (x[d] - s->center[d]);
		r = sqrt(r);
		if (fabs(r - s->radius) > cap || r == 0) {
			n[axis] = 1;
			return;
		}
		for (int d = 0; d < 3; d++)
			if (d != s->axis)
				n[d] = (x[d] - s->center[d]) / r;
		return;
	default: {	/* the polygon's axes: those after the extrusion's (x, y for z) */
		const int u = (s->axis + 1) % 3, v = (s->axis + 2) % 3;

		nearest_face(s, x, 1 << s->axis, &cap);
		side = INFINITY;
		for (int i = 0, j = s->npolygon - 1; i < s->npolygon; j = i++) {
			double m = segment_distance(s->polygon[j], s->polygon[i], x[u], x[v], e);

			if (m < side) {
				side = m;
				n[u] = e[0];
				n[v] = e[1];
			}
		}
		if (side > cap) {
			n[u] = n[v] = 0;
			n[s->axis] = 1;
		}
		return;
	}
	}
}
