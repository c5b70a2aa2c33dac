/*
 * voxel.h - the voxel grid: every cell air, boundary or padding (seed 003 section 4.3.3).
 *
 * Cell (i, j, k) has its node at room coordinates origin + (i, j, k) * h and is stored at
 * i + nx * (j + ny * k): x fastest, z slowest, so a thread front marching in z reads
 * coalesced rows. Padding as deep as the stencil reaches surrounds the room on every side
 * (the halo), so every stencil read of a non-padding cell stays inside the array.
 *
 * Each cell holds one class byte: an index into kinds[], the table of update kinds.
 * kinds[VOX_PAD] is padding, kinds[VOX_AIR] is air (six non-padding neighbours, no loss),
 * and every other entry is a boundary kind: K < 6 non-padding neighbours and the sum of the
 * admittances of the walls that replace the missing ones (docs/physics.md, "Walls").
 * Per-column start/stop heights bound the non-padding cells of every (i, j) column.
 *
 * vox_build() returns a grid the caller owns and releases with vox_free().
 */
#ifndef VOX_VOXEL_H
#define VOX_VOXEL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/rs_error.h"
#include "../model/room.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VOX_PAD 0
#define VOX_AIR 1
#define VOX_MAX_KINDS 256	/* the class byte indexes this many kinds */

struct vox_kind {
	int K;			/* non-padding neighbours among the six face neighbours */
	double beta_sum;	/* sum of wall admittances over the 6 - K missing neighbours */
	int diff;		/* 1: the engines' sum of its six neighbours, padding read as 0,
				 * may round twice for a uniform field (one neighbour or two
				 * missing along x or y and none along z or one: docs/physics.md,
				 * "A uniform field stays uniform"); such kinds come last */
};

/* What a grid will be, computed without allocating it (roomsim info, memory checks). */
struct vox_plan {
	int n[3];		/* cells along x, y, z including the halo; n[0] rounded up to a
				 * multiple of 8 with padding, so rows are 32-byte aligned */
	int room[3];		/* room cells along x, y, z: round(L / h) */
	int halo;		/* padding cells before the room on each axis: the stencil's reach */
	double h;		/* spacing, m */
	double size[3];		/* effective room extent room[d] * h, m */
	size_t cells;		/* n[0] * n[1] * n[2] */
	size_t air, boundary, padding;	/* the scheme's nodes: with fcc, those of its lattice */
	int fcc;		/* 1: the fcc scheme (see vox_folded): fields folded to
				 * n[0] / 2 values per row */
	int on_nodes;		/* 1: the walls pass through the outermost nodes (the fcc
				 * scheme in a box); 0: half a cell beyond them */
	int slab;		/* the room's axis stored slowest (room_slab_axis): the grid's
				 * axis g is the room's room_axis_of(slab, g); 2: the room's
				 * own frame. Positions given to the functions below are in the
				 * room's frame; n, room, size and cell indices in the grid's. */
};

/* A position (or direction) from the room's frame into the grid's, and back. */
static inline void vox_to_grid(const struct vox_plan *p, const double r[3], double g[3])
{
	for (int d = 0; d < 3; d++)
		g[d] = r[room_axis_of(p->slab, d)];
}

static inline void vox_to_room(const struct vox_plan *p, const double g[3], double r[3])
{
	double t[3] = { g[0], g[1], g[2] };

	for (int d = 0; d < 3; d++)
		r[room_axis_of(p->slab, d)] = t[d];
}

#define VOX_NO_WALL 255	/* vox_wall.material of a face whose neighbour is not padding */

/*
 * A boundary cell's walls, one per face in the order -x, +x, -y, +y, -z, +z: the material
 * behind the face and the surface-area correction of docs/physics.md, "Staircase walls":
 * the real surface's area per h^2 of face, 1 / (|nx| + |ny| + |nz|) for a surface of unit
 * normal n (1 on walls aligned with the grid).
 *
 * On the fcc lattice in a carved room a node's walls replace its missing links (up to
 * twelve), and its slots hold one material each with the sum of its links' loss weights
 * (docs/physics.md, "FCC walls in carved rooms": 1 / (4 M(n)) per link, a real area of
 * 4 h^2 per unit of weight); links counts the node's present neighbours. In a box the fcc
 * grid's slots are the box's faces the node lies on, weight 1 each.
 */
