/*
 * plot_cairo.h - what the figures of io/ share (internal to io/): linear panels with axes,
 * text placed by alignment,
 * and one drawing written as BASE.svg and BASE.png.
 */
#ifndef IO_PLOT_CAIRO_H
#define IO_PLOT_CAIRO_H

#include <cairo.h>

#include "../common/rs_error.h"

/* A panel: its frame in points and its axes' ranges (linear). */
struct plot_frame {
	double x0, y0, w, h;
	double xlo, xhi, ylo, yhi;
};

double plot_fx(const struct plot_frame *p, double x);	/* x in points */
double plot_fy(const struct plot_frame *p, double y);	/* y in points */

/* A step for ticks: 1, 2 or 5 times a power of ten, about n of them over span. */
double plot_tick(double span, int n);

/* The frame, grid and tick labels (y ticks unless yticks is 0; x ticks and label unless
 * xlabel is NULL), title and axis labels. */
void plot_axes(cairo_t *cr, const struct plot_frame *p, const char *title, const char *xlabel,
	       const char *ylabel, int yticks);

/* s at (x, y), its width times align to the left of x (0 left, 0.5 centred, 1 right). */
void plot_text(cairo_t *cr, double x, double y, double align, const char *s);

/* paint(cr, ctx) on a w x h point SVG surface into BASE.svg and on an image into BASE.png;
 * 0, or RS_EIO naming the file that could not be written. */
int plot_write(const char *base, double w, double h, void (*paint)(cairo_t *, const void *),
	       const void *ctx, struct rs_error *err);

#endif
