/*
 * plot_map.c - a parameter over a receiver grid (plot.h, plot_map): the lattice as an image of
 * one pixel per point, drawn to scale in metres, with a colour bar and the marked points.
 */
#include "plot.h"
#include "plot_cairo.h"

#include <cairo.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define W 1000.0	/* points */
#define H 720.0
#define LEFT 90.0
#define TOP 60.0
#define BAR 110.0	/* the colour bar's column on the right */
#define BOTTOM 60.0

/* A perceptually ordered map, dark blue through green to yellow (after viridis), t in [0, 1]. */
static void colour(double t, double rgb[3])
{
	static const double stop[5][3] = {
		{ 0.267, 0.005, 0.329 }, { 0.231, 0.322, 0.545 }, { 0.129, 0.569, 0.549 },
		{ 0.369, 0.788, 0.384 }, { 0.993, 0.906, 0.144 },
	};
	const double x = fmin(1, fmax(0, t)) * 4;
	const int i = x >= 4 ? 3 : (int)x;

	for (int c = 0; c < 3; c++)
		rgb[c] = stop[i][c] + (x - i) * (stop[i + 1][c] - stop[i][c]);
}

struct map_plot {
	const struct plot_map *m;
	cairo_surface_t *img;
	double vlo, vhi;
};

static void draw(cairo_t *cr, const void *ctx)
{
	const struct map_plot *f = ctx;
	const struct plot_map *m = f->m;
	const double aw = W - LEFT - BAR, ah = H - TOP - BOTTOM;
	const double sx = m->hi[0] - m->lo[0], sy = m->hi[1] - m->lo[1];
	const double scale = fmin(aw / sx, ah / sy);	/* points per metre, both axes */
	struct plot_frame p = { LEFT, TOP, sx * scale, sy * scale, m->lo[0], m->hi[0], m->lo[1],
				m->hi[1] };
	struct plot_frame bar = { LEFT + sx * scale + 30, TOP, 18, ah * 0.8, 0, 1, f->vlo, f->vhi };
	char s[64];

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       CAIRO_FONT_WEIGHT_NORMAL);
	/* the room's extent in light grey: where the grid has no point */
	cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
	cairo_rectangle(cr, p.x0, p.y0, p.w, p.h);
	cairo_fill(cr);
	if (f->img) {	/* pixel (i, row ny - 1 - j) is point (i, j), a spacing wide */
		cairo_save(cr);
		cairo_translate(cr, plot_fx(&p, m->x0 - 0.5 * m->spacing),
				plot_fy(&p, m->y0 + (m->ny - 0.5) * m->spacing));
		cairo_scale(cr, m->spacing * scale, m->spacing * scale);
		cairo_set_source_surface(cr, f->img, 0, 0);
		cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
		cairo_rectangle(cr, 0, 0, m->nx, m->ny);
		cairo_fill(cr);
		cairo_restore(cr);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	plot_axes(cr, &p, "", m->xlabel, m->ylabel, 1);
	cairo_set_font_size(cr, 13);
	plot_text(cr, W / 2, 30, 0.5, m->title);
	for (int k = 0; k < m->nmarks; k++) {
		const double x = plot_fx(&p, m->mark[k][0]), y = plot_fy(&p, m->mark[k][1]);

		cairo_new_path(cr);
		cairo_set_source_rgb(cr, 1, 1, 1);
		cairo_arc(cr, x, y, 5, 0, 2 * M_PI);
		cairo_fill_preserve(cr);
		cairo_set_source_rgb(cr, 0.8, 0, 0);
		cairo_set_line_width(cr, 2);
		cairo_stroke(cr);
		cairo_set_font_size(cr, 11);
		plot_text(cr, x + 8, y - 6, 0, m->mark_name[k]);
		cairo_new_path(cr);
	}
	/* the colour bar */
	for (int i = 0; i < 100; i++) {
		double rgb[3];

		colour((i + 0.5) / 100, rgb);
		cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
		cairo_rectangle(cr, bar.x0, bar.y0 + bar.h * (1 - (i + 1) / 100.0), bar.w,
				bar.h / 100 + 0.5);
		cairo_fill(cr);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, bar.x0, bar.y0, bar.w, bar.h);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 11);
	if (f->vhi > f->vlo) {
		const double d = plot_tick(f->vhi - f->vlo, 5);

		for (double v = ceil(f->vlo / d) * d; v <= f->vhi + 1e-9 * d; v += d) {
			snprintf(s, sizeof(s), "%g", fabs(v) < 1e-12 * d ? 0 : v);
			cairo_move_to(cr, bar.x0 + bar.w, plot_fy(&bar, v));
			cairo_line_to(cr, bar.x0 + bar.w + 4, plot_fy(&bar, v));
			cairo_stroke(cr);
			plot_text(cr, bar.x0 + bar.w + 7, plot_fy(&bar, v) + 4, 0, s);
		}
	} else {
		snprintf(s, sizeof(s), "%g", f->vlo);
		plot_text(cr, bar.x0 + bar.w + 7, bar.y0 + bar.h / 2 + 4, 0, s);
	}
	plot_text(cr, bar.x0 + bar.w / 2, bar.y0 + bar.h + 20, 0.5, m->unit);
}

int plot_map(const char *base, const struct plot_map *m, struct rs_error *err)
{
	struct map_plot f = { m, NULL, INFINITY, -INFINITY };
	int rc;

	for (size_t i = 0; i < (size_t)m->nx * m->ny; i++)
		if (isfinite(m->v[i])) {
			f.vlo = fmin(f.vlo, m->v[i]);
			f.vhi = fmax(f.vhi, m->v[i]);
		}
	if (f.vlo > f.vhi)
		f.vlo = f.vhi = 0;
	f.img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, m->nx, m->ny);
	if (cairo_surface_status(f.img) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(f.img);
		return rs_fail(err, RS_ENOMEM, "out of memory for the map %s", base);
	}
	{
		unsigned char *px = cairo_image_surface_get_data(f.img);
		const int stride = cairo_image_surface_get_stride(f.img);

		cairo_surface_flush(f.img);
		for (int j = 0; j < m->ny; j++)
			for (int i = 0; i < m->nx; i++) {
				const double v = m->v[(size_t)i + (size_t)m->nx * j];
				uint32_t *q = (uint32_t *)(px + (size_t)(m->ny - 1 - j) * stride) + i;
				double rgb[3];

				if (!isfinite(v)) {
					*q = 0;	/* transparent: the grey beneath shows */
					continue;
				}
				colour(f.vhi > f.vlo ? (v - f.vlo) / (f.vhi - f.vlo) : 0.5, rgb);
				*q = 0xff000000u | (uint32_t)(255 * rgb[0]) << 16 |
				     (uint32_t)(255 * rgb[1]) << 8 | (uint32_t)(255 * rgb[2]);
			}
		cairo_surface_mark_dirty(f.img);
	}
	rc = plot_write(base, W, H, draw, &f, err);
	cairo_surface_destroy(f.img);
	return rc;
}
