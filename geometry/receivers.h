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
 * Where vg is one rank's window of the grid (vox_window), or its slab axis is not z, floor
 * gives the whole grid's floor (vox_floor_line; the whole grid has `layers` z layers): the
 * points kept are then those whose nodes all lie in vg and in the air, and none is not an
 * error here (the ranks gather them; grids_make says so). Without floor, the floor is the
 * columns' kstart.
 */
int grid_points_make(const struct room *room, const struct room_grid *g,
		     const struct vox_grid *vg, const int32_t *floor, int layers,
		     struct grid_points *out, struct rs_error *err);

/*
 * A floor's lines: the lines of cells along the room's z (the grid's axis
 * room_grid_axis(slab, 2)), indexed by the grid's other two axes, the z layers of the
 * whole grid (`layers`) where one of them is the grid's z. Their count, and the index of the
 * line through cell c (c[2] a layer of the whole grid).
 */
static inline size_t vox_floor_lines(const struct vox_plan *p, int layers)
{
	const int gz = room_grid_axis(p->slab, 2);

	return gz == 2 ? (size_t)p->n[0] * p->n[1] : (size_t)p->n[gz == 1 ? 0 : 1] * layers;
}

static inline size_t vox_floor_line(const struct vox_plan *p, const int c[3])
{
	const int gz = room_grid_axis(p->slab, 2);

	return gz == 2 ? (size_t)c[0] + (size_t)p->n[0] * c[1]
		       : (size_t)c[gz == 1 ? 0 : 1] + (size_t)p->n[gz == 1 ? 0 : 1] * c[2];
}

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
