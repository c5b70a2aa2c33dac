/*
 * plot_response.c - the figure of a response's analysis (plot.h, plot_response): four panels
 * drawn with cairo on a PNG image and an SVG surface alike.
 */
#include "plot.h"
#include "plot_cairo.h"

#include <cairo.h>
#include <complex.h>	/* before fftw3.h: fftw_complex is double complex */
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 1200.0	/* points */
#define H 860.0
#define MARGIN 75.0
#define GAP 85.0
#define TOP 55.0

/* A colour of the band palette (k of n). */
static void band_colour(cairo_t *cr, int k, int n)
{
	const double t = n > 1 ? (double)k / (n - 1) : 0;

	cairo_set_source_rgb(cr, 0.1 + 0.8 * t, 0.2 + 0.3 * sin(M_PI * t), 0.85 - 0.75 * t);
}

static void waveform(cairo_t *cr, const struct plot_frame *p0, const struct plot_response *r)
{
	struct plot_frame p = *p0;
	double peak = 0;

	for (size_t i = 0; i < r->n; i++)
		peak = fmax(peak, fabs(r->h[i]));
	p.xlo = 0;
	p.xhi = r->n / r->fs;
	p.ylo = -(peak > 0 ? peak : 1) * 1.05;
	p.yhi = -p.ylo;
	plot_axes(cr, &p, "response", "time after the onset, s", "pressure, Pa per Pa at 1 m",
		   1);
	cairo_set_source_rgb(cr, 0.1, 0.3, 0.8);
	cairo_set_line_width(cr, 0.6);
	for (size_t i = 0; i < r->n; i++)	/* one vertical stroke per point column */
		if (i)
			cairo_line_to(cr, plot_fx(&p, i / r->fs), plot_fy(&p, r->h[i]));
		else
			cairo_move_to(cr, plot_fx(&p, 0), plot_fy(&p, r->h[0]));
	cairo_stroke(cr);
}

