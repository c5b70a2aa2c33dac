/*
 * mesh.h - a triangle mesh as a room's geometry holds it: vertices in metres, triangles, and
 * the parts (one mesh placed by one node of the model file) that carry the names a room file
 * gives materials by. io/mesh.h reads one from a model file; every array is malloc'd and
 * released with mesh_free().
 */
#ifndef MODEL_MESH_H
#define MODEL_MESH_H

#include <stddef.h>
#include <stdint.h>

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

/* The index of name in m->names, or -1. */
int mesh_name(const struct mesh *m, const char *name);

void mesh_free(struct mesh *m);

#ifdef __cplusplus
}
#endif

#endif
