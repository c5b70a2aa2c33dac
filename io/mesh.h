/*
 * mesh.h - triangle meshes read from model files through Assimp (OBJ, STL, PLY, glTF,
 * COLLADA, 3DS, FBX and the other formats it reads; docs/input.md, "Meshes").
 *
 * mesh_read() flattens the file's node graph: every triangle is placed by its node's
 * accumulated transform and then by the caller's affine map (units, geometry.transform).
 * Each triangle belongs to a part (one mesh placed by one node); a part carries the names a
 * room file may give it materials by: the mesh's name, the names of its node and the node's
 * ancestors (nearest first), and the name of its material. Points and lines are dropped.
 *
 * The struct mesh (model/mesh.h) that mesh_read() fills is owned by the caller and released
 * with mesh_free().
 */
#ifndef IO_MESH_H
#define IO_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"
#include "../model/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Read path (any format Assimp reads) and map every vertex x to xf x (a 3 x 4 affine
 * matrix: xf[r][0..2] x + xf[r][3]). 0, or RS_EIO / RS_EINPUT with the reason in err.
 */
int mesh_read(const char *path, const double xf[3][4], struct mesh *out, struct rs_error *err);

/* The extension list of the formats Assimp reads, "*.3ds;*.obj;...". */
const char *mesh_formats(void);

#ifdef __cplusplus
}
#endif

#endif
