/*
 * config.c - read and validate a roomsim YAML room file (docs/input.md).
 *
 * libyaml's document API keeps every node's start mark, so each error can name the file,
 * line and column of the offending key or value. Validation is complete here: after
 * cfg_load() succeeds only checks that need the voxel grid remain (positions in air, memory).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../solver/kernels.h"
#include "../solver/stencil.h"	/* grid.dispersion needs the scheme's dispersion */
#include "mesh.h"
#include "voxfile.h"

/* Defaults of docs/input.md. */
#define DEFAULT_C 343.0
#define DEFAULT_RHO 1.204
#define DEFAULT_PPW 10.5
#define DEFAULT_COURANT 1.0
#define DEFAULT_WAV_RATE 48000
#define DEFAULT_HIGHPASS 10.0	/* Hz: below every room's first mode, above DC drift */

/* Limits of what we accept, each with its reason. */
#define MIN_PPW 2.0		/* below 2 points per wavelength fmax is past the grid's Nyquist */
#define MIN_WAV_RATE 8000
#define MAX_WAV_RATE 384000
#define MAX_METRES 1e5	/* no room or position is 100 km across */
#define MAX_BLOCK_THREADS 1024	/* CUDA's limit on threads per block */

struct yp {
	yaml_document_t doc;
	struct room *room;
	struct rs_error *err;
	int from_string;	/* cfg_load_string: paths in the file are relative to the cwd */
};

static struct room_mark mark_of(const yaml_node_t *n)
{
	struct room_mark m = { (int)n->start_mark.line + 1, (int)n->start_mark.column + 1 };
	return m;
}

__attribute__((format(printf, 4, 5)))
static int bad(struct yp *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	room_vat(p->err, p->room->file, mark_of(n), key, fmt, ap);
	va_end(ap);
	return RS_EINPUT;
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "a plain value" : "a string";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static yaml_node_t *node(struct yp *p, int id)
{
	return yaml_document_get_node(&p->doc, id);
}

static int want_map(struct yp *p, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_MAPPING_NODE)
		return bad(p, n, key, "expected a mapping of keys, got %s", node_kind(n));
	return 0;
}

/*
 * Check that every key of map is in the NULL-terminated allowed list and appears once.
 * The message lists the valid keys, so a typo is fixed at once.
 */
static int check_keys(struct yp *p, const yaml_node_t *map, const char *path,
		      const char *const *allowed)
{
	yaml_node_pair_t *a, *b;
	char full[256], valid[512];

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
		yaml_node_t *k = node(p, a->key);
		const char *const *w;

		snprintf(full, sizeof(full), "%s%s%s", path, *path ? "." : "",
			 k->type == YAML_SCALAR_NODE ? scalar(k) : "?");
		if (k->type != YAML_SCALAR_NODE)
			return bad(p, k, full, "a key must be a plain name, got %s", node_kind(k));
		for (w = allowed; *w && strcmp(*w, scalar(k)); w++)
			;
		if (!*w) {
			size_t len = 0;

			valid[0] = 0;
			for (w = allowed; *w && len < sizeof(valid) - 2; w++)
				len += (size_t)snprintf(valid + len, sizeof(valid) - len, "%s%s",
							w == allowed ? "" : ", ", *w);
			return bad(p, k, full, "unknown key (valid keys here: %s)", valid);
		}
		for (b = map->data.mapping.pairs.start; b < a; b++)
			if (!strcmp(scalar(node(p, b->key)), scalar(k)))
				return bad(p, k, full, "key given twice (give each key once)");
	}
	return 0;
}

static yaml_node_t *get(struct yp *p, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *a;

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++)
		if (!strcmp(scalar(node(p, a->key)), key))
			return node(p, a->value);
	return NULL;
}

static yaml_node_t *key_node(struct yp *p, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *a;

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++)
		if (!strcmp(scalar(node(p, a->key)), key))
			return node(p, a->key);
	return NULL;
}

static int missing(struct yp *p, const yaml_node_t *map, const char *path, const char *what)
{
	return bad(p, map, path, "required key is missing (%s)", what);
}

