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
 * The struct mesh that mesh_read() fills is owned by the caller and released with
 * mesh_free(); every array in it is malloc'd.
 */
#ifndef IO_MESH_H
#define IO_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MESH_NAME_MAX 128	/* longer names are cut (and still matched by their prefix) */
#define MESH_PART_NAMES 8	/* names kept per part: mesh, up to 6 nodes, material */

struct mesh_part {
	int names[MESH_PART_NAMES];	/* indices into mesh.names, most specific first */
	int nnames;
	int material;		/* the room's material for this part, set by the caller */
};

struct mesh {
	double (*v)[3];		/* vertices, metres after the affine map */
	size_t nv;
	uint32_t (*tri)[3];	/* triangles, as indices into v */
	int *part;		/* per triangle: index into parts */
	size_t ntri;
	struct mesh_part *parts;
	int nparts;
	char (*names)[MESH_NAME_MAX];	/* every distinct non-empty name in the file */
	int nnames;
};

/*
 * Read path (any format Assimp reads) and map every vertex x to xf x (a 3 x 4 affine
 * matrix: xf[r][0..2] x + xf[r][3]). 0, or RS_EIO / RS_EINPUT with the reason in err.
 */
int mesh_read(const char *path, const double xf[3][4], struct mesh *out, struct rs_error *err);

/* The index of name in m->names, or -1. */
int mesh_name(const struct mesh *m, const char *name);

/* The extension list of the formats Assimp reads, "*.3ds;*.obj;...". */
const char *mesh_formats(void);

void mesh_free(struct mesh *m);

#ifdef __cplusplus
}
#endif

#endif
