/*
 * plot.c - the plot of a material's fit (plot.h), drawn with cairo on a PNG image and on an
 * SVG surface alike.
 */
#include "plot.h"
#include "plot_cairo.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>

#define W 900.0		/* points */
#define H 640.0
#define LEFT 70.0
#define RIGHT 20.0
#define TOP 50.0
#define GAP 60.0	/* between the two panels */
#define BOTTOM 50.0
#define F_LO 20.0	/* Hz, the x axis */
#define F_HI 20000.0

struct panel {
	double x0, y0, w, h;	/* its frame, in points */
	double lo, hi;		/* its y range */
};

static double px(const struct panel *p, double f)
{
	return p->x0 + p->w * log(f / F_LO) / log(F_HI / F_LO);
}

static double py(const struct panel *p, double v)
{
	return p->y0 + p->h * (1 - (v - p->lo) / (p->hi - p->lo));
}

void plot_text(cairo_t *cr, double x, double y, double align, const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - align * e.width, y);
	cairo_show_text(cr, s);
}

static const char *const octaves[10] = { "31.5", "63", "125", "250", "500",
					  "1k", "2k", "4k", "8k", "16k" };

/* The frame, the grid at each octave and at tenths of the y range, and the labels. */
static void axes(cairo_t *cr, const struct panel *p, const char *ylabel)
{
	char s[32];

	cairo_set_line_width(cr, 0.5);
	cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
	for (double f = 31.25; f < F_HI; f *= 2) {
		cairo_move_to(cr, px(p, f), p->y0);
		cairo_line_to(cr, px(p, f), p->y0 + p->h);
	}
	for (int i = 1; i < 10; i++) {
		cairo_move_to(cr, p->x0, py(p, p->lo + i * (p->hi - p->lo) / 10));
		cairo_line_to(cr, p->x0 + p->w, py(p, p->lo + i * (p->hi - p->lo) / 10));
	}
	cairo_stroke(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, p->x0, p->y0, p->w, p->h);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 11);
	for (int k = 0; k < 10; k++)	/* the nominal octave centres */
		plot_text(cr, px(p, 31.25 * (1 << k)), p->y0 + p->h + 14, 0.5, octaves[k]);
	for (int i = 0; i <= 10; i += 2) {
		snprintf(s, sizeof(s), "%.1f", p->lo + i * (p->hi - p->lo) / 10);
		plot_text(cr, p->x0 - 6, py(p, p->lo + i * (p->hi - p->lo) / 10) + 4, 1, s);
	}
	cairo_save(cr);
	cairo_translate(cr, p->x0 - 45, p->y0 + p->h / 2);
	cairo_rotate(cr, -M_PI / 2);
	plot_text(cr, 0, 0, 0.5, ylabel);
	cairo_restore(cr);
}

/* A curve of v(f) over the axis, in the current colour. */
static void curve(cairo_t *cr, const struct panel *p, const struct wall_model *w, int refl)
{
	for (int i = 0; i <= 400; i++) {
		const double f = F_LO * pow(F_HI / F_LO, i / 400.0);
		const double complex beta = wall_admittance(w, f);
		const double v = refl ? cabs((1 - beta) / (1 + beta)) : wall_alpha(w, f);

		if (i)
			cairo_line_to(cr, px(p, f), py(p, v));
		else
			cairo_move_to(cr, px(p, f), py(p, v));
	}
	cairo_stroke(cr);
}

