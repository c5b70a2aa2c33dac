/*
 * config_geometry.c - the geometry section of a room file (docs/input.md, "Geometry"): a box,
 * a mesh with its units and transform, a voxel file, and shapes added and removed in order;
 * then the bounds of the room they make.
 *
 * The mesh is read here, while the file loads, so that a surface name the mesh lacks, a
 * mesh that cannot be read, or a snapshot plane outside the room is refused at its key
 * like any other bad input, before anything large is allocated.
 */
#include "config_read.h"

static const char *const unit_names[] = { "m", "cm", "mm", "in", "ft", NULL };
static const double unit_metres[] = { 1, 0.01, 0.001, 0.0254, 0.3048 };

static const char *const shape_names[ROOM_NSHAPES + 1] = {
	[ROOM_SHAPE_BOX] = "box", [ROOM_SHAPE_CYLINDER] = "cylinder",
	[ROOM_SHAPE_SPHERE] = "sphere", [ROOM_SHAPE_EXTRUSION] = "extrusion", NULL,
};

/* m = a * m, for 3 x 4 affine maps. */
static void affine_then(double m[3][4], const double a[3][4])
{
	double r[3][4];

	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++)
			r[i][j] = a[i][0] * m[0][j] + a[i][1] * m[1][j] + a[i][2] * m[2][j] +
				  (j == 3 ? a[i][3] : 0);
	memcpy(m, r, sizeof(r));
}

/* One rotation {axis: x | y | z | [ax, ay, az], degrees: D}, right-handed. */
static int parse_rotation(struct yp *p, yaml_node_t *n, const char *key, double m[3][4])
{
	static const char *const keys[] = { "axis", "degrees", NULL };
	static const char *const axes[] = { "x", "y", "z", NULL };
	double u[3] = { 0 }, deg, c, s, len;
	yaml_node_t *a, *d;
	char sub[128];
	int ax;

	if (yp_want_map(p, n, key) || yp_check_keys(p, n, key, keys))
		return RS_EINPUT;
	snprintf(sub, sizeof(sub), "%s.axis", key);
	if (!(a = yp_get(p, n, "axis")))
		return yp_missing(p, n, sub, "give axis: x, y, z or [ax, ay, az]");
	if (a->type == YAML_SEQUENCE_NODE) {
		if (yp_vec3(p, a, sub, -MAX_METRES, 0, u))
			return RS_EINPUT;
	} else if (yp_choice(p, a, sub, axes, &ax)) {
		return RS_EINPUT;
	} else {
		u[ax] = 1;
	}
	len = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
	if (len == 0)
		return yp_bad(p, a, sub, "the axis is the zero vector (valid: any non-zero [ax, ay, az])");
	snprintf(sub, sizeof(sub), "%s.degrees", key);
	if (!(d = yp_get(p, n, "degrees")))
		return yp_missing(p, n, sub, "give degrees: the angle, counter-clockwise about the axis");
	if (yp_num(p, d, sub, -3600, 0, 3600, 0, &deg))
		return RS_EINPUT;
	for (int i = 0; i < 3; i++)
		u[i] /= len;
	c = cos(deg * M_PI / 180);
	s = sin(deg * M_PI / 180);
	{	/* Rodrigues: R = c I + s [u]x + (1 - c) u u^T */
		const double r[3][4] = {
			{ c + u[0] * u[0] * (1 - c), u[0] * u[1] * (1 - c) - u[2] * s,
			  u[0] * u[2] * (1 - c) + u[1] * s, 0 },
			{ u[1] * u[0] * (1 - c) + u[2] * s, c + u[1] * u[1] * (1 - c),
			  u[1] * u[2] * (1 - c) - u[0] * s, 0 },
			{ u[2] * u[0] * (1 - c) - u[1] * s, u[2] * u[1] * (1 - c) + u[0] * s,
			  c + u[2] * u[2] * (1 - c), 0 },
		};
		affine_then(m, r);
	}
	return 0;
}

