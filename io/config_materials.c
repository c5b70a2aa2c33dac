/*
 * config_materials.c - the materials and surfaces sections: absorption (one value or per band),
 * admittance, reflection or a library entry, and which surface of a box, mesh or voxel file
 * takes which material (docs/input.md).
 */
#include "config_read.h"

/* Nominal third-octave centres, 20 Hz to 20 kHz; every third from 31.5 Hz is an octave's. */
static const double thirds[] = { 20,   25,   31.5, 40,   50,   63,    80,    100,   125,  160,  200,
				 250,  315,  400,  500,  630,  800,   1000,  1250,  1600, 2000, 2500,
				 3150, 4000, 5000, 6300, 8000, 10000, 12500, 16000, 20000 };
#define NTHIRDS ((int)(sizeof(thirds) / sizeof(thirds[0])))

static int third_of(double f)
{
	for (int i = 0; i < NTHIRDS; i++)
		if (fabs(f - thirds[i]) < 1e-6 * thirds[i])
			return i;
	return -1;
}

/* Bands f[0..n) as a contiguous run of octave or third-octave centres (*third says which);
 * else the error at n. */
static int check_run(struct yp *p, yaml_node_t *at, const char *key, const double *f, int n,
		     int *third)
{
	int octaves = 1, thirds_run = 1;

	for (int b = 0; b < n; b++) {
		const int t = third_of(f[b]), t0 = third_of(f[0]);

		if (t < 0)
			return yp_bad(p, at, key, "%g Hz is not a nominal octave or third-octave band "
				      "centre (valid: 31.5, 63, 125 ... 16000 Hz by octaves; 20, 25, "
				      "31.5 ... 20000 Hz by thirds)", f[b]);
		octaves = octaves && (t - 2) % 3 == 0 && t == t0 + 3 * b;
		thirds_run = thirds_run && t == t0 + b;
	}
	if (!octaves && !thirds_run)
		return yp_bad(p, at, key, "the bands must be a contiguous run of octave centres "
			      "(e.g. 125, 250, 500) or of third-octave centres (e.g. 100, 125, 160), "
			      "ascending");
	*third = !octaves;
	return 0;
}

/* The bands of m (band_f set, nbands of them), as check_run() checks them. */
static int check_bands(struct yp *p, yaml_node_t *n, const char *key, struct room_material *m)
{
	return check_run(p, n, key, m->band_f, m->nbands, &m->third);
}

/* absorption: {125: 0.02, ...}, or absorption: [..] with bands: [..]. */
static int parse_bands(struct yp *p, yaml_node_t *v, yaml_node_t *a, const char *path,
		       struct room_material *m)
{
	yaml_node_t *bn = yp_get(p, v, "bands");
	char sub[200];

	snprintf(sub, sizeof(sub), "%s.absorption", path);
	if (a->type == YAML_MAPPING_NODE) {
		if (bn)
			return yp_bad(p, bn, path, "bands are the keys of absorption here; give "
				      "bands only with absorption as a list");
		for (yaml_node_pair_t *e = a->data.mapping.pairs.start; e < a->data.mapping.pairs.top;
		     e++) {
			if (m->nbands == ROOM_MAX_BANDS)
				return yp_bad(p, a, sub, "more than %d bands", ROOM_MAX_BANDS);
			if (yp_num(p, yp_node(p, e->key), sub, 0, 1, 1e5, 0, &m->band_f[m->nbands]) ||
			    yp_num(p, yp_node(p, e->value), sub, 0, 0, 1, 0,
				   &m->band_alpha[m->nbands]))
				return RS_EINPUT;
			m->nbands++;
		}
	} else {
		char bkey[200];
		int nf;

		snprintf(bkey, sizeof(bkey), "%s.bands", path);
		if (!bn)
			return yp_bad(p, a, sub, "a list of absorptions needs bands: [...] beside it "
				      "(or give absorption as a mapping {125: 0.02, ...})");
		if (yp_numbers(p, bn, bkey, 0, 1, 1e5, 0, m->band_f, ROOM_MAX_BANDS, &nf) ||
		    yp_numbers(p, a, sub, 0, 0, 1, 0, m->band_alpha, ROOM_MAX_BANDS, &m->nbands))
			return RS_EINPUT;
		if (m->nbands != nf)
			return yp_bad(p, a, sub, "%d values for %d bands", m->nbands, nf);
	}
	if (m->nbands < 1)
		return yp_bad(p, a, sub, "no bands given");
	return check_bands(p, a, sub, m);
}

