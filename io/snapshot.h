/*
 * snapshot.h - DIR/<source>_snapshots.h5: pressure on planes through the room, one dataset
 * per plane of shape [frames, n1, n2], float32, chunked per frame and compressed, and each
 * plane's room cells in rooms/<plane> [n1, n2] (1 room, 0 solid).
 *
 * snap_open() returns a handle the caller closes with snap_close(); each appended frame is
 * flushed to disk, so a run stopped early leaves a readable file of the frames it made.
 */
#ifndef SNAP_SNAPSHOT_H
#define SNAP_SNAPSHOT_H

#include <stddef.h>

#include "../common/rs_error.h"

struct snap_plane {
	char name[32];		/* dataset name, e.g. "z_1.500" */
	int axis;		/* 0, 1, 2 = the plane's normal x, y, z */
	double at;		/* coordinate of the plane's nodes along axis, m */
	int n1, n2;		/* frame shape: slower and faster in-plane axis */
	double origin[3];	/* room coordinates of element [0][0] */
	const unsigned char *room;	/* n1 * n2: 1 where the element is a room cell (air or
					 * boundary), 0 where solid; NULL: all room */
	int grid_axis;		/* the run's: the normal's axis in the grid (geometry/voxel.h,
				 * slab), and 1 in swap when the engine's frames of the plane
				 * are n2 x n1, its in-plane axes the other way round */
	int swap;
};

struct snap_file;

struct snap_file *snap_open(const char *path, const struct snap_plane *planes, int nplanes,
			    double spacing, double frame_dt, struct rs_error *err);

/* The file of an interrupted run, to go on after its first `frames` frames (the later ones
 * dropped; frame f was taken at step f * every, of dt seconds): `roomsim run --resume`. */
struct snap_file *snap_reopen(const char *path, const struct snap_plane *planes, int nplanes,
			      double spacing, long every, double dt, long frames,
			      struct rs_error *err);

/* Say in the file's attribute `band` what band its frames hold: with fmax > 0, the field
 * low-passed in time at fmax by a zero-phase filter of `taps` steps; else the grid's
 * whole band. */
int snap_band(struct snap_file *s, double fmax, int taps, struct rs_error *err);

/* Append one frame (n1 * n2 floats) at time t to plane p. */
int snap_append(struct snap_file *s, int p, const float *frame, double t, struct rs_error *err);

/* Write each plane's frame times and close; safe on NULL. */
int snap_close(struct snap_file *s, struct rs_error *err);

/* Reading a snapshot file back (roomsim render). */
struct snap_info {
	char name[32];
	int axis, n1, n2;
	long frames;
	double at, spacing, origin[3];
	double *times;			/* per frame, s */
	unsigned char *room;		/* n1 * n2, 1: room cell (all 1 in files without it) */
};

struct snap_reader;

/* Open path and read its planes' descriptions; NULL and err naming the file on failure. */
struct snap_reader *snap_ropen(const char *path, struct rs_error *err);
int snap_rcount(const struct snap_reader *r);
const struct snap_info *snap_rinfo(const struct snap_reader *r, int i);

/* Frame f of plane i (n1 * n2 floats) into out. */
int snap_rframe(struct snap_reader *r, int i, long f, float *out, struct rs_error *err);
void snap_rclose(struct snap_reader *r);

#endif
