/*
 * analyze.h - what roomsim analyze's two halves share: the parameters in the order of its
 * tables and files, and the analysis of one band (analyze.c), used for the pairs there and
 * for every point of a receiver grid (analyze_grid.c).
 */
#ifndef APP_ANALYZE_H
#define APP_ANALYZE_H

#include <stddef.h>

#include "../common/rs_error.h"
#include "../io/rirs.h"
#include "../solver/iso3382.h"

/* A parameter: its name and unit as printed, its field of iso_params and the scale from
 * the field to the unit, and the digits the table gives it. */
struct an_param {
	const char *name, *unit;
	size_t off;
	double scale;
	int digits;
};

#define AN_NPARAMS 8
extern const struct an_param an_params[AN_NPARAMS];

/* Parameter i of p in its unit. */
double an_value(const struct iso_params *p, size_t i);

/* G's reference in band b: the band energy of the source's pressure 10 m away, from its
 * pressure 1 m away, src[0..n) at fs. */
double an_reference10(const double *src, size_t n, double fs, const struct iso_band *b);

/*
 * A copy of a source's free-field pressure src[0..n) with silence in front, low-passed at
 * fmax as the responses are, into a new array of *len values: the zero-phase low-pass rings
 * before a pulse as much as after it, and an impulse at t = 0 would lose that half without
 * room in front. NULL when out of memory.
 */
double *an_source(const double *src, size_t n, double fs, double fmax, size_t *len);

/* Values of scratch an_band() needs for n samples in band b. */
size_t an_band_scratch(size_t n, double fs, const struct iso_band *b);

/* The parameters of h[0..n) in band b, times from sample onset (ISO 3382-1's, of the whole
 * response), ref10 G's reference (NAN: no G); edc as iso_analyse() takes it (may be NULL). */
void an_band(const double *h, size_t n, double fs, size_t onset, const struct iso_band *b,
	     double ref10, double *y, struct iso_params *p, double *edc);

/*
 * The maps of the receiver grids of the rirs.h5 at path (d: what rirs_read() read of it):
 * every parameter per band at every point, for every source, into DIR/maps.h5, and, with
 * plots, a figure per grid, source and parameter of its mid-frequency value
 * (DIR/map_GRID_SOURCE_PARAM.png and .svg). A file without grids does nothing. A summary
 * per grid goes to stdout unless quiet.
 */
int analyze_grids(const char *path, const struct rirs_data *d, int third, const char *dir,
		  int plots, int quiet, struct rs_error *err);

#endif
