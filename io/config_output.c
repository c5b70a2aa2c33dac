/*
 * config_output.c - the output section: the WAVs and the snapshot planes.
 */
#include "config_read.h"

static int parse_wav(struct yp *p, yaml_node_t *out)
{
	static const char *const keys[] = { "samplerate", "format", "highpass", "normalize", NULL };
	static const char *const formats[] = { "float32", "pcm24", "pcm16", NULL };
	struct room *r = p->room;
	yaml_node_t *w = yp_get(p, out, "wav"), *n;
	long rate;
	int fmt;

	if (!w)
		return 0;
	if (yp_want_map(p, w, "output.wav") || yp_check_keys(p, w, "output.wav", keys))
		return RS_EINPUT;
	if ((n = yp_get(p, w, "samplerate"))) {
		if (yp_integer(p, n, "output.wav.samplerate", MIN_WAV_RATE, MAX_WAV_RATE, &rate))
			return RS_EINPUT;
		r->wav_rate = (int)rate;
	}
	if ((n = yp_get(p, w, "format"))) {
		if (yp_choice(p, n, "output.wav.format", formats, &fmt))
			return RS_EINPUT;
		r->wav_format = (enum room_wavfmt)fmt;
	}
	if ((n = yp_get(p, w, "highpass")) &&
	    yp_num(p, n, "output.wav.highpass", 0, 0, r->wav_rate / 4.0, 0, &r->wav_highpass))
		return RS_EINPUT;
	if ((n = yp_get(p, w, "normalize")) && yp_boolean(p, n, "output.wav.normalize", &r->wav_normalize))
		return RS_EINPUT;
	return 0;
}

static int parse_planes(struct yp *p, yaml_node_t *snap)
{
	static const char *const keys[] = { "axis", "at", NULL };
	static const char *const axes[] = { "x", "y", "z", NULL };
	struct room *r = p->room;
	yaml_node_t *l = yp_get(p, snap, "planes"), *n, *v;
	char path[64], key[96];

	if (!l)
		return yp_missing(p, snap, "output.snapshots.planes",
				  "give planes: [{axis: z, at: 1.5}]");
	if (l->type != YAML_SEQUENCE_NODE)
		return yp_bad(p, l, "output.snapshots.planes", "expected a list, got %s", yp_kind(l));
	r->nplanes = (int)(l->data.sequence.items.top - l->data.sequence.items.start);
	if (r->nplanes < 1 || r->nplanes > ROOM_MAX_POINTS)
		return yp_bad(p, l, "output.snapshots.planes", "%d planes (valid: 1 to %d)", r->nplanes,
			      ROOM_MAX_POINTS);
	r->planes = calloc((size_t)r->nplanes, sizeof(*r->planes));
	if (!r->planes)
		return rs_fail(p->err, RS_ENOMEM, "out of memory reading planes");
	for (int i = 0; i < r->nplanes; i++) {
		struct room_plane *pl = &r->planes[i];

		n = yp_node(p, l->data.sequence.items.start[i]);
		snprintf(path, sizeof(path), "output.snapshots.planes[%d]", i);
		if (yp_want_map(p, n, path) || yp_check_keys(p, n, path, keys))
			return RS_EINPUT;
		snprintf(key, sizeof(key), "%s.axis", path);
		if (!(v = yp_get(p, n, "axis")))
			return yp_missing(p, n, key, "give axis: x, y or z");
		if (yp_choice(p, v, key, axes, &pl->axis))
			return RS_EINPUT;
		snprintf(key, sizeof(key), "%s.at", path);
		if (!(v = yp_get(p, n, "at")))
			return yp_missing(p, n, key, "give at: the plane's coordinate in metres");
		if (yp_num(p, v, key, r->origin[pl->axis], 0, r->origin[pl->axis] + r->box[pl->axis],
			   0, &pl->at))
			   return RS_EINPUT;
		pl->mark = yp_mark(v);
	}
	return 0;
}

