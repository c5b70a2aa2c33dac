/*
 * render.c - `roomsim render SNAPSHOTS.h5`: each snapshot frame of a plane as a PNG (cairo),
 * the pressure in a symmetric diverging colour scale, the solid cells grey, a colour bar, the
 * frame's time and a scale bar in metres; and, where ffmpeg is installed, an MP4 per plane.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cairo.h>

#include "../io/snapshot.h"
#include "app.h"

static const char usage_render[] =
	"usage: roomsim render SNAPSHOTS.h5 [--plane NAME] [-o DIR] [--scale frame|fixed|db]\n"
	"                      [--range PA] [--db N] [--fps N] [--no-movie] [-q]\n"
	"\n"
	"Draw every frame of a run's <source>_snapshots.h5 as DIR/<plane>_NNNNN.png: the\n"
	"pressure from blue (-range) through white (0) to red (+range), solid cells grey, with\n"
	"the frame's time, a colour bar and a scale bar in metres. Planes are drawn to\n"
	"scale with their first in-plane axis up. With ffmpeg on the PATH, the frames of each\n"
	"plane also become DIR/<plane>.mp4 (H.264).\n"
	"  --plane NAME  only this plane (e.g. z_1.200; default: every plane in the file)\n"
	"  -o DIR        where the files go (default: the file's name without .h5)\n"
	"  --scale frame each frame's own range, the 99.5th percentile of its |p| over the room\n"
	"                cells, so that the decaying field stays visible (the default)\n"
	"  --scale fixed one range for every frame: that percentile over all frames, so the\n"
	"                decay shows as fading (or --range)\n"
	"  --scale db    |p| in dB below the frame's loudest cell, over --db dB, signed by\n"
	"                colour: weak reflections and the diffuse tail stay visible\n"
	"  --range PA    the colour scale's end, the same for every frame (--scale fixed);\n"
	"                louder values are drawn at full colour\n"
	"  --db N        the dB scale's span (default 40)\n"
	"  --fps N       the movie's frame rate (default 25)\n"
	"  --no-movie    PNG frames only\n"
	"  -q            no progress on stderr\n";

#define TARGET 900	/* about this many pixels across the plane */
#define BAR 120		/* the colour bar's column */
#define TOP 34
#define BOTTOM 46
#define SIDE 12

/* Blue, white, red: t in [-1, 1]. */
static void diverging(double t, double rgb[3])
{
	t = fmax(-1, fmin(1, t));
	if (t < 0) {
		rgb[0] = 1 + t * 0.85;
		rgb[1] = 1 + t * 0.7;
		rgb[2] = 1 + t * 0.25;
	} else {
		rgb[0] = 1 - t * 0.3;
		rgb[1] = 1 - t * 0.85;
		rgb[2] = 1 - t * 0.85;
	}
}