/* library: NAME, an entry of materials/library.yaml. */
static int parse_library(struct yp *p, yaml_node_t *n, const char *path,
			 struct room_material *m)
{
	const struct library_material *e;
	char sub[200];

	snprintf(sub, sizeof(sub), "%s.library", path);
	if (n->type != YAML_SCALAR_NODE)
		return yp_bad(p, n, sub, "expected a library entry's name, got %s", yp_kind(n));
	if (!p->lib) {
		if (!(p->lib = calloc(1, sizeof(*p->lib))))
			return rs_fail(p->err, RS_ENOMEM, "out of memory");
		if (library_load(p->lib, p->err))
			return RS_EINPUT;
	}
	if (!(e = library_find(p->lib, yp_scalar(n))))
		return yp_bad(p, n, sub, "no entry '%s' in the materials library (roomsim "
			      "materials lists them)", yp_scalar(n));
	if (!e->bands.n)
		return yp_bad(p, n, sub, "'%s' has scattering coefficients only (name it under "
			      "%s.scattering; absorption needs an entry with absorption: roomsim "
			      "materials lists them)", e->name, path);
	snprintf(m->library, sizeof(m->library), "%s", e->name);
	if (!m->nscat) {	/* the entry's scattering, unless the material gives its own */
		for (int b = 0; b < e->scat.n; b++) {
			m->scat_f[b] = e->scat.f[b];
			m->scat[b] = e->scat.alpha[b];
		}
		m->nscat = e->scat.n;
	}
	m->nbands = e->bands.n;
	m->third = e->bands.third;
	for (int b = 0; b < e->bands.n; b++) {
		m->band_f[b] = e->bands.f[b];
		m->band_alpha[b] = e->bands.alpha[b];
	}
	return 0;
}

/*
 * scattering: S (one value for every band), {125: S, ...} (per octave or third-octave band) or
 * the name of a library entry with scattering coefficients.
 */
static int parse_scattering(struct yp *p, yaml_node_t *n, const char *path,
			    struct room_material *m)
{
	char sub[200];
	int third;

	snprintf(sub, sizeof(sub), "%s.scattering", path);
	if (n->type == YAML_SCALAR_NODE) {
		const struct library_material *e;
		char *end;

		strtod(yp_scalar(n), &end);
		if (end != yp_scalar(n) && !*end) {
			m->nscat = 1;
			m->scat_f[0] = 0;
			return yp_num(p, n, sub, 0, 0, 1, 0, &m->scat[0]);
		}
		if (!p->lib) {
			if (!(p->lib = calloc(1, sizeof(*p->lib))))
				return rs_fail(p->err, RS_ENOMEM, "out of memory");
			if (library_load(p->lib, p->err))
				return RS_EINPUT;
		}
		if (!(e = library_find(p->lib, yp_scalar(n))) || !e->scat.n)
			return yp_bad(p, n, sub, "'%s' is neither a number from 0 to 1 nor a library "
				      "entry with scattering coefficients (roomsim materials lists "
				      "them)", yp_scalar(n));
		for (int b = 0; b < e->scat.n; b++) {
			m->scat_f[b] = e->scat.f[b];
			m->scat[b] = e->scat.alpha[b];
		}
		m->nscat = e->scat.n;
		return 0;
	}
	if (n->type != YAML_MAPPING_NODE)
		return yp_bad(p, n, sub, "expected one value from 0 to 1, {125: 0.1, 250: 0.2, ...} "
			      "or a library entry's name, got %s", yp_kind(n));
	m->nscat = 0;
	for (yaml_node_pair_t *e = n->data.mapping.pairs.start; e < n->data.mapping.pairs.top; e++) {
		if (m->nscat == ROOM_MAX_BANDS)
			return yp_bad(p, n, sub, "more than %d bands", ROOM_MAX_BANDS);
		if (yp_num(p, yp_node(p, e->key), sub, 0, 1, 1e5, 0, &m->scat_f[m->nscat]) ||
		    yp_num(p, yp_node(p, e->value), sub, 0, 0, 1, 0, &m->scat[m->nscat]))
			return RS_EINPUT;
		m->nscat++;
	}
	if (m->nscat < 1)
		return yp_bad(p, n, sub, "no bands given");
	return check_run(p, n, sub, m->scat_f, m->nscat, &third);
}

