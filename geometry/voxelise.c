/*
 * voxelise.c - the grid of a room that is not a plain box (docs/physics.md, "Voxelisation").
 *
 * 1. The base: the box, the inside of the mesh, or a voxel file. A node is inside the mesh
 *    when at least two of the three rays through it along x, y and z say so by parity; a ray
 *    that crosses the surface an odd number of times (a hole, an open seam) abstains. Each
 *    crossing is decided by an exact, consistent edge rule (below), so a ray through an edge
 *    or a vertex shared by several triangles crosses the surface once, not twice or never.
 *    Duplicated triangles are dropped first; flipped ones do not matter to parity.
 * 2. The leak check: the cells whose box a triangle meets are walls; a flood from outside the
 *    room through the other cells must not reach a node inside the mesh. Where it does, the
 *    mesh has a gap wider than a cell, and the error says where.
 * 3. The shapes, in order: `add` makes the nodes it holds air, `remove` solid.
 * 4. The walls of every air cell with a solid neighbour: the material and the surface-area
 *    correction of the surface responsible for the wall, which is the last of base and
 *    shapes to set either of the two nodes (it holds one and not the other).
 */
#include "voxelise.h"
#include "../common/rs_phase.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

/* Apply the shapes in order to the nodes each bounds: the last one holding a node decides. */
static void apply_shapes(struct build *b)
{
	const struct room_geometry *geo = &b->room->geo;

	for (int s = 0; s < geo->nshapes; s++) {
		const struct room_shape *sh = &geo->shapes[s];
		int m0[3], m1[3];

		for (int d = 0; d < 3; d++)
			vx_node_range(b, d, sh->lo[d], sh->hi[d], &m0[d], &m1[d]);
		m0[2] = m0[2] > b->k0 ? m0[2] : b->k0;	/* the layers built */
		m1[2] = m1[2] < b->k1 ? m1[2] : b->k1;
#pragma omp parallel for schedule(static)
		for (int k = m0[2]; k <= m1[2]; k++)
			for (int j = m0[1]; j <= m1[1]; j++)
				for (int i = m0[0]; i <= m1[0]; i++) {
					const double x[3] = { node_at(b, 0, i), node_at(b, 1, j),
							      node_at(b, 2, k) };
					uint8_t *c = cell(b, i, j, k);

					if (vox_shape_holds(sh, x))
						*c = (uint8_t)((*c & ~(B_ADD | B_REMOVE)) |
							       (sh->remove ? B_REMOVE : B_ADD));
				}
	}
}

/*
 * The class bytes from the building bits (air, or padding until the kinds are set), the
 * column heights and the cell counts, in one pass; rows in parallel.
 */
static void finish(struct vox_grid *g)
{
	struct vox_plan *p = &g->plan;
	size_t air = 0;

	for (size_t c = 0; c < (size_t)p->n[0] * p->n[1]; c++) {
		g->kstart[c] = p->n[2];
		g->kstop[c] = -1;
	}
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : air)
	for (int j = 0; j < p->n[1]; j++)
		for (int k = 0; k < p->n[2]; k++) {
			uint8_t *row = &g->cls[vox_index(p, 0, j, k)];
			int32_t *lo = &g->kstart[(size_t)p->n[0] * j], *hi = &g->kstop[(size_t)p->n[0] * j];

			for (int i0 = 0; i0 < p->n[0]; i0 += 8) {	/* rows are whole words of 8 */
				const uint64_t a = air8(row + i0);	/* VOX_AIR is 1, VOX_PAD 0 */

				memcpy(row + i0, &a, 8);
				air += (size_t)__builtin_popcountll(a);
				if (a == in8) {	/* all eight: one vectorised update */
					for (int q = 0; q < 8; q++) {
						lo[i0 + q] = lo[i0 + q] < k ? lo[i0 + q] : k;
						hi[i0 + q] = k;
					}
					continue;
				}
				for (uint64_t m = a; m; m &= m - 1) {
					const int i = i0 + __builtin_ctzll(m) / 8;

					lo[i] = lo[i] < k ? lo[i] : k;
					hi[i] = k;
				}
			}
		}
	p->boundary = g->nwalls;
	p->air = air - g->nwalls;
	p->padding = p->cells - air;
}

