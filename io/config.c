/*
 * config.c - read and validate a roomsim YAML room file (docs/input.md): the document, its
 * top-level keys and the medium; each other section has its own config_*.c.
 *
 * libyaml's document API keeps every node's start mark, so each error can name the file,
 * line and column of the offending key or value. Validation is complete here: after
 * cfg_load() succeeds only checks that need the voxel grid remain (positions in air, memory).
 */
#include "config_read.h"

#include "../solver/air.h"

/* The air: c from medium.c or the temperature; humidity and pressure for its absorption. */
static int parse_medium(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "c", "rho", "temperature", "humidity", "pressure",
					    "air_absorption", NULL };
	struct room *r = p->room;
	yaml_node_t *m = yp_get(p, root, "medium"), *n;
	struct air air;

	r->rho = DEFAULT_RHO;
	r->temperature = DEFAULT_TEMPERATURE;
	r->humidity = DEFAULT_HUMIDITY;
	r->pressure = DEFAULT_PRESSURE;
	r->air_absorption = 1;
	if (m && (yp_want_map(p, m, "medium") || yp_check_keys(p, m, "medium", keys)))
		return RS_EINPUT;
	/* ISO 9613-1's formulas hold from -20 to 50 degrees, 10 to 100 % (and a little beyond) */
	if (m && (n = yp_get(p, m, "temperature")) &&
	    yp_num(p, n, "medium.temperature", -40, 0, 60, 0, &r->temperature))
		return RS_EINPUT;
	if (m && (n = yp_get(p, m, "humidity")) &&
	    yp_num(p, n, "medium.humidity", 0, 0, 100, 0, &r->humidity))
		return RS_EINPUT;
	if (m && (n = yp_get(p, m, "pressure")) &&
	    yp_num(p, n, "medium.pressure", 0, 1, 200, 0, &r->pressure))
		return RS_EINPUT;
	if (m && (n = yp_get(p, m, "air_absorption")) &&
	    yp_boolean(p, n, "medium.air_absorption", &r->air_absorption))
		return RS_EINPUT;
	air = (struct air){ r->temperature, r->humidity, r->pressure };
	r->c = air_sound_speed(&air);
	if (m && (n = yp_get(p, m, "c")) && yp_num(p, n, "medium.c", 0, 1, 1e5, 0, &r->c))
		return RS_EINPUT;
	if (m && (n = yp_get(p, m, "rho")) && yp_num(p, n, "medium.rho", 0, 1, 1e5, 0, &r->rho))
		return RS_EINPUT;
	return 0;
}

static int parse_root(struct yp *p)
{
	static const char *const keys[] = { "name", "medium", "grid", "scheme", "duration",
					    "geometry", "materials", "surfaces", "sources",
					    "receivers", "output", "hybrid", NULL };
	struct room *r = p->room;
	yaml_node_t *root = yaml_document_get_root_node(&p->doc), *n;
	struct room_mark top = { 1, 1 };

	if (!root)
		return room_at(p->err, r, top, "(document)", "the file is empty (a room needs grid, "
			       "geometry, duration, sources and receivers)");
	if (yp_want_map(p, root, "(document)") || yp_check_keys(p, root, "", keys))
		return RS_EINPUT;
	strcpy(r->name, "room");
	if ((n = yp_get(p, root, "name")) && yp_name(p, n, "name", r->name))
		return RS_EINPUT;
	if (!(n = yp_get(p, root, "duration")))
		return yp_missing(p, root, "duration", "give duration: seconds of impulse response");
	if (yp_num(p, n, "duration", 0, 1, 3600, 0, &r->duration))
		return RS_EINPUT;
	if (parse_medium(p, root) || cfg_parse_scheme(p, root) || cfg_parse_grid(p, root) ||
	    cfg_parse_materials(p, root) || cfg_parse_geometry(p, root) || cfg_parse_surfaces(p, root) ||
	    cfg_parse_shapes(p, root) || cfg_set_bounds(p, root) || cfg_fit_grid(p, root) ||
	    cfg_parse_sources(p, root) || cfg_parse_receivers(p, root) || cfg_parse_output(p, root) ||
	    cfg_parse_hybrid(p, root))
		return p->err && p->err->code ? p->err->code : RS_EINPUT;
	/* The WAV band-limit needs fmax below the output Nyquist frequency. */
	if (r->fmax >= r->wav_rate / 2.0)
		return room_at(p->err, r, r->grid_at, "grid", "fmax %g Hz is not below the WAV "
			       "Nyquist frequency %g Hz (valid: raise output.wav.samplerate above "
			       "%g)", r->fmax, r->wav_rate / 2.0, 2 * r->fmax);
	return 0;
}

