/*
 * library.c - the materials library (io/library.h), read with the YAML reader's checked node
 * readers from the copy of materials/library.yaml the build puts into the binary.
 */
#include "library.h"

#include "config_read.h"

extern const char materials_library_yaml[];	/* $(BUILD)/gen/library_yaml.c */

static int text_of(struct yp *p, yaml_node_t *map, const char *path, const char *key, char *out,
		   size_t len)
{
	yaml_node_t *n = yp_get(p, map, key);
	char sub[160];

	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if (!n)
		return yp_missing(p, map, path, key);
	if (n->type != YAML_SCALAR_NODE)
		return yp_bad(p, n, sub, "expected text, got %s", yp_kind(n));
	snprintf(out, len, "%s", yp_scalar(n));
	return 0;
}

/* An entry's values per band under key (absorption or scattering), from the first of the
 * library's bands f[0..nf); none (b->n = 0) when the entry has no such key. */
static int bands_of(struct yp *p, yaml_node_t *map, const char *path, const char *key,
		    const double *f, int nf, struct wall_bands *b)
{
	yaml_node_t *n = yp_get(p, map, key);
	char sub[200];

	b->n = 0;
	if (!n)
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if (yp_numbers(p, n, sub, 0, 0, 1, 0, b->alpha, nf, &b->n))
		return RS_EINPUT;
	if (b->n < 1)
		return yp_bad(p, n, sub, "no values");
	for (int i = 0; i < b->n; i++)
		b->f[i] = f[i];
	return 0;
}

static int parse(struct yp *p, struct library *lib)
{
	static const char *const top[] = { "bands", "sources", "materials", NULL };
	static const char *const keys[] = { "description", "category", "source", "absorption",
					    "scattering", NULL };
	yaml_node_t *root = yaml_document_get_root_node(&p->doc), *n, *mats;
	double f[WALL_MAX_BANDS];
	int nf;

	if (!root || yp_want_map(p, root, "(top)") || yp_check_keys(p, root, "", top))
		return RS_EINPUT;
	if (!(n = yp_get(p, root, "bands")))
		return yp_missing(p, root, "", "bands");
	if (yp_numbers(p, n, "bands", 10, 0, 30000, 0, f, WALL_MAX_BANDS, &nf))
		return RS_EINPUT;
	if (!(n = yp_get(p, root, "sources")))
		return yp_missing(p, root, "", "sources");
	if (yp_want_map(p, n, "sources"))
		return RS_EINPUT;
	for (yaml_node_pair_t *s = n->data.mapping.pairs.start; s < n->data.mapping.pairs.top; s++) {
		yaml_node_t *v = yp_node(p, s->value);

		if (lib->nsources == 16)
			return yp_bad(p, n, "sources", "more than 16 sources");
		if (v->type != YAML_SCALAR_NODE)
			return yp_bad(p, v, "sources", "expected text, got %s", yp_kind(v));
		snprintf(lib->source_key[lib->nsources], sizeof(lib->source_key[0]), "%s",
			 yp_scalar(yp_node(p, s->key)));
		snprintf(lib->source_text[lib->nsources++], LIBRARY_TEXT, "%s", yp_scalar(v));
	}
	if (!(mats = yp_get(p, root, "materials")))
		return yp_missing(p, root, "", "materials");
	if (yp_want_map(p, mats, "materials"))
		return RS_EINPUT;
	lib->m = calloc((size_t)(mats->data.mapping.pairs.top - mats->data.mapping.pairs.start) + 1,
			sizeof(*lib->m));
	if (!lib->m)
		return rs_fail(p->err, RS_ENOMEM, "out of memory for the materials library");
	for (yaml_node_pair_t *e = mats->data.mapping.pairs.start; e < mats->data.mapping.pairs.top;
	     e++) {
		struct library_material *m = &lib->m[lib->n];
		yaml_node_t *k = yp_node(p, e->key), *v = yp_node(p, e->value);
		char path[160], src[64];

		snprintf(m->name, sizeof(m->name), "%s", yp_scalar(k));
		snprintf(path, sizeof(path), "materials.%s", m->name);
		if (library_find(lib, m->name))
			return yp_bad(p, k, path, "defined twice");
		if (yp_want_map(p, v, path) || yp_check_keys(p, v, path, keys) ||
		    text_of(p, v, path, "description", m->description, sizeof(m->description)) ||
		    text_of(p, v, path, "category", m->category, sizeof(m->category)) ||
		    text_of(p, v, path, "source", src, sizeof(src)))
			return RS_EINPUT;
		m->source = -1;
		for (int s = 0; s < lib->nsources; s++)
			if (!strcmp(src, lib->source_key[s]))
				m->source = s;
		if (m->source < 0)
			return yp_bad(p, yp_get(p, v, "source"), path, "no source '%s' under sources",
				      src);
		if (!yp_get(p, v, "absorption") && !yp_get(p, v, "scattering"))
			return yp_missing(p, v, path, "absorption or scattering");
		if (bands_of(p, v, path, "absorption", f, nf, &m->bands) ||
		    bands_of(p, v, path, "scattering", f, nf, &m->scat))
			return RS_EINPUT;
		lib->n++;
	}
	return 0;
}

int library_load(struct library *lib, struct rs_error *err)
{
	struct yp p = { .err = err, .from_string = 1 };
	yaml_parser_t parser;
	int rc;

	memset(lib, 0, sizeof(*lib));
	p.room = calloc(1, sizeof(*p.room));	/* carries the file's name for the errors */
	if (!p.room)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	snprintf(p.room->file, sizeof(p.room->file), "%s", LIBRARY_FILE);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)materials_library_yaml,
				     strlen(materials_library_yaml));
	if (!yaml_parser_load(&parser, &p.doc)) {
		rc = rs_fail(err, RS_EINPUT, "%s:%d:%d: (syntax): %s (not valid YAML)", LIBRARY_FILE,
			     (int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
			     parser.problem ? parser.problem : "parse error");
	} else {
		rc = parse(&p, lib);
		yaml_document_delete(&p.doc);
	}
	yaml_parser_delete(&parser);
	room_free(p.room);
	if (rc)
		library_free(lib);
	return rc;
}

const struct library_material *library_find(const struct library *lib, const char *name)
{
	for (int i = 0; i < lib->n; i++)
		if (!strcmp(lib->m[i].name, name))
			return &lib->m[i];
	return NULL;
}

void library_free(struct library *lib)
{
	free(lib->m);
	memset(lib, 0, sizeof(*lib));
}
