/*
 * voxelise_fcc.c - the fcc lattice's walls in carved rooms (docs/physics.md, "FCC walls in
 * carved rooms"; voxelise.c, step 4 on the fcc grid).
 */
#include "voxelise.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

/*
 * A link's loss weight on a surface of unit normal n: 1 / (4 M), M = max(|nx|, |ny|) +
 * max(|ny|, |nz|) + max(|nz|, |nx|), so that a plane's links add up to its real area; the
 * rhombic face's own 1 / (4 sqrt 2) without the correction or a normal.
 */
static float link_weight(const struct build *b, const double n[3])
{
	const double x = fabs(n[0]), y = fabs(n[1]), z = fabs(n[2]);
	const double M = fmax(x, y) + fmax(y, z) + fmax(z, x);

	if (!b->room->geo.area_correction || !(M > 0))
		return (float)(1 / (4 * M_SQRT2));
	return (float)(1 / (4 * M));
}

/* A voxel file's wall normal at room cell c: away from the air of its 26 neighbours. */
static void file_normal(const struct build *b, const int c[3], double n[3])
{
	const int *r = b->whole.room;
	double len = 0;

	n[0] = n[1] = n[2] = 0;
	for (int dz = -1; dz <= 1; dz++)
		for (int dy = -1; dy <= 1; dy++)
			for (int dx = -1; dx <= 1; dx++) {
				const int d[3] = { dx, dy, dz }, at[3] = { c[0] + dx, c[1] + dy, c[2] + dz };
				const double l = sqrt(dx * dx + dy * dy + dz * dz);
				int in = 1;

				for (int a = 0; a < 3; a++)
					in &= at[a] >= -1 && at[a] <= r[a];
				if (!l || !in || is_air(*cell(b, at[0], at[1], at[2])))
					continue;
				for (int a = 0; a < 3; a++)
					n[a] += d[a] / l;
			}
	for (int a = 0; a < 3; a++)
		len += n[a] * n[a];
	for (int a = 0; a < 3 && len > 0; a++)
		n[a] /= sqrt(len);
}

/*
 * The wall replacing the link from air node c along o to the node s that is not air: the
 * material of the surface responsible, as vx_face_wall() finds it (the last shape holding
 * exactly one of the two, or the base), and the link's loss weight.
 */
static void link_wall(const struct build *b, const int c[3], const int o[3],
		      const struct tri **hint, uint8_t *material, float *weight)
{
	const struct room_geometry *geo = &b->room->geo;
	const int s[3] = { c[0] + o[0], c[1] + o[1], c[2] + o[2] };
	double xc[3], xs[3], mid[3], n[3] = { 0, 0, 0 };
	int a0 = -1, a1 = -1;

	for (int d = 0; d < 3; d++) {
		xc[d] = node_at(b, d, c[d]);
		xs[d] = node_at(b, d, s[d]);
		mid[d] = 0.5 * (xc[d] + xs[d]);
		if (o[d])	/* the link's two axes */
			*(a0 < 0 ? &a0 : &a1) = d;
	}
	if (vx_shape_between(geo, xc, xs, mid, n, material)) {
		*weight = link_weight(b, n);
		return;
	}
	*material = (uint8_t)geo->default_material;
	if (geo->has_box) {	/* the box's face that s lies beyond */
		static const int face[6] = { ROOM_X0, ROOM_X1, ROOM_Y0, ROOM_Y1, ROOM_FLOOR,
					     ROOM_CEILING };
		const int a = xs[a0] > 0 && xs[a0] < geo->box[a0] ? a1 : a0;

		*material = (uint8_t)b->room->face_material[face[2 * a + (o[a] > 0)]];
		n[a] = 1;
	} else if (b->tri) {
		const struct tri *t = vx_nearest_tri(b, mid, *hint);

		*hint = t;
		if (t) {
			*material = (uint8_t)t->material;
			memcpy(n, t->n, sizeof(n));
		}
	} else if (b->file) {	/* the file's wall on c's face along the link, or on the face
				 * towards s of the first cell on the way when both are air */
		const int f0 = 2 * a0 + (o[a0] > 0), f1 = 2 * a1 + (o[a1] > 0);
		int m0[3] = { c[0], c[1], c[2] }, m1[3] = { c[0], c[1], c[2] };
		float unused;

		m0[a0] += o[a0];
		m1[a1] += o[a1];
		if (!is_air(*cell(b, m0[0], m0[1], m0[2])))
			geo->voxels->wall_of(b->file, c, f0, material, &unused);
		else if (!is_air(*cell(b, m1[0], m1[1], m1[2])))
			geo->voxels->wall_of(b->file, c, f1, material, &unused);
		else
			geo->voxels->wall_of(b->file, m0, f1, material, &unused);
		file_normal(b, c, n);
	}
	*weight = link_weight(b, n);
}

/*
 * The walls of fcc node c (room indices), an air node: its links to nodes that are not air,
 * gathered by material into the slots of *wall; returns its links to air nodes.
 */
static int node_walls(const struct build *b, const int c[3], const struct tri **hint,
		      struct vox_wall *wall)
{
	int K = 0, slots = 0;

	memset(wall, 0, sizeof(*wall));
	memset(wall->material, VOX_NO_WALL, sizeof(wall->material));
	wall->cell = cell_index(b, c[0], c[1], c[2]);
	for (int q = 0; q < 12; q++) {
		const int *o = vox_fcc_link[q];
		uint8_t m;
		float w;
		int f;

		if (is_air(*cell(b, c[0] + o[0], c[1] + o[1], c[2] + o[2]))) {
			K++;
			continue;
		}
		link_wall(b, c, o, hint, &m, &w);
		for (f = 0; f < slots && wall->material[f] != m; f++)
			;
		if (f == 6)	/* a seventh material: its links join the last slot */
			f = 5;
		if (f == slots && slots < 6)
			wall->material[slots++] = m;
		wall->area[f] += w;
	}
	wall->links = (uint8_t)K;
	return K;
}

