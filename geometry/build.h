/*
 * build.h - the steps of building a voxel grid that voxel.c (boxes) and voxelise.c (meshes,
 * voxel files, shapes) share. Internal to geometry/.
 */
#ifndef VOX_BUILD_H
#define VOX_BUILD_H

#include "voxel.h"

/* A grid of room's plan with cls, kstart and kstop allocated but not filled. */
struct vox_grid *vox_alloc(const struct room *room, struct rs_error *err);

/* The kinds of every boundary cell from g->walls, rounding admittance sums if need be. */
int vox_set_kinds(struct vox_grid *g, const struct room *room, struct rs_error *err);

void vox_column_heights(struct vox_grid *g);
void vox_count_cells(struct vox_grid *g);

/* Does shape s hold the point x (room coordinates)? Surfaces count as inside. */
int vox_shape_holds(const struct room_shape *s, const double x[3]);

/* The unit normal (either sign) of the surface of s nearest x. */
void vox_shape_normal(const struct room_shape *s, const double x[3], double n[3]);

/* vox_build() of a room with a mesh, a voxel file or shapes (voxelise.c). */
struct vox_grid *vox_build_shaped(const struct room *room, struct rs_error *err);

#endif
