/*
 * voxelise.h - what the steps of voxelise.c share: the building bits of the class bytes,
 * the triangles and the build's state, and each step's entry (voxelise_mesh.c: the base's
 * inside by ray parity; voxelise_leak.c: the leak check; voxelise_walls.c: the walls of the
 * cubic grid; voxelise_fcc.c: the fcc lattice's). Internal to geometry/.
 */
#ifndef VOX_VOXELISE_H
#define VOX_VOXELISE_H

#include <stdint.h>
#include <string.h>

#include "build.h"

/* Bits of the class bytes while building; the final classes replace them. */
#define B_BASE 0x40	/* the base holds the node */
#define B_TOUCH 0x10	/* a triangle meets the cell's box (leak check only) */
#define B_SEEN 0x20	/* the flood from outside reached the cell (leak check only) */
#define B_ADD 0x80	/* the last shape holding the node adds air */
#define B_REMOVE 0x01	/* the last shape holding the node removes it */

/* Is the node air: added by the last shape holding it, or the base's and not removed? */
static inline int is_air(uint8_t c)
{
	return (c & B_ADD) || (c & (B_BASE | B_REMOVE)) == B_BASE;
}

static const uint64_t in8 = 0x0101010101010101ull;	/* the low bit of eight bytes */

/* is_air() of the eight bytes at c, as the low bit of each byte. */
static inline uint64_t air8(const uint8_t *c)
{
	uint64_t x;

	memcpy(&x, c, 8);
	/* B_ADD is bit 7, B_BASE bit 6, B_REMOVE bit 0 */
	return ((x >> 7) & in8) | ((x >> 6) & in8 & ~(x & in8));
}

#define BIN_CELLS 4	/* cells per side of a bin of the nearest-triangle search */
#define BIN_BESIDE 2	/* bins held beyond the layers built, along z */

struct tri {
	double v[3][3];		/* vertices */
	double n[3];		/* unit normal */
	double lo[3], hi[3];	/* bounds */
	int material;
};

struct build {
	const struct room *room;
	struct vox_grid *g;	/* the grid built: the whole one, or a window of it */
	struct vox_plan whole;	/* the whole grid's plan */
	int zoff;		/* room layer k is layer k + halo - zoff of g */
	int k0, k1;		/* the room layers g holds while building: its own and one more
				 * each side, for the neighbours of its walls */
	int wk0, wk1;		/* g's own room layers, whose walls are made */
	int ok0, ok1;		/* this rank's slab (room layers): its share of the leak flood
				 * and of the kinds (vox_build_window) */
	const struct vox_comm *comm;	/* NULL: one process (or a probe) */
	struct tri *tri;	/* the mesh's triangles without duplicates, or NULL */
	size_t ntri;
	void *file;		/* a voxel file base, open (room->geo.voxels), or NULL */
	/* nearest-triangle bins of the layers built and BIN_BESIDE bins beyond: bin b holds
	 * bin_tri[bin_at[b] .. bin_at[b + 1]); along z they are the whole room's bins bin_k0 ..
	 * bin_k0 + nbin[2] - 1 (of all_k) */
	int nbin[3], bin_k0, all_k;
	size_t *bin_at;
	uint32_t *bin_tri;
};

/* The index in g of room cell (i, j, k), indices within the whole room (no halo). */
static inline size_t cell_index(const struct build *b, int i, int j, int k)
{
	const int h = b->g->plan.halo;

	return vox_index(&b->g->plan, i + h, j + h, k + h - b->zoff);
}

/* The class byte of room cell (i, j, k), which g holds (b->k0 <= k <= b->k1). */
static inline uint8_t *cell(const struct build *b, int i, int j, int k)
{
	return &b->g->cls[cell_index(b, i, j, k)];
}

/* Room coordinate of the node of room cell m along axis d. */
static inline double node_at(const struct build *b, int d, int m)
{
	return b->room->origin[d] + (m + 0.5) * b->g->plan.h;
}


/* ---- voxelise_mesh.c ---- */

/* The mesh as struct tri, vertices sorted in each, duplicates and zero-area ones dropped. */
int vx_load_triangles(struct build *b, struct rs_error *err);

/* The room cells m with node in [lo, hi] along axis d: [*m0, *m1], empty when m1 < m0. */
void vx_node_range(const struct build *b, int d, double lo, double hi, int *m0, int *m1);

/* The mesh's inside: a node is inside when at least two of its three rays say so. */
int vx_mesh_inside(struct build *b, struct rs_error *err);

/* Where the ray along axis a through (pu, pv) crosses triangle t, if it does (the exact,
 * consistent rule of vx_mesh_inside). */
int vx_crossing(const struct tri *t, int a, double pu, double pv, double *at);

/* ---- voxelise_leak.c ---- */

/* Flood from the room's outer cells through the untouched ones; a leak reaches B_BASE. */
int vx_leak_check(struct build *b, struct rs_error *err);

/* ---- voxelise_walls.c ---- */

/* Bins of BIN_CELLS cells holding the triangles whose bounds meet them. */
int vx_make_bins(struct build *b, struct rs_error *err);

/*
 * The triangle nearest x, the first in b->tri of those as near. With a hint (the last answer,
 * usually the same surface), only the bins within the hint's distance of x can hold a nearer
 * one; without, rings of bins outwards until no nearer one can lie further out. Where the
 * nearest lies further than the bins held reach, every triangle is looked at.
 */
const struct tri *vx_nearest_tri(const struct build *b, const double x[3],
				 const struct tri *hint);

/* The correction of a wall on a surface of unit normal n (docs/physics.md). */
float vx_area_of(const double n[3]);

/*
 * The last shape that holds exactly one of the nodes at xc and xs: 1, its material and its
 * surface's normal n at mid; 0 when none does (the base is responsible).
 */
int vx_shape_between(const struct room_geometry *geo, const double xc[3], const double xs[3],
		     const double mid[3], double n[3], uint8_t *material);

/*
 * The wall between air cell c and solid neighbour s across face f: the material and area
 * correction of the surface responsible, the last of base and shapes to hold exactly one.
 */
void vx_face_wall(const struct build *b, const int c[3], const int s[3], int f,
		  uint8_t *material, float *area, const struct tri **hint);

/* The walls of air cell c (room indices), which has a solid neighbour. */
void vx_cell_walls(const struct build *b, const int c[3], const struct tri **hint,
		   struct vox_wall *wall);

/*
 * The walls of g's own layers (wk0..wk1) into g->walls, in cell order: each layer's number
 * from count, an array of them all, then each layer's walls from fill at their place; the
 * layers on the threads. `what` names the walls in an error.
 */
int vx_layer_walls(struct build *b, size_t (*count)(const struct build *b, int k),
		   void (*fill)(const struct build *b, int k, struct vox_wall *w), const char *what,
		   struct rs_error *err);

/* The walls of every air cell with a solid neighbour, in cell order, layer by layer. */
int vx_make_walls(struct build *b, struct rs_error *err);

/* ---- voxelise_cut.c ---- */

/* grid.walls: fitted: the cut cells of the whole grid b->g built (g->cut). */
int vx_cut_cells(struct build *b, struct rs_error *err);

/* ---- voxelise_fcc.c ---- */

/*
 * The fcc lattice's walls, slab by slab, joined in cell order, and its class bytes: air nodes
 * with at least one link to another air node are VOX_AIR (the kinds follow), every other
 * cell VOX_PAD; then the column heights and the node counts. A probe: the class bytes alone,
 * without walls.
 */
int vx_fcc_walls(struct build *b, int probe, struct rs_error *err);

#endif
