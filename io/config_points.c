/*
 * config_points.c - the sources and receivers sections: names, positions, source signals and
 * receiver grids.
 */
#include <errno.h>
#include <mysofa.h>
#include <unistd.h>

#include "balloon.h"
#include "config_read.h"
#include "../geometry/receivers.h"

#define DEFAULT_SOFA "/usr/share/libmysofa/default.sofa"	/* Debian's libmysofa1 */

/* The items of a required, non-empty list at key. */
static int list(struct yp *p, yaml_node_t *root, const char *key, const char *hint,
		yaml_node_t **out, int *count)
{
	yaml_node_t *l = yp_get(p, root, key);

	if (!l)
		return yp_missing(p, root, key, hint);
	if (l->type != YAML_SEQUENCE_NODE)
		return yp_bad(p, l, key, "expected a list (- {name: ..., position: [x, y, z]}), got %s",
			      yp_kind(l));
	*count = (int)(l->data.sequence.items.top - l->data.sequence.items.start);
	if (*count < 1 || *count > ROOM_MAX_POINTS)
		return yp_bad(p, l, key, "%d entries (valid: 1 to %d)", *count, ROOM_MAX_POINTS);
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
	if (!(v = yp_get(p, n, "name")))
		return yp_missing(p, n, key, "every entry needs a name");
	if (yp_name(p, v, key, nm))
		return RS_EINPUT;
	for (int j = 0; j < i; j++)
		if (!strcmp(names + (size_t)j * stride, nm))
			return yp_bad(p, v, key, "name '%s' is used twice (names must be unique)", nm);
	snprintf(key, sizeof(key), "%s.position", path);
	if (!(v = yp_get(p, n, "position")))
		return yp_missing(p, n, key, "give position: [x, y, z] in metres");
	*at = yp_mark(v);
	return yp_vec3(p, v, key, -MAX_METRES, 0, pos);
}

/*
 * A source's directivity: a first-order pattern's name, a library balloon's (talker,
 * loudspeaker), or a balloon table's file (io/balloon.h), relative to the room file.
 */
static int parse_directivity(struct yp *p, yaml_node_t *v, const char *key,
			     const char *const *patterns, const double *pattern_a,
			     struct room_source *s)
{
	struct room_balloon b;
	char file[ROOM_PATH_MAX], msg[RS_MSG_MAX / 2], valid[256];
	size_t len = 0;
	int rc;

	s->pattern_at = yp_mark(v);
	if (v->type != YAML_SCALAR_NODE)
		return yp_bad(p, v, key, "expected a pattern's name or a balloon table's file, "
			      "got %s", yp_kind(v));
	for (int k = 0; patterns[k]; k++)
		if (!strcmp(yp_scalar(v), patterns[k])) {
			s->pattern_a = pattern_a[k];
			snprintf(s->pattern, sizeof(s->pattern), "%s", patterns[k]);
			return 0;
		}
	for (int k = 0; patterns[k]; k++)
		len += (size_t)snprintf(valid + len, sizeof(valid) - len, "%s | ", patterns[k]);
	for (int k = 0; room_balloon_names[k]; k++)
		len += (size_t)snprintf(valid + len, sizeof(valid) - len, "%s | ",
					room_balloon_names[k]);
	rc = room_balloon_library(yp_scalar(v), &b);
	if (rc == -2)
		return rs_fail(p->err, RS_ENOMEM, "out of memory for %s", yp_scalar(v));
	if (rc) {
		const char *name = yp_scalar(v), *dot = strrchr(name, '.');

		if (!dot || strcmp(dot, ".csv"))
			return yp_bad(p, v, key, "'%s' is not valid (valid: %sa balloon table "
				      "FILE.csv)", name, valid);
		if (yp_path(p, v, key, file))
			return RS_EINPUT;
		if (cfg_balloon_read(file, &b, msg, sizeof(msg)))
			return yp_bad(p, v, key, "%s", msg);
	}
	if (!(s->balloon = malloc(sizeof(*s->balloon)))) {
		free(b.db);
		return rs_fail(p->err, RS_ENOMEM, "out of memory for %s", yp_scalar(v));
	}
	*s->balloon = b;
	s->pattern_a = 0;
	snprintf(s->pattern, sizeof(s->pattern), "%s", yp_scalar(v));
	return 0;
}

