/*
 * rirs.h - DIR/rirs.h5: every raw receiver signal at the simulation rate, with the run's
 * metadata (docs/output.md lists every dataset and attribute).
 */
#ifndef RIRS_RIRS_H
#define RIRS_RIRS_H

#include <stddef.h>

#include "../common/rs_error.h"
#include "../geometry/voxel.h"
#include "config.h"
#include "gridfile.h"

/* The third octaves of rirs.h5's material_band_absorption: 50 Hz to 20 kHz, mid-band
 * 1000 10^(3 (k - 13) / 30) Hz for k = 0 .. RIRS_BANDS - 1. */
#define RIRS_BANDS 27

struct rirs_run {
	const struct room *room;
	const struct vox_plan *plan;
	double dt;		/* time step k, s */
	double lambda;		/* Courant number */
	const char *engine;	/* "cpu" or the CUDA kernel's name */
	const char *scheme;	/* the stencil's name, e.g. "leggy order 4 (13 points)" */
	const double *signals;	/* [nsources][nreceivers][nsamples] */
	const double *air;	/* the same with the air's absorption, or NULL (medium off) */
	const double *source;	/* [nsources][nsamples]: each source's free-field pressure
				 * 1 m away (Pa), or NULL */
	/* for Sabine and Eyring (roomsim analyze); volume 0: none */
	double volume;		/* the grid's air, m^3 */
	const double *area;	/* [nmaterials]: each material's wall area in the grid, m^2 */
	const double *band_alpha;	/* [nmaterials][RIRS_BANDS]: absorption per third octave */
	size_t nsamples;
	const long *completed;	/* per source: steps computed; samples 0..completed are valid */
	const struct grid_desc *grids;	/* the receiver grids, linked from each source with
					 * completed steps to its <source>_grids.h5 */
	int ngrids;
	/* a hybrid run (NULL geo: none): at the WAV rate, nfull samples each, the geometric
	 * part with the source's signal and the joined response ([nsources][nreceivers]),
	 * each source's free-field pressure 1 m away ([nsources]); the tracer's counts */
	const double *geo, *full, *source_full;
	size_t nfull;
	const size_t *images;	/* [nsources][nreceivers] image sources found */
	const long *escaped;	/* [nsources] rays lost */
	const double *reflections;	/* [nsources] reflections per ray */
};

/* Write path through path + ".tmp" renamed onto it: never half written. */
int rirs_write(const char *path, const struct rirs_run *run, struct rs_error *err);

/* What roomsim analyze reads back (rirs_read). */
struct rirs_data {
	int nsources, nreceivers;
	size_t nsamples;
	double fs, fmax;		/* sample rate and the run's fmax, Hz */
	char (*source_names)[64], (*receiver_names)[64];
	double *source_pos, *receiver_pos;	/* x y z of each, m; NULL where unreadable */
	double *signals;		/* [nsources][nreceivers][nsamples]: rir_full (a hybrid
					 * run's, at its WAV rate), else rir_air, else rir */
	int full;			/* 1: signals are rir_full or rir_geometric, fs the
					 * WAV rate */
	int air;			/* 1: signals are rir_air */
	double *source;			/* [nsources][nsamples], or NULL (files before it) */
	long *completed;		/* per source: samples 0..completed are valid */
	double c;			/* speed of sound, m/s */
	double medium[3];		/* the air: temperature, humidity, pressure */
	int nmaterials;
	double volume;			/* 0: no room description (files before it) */
	double *area;			/* [nmaterials] */
	double *band_alpha;		/* [nmaterials][RIRS_BANDS] */
};

/* Which responses of a hybrid run rirs_read_part() reads. */
enum rirs_part {
	RIRS_JOINED,	/* rir_full where the run has it, else the wave part */
	RIRS_WAVE,	/* rir_air, else rir: the wave engine's, at the simulation rate */
	RIRS_GEOMETRIC,	/* rir_geometric, at the WAV rate (a hybrid run's only) */
};

/* Read path's signals and what describes them into d; rirs_free() releases them. */
int rirs_read(const char *path, struct rirs_data *d, struct rs_error *err);

/* The same for one part of a hybrid run's responses (RS_EINPUT: a wave-only run has no
 * geometric part). */
int rirs_read_part(const char *path, enum rirs_part part, struct rirs_data *d,
		   struct rs_error *err);
void rirs_free(struct rirs_data *d);

#endif