/* A finite number in [lo, hi]; open ends exclude the bound. */
static int num(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
	       double hi, int hi_open, double *out)
{
	char *end;
	double v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return bad(p, n, key, "expected a number, got %s", node_kind(n));
	errno = 0;
	v = strtod(scalar(n), &end);
	if (end == scalar(n) || *end || errno || !isfinite(v))
		return bad(p, n, key, "'%s' is not a finite number", scalar(n));
	if (v < lo || v > hi || (lo_open && v == lo) || (hi_open && v == hi))
		return bad(p, n, key, "%g is out of range (valid: %c%g, %g%c)", v,
			   lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
	*out = v;
	return 0;
}

static int integer(struct yp *p, const yaml_node_t *n, const char *key, long lo, long hi,
		   long *out)
{
	char *end;
	long v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return bad(p, n, key, "expected a whole number, got %s", node_kind(n));
	errno = 0;
	v = strtol(scalar(n), &end, 10);
	if (end == scalar(n) || *end || errno)
		return bad(p, n, key, "'%s' is not a whole number", scalar(n));
	if (v < lo || v > hi)
		return bad(p, n, key, "%ld is out of range (valid: %ld to %ld)", v, lo, hi);
	*out = v;
	return 0;
}

/* One of the NULL-terminated choices; returns its index in *out. */
static int choice(struct yp *p, const yaml_node_t *n, const char *key,
		  const char *const *choices, int *out)
{
	char valid[256];
	size_t len = 0;
	int i;

	if (n->type == YAML_SCALAR_NODE)
		for (i = 0; choices[i]; i++)
			if (!strcmp(scalar(n), choices[i])) {
				*out = i;
				return 0;
			}
	valid[0] = 0;
	for (i = 0; choices[i]; i++)
		len += (size_t)snprintf(valid + len, sizeof(valid) - len, "%s%s", i ? " | " : "",
					choices[i]);
	if (n->type != YAML_SCALAR_NODE)
		return bad(p, n, key, "expected one of %s, got %s", valid, node_kind(n));
	return bad(p, n, key, "'%s' is not valid (valid: %s)", scalar(n), valid);
}

static int boolean(struct yp *p, const yaml_node_t *n, const char *key, int *out)
{
	static const char *const words[] = { "false", "true", NULL };

	return choice(p, n, key, words, out);
}

/* A name that is safe as part of a file name. */
static int name(struct yp *p, const yaml_node_t *n, const char *key, char out[ROOM_NAME_MAX])
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE)
		return bad(p, n, key, "expected a name, got %s", node_kind(n));
	s = scalar(n);
	if (!*s || strlen(s) >= ROOM_NAME_MAX)
		return bad(p, n, key, "name must have 1 to %d characters", ROOM_NAME_MAX - 1);
	for (const char *c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
			return bad(p, n, key, "'%s' has a character other than letters, digits, "
				   "'_', '.', '-' (names become file names)", s);
	strcpy(out, s);
	return 0;
}

static int vec3(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
		double out[3])
{
	char k[160];
	int i;

	if (n->type != YAML_SEQUENCE_NODE)
		return bad(p, n, key, "expected a list of three numbers [x, y, z], got %s",
			   node_kind(n));
	if (n->data.sequence.items.top - n->data.sequence.items.start != 3)
		return bad(p, n, key, "expected three numbers [x, y, z], got %d",
			   (int)(n->data.sequence.items.top - n->data.sequence.items.start));
	for (i = 0; i < 3; i++) {
		snprintf(k, sizeof(k), "%s[%d]", key, i);
		if (num(p, node(p, n->data.sequence.items.start[i]), k, lo, lo_open, MAX_METRES, 0,
			&out[i]))
			return RS_EINPUT;
	}
	return 0;
}

static int parse_material(struct yp *p, yaml_node_t *k, yaml_node_t *v, struct room_material *m)
{
	static const char *const keys[] = { "absorption", "admittance", "reflection", NULL };
	char path[160], sub[200];
	yaml_node_t *n;
	double x;
	int given = 0;

	snprintf(path, sizeof(path), "materials.%s", scalar(k));
	if (name(p, k, path, m->name) || want_map(p, v, path) || check_keys(p, v, path, keys))
		return RS_EINPUT;
	m->at = mark_of(k);
	if ((n = get(p, v, "absorption"))) {
		double amax = room_absorption_max();

		snprintf(sub, sizeof(sub), "%s.absorption", path);
		if (num(p, n, sub, 0, 0, 1, 0, &x))
			return RS_EINPUT;
		if (x > amax)
			return bad(p, n, sub, "%g is more than a locally reacting wall with real "
				   "admittance can absorb in a diffuse field (valid: 0 to %.4f)",
				   x, amax);
		m->beta = room_beta_of_absorption(x);
		given++;
	}
	if ((n = get(p, v, "admittance"))) {
		snprintf(sub, sizeof(sub), "%s.admittance", path);
		if (num(p, n, sub, 0, 0, 1e3, 0, &m->beta))
			return RS_EINPUT;
		given++;
	}
	if ((n = get(p, v, "reflection"))) {
		snprintf(sub, sizeof(sub), "%s.reflection", path);
		if (num(p, n, sub, -1, 1, 1, 0, &x))
			return RS_EINPUT;
		m->beta = (1 - x) / (1 + x);	/* normal incidence: R = (1 - beta)/(1 + beta) */
		given++;
	}
	if (given != 1)
		return bad(p, v, path, "give exactly one of absorption, admittance, reflection "
			   "(%d given)", given);
	m->absorption = room_absorption_of_beta(m->beta);
	return 0;
}

static int find_material(const struct room *r, const char *s)
{
	for (int i = 0; i < r->nmaterials; i++)
		if (!strcmp(r->materials[i].name, s))
			return i;
	return -1;
}

static int parse_materials(struct yp *p, yaml_node_t *root)
{
	yaml_node_t *m = get(p, root, "materials");
	yaml_node_pair_t *a;
	struct room *r = p->room;

	if (!m)
		return 0;
	if (want_map(p, m, "materials"))
		return RS_EINPUT;
	if (m->data.mapping.pairs.top - m->data.mapping.pairs.start > ROOM_MAX_MATERIALS)
		return bad(p, m, "materials", "more than %d materials", ROOM_MAX_MATERIALS);
	for (a = m->data.mapping.pairs.start; a < m->data.mapping.pairs.top; a++) {
		if (node(p, a->key)->type != YAML_SCALAR_NODE)
			return bad(p, node(p, a->key), "materials", "a material name must be a plain name");
		if (find_material(r, scalar(node(p, a->key))) >= 0)
			return bad(p, node(p, a->key), "materials", "material '%s' defined twice",
				   scalar(node(p, a->key)));
		if (parse_material(p, node(p, a->key), node(p, a->value), &r->materials[r->nmaterials]))
			return RS_EINPUT;
		r->nmaterials++;
	}
	return 0;
}

