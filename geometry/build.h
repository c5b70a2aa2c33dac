/*
 * build.h - the steps of building a voxel grid that voxel.c (boxes) and voxelise.c (meshes,
 * voxel files, shapes) share. Internal to geometry/.
 */
#ifndef VOX_BUILD_H
#define VOX_BUILD_H

#include "voxel.h"

/*
 * A grid of layers w0..w1 of room's grid (as vox_window makes it; the whole grid when they
 * are all its room's), with cls allocated and all VOX_PAD (0), kstart and kstop allocated but
 * not filled.
 */
struct vox_grid *vox_alloc(const struct room *room, int w0, int w1, struct rs_error *err);

/* The layers of a grid's window, and this rank's share of them, for the builders. */
struct vox_span {
	int w0, w1;		/* the window's layers, of the whole grid (halo included) */
	int own0, own1;		/* this rank's slab within them */
	const struct vox_comm *comm;	/* the ranks; one alone for a whole grid or a probe */
	int probe;		/* 1: only which cells are room nodes (padding or air): no walls,
				 * no kinds, no leak check */
};

/* The span of a whole grid of plan p, built by one process. */
void vox_span_whole(const struct vox_plan *p, struct vox_span *s);

/*
 * The kinds of every boundary cell from g->walls, rounding admittance sums if need be; the
 * ranks of s agree on one table, in the order of the kinds' first cells in the whole grid.
 */
int vox_set_kinds(struct vox_grid *g, const struct room *room, const struct vox_span *s,
		  struct rs_error *err);

/* Turn the layers of window g beside its own into padding (built for its walls). */
void vox_pad_beside(struct vox_grid *g);

void vox_column_heights(struct vox_grid *g);
void vox_count_cells(struct vox_grid *g);

/* Does shape s hold the point x (room coordinates)? Surfaces count as inside. */
int vox_shape_holds(const struct room_shape *s, const double x[3]);

/* The unit normal (either sign) of the surface of s nearest x. */
void vox_shape_normal(const struct room_shape *s, const double x[3], double n[3]);

/* The window s of a room with a mesh, a voxel file or shapes (voxelise.c). */
struct vox_grid *vox_build_shaped(const struct room *room, const struct vox_span *s,
				  struct rs_error *err);

#endif