int cfg_parse_sources(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "name", "position", "signal", "fc", "amplitude",
					    "delay", "highpass", "directivity", "orientation", NULL };
	/* the first-order patterns a + (1 - a) cos: omni, cardioid, supercardioid (the most
	 * front-to-back energy), hypercardioid (the most directivity), figure-of-eight */
	static const char *const patterns[] = { "omni", "cardioid", "supercardioid",
						"hypercardioid", "figure-of-eight", NULL };
	static const double pattern_a[] = { 1, 0.5, 0.36602540378443865, 0.25, 0 };
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

		n = yp_node(p, l->data.sequence.items.start[i]);
		snprintf(path, sizeof(path), "sources[%d]", i);
		if (yp_want_map(p, n, path) || yp_check_keys(p, n, path, keys) ||
		    parse_point(p, n, path, s->name, s->pos, &s->at, r->sources[0].name,
				sizeof(*s), i))
			return RS_EINPUT;
		s->signal = ROOM_SIG_IMPULSE;
		snprintf(key, sizeof(key), "%s.signal", path);
		if ((v = yp_get(p, n, "signal"))) {
			if (yp_choice(p, v, key, signals, &sig))
				return RS_EINPUT;
			s->signal = (enum room_signal)sig;
		}
		s->fc = r->fmax / 2;
		snprintf(key, sizeof(key), "%s.fc", path);
		if ((v = yp_get(p, n, "fc"))) {
			if (s->signal == ROOM_SIG_IMPULSE)
				return yp_bad(p, v, key, "fc applies to gaussian and ricker signals, "
					      "not to impulse");
			if (yp_num(p, v, key, 0, 1, r->fmax, 0, &s->fc))
				return RS_EINPUT;
		}
		s->amplitude = 1;
		snprintf(key, sizeof(key), "%s.amplitude", path);
		if ((v = yp_get(p, n, "amplitude")) && yp_num(p, v, key, -1e9, 0, 1e9, 0, &s->amplitude))
			return RS_EINPUT;
		snprintf(key, sizeof(key), "%s.delay", path);
		if ((v = yp_get(p, n, "delay")) && yp_num(p, v, key, 0, 0, r->duration, 0, &s->delay))
			return RS_EINPUT;
		s->highpass = DEFAULT_HIGHPASS;
		snprintf(key, sizeof(key), "%s.highpass", path);
		if ((v = yp_get(p, n, "highpass")) &&
		    yp_num(p, v, key, 0, 0, r->fmax / 4, 0, &s->highpass))
			return RS_EINPUT;
		s->pattern_a = 1;
		s->aim[0] = 1;
		snprintf(s->pattern, sizeof(s->pattern), "omni");
		snprintf(key, sizeof(key), "%s.directivity", path);
		if ((v = yp_get(p, n, "directivity")) &&
		    parse_directivity(p, v, key, patterns, pattern_a, s))
			return RS_EINPUT;
		snprintf(key, sizeof(key), "%s.orientation", path);
		if ((v = yp_get(p, n, "orientation"))) {
			static const char *const okeys[] = { "azimuth", "elevation", NULL };
			double az = 0, el = 0;
			yaml_node_t *o;
			char k2[160];

			if (s->pattern_a == 1 && !s->balloon)
				return yp_bad(p, v, key, "orientation aims a directional source, and "
					      "this one is omni (valid: give directivity too, or no "
					      "orientation)");
			if (yp_want_map(p, v, key) || yp_check_keys(p, v, key, okeys))
				return RS_EINPUT;
			snprintf(k2, sizeof(k2), "%s.azimuth", key);
			if ((o = yp_get(p, v, "azimuth")) && yp_num(p, o, k2, -360, 0, 360, 0, &az))
				return RS_EINPUT;
			snprintf(k2, sizeof(k2), "%s.elevation", key);
			if ((o = yp_get(p, v, "elevation")) && yp_num(p, o, k2, -90, 0, 90, 0, &el))
				return RS_EINPUT;
			s->aim[0] = cos(el * M_PI / 180) * cos(az * M_PI / 180);
			s->aim[1] = cos(el * M_PI / 180) * sin(az * M_PI / 180);
			s->aim[2] = sin(el * M_PI / 180);
		}
		room_source_frame(s);
	}
	return 0;
}

