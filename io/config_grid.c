/*
 * config_grid.c - the grid and scheme sections: spacing from fmax, points per wavelength or
 * grid.dispersion, the Courant number, the stencil and the CUDA kernel (docs/input.md).
 */
#include "config_read.h"

#include "../geometry/voxel.h"

/*
 * grid.dispersion: the points per wavelength that keep the scheme's worst-case phase-velocity
 * error at fmax under the given value (docs/stencils.md), instead of grid.ppw.
 */
static struct stn_stencil stencil;	/* large: the scheme's, for the grid keys */

/* The configured stencil and its computed Courant limit, or an error at n for key. */
static int scheme_limit(struct yp *p, yaml_node_t *n, const char *key, double *limit)
{
	if (stn_from_config(p->room, &stencil))
		return yp_bad(p, n, key, "the scheme's stencil is not valid (check scheme.weights)");
	*limit = stn_courant_limit(&stencil);
	return 0;
}

static int dispersion_spacing(struct yp *p, yaml_node_t *g, yaml_node_t *n)
{
	const struct stn_stencil *s = &stencil;
	struct room *r = p->room;
	double tol, limit = 0;

	if (!yp_get(p, g, "fmax") || yp_get(p, g, "ppw"))
		return yp_bad(p, n, "grid.dispersion", "goes with grid.fmax and replaces grid.ppw "
			      "(give fmax and dispersion, without ppw or spacing)");
	if (yp_num(p, n, "grid.dispersion", 0, 1, 0.5, 0, &tol) ||
	    scheme_limit(p, n, "grid.dispersion", &limit))
		return RS_EINPUT;
	r->dispersion = tol;
	if (limit <= 0 || r->courant > 1)
		return yp_bad(p, n, "grid.dispersion", "the scheme is not stable at grid.courant %g, so "
			      "it has no dispersion to meet (see roomsim scheme)", r->courant);
	r->ppw = stn_ppw_for(s, r->courant * limit, tol);
	if (!isfinite(r->ppw))
		return yp_bad(p, n, "grid.dispersion", "%s cannot reach %g at any grid", s->name, tol);
	r->spacing = r->c / (r->fmax * r->ppw);
	return 0;
}