/* An unknown material name at n: the error lists the defined ones. */
static int unknown_material(struct yp *p, yaml_node_t *n, const char *key)
{
	const struct room *r = p->room;
	char list[512];
	size_t len = 0;

	list[0] = 0;
	for (int i = 0; i < r->nmaterials && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					r->materials[i].name);
	return bad(p, n, key, "no material named '%s' (defined under materials: %s)", scalar(n),
		   r->nmaterials ? list : "none");
}

/* The material named by scalar n at key. */
static int material_of(struct yp *p, yaml_node_t *n, const char *key, int *out)
{
	if (n->type != YAML_SCALAR_NODE)
		return bad(p, n, key, "expected a material name, got %s", node_kind(n));
	if ((*out = find_material(p->room, scalar(n))) < 0)
		return unknown_material(p, n, key);
	return 0;
}

/* The material named rigid, the implicit one (beta = 0) unless the file defines it. */
static int rigid_material(struct yp *p, yaml_node_t *at, int *out)
{
	struct room *r = p->room;
	int i = find_material(r, "rigid");

	if (i < 0) {
		if (r->nmaterials == ROOM_MAX_MATERIALS)
			return bad(p, at, "surfaces", "no room for the implicit rigid material "
				   "(valid: at most %d materials with it)", ROOM_MAX_MATERIALS - 1);
		i = r->nmaterials++;
		strcpy(r->materials[i].name, "rigid");
		r->materials[i].beta = 0;
		r->materials[i].absorption = 0;
	}
	*out = i;
	return 0;
}

/* The material of a surface given none: surfaces.default, else the rigid material. */
static int default_material(struct yp *p, yaml_node_t *at, int *out)
{
	struct room_geometry *geo = &p->room->geo;

	if (geo->default_material < 0 && rigid_material(p, at, &geo->default_material))
		return RS_EINPUT;
	*out = geo->default_material;
	return 0;
}

/*
 * surfaces for a voxel file: its walls' material names map to the surfaces key of that name,
 * else to the material of that name; `default` is for the walls of shapes.
 */
static int voxel_surfaces(struct yp *p, yaml_node_t *s, yaml_node_t *at)
{
	struct room_geometry *geo = &p->room->geo;
	char key[ROOM_NAME_MAX + 16], list[512];
	size_t len = 0;
	int dflt;

	if (default_material(p, at, &dflt))	/* for faces the file has no wall on */
		return RS_EINPUT;
	list[0] = 0;
	for (int i = 0; i < geo->nvoxel_names; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					geo->voxel_names[i]);
	for (yaml_node_pair_t *a = s ? s->data.mapping.pairs.start : NULL;
	     s && a < s->data.mapping.pairs.top; a++) {
		const char *k;
		int i = 0;

		if (node(p, a->key)->type != YAML_SCALAR_NODE)
			return bad(p, node(p, a->key), "surfaces", "a key must be a plain name");
		k = scalar(node(p, a->key));
		while (i < geo->nvoxel_names && strcmp(geo->voxel_names[i], k))
			i++;
		if (strcmp(k, "default") && i == geo->nvoxel_names)
			return bad(p, node(p, a->key), "surfaces", "the voxel file has no material "
				   "named '%s' (its materials: %s)", k, list);
	}
	for (int i = 0; i < geo->nvoxel_names; i++) {
		const char *name = geo->voxel_names[i];
		yaml_node_t *n = s ? get(p, s, name) : NULL;

		snprintf(key, sizeof(key), "surfaces.%s", name);
		if (n ? material_of(p, n, key, &geo->voxel_material[i]) :
		    (geo->voxel_material[i] = find_material(p->room, name)) >= 0 ? 0 :
		    !strcmp(name, "rigid") ? rigid_material(p, at, &geo->voxel_material[i]) :
		    bad(p, at, "surfaces", "the voxel file's walls use material '%s': define it "
			"under materials, or map it to one with surfaces.%s", name, name))
			return RS_EINPUT;
	}
	return 0;
}

/*
 * surfaces for a mesh: default and the mesh's own names (groups, objects, materials). A part
 * takes the material of the first of its names (docs/input.md, "Meshes") given here.
 */
static int mesh_surfaces(struct yp *p, yaml_node_t *s, yaml_node_t *at)
{
	struct mesh *m = &p->room->geo.mesh;
	int *given = calloc((size_t)m->nnames + 1, sizeof(int));
	char key[MESH_NAME_MAX + 16], list[400];
	int rc = 0;

	if (!given)
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading surfaces");
	for (int i = 0; i < m->nnames; i++)
		given[i] = -1;
	for (yaml_node_pair_t *a = s ? s->data.mapping.pairs.start : NULL;
	     s && !rc && a < s->data.mapping.pairs.top; a++) {
		yaml_node_t *k = node(p, a->key);
		int idx, mat;

		if (k->type != YAML_SCALAR_NODE) {
			rc = bad(p, k, "surfaces", "a key must be a plain name");
			break;
		}
		snprintf(key, sizeof(key), "surfaces.%s", scalar(k));
		if (!strcmp(scalar(k), "default"))
			continue;
		if ((idx = mesh_name(m, scalar(k))) < 0) {
			size_t len = 0;

			list[0] = 0;
			for (int i = 0; i < m->nnames && len < sizeof(list); i++)
				len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
							i ? ", " : "", m->names[i]);
			rc = bad(p, k, key, "the mesh has no group, object or material named '%s' "
				 "(its names: %s)", scalar(k), list);
		} else if (given[idx] >= 0) {
			rc = bad(p, k, key, "key given twice (give each key once)");
		} else if (!(rc = material_of(p, node(p, a->value), key, &mat))) {
			given[idx] = mat;
		}
	}
	for (int t = 0; !rc && t < m->nparts; t++) {
		struct mesh_part *pt = &m->parts[t];

		pt->material = -1;
		for (int i = 0; i < pt->nnames && pt->material < 0; i++)
			pt->material = given[pt->names[i]];
		if (pt->material < 0)
			rc = default_material(p, at, &pt->material);
	}
	free(given);
	return rc;
}