/* geometry.units and geometry.transform: scale, then rotate (in order), then translate. */
static int parse_transform(struct yp *p, yaml_node_t *g, double m[3][4])
{
	static const char *const keys[] = { "scale", "rotate", "translate", NULL };
	yaml_node_t *t = yp_get(p, g, "transform"), *n, *u = yp_get(p, g, "units");
	double s[3] = { 1, 1, 1 }, unit = 1;
	int idx;

	memset(m, 0, 12 * sizeof(double));
	if (u) {
		if (yp_choice(p, u, "geometry.units", unit_names, &idx))
			return RS_EINPUT;
		unit = unit_metres[idx];
	}
	for (int i = 0; i < 3; i++)
		m[i][i] = unit;
	if (!t)
		return 0;
	if (yp_want_map(p, t, "geometry.transform") || yp_check_keys(p, t, "geometry.transform", keys))
		return RS_EINPUT;
	if ((n = yp_get(p, t, "scale"))) {
		if (n->type == YAML_SEQUENCE_NODE) {
			if (yp_vec3(p, n, "geometry.transform.scale", 0, 1, s))
				return RS_EINPUT;
		} else if (yp_num(p, n, "geometry.transform.scale", 0, 1, 1e6, 0, &s[0])) {
			return RS_EINPUT;
		} else {
			s[1] = s[2] = s[0];
		}
		for (int i = 0; i < 3; i++)
			m[i][i] *= s[i];
	}
	if ((n = yp_get(p, t, "rotate"))) {
		if (n->type == YAML_SEQUENCE_NODE) {
			char key[64];

			for (yaml_node_item_t *i = n->data.sequence.items.start;
			     i < n->data.sequence.items.top; i++) {
				snprintf(key, sizeof(key), "geometry.transform.rotate[%d]",
					 (int)(i - n->data.sequence.items.start));
				if (parse_rotation(p, yp_node(p, *i), key, m))
					return RS_EINPUT;
			}
		} else if (parse_rotation(p, n, "geometry.transform.rotate", m)) {
			return RS_EINPUT;
		}
	}
	if ((n = yp_get(p, t, "translate"))) {
		double d[3];

		if (yp_vec3(p, n, "geometry.transform.translate", -MAX_METRES, 0, d))
			return RS_EINPUT;
		for (int i = 0; i < 3; i++)
			m[i][3] += d[i];
	}
	return 0;
}

static int parse_mesh(struct yp *p, yaml_node_t *g, yaml_node_t *n)
{
	struct room_geometry *geo = &p->room->geo;
	struct rs_error e = { 0 };
	double xf[3][4];

	if (yp_path(p, n, "geometry.mesh", geo->mesh_path) || parse_transform(p, g, xf))
		return RS_EINPUT;
	geo->mesh_at = yp_mark(n);
	if (mesh_read(geo->mesh_path, (const double (*)[4])xf, &geo->mesh, &e))
		return e.code == RS_ENOMEM ? rs_fail(p->err, e.code, "%s", e.msg)
		       : yp_bad(p, n, "geometry.mesh", "cannot read %s: %s (valid: a mesh in a format "
				"Assimp reads, such as OBJ, STL, PLY, glTF, COLLADA, 3DS, FBX)",
				geo->mesh_path, e.msg);
	return 0;
}

/* The bounds of every vertex of the mesh. */
static void mesh_bounds(const struct mesh *m, double lo[3], double hi[3])
{
	for (int d = 0; d < 3; d++) {
		lo[d] = INFINITY;
		hi[d] = -INFINITY;
	}
	for (size_t t = 0; t < m->ntri; t++)
		for (int c = 0; c < 3; c++)
			for (int d = 0; d < 3; d++) {
				lo[d] = fmin(lo[d], m->v[m->tri[t][c]][d]);
				hi[d] = fmax(hi[d], m->v[m->tri[t][c]][d]);
			}
}

/* geometry.voxels: the file's header sets the spacing, the bounds and the material names. */
static int parse_voxels(struct yp *p, yaml_node_t *n)
{
	struct room *r = p->room;
	struct room_geometry *geo = &r->geo;
	struct voxf_info info;
	struct rs_error e = { 0 };

	if (yp_path(p, n, "geometry.voxels", geo->voxels_path))
		return RS_EINPUT;
	geo->voxels_at = yp_mark(n);
	geo->voxels = &voxf_reader;
	if (voxf_info(geo->voxels_path, &info, &e))
		return yp_bad(p, n, "geometry.voxels", "cannot read %s: %s (valid: a file that roomsim "
			      "voxelize wrote)", geo->voxels_path, e.msg);
	if (fabs(info.h - r->spacing) > 1e-9 * info.h)
		return yp_bad(p, n, "geometry.voxels", "%s has cells of %g m, but the grid keys ask for "
			      "%g m (valid: grid.spacing: %.15g, or voxelize again at this grid)",
			      geo->voxels_path, info.h, r->spacing, info.h);
	r->spacing = info.h;
	for (int d = 0; d < 3; d++) {
		r->origin[d] = info.origin[d];
		r->box[d] = info.cells[d] * info.h;
	}
	geo->nvoxel_names = info.nnames;
	memcpy(geo->voxel_names, info.names, sizeof(info.names));
	return 0;
}