int cfg_parse_grid(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "fmax", "ppw", "dispersion", "spacing", "courant",
					    "slab_axis", "fit", "walls", NULL };
	static const char *const walls[] = { "staircase", "fitted", NULL };
	static const char *const axes[] = { "auto", "x", "y", "z", NULL };
	struct room *r = p->room;
	yaml_node_t *g = yp_get(p, root, "grid"), *n, *f, *h;

	if (!g)
		return yp_missing(p, root, "grid", "give grid.fmax (Hz) or grid.spacing (m)");
	if (yp_want_map(p, g, "grid") || yp_check_keys(p, g, "grid", keys))
		return RS_EINPUT;
	f = yp_get(p, g, "fmax");
	h = yp_get(p, g, "spacing");
	if (f && h)
		return yp_bad(p, h, "grid.spacing", "give either grid.spacing or grid.fmax/ppw, not both");
	if (h && yp_get(p, g, "ppw"))
		return yp_bad(p, yp_get(p, g, "ppw"), "grid.ppw", "ppw goes with fmax; with spacing it "
			      "has no meaning (remove it or give fmax instead of spacing)");
	if (!f && !h)
		return yp_missing(p, g, "grid", "give grid.fmax (Hz) or grid.spacing (m)");
	if ((n = yp_get(p, g, "slab_axis"))) {
		if (yp_choice(p, n, "grid.slab_axis", axes, &r->slab_axis))
			return RS_EINPUT;
		r->slab_at = yp_mark(n);
	}
	if ((n = yp_get(p, g, "fit"))) {
		if (yp_boolean(p, n, "grid.fit", &r->fit))
			return RS_EINPUT;
		if (r->fit && h)
			return yp_bad(p, n, "grid.fit", "fits the spacing that grid.fmax gives; with "
				      "grid.spacing given it is that spacing (remove grid.fit, or give "
				      "fmax instead of spacing)");
	}
	if ((n = yp_get(p, g, "walls"))) {
		if (yp_choice(p, n, "grid.walls", walls, &r->fitted))
			return RS_EINPUT;
		r->walls_given = 1;
	}
	r->ppw = DEFAULT_PPW;
	if ((n = yp_get(p, g, "ppw")) && yp_num(p, n, "grid.ppw", MIN_PPW, 0, 1e4, 0, &r->ppw))
		return RS_EINPUT;
	if (f) {
		if (yp_num(p, f, "grid.fmax", 0, 1, 1e6, 0, &r->fmax))
			return RS_EINPUT;
		r->spacing = r->c / (r->fmax * r->ppw);
		r->grid_at = yp_mark(yp_key_node(p, g, "fmax"));
	} else {
		if (yp_num(p, h, "grid.spacing", 0, 1, 1e3, 0, &r->spacing))
			return RS_EINPUT;
		r->fmax = r->c / (r->spacing * r->ppw);
		r->grid_at = yp_mark(yp_key_node(p, g, "spacing"));
	}
	/* A courant over 1 is refused once the scheme's limit is known, with that limit. */
	r->courant = DEFAULT_COURANT;
	r->courant_at = r->grid_at;
	if ((n = yp_get(p, g, "courant"))) {
		if (yp_num(p, n, "grid.courant", 0, 1, 100, 0, &r->courant))
			return RS_EINPUT;
		r->courant_at = yp_mark(n);
		r->courant_given = 1;
	} else if (r->fitted) {
		r->courant = r->stencil == ROOM_STENCIL_FCC ? FITTED_FCC_COURANT : FITTED_COURANT;
	} else if (r->stencil == ROOM_STENCIL_INTERPOLATED || r->stencil == ROOM_STENCIL_FCC) {
		double limit = 0;

		/* a named scheme runs at its published Courant number unless told otherwise */
		if (scheme_limit(p, yp_key_node(p, root, "grid"), "grid.courant", &limit))
			return RS_EINPUT;
		if (limit > 0)
			r->courant = fmin(1, stencil.courant / limit);
	}
	if (r->stencil_auto) {	/* the tolerance every candidate meets; the 7-point grid for now */
		if (!f)
			return yp_bad(p, h, "grid.spacing", "scheme.stencil: auto chooses the spacing "
				      "for each scheme from grid.fmax and grid.dispersion (give fmax "
				      "instead of spacing)");
		if (yp_get(p, g, "ppw"))
			return yp_bad(p, yp_get(p, g, "ppw"), "grid.ppw", "scheme.stencil: auto meets "
				      "grid.dispersion (default 0.01), not a ppw (remove ppw)");
		if (!(n = yp_get(p, g, "dispersion"))) {
			double limit = 0;

			r->dispersion = AUTO_DISPERSION;
			if (scheme_limit(p, g, "grid", &limit))
				return RS_EINPUT;
			r->ppw = stn_ppw_for(&stencil, r->courant * limit, r->dispersion);
			r->spacing = r->c / (r->fmax * r->ppw);
			return 0;
		}
	}
	return (n = yp_get(p, g, "dispersion")) ? dispersion_spacing(p, g, n) : 0;
}

/*
 * grid.walls: fitted, once the scheme, materials and geometry are known: what its cut cells
 * cover so far (docs/physics.md, "Fitted walls"): the 7-point scheme in a room of a box, a
 * mesh or shapes; the fcc scheme in a room of a mesh or shapes (in a box its walls pass
 * through its nodes already).
 */
static int fitted_walls_refused(struct yp *p, yaml_node_t *n)
{
	const struct room *r = p->room;
	const int seven = r->stencil == ROOM_STENCIL_LEGGY && r->order == 2;

	if (!r->stencil_auto && !seven && r->stencil != ROOM_STENCIL_FCC)
		return yp_bad(p, n, "grid.walls", "fitted walls run with the 7-point and fcc "
			      "schemes only (remove scheme.stencil, give stencil: fcc or auto, or "
			      "give grid.walls: staircase)");
	if (r->stencil == ROOM_STENCIL_FCC && !r->shaped)
		return yp_bad(p, n, "grid.walls", "the fcc scheme's walls in a box pass through its "
			      "nodes already, so there is nothing to fit (give grid.fit: true to "
			      "put them where the box's are, and remove grid.walls)");
	if (r->geo.voxels_path[0])
		return yp_bad(p, n, "grid.walls", "a voxel file's room has no surface to fit "
			      "(voxelize from the room's mesh or shapes, or give grid.walls: "
			      "staircase)");
	return 0;
}

/*
 * grid.fit, once the geometry is known: the spacing shrunk, by at most a tenth, so that the
 * sides of a box, or of a mesh's or shapes' bounds, are whole cells (vox_fit_spacing); ppw
 * follows. The bounds' low corner is the grid's origin, so their walls then lie on cell faces.
 */
int cfg_fit_grid(struct yp *p, yaml_node_t *root)
{
	struct room *r = p->room;
	yaml_node_t *n = yp_get(p, yp_get(p, root, "grid"), "fit");

	if (r->fitted && fitted_walls_refused(p, yp_get(p, yp_get(p, root, "grid"), "walls")))
		return RS_EINPUT;
	if (!r->fit)
		return 0;
	if (r->geo.voxels_path[0])
		return yp_bad(p, n, "grid.fit", "a voxel file's room keeps the file's cells (remove "
			      "grid.fit, or voxelize again from the room's mesh or shapes with it)");
	r->unfitted = r->spacing;
	r->spacing = vox_fit_spacing(r->box, r->spacing, NULL);
	r->ppw = r->c / (r->fmax * r->spacing);
	return 0;
}