static int parse_surfaces(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "default", "floor", "ceiling", "x0", "x1", "y0", "y1",
					    NULL };
	static const char *const only_default[] = { "default", NULL };
	struct room *r = p->room;
	struct room_geometry *geo = &r->geo;
	yaml_node_t *s = get(p, root, "surfaces"), *n;
	char key[64];

	for (int f = 0; f < ROOM_NFACES; f++)
		r->face_material[f] = -1;
	if (s && want_map(p, s, "surfaces"))
		return RS_EINPUT;
	if (s && !geo->mesh.ntri && !geo->voxels_path[0] &&
	    check_keys(p, s, "surfaces", geo->has_box ? keys : only_default))
		return RS_EINPUT;
	geo->default_material = -1;
	if (s && (n = get(p, s, "default")) &&
	    material_of(p, n, "surfaces.default", &geo->default_material))
		return RS_EINPUT;
	if (geo->mesh.ntri)
		return mesh_surfaces(p, s, s ? s : root);
	if (geo->voxels_path[0])
		return voxel_surfaces(p, s, s ? s : root);
	for (int f = 0; f < ROOM_NFACES && geo->has_box; f++) {
		snprintf(key, sizeof(key), "surfaces.%s", room_face_names[f]);
		if (s && (n = get(p, s, room_face_names[f])) ?
		    material_of(p, n, key, &r->face_material[f]) :
		    default_material(p, s ? s : root, &r->face_material[f]))
			return RS_EINPUT;
	}
	return 0;
}

/*
 * grid.dispersion: the points per wavelength that keep the scheme's worst-case phase-velocity
 * error at fmax under the given value (docs/stencils.md), instead of grid.ppw.
 */
static struct stn_stencil stencil;	/* large: the scheme's, for the grid keys */

/* The configured stencil and its computed Courant limit, or an error at n for key. */
static int scheme_limit(struct yp *p, yaml_node_t *n, const char *key, double *limit)
{
	if (stn_from_config(p->room, &stencil))
		return bad(p, n, key, "the scheme's stencil is not valid (check scheme.weights)");
	*limit = stn_courant_limit(&stencil);
	return 0;
}

static int dispersion_spacing(struct yp *p, yaml_node_t *g, yaml_node_t *n)
{
	const struct stn_stencil *s = &stencil;
	struct room *r = p->room;
	double tol, limit = 0;

	if (!get(p, g, "fmax") || get(p, g, "ppw"))
		return bad(p, n, "grid.dispersion", "goes with grid.fmax and replaces grid.ppw "
			   "(give fmax and dispersion, without ppw or spacing)");
	if (num(p, n, "grid.dispersion", 0, 1, 0.5, 0, &tol) ||
	    scheme_limit(p, n, "grid.dispersion", &limit))
		return RS_EINPUT;
	if (limit <= 0 || r->courant > 1)
		return bad(p, n, "grid.dispersion", "the scheme is not stable at grid.courant %g, so "
			   "it has no dispersion to meet (see roomsim scheme)", r->courant);
	r->ppw = stn_ppw_for(s, r->courant * limit, tol);
	if (!isfinite(r->ppw))
		return bad(p, n, "grid.dispersion", "%s cannot reach %g at any grid", s->name, tol);
	r->spacing = r->c / (r->fmax * r->ppw);
	return 0;
}

static int parse_grid(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "fmax", "ppw", "dispersion", "spacing", "courant",
					    NULL };
	struct room *r = p->room;
	yaml_node_t *g = get(p, root, "grid"), *n, *f, *h;

	if (!g)
		return missing(p, root, "grid", "give grid.fmax (Hz) or grid.spacing (m)");
	if (want_map(p, g, "grid") || check_keys(p, g, "grid", keys))
		return RS_EINPUT;
	f = get(p, g, "fmax");
	h = get(p, g, "spacing");
	if (f && h)
		return bad(p, h, "grid.spacing", "give either grid.spacing or grid.fmax/ppw, not both");
	if (h && get(p, g, "ppw"))
		return bad(p, get(p, g, "ppw"), "grid.ppw", "ppw goes with fmax; with spacing it "
			   "has no meaning (remove it or give fmax instead of spacing)");
	if (!f && !h)
		return missing(p, g, "grid", "give grid.fmax (Hz) or grid.spacing (m)");
	r->ppw = DEFAULT_PPW;
	if ((n = get(p, g, "ppw")) && num(p, n, "grid.ppw", MIN_PPW, 0, 1e4, 0, &r->ppw))
		return RS_EINPUT;
	if (f) {
		if (num(p, f, "grid.fmax", 0, 1, 1e6, 0, &r->fmax))
			return RS_EINPUT;
		r->spacing = r->c / (r->fmax * r->ppw);
		r->grid_at = mark_of(key_node(p, g, "fmax"));
	} else {
		if (num(p, h, "grid.spacing", 0, 1, 1e3, 0, &r->spacing))
			return RS_EINPUT;
		r->fmax = r->c / (r->spacing * r->ppw);
		r->grid_at = mark_of(key_node(p, g, "spacing"));
	}
	/* A courant over 1 is refused once the scheme's limit is known, with that limit. */
	r->courant = DEFAULT_COURANT;
	r->courant_at = r->grid_at;
	if ((n = get(p, g, "courant"))) {
		if (num(p, n, "grid.courant", 0, 1, 100, 0, &r->courant))
			return RS_EINPUT;
		r->courant_at = mark_of(n);
	} else if (r->stencil == ROOM_STENCIL_INTERPOLATED || r->stencil == ROOM_STENCIL_FCC) {
		double limit = 0;

		/* a named scheme runs at its published Courant number unless told otherwise */
		if (scheme_limit(p, key_node(p, root, "grid"), "grid.courant", &limit))
			return RS_EINPUT;
		if (limit > 0)
			r->courant = fmin(1, stencil.courant / limit);
	}
	return (n = get(p, g, "dispersion")) ? dispersion_spacing(p, g, n) : 0;
}