static void decays(cairo_t *cr, const struct plot_frame *p0, const struct plot_response *r)
{
	struct plot_frame p = *p0;
	size_t longest = 1;

	for (int k = 0; k < r->nbands; k++)
		longest = r->nedc[k] > longest ? r->nedc[k] : longest;
	p.xlo = 0;
	p.xhi = longest / r->fs;
	p.ylo = -70;
	p.yhi = 0;
	plot_axes(cr, &p, "energy decay curves (dashed: T30's lines, -5 to -35 dB)",
		   "time after the onset, s", "level, dB", 1);
	cairo_save(cr);
	cairo_rectangle(cr, p.x0, p.y0, p.w, p.h);
	cairo_clip(cr);
	for (int k = 0; k < r->nbands; k++) {
		const size_t step = r->nedc[k] / 2000 + 1;

		band_colour(cr, k, r->nbands);
		cairo_set_line_width(cr, 1.3);
		cairo_set_dash(cr, NULL, 0, 0);
		for (size_t i = 0; i < r->nedc[k]; i += step)
			if (i)
				cairo_line_to(cr, plot_fx(&p, i / r->fs), plot_fy(&p, fmax(r->edc[k][i], -80)));
			else
				cairo_move_to(cr, plot_fx(&p, 0), plot_fy(&p, r->edc[k][0]));
		cairo_stroke(cr);
		if (!isnan(r->s30[k])) {
			const double dash[] = { 5, 3 }, t1 = -75 / r->s30[k];

			cairo_set_dash(cr, dash, 2, 0);
			cairo_move_to(cr, plot_fx(&p, 0), plot_fy(&p, r->a30[k]));
			cairo_line_to(cr, plot_fx(&p, t1), plot_fy(&p, r->a30[k] + r->s30[k] * t1));
			cairo_stroke(cr);
		}
	}
	cairo_restore(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_font_size(cr, 11);
	for (int k = 0; k < r->nbands; k++) {	/* the legend, top right */
		char s[32];

		band_colour(cr, k, r->nbands);
		cairo_rectangle(cr, p.x0 + p.w - 90, p.y0 + 10 + 15 * k, 16, 3);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(s, sizeof(s), "%s Hz", r->band[k]);
		plot_text(cr, p.x0 + p.w - 68, p.y0 + 15 + 15 * k, 0, s);
	}
}

static void times(cairo_t *cr, const struct plot_frame *p0, const struct plot_response *r)
{
	struct plot_frame p = *p0;
	const double bw = p.w / (r->nbands ? r->nbands : 1);
	double top = 0.1;

	for (int k = 0; k < r->nbands; k++)
		top = fmax(top, fmax(fmax(isnan(r->t30[k]) ? 0 : r->t30[k],
					  isnan(r->edt[k]) ? 0 : r->edt[k]),
				     fmax(isnan(r->sabine[k]) ? 0 : r->sabine[k],
					  isnan(r->eyring[k]) ? 0 : r->eyring[k])));
	p.xlo = 0;
	p.xhi = r->nbands ? r->nbands : 1;
	p.ylo = 0;
	p.yhi = top * 1.15;
	plot_axes(cr, &p, "T30 and EDT per band; Sabine and Eyring", NULL,
		   "reverberation time, s", 1);
	cairo_set_font_size(cr, 11);
	for (int k = 0; k < r->nbands; k++) {
		const double x = p.x0 + bw * k;
		char s[32];

		snprintf(s, sizeof(s), "%s", r->band[k]);
		cairo_set_source_rgb(cr, 0, 0, 0);
		plot_text(cr, x + bw / 2, p.y0 + p.h + 14, 0.5, s);
		for (int j = 0; j < 2; j++) {	/* T30, EDT as bars */
			const double v = j ? r->edt[k] : r->t30[k];

			if (isnan(v))
				continue;
			if (j)
				cairo_set_source_rgb(cr, 0.55, 0.7, 0.95);
			else
				cairo_set_source_rgb(cr, 0.1, 0.3, 0.8);
			cairo_rectangle(cr, x + bw * (0.2 + 0.3 * j), plot_fy(&p, v), bw * 0.28,
					plot_fy(&p, 0) - plot_fy(&p, v));
			cairo_fill(cr);
		}
		for (int j = 0; j < 2; j++) {	/* Sabine, Eyring as marks across the band */
			const double v = j ? r->eyring[k] : r->sabine[k];

			if (isnan(v))
				continue;
			if (j)
				cairo_set_source_rgb(cr, 0.2, 0.6, 0.2);
			else
				cairo_set_source_rgb(cr, 0.85, 0.3, 0.1);
			cairo_set_line_width(cr, 2.5);
			cairo_move_to(cr, x + bw * 0.12, plot_fy(&p, v));
			cairo_line_to(cr, x + bw * 0.88, plot_fy(&p, v));
			cairo_stroke(cr);
		}
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	plot_text(cr, p.x0 + p.w / 2, p.y0 + p.h + 32, 0.5, "band, Hz");
	{	/* the legend */
		static const char *const names[] = { "T30", "EDT", "Sabine", "Eyring" };
		static const double rgb[4][3] = { { 0.1, 0.3, 0.8 }, { 0.55, 0.7, 0.95 },
						  { 0.85, 0.3, 0.1 }, { 0.2, 0.6, 0.2 } };

		for (int i = 0; i < 4; i++) {
			cairo_set_source_rgb(cr, rgb[i][0], rgb[i][1], rgb[i][2]);
			cairo_rectangle(cr, p.x0 + 10 + 80 * i, p.y0 + 8, 16, i < 2 ? 8 : 3);
			cairo_fill(cr);
			cairo_set_source_rgb(cr, 0, 0, 0);
			plot_text(cr, p.x0 + 30 + 80 * i, p.y0 + 16, 0, names[i]);
		}
	}
}

/* The spectrogram's levels as an image: rows of bins from fmax down, columns of frames. */
static cairo_surface_t *spectrogram_image(const struct plot_response *r, int *cols, int *rows,
					  double *hop_s)
{
	int n = 1;
	const double want = 0.04 * r->fs;

	while (n < want)
		n *= 2;
	const int hop = n / 4, nbin = (int)fmin(n / 2, floor(r->fmax / (r->fs / n)));
	const int nf = r->n > (size_t)n ? (int)((r->n - (size_t)n) / (size_t)hop) + 1 : 1;
	double *in = fftw_alloc_real((size_t)n), *lv = malloc((size_t)nf * nbin * sizeof(double));
	fftw_complex *out = fftw_alloc_complex((size_t)n / 2 + 1);
	fftw_plan plan = in && out ? fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE) : NULL;
	cairo_surface_t *img = NULL;
	double top = -INFINITY;

	if (!plan || !lv || nbin < 1)
		goto out;
	for (int f = 0; f < nf; f++) {
		for (int i = 0; i < n; i++) {
			const size_t at = (size_t)f * hop + (size_t)i;

			in[i] = (at < r->n ? r->h[at] : 0) * (0.5 - 0.5 * cos(2 * M_PI * i / n));
		}
		fftw_execute(plan);
		for (int b = 0; b < nbin; b++) {
			const double e = creal(out[b]) * creal(out[b]) + cimag(out[b]) * cimag(out[b]);

			lv[(size_t)f * nbin + b] = 10 * log10(e + 1e-300);
			top = fmax(top, lv[(size_t)f * nbin + b]);
		}
	}
	img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, nf, nbin);
	if (cairo_surface_status(img) == CAIRO_STATUS_SUCCESS) {
		unsigned char *px = cairo_image_surface_get_data(img);
		const int stride = cairo_image_surface_get_stride(img);

		cairo_surface_flush(img);
		for (int f = 0; f < nf; f++)
			for (int b = 0; b < nbin; b++) {	/* 60 dB: dark blue to yellow */
				const double t = fmin(1, fmax(0, (lv[(size_t)f * nbin + b] - top + 60) / 60));
				uint32_t *q = (uint32_t *)(px + (size_t)(nbin - 1 - b) * stride) + f;
				const int red = (int)(255 * fmin(1, 1.6 * t)), green = (int)(255 * t * t);
				const int blue = (int)(255 * fmax(0, 0.5 - t) * 1.4 + 40 * (1 - t));

				*q = (uint32_t)(red << 16 | green << 8 | (blue > 255 ? 255 : blue));
			}
		cairo_surface_mark_dirty(img);
	}
	*cols = nf;
	*rows = nbin;
	*hop_s = hop / r->fs;
out:
	if (plan)
		fftw_destroy_plan(plan);
	fftw_free(in);
	fftw_free(out);
	free(lv);
	return img;
}