/* scheme.block: [bx, by], x a multiple of 32 (whole warps along rows), at most 1024 threads. */
static int parse_block(struct yp *p, yaml_node_t *n, int block[2])
{
	long v[2];
	char k[32];

	if (n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top - n->data.sequence.items.start != 2)
		return yp_bad(p, n, "scheme.block", "expected [x, y] threads, e.g. [32, 8]");
	for (int i = 0; i < 2; i++) {
		snprintf(k, sizeof(k), "scheme.block[%d]", i);
		if (yp_integer(p, yp_node(p, n->data.sequence.items.start[i]), k, 1, MAX_BLOCK_THREADS,
			       &v[i]))
			return RS_EINPUT;
	}
	if (v[0] % 32 || v[0] * v[1] > MAX_BLOCK_THREADS)
		return yp_bad(p, n, "scheme.block", "[%ld, %ld] is not valid (valid: x a multiple of 32, "
			      "x * y at most %d)", v[0], v[1], MAX_BLOCK_THREADS);
	block[0] = (int)v[0];
	block[1] = (int)v[1];
	return 0;
}

/* R is a sum of three squares, i.e. not of the form 4^a (8b + 7) (Legendre). */
static int three_squares(long R)
{
	while (R > 0 && R % 4 == 0)
		R /= 4;
	return R % 8 != 7;
}

static int parse_stencil_params(struct yp *p, yaml_node_t *s, struct room *r)
{
	/* Each parameter belongs to one family; weights to compact and box. */
	static const char *const only[] = { "order", "radius2", "q", "variant" };
	static const char *const family[] = { "leggy", "compact", "box", "interpolated", "fcc" };
	yaml_node_t *n;
	long v;
	char k[48];

	for (int i = 0; i < 4; i++)
		if ((n = yp_get(p, s, only[i])) && (int)r->stencil != i) {
			snprintf(k, sizeof(k), "scheme.%s", only[i]);
			return yp_bad(p, n, k, "applies to the %s stencil only (this one is %s)",
				      family[i], family[r->stencil]);
		}
	if ((n = yp_get(p, s, "weights")) && r->stencil != ROOM_STENCIL_COMPACT &&
	    r->stencil != ROOM_STENCIL_BOX)
		return yp_bad(p, n, "scheme.weights", "applies to compact and box stencils only");
	if (r->stencil == ROOM_STENCIL_INTERPOLATED) {
		if (!(n = yp_get(p, s, "variant")))
			return yp_missing(p, s, "scheme.variant", "give variant: IWB, IISO, IISO2, CCP, "
					  "OCTA, IDWM or SRL (SLF)");
		if (yp_choice(p, n, "scheme.variant", stn_variant_names, &r->variant))
			return RS_EINPUT;
	}
	if ((n = yp_get(p, s, "order"))) {
		if (yp_integer(p, n, "scheme.order", 2, 16, &v))
			return RS_EINPUT;
		if (v % 2)
			return yp_bad(p, n, "scheme.order", "order %ld is odd (valid: 2, 4, ..., 16)", v);
		r->order = (int)v;
	}
	if (r->stencil == ROOM_STENCIL_COMPACT) {
		if (!(n = yp_get(p, s, "radius2")))
			return yp_missing(p, s, "scheme.radius2", "give radius2: R, e.g. 3 for 27 points");
		if (yp_integer(p, n, "scheme.radius2", 1, 22, &v))
			return RS_EINPUT;
		if (!three_squares(v))
			return yp_bad(p, n, "scheme.radius2", "%ld is not a sum of three squares, so no "
				      "shell lies at |q|^2 = %ld (valid: 1 to 22 but 7 and 15)", v, v);
		r->radius2 = (int)v;
	}
	if (r->stencil == ROOM_STENCIL_BOX) {
		if (!(n = yp_get(p, s, "q")))
			return yp_missing(p, s, "scheme.q", "give q: [q1, q2, q3], e.g. [2, 2, 2]");
		if (n->type != YAML_SEQUENCE_NODE ||
		    n->data.sequence.items.top - n->data.sequence.items.start != 3)
			return yp_bad(p, n, "scheme.q", "expected [q1, q2, q3]");
		for (int i = 0; i < 3; i++) {
			snprintf(k, sizeof(k), "scheme.q[%d]", i);
			if (yp_integer(p, yp_node(p, n->data.sequence.items.start[i]), k, 0, 4, &v))
				return RS_EINPUT;
			r->boxq[i] = (int)v;
		}
		if (r->boxq[0] < 1 || r->boxq[0] < r->boxq[1] || r->boxq[1] < r->boxq[2])
			return yp_bad(p, n, "scheme.q", "expected q1 >= q2 >= q3 >= 0 and q1 >= 1");
	}
	if ((n = yp_get(p, s, "weights"))) {
		double sum = 0;

		if (n->type != YAML_SEQUENCE_NODE)
			return yp_bad(p, n, "scheme.weights", "expected a list of shell weights");
		r->nweights = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
		if (r->nweights < 1 || r->nweights > ROOM_MAX_WEIGHTS)
			return yp_bad(p, n, "scheme.weights", "%d weights (valid: 1 to %d)", r->nweights,
				      ROOM_MAX_WEIGHTS);
		for (int i = 0; i < r->nweights; i++) {
			snprintf(k, sizeof(k), "scheme.weights[%d]", i);
			if (yp_num(p, yp_node(p, n->data.sequence.items.start[i]), k, -1e3, 0, 1e3, 0,
				   &r->weights[i]))
				   return RS_EINPUT;
			sum += r->weights[i];
		}
		if (fabs(sum - 1) > 1e-9)
			return yp_bad(p, n, "scheme.weights", "the weights sum to %.12g (valid: any weights "
				      "that sum to 1: each shell alone is a second-order Laplacian)", sum);
	}
	return 0;
}