/* scheme.block: [bx, by], x a multiple of 32 (whole warps along rows), at most 1024 threads. */
static int parse_block(struct yp *p, yaml_node_t *n, int block[2])
{
	long v[2];
	char k[32];

	if (n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top - n->data.sequence.items.start != 2)
		return bad(p, n, "scheme.block", "expected [x, y] threads, e.g. [32, 8]");
	for (int i = 0; i < 2; i++) {
		snprintf(k, sizeof(k), "scheme.block[%d]", i);
		if (integer(p, node(p, n->data.sequence.items.start[i]), k, 1, MAX_BLOCK_THREADS,
			    &v[i]))
			return RS_EINPUT;
	}
	if (v[0] % 32 || v[0] * v[1] > MAX_BLOCK_THREADS)
		return bad(p, n, "scheme.block", "[%ld, %ld] is not valid (valid: x a multiple of 32, "
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
		if ((n = get(p, s, only[i])) && (int)r->stencil != i) {
			snprintf(k, sizeof(k), "scheme.%s", only[i]);
			return bad(p, n, k, "applies to the %s stencil only (this one is %s)",
				   family[i], family[r->stencil]);
		}
	if ((n = get(p, s, "weights")) && r->stencil != ROOM_STENCIL_COMPACT &&
	    r->stencil != ROOM_STENCIL_BOX)
		return bad(p, n, "scheme.weights", "applies to compact and box stencils only");
	if (r->stencil == ROOM_STENCIL_INTERPOLATED) {
		if (!(n = get(p, s, "variant")))
			return missing(p, s, "scheme.variant", "give variant: IWB, IISO, IISO2, CCP, "
				       "OCTA, IDWM or SRL (SLF)");
		if (choice(p, n, "scheme.variant", stn_variant_names, &r->variant))
			return RS_EINPUT;
	}
	if ((n = get(p, s, "order"))) {
		if (integer(p, n, "scheme.order", 2, 16, &v))
			return RS_EINPUT;
		if (v % 2)
			return bad(p, n, "scheme.order", "order %ld is odd (valid: 2, 4, ..., 16)", v);
		r->order = (int)v;
	}
	if (r->stencil == ROOM_STENCIL_COMPACT) {
		if (!(n = get(p, s, "radius2")))
			return missing(p, s, "scheme.radius2", "give radius2: R, e.g. 3 for 27 points");
		if (integer(p, n, "scheme.radius2", 1, 22, &v))
			return RS_EINPUT;
		if (!three_squares(v))
			return bad(p, n, "scheme.radius2", "%ld is not a sum of three squares, so no "
				   "shell lies at |q|^2 = %ld (valid: 1 to 22 but 7 and 15)", v, v);
		r->radius2 = (int)v;
	}
	if (r->stencil == ROOM_STENCIL_BOX) {
		if (!(n = get(p, s, "q")))
			return missing(p, s, "scheme.q", "give q: [q1, q2, q3], e.g. [2, 2, 2]");
		if (n->type != YAML_SEQUENCE_NODE ||
		    n->data.sequence.items.top - n->data.sequence.items.start != 3)
			return bad(p, n, "scheme.q", "expected [q1, q2, q3]");
		for (int i = 0; i < 3; i++) {
			snprintf(k, sizeof(k), "scheme.q[%d]", i);
			if (integer(p, node(p, n->data.sequence.items.start[i]), k, 0, 4, &v))
				return RS_EINPUT;
			r->boxq[i] = (int)v;
		}
		if (r->boxq[0] < 1 || r->boxq[0] < r->boxq[1] || r->boxq[1] < r->boxq[2])
			return bad(p, n, "scheme.q", "expected q1 >= q2 >= q3 >= 0 and q1 >= 1");
	}
	if ((n = get(p, s, "weights"))) {
		double sum = 0;

		if (n->type != YAML_SEQUENCE_NODE)
			return bad(p, n, "scheme.weights", "expected a list of shell weights");
		r->nweights = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
		if (r->nweights < 1 || r->nweights > ROOM_MAX_WEIGHTS)
			return bad(p, n, "scheme.weights", "%d weights (valid: 1 to %d)", r->nweights,
				   ROOM_MAX_WEIGHTS);
		for (int i = 0; i < r->nweights; i++) {
			snprintf(k, sizeof(k), "scheme.weights[%d]", i);
			if (num(p, node(p, n->data.sequence.items.start[i]), k, -1e3, 0, 1e3, 0,
				&r->weights[i]))
				return RS_EINPUT;
			sum += r->weights[i];
		}
		if (fabs(sum - 1) > 1e-9)
			return bad(p, n, "scheme.weights", "the weights sum to %.12g (valid: any weights "
				   "that sum to 1: each shell alone is a second-order Laplacian)", sum);
	}
	return 0;
}

static int parse_scheme(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "stencil", "order", "radius2", "q", "weights",
					    "variant", "precision", "kernel", "block", "dts", "nt",
					    NULL };
	static const char *const stencils[] = { "leggy", "compact", "box", "interpolated", "fcc",
						NULL };
	static const char *const precisions[] = { "float32", "float64", NULL };
	struct room *r = p->room;
	yaml_node_t *s = get(p, root, "scheme"), *n;
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
	r->scheme_at = mark_of(key_node(p, root, "scheme"));
	if (want_map(p, s, "scheme") || check_keys(p, s, "scheme", keys))
		return RS_EINPUT;
	if ((n = get(p, s, "stencil"))) {
		if (choice(p, n, "scheme.stencil", stencils, &idx))
			return RS_EINPUT;
		r->stencil = (enum room_stencil)idx;
	}
	if (parse_stencil_params(p, s, r))
		return RS_EINPUT;
	if ((n = get(p, s, "precision"))) {
		if (choice(p, n, "scheme.precision", precisions, &idx))
			return RS_EINPUT;
		r->precision = idx ? 8 : 4;
	}
	if ((n = get(p, s, "kernel"))) {
		if (choice(p, n, "scheme.kernel", kernel_names, &idx))
			return RS_EINPUT;
		r->kernel = (enum kernel_id)idx;
	}
	if ((n = get(p, s, "dts"))) {
		if (integer(p, n, "scheme.dts", 1, ROOM_MAX_DTS, &v))
			return RS_EINPUT;
		r->dts = (int)v;
	}
	if ((n = get(p, s, "nt"))) {
		if (integer(p, n, "scheme.nt", 1, ROOM_MAX_NT, &v))
			return RS_EINPUT;
		r->nt = (int)v;
	}
	return (n = get(p, s, "block")) ? parse_block(p, n, r->block) : 0;
}