struct vox_wall {
	size_t cell;		/* index of the cell in the grid */
	uint8_t material[6];	/* index into the room's materials, or VOX_NO_WALL */
	uint8_t links;		/* fcc in a carved room: the node's links to room nodes */
	float area[6];		/* the correction (fcc: the weight); 0 where there is no wall */
};

/* The fcc lattice's twelve links, in the order the engines sum them (cpu_fcc.inc): four in
 * rows j -+ 1, four in rows k -+ 1, four diagonal in y and z. */
static const int vox_fcc_link[12][3] = {
	{ -1, -1, 0 }, { 1, -1, 0 }, { -1, 1, 0 }, { 1, 1, 0 },
	{ -1, 0, -1 }, { 1, 0, -1 }, { -1, 0, 1 }, { 1, 0, 1 },
	{ 0, -1, -1 }, { 0, 1, 1 },  { 0, -1, 1 }, { 0, 1, -1 },
};

/*
 * The fcc scheme's walls in a carved room (docs/physics.md, "FCC walls in carved rooms"). The
 * lattice is tiled by tetrahedra of four mutually linked nodes, two on each link: link q's
 * other vertices are the links of mask VOX_FCC_TET[q][0] (a step back along q's third axis)
 * and VOX_FCC_TET[q][1] (a step on), bit r for link r. A link of a node on a wall weighs
 * VOX_FCC_WEIGHT[a][b], a and b the vertices missing from its two tetrahedra; the same for
 * both its ends, since they share the tetrahedra.
 */
#define VOX_FCC_TET                                                                           \
	{ { 0x110, 0x440 }, { 0x120, 0x480 }, { 0x810, 0x240 }, { 0x820, 0x280 },             \
	  { 0x101, 0x804 }, { 0x102, 0x808 }, { 0x401, 0x204 }, { 0x402, 0x208 },             \
	  { 0x011, 0x022 }, { 0x044, 0x088 }, { 0x041, 0x082 }, { 0x014, 0x028 } }
#define VOX_FCC_WEIGHT                                                                        \
	{ { 1.0, 1.0 + 1.0 / 6, 1.5 },                                                        \
	  { 1.0 + 1.0 / 6, 1.0 + 1.0 / 3, 1.5 + 1.0 / 6 },                                    \
	  { 1.5, 1.5 + 1.0 / 6, 2.0 } }

/*
 * grid.walls: fitted (docs/physics.md, "Fitted walls"): the nodes near the surface whose
 * update is the finite-volume one of their cut dual cell (on the cubic grid the cell's box,
 * on the fcc lattice the node's rhombic dodecahedron), u+ = u + sc (cb (u - u-) + l2v T),
 * T = the sum over the members' faces of open (u_neighbour - u), l2v = lambda^2 a / V (a the
 * full face's area over the nodes' distance, in h: 1 on the cubic grid, 1/2 on the fcc
 * lattice), sc = 1 / (1 + gl), cb = 1 - gl, gl = (lambda / 2) loss / V. A group's members
 * hold one value: a node whose cell is too small for the step is merged with its neighbours.
 * The engines run their staircase update, then overwrite these nodes (u- saved before the
 * step), so every other node is unchanged.
 */
struct vox_cut {
	size_t n;		/* members, group by group */
	size_t ngroups;
	int faces;		/* per member: 6 (the cubic grid's -x +x -y +y -z +z) or 12
				 * (the fcc lattice's links, in vox_fcc_link's order) */
	size_t *cell;		/* per member: its cell's index in the grid (on the fcc
				 * lattice unfolded: its field index is cell >> 1) */
	size_t *gstart;		/* group q's members: gstart[q] .. gstart[q + 1] - 1 */
	float *open;		/* per member: its faces' open fractions, faces per member */
	float *area;		/* per member: the wall inside its cell, in h^2 */
	uint8_t *material;	/* per member: that wall's material (the nearest surface's) */
	double *vol;		/* per group: its volume inside the room, in h^3 (a whole
				 * cell: 1 on the cubic grid, 2 on the fcc lattice) */
	double *loss;		/* per group: sum of admittance times wall area (h^2) over its
				 * walls of scalar materials (those given by band take the
				 * branch walls, solver/branch.h) */
	double volume;		/* sum of the members' volumes, in h^3 */
	size_t merged;		/* merges made for stability */
	int rounds;		/* fcc: rounds of lending and merging the stability check
				 * asked for beyond the first */
};

