/*
 * mesh.c - the mesh's own lookups and release (model/mesh.h).
 */
#include "mesh.h"

#include <stdlib.h>
#include <string.h>

int mesh_name(const struct mesh *m, const char *name)
{
	for (int i = 0; i < m->nnames; i++)
		if (!strncmp(m->names[i], name, MESH_NAME_MAX - 1))
			return i;
	return -1;
}

void mesh_free(struct mesh *m)
{
	if (!m)
		return;
	free(m->v);
	free(m->tri);
	free(m->part);
	free(m->parts);
	free(m->names);
	memset(m, 0, sizeof(*m));
}
