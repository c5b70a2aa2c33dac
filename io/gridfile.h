/*
 * gridfile.h - DIR/<source>_grids.h5: the signals of one source at every point of the room's
 * receiver grids, written while the source runs (docs/output.md, "Receiver grids"). Each grid
 * is a group /<grid> with rir [points][samples] (float32, Pa for 1 Pa at 1 m, raw: no air
 * absorption), positions [points][3] and lattice [points][2]. rirs.h5 links to it.
 *
 * The file is written as PATH.tmp and renamed onto PATH when closed, also after an
 * interruption (completed_steps says how far it got), so it is never half written.
 */
#ifndef IO_GRIDFILE_H
#define IO_GRIDFILE_H

#include <stddef.h>

#include "../common/rs_error.h"
#include "../geometry/receivers.h"

/* One grid as the files describe it: its name and points, and how it was laid out. */
struct grid_desc {
	const char *name;
	const struct grid_points *pts;
	const char *kind;	/* e.g. "plane z = 1.2 m", "over Seats + 1.2 m" */
	int wavs;		/* 1: its points get WAVs too */
};

struct grid_file;

/* Create path.tmp for ngrids grids of nsamples samples at rate fs (Hz); window is the most
 * steps one append brings. NULL and err on failure. */
struct grid_file *gridf_open(const char *path, const struct grid_desc *g, int ngrids,
			     size_t nsamples, double fs, size_t window, struct rs_error *err);

/* The file of an interrupted run (at path, or path.tmp when it was killed) opened again to
 * go on writing its samples (`roomsim run --resume`). */
struct grid_file *gridf_reopen(const char *path, const struct grid_desc *g, int ngrids,
			       size_t nsamples, struct rs_error *err);

/* Push what was appended to the disk (a checkpoint counts on it). */
int gridf_flush(struct grid_file *f, struct rs_error *err);

/* count steps of samples first, first + 1, ...: rows[step][point] over every grid's points in
 * order (as the engine's grid holds them). */
int gridf_append(struct grid_file *f, const float *rows, long first, long count,
		 struct rs_error *err);

/* Record completed steps, close, rename into place. With err NULL (already failing) the file
 * is still closed and renamed; returns 0 or RS_EIO. NULL f is allowed. */
int gridf_close(struct grid_file *f, long completed, struct rs_error *err);

/* Points [p0, p0 + np) of dataset dset ("GRID/rir" in a grid file, "grids/GRID/rir/SOURCE"
 * in rirs.h5) of the file at path: np x nsamples doubles into out. 0, or RS_EIO naming it. */
int gridf_read(const char *path, const char *dset, size_t p0, size_t np, size_t nsamples,
	       double *out, struct rs_error *err);

/* A grid as rirs.h5 describes it (gridf_list). */
struct grid_meta {
	char name[64], kind[96];
	struct grid_points pts;		/* positions, lattice and its layout */
	int nsources;			/* the sources with signals (links) */
	char (*sources)[64];
};

/* The grids of the rirs.h5 at path into *g (none: *n = 0); gridf_list_free() releases them. */
int gridf_list(const char *path, struct grid_meta **g, int *n, struct rs_error *err);
void gridf_list_free(struct grid_meta *g, int n);

/* One map of maps.h5: parameter values of a grid and a source, [nparams][nbands][points]. */
struct grid_map {
	const struct grid_meta *grid;
	const char *source;
	int nparams, nbands;
	const char *const *param, *const *unit;
	const double *fm;		/* the bands' mid frequencies, Hz */
	const double *v;
};

/* Write maps.h5 (through path.tmp): /GRID/positions, /GRID/lattice, /GRID/SOURCE/PARAM. */
int gridf_write_maps(const char *path, const struct grid_map *m, int n, struct rs_error *err);

/* Write the description of the grids (positions, lattice, kind) under /grids of an open
 * HDF5 file (rirs.h5), and per source in sources[0..nsources) a link /grids/NAME/rir/SOURCE
 * to SOURCE_grids.h5 beside it. Returns a negative herr_t on failure. */
int gridf_describe(long long file, const struct grid_desc *g, int ngrids,
		   const char *const *sources, int nsources);

#endif
