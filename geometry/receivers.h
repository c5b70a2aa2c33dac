/*
 * receivers.h - the points of a receiver grid (model/room.h, struct room_grid): a lattice in a
 * plane, or over a surface at a height, clipped to where a receiver can sit in the voxel grid
 * (all eight interpolation nodes in the room, as vox_point() asks).
 */
#ifndef GEOMETRY_RECEIVERS_H
#define GEOMETRY_RECEIVERS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"
#include "voxel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grid_points {
	size_t n;		/* points kept */
	double (*pos)[3];	/* their positions, room coordinates, m */
	int (*ij)[2];		/* their lattice indices along axes[0] and axes[1] */
	int dims[2];		/* the lattice: dims[0] x dims[1] points */
	int axes[2];		/* the lattice's axes (0..2 for x..z), in order */
	double first[2];	/* the lattice point (0, 0) along axes[0] and axes[1], m */
	double lo[2], hi[2];	/* the extent the lattice covers (the room's, or from and to) */
	double spacing;
};

/*
 * The points of grid g of room over voxel grid vg into out (grid_points_free() releases them).
 * Lattice points where no receiver can sit are left out; a grid left with none is an input
 * error that names it (grid_points_none). RS_ENOMEM when the arrays cannot be allocated.
 * Where vg is one rank's window of the grid (vox_window), floor gives the whole grid's first
 * room layer of each column (INT32_MAX: none): the points kept are then those whose nodes
 * all lie in the window and in the air, and none is not an error (the ranks gather them).
 */
int grid_points_make(const struct room *room, const struct room_grid *g,
		     const struct vox_grid *vg, const int32_t *floor, struct grid_points *out,
		     struct rs_error *err);

/* The input error of grid g when none of its `total` lattice points lies in the air. */
int grid_points_none(const struct room *room, const struct room_grid *g, size_t total,
		     struct rs_error *err);
void grid_points_free(struct grid_points *p);

/* The lattice's size along one axis: points spacing s apart over [lo, hi], centred. */
int grid_lattice(double lo, double hi, double s, double *first);

#ifdef __cplusplus
}
#endif

#endif