static int parse_medium(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "c", "rho", NULL };
	struct room *r = p->room;
	yaml_node_t *m = get(p, root, "medium"), *n;

	r->c = DEFAULT_C;
	r->rho = DEFAULT_RHO;
	if (!m)
		return 0;
	if (want_map(p, m, "medium") || check_keys(p, m, "medium", keys))
		return RS_EINPUT;
	if ((n = get(p, m, "c")) && num(p, n, "medium.c", 0, 1, 1e5, 0, &r->c))
		return RS_EINPUT;
	if ((n = get(p, m, "rho")) && num(p, n, "medium.rho", 0, 1, 1e5, 0, &r->rho))
		return RS_EINPUT;
	return 0;
}

#include "config_geometry.inc"

/* The items of a required, non-empty list at key. */
static int list(struct yp *p, yaml_node_t *root, const char *key, const char *hint,
		yaml_node_t **out, int *count)
{
	yaml_node_t *l = get(p, root, key);

	if (!l)
		return missing(p, root, key, hint);
	if (l->type != YAML_SEQUENCE_NODE)
		return bad(p, l, key, "expected a list (- {name: ..., position: [x, y, z]}), got %s",
			   node_kind(l));
	*count = (int)(l->data.sequence.items.top - l->data.sequence.items.start);
	if (*count < 1 || *count > ROOM_MAX_POINTS)
		return bad(p, l, key, "%d entries (valid: 1 to %d)", *count, ROOM_MAX_POINTS);
	*out = l;
	return 0;
}

/* Common part of a source or receiver: its name (unique in names[0..i-1]) and position. */
static int parse_point(struct yp *p, yaml_node_t *n, const char *path, char *nm,
		       double pos[3], struct room_mark *at, const char *names, size_t stride, int i)
{
	char key[200];
	yaml_node_t *v;

	snprintf(key, sizeof(key), "%s.name", path);
	if (!(v = get(p, n, "name")))
		return missing(p, n, key, "every entry needs a name");
	if (name(p, v, key, nm))
		return RS_EINPUT;
	for (int j = 0; j < i; j++)
		if (!strcmp(names + (size_t)j * stride, nm))
			return bad(p, v, key, "name '%s' is used twice (names must be unique)", nm);
	snprintf(key, sizeof(key), "%s.position", path);
	if (!(v = get(p, n, "position")))
		return missing(p, n, key, "give position: [x, y, z] in metres");
	*at = mark_of(v);
	return vec3(p, v, key, -MAX_METRES, 0, pos);
}

