/* plot_frame.c - the linear panels the figures share (plot_cairo.h). */
#include "plot_cairo.h"

#include <math.h>
#include <stdio.h>

double plot_fx(const struct plot_frame *p, double x)
{
	return p->x0 + p->w * (x - p->xlo) / (p->xhi - p->xlo);
}

double plot_fy(const struct plot_frame *p, double y)
{
	return p->y0 + p->h * (1 - (y - p->ylo) / (p->yhi - p->ylo));
}

double plot_tick(double span, int n)
{
	const double raw = span / n, p = pow(10, floor(log10(raw))), m = raw / p;

	return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

void plot_axes(cairo_t *cr, const struct plot_frame *p, const char *title, const char *xlabel,
	       const char *ylabel, int yticks)
{
	const double dx = plot_tick(p->xhi - p->xlo, 6), dy = plot_tick(p->yhi - p->ylo, 5);
	char s[32];

	cairo_set_line_width(cr, 0.5);
	cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
	for (double x = ceil(p->xlo / dx) * dx; x <= p->xhi + 1e-9 * dx; x += dx) {
		cairo_move_to(cr, plot_fx(p, x), p->y0);
		cairo_line_to(cr, plot_fx(p, x), p->y0 + p->h);
	}
	for (double y = ceil(p->ylo / dy) * dy; yticks && y <= p->yhi + 1e-9 * dy; y += dy) {
		cairo_move_to(cr, p->x0, plot_fy(p, y));
		cairo_line_to(cr, p->x0 + p->w, plot_fy(p, y));
	}
	cairo_stroke(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, p->x0, p->y0, p->w, p->h);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 11);
	for (double x = ceil(p->xlo / dx) * dx; xlabel && x <= p->xhi + 1e-9 * dx; x += dx) {
		snprintf(s, sizeof(s), "%g", fabs(x) < 1e-12 * dx ? 0 : x);
		plot_text(cr, plot_fx(p, x), p->y0 + p->h + 14, 0.5, s);
	}
	for (double y = ceil(p->ylo / dy) * dy; yticks && y <= p->yhi + 1e-9 * dy; y += dy) {
		snprintf(s, sizeof(s), "%g", fabs(y) < 1e-12 * dy ? 0 : y);
		plot_text(cr, p->x0 - 5, plot_fy(p, y) + 4, 1, s);
	}
	if (xlabel)
		plot_text(cr, p->x0 + p->w / 2, p->y0 + p->h + 32, 0.5, xlabel);
	cairo_save(cr);
	cairo_translate(cr, p->x0 - 48, p->y0 + p->h / 2);
	cairo_rotate(cr, -M_PI / 2);
	plot_text(cr, 0, 0, 0.5, ylabel);
	cairo_restore(cr);
	cairo_set_font_size(cr, 13);
	plot_text(cr, p->x0 + p->w / 2, p->y0 - 10, 0.5, title);
}