/* receivers[i].grid: a plane, or over a surface, with a spacing and optionally an extent. */
static int parse_grid(struct yp *p, yaml_node_t *n, const char *path, struct room_grid *g)
{
	static const char *const keys[] = { "plane", "at", "over", "height", "spacing", "from",
					    "to", NULL };
	static const char *const axes[] = { "x", "y", "z", NULL };
	const struct room *r = p->room;
	yaml_node_t *v, *over;
	char key[160], list[512];
	int u, w, cnt;
	long count;
	double first;

	if (yp_want_map(p, n, path) || yp_check_keys(p, n, path, keys))
		return RS_EINPUT;
	g->mark = yp_mark(n);
	over = yp_get(p, n, "over");
	g->axis = over ? -1 : 2;
	snprintf(key, sizeof(key), "%s.plane", path);
	if ((v = yp_get(p, n, "plane"))) {
		if (over)
			return yp_bad(p, v, key, "give plane (with at) or over (with height), not both");
		if (yp_choice(p, v, key, axes, &g->axis))
			return RS_EINPUT;
	}
	if (over) {
		snprintf(key, sizeof(key), "%s.over", path);
		if (yp_name(p, over, key, g->surface))
			return RS_EINPUT;
		if (strcmp(g->surface, "floor") && (!r->geo.mesh.ntri ||
						    mesh_name(&r->geo.mesh, g->surface) < 0)) {
			size_t len = 0;

			list[0] = 0;
			for (int i = 0; i < r->geo.mesh.nnames && len < sizeof(list); i++)
				len += (size_t)snprintf(list + len, sizeof(list) - len, ", %s",
							r->geo.mesh.names[i]);
			return yp_bad(p, over, key, "'%s' is not a surface of this room (valid: floor, "
				      "the lowest air of every column%s%s)", g->surface,
				      r->geo.mesh.ntri ? ", or a name of the mesh" : "", list);
		}
		snprintf(key, sizeof(key), "%s.at", path);
		if ((v = yp_get(p, n, "at")))
			return yp_bad(p, v, key, "at belongs to a plane grid; over a surface give "
				      "height");
		g->height = 1.2;
		snprintf(key, sizeof(key), "%s.height", path);
		if ((v = yp_get(p, n, "height")) && yp_num(p, v, key, 0, 0, MAX_METRES, 0,
							      &g->height))
			return RS_EINPUT;
	} else {
		const double lo = r->origin[g->axis], hi = lo + r->box[g->axis];

		snprintf(key, sizeof(key), "%s.height", path);
		if ((v = yp_get(p, n, "height")))
			return yp_bad(p, v, key, "height belongs to a grid over a surface; a plane "
				      "grid gives at");
		snprintf(key, sizeof(key), "%s.at", path);
		if (!(v = yp_get(p, n, "at")))
			return yp_missing(p, n, key, "give the plane's position along its normal, m");
		if (yp_num(p, v, key, lo, 0, hi, 0, &g->at))
			return RS_EINPUT;
	}
	/* the lattice's axes: the plane's two others, in order; x and y over a surface */
	u = g->axis == 0 ? 1 : 0;
	w = g->axis == 2 || g->axis < 0 ? 1 : 2;
	snprintf(key, sizeof(key), "%s.spacing", path);
	if (!(v = yp_get(p, n, "spacing")))
		return yp_missing(p, n, key, "give the distance between points, m");
	if (yp_num(p, v, key, 0, 1, MAX_METRES, 0, &g->spacing))
		return RS_EINPUT;
	g->lo[0] = r->origin[u];
	g->hi[0] = r->origin[u] + r->box[u];
	g->lo[1] = r->origin[w];
	g->hi[1] = r->origin[w] + r->box[w];
	{
		yaml_node_t *f = yp_get(p, n, "from"), *t = yp_get(p, n, "to");
		double a[2], b[2];

		if (!f != !t)
			return yp_bad(p, f ? f : t, path, "give both from and to, or neither (the "
				      "room's bounds)");
		if (f) {
			snprintf(key, sizeof(key), "%s.from", path);
			if (yp_numbers(p, f, key, -MAX_METRES, 0, MAX_METRES, 0, a, 2, &cnt))
				return RS_EINPUT;
			if (cnt != 2)
				return yp_bad(p, f, key, "expected [%c, %c] in metres", 'x' + u, 'x' + w);
			snprintf(key, sizeof(key), "%s.to", path);
			if (yp_numbers(p, t, key, -MAX_METRES, 0, MAX_METRES, 0, b, 2, &cnt))
				return RS_EINPUT;
			if (cnt != 2)
				return yp_bad(p, t, key, "expected [%c, %c] in metres", 'x' + u, 'x' + w);
			for (int i = 0; i < 2; i++)
				if (b[i] < a[i])
					return yp_bad(p, t, key, "%c runs from %g to %g (valid: to at or "
						      "past from)", 'x' + (i ? w : u), a[i], b[i]);
			memcpy(g->lo, a, sizeof(a));
			memcpy(g->hi, b, sizeof(b));
			g->extent = 1;
		}
	}
	count = (long)grid_lattice(g->lo[0], g->hi[0], g->spacing, &first) *
		grid_lattice(g->lo[1], g->hi[1], g->spacing, &first);
	if (count > ROOM_MAX_GRID_POINTS)
		return yp_bad(p, v, key, "%g m makes a lattice of %ld points over %g x %g m (valid: "
			      "at most %d points, a spacing of %.3g m or more)", g->spacing, count,
			      g->hi[0] - g->lo[0], g->hi[1] - g->lo[1], ROOM_MAX_GRID_POINTS,
			      sqrt((g->hi[0] - g->lo[0]) * (g->hi[1] - g->lo[1]) /
				   ROOM_MAX_GRID_POINTS) * 1.01);
	return 0;
}