/* A voxel file base: its air and boundary cells, slab by slab; its walls stay open for
 * vx_cell_walls(). */
static int read_voxel_file(struct build *b, struct rs_error *err)
{
	const struct room_voxel_file *vf = b->room->geo.voxels;
	const int *n = b->whole.room;
	uint8_t *air = malloc((size_t)n[0] * (size_t)n[1]);
	int rc = 0;

	if (!air)
		return rs_fail(err, RS_ENOMEM, "out of memory for a slab of the voxel file");
	if (!(b->file = vf->open(b->room, err))) {
		free(air);
		return err ? err->code : RS_EIO;
	}
	for (int k = b->k0; k <= b->k1 && !rc; k++) {
		if (vf->slab(b->file, k, air)) {
			rc = rs_fail(err, RS_EIO, "%s: reading the voxel file failed",
				     b->room->geo.voxels_path);
			break;
		}
		for (int j = 0; j < n[1]; j++)
			for (int i = 0; i < n[0]; i++)
				if (air[i + (size_t)n[0] * j])
					*cell(b, i, j, k) |= B_BASE;
	}
	free(air);
	return rc;
}

/* The base of the grid: every room cell holds B_BASE or not. */
static int make_base(struct build *b, int probe, struct rs_error *err)
{
	const struct vox_plan *p = &b->g->plan;

	if (b->room->geo.has_box) {	/* the box [0, L]: nodes strictly inside it */
		const double *L = b->room->geo.box;

		for (int k = b->k0; k <= b->k1; k++)
			for (int j = 0; j < p->room[1]; j++)
				for (int i = 0; i < p->room[0]; i++) {
					const double x = node_at(b, 0, i), y = node_at(b, 1, j);
					const double z = node_at(b, 2, k);

					*cell(b, i, j, k) = x > 0 && x < L[0] && y > 0 && y < L[1] &&
							    z > 0 && z < L[2] ? B_BASE : 0;
				}
		return 0;
	}
	if (b->room->geo.mesh.ntri) {
		if (vx_load_triangles(b, err) || vx_mesh_inside(b, err))
			return err ? err->code : RS_EINPUT;
		rs_phase("grid: the mesh's inside");
		if (!probe && vx_leak_check(b, err))
			return err ? err->code : RS_EINPUT;
		rs_phase("grid: leak check");
		return !probe && vx_make_bins(b, err) ? (err ? err->code : RS_EINPUT) : 0;
	}
	return b->room->geo.voxels_path[0] ? read_voxel_file(b, err) : 0;
}

struct vox_grid *vox_build_shaped(const struct room *room, const struct vox_span *s,
				  struct rs_error *err)
{
	struct build b = { .room = room, .comm = s->comm };

	vox_plan(room, &b.whole);
	if (!(b.g = vox_alloc(room, s->w0, s->w1, err)))
		return NULL;
	b.g->carved = 1;
	b.zoff = b.g->zbase;
	b.wk0 = s->w0 - b.whole.halo;
	b.wk1 = s->w1 - b.whole.halo;
	b.k0 = b.wk0 > 0 ? b.wk0 - 1 : 0;
	b.k1 = b.wk1 < b.whole.room[2] - 1 ? b.wk1 + 1 : b.wk1;
	b.ok0 = s->own0 - b.whole.halo;
	b.ok1 = s->own1 - b.whole.halo;
	if (make_base(&b, s->probe, err))
		goto out_free;
	apply_shapes(&b);
	if (b.g->plan.fcc ? vx_fcc_walls(&b, s->probe, err)
			  : !s->probe && vx_make_walls(&b, err))
		goto out_free;
	rs_phase("grid: walls");
	if (!b.g->plan.fcc) {
		vox_pad_beside(b.g);
		finish(b.g);
	}
	rs_phase("grid: padding and counts");
	if (!s->probe && vox_set_kinds(b.g, room, s, err))
		goto out_free;
	rs_phase("grid: kinds");
	if (!s->probe && room->fitted && vx_cut_cells(&b, err))
		goto out_free;
	goto out;

out_free:
	vox_free(b.g);
	b.g = NULL;
out:
	free(b.tri);
	free(b.bin_at);
	free(b.bin_tri);
	if (b.file)
		room->geo.voxels->close(b.file);
	return b.g;
}
