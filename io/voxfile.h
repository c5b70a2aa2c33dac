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
#include "config.h"

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
	char names[CFG_MAX_MATERIALS][CFG_NAME_MAX];	/* the materials its walls use */
	int nnames;
};

/*
 * Write grid g of room to path (written to path.tmp and renamed, so a failed write leaves
 * no half file). Flags and material are also what the slice images show.
 */
int voxf_write(const char *path, const struct vox_grid *g, const struct cfg_room *room,
	       struct rs_error *err);

int voxf_info(const char *path, struct voxf_info *info, struct rs_error *err);

/* The walls of a file read by voxf_read, for voxelise.c's lookups. */
struct voxf_walls;

/*
 * Read room->geo.voxels_path into grid g (of room's plan): the class byte of every air or
 * boundary room cell gets `bit`. Returns the file's walls, or NULL and err.
 */
struct voxf_walls *voxf_read(const struct cfg_room *room, struct vox_grid *g, uint8_t bit,
			     struct rs_error *err);

/*
 * The wall across face f (0..5: -x, +x, -y, +y, -z, +z) of room cell c as the file has it,
 * its material mapped to the room's (room->geo.voxel_material); the room's default material
 * and area 1 where the file has no wall there.
 */
void voxf_wall_of(const struct voxf_walls *w, const int c[3], int f, uint8_t *material,
		  float *area);

void voxf_walls_free(struct voxf_walls *w);

#ifdef __cplusplus
}
#endif

#endif