int cfg_parse_scheme(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "stencil", "order", "radius2", "q", "weights",
					    "variant", "precision", "kernel", "block", "dts", "nt",
					    "split", NULL };
	static const char *const stencils[] = { "leggy", "compact", "box", "interpolated", "fcc",
						"auto", NULL };
	static const char *const precisions[] = { "float32", "float64", NULL };
	struct room *r = p->room;
	yaml_node_t *s = yp_get(p, root, "scheme"), *n;
	int idx;
	long v;

	r->stencil = ROOM_STENCIL_LEGGY;
	r->order = 2;
	r->precision = 4;
	r->kernel = KERNEL_AUTO;
	r->block[0] = 32;
	r->block[1] = 8;
	if (!s)
		return 0;
	r->scheme_at = yp_mark(yp_key_node(p, root, "scheme"));
	if (yp_want_map(p, s, "scheme") || yp_check_keys(p, s, "scheme", keys))
		return RS_EINPUT;
	if ((n = yp_get(p, s, "stencil"))) {
		if (yp_choice(p, n, "scheme.stencil", stencils, &idx))
			return RS_EINPUT;
		if (idx == ROOM_NSTENCILS) {	/* auto: the 7-point scheme until chosen */
			static const char *const params[] = { "order", "radius2", "q", "weights",
							      "variant", "dts", "nt", "split" };

			for (int i = 0; i < 8; i++)
				if (yp_get(p, s, params[i])) {
					char k[32];

					snprintf(k, sizeof(k), "scheme.%s", params[i]);
					return yp_bad(p, yp_get(p, s, params[i]), k, "scheme.stencil: auto "
						      "chooses the stencil and its parameters (give a "
						      "stencil to set them)");
				}
			r->stencil_auto = 1;
			idx = ROOM_STENCIL_LEGGY;
		}
		r->stencil = (enum room_stencil)idx;
	}
	if (parse_stencil_params(p, s, r))
		return RS_EINPUT;
	if ((n = yp_get(p, s, "precision"))) {
		if (yp_choice(p, n, "scheme.precision", precisions, &idx))
			return RS_EINPUT;
		r->precision = idx ? 8 : 4;
	}
	if ((n = yp_get(p, s, "kernel"))) {
		if (yp_choice(p, n, "scheme.kernel", kernel_names, &idx))
			return RS_EINPUT;
		r->kernel = (enum kernel_id)idx;
	}
	if ((n = yp_get(p, s, "dts"))) {
		if (yp_integer(p, n, "scheme.dts", 1, ROOM_MAX_DTS, &v))
			return RS_EINPUT;
		r->dts = (int)v;
	}
	if ((n = yp_get(p, s, "nt"))) {
		if (yp_integer(p, n, "scheme.nt", 1, ROOM_MAX_NT, &v))
			return RS_EINPUT;
		r->nt = (int)v;
	}
	if ((n = yp_get(p, s, "split"))) {
		if (yp_integer(p, n, "scheme.split", 1, ROOM_MAX_SPLIT, &v))
			return RS_EINPUT;
		r->split = (int)v;
	}
	return (n = yp_get(p, s, "block")) ? parse_block(p, n, r->block) : 0;
}