/* A receiver's binaural key: true, or {sofa: FILE, yaw: DEG, equalise: BOOL}; the file must
 * hold HRTFs of two ears that libmysofa reads. */
static int parse_binaural(struct yp *p, yaml_node_t *n, const char *path,
			  struct room_receiver *c)
{
	static const char *const keys[] = { "sofa", "yaw", "equalise", NULL };
	struct MYSOFA_HRTF *hrtf;
	yaml_node_t *v;
	char key[160];
	int on = 1, e = 0;

	snprintf(key, sizeof(key), "%s.binaural", path);
	if (n->type == YAML_SCALAR_NODE) {
		if (yp_boolean(p, n, key, &on))
			return RS_EINPUT;
	} else if (yp_want_map(p, n, key) || yp_check_keys(p, n, key, keys)) {
		return RS_EINPUT;
	}
	c->binaural = on;
	c->equalise = 1;
	snprintf(c->sofa, sizeof(c->sofa), "%s", DEFAULT_SOFA);
	if (!on)
		return 0;
	c->spatial_at = yp_mark(n);
	snprintf(key, sizeof(key), "%s.binaural.yaw", path);
	if (n->type == YAML_MAPPING_NODE && (v = yp_get(p, n, "yaw")) &&
	    yp_num(p, v, key, -360, 0, 360, 0, &c->yaw))
		return RS_EINPUT;
	snprintf(key, sizeof(key), "%s.binaural.equalise", path);
	if (n->type == YAML_MAPPING_NODE && (v = yp_get(p, n, "equalise")) &&
	    yp_boolean(p, v, key, &c->equalise))
		return RS_EINPUT;
	snprintf(key, sizeof(key), "%s.binaural.sofa", path);
	v = n->type == YAML_MAPPING_NODE ? yp_get(p, n, "sofa") : NULL;
	if (v && yp_path(p, v, key, c->sofa))
		return RS_EINPUT;
	if (access(c->sofa, R_OK))
		return yp_bad(p, v ? v : n, key, "cannot open %s: %s (valid: a SOFA file of HRTFs, "
			      "e.g. %s)", c->sofa, strerror(errno), DEFAULT_SOFA);
	if (!(hrtf = mysofa_load(c->sofa, &e)) || (e = mysofa_check(hrtf)) != MYSOFA_OK ||
	    hrtf->R != 2) {
		const int ears = hrtf && e == MYSOFA_OK ? (int)hrtf->R : 2;

		mysofa_free(hrtf);
		if (e == MYSOFA_READ_ERROR)
			return yp_bad(p, v ? v : n, key, "cannot read %s (valid: a SOFA file of "
				      "HRTFs, e.g. %s)", c->sofa, DEFAULT_SOFA);
		if (ears != 2)
			return yp_bad(p, v ? v : n, key, "%s holds responses of %d receivers (valid: "
				      "a SOFA file of HRTFs of two ears)", c->sofa, ears);
		return yp_bad(p, v ? v : n, key, "%s is not a SOFA file of HRTFs that libmysofa "
			      "reads (its error %d; valid: SimpleFreeFieldHRIR, e.g. %s)",
			      c->sofa, e, DEFAULT_SOFA);
	}
	mysofa_free(hrtf);
	return 0;
}