/* The cubic-grid offset of face e of a cut member (struct vox_cut): its neighbour's cell is
 * cell + vox_cut_offset(p, faces, e). */
static inline ptrdiff_t vox_cut_offset(const struct vox_plan *p, int faces, int e)
{
	static const int cubic[6][3] = { { -1, 0, 0 }, { 1, 0, 0 }, { 0, -1, 0 },
					 { 0, 1, 0 },  { 0, 0, -1 }, { 0, 0, 1 } };
	const int *o = faces == 12 ? vox_fcc_link[e] : cubic[e];

	return o[0] + (ptrdiff_t)p->n[0] * (o[1] + (ptrdiff_t)p->n[1] * o[2]);
}

void vox_cut_free(struct vox_cut *c);

/* The room's air volume and its walls' area as its description gives them, before any grid:
 * a mesh's own or a box's; shapes add their surfaces to the area (at most: an extrusion's
 * sides and caps whole, faces they share counted twice) and leave the volume unknown (0); a
 * voxel file leaves both unknown (0). */
void vox_room_measure(const struct room *room, double *volume, double *area);

/* The cut cells grid p of the room can hold, at most: from the room's surface (a mesh's own,
 * a box's, each shape's), or twice the grid's boundary cells for a voxel file. */
size_t vox_cut_members(const struct room *room, const struct vox_plan *p);

/* The bytes of `members` cut cells of grid p, at most: on the host, in the largest phase of
 * building them (their lists and what that phase holds beside them), or on the device. */
size_t vox_cut_memory(const struct vox_plan *p, size_t members, int device);

/* Of those on the host, the bytes their lists keep for the run, after the building. */
size_t vox_cut_kept(const struct vox_plan *p, size_t members);

struct vox_grid {
	struct vox_plan plan;
	double origin[3];	/* room coordinates of the node of cell (0, 0, -zbase) */
	int zbase;		/* a window (vox_window): the layer of the whole grid that is its
				 * layer 0, so that points interpolate as in the whole grid */
	uint8_t *cls;		/* plan.cells class bytes, owned */
	int32_t *kstart;	/* per column i + nx * j: first non-padding k, owned */
	int32_t *kstop;		/* per column: last non-padding k; kstop < kstart for none */
	struct vox_kind kinds[VOX_MAX_KINDS];
	int nkinds;
	int first_diff;		/* the first kind with diff = 1 (nkinds: none) */
	int carved;		/* 1: not a plain box (vox_carve, a mesh, shapes, a voxel file) */
	struct vox_wall *walls;	/* every boundary cell, in cell order; owned (on the fcc grid:
				 * every node on a wall, area 1 per wall it lies on) */
	size_t nwalls;
	struct vox_cut *cut;	/* grid.walls: fitted: the cut cells; NULL: the staircase */
	double kind_error;	/* largest relative change of a boundary's admittance sum made
				 * to fit the kinds into the class byte (0: none) */
};

/* Fill plan for room without allocating anything: in its own frame, or a turned room's
 * (room_turned) in the grid's. */
/*
 * The spacing at most h and at least VOX_FIT_LEAST h at which a box of sides box[3] comes
 * closest to whole cells: among the largest spacings whose sides are all within VOX_FIT_TOL
 * of a whole number of cells, the one whose worst side is nearest (the first of them leaves
 * the sides about VOX_FIT_TOL cells long), else the one whose worst side is nearest of all
 * tried; *worst (if not NULL) gets that side's distance, in cells. The walls of a box lie on
 * cell faces (voxel.c), so its sides are simulated as whole cells: fitted, at their true
 * length.
 */
#define VOX_FIT_LEAST 0.9
#define VOX_FIT_TOL 0.05
double vox_fit_spacing(const double box[3], double h, double *worst);

/* The worst distance of a box's sides from whole numbers of cells of spacing h, in cells. */
double vox_fit_residual(const double box[3], double h);

