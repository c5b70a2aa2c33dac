/*
 * config_points.c - the sources and receivers sections: names, positions and source signals.
 */
#include "config_read.h"

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

int cfg_parse_sources(struct yp *p, yaml_node_t *root)
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
	}
	return 0;
}

int cfg_parse_receivers(struct yp *p, yaml_node_t *root)
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

		n = yp_node(p, l->data.sequence.items.start[i]);
		snprintf(path, sizeof(path), "receivers[%d]", i);
		if (yp_want_map(p, n, path) || yp_check_keys(p, n, path, keys) ||
		    parse_point(p, n, path, c->name, c->pos, &c->at, r->receivers[0].name,
				sizeof(*c), i))
			return RS_EINPUT;
	}
	return 0;
}
