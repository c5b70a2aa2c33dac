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

struct rirs_run {
	const struct room *room;
	const struct vox_plan *plan;
	double dt;		/* time step k, s */
	double lambda;		/* Courant number */
	const char *engine;	/* "cpu" or the CUDA kernel's name */
	const char *scheme;	/* the stencil's name, e.g. "leggy order 4 (13 points)" */
	const double *signals;	/* [nsources][nreceivers][nsamples] */
	const double *air;	/* the same with the air's absorption, or NULL (medium off) */
	size_t nsamples;
	const long *completed;	/* per source: steps computed; samples 0..completed are valid */
};

/* Write path through path + ".tmp" renamed onto it: never half written. */
int rirs_write(const char *path, const struct rirs_run *run, struct rs_error *err);

#endif