void vox_plan(const struct room *room, struct vox_plan *plan);

/* The plan of room_turned(room, slab), without the copy. */
void vox_plan_turned(const struct room *room, int slab, struct vox_plan *plan);

/* The scheme's nodes in the array, halo included: what its voxel updates per step count. */
static inline size_t vox_nodes(const struct vox_plan *p)
{
	return p->fcc ? p->cells / 2 : p->cells;
}

/*
 * The fcc scheme's grid (docs/physics.md, "FCC walls"). Its nodes are the cells with
 * i + j + k even; row (j, k) keeps them folded at i / 2 (n[0] is a multiple of 16, so a
 * folded row of n[0] / 2 values stays 32-byte aligned).
 * - In a box (on_nodes) the walls pass through the outermost nodes, so a box of N h along an
 *   axis has N + 1 nodes there (room[d] = N + 1, size[d] = N h) and node (i, j, k) lies at
 *   origin + (i, j, k) h. Cells with i + j + k odd belong to no node: the class bytes of the
 *   room's cells (both parities) still say which walls they lie on, and kinds[t].K is 12,
 *   the mirrored neighbours every node reads.
 * - In a carved room (carved) the nodes lie at the cells' centres as on the cubic grid, a
 *   node is air when it is inside, and each link to a node that is not becomes a wall:
 *   kinds[t].K counts the links left. The cells with i + j + k odd are padding.
 */
static inline size_t vox_folded(const struct vox_plan *p, int i, int j, int k)
{
	return (size_t)(i >> 1) + (size_t)(p->n[0] / 2) * ((size_t)j + (size_t)p->n[1] * (size_t)k);
}

/*
 * Voxelise room: its box, or its mesh, voxel file and shapes (geometry/voxelise.c). A cell is
 * air when its node is inside. NULL and err filled on failure; a mesh whose inside reaches
 * its outside through a gap wider than a cell is an RS_EINPUT error that says where.
 */
struct vox_grid *vox_build(const struct room *room, struct rs_error *err);

/* The air volume (m^3) and the corrected wall area (m^2) of a grid. */
void vox_measure(const struct vox_grid *g, double *volume, double *area);

/* The real area (m^2) of slot f of wall w of grid g (vox_measure's terms). */
double vox_wall_area(const struct vox_grid *g, const struct vox_wall *w, int f);

/*
 * A mesh's own volume (m^3, the solid components nested inside others subtracted; NAN when
 * it has too many components to sort out) and surface area (m^2), to compare against.
 */
void vox_mesh_measure(const struct mesh *m, double *volume, double *area);

/*
 * The nearest position to pos (room coordinates) where a point source or receiver can sit
 * (its eight interpolation nodes all room nodes) into near, and its distance; -1 when there
 * is none within `reach` metres.
 */
int vox_nearest_point(const struct vox_grid *g, const double pos[3], double reach,
		      double near[3], double *distance);

/*
 * Turn the cells whose nodes lie in the box [lo, hi] (room coordinates) into padding: an
 * obstacle or a notch (L-shaped, stepped rooms). The new walls get material `material`;
 * kinds, column heights and cell counts are recomputed. g is in its room's own frame (the
 * benchmarks' and tests' grids; RS_EINPUT for a turned one).
 */
int vox_carve(struct vox_grid *g, const struct room *room, const double lo[3],
	      const double hi[3], int material, struct rs_error *err);

/*
 * A grid of the layers w0..w1 (z cell indices of g, inside its room) of g, with g's halo of
 * padding below and above: one rank's share of a decomposed run (solver/part.h). Its cells,
 * walls and kinds are g's; its room is those layers, and its zbase is w0 - halo more than
 * g's (its origin stays g's, so vox_point weighs a point exactly as in g). On the fcc
 * lattice w0 - halo must be even, so that a node keeps its parity.
 */
struct vox_grid *vox_window(const struct vox_grid *g, int w0, int w1, struct rs_error *err);

/*
 * The collectives a decomposed build calls (vox_build_window), every rank in the same order.
 * Ranks are numbered as their slabs lie in z.
 */