static int parse_sources(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "name", "position", "signal", "fc", "amplitude",
					    "delay", "highpass", NULL };
	static const char *const signals[] = { "impulse", "gaussian", "ricker", NULL };
	struct room *r = p->room;
	yaml_node_t *l, *n, *v;
	char path[64], key[128];
	int sig;

	if (list(p, root, "sources", "give at least one source", &l, &r->nsources))
		return RS_EINPUT;
	r->sources = calloc((size_t)r->nsources, sizeof(*r->sources));
	if (!r->sources)
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading sources");
	for (int i = 0; i < r->nsources; i++) {
		struct room_source *s = &r->sources[i];

		n = node(p, l->data.sequence.items.start[i]);
		snprintf(path, sizeof(path), "sources[%d]", i);
		if (want_map(p, n, path) || check_keys(p, n, path, keys) ||
		    parse_point(p, n, path, s->name, s->pos, &s->at, r->sources[0].name,
				sizeof(*s), i))
			return RS_EINPUT;
		s->signal = ROOM_SIG_IMPULSE;
		snprintf(key, sizeof(key), "%s.signal", path);
		if ((v = get(p, n, "signal"))) {
			if (choice(p, v, key, signals, &sig))
				return RS_EINPUT;
			s->signal = (enum room_signal)sig;
		}
		s->fc = r->fmax / 2;
		snprintf(key, sizeof(key), "%s.fc", path);
		if ((v = get(p, n, "fc"))) {
			if (s->signal == ROOM_SIG_IMPULSE)
				return bad(p, v, key, "fc applies to gaussian and ricker signals, "
					   "not to impulse");
			if (num(p, v, key, 0, 1, r->fmax, 0, &s->fc))
				return RS_EINPUT;
		}
		s->amplitude = 1;
		snprintf(key, sizeof(key), "%s.amplitude", path);
		if ((v = get(p, n, "amplitude")) && num(p, v, key, -1e9, 0, 1e9, 0, &s->amplitude))
			return RS_EINPUT;
		snprintf(key, sizeof(key), "%s.delay", path);
		if ((v = get(p, n, "delay")) && num(p, v, key, 0, 0, r->duration, 0, &s->delay))
			return RS_EINPUT;
		s->highpass = DEFAULT_HIGHPASS;
		snprintf(key, sizeof(key), "%s.highpass", path);
		if ((v = get(p, n, "highpass")) &&
		    num(p, v, key, 0, 0, r->fmax / 4, 0, &s->highpass))
			return RS_EINPUT;
	}
	return 0;
}

static int parse_receivers(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "name", "position", NULL };
	struct room *r = p->room;
	yaml_node_t *l, *n;
	char path[64];

	if (list(p, root, "receivers", "give at least one receiver", &l, &r->nreceivers))
		return RS_EINPUT;
	r->receivers = calloc((size_t)r->nreceivers, sizeof(*r->receivers));
	if (!r->receivers)
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading receivers");
	for (int i = 0; i < r->nreceivers; i++) {
		struct room_receiver *c = &r->receivers[i];

		n = node(p, l->data.sequence.items.start[i]);
		snprintf(path, sizeof(path), "receivers[%d]", i);
		if (want_map(p, n, path) || check_keys(p, n, path, keys) ||
		    parse_point(p, n, path, c->name, c->pos, &c->at, r->receivers[0].name,
				sizeof(*c), i))
			return RS_EINPUT;
	}
	return 0;
}

static int parse_wav(struct yp *p, yaml_node_t *out)
{
	static const char *const keys[] = { "samplerate", "format", "highpass", "normalize", NULL };
	static const char *const formats[] = { "float32", "pcm24", "pcm16", NULL };
	struct room *r = p->room;
	yaml_node_t *w = get(p, out, "wav"), *n;
	long rate;
	int fmt;

	if (!w)
		return 0;
	if (want_map(p, w, "output.wav") || check_keys(p, w, "output.wav", keys))
		return RS_EINPUT;
	if ((n = get(p, w, "samplerate"))) {
		if (integer(p, n, "output.wav.samplerate", MIN_WAV_RATE, MAX_WAV_RATE, &rate))
			return RS_EINPUT;
		r->wav_rate = (int)rate;
	}
	if ((n = get(p, w, "format"))) {
		if (choice(p, n, "output.wav.format", formats, &fmt))
			return RS_EINPUT;
		r->wav_format = (enum room_wavfmt)fmt;
	}
	if ((n = get(p, w, "highpass")) &&
	    num(p, n, "output.wav.highpass", 0, 0, r->wav_rate / 4.0, 0, &r->wav_highpass))
		return RS_EINPUT;
	if ((n = get(p, w, "normalize")) && boolean(p, n, "output.wav.normalize", &r->wav_normalize))
		return RS_EINPUT;
	return 0;
}

static int parse_planes(struct yp *p, yaml_node_t *snap)
{
	static const char *const keys[] = { "axis", "at", NULL };
	static const char *const axes[] = { "x", "y", "z", NULL };
	struct room *r = p->room;
	yaml_node_t *l = get(p, snap, "planes"), *n, *v;
	char path[64], key[96];

	if (!l)
		return missing(p, snap, "output.snapshots.planes",
			       "give planes: [{axis: z, at: 1.5}]");
	if (l->type != YAML_SEQUENCE_NODE)
		return bad(p, l, "output.snapshots.planes", "expected a list, got %s", node_kind(l));
	r->nplanes = (int)(l->data.sequence.items.top - l->data.sequence.items.start);
	if (r->nplanes < 1 || r->nplanes > ROOM_MAX_POINTS)
		return bad(p, l, "output.snapshots.planes", "%d planes (valid: 1 to %d)", r->nplanes,
			   ROOM_MAX_POINTS);
	r->planes = calloc((size_t)r->nplanes, sizeof(*r->planes));
	if (!r->planes)
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading planes");
	for (int i = 0; i < r->nplanes; i++) {
		struct room_plane *pl = &r->planes[i];

		n = node(p, l->data.sequence.items.start[i]);
		snprintf(path, sizeof(path), "output.snapshots.planes[%d]", i);
		if (want_map(p, n, path) || check_keys(p, n, path, keys))
			return RS_EINPUT;
		snprintf(key, sizeof(key), "%s.axis", path);
		if (!(v = get(p, n, "axis")))
			return missing(p, n, key, "give axis: x, y or z");
		if (choice(p, v, key, axes, &pl->axis))
			return RS_EINPUT;
		snprintf(key, sizeof(key), "%s.at", path);
		if (!(v = get(p, n, "at")))
			return missing(p, n, key, "give at: the plane's coordinate in metres");
		if (num(p, v, key, r->origin[pl->axis], 0, r->origin[pl->axis] + r->box[pl->axis],
			0, &pl->at))
			return RS_EINPUT;
		pl->mark = mark_of(v);
	}
	return 0;
}

