/*
 * room.c - what the domain model computes of itself: errors at a recorded position, the
 * stencil's reach, Paris' absorption of an admittance, and releasing a room (model/room.h).
 */
#include "room.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *const room_face_names[ROOM_NFACES] = {
	[ROOM_X0] = "x0", [ROOM_X1] = "x1", [ROOM_Y0] = "y0",
	[ROOM_Y1] = "y1", [ROOM_FLOOR] = "floor", [ROOM_CEILING] = "ceiling",
};

int room_vat(struct rs_error *err, const char *file, struct room_mark m, const char *key,
	     const char *fmt, va_list ap)
{
	char what[RS_MSG_MAX / 2];

	vsnprintf(what, sizeof(what), fmt, ap);
	if (m.line == 0)	/* a value given by an override (io/config.h, cfg_load_set) */
		return rs_fail(err, RS_EINPUT, "%s: %s (given with --set): %s", file, key, what);
	return rs_fail(err, RS_EINPUT, "%s:%d:%d: %s: %s", file, m.line, m.col, key, what);
}

int room_at(struct rs_error *err, const struct room *room, struct room_mark at,
	    const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	room_vat(err, room->file, at, key, fmt, ap);
	va_end(ap);
	return RS_EINPUT;
}

void room_used_materials(const struct room *r, int *used)
{
	const struct room_geometry *geo = &r->geo;

	if (geo->has_box || !r->shaped)
		for (int f = 0; f < ROOM_NFACES; f++)
			if (r->face_material[f] >= 0)
				used[r->face_material[f]] = 1;
	for (int t = 0; t < geo->mesh.nparts; t++)
		if (geo->mesh.parts[t].material >= 0)
			used[geo->mesh.parts[t].material] = 1;
	for (int s = 0; s < geo->nshapes; s++)
		if (geo->shapes[s].material >= 0)
			used[geo->shapes[s].material] = 1;
}

int room_unused_material(const struct room *r)
{
	int used[ROOM_MAX_MATERIALS] = { 0 };

	if (r->geo.voxels_path[0])
		return -1;
	room_used_materials(r, used);
	for (int m = 0; m < r->nmaterials; m++)
		if (!used[m] && r->materials[m].at.line > 0)
			return m;
	return -1;
}

double room_absorption_of_beta(double beta)
{
	/*
	 * Paris' formula: alpha(theta) = 4 beta cos(theta) / (cos(theta) + beta)^2 averaged
	 * over a diffuse field, 2 int_0^1 alpha(mu) mu dmu, which integrates to
	 * 8 beta [1 + beta/(1 + beta) - 2 beta ln(1 + 1/beta)] (docs/physics.md, "Walls").
	 */
	if (beta <= 0)
		return 0;
	return 8 * beta * (1 + beta / (1 + beta) - 2 * beta * log1p(1 / beta));
}

/* beta where the diffuse absorption peaks, by golden-section search. */
static double beta_at_max(void)
{
	const double g = 0.5 * (sqrt(5.0) - 1);
	double a = 0.1, b = 10;

	for (int i = 0; i < 200; i++) {
		double c = b - g * (b - a), d = a + g * (b - a);

		if (room_absorption_of_beta(c) > room_absorption_of_beta(d))
			b = d;
		else
			a = c;
	}
	return 0.5 * (a + b);
}

double room_absorption_max(void)
{
	return room_absorption_of_beta(beta_at_max());
}

/* Invert Paris' formula on its rising branch, beta in [0, beta_at_max]. */
double room_beta_of_absorption(double alpha)
{
	double lo = 0, hi = beta_at_max();

	for (int i = 0; i < 200; i++) {
		double mid = 0.5 * (lo + hi);

		if (room_absorption_of_beta(mid) < alpha)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

int room_stencil_reach(const struct room *r)
{
	switch (r->stencil) {
	case ROOM_STENCIL_INTERPOLATED:
	case ROOM_STENCIL_FCC:
		return 1;
	case ROOM_STENCIL_COMPACT:
		return (int)floor(sqrt((double)r->radius2));
	case ROOM_STENCIL_BOX:
		return r->boxq[0];
	default:
		return r->order / 2;
	}
}

int room_slab_axis(const struct room *room)
{
	int best = 2;

	if (room->slab_axis)
		return room->slab_axis - 1;
	if (room->geo.voxels_path[0])
		return 2;
	for (int a = 0; a < 2; a++)	/* the cut across a: the extents of the other two */
		if (room->box[(a + 1) % 3] * room->box[(a + 2) % 3] <
		    room->box[(best + 1) % 3] * room->box[(best + 2) % 3] * (1 - 1e-9))
			best = a;
	return best;
}

static void turn3(int a, const double in[3], double out[3])
{
	for (int g = 0; g < 3; g++)
		out[g] = in[room_axis_of(a, g)];
}

struct room *room_turned(const struct room *room, int a)
{
	struct room *t = malloc(sizeof(*t));
	const struct mesh *m = &room->geo.mesh;

	if (!t)
		return NULL;
	*t = *room;
	t->turned = 1 + a;
	t->slab_axis = 1 + a;
	t->sources = NULL;
	t->receivers = NULL;
	t->grids = NULL;
	t->planes = NULL;
	t->nsources = t->nreceivers = t->ngrids = t->nplanes = 0;
	turn3(a, room->box, t->box);
	turn3(a, room->geo.box, t->geo.box);
	turn3(a, room->origin, t->origin);
	for (int g = 0; g < 3; g++)
		for (int side = 0; side < 2; side++)
			t->face_material[2 * g + side] =
				room->face_material[2 * room_axis_of(a, g) + side];
	t->geo.mesh.v = NULL;
	t->geo.shapes = NULL;
	if ((m->nv && !(t->geo.mesh.v = malloc(m->nv * sizeof(*m->v)))) ||
	    (room->geo.nshapes &&
	     !(t->geo.shapes = malloc((size_t)room->geo.nshapes * sizeof(*t->geo.shapes))))) {
		room_turned_free(t);
		return NULL;
	}
	for (size_t i = 0; i < m->nv; i++)
		turn3(a, m->v[i], t->geo.mesh.v[i]);
	for (int i = 0; i < room->geo.nshapes; i++) {
		const struct room_shape *s = &room->geo.shapes[i];
		struct room_shape *o = &t->geo.shapes[i];

		*o = *s;	/* the polygon is shared: its axes follow the extrusion's */
		turn3(a, s->lo, o->lo);
		turn3(a, s->hi, o->hi);
		turn3(a, s->center, o->center);
		o->axis = room_grid_axis(a, s->axis);
	}
	return t;
}

void room_turned_free(struct room *t)
{
	if (!t)
		return;
	free(t->geo.mesh.v);
	free(t->geo.shapes);
	free(t);
}

void room_free(struct room *room)
{
	if (!room)
		return;
	for (int i = 0; room->sources && i < room->nsources; i++)
		if (room->sources[i].balloon) {
			free(room->sources[i].balloon->db);
			free(room->sources[i].balloon);
		}
	free(room->sources);
	free(room->receivers);
	free(room->grids);
	free(room->planes);
	mesh_free(&room->geo.mesh);
	for (int i = 0; i < room->geo.nshapes; i++)
		free(room->geo.shapes[i].polygon);
	free(room->geo.shapes);
	free(room);
}