static int cmp_float(const void *a, const void *b)
{
	const float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* The colour scale (--scale): one range for all frames, each frame's own, or dB. */
enum scale { SCALE_FRAME, SCALE_FIXED, SCALE_DB };

/* The 99.5th percentile of |p| over the room cells of every frame (a sample of them), or
 * with only >= 0 of frame `only`, already in frame. */
static double auto_range(struct snap_reader *r, int i, float *frame, long only,
			 struct rs_error *err)
{
	const struct snap_info *p = snap_rinfo(r, i);
	const size_t cells = (size_t)p->n1 * p->n2;
	const size_t want = 2000000, stride = only >= 0 ? 1 : cells * (size_t)p->frames / want + 1;
	float *s = malloc((want + cells) * sizeof(float));
	size_t n = 0, at = 0;
	double range = 0;

	if (!s)
		return rs_fail(err, RS_ENOMEM, "out of memory"), -1;
	for (long f = only >= 0 ? only : 0; f < (only >= 0 ? only + 1 : p->frames); f++) {
		if (only < 0 && snap_rframe(r, i, f, frame, err)) {
			free(s);
			return -1;
		}
		for (size_t c = 0; c < cells; c++, at++)
			if (p->room[c] && at % stride == 0 && n < want + cells)
				s[n++] = fabsf(frame[c]);
	}
	if (n) {
		qsort(s, n, sizeof(float), cmp_float);
		range = s[(size_t)(0.995 * (double)(n - 1))];
		if (range <= 0)
			range = s[n - 1];
	}
	free(s);
	return range > 0 ? range : 1;
}

/* A length of 1, 2 or 5 times a power of ten metres, about a fifth of span. */
static double bar_length(double span)
{
	const double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;

	return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

static void text(cairo_t *cr, double x, double y, double align, const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - align * e.x_advance, y);
	cairo_show_text(cr, s);
}

/* The colour scale's position of pressure x in [-1, 1]: linear over +-range, or in dB the
 * level above -span dB re range, signed. */
static double position(double x, double range, double span)
{
	double level;

	if (span <= 0)
		return x / range;
	level = 1 + 20 * log10(fabs(x) / range + 1e-30) / span;
	return level <= 0 ? 0 : x < 0 ? -level : level;
}

/* Frame f of plane p drawn into a new image of w x h pixels; span > 0: a dB scale of span dB
 * below range. */
static cairo_surface_t *draw(const struct snap_info *p, const float *v, long f, int scale,
			     int w, int h, double range, double span)
{
	static const char axes[] = "xyz";
	const int u = p->axis == 2 ? 1 : 2, vv = p->axis == 0 ? 1 : 0;	/* n1's and n2's axes */
	cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
	cairo_surface_t *field = cairo_image_surface_create(CAIRO_FORMAT_RGB24, p->n2, p->n1);
	cairo_t *cr = cairo_create(img);
	const double pw = (double)p->n2 * scale, ph = (double)p->n1 * scale;
	const double len = bar_length(p->n2 * p->spacing);
	char s[96];

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	if (cairo_surface_status(field) == CAIRO_STATUS_SUCCESS) {
		unsigned char *px = cairo_image_surface_get_data(field);
		const int stride = cairo_image_surface_get_stride(field);

		cairo_surface_flush(field);
		for (int a = 0; a < p->n1; a++)	/* row a of the frame is drawn from the bottom */
			for (int b = 0; b < p->n2; b++) {
				const size_t c = (size_t)a * p->n2 + b;
				uint32_t *q = (uint32_t *)(px + (size_t)(p->n1 - 1 - a) * stride) + b;
				double rgb[3] = { 0.42, 0.42, 0.42 };

				if (p->room[c])
					diverging(position(v[c], range, span), rgb);
				*q = (uint32_t)(255 * rgb[0]) << 16 | (uint32_t)(255 * rgb[1]) << 8 |
				     (uint32_t)(255 * rgb[2]);
			}
		cairo_surface_mark_dirty(field);
		cairo_save(cr);
		cairo_translate(cr, SIDE, TOP);
		cairo_scale(cr, scale, scale);
		cairo_set_source_surface(cr, field, 0, 0);
		cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
		cairo_paint(cr);
		cairo_restore(cr);
	}
	cairo_surface_destroy(field);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_font_size(cr, 15);
	snprintf(s, sizeof(s), "%s   t = %.2f ms   (%c across, %c up)", p->name,
		 1e3 * p->times[f], axes[vv], axes[u]);
	text(cr, SIDE, 23, 0, s);
	/* the scale bar */
	cairo_set_line_width(cr, 3);
	cairo_move_to(cr, SIDE, TOP + ph + 18);
	cairo_line_to(cr, SIDE + len / p->spacing * scale, TOP + ph + 18);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 13);
	snprintf(s, sizeof(s), "%g m", len);
	text(cr, SIDE + len / p->spacing * scale + 8, TOP + ph + 23, 0, s);
	/* the colour bar */
	{
		const double x0 = SIDE + pw + 24, bh = fmin(ph, 360), y0 = TOP;

		for (int k = 0; k < 200; k++) {
			double rgb[3];

			diverging(1 - 2 * (k + 0.5) / 200, rgb);
			cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
			cairo_rectangle(cr, x0, y0 + bh * k / 200, 18, bh / 200 + 0.6);
			cairo_fill(cr);
		}
		cairo_set_source_rgb(cr, 0, 0, 0);
		cairo_set_line_width(cr, 1);
		cairo_rectangle(cr, x0, y0, 18, bh);
		cairo_stroke(cr);
		cairo_set_font_size(cr, 12);
		for (int k = -1; k <= 1; k++) {
			if (span > 0 && k)
				snprintf(s, sizeof(s), "%c0 dB", k < 0 ? '+' : '-');
			else if (span > 0)
				snprintf(s, sizeof(s), "-%.0f dB", span);
			else
				snprintf(s, sizeof(s), k ? "%+.3g" : "0", -k * range);
			text(cr, x0 + 24, y0 + bh * (k + 1) / 2 + 4, 0, s);
		}
		if (span > 0)
			snprintf(s, sizeof(s), "re %.3g Pa", range);
		text(cr, x0, y0 + bh + 20, 0, span > 0 ? s : "Pa");
		cairo_set_source_rgb(cr, 0.42, 0.42, 0.42);
		cairo_rectangle(cr, x0, y0 + bh + 32, 18, 12);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		text(cr, x0 + 24, y0 + bh + 43, 0, "solid");
	}
	cairo_destroy(cr);
	return img;
}

