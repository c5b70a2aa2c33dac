/*
 * config_read.c - the checked readers of single YAML nodes (config_read.h).
 */
#include "config_read.h"

struct room_mark yp_mark(const yaml_node_t *n)
{
	struct room_mark m = { (int)n->start_mark.line + 1, (int)n->start_mark.column + 1 };
	return m;
}

__attribute__((format(printf, 4, 5)))
int yp_bad(struct yp *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	room_vat(p->err, p->room->file, yp_mark(n), key, fmt, ap);
	va_end(ap);
	return RS_EINPUT;
}

const char *yp_kind(const yaml_node_t *n)
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

const char *yp_scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

yaml_node_t *yp_node(struct yp *p, int id)
{
	return yaml_document_get_node(&p->doc, id);
}

int yp_want_map(struct yp *p, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_MAPPING_NODE)
		return yp_bad(p, n, key, "expected a mapping of keys, got %s", yp_kind(n));
	return 0;
}

/*
 * Check that every key of map is in the NULL-terminated allowed list and appears once.
 * The message lists the valid keys, so a typo is fixed at once.
 */
int yp_check_keys(struct yp *p, const yaml_node_t *map, const char *path,
		  const char *const *allowed)
{
	yaml_node_pair_t *a, *b;
	char full[256], valid[512];

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
		yaml_node_t *k = yp_node(p, a->key);
		const char *const *w;

		snprintf(full, sizeof(full), "%s%s%s", path, *path ? "." : "",
			 k->type == YAML_SCALAR_NODE ? yp_scalar(k) : "?");
		if (k->type != YAML_SCALAR_NODE)
			return yp_bad(p, k, full, "a key must be a plain name, got %s", yp_kind(k));
		for (w = allowed; *w && strcmp(*w, yp_scalar(k)); w++)
			;
		if (!*w) {
			size_t len = 0;

			valid[0] = 0;
			for (w = allowed; *w && len < sizeof(valid) - 2; w++)
				len += (size_t)snprintf(valid + len, sizeof(valid) - len, "%s%s",
							w == allowed ? "" : ", ", *w);
			return yp_bad(p, k, full, "unknown key (valid keys here: %s)", valid);
		}
		for (b = map->data.mapping.pairs.start; b < a; b++)
			if (!strcmp(yp_scalar(yp_node(p, b->key)), yp_scalar(k)))
				return yp_bad(p, k, full, "key given twice (give each key once)");
	}
	return 0;
}

yaml_node_t *yp_get(struct yp *p, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *a;

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++)
		if (!strcmp(yp_scalar(yp_node(p, a->key)), key))
			return yp_node(p, a->value);
	return NULL;
}

yaml_node_t *yp_key_node(struct yp *p, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *a;

	for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++)
		if (!strcmp(yp_scalar(yp_node(p, a->key)), key))
			return yp_node(p, a->key);
	return NULL;
}

int yp_missing(struct yp *p, const yaml_node_t *map, const char *path, const char *what)
{
	return yp_bad(p, map, path, "required key is missing (%s)", what);
}