/* branches: [{r: R, m: M, k: K}, ...], the admittance given as branches (room.h). */
static int parse_branches(struct yp *p, yaml_node_t *n, const char *path,
			  struct room_material *m)
{
	static const char *const keys[] = { "r", "m", "k", NULL };
	char sub[220];
	int i = 0;

	snprintf(sub, sizeof(sub), "%s.branches", path);
	if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start)
		return yp_bad(p, n, sub, "expected a list of branches {r: R, m: M, k: K}, got %s",
			      yp_kind(n));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++, i++) {
		yaml_node_t *b = yp_node(p, *it), *x;
		char at[240];

		snprintf(at, sizeof(at), "%s[%d]", sub, i);
		if (i == ROOM_MAX_BRANCHES)
			return yp_bad(p, b, sub, "more than %d branches", ROOM_MAX_BRANCHES);
		if (yp_want_map(p, b, at) || yp_check_keys(p, b, at, keys))
			return RS_EINPUT;
		if (!(x = yp_get(p, b, "r")))
			return yp_missing(p, b, at, "r (the branch's resistance over rho c, > 0)");
		snprintf(at, sizeof(at), "%s[%d].r", sub, i);
		if (yp_num(p, x, at, 0, 1, 1e9, 0, &m->br_r[i]))
			return RS_EINPUT;
		m->br_m[i] = m->br_k[i] = 0;
		snprintf(at, sizeof(at), "%s[%d].m", sub, i);
		if ((x = yp_get(p, b, "m")) && yp_num(p, x, at, 0, 0, 1e6, 0, &m->br_m[i]))
			return RS_EINPUT;
		snprintf(at, sizeof(at), "%s[%d].k", sub, i);
		if ((x = yp_get(p, b, "k")) && yp_num(p, x, at, 0, 0, 1e12, 0, &m->br_k[i]))
			return RS_EINPUT;
	}
	m->nbranches = i;
	return 0;
}