static int parse_output(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "dir", "wav", "snapshots", NULL };
	static const char *const snap_keys[] = { "every", "planes", NULL };
	struct room *r = p->room;
	yaml_node_t *o = get(p, root, "output"), *n, *s;
	long every;

	strcpy(r->out_dir, "out");
	r->wav_rate = DEFAULT_WAV_RATE;
	r->wav_format = ROOM_WAV_FLOAT32;
	r->wav_highpass = DEFAULT_HIGHPASS;
	if (!o)
		return 0;
	if (want_map(p, o, "output") || check_keys(p, o, "output", keys))
		return RS_EINPUT;
	if ((n = get(p, o, "dir"))) {
		if (n->type != YAML_SCALAR_NODE || !*scalar(n) ||
		    strlen(scalar(n)) >= sizeof(r->out_dir))
			return bad(p, n, "output.dir", "expected a directory path, got %s",
				   node_kind(n));
		strcpy(r->out_dir, scalar(n));
	}
	if (parse_wav(p, o))
		return RS_EINPUT;
	if (!(s = get(p, o, "snapshots")))
		return 0;
	if (want_map(p, s, "output.snapshots") || check_keys(p, s, "output.snapshots", snap_keys))
		return RS_EINPUT;
	if (!(n = get(p, s, "every")))
		return missing(p, s, "output.snapshots.every", "give every: N steps between frames");
	if (integer(p, n, "output.snapshots.every", 1, 1000000000L, &every))
		return RS_EINPUT;
	r->snap_every = (int)every;
	return parse_planes(p, s);
}

static int parse_root(struct yp *p)
{
	static const char *const keys[] = { "name", "medium", "grid", "scheme", "duration",
					    "geometry", "materials", "surfaces", "sources",
					    "receivers", "output", NULL };
	struct room *r = p->room;
	yaml_node_t *root = yaml_document_get_root_node(&p->doc), *n;
	struct room_mark top = { 1, 1 };

	if (!root)
		return room_at(p->err, r, top, "(document)", "the file is empty (a room needs grid, "
			       "geometry, duration, sources and receivers)");
	if (want_map(p, root, "(document)") || check_keys(p, root, "", keys))
		return RS_EINPUT;
	strcpy(r->name, "room");
	if ((n = get(p, root, "name")) && name(p, n, "name", r->name))
		return RS_EINPUT;
	if (!(n = get(p, root, "duration")))
		return missing(p, root, "duration", "give duration: seconds of impulse response");
	if (num(p, n, "duration", 0, 1, 3600, 0, &r->duration))
		return RS_EINPUT;
	if (parse_medium(p, root) || parse_scheme(p, root) || parse_grid(p, root) ||
	    parse_materials(p, root) || parse_geometry(p, root) || parse_surfaces(p, root) ||
	    parse_shapes(p, root) || set_bounds(p, root) || parse_sources(p, root) ||
	    parse_receivers(p, root) || parse_output(p, root))
		return p->err && p->err->code ? p->err->code : RS_EINPUT;
	/* The WAV band-limit needs fmax below the output Nyquist frequency. */
	if (r->fmax >= r->wav_rate / 2.0)
		return room_at(p->err, r, r->grid_at, "grid", "fmax %g Hz is not below the WAV "
			       "Nyquist frequency %g Hz (valid: raise output.wav.samplerate above "
			       "%g)", r->fmax, r->wav_rate / 2.0, 2 * r->fmax);
	return 0;
}

static struct room *load(yaml_parser_t *parser, const char *label, int from_string,
			 struct rs_error *err)
{
	struct yp p = { .err = err, .from_string = from_string };

	p.room = calloc(1, sizeof(*p.room));
	if (!p.room) {
		rs_fail(err, RS_ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(p.room->file, sizeof(p.room->file), "%s", label);
	if (!yaml_parser_load(parser, &p.doc)) {
		rs_fail(err, RS_EINPUT, "%s:%d:%d: (syntax): %s%s%s (the file is not valid YAML)",
			label, (int)parser->problem_mark.line + 1,
			(int)parser->problem_mark.column + 1,
			parser->problem ? parser->problem : "parse error",
			parser->context ? " " : "", parser->context ? parser->context : "");
		room_free(p.room);
		return NULL;
	}
	if (parse_root(&p)) {
		room_free(p.room);
		p.room = NULL;
	}
	yaml_document_delete(&p.doc);
	return p.room;
}

struct room *cfg_load(const char *path, struct rs_error *err)
{
	yaml_parser_t parser;
	struct room *r;
	FILE *f = fopen(path, "rb");

	if (!f) {
		rs_fail(err, RS_EINPUT, "%s:1:1: (file): cannot read: %s (give a readable YAML "
			"room file)", path, strerror(errno));
		return NULL;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	r = load(&parser, path, 0, err);
	yaml_parser_delete(&parser);
	fclose(f);
	return r;
}

struct room *cfg_load_string(const char *text, const char *label, struct rs_error *err)
{
	yaml_parser_t parser;
	struct room *r;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	r = load(&parser, label, 1, err);
	yaml_parser_delete(&parser);
	return r;
}