/* The value node of key in mapping m, its pair's index in *at; 0 when none. */
static int pair_of(yaml_document_t *d, yaml_node_t *m, const char *key, int *at)
{
	for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < m->data.mapping.pairs.top; q++) {
		const yaml_node_t *k = yaml_document_get_node(d, q->key);

		if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key)) {
			*at = (int)(q - m->data.mapping.pairs.start);
			return q->value;
		}
	}
	return 0;
}

/*
 * One override "a.b.c=VALUE" of the document: the scalar VALUE at that key, the maps on its
 * way made where missing; "a.b.c=" removes the key. Its nodes' marks are line 0, which
 * messages print as the override (room_vat).
 */
static int apply_set(yaml_document_t *d, const char *set, const char *label,
		     struct rs_error *err)
{
	char path[256], *eq, *key, *next;
	int node = 1, at;

	snprintf(path, sizeof(path), "%s", set);
	if (!(eq = strchr(path, '=')) || eq == path)
		return rs_fail(err, RS_EINPUT, "%s: --set %s: expected KEY=VALUE (e.g. --set "
			       "grid.ppw=12)", label, set);
	*eq = 0;
	for (key = path; key; key = next) {
		yaml_node_t *m = yaml_document_get_node(d, node);
		int v;

		if ((next = strchr(key, '.')))
			*next++ = 0;
		if (!m || m->type != YAML_MAPPING_NODE || !*key)
			return rs_fail(err, RS_EINPUT, "%s: --set %s: %s is not a key under a map",
				       label, set, *key ? key : "(empty)");
		v = pair_of(d, m, key, &at);
		if (next && v) {	/* on down */
			node = v;
			continue;
		}
		if (!next && !eq[1]) {	/* remove the key, if there */
			if (v) {
				yaml_node_pair_t *q = m->data.mapping.pairs.start + at;

				memmove(q, q + 1, (size_t)(m->data.mapping.pairs.top - q - 1) * sizeof(*q));
				m->data.mapping.pairs.top--;
			}
			return 0;
		}
		{
			const int k = yaml_document_add_scalar(d, NULL, (yaml_char_t *)key, -1,
							       YAML_PLAIN_SCALAR_STYLE);
			const int n = next ? yaml_document_add_mapping(d, NULL, YAML_FLOW_MAPPING_STYLE)
					   : yaml_document_add_scalar(d, NULL, (yaml_char_t *)eq + 1, -1,
								      YAML_PLAIN_SCALAR_STYLE);

			m = yaml_document_get_node(d, node);	/* adding may move the nodes */
			if (!k || !n)
				return rs_fail(err, RS_ENOMEM, "out of memory for --set %s", set);
			/* line 0 once yp_mark adds 1 */
			yaml_document_get_node(d, k)->start_mark.line = (size_t)-1;
			yaml_document_get_node(d, n)->start_mark.line = (size_t)-1;
			if (v)
				m->data.mapping.pairs.start[at].value = n;
			else if (!yaml_document_append_mapping_pair(d, node, k, n))
				return rs_fail(err, RS_ENOMEM, "out of memory for --set %s", set);
			node = n;
		}
	}
	return 0;
}

static struct room *load(yaml_parser_t *parser, const char *label, int from_string,
			 char *const *sets, int nsets, struct rs_error *err)
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
	for (int i = 0; i < nsets; i++)
		if (!yaml_document_get_root_node(&p.doc) ||
		    apply_set(&p.doc, sets[i], label, err)) {
			if (!err->code)
				rs_fail(err, RS_EINPUT, "%s: --set %s: the file has no map to set it in",
					label, sets[i]);
			yaml_document_delete(&p.doc);
			room_free(p.room);
			return NULL;
		}
	if (parse_root(&p)) {
		room_free(p.room);
		p.room = NULL;
	}
	yaml_document_delete(&p.doc);
	if (p.lib) {
		library_free(p.lib);
		free(p.lib);
	}
	return p.room;
}

struct room *cfg_load(const char *path, struct rs_error *err)
{
	return cfg_load_set(path, NULL, 0, err);
}

struct room *cfg_load_set(const char *path, char *const *sets, int nsets, struct rs_error *err)
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
	r = load(&parser, path, 0, sets, nsets, err);
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
	r = load(&parser, label, 1, NULL, 0, err);
	yaml_parser_delete(&parser);
	return r;
}