static int parse_material(struct yp *p, yaml_node_t *k, yaml_node_t *v, struct room_material *m)
{
	static const char *const keys[] = { "absorption", "admittance", "reflection", "bands",
					    "library", "branches", "scattering", NULL };
	char path[160], sub[200];
	yaml_node_t *n;
	double x;
	int given = 0;

	snprintf(path, sizeof(path), "materials.%s", yp_scalar(k));
	if (yp_name(p, k, path, m->name) || yp_want_map(p, v, path) || yp_check_keys(p, v, path, keys))
		return RS_EINPUT;
	m->at = yp_mark(k);
	if ((n = yp_get(p, v, "scattering")) && parse_scattering(p, n, path, m))
		return RS_EINPUT;
	if ((n = yp_get(p, v, "absorption")) && n->type != YAML_SCALAR_NODE) {
		if (parse_bands(p, v, n, path, m))
			return RS_EINPUT;
		given++;
	} else if (n) {
		double amax = room_absorption_max();

		snprintf(sub, sizeof(sub), "%s.absorption", path);
		if (yp_num(p, n, sub, 0, 0, 1, 0, &x))
			return RS_EINPUT;
		if (x > amax)
			return yp_bad(p, n, sub, "%g is more than a locally reacting wall with real "
				      "admittance can absorb in a diffuse field (valid: 0 to %.4f)",
				      x, amax);
		m->beta = room_beta_of_absorption(x);
		given++;
	}
	if ((n = yp_get(p, v, "bands")) && !m->nbands)
		return yp_bad(p, n, path, "bands go with absorption given as a list");
	if ((n = yp_get(p, v, "library"))) {
		if (parse_library(p, n, path, m))
			return RS_EINPUT;
		given++;
	}
	if ((n = yp_get(p, v, "branches"))) {
		if (parse_branches(p, n, path, m))
			return RS_EINPUT;
		given++;
	}
	if ((n = yp_get(p, v, "admittance"))) {
		snprintf(sub, sizeof(sub), "%s.admittance", path);
		if (yp_num(p, n, sub, 0, 0, 1e3, 0, &m->beta))
			return RS_EINPUT;
		given++;
	}
	if ((n = yp_get(p, v, "reflection"))) {
		snprintf(sub, sizeof(sub), "%s.reflection", path);
		if (yp_num(p, n, sub, -1, 1, 1, 0, &x))
			return RS_EINPUT;
		m->beta = (1 - x) / (1 + x);	/* normal incidence: R = (1 - beta)/(1 + beta) */
		given++;
	}
	if (given != 1)
		return yp_bad(p, v, path, "give exactly one of absorption, admittance, reflection, "
			      "library, branches (%d given)", given);
	m->absorption = m->nbands || m->nbranches ? 0 : room_absorption_of_beta(m->beta);
	return 0;
}

int cfg_find_material(const struct room *r, const char *s)
{
	for (int i = 0; i < r->nmaterials; i++)
		if (!strcmp(r->materials[i].name, s))
			return i;
	return -1;
}

int cfg_parse_materials(struct yp *p, yaml_node_t *root)
{
	yaml_node_t *m = yp_get(p, root, "materials");
	yaml_node_pair_t *a;
	struct room *r = p->room;

	if (!m)
		return 0;
	if (yp_want_map(p, m, "materials"))
		return RS_EINPUT;
	if (m->data.mapping.pairs.top - m->data.mapping.pairs.start > ROOM_MAX_MATERIALS)
		return yp_bad(p, m, "materials", "more than %d materials", ROOM_MAX_MATERIALS);
	for (a = m->data.mapping.pairs.start; a < m->data.mapping.pairs.top; a++) {
		if (yp_node(p, a->key)->type != YAML_SCALAR_NODE)
			return yp_bad(p, yp_node(p, a->key), "materials", "a material name must be a plain name");
		if (cfg_find_material(r, yp_scalar(yp_node(p, a->key))) >= 0)
			return yp_bad(p, yp_node(p, a->key), "materials", "material '%s' defined twice",
				      yp_scalar(yp_node(p, a->key)));
		if (parse_material(p, yp_node(p, a->key), yp_node(p, a->value), &r->materials[r->nmaterials]))
			return RS_EINPUT;
		r->nmaterials++;
	}
	return 0;
}

/* An unknown material name at n: the error lists the defined ones. */
int cfg_unknown_material(struct yp *p, yaml_node_t *n, const char *key)
{
	const struct room *r = p->room;
	char list[512];
	size_t len = 0;

	list[0] = 0;
	for (int i = 0; i < r->nmaterials && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					r->materials[i].name);
	return yp_bad(p, n, key, "no material named '%s' (defined under materials: %s)", yp_scalar(n),
		      r->nmaterials ? list : "none");
}

/* The material named by scalar n at key. */
static int material_of(struct yp *p, yaml_node_t *n, const char *key, int *out)
{
	if (n->type != YAML_SCALAR_NODE)
		return yp_bad(p, n, key, "expected a material name, got %s", yp_kind(n));
	if ((*out = cfg_find_material(p->room, yp_scalar(n))) < 0)
		return cfg_unknown_material(p, n, key);
	return 0;
}

