/*
 * voxfile.h - voxel grids in HDF5, written by `roomsim voxelize` and read back through
 * geometry.voxels (docs/output.md, "Voxel files").
 *
 * The file holds the room's cells only (no halo, which depends on the stencil), x fastest:
 * flags (0 solid, 1 air, 2 boundary), the material of each boundary cell, per-column
 * start/stop heights, and every boundary cell's walls by face with their material and
 * surface-area correction. Materials are stored by name, so a run may give them other
 * absorption without voxelising again.
 */
#ifndef IO_VOXFILE_H
#define IO_VOXFILE_H

#include <stdint.h>

#include "../common/rs_error.h"
#include "../geometry/voxel.h"
#include "../model/room.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VOXF_FORMAT "roomsim voxels"
#define VOXF_VERSION 1

/* What a voxel file's header says. */
struct voxf_info {
	double h;			/* spacing, m */
	double origin[3];		/* the low corner of the room's bounds, m */
	int cells[3];			/* room cells along x, y, z */
	char names[ROOM_MAX_MATERIALS][ROOM_NAME_MAX];	/* the materials its walls use */
	int nnames;
};

/*
 * Write grid g of room to path (written to path.tmp and renamed, so a failed write leaves
 * no half file). Flags and material are also what the slice images show.
 */
int voxf_write(const char *path, const struct vox_grid *g, const struct room *room,
	       struct rs_error *err);

int voxf_info(const char *path, struct voxf_info *info, struct rs_error *err);

/* The reader geometry/ builds a grid with, through room->geo.voxels (model/room.h): the file
 * is read one z-slab at a time, so a grid of 10^9 cells needs no second copy in memory. */
extern const struct room_voxel_file voxf_reader;

#ifdef __cplusplus
}
#endif

#endif
