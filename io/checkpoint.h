/*
 * checkpoint.h - a run's checkpoint in HDF5 (docs/output.md, "Checkpoints"): what it has
 * computed so far and the engine's whole state, from which `roomsim run --resume` goes on
 * bitwise as if the run had not stopped.
 *
 * Each rank of a run writes its own file (rank 0 `checkpoint.h5`, rank r
 * `checkpoint.rank<r>.h5`): its engine's state over its window of the grid, the samples of
 * the receivers it reads, and on rank 0 the signals of every source finished before. A
 * file is written beside its place and renamed onto it, the one it replaces kept as
 * `<name>.prev.h5`, so that the last two stay and neither is ever half written.
 */
#ifndef IO_CHECKPOINT_H
#define IO_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"

#define CKPT_FORMAT "roomsim checkpoint 1"

/* What the checkpoint was made of and where it stands; a resumed run must match it. */
struct ckpt_meta {
	char room[128];		/* the room's name */
	char scheme[64];	/* the scheme's name (stn_stencil.name) */
	char engine[64];	/* "cpu" or "cuda:<kernel>" of the run that wrote it */
	long long n[3];		/* grid cells, padding and halo included (the rank's window) */
	double h, dt;		/* spacing, m, and time step, s */
	int precision;		/* 4 or 8 bytes a value */
	long long steps;	/* steps per source */
	long long nsamples;	/* samples per receiver */
	int nsources, nreceivers;	/* the room's */
	int nrec;		/* receivers this rank reads */
	int rank, ranks;
	uint64_t grid_hash;	/* the grid's classes (a rank's: its window's), layer by layer,
				 * and the engine's wall constants (common/hash.h,
				 * fdtd_fingerprint) */
	uint64_t points_hash;	/* the sources' positions and signals, the receivers' positions */
	int source;		/* the source in progress */
	long long step;		/* its steps done */
	long long values, bstates, bW;	/* entries of each level, branch state and W */
	long long frames;	/* floats of the band-limited snapshot frames' sums (0: none;
				 * files without the attribute have none) */
};

/* What a checkpoint holds besides its meta; sizes follow from it. */
struct ckpt_data {
	long long *completed;	/* nsources: steps done per source (rank 0; else NULL) */
	double *signals;	/* nsources x nreceivers x nsamples: the finished sources'
				 * raw signals (rank 0; else NULL) */
	double *rec;		/* nrec x (step + 1): this rank's receivers so far */
	void *cur, *prev;	/* values each, precision bytes a value */
	void *bstate, *bW;	/* bstates and bW values (NULL when none) */
	float *frames;		/* the frames' sums (fdtd_frames_get; NULL when none) */
};

/* The path of rank's newest checkpoint in dir (prev = 1: the one before) into buf. */
void ckpt_path(char *buf, size_t len, const char *dir, int rank, int prev);

/*
 * Write m and d to path's side file (path + ".tmp"), then move a file at path to its .prev
 * name and the new one onto path. RS_EIO naming the file and the reason; the older files
 * stay as they were.
 */
int ckpt_write(const char *path, const struct ckpt_meta *m, const struct ckpt_data *d,
	       struct rs_error *err);

/* Only the side file (ckpt_commit moves it into place: ranks write all, then commit). */
int ckpt_write_tmp(const char *path, const struct ckpt_meta *m, const struct ckpt_data *d,
		   struct rs_error *err);
int ckpt_commit(const char *path, struct rs_error *err);
void ckpt_discard(const char *path);

/* The meta of the checkpoint at path; RS_EIO when it is not one (naming path and why). */
int ckpt_read_meta(const char *path, struct ckpt_meta *m, struct rs_error *err);

/* Its arrays, into d's buffers sized by its meta (pointers NULL: not read). */
int ckpt_read(const char *path, const struct ckpt_meta *m, struct ckpt_data *d,
	      struct rs_error *err);

#endif