int cfg_interval(const char *text, double *seconds, long *steps)
{
	static const struct {
		const char *name;
		double scale;	/* seconds; 0: steps */
	} units[] = { { "", 1 }, { "s", 1 }, { "sec", 1 }, { "min", 60 }, { "h", 3600 },
		      { "steps", 0 }, { "step", 0 } };
	char *end;
	double v = strtod(text, &end);

	while (*end == ' ')
		end++;
	*seconds = 0;
	*steps = 0;
	if (end == text || !(v > 0) || v > 1e9)
		return -1;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		if (strcmp(end, units[u].name))
			continue;
		if (units[u].scale > 0) {
			*seconds = v * units[u].scale;
			return 0;
		}
		if (v != (long)v)
			return -1;
		*steps = (long)v;
		return 0;
	}
	return -1;
}

static int parse_checkpoint(struct yp *p, yaml_node_t *out)
{
	static const char *const keys[] = { "every", NULL };
	struct room *r = p->room;
	yaml_node_t *c = yp_get(p, out, "checkpoint"), *n;

	if (!c)
		return 0;
	if (yp_want_map(p, c, "output.checkpoint") || yp_check_keys(p, c, "output.checkpoint", keys))
		return RS_EINPUT;
	if (!(n = yp_get(p, c, "every")))
		return yp_missing(p, c, "output.checkpoint.every", "give every: 10 min");
	if (n->type != YAML_SCALAR_NODE || cfg_interval(yp_scalar(n), &r->ckpt_seconds,
							&r->ckpt_steps))
		return yp_bad(p, n, "output.checkpoint.every", "'%s' is not an interval (valid: a "
			      "positive number of s, min or h, e.g. 10 min, or of steps, e.g. 5000 "
			      "steps)", n->type == YAML_SCALAR_NODE ? yp_scalar(n) : yp_kind(n));
	return 0;
}

int cfg_parse_output(struct yp *p, yaml_node_t *root)
{
	static const char *const keys[] = { "dir", "wav", "snapshots", "checkpoint", NULL };
	static const char *const snap_keys[] = { "every", "planes", "band", NULL };
	struct room *r = p->room;
	yaml_node_t *o = yp_get(p, root, "output"), *n, *s;
	long every;

	strcpy(r->out_dir, "out");
	r->wav_rate = DEFAULT_WAV_RATE;
	r->wav_format = ROOM_WAV_FLOAT32;
	r->wav_highpass = DEFAULT_HIGHPASS;
	if (!o)
		return 0;
	if (yp_want_map(p, o, "output") || yp_check_keys(p, o, "output", keys))
		return RS_EINPUT;
	if ((n = yp_get(p, o, "dir"))) {
		if (n->type != YAML_SCALAR_NODE || !*yp_scalar(n) ||
		    strlen(yp_scalar(n)) >= sizeof(r->out_dir))
			return yp_bad(p, n, "output.dir", "expected a directory path, got %s",
				      yp_kind(n));
		strcpy(r->out_dir, yp_scalar(n));
	}
	if (parse_wav(p, o) || parse_checkpoint(p, o))
		return RS_EINPUT;
	if (!(s = yp_get(p, o, "snapshots")))
		return 0;
	if (yp_want_map(p, s, "output.snapshots") || yp_check_keys(p, s, "output.snapshots", snap_keys))
		return RS_EINPUT;
	if (!(n = yp_get(p, s, "every")))
		return yp_missing(p, s, "output.snapshots.every", "give every: N steps between frames");
	if (yp_integer(p, n, "output.snapshots.every", 1, 1000000000L, &every))
		return RS_EINPUT;
	r->snap_every = (int)every;
	if ((n = yp_get(p, s, "band"))) {
		const char *v = n->type == YAML_SCALAR_NODE ? yp_scalar(n) : "";

		if (strcmp(v, "fmax") && strcmp(v, "full"))
			return yp_bad(p, n, "output.snapshots.band", "'%s' is not a band (valid: fmax, "
				      "the field low-passed at grid.fmax as the WAVs are; full, the "
				      "grid's whole band)", n->type == YAML_SCALAR_NODE ? v : yp_kind(n));
		r->snap_full = !strcmp(v, "full");
	}
	return parse_planes(p, s);
}