int cfg_parse_geometry(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "box", "mesh", "units", "transform", "voxels",
					    "shapes", "area_correction", NULL };
	struct room *r = p->room;
	yaml_node_t *g = yp_get(p, root, "geometry"), *b, *m, *v, *n;

	if (!g)
		return yp_missing(p, root, "geometry", "give geometry.box: [Lx, Ly, Lz] in metres, "
				  "geometry.mesh, geometry.voxels or geometry.shapes");
	if (yp_want_map(p, g, "geometry") || yp_check_keys(p, g, "geometry", keys))
		return RS_EINPUT;
	b = yp_get(p, g, "box");
	m = yp_get(p, g, "mesh");
	v = yp_get(p, g, "voxels");
	if (!!b + !!m + !!v > 1)
		return yp_bad(p, g, "geometry", "give one of box, mesh and voxels (shapes may be added "
			      "to any of them)");
	if (!b && !m && !v && !yp_get(p, g, "shapes"))
		return yp_missing(p, g, "geometry", "give box: [Lx, Ly, Lz] in metres, mesh: FILE, "
				  "voxels: FILE.h5 or shapes");
	if (!m && (yp_get(p, g, "units") || yp_get(p, g, "transform")))
		return yp_bad(p, yp_get(p, g, "units") ? yp_key_node(p, g, "units")
						 : yp_key_node(p, g, "transform"),
			   "geometry", "units and transform apply to geometry.mesh, which is not "
			   "given");
	r->shaped = !b || yp_get(p, g, "shapes");
	r->geo.area_correction = 1;
	if ((n = yp_get(p, g, "area_correction")) &&
	    yp_boolean(p, n, "geometry.area_correction", &r->geo.area_correction))
		return RS_EINPUT;
	if (b) {
		r->geo.has_box = 1;
		if (yp_vec3(p, b, "geometry.box", 0, 1, r->geo.box))
			return RS_EINPUT;
	}
	if (m && parse_mesh(p, g, m))
		return RS_EINPUT;
	if (v && parse_voxels(p, v))
		return RS_EINPUT;
	return 0;
}

/* A shape's material: its `material` key, else the surfaces' default. */
static int shape_material(struct yp *p, yaml_node_t *n, const char *path, struct room_shape *s)
{
	yaml_node_t *v = yp_get(p, n, "material");
	char key[96];

	s->material = p->room->geo.default_material;
	if (!v)
		return 0;
	snprintf(key, sizeof(key), "%s.material", path);
	if (v->type != YAML_SCALAR_NODE)
		return yp_bad(p, v, key, "expected a material name, got %s", yp_kind(v));
	if ((s->material = cfg_find_material(p->room, yp_scalar(v))) < 0)
		return cfg_unknown_material(p, v, key);
	return 0;
}

/* A number at key `k` of shape n (path names it), required. */
static int shape_num(struct yp *p, yaml_node_t *n, const char *path, const char *k, double lo,
		     double *out)
{
	yaml_node_t *v = yp_get(p, n, k);
	char key[96];

	snprintf(key, sizeof(key), "%s.%s", path, k);
	if (!v)
		return yp_missing(p, n, key, "every shape of this kind needs it");
	return yp_num(p, v, key, lo, 1, MAX_METRES, 0, out);
}

static int shape_vec(struct yp *p, yaml_node_t *n, const char *path, const char *k,
		     double out[3])
{
	yaml_node_t *v = yp_get(p, n, k);
	char key[96];

	snprintf(key, sizeof(key), "%s.%s", path, k);
	if (!v)
		return yp_missing(p, n, key, "every shape of this kind needs it");
	return yp_vec3(p, v, key, -MAX_METRES, 0, out);
}

