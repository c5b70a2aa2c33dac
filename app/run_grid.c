/*
 * run_grid.c - a run's voxel grid (run.h). One process builds the whole grid. A decomposed
 * run (docs/parallel.md) builds on each rank its window alone (vox_build_window), so that a
 * rank's memory and time follow its slab, and beside it a sketch of the whole grid that holds
 * only the layers around the sources and receivers, which every rank builds alike, so that
 * every rank meets a point in a wall with the same message. What needs the whole grid
 * otherwise is gathered from the ranks' slabs: the volume and the wall areas, the snapshot
 * planes' room cells, the receiver grids' points (grids.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "run.h"
#include "../solver/directivity.h"

/* The measures' running sums: the volume, then each material's area. */
struct measure {
	const struct vox_grid *g;
	int k0, k1, nm;
};

static void measure_add(void *ctx, double *v)
{
	const struct measure *m = ctx;

	vox_measure_add(m->g, m->k0, m->k1, m->nm, &v[0], v + 1);
}

/* r->volume and r->mat_area of the grid, as vox_measure gives them for the whole grid. */
static int measure(struct run *r, struct rs_error *err)
{
	const struct vox_grid *g = r->window ? r->window : r->grid;
	const int nm = r->room->nmaterials;
	const int k0 = r->window ? r->part.own[0] - g->zbase : g->plan.halo;
	const int k1 = r->window ? r->part.own[1] - g->zbase : g->plan.halo + g->plan.room[2] - 1;
	struct measure m = { g, k0, k1, nm };
	double *v = calloc((size_t)nm + 1, sizeof(double)), nodes;

	if (!v)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	/* the whole grid's plan counts its nodes; a window's counts its cells (vox_window) */
	nodes = r->window ? (double)vox_count_nodes(g, k0, k1)
			  : (double)(g->plan.air + g->plan.boundary);
	part_sum_doubles(&r->part, &nodes, 1);	/* whole numbers: exact */
	v[0] = nodes * (g->plan.h * g->plan.h * g->plan.h);
	if (g->plan.fcc)	/* a node holds 2 h^3 */
		v[0] *= 2;
	part_fold(&r->part, v, (size_t)nm + 1, measure_add, &m);
	r->volume = v[0];
	r->mat_area = v;
	memmove(v, v + 1, (size_t)nm * sizeof(double));
	return 0;
}

/* The room the voxelisers read: in the grid's frame. */
static const struct room *grid_room(const struct run *r)
{
	return r->turned ? r->turned : r->room;
}

int run_sketch(struct run *r, int k0, int k1, struct rs_error *err)
{
	return r->window ? vox_sketch_fill(r->grid, grid_room(r), k0, k1, err) : 0;
}

/* The layers the checks of point pos read, `more` beyond its eight nodes. */
static void point_layers(const struct run *r, const double pos[3], int more, int *k)
{
	vox_point_layers(r->grid, pos, &k[0], &k[1]);
	k[0] -= more;
	k[1] += more;
}