/* A finite number in [lo, hi]; open ends exclude the bound. */
int yp_num(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
	   double hi, int hi_open, double *out)
{
	char *end;
	double v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return yp_bad(p, n, key, "expected a number, got %s", yp_kind(n));
	errno = 0;
	v = strtod(yp_scalar(n), &end);
	if (end == yp_scalar(n) || *end || errno || !isfinite(v))
		return yp_bad(p, n, key, "'%s' is not a finite number", yp_scalar(n));
	if (v < lo || v > hi || (lo_open && v == lo) || (hi_open && v == hi))
		return yp_bad(p, n, key, "%g is out of range (valid: %c%g, %g%c)", v,
			      lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
	*out = v;
	return 0;
}

int yp_integer(struct yp *p, const yaml_node_t *n, const char *key, long lo, long hi,
	       long *out)
{
	char *end;
	long v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return yp_bad(p, n, key, "expected a whole number, got %s", yp_kind(n));
	errno = 0;
	v = strtol(yp_scalar(n), &end, 10);
	if (end == yp_scalar(n) || *end || errno)
		return yp_bad(p, n, key, "'%s' is not a whole number", yp_scalar(n));
	if (v < lo || v > hi)
		return yp_bad(p, n, key, "%ld is out of range (valid: %ld to %ld)", v, lo, hi);
	*out = v;
	return 0;
}

/* One of the NULL-terminated choices; returns its index in *out. */
int yp_choice(struct yp *p, const yaml_node_t *n, const char *key,
	      const char *const *choices, int *out)
{
	char valid[256];
	size_t len = 0;
	int i;

	if (n->type == YAML_SCALAR_NODE)
		for (i = 0; choices[i]; i++)
			if (!strcmp(yp_scalar(n), choices[i])) {
				*out = i;
				return 0;
			}
	valid[0] = 0;
	for (i = 0; choices[i]; i++)
		len += (size_t)snprintf(valid + len, sizeof(valid) - len, "%s%s", i ? " | " : "",
					choices[i]);
	if (n->type != YAML_SCALAR_NODE)
		return yp_bad(p, n, key, "expected one of %s, got %s", valid, yp_kind(n));
	return yp_bad(p, n, key, "'%s' is not valid (valid: %s)", yp_scalar(n), valid);
}

int yp_boolean(struct yp *p, const yaml_node_t *n, const char *key, int *out)
{
	static const char *const words[] = { "false", "true", NULL };

	return yp_choice(p, n, key, words, out);
}

/* A name that is safe as part of a file name. */
int yp_name(struct yp *p, const yaml_node_t *n, const char *key, char out[ROOM_NAME_MAX])
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE)
		return yp_bad(p, n, key, "expected a name, got %s", yp_kind(n));
	s = yp_scalar(n);
	if (!*s || strlen(s) >= ROOM_NAME_MAX)
		return yp_bad(p, n, key, "name must have 1 to %d characters", ROOM_NAME_MAX - 1);
	for (const char *c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
			return yp_bad(p, n, key, "'%s' has a character other than letters, digits, "
				      "'_', '.', '-' (names become file names)", s);
	strcpy(out, s);
	return 0;
}

int yp_vec3(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
	    double out[3])
{
	char k[160];
	int i;

	if (n->type != YAML_SEQUENCE_NODE)
		return yp_bad(p, n, key, "expected a list of three numbers [x, y, z], got %s",
			      yp_kind(n));
	if (n->data.sequence.items.top - n->data.sequence.items.start != 3)
		return yp_bad(p, n, key, "expected three numbers [x, y, z], got %d",
			      (int)(n->data.sequence.items.top - n->data.sequence.items.start));
	for (i = 0; i < 3; i++) {
		snprintf(k, sizeof(k), "%s[%d]", key, i);
		if (yp_num(p, yp_node(p, n->data.sequence.items.start[i]), k, lo, lo_open, MAX_METRES, 0,
			   &out[i]))
			   return RS_EINPUT;
	}
	return 0;
}

int yp_numbers(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
	       double hi, int hi_open, double *out, int max, int *count)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return yp_bad(p, n, key, "expected a list of numbers, got %s", yp_kind(n));
	*count = 0;
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
	     i++) {
		if (*count == max)
			return yp_bad(p, n, key, "more than %d values", max);
		if (yp_num(p, yp_node(p, *i), key, lo, lo_open, hi, hi_open, &out[(*count)++]))
			return RS_EINPUT;
	}
	return 0;
}

int yp_path(struct yp *p, yaml_node_t *n, const char *key, char out[ROOM_PATH_MAX])
{
	const char *s, *slash = strrchr(p->room->file, '/');
	int dir = slash && !p->from_string ? (int)(slash - p->room->file) + 1 : 0;

	if (n->type != YAML_SCALAR_NODE || !*yp_scalar(n))
		return yp_bad(p, n, key, "expected a file path, got %s", yp_kind(n));
	s = yp_scalar(n);
	if (*s == '/')
		dir = 0;
	if ((size_t)dir + strlen(s) >= ROOM_PATH_MAX)
		return yp_bad(p, n, key, "the path is longer than %d characters", ROOM_PATH_MAX - 1);
	snprintf(out, ROOM_PATH_MAX, "%.*s%s", dir, p->room->file, s);
	return 0;
}
