/*
 * plot_cairo.h - what the figures of io/ share (internal to io/): text placed by alignment,
 * and one drawing written as BASE.svg and BASE.png.
 */
#ifndef IO_PLOT_CAIRO_H
#define IO_PLOT_CAIRO_H

#include <cairo.h>

#include "../common/rs_error.h"

/* s at (x, y), its width times align to the left of x (0 left, 0.5 centred, 1 right). */
void plot_text(cairo_t *cr, double x, double y, double align, const char *s);

/* paint(cr, ctx) on a w x h point SVG surface into BASE.svg and on an image into BASE.png;
 * 0, or RS_EIO naming the file that could not be written. */
int plot_write(const char *base, double w, double h, void (*paint)(cairo_t *, const void *),
	       const void *ctx, struct rs_error *err);

#endif