struct vox_comm {
	int rank, size;
	void *ctx;
	/* v[0 .. n) summed (max = 0) or maximised (max = 1) over the ranks, in place */
	void (*reduce)(void *ctx, double *v, int n, int max);
	/* `bytes` of mine from every rank, in rank order, into all (size * bytes) */
	void (*gather)(void *ctx, const void *mine, size_t bytes, void *all);
	/* below to rank - 1 and above to rank + 1; theirs into from_below and from_above
	 * (untouched at the ends) */
	void (*swap)(void *ctx, const void *below, const void *above, void *from_below,
		     void *from_above, size_t bytes);
};

/*
 * The window of layers w0..w1 of room's grid, built alone: the same grid, byte for byte, as
 * vox_window(vox_build(room), w0, w1) (kinds, walls, class bytes, column heights, counts),
 * with memory and time for its own layers only. own0..own1 are the layers this rank answers
 * for (its slab): the ranks' slabs cover the room's layers once, in rank order, and each
 * window holds its slab. The leak check's flood and the kinds' table are agreed through
 * comm, which every rank calls together; NULL: a probe, built alone, whose room nodes (its
 * cells that are not padding) are the grid's, with no walls, no kinds but air, and no leak
 * check.
 */
struct vox_grid *vox_build_window(const struct room *room, int w0, int w1, int own0, int own1,
				  const struct vox_comm *comm, struct rs_error *err);

/*
 * A sketch of room's whole grid for a decomposed run's checks of its points: the whole plan,
 * every cell padding until vox_sketch_fill builds layers into it. Its class bytes are one
 * zeroed allocation, which the C library maps lazily: only the layers written take memory.
 * It has no walls and no kinds beyond padding and air.
 */
struct vox_grid *vox_sketch(const struct room *room, struct rs_error *err);

/* Build layers k0..k1 (clipped to the room's) of room's grid alone and copy their class
 * bytes into sketch s (a probe: vox_build_window without a comm). */
int vox_sketch_fill(struct vox_grid *s, const struct room *room, int k0, int k1,
		    struct rs_error *err);

/* The scheme's room nodes in layers k0..k1 of g (its own layer indices): its share of the
 * plan's air + boundary. */
size_t vox_count_nodes(const struct vox_grid *g, int k0, int k1);

/*
 * vox_measure in parts, for a decomposed grid: from the walls of layers k0..k1 of g in cell
 * order, each material's real wall area added to area[m] (m < nm) and the fcc box's
 * correction taken from *volume, which starts as (nodes of the whole grid) h^3 (2 h^3 on the
 * fcc lattice). Window after window in z order, the sums are vox_measure's, bit for bit.
 */
void vox_measure_add(const struct vox_grid *g, int k0, int k1, int nm, double *volume,
		     double *area);

void vox_free(struct vox_grid *g);

/*
 * The eight nodes (cell coordinates) and weights that interpolate a room position. On the
 * cubic grid the trilinear stencil of vox_locate. On the fcc grid piecewise linear over the
 * lattice's tetrahedra and octahedra (vox_point_fcc): four or six lattice nodes, the other
 * slots a copy of the first of weight 0, exact for linear fields. Returns 0 when every node of non-zero weight is a room
 * node, otherwise -1 and, in *distance, how far (m) the farthest of them lies outside (the
 * nodes are given either way: on the cubic grid, of the nearest position inside the room's
 * bounds).
 */
int vox_point(const struct vox_grid *g, const double pos[3], int node[8][3], double w[8],
	      double *distance);

/* The lowest and highest z layer of the eight nodes that interpolate pos (vox_point), from
 * the plan alone: whichever cells are room nodes. */
void vox_point_layers(const struct vox_grid *g, const double pos[3], int *lo, int *hi);

static inline size_t vox_index(const struct vox_plan *p, int i, int j, int k)
{
	return (size_t)i + (size_t)p->n[0] * ((size_t)j + (size_t)p->n[1] * (size_t)k);
}

/*
 * Trilinear stencil of a room position: base cell index and the fractional weights w[3].
 * Returns 0 when all eight cells around pos are non-padding, otherwise -1 and, in
 * *distance, how far (m) pos lies outside the region where that holds.
 */
int vox_locate(const struct vox_grid *g, const double pos[3], int base[3], double w[3],
	       double *distance);

#ifdef __cplusplus
}
#endif

#endif