/* Plane i into dir: its frames, and its movie when ffmpeg is there. */
static int render_plane(struct snap_reader *r, int i, const char *dir, enum scale sc,
			double range_opt, double span, int fps, int movie, int quiet,
			struct rs_error *err)
{
	const struct snap_info *p = snap_rinfo(r, i);
	const int scale = p->n2 >= TARGET ? 1 : (TARGET + p->n2 - 1) / p->n2;
	/* even sizes: H.264's 4:2:0 chroma halves both */
	const int w = (SIDE + p->n2 * scale + 24 + BAR + 1) / 2 * 2;
	const int h = (TOP + (p->n1 * scale > 400 ? p->n1 * scale : 400) + BOTTOM + 1) / 2 * 2;
	float *v = malloc((size_t)p->n1 * p->n2 * sizeof(float));
	double range = range_opt;
	char path[4300];
	int rc = 0;

	if (!v)
		return rs_fail(err, RS_ENOMEM, "out of memory for plane %s", p->name);
	if (sc == SCALE_FIXED && !(range > 0) && (range = auto_range(r, i, v, -1, err)) < 0) {
		free(v);
		return err->code;
	}
	for (long f = 0; f < p->frames && !rc; f++) {
		cairo_surface_t *img;

		if ((rc = snap_rframe(r, i, f, v, err)))
			break;
		if (sc == SCALE_FRAME && (range = auto_range(r, i, v, f, err)) < 0) {
			rc = err->code;
			break;
		}
		if (sc == SCALE_DB) {	/* 0 dB: the frame's loudest room cell */
			range = 0;
			for (size_t c = 0; c < (size_t)p->n1 * p->n2; c++)
				range = p->room[c] ? fmax(range, fabs(v[c])) : range;
			range = range > 0 ? range : 1;
		}
		img = draw(p, v, f, scale, w, h, range, sc == SCALE_DB ? span : 0);
		snprintf(path, sizeof(path), "%s/%s_%05ld.png", dir, p->name, f);
		if (cairo_surface_write_to_png(img, path) != CAIRO_STATUS_SUCCESS)
			rc = rs_fail(err, RS_EIO, "%s: cannot write the PNG", path);
		cairo_surface_destroy(img);
		if (!quiet && (f % 50 == 49 || f == p->frames - 1))
			fprintf(stderr, "\rroomsim render: %s: %ld of %ld frames", p->name, f + 1,
				p->frames);
	}
	if (!quiet)
		fprintf(stderr, "\n");
	free(v);
	if (!rc && !quiet && sc == SCALE_FIXED)
		printf("%s: %ld frames (%d x %d px, colour scale +-%.3g Pa) as %s/%s_NNNNN.png\n",
		       p->name, p->frames, w, h, range, dir, p->name);
	else if (!rc && !quiet)
		printf("%s: %ld frames (%d x %d px, colour scale %s) as %s/%s_NNNNN.png\n",
		       p->name, p->frames, w, h, sc == SCALE_DB ? "in dB below each frame's peak"
		       : "each frame's own", dir, p->name);
	if (!rc && movie && p->frames > 1) {
		char cmd[9000];

		snprintf(cmd, sizeof(cmd), "ffmpeg -y -loglevel error -framerate %d -i '%s/%s_%%05d.png' "
			 "-c:v libx264 -pix_fmt yuv420p '%s/%s.mp4'", fps, dir, p->name, dir, p->name);
		if (strchr(dir, '\'') || system(cmd))
			return rs_fail(err, RS_EIO, "ffmpeg could not make %s/%s.mp4 from the frames "
				       "(the PNGs are there; --no-movie skips it)", dir, p->name);
		if (!quiet)
			printf("%s: %s/%s.mp4 at %d frames per second\n", p->name, dir, p->name, fps);
	}
	return rc;
}