static int parse_polygon(struct yp *p, yaml_node_t *n, const char *path, struct room_shape *s)
{
	yaml_node_t *l = yp_get(p, n, "polygon");
	char key[96], k2[128];
	double area = 0;

	snprintf(key, sizeof(key), "%s.polygon", path);
	if (!l)
		return yp_missing(p, n, key, "give polygon: [[x, y], ...], three or more vertices");
	if (l->type != YAML_SEQUENCE_NODE)
		return yp_bad(p, l, key, "expected a list of [x, y] vertices, got %s", yp_kind(l));
	s->npolygon = (int)(l->data.sequence.items.top - l->data.sequence.items.start);
	if (s->npolygon < 3 || s->npolygon > ROOM_MAX_POLYGON)
		return yp_bad(p, l, key, "%d vertices (valid: 3 to %d)", s->npolygon, ROOM_MAX_POLYGON);
	if (!(s->polygon = malloc((size_t)s->npolygon * sizeof(*s->polygon))))
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading %s", key);
	for (int i = 0; i < s->npolygon; i++) {
		yaml_node_t *xy = yp_node(p, l->data.sequence.items.start[i]);

		snprintf(k2, sizeof(k2), "%s[%d]", key, i);
		if (xy->type != YAML_SEQUENCE_NODE ||
		    xy->data.sequence.items.top - xy->data.sequence.items.start != 2)
			return yp_bad(p, xy, k2, "expected [x, y], got %s", yp_kind(xy));
		for (int c = 0; c < 2; c++)
			if (yp_num(p, yp_node(p, xy->data.sequence.items.start[c]), k2, -MAX_METRES, 0,
				   MAX_METRES, 0, &s->polygon[i][c]))
				   return RS_EINPUT;
	}
	for (int i = 0; i < s->npolygon; i++) {
		const double *a = s->polygon[i], *b = s->polygon[(i + 1) % s->npolygon];

		area += a[0] * b[1] - a[1] * b[0];
		for (int c = 0; c < 2; c++) {
			s->lo[c] = i ? fmin(s->lo[c], a[c]) : a[c];
			s->hi[c] = i ? fmax(s->hi[c], a[c]) : a[c];
		}
	}
	if (fabs(area) < 1e-12)
		return yp_bad(p, l, key, "the polygon has no area (valid: three or more vertices "
			      "not on one line)");
	return 0;
}

/* The kind's own keys of one shape, and its bounding box. */
static int parse_shape_kind(struct yp *p, yaml_node_t *n, const char *path, struct room_shape *s)
{
	static const char *const axes[] = { "x", "y", "z", NULL };
	yaml_node_t *v;
	char key[96];
	double height;

	switch (s->kind) {
	case ROOM_SHAPE_BOX:
		if (shape_vec(p, n, path, "min", s->lo) || shape_vec(p, n, path, "max", s->hi))
			return RS_EINPUT;
		for (int d = 0; d < 3; d++)
			if (s->hi[d] <= s->lo[d])
				return yp_bad(p, yp_get(p, n, "max"), path, "max[%d] = %g is not above "
					      "min[%d] = %g (valid: max > min on every axis)", d,
					      s->hi[d], d, s->lo[d]);
		return 0;
	case ROOM_SHAPE_SPHERE:
		if (shape_vec(p, n, path, "center", s->center) ||
		    shape_num(p, n, path, "radius", 0, &s->radius))
			return RS_EINPUT;
		for (int d = 0; d < 3; d++) {
			s->lo[d] = s->center[d] - s->radius;
			s->hi[d] = s->center[d] + s->radius;
		}
		return 0;
	case ROOM_SHAPE_CYLINDER:
		if (shape_vec(p, n, path, "center", s->center) ||
		    shape_num(p, n, path, "radius", 0, &s->radius) ||
		    shape_num(p, n, path, "height", 0, &height))
			return RS_EINPUT;
		s->axis = 2;
		snprintf(key, sizeof(key), "%s.axis", path);
		if ((v = yp_get(p, n, "axis")) && yp_choice(p, v, key, axes, &s->axis))
			return RS_EINPUT;
		for (int d = 0; d < 3; d++) {
			s->lo[d] = s->center[d] - (d == s->axis ? 0 : s->radius);
			s->hi[d] = s->center[d] + (d == s->axis ? height : s->radius);
		}
		return 0;
	default:
		if (parse_polygon(p, n, path, s) || shape_num(p, n, path, "height", 0, &height))
			return RS_EINPUT;
		s->axis = 2;
		s->lo[2] = 0;
		snprintf(key, sizeof(key), "%s.base", path);
		if ((v = yp_get(p, n, "base")) && yp_num(p, v, key, -MAX_METRES, 0, MAX_METRES, 0, &s->lo[2]))
			return RS_EINPUT;
		s->hi[2] = s->lo[2] + height;
		return 0;
	}
}