int cfg_parse_receivers(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "name", "position", "ambisonics", "binaural", NULL };
	static const char *const grid_keys[] = { "name", "grid", "wavs", NULL };
	struct room *r = p->room;
	yaml_node_t *l, *n, *v;
	char path[64], key[96], names[ROOM_MAX_POINTS][ROOM_NAME_MAX];
	int count, grid;

	if (list(p, root, "receivers", "give at least one receiver", &l, &count))
		return RS_EINPUT;
	r->receivers = calloc((size_t)count, sizeof(*r->receivers));
	r->grids = calloc((size_t)count, sizeof(*r->grids));
	if (!r->receivers || !r->grids)
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading receivers");
	for (int i = 0; i < count; i++) {
		n = yp_node(p, l->data.sequence.items.start[i]);
		snprintf(path, sizeof(path), "receivers[%d]", i);
		if (yp_want_map(p, n, path))
			return RS_EINPUT;
		grid = yp_get(p, n, "grid") != NULL;
		if (grid) {
			struct room_grid *g = &r->grids[r->ngrids];

			if (yp_check_keys(p, n, path, grid_keys))
				return RS_EINPUT;
			snprintf(key, sizeof(key), "%s.name", path);
			if (!(v = yp_get(p, n, "name")))
				return yp_missing(p, n, key, "every entry needs a name");
			if (yp_name(p, v, key, g->name))
				return RS_EINPUT;
			for (int j = 0; j < i; j++)
				if (!strcmp(names[j], g->name))
					return yp_bad(p, v, key, "name '%s' is used twice (names must be "
						      "unique)", g->name);
			snprintf(key, sizeof(key), "%s.grid", path);
			if (parse_grid(p, yp_get(p, n, "grid"), key, g))
				return RS_EINPUT;
			g->entry = i;
			snprintf(key, sizeof(key), "%s.wavs", path);
			if ((v = yp_get(p, n, "wavs")) && yp_boolean(p, v, key, &g->wavs))
				return RS_EINPUT;
			r->ngrids++;
		} else {
			struct room_receiver *c = &r->receivers[r->nreceivers];

			snprintf(key, sizeof(key), "%s.wavs", path);
			if (yp_get(p, n, "wavs"))
				return yp_bad(p, yp_get(p, n, "wavs"), key, "wavs belongs to a grid; every "
					      "point receiver gets its WAVs");
			if (yp_check_keys(p, n, path, keys) ||
			    parse_point(p, n, path, c->name, c->pos, &c->at, names[0],
					sizeof(names[0]), i))
				return RS_EINPUT;
			snprintf(key, sizeof(key), "%s.ambisonics", path);
			if ((v = yp_get(p, n, "ambisonics"))) {
				long order;

				if (yp_integer(p, v, key, 1, ROOM_MAX_AMBISONICS, &order))
					return RS_EINPUT;
				c->ambisonics = (int)order;
				c->spatial_at = yp_mark(v);
			}
			if ((v = yp_get(p, n, "binaural")) && parse_binaural(p, v, path, c))
				return RS_EINPUT;
			r->nreceivers++;
		}
		strcpy(names[i], grid ? r->grids[r->ngrids - 1].name
				      : r->receivers[r->nreceivers - 1].name);
	}
	return 0;
}