/* The material named rigid, the implicit one (beta = 0) unless the file defines it. */
static int rigid_material(struct yp *p, yaml_node_t *at, int *out)
{
	struct room *r = p->room;
	int i = cfg_find_material(r, "rigid");

	if (i < 0) {
		if (r->nmaterials == ROOM_MAX_MATERIALS)
			return yp_bad(p, at, "surfaces", "no room for the implicit rigid material "
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

		if (yp_node(p, a->key)->type != YAML_SCALAR_NODE)
			return yp_bad(p, yp_node(p, a->key), "surfaces", "a key must be a plain name");
		k = yp_scalar(yp_node(p, a->key));
		while (i < geo->nvoxel_names && strcmp(geo->voxel_names[i], k))
			i++;
		if (strcmp(k, "default") && i == geo->nvoxel_names)
			return yp_bad(p, yp_node(p, a->key), "surfaces", "the voxel file has no material "
				      "named '%s' (its materials: %s)", k, list);
	}
	for (int i = 0; i < geo->nvoxel_names; i++) {
		const char *name = geo->voxel_names[i];
		yaml_node_t *n = s ? yp_get(p, s, name) : NULL;

		snprintf(key, sizeof(key), "surfaces.%s", name);
		if (n ? material_of(p, n, key, &geo->voxel_material[i]) :
		    (geo->voxel_material[i] = cfg_find_material(p->room, name)) >= 0 ? 0 :
		    !strcmp(name, "rigid") ? rigid_material(p, at, &geo->voxel_material[i]) :
		    yp_bad(p, at, "surfaces", "the voxel file's walls use material '%s': define it "
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
		yaml_node_t *k = yp_node(p, a->key);
		int idx, mat;

		if (k->type != YAML_SCALAR_NODE) {
			rc = yp_bad(p, k, "surfaces", "a key must be a plain name");
			break;
		}
		snprintf(key, sizeof(key), "surfaces.%s", yp_scalar(k));
		if (!strcmp(yp_scalar(k), "default"))
			continue;
		if ((idx = mesh_name(m, yp_scalar(k))) < 0) {
			size_t len = 0;

			list[0] = 0;
			for (int i = 0; i < m->nnames && len < sizeof(list); i++)
				len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
							i ? ", " : "", m->names[i]);
			rc = yp_bad(p, k, key, "the mesh has no group, object or material named '%s' "
				    "(its names: %s)", yp_scalar(k), list);
		} else if (given[idx] >= 0) {
			rc = yp_bad(p, k, key, "key given twice (give each key once)");
		} else if (!(rc = material_of(p, yp_node(p, a->value), key, &mat))) {
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

int cfg_parse_surfaces(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "default", "floor", "ceiling", "x0", "x1", "y0", "y1",
					    NULL };
	static const char *const only_default[] = { "default", NULL };
	struct room *r = p->room;
	struct room_geometry *geo = &r->geo;
	yaml_node_t *s = yp_get(p, root, "surfaces"), *n;
	char key[64];

	for (int f = 0; f < ROOM_NFACES; f++)
		r->face_material[f] = -1;
	if (s && yp_want_map(p, s, "surfaces"))
		return RS_EINPUT;
	if (s && !geo->mesh.ntri && !geo->voxels_path[0] &&
	    yp_check_keys(p, s, "surfaces", geo->has_box ? keys : only_default))
		return RS_EINPUT;
	geo->default_material = -1;
	if (s && (n = yp_get(p, s, "default")) &&
	    material_of(p, n, "surfaces.default", &geo->default_material))
		return RS_EINPUT;
	if (geo->mesh.ntri)
		return mesh_surfaces(p, s, s ? s : root);
	if (geo->voxels_path[0])
		return voxel_surfaces(p, s, s ? s : root);
	for (int f = 0; f < ROOM_NFACES && geo->has_box; f++) {
		snprintf(key, sizeof(key), "surfaces.%s", room_face_names[f]);
		if (s && (n = yp_get(p, s, room_face_names[f])) ?
		    material_of(p, n, key, &r->face_material[f]) :
		    default_material(p, s ? s : root, &r->face_material[f]))
			return RS_EINPUT;
	}
	return 0;
}
