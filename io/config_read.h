/*
 * config_read.h - inside the YAML reader (io/config*.c only): the parser's state, the checked
 * readers of scalars, lists and vectors that report FILE:LINE:COL: key: what is wrong (what
 * would be valid), and the section parsers cfg_load() calls in order. config.h is the API.
 */
#ifndef IO_CONFIG_READ_H
#define IO_CONFIG_READ_H

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../solver/kernels.h"
#include "../solver/stencil.h"	/* grid.dispersion needs the scheme's dispersion */
#include "library.h"
#include "mesh.h"
#include "voxfile.h"

/* Defaults of docs/input.md. */
#define DEFAULT_TEMPERATURE 20.0	/* degrees Celsius: c = 343.0 m/s (solver/air.h) */
#define DEFAULT_HUMIDITY 50.0		/* % */
#define DEFAULT_PRESSURE 101.325	/* kPa */
#define DEFAULT_RHO 1.204
#define DEFAULT_PPW 10.5
#define DEFAULT_COURANT 1.0
#define DEFAULT_WAV_RATE 48000
#define AUTO_DISPERSION 0.01	/* scheme.stencil: auto without grid.dispersion: 1 % */
#define DEFAULT_HIGHPASS 10.0	/* Hz: below every room's first mode, above DC drift */

/* Limits of what we accept, each with its reason. */
#define MIN_PPW 2.0		/* below 2 points per wavelength fmax is past the grid's Nyquist */
#define MIN_WAV_RATE 8000
#define MAX_WAV_RATE 384000
#define MAX_METRES 1e5	/* no room or position is 100 km across */
#define MAX_BLOCK_THREADS 1024	/* CUDA's limit on threads per block */

/* The document being read, the room it fills, and where errors go. */
struct yp {
	yaml_document_t doc;
	struct room *room;
	struct rs_error *err;
	int from_string;	/* cfg_load_string: paths in the file are relative to the cwd */
	struct library *lib;	/* the materials library, read at its first `library:` */
};

/* Readers of one node each (config_read.c); each fails with the error filled and RS_EINPUT. */
struct room_mark yp_mark(const yaml_node_t *n);
int yp_bad(struct yp *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *yp_kind(const yaml_node_t *n);
const char *yp_scalar(const yaml_node_t *n);
yaml_node_t *yp_node(struct yp *p, int id);
int yp_want_map(struct yp *p, const yaml_node_t *n, const char *key);
int yp_check_keys(struct yp *p, const yaml_node_t *map, const char *path,
		  const char *const *allowed);
yaml_node_t *yp_get(struct yp *p, const yaml_node_t *map, const char *key);
yaml_node_t *yp_key_node(struct yp *p, const yaml_node_t *map, const char *key);
int yp_missing(struct yp *p, const yaml_node_t *map, const char *path, const char *what);
int yp_num(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
	   double hi, int hi_open, double *out);
int yp_integer(struct yp *p, const yaml_node_t *n, const char *key, long lo, long hi,
	       long *out);
int yp_choice(struct yp *p, const yaml_node_t *n, const char *key,
	      const char *const *choices, int *out);
int yp_boolean(struct yp *p, const yaml_node_t *n, const char *key, int *out);
int yp_name(struct yp *p, const yaml_node_t *n, const char *key, char out[ROOM_NAME_MAX]);
int yp_vec3(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
	    double out[3]);
/* A path under key, relative to the room file's folder unless absolute. */
int yp_path(struct yp *p, yaml_node_t *n, const char *key, char out[ROOM_PATH_MAX]);
/* A list of at most max numbers, each checked as yp_num checks one; how many in *count. */
int yp_numbers(struct yp *p, const yaml_node_t *n, const char *key, double lo, int lo_open,
	       double hi, int hi_open, double *out, int max, int *count);

/* The sections, a file each, which parse_root (config.c) calls. */
int cfg_parse_grid(struct yp *p, yaml_node_t *root);
int cfg_parse_scheme(struct yp *p, yaml_node_t *root);
int cfg_find_material(const struct room *r, const char *s);
int cfg_parse_materials(struct yp *p, yaml_node_t *root);
int cfg_unknown_material(struct yp *p, yaml_node_t *n, const char *key);
int cfg_parse_surfaces(struct yp *p, yaml_node_t *root);
int cfg_parse_geometry(struct yp *p, yaml_node_t *root);
int cfg_parse_shapes(struct yp *p, yaml_node_t *root);
int cfg_set_bounds(struct yp *p, yaml_node_t *root);
int cfg_fit_grid(struct yp *p, yaml_node_t *root);
int cfg_parse_sources(struct yp *p, yaml_node_t *root);
int cfg_parse_receivers(struct yp *p, yaml_node_t *root);
int cfg_parse_output(struct yp *p, yaml_node_t *root);
int cfg_parse_hybrid(struct yp *p, yaml_node_t *root);

#endif