/* The links of fcc node (i, j, k) to air nodes. */
static int air_links(const struct build *b, int i, int j, int k)
{
	int K = 0;

	for (int q = 0; q < 12; q++) {
		const int *o = vox_fcc_link[q];

		K += is_air(*cell(b, i + o[0], j + o[1], k + o[2]));
	}
	return K;
}

/* The first node of row (j, k): i + j + k even in the array. */
static int row_first(const struct build *b, int j, int k)
{
	return (j + k + b->g->plan.halo) & 1;
}

/*
 * Eight cells of room row (j, k) from i0 on: the air nodes of the lattice with a link to a
 * node that is not air, one bit a byte (air8's form). Past the room's end the bytes are the
 * halo's, never air; the halo also keeps every neighbour inside the array. The row's last
 * eight, whose words would reach past the row (and past the array from its last row), go
 * cell by cell.
 */
static uint64_t edge8(const struct build *b, int i0, int j, int k)
{
	const ptrdiff_t sy = b->g->plan.n[0], sz = (ptrdiff_t)b->g->plan.n[0] * b->g->plan.n[1];
	const uint8_t *c = cell(b, i0, j, k);

	if (i0 + 9 + b->g->plan.halo > b->g->plan.n[0]) {
		uint64_t m = 0;

		for (int t = 0; t < 8 && i0 + t < b->whole.room[0]; t++)
			if (((i0 + t) & 1) == row_first(b, j, k) && is_air(c[t]) &&
			    air_links(b, i0 + t, j, k) < 12)
				m |= 1ull << (8 * t);
		return m;
	}
	/* the nodes: bytes t with i0 + t = row_first (i0 is even) */
	const uint64_t nodes = row_first(b, j, k) ? 0x0100010001000100ull : 0x0001000100010001ull;
	const uint64_t all =
		air8(c - 1 - sy) & air8(c + 1 - sy) & air8(c - 1 + sy) & air8(c + 1 + sy) &
		air8(c - 1 - sz) & air8(c + 1 - sz) & air8(c - 1 + sz) & air8(c + 1 + sz) &
		air8(c - sy - sz) & air8(c + sy + sz) & air8(c - sy + sz) & air8(c + sy - sz);

	return air8(c) & nodes & ~all;
}

/* The boundary nodes of layer k: air, with links to air and links to solid. */
static size_t count_nodes(const struct build *b, int k)
{
	size_t n = 0;

	for (int j = 0; j < b->whole.room[1]; j++)
		for (int i0 = 0; i0 < b->whole.room[0]; i0 += 8)
			for (uint64_t m = edge8(b, i0, j, k); m; m &= m - 1)
				n += air_links(b, i0 + __builtin_ctzll(m) / 8, j, k) > 0;
	return n;
}

/* Their walls; an air node without a link to the air is no node (no air node reads it). */
static void fill_nodes(const struct build *b, int k, struct vox_wall *w)
{
	const struct tri *hint = NULL;

	for (int j = 0; j < b->whole.room[1]; j++)
		for (int i0 = 0; i0 < b->whole.room[0]; i0 += 8)
			for (uint64_t m = edge8(b, i0, j, k); m; m &= m - 1) {
				const int c[3] = { i0 + __builtin_ctzll(m) / 8, j, k };
				struct vox_wall wl;

				if (node_walls(b, c, &hint, &wl) == 0)
					*cell(b, c[0], c[1], c[2]) = 0;
				else
					*w++ = wl;
			}
}

/*
 * The fcc lattice's walls, layer by layer in cell order, and its class bytes: air nodes
 * with at least one link to another air node are VOX_AIR (the kinds follow), every other
 * cell VOX_PAD; then the column heights and the node counts.
 */
int vx_fcc_walls(struct build *b, int probe, struct rs_error *err)
{
	struct vox_grid *g = b->g;
	struct vox_plan *p = &g->plan;
	const int *n = b->whole.room;
	size_t nodes = 0;

	if (probe) {	/* the nodes alone */
#pragma omp parallel for schedule(dynamic, 1)
		for (int k = b->wk0; k <= b->wk1; k++)
			for (int j = 0; j < n[1]; j++)
				for (int i = row_first(b, j, k); i < n[0]; i += 2)
					if (is_air(*cell(b, i, j, k)) && !air_links(b, i, j, k))
						*cell(b, i, j, k) = 0;
	} else if (vx_layer_walls(b, count_nodes, fill_nodes, "boundary nodes", err)) {
		return err ? err->code : RS_ENOMEM;
	}
#pragma omp parallel for schedule(static) reduction(+ : nodes)
	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++) {
				uint8_t *c = &g->cls[vox_index(p, i, j, k)];
				const int h = p->halo;	/* g's own room layers, not those beside */
				const int room = i >= h && i < h + n[0] && j >= h && j < h + n[1] &&
						 k >= h && k < h + p->room[2];

				*c = room && (i + j + k) % 2 == 0 && is_air(*c) ? VOX_AIR : VOX_PAD;
				nodes += *c == VOX_AIR;
			}
	vox_column_heights(g);
	p->boundary = g->nwalls;
	p->air = nodes - g->nwalls;
	p->padding = vox_nodes(p) - nodes;
	return 0;
}