static void spectrogram(cairo_t *cr, const struct plot_frame *p0, const struct plot_response *r,
			cairo_surface_t *img, int cols, int rows, double hop)
{
	struct plot_frame p = *p0;

	p.xlo = 0;
	p.xhi = cols * hop;
	p.ylo = 0;
	p.yhi = rows ? r->fmax : 1;
	if (img && rows) {
		cairo_save(cr);
		cairo_translate(cr, p.x0, p.y0);
		cairo_scale(cr, p.w / cols, p.h / rows);
		cairo_set_source_surface(cr, img, 0, 0);
		cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
		cairo_paint(cr);
		cairo_restore(cr);
	}
	plot_axes(cr, &p, "spectrogram (Hann windows of about 40 ms; 60 dB from dark to bright)",
		   "time after the onset, s", "frequency, Hz", 1);
}

/* The drawing's inputs, for plot_write. */
struct response_plot {
	const struct plot_response *r;
	cairo_surface_t *img;
	int cols, rows;
	double hop;
};

static void draw(cairo_t *cr, const void *ctx)
{
	const struct response_plot *f = ctx;
	const struct plot_response *r = f->r;
	const double pw = (W - 2 * MARGIN - GAP) / 2, ph = (H - TOP - 2 * GAP + 20) / 2;
	const struct plot_frame a = { MARGIN, TOP + 20, pw, ph, 0, 1, 0, 1 };
	const struct plot_frame b = { MARGIN + pw + GAP, TOP + 20, pw, ph, 0, 1, 0, 1 };
	const struct plot_frame c = { MARGIN, TOP + 20 + ph + GAP, pw, ph, 0, 1, 0, 1 };
	const struct plot_frame d = { MARGIN + pw + GAP, TOP + 20 + ph + GAP, pw, ph, 0, 1, 0, 1 };

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_font_size(cr, 16);
	plot_text(cr, W / 2, 28, 0.5, r->title);
	waveform(cr, &a, r);
	decays(cr, &b, r);
	times(cr, &c, r);
	spectrogram(cr, &d, r, f->img, f->cols, f->rows, f->hop);
}

int plot_response(const char *base, const struct plot_response *r, struct rs_error *err)
{
	struct response_plot f = { r, NULL, 0, 0, 1 };
	int rc;

	if (!(f.img = spectrogram_image(r, &f.cols, &f.rows, &f.hop)))
		return rs_fail(err, RS_ENOMEM, "out of memory for the spectrogram of %s", r->title);
	rc = plot_write(base, W, H, draw, &f, err);
	cairo_surface_destroy(f.img);
	return rc;
}