static int by_first(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

#define SKETCH_GAP 16	/* layers between two points' that are built too, to build them once */

/*
 * The sketch's layers: each source's and receiver's, a balloon's block, a spatial receiver's
 * ball (run.c check_points, run_spatial_open), built once where they overlap or nearly. The
 * groups of layers are shared out: rank g % size builds group g, and each group's bytes then
 * go to every rank (the others hold padding, 0, there: the largest byte is the built one).
 */
static int sketch_points(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	const int n = 2 * room->nsources + room->nreceivers;
	int (*k)[2] = malloc((size_t)n * sizeof(*k) + 1), rc = 0;

	if (!k)
		return part_agree(&r->part, rs_fail(err, RS_ENOMEM, "out of memory"), err);
	for (int i = 0; i < room->nsources; i++) {
		double c[3];

		run_source_pos(r, &room->sources[i], c);
		point_layers(r, room->sources[i].pos, 1, k[2 * i]);
		point_layers(r, c, DIR_NODES / 2 + 1, k[2 * i + 1]);
	}
	for (int q = 0; q < room->nreceivers; q++) {
		const int order = app_spatial_order(&room->receivers[q]);
		const int cells = order ? app_spatial_cells(room, r->plan.grid.h, order) : 0;

		point_layers(r, room->receivers[q].pos, cells + 2, k[2 * room->nsources + q]);
	}
	qsort(k, (size_t)n, sizeof(*k), by_first);
	int groups = 0;

	for (int i = 0, j; i < n; i = j) {	/* the groups, into k[0 .. groups) */
		int hi = k[i][1];

		for (j = i + 1; j < n && k[j][0] <= hi + SKETCH_GAP; j++)
			hi = k[j][1] > hi ? k[j][1] : hi;
		k[groups][0] = k[i][0];
		k[groups++][1] = hi;
	}
	for (int g = 0; g < groups && !rc; g++)
		if (g % r->part.size == r->part.rank)
			rc = run_sketch(r, k[g][0], k[g][1], err);
	rc = part_agree(&r->part, rc, err);
	for (int g = 0; g < groups && !rc && r->window && r->part.size > 1; g++) {
		const struct vox_plan *p = &r->grid->plan;
		const size_t layer = (size_t)p->n[0] * p->n[1];
		/* what vox_sketch_fill may write: the fcc lattice moves k0 down a layer */
		const int k0 = k[g][0] - 1 > 0 ? k[g][0] - 1 : 0;
		const int k1 = k[g][1] < p->n[2] - 1 ? k[g][1] : p->n[2] - 1;

		if (k0 <= k1)
			part_max_bytes(&r->part, r->grid->cls + (size_t)k0 * layer,
				       (size_t)(k1 - k0 + 1) * layer);
	}
	free(k);
	return rc;
}

/* A decomposed run's snapshot planes: the room cells of its own layers from each rank. */
static int plane_rooms(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	int *index = malloc((size_t)room->nplanes * sizeof(int) + 1);
	struct snap_plane *pl;

	if (!room->nplanes) {
		free(index);
		return 0;
	}
	if (!index || !(pl = run_make_planes(r, index))) {	/* from the window, then: */
		free(index);
		return rs_fail(err, RS_ENOMEM, "out of memory for the snapshot planes");
	}
	if (!(r->plane_room = calloc((size_t)room->nplanes, sizeof(*r->plane_room)))) {
		run_free_planes(pl, room->nplanes);
		free(index);
		return rs_fail(err, RS_ENOMEM, "out of memory for the snapshot planes");
	}
	for (int i = 0; i < room->nplanes; i++) {	/* in the file's layout */
		r->plane_room[i] = (unsigned char *)pl[i].room;	/* kept; the rest is freed */
		pl[i].room = NULL;
		part_max_bytes(&r->part, r->plane_room[i], (size_t)pl[i].n1 * pl[i].n2);
	}
	run_free_planes(pl, room->nplanes);
	free(index);
	return 0;
}

unsigned char *run_plane_room(const struct run *r, int i, int at)
{
	const struct vox_plan *g = &r->plan.grid;
	const int a = room_grid_axis(g->slab, r->room->planes[i].axis);
	const int u = a == 2 ? 1 : 2, v = a == 0 ? 1 : 0;
	const int n1 = g->room[u], n2 = g->room[v];
	/* decomposed: this rank's own layers of its window */
	const struct vox_grid *w = r->window ? r->window : r->grid;
	const int k0 = r->window ? r->part.own[0] : 0, k1 = r->window ? r->part.own[1] : g->n[2];
	unsigned char *mask = malloc((size_t)n1 * n2);

	if (!mask)
		return NULL;
	for (int b = 0; b < n1; b++)	/* the room cells, as fdtd_plane orders them */
		for (int c = 0; c < n2; c++) {
			int ijk[3];

			ijk[a] = at;
			ijk[u] = b + g->halo;
			ijk[v] = c + g->halo;
			mask[(size_t)b * n2 + c] = ijk[2] >= k0 && ijk[2] <= k1 &&
				w->cls[vox_index(&w->plan, ijk[0], ijk[1], ijk[2] - w->zbase)] != VOX_PAD;
		}
	return mask;
}

/* The grid's time since t0, and the most memory held. */
static void done(struct run *r, double t0)
{
	struct rusage ru;

	r->vox_seconds = app_now() - t0;
	getrusage(RUSAGE_SELF, &ru);
	r->vox_peak = ru.ru_maxrss;
}

#define BALANCE_CELLS 2e7	/* the coarse grid of balance(): about this many cells */
#define BALANCE_NODE 13.0	/* cell updates a band-wall node costs (the hall on four GPUs) */

/*
 * Slabs of equal work (part_balance) for a room of shapes or a mesh, whose layers hold
 * unequal numbers of room cells and of band-wall nodes, which are what a step updates: rank
 * 0 voxelises the room at a coarse spacing (f times the run's, about BALANCE_CELLS cells) and
 * weighs each layer by the coarse layer around it: its room cells (times f^2, the run's cells
 * they stand for), its boundary cells with a band material (times f, BALANCE_NODE each), and
 * a twentieth of a full layer for the columns a kernel passes over. BALANCE_NODE is fitted to
 * each rank's time alone for two cuts of the concert hall (docs/performance.md). A room that
 * the coarse grid cannot make (a mesh that leaks at that spacing) keeps slabs of equal
 * layers; boxes are even, and a voxel file's room is read in slabs of its own.
 */
static int balance(struct run *r, const struct room *room, struct rs_error *err)
{
	const struct vox_plan *p = &r->plan.grid;
	const int L = p->room[2];
	double *w = calloc((size_t)L, sizeof(double));
	int rc;

	if (!w)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	if (r->part.rank == 0) {
		const double cells = (double)p->room[0] * p->room[1] * L;
		const double f = fmax(2, ceil(cbrt(cells / BALANCE_CELLS)));
		struct room *c = malloc(sizeof(*c));
		struct rs_error quiet = { 0 };
		struct vox_grid *g = NULL;

		if (c) {	/* the same room, shared lists and all, at the coarse spacing */
			memcpy(c, room, sizeof(*c));
			c->spacing = room->spacing * f;
			if (c->stencil == ROOM_STENCIL_FCC)	/* the cubic grid's cells */
				c->stencil = ROOM_STENCIL_LEGGY;
			g = vox_build(c, &quiet);
			free(c);
		}
		if (g) {
			const struct vox_plan *q = &g->plan;
			const int Lc = q->room[2];
			const size_t layer = (size_t)q->n[0] * q->n[1];
			double *n = calloc(2 * (size_t)Lc, sizeof(double)), *nb = n + Lc;

			for (int k = 0; n && k < Lc; k++)	/* room cells per coarse layer */
				n[k] = (double)vox_count_nodes(g, k + q->halo, k + q->halo);
			for (size_t x = 0; n && x < g->nwalls; x++) {	/* band-wall nodes */
				const struct vox_wall *wl = &g->walls[x];
				const int k = (int)(wl->cell / layer) - q->halo;
				int band = 0;

				for (int s = 0; s < 6; s++)
					band |= wl->material[s] != VOX_NO_WALL &&
						room_material_banded(&room->materials[wl->material[s]]);
				if (band && k >= 0 && k < Lc)
					nb[k]++;
			}
			for (int k = 0; n && k < L; k++) {
				int kc = (int)((k + 0.5) * Lc / L);

				kc = kc < Lc ? kc : Lc - 1;
				w[k] = f * f * (n[kc] + 0.05 * q->room[0] * q->room[1]) +
				       f * BALANCE_NODE * nb[kc];
			}
			free(n);
			vox_free(g);
		}
	}
	rc = part_balance(&r->part, p, w, err);	/* all zero: equal layers */
	free(w);
	return rc;
}

int run_build_grid(struct run *r, struct rs_error *err)
{
	const double t0 = app_now();
	const struct room *room;
	struct vox_comm comm;
	int rc;

	if (r->plan.grid.slab != 2 && !r->turned) {	/* every rank alike */
		r->turned = room_turned(r->room, r->plan.grid.slab);
		if (part_agree(&r->part, r->turned ? 0 : rs_fail(err, RS_ENOMEM, "out of memory"),
			       err))
			return err->code;
	}
	room = grid_room(r);
	if (r->part.size == 1) {
		rc = (r->grid = vox_build(room, err)) ? measure(r, err) : err->code;
		done(r, t0);
		return rc;
	}
	/* the GPUs' communicator is being made (run.c prepare; decompose waits for it) */
	if ((room->shaped && !room->geo.voxels && !(getenv("ROOMSIM_BALANCE") &&
						      !strcmp(getenv("ROOMSIM_BALANCE"), "0")) &&
	     balance(r, room, err)) ||
	    part_plan(&r->part, &r->plan.grid, room->precision, r->backend == ROOM_BACKEND_CUDA,
		      err))
		return err->code;
	part_vox_comm(&r->part, &comm);
	r->window = vox_build_window(room, r->part.win[0], r->part.win[1], r->part.own[0],
				     r->part.own[1], &comm, err);
	if (!r->window && err->code != RS_EINPUT) {	/* the others may wait on it */
		fprintf(stderr, "roomsim: rank %d: %s\n", r->part.rank, err->msg);
		part_abort(&r->part, app_exit_status(err->code));
	}
	if (part_agree(&r->part, r->window ? 0 : err->code, err))
		return err->code;
	r->grid = vox_sketch(room, err);
	if (part_agree(&r->part, r->grid ? 0 : err->code ? err->code : RS_ENOMEM, err) ||
	    sketch_points(r, err))	/* which agrees on its failures itself */
		return err->code;
	rc = measure(r, err) || plane_rooms(r, err);
	done(r, t0);
	return rc ? err->code : 0;
}
