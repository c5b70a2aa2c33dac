/*
 * config_hybrid.c - the hybrid section (docs/input.md, "Full-band responses"): the crossover
 * between the wave engine and the geometric one, the tracer's settings, and the scattering
 * every material on a surface needs for it.
 */
#include "config_read.h"

#define DEFAULT_RAYS 200000L
#define DEFAULT_IMAGE_ORDER 3
#define DEFAULT_RECEIVER_RADIUS 0.5	/* m */
#define MIN_CROSSOVER 50.0		/* Hz: geometric acoustics means little below */
#define MAX_IMAGE_ORDER 12
#define MIN_RAYS 1000L

/* Every material on a surface has scattering, or hybrid.scattering stands in for it. */
static int check_scattering(struct yp *p, yaml_node_t *h)
{
	const struct room *r = p->room;
	int used[ROOM_MAX_MATERIALS] = { 0 };
	char key[ROOM_NAME_MAX + 32];

	if (r->hybrid.scattering >= 0)
		return 0;
	room_used_materials(r, used);
	for (int m = 0; m < r->nmaterials; m++) {
		const struct room_material *mat = &r->materials[m];

		if (!used[m] || mat->nscat)
			continue;
		if (!mat->at.line)	/* the implicit rigid material: no place in the file */
			return yp_bad(p, h, "hybrid", "the walls without a material (rigid) need "
				      "scattering for the geometric engine (valid: give "
				      "hybrid.scattering, e.g. 0.1, for every material without one)");
		snprintf(key, sizeof(key), "materials.%s", mat->name);
		return room_at(p->err, r, mat->at, key, "no scattering for the hybrid's geometric "
			       "engine (valid: scattering: 0.1, per band {125: 0.05, 1000: 0.2, "
			       "...}, a library entry such as theatre_audience, or hybrid.scattering "
			       "for every material without one)");
	}
	return 0;
}

int cfg_parse_hybrid(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "crossover", "rays", "image_order", "seed",
					    "receiver_radius", "scattering", NULL };
	struct room *r = p->room;
	struct room_hybrid *hy = &r->hybrid;
	yaml_node_t *h = yp_get(p, root, "hybrid"), *n;
	double top;
	long x;

	memset(hy, 0, sizeof(*hy));
	hy->scattering = -1;
	if (!h)
		return 0;
	if (yp_want_map(p, h, "hybrid") || yp_check_keys(p, h, "hybrid", keys))
		return RS_EINPUT;
	hy->on = 1;
	hy->at = hy->crossover_at = hy->rays_at = hy->order_at = hy->radius_at = yp_mark(h);
	if (r->geo.voxels_path[0])
		return yp_bad(p, h, "hybrid", "the geometric engine needs the room's surfaces: a "
			      "box, a mesh or shapes (valid: geometry.box, geometry.mesh or "
			      "geometry.shapes; not geometry.voxels)");
	if (!(r->fmax > 0))
		return yp_bad(p, h, "hybrid", "the crossover needs the wave part's band (valid: give "
			      "grid.fmax instead of grid.spacing)");
	/* the crossover's transition ends a quarter octave above it, inside the wave band */
	top = r->fmax * pow(2, -0.25);
	hy->crossover = r->fmax / sqrt(2);
	if ((n = yp_get(p, h, "crossover"))) {
		hy->crossover_at = yp_mark(n);
		if (yp_num(p, n, "hybrid.crossover", 0, 1, 1e6, 0, &hy->crossover))
			return RS_EINPUT;
		if (hy->crossover > top || hy->crossover < MIN_CROSSOVER)
			return yp_bad(p, n, "hybrid.crossover", "%g Hz is outside the wave part's "
				      "band: the crossover's transition runs a quarter octave either "
				      "side of it and must end by grid.fmax %g Hz (valid: %g to %.1f "
				      "Hz)", hy->crossover, r->fmax, MIN_CROSSOVER, top);
	}
	hy->rays = DEFAULT_RAYS;
	if ((n = yp_get(p, h, "rays"))) {
		hy->rays_at = yp_mark(n);
		if (yp_integer(p, n, "hybrid.rays", MIN_RAYS, 1000000000L, &hy->rays))
			return RS_EINPUT;
	}
	hy->image_order = DEFAULT_IMAGE_ORDER;
	if ((n = yp_get(p, h, "image_order"))) {
		hy->order_at = yp_mark(n);
		if (yp_integer(p, n, "hybrid.image_order", 0, MAX_IMAGE_ORDER, &x))
			return RS_EINPUT;
		hy->image_order = (int)x;
		hy->order_given = 1;
	}
	hy->seed = 1;
	if ((n = yp_get(p, h, "seed"))) {
		if (yp_integer(p, n, "hybrid.seed", 0, 2147483647L, &x))
			return RS_EINPUT;
		hy->seed = (unsigned long)x;
	}
	hy->receiver_radius = DEFAULT_RECEIVER_RADIUS;
	if ((n = yp_get(p, h, "receiver_radius"))) {
		hy->radius_at = yp_mark(n);
		if (yp_num(p, n, "hybrid.receiver_radius", 0, 1, 10, 0, &hy->receiver_radius))
			return RS_EINPUT;
	}
	if ((n = yp_get(p, h, "scattering")) &&
	    yp_num(p, n, "hybrid.scattering", 0, 0, 1, 0, &hy->scattering))
		return RS_EINPUT;
	return check_scattering(p, h);
}