/* geometry.shapes: [{add | remove: KIND, ...its keys, material: NAME}, ...], in order. */
int cfg_parse_shapes(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[ROOM_NSHAPES][8] = {
		[ROOM_SHAPE_BOX] = { "add", "remove", "material", "min", "max", NULL },
		[ROOM_SHAPE_CYLINDER] = { "add", "remove", "material", "center", "radius", "height",
					 "axis", NULL },
		[ROOM_SHAPE_SPHERE] = { "add", "remove", "material", "center", "radius", NULL },
		[ROOM_SHAPE_EXTRUSION] = { "add", "remove", "material", "polygon", "base", "height",
					  NULL },
	};
	struct room_geometry *geo = &p->room->geo;
	yaml_node_t *g = yp_get(p, root, "geometry"), *l = yp_get(p, g, "shapes");
	char path[64];
	int kind;

	if (!l)
		return 0;
	if (l->type != YAML_SEQUENCE_NODE)
		return yp_bad(p, l, "geometry.shapes", "expected a list of shapes ({add: box, min: "
			      "[...], max: [...]}), got %s", yp_kind(l));
	geo->nshapes = (int)(l->data.sequence.items.top - l->data.sequence.items.start);
	if (geo->nshapes < 1 || geo->nshapes > ROOM_MAX_SHAPES)
		return yp_bad(p, l, "geometry.shapes", "%d shapes (valid: 1 to %d)", geo->nshapes,
			      ROOM_MAX_SHAPES);
	if (!(geo->shapes = calloc((size_t)geo->nshapes, sizeof(*geo->shapes))))
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading geometry.shapes");
	for (int i = 0; i < geo->nshapes; i++) {
		struct room_shape *s = &geo->shapes[i];
		yaml_node_t *n = yp_node(p, l->data.sequence.items.start[i]), *a, *rm;

		snprintf(path, sizeof(path), "geometry.shapes[%d]", i);
		if (yp_want_map(p, n, path))
			return RS_EINPUT;
		a = yp_get(p, n, "add");
		rm = yp_get(p, n, "remove");
		if (!a == !rm)
			return yp_bad(p, n, path, "give exactly one of add: KIND or remove: KIND (KIND: "
				      "box, cylinder, sphere or extrusion)");
		s->remove = !!rm;
		if (yp_choice(p, a ? a : rm, path, shape_names, &kind))
			return RS_EINPUT;
		s->kind = (enum room_shape_kind)kind;
		s->at = yp_mark(n);
		if (yp_check_keys(p, n, path, keys[kind]) || shape_material(p, n, path, s) ||
		    parse_shape_kind(p, n, path, s))
			return RS_EINPUT;
	}
	return 0;
}

/*
 * The room's bounds, the union of its base (box, mesh, voxel file) and its added shapes;
 * geometry.box keeps its low corner at the origin. Each side needs two cells.
 */
int cfg_set_bounds(struct yp *p, yaml_node_t *root)
{
	struct room *r = p->room;
	struct room_geometry *geo = &r->geo;
	double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
	yaml_node_t *g = yp_get(p, root, "geometry");

	if (geo->has_box)
		for (int d = 0; d < 3; d++) {
			lo[d] = 0;
			hi[d] = geo->box[d];
		}
	else if (geo->mesh.ntri)
		mesh_bounds(&geo->mesh, lo, hi);
	else if (geo->voxels_path[0])
		for (int d = 0; d < 3; d++) {
			lo[d] = r->origin[d];
			hi[d] = r->origin[d] + r->box[d];
		}
	for (int i = 0; i < geo->nshapes; i++)
		for (int d = 0; d < 3 && !geo->shapes[i].remove; d++) {
			lo[d] = fmin(lo[d], geo->shapes[i].lo[d]);
			hi[d] = fmax(hi[d], geo->shapes[i].hi[d]);
		}
	if (!(lo[0] < hi[0]))
		return yp_bad(p, g, "geometry", "the room has no air: its shapes only remove (valid: a "
			      "box, mesh or voxel file, or an `add` shape first)");
	for (int d = 0; d < 3; d++) {
		r->origin[d] = lo[d];
		r->box[d] = hi[d] - lo[d];
		if (r->box[d] < 2 * r->spacing)
			return yp_bad(p, g, "geometry", "the room is %g m along %c, less than two grid "
				      "spacings (%g m); valid: at least %g m", r->box[d], "xyz"[d],
				      r->spacing, 2 * r->spacing);
	}
	return 0;
}
