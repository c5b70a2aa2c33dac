/*
 * grids.h - a run's receiver grids (docs/input.md, "Receiver grids"): their points, and the
 * stream of their samples from the engine's window (fdtd_grid_set) to <source>_grids.h5.
 *
 * The stepping thread takes each full window into one of two buffers (pinned on the GPU) and
 * hands it to a writer thread, which transposes it and writes it while the next window runs.
 */
#ifndef APP_GRIDS_H
#define APP_GRIDS_H

#include <pthread.h>

#include "../io/gridfile.h"
#include "../solver/fdtd.h"
#include "../solver/part.h"

#define GRID_WINDOW 256	/* steps per take and per chunk of the files */

struct run_grids {
	int n;				/* grids */
	struct grid_points *pts;	/* per grid */
	struct grid_desc *desc;		/* per grid, for the files */
	char (*kind)[96];
	size_t total;			/* points of every grid */
	double *pos;			/* every point, x y z, grid after grid: the engine's */
	/* one source's stream */
	struct fdtd *engine;
	struct grid_file *file;
	float *buf[2];
	int queued[2];			/* 1: buf[i] waits for or is in the writer */
	long first[2], count[2];
	int fill, next;			/* the buffer the next take fills, the next to write */
	long taken;			/* the last sample taken */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, done, rc;
	struct rs_error err;
	/* a decomposed run (grids_split): the points this rank reads (nmine, in pos's order,
	 * at mpos), its window of their samples; rank 0 gathers every rank's into buf */
	const struct part *part;
	int *owner;			/* per point: the rank whose slab holds its lowest node */
	size_t nmine;
	double *mpos;
	float *lbuf;
};

/* The points of every grid of room over vg (the whole grid has `layers` z layers); RS_EINPUT
 * naming an empty grid. In a decomposed run (pt's size above 1; every rank together) vg is
 * the rank's window, and the points are those of the whole grid. */
int grids_make(struct run_grids *g, const struct room *room, const struct vox_grid *vg,
	       int layers, const struct part *pt, struct rs_error *err);

/* A decomposed run: each point read by the rank whose slab holds its lowest node of vg (the
 * whole grid); rank 0 gathers them and writes the files. */
int grids_split(struct run_grids *g, const struct part *pt, const struct vox_grid *vg,
		struct rs_error *err);

/* Start streaming one source (after fdtd_reset) into path (several ranks: all call it, and
 * the take and end, together); resume = 1: into the file of an interrupted run, from the
 * engine's step on (after fdtd_set_state). */
int grids_begin(struct run_grids *g, struct fdtd *engine, const char *path, size_t nsamples,
		double fs, int resume, struct rs_error *err);

/* Steps the engine may advance before grids_take() must run (a large number without grids). */
long grids_room(const struct run_grids *g);

/* Take the samples advanced so far and queue them for the writer. */
int grids_take(struct run_grids *g, struct rs_error *err);

/* Take the samples so far and wait until they are in the file, on the disk (a checkpoint). */
int grids_sync(struct run_grids *g, struct rs_error *err);

/* Take what is left, stop the writer, close the file (renamed into place even when failing,
 * with err NULL). */
int grids_end(struct run_grids *g, long completed, struct rs_error *err);

void grids_free(struct run_grids *g);

#endif