static void draw(cairo_t *cr, const char *title, const struct wall_bands *b,
		 const struct wall_fit *fit)
{
	const double ph = (H - TOP - GAP - BOTTOM) / 2, pw = W - LEFT - RIGHT;
	const struct panel a = { LEFT, TOP, pw, ph, 0, 1 };
	const struct panel r = { LEFT, TOP + ph + GAP, pw, ph, 0, 1 };
	const double half = b->third ? 1.0 / 6 : 0.5;

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_font_size(cr, 15);
	plot_text(cr, W / 2, 28, 0.5, title);
	axes(cr, &a, "random-incidence absorption");
	axes(cr, &r, "|R|, normal incidence");
	cairo_set_font_size(cr, 11);
	plot_text(cr, LEFT + pw / 2, H - 12, 0.5, "frequency, Hz");
	/* the targets: a bar across each band; the fit's band averages: dots */
	cairo_set_line_width(cr, 3);
	for (int k = 0; k < b->n; k++) {
		const double lo = b->f[k] * exp2(-half), hi = b->f[k] * exp2(half);

		cairo_set_source_rgb(cr, k < fit->used ? 0.85 : 0.7, k < fit->used ? 0.3 : 0.7,
				     k < fit->used ? 0.1 : 0.7);
		cairo_move_to(cr, px(&a, lo), py(&a, b->alpha[k]));
		cairo_line_to(cr, px(&a, hi), py(&a, b->alpha[k]));
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.1, 0.3, 0.8);
		cairo_arc(cr, px(&a, b->f[k]), py(&a, fit->fitted[k]), 3.5, 0, 2 * M_PI);
		cairo_fill(cr);
	}
	cairo_set_line_width(cr, 1.5);
	cairo_set_source_rgb(cr, 0.1, 0.3, 0.8);
	curve(cr, &a, &fit->model, 0);
	curve(cr, &r, &fit->model, 1);
	/* the legend */
	cairo_set_font_size(cr, 11);
	cairo_set_source_rgb(cr, 0.85, 0.3, 0.1);
	cairo_rectangle(cr, LEFT + 12, TOP + 10, 18, 3);
	cairo_fill(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	plot_text(cr, LEFT + 36, TOP + 15, 0, "target per band (grey: above fmax, not fitted)");
	cairo_set_source_rgb(cr, 0.1, 0.3, 0.8);
	cairo_move_to(cr, LEFT + 12, TOP + 30);
	cairo_line_to(cr, LEFT + 30, TOP + 30);
	cairo_stroke(cr);
	cairo_arc(cr, LEFT + 21, TOP + 30, 3.5, 0, 2 * M_PI);
	cairo_fill(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	plot_text(cr, LEFT + 36, TOP + 34, 0, "fitted model (dots: its band averages)");
}

int plot_write(const char *base, double w, double h, void (*paint)(cairo_t *, const void *),
	       const void *ctx, struct rs_error *err)
{
	char path[4200];
	cairo_surface_t *s;
	cairo_t *cr;
	cairo_status_t st;

	snprintf(path, sizeof(path), "%s.svg", base);
	s = cairo_svg_surface_create(path, w, h);
	cr = cairo_create(s);
	paint(cr, ctx);
	cairo_destroy(cr);
	cairo_surface_finish(s);
	st = cairo_surface_status(s);
	cairo_surface_destroy(s);
	if (st != CAIRO_STATUS_SUCCESS)
		return rs_fail(err, RS_EIO, "%s: %s", path, cairo_status_to_string(st));
	s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
	cr = cairo_create(s);
	paint(cr, ctx);
	cairo_destroy(cr);
	snprintf(path, sizeof(path), "%s.png", base);
	st = cairo_surface_write_to_png(s, path);
	cairo_surface_destroy(s);
	if (st != CAIRO_STATUS_SUCCESS)
		return rs_fail(err, RS_EIO, "%s: %s", path, cairo_status_to_string(st));
	return 0;
}

struct fit_plot {
	const char *title;
	const struct wall_bands *b;
	const struct wall_fit *fit;
};

static void draw_fit(cairo_t *cr, const void *ctx)
{
	const struct fit_plot *f = ctx;

	draw(cr, f->title, f->b, f->fit);
}

int plot_fit(const char *base, const char *title, const struct wall_bands *b,
	     const struct wall_fit *fit, struct rs_error *err)
{
	const struct fit_plot f = { title, b, fit };

	return plot_write(base, W, H, draw_fit, &f, err);
}