int cmd_render(int argc, char **argv)
{
	const char *file = NULL, *plane = NULL, *dir = NULL;
	double range = 0, span = 40;
	enum scale sc = SCALE_FRAME;
	int fps = 25, movie = 1, quiet = 0, rc = 0, done = 0, scale_given = 0;
	struct rs_error err = { 0 };
	struct snap_reader *r;
	char out[4200];

	for (int a = 1; a < argc; a++) {
		char *end;

		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			fputs(usage_render, stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[a], "--plane") && a + 1 < argc) {
			plane = argv[++a];
		} else if ((!strcmp(argv[a], "-o") || !strcmp(argv[a], "--out")) && a + 1 < argc) {
			dir = argv[++a];
		} else if (!strcmp(argv[a], "--range") && a + 1 < argc) {
			range = strtod(argv[++a], &end);
			if (*end || !(range > 0) || !isfinite(range))
				return fprintf(stderr, "roomsim render: --range: '%s' is not valid "
					       "(valid: a pressure in Pa above 0)\n", argv[a]), EXIT_USAGE;
		} else if (!strcmp(argv[a], "--scale") && a + 1 < argc) {
			a++;
			scale_given = 1;
			if (!strcmp(argv[a], "frame"))
				sc = SCALE_FRAME;
			else if (!strcmp(argv[a], "fixed"))
				sc = SCALE_FIXED;
			else if (!strcmp(argv[a], "db"))
				sc = SCALE_DB;
			else
				return fprintf(stderr, "roomsim render: --scale: '%s' is not valid "
					       "(valid: frame, fixed, db)\n", argv[a]), EXIT_USAGE;
		} else if (!strcmp(argv[a], "--db") && a + 1 < argc) {
			span = strtod(argv[++a], &end);
			if (*end || !(span >= 1 && span <= 200))
				return fprintf(stderr, "roomsim render: --db: '%s' is not valid "
					       "(valid: a span of 1 to 200 dB)\n", argv[a]), EXIT_USAGE;
		} else if (!strcmp(argv[a], "--fps") && a + 1 < argc) {
			fps = (int)strtol(argv[++a], &end, 10);
			if (*end || fps < 1 || fps > 240)
				return fprintf(stderr, "roomsim render: --fps: '%s' is not valid (valid: "
					       "1 to 240)\n", argv[a]), EXIT_USAGE;
		} else if (!strcmp(argv[a], "--no-movie")) {
			movie = 0;
		} else if (!strcmp(argv[a], "-q") || !strcmp(argv[a], "--quiet")) {
			quiet = 1;
		} else if (argv[a][0] == '-' || file) {
			return fprintf(stderr, "roomsim render: '%s' is not valid here (see roomsim "
				       "render --help)\n", argv[a]), EXIT_USAGE;
		} else {
			file = argv[a];
		}
	}
	if (!file)
		return fprintf(stderr, "roomsim render: no SNAPSHOTS.h5 (see roomsim render "
			       "--help)\n"), EXIT_USAGE;
	if (range > 0 && scale_given && sc != SCALE_FIXED)
		return fprintf(stderr, "roomsim render: --range goes with --scale fixed (valid: "
			       "leave --scale out, or give --scale fixed)\n"), EXIT_USAGE;
	if (range > 0)
		sc = SCALE_FIXED;
	if (!(r = snap_ropen(file, &err))) {
		fprintf(stderr, "roomsim render: %s\n", err.msg);
		return app_exit_status(err.code);
	}
	if (!dir) {
		const size_t len = strlen(file);

		snprintf(out, sizeof(out), "%.*s", (int)(len > 3 && !strcmp(file + len - 3, ".h5")
							 ? len - 3 : len), file);
		dir = out;
	}
	if (movie && system("command -v ffmpeg > /dev/null 2>&1")) {
		movie = 0;
		if (!quiet)
			fprintf(stderr, "roomsim render: ffmpeg is not installed: PNG frames only\n");
	}
	rc = app_mkdirs(dir, &err);
	for (int i = 0; !rc && i < snap_rcount(r); i++)
		if (!plane || !strcmp(plane, snap_rinfo(r, i)->name)) {
			rc = render_plane(r, i, dir, sc, range, span, fps, movie, quiet, &err);
			done++;
		}
	if (!rc && !done) {
		size_t len = 0;
		char names[512] = "";

		for (int i = 0; i < snap_rcount(r) && len < sizeof(names); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
						snap_rinfo(r, i)->name);
		rc = rs_fail(&err, RS_EINPUT, "--plane: %s has no plane '%s' (valid: %s)", file,
			     plane, names);
	}
	snap_rclose(r);
	if (rc)
		fprintf(stderr, "roomsim render: %s\n", err.msg);
	return rc ? app_exit_status(rc) : EXIT_OK;
}
