/*
 * voxel.c - voxelise a box room into air, boundary and padding cells.
 *
 * Room cell m (0-based) along an axis spans [m h, (m + 1) h] and has its node at its centre,
 * (m + 1/2) h. The boundary update of docs/physics.md puts a rigid wall half a cell beyond
 * the outermost nodes, so the walls of the simulated room lie exactly at 0 and N h: a box
 * whose sides are whole multiples of h is simulated at its true size. The fcc scheme puts its
 * walls through the outermost nodes instead (voxel.h, vox_folded).
 */
#include "voxel.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "voxelise.h"

#define ROW_ALIGN 8	/* cells per x-row rounded up to this: rows start on 32-byte boundaries
			 * in float32 (16 in float64), so GPU kernels can load 16 bytes at once */

/* Cells (i, j, k) with i + j + k even in the box lo + [0, n0) x [0, n1) x [0, n2). */
static size_t even_cells(int lo, const int n[3])
{
	size_t count = 0;

	if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0)
		return 0;
	for (int k = lo; k < lo + n[2]; k++)
		for (int j = lo; j < lo + n[1]; j++)	/* i = lo, lo + 1, ...: one in two */
			count += (size_t)(n[0] + ((lo + j + k) % 2 == 0)) / 2;
	return count;
}

void vox_plan(const struct room *room, struct vox_plan *p)
{
	vox_plan_turned(room, room->turned ? room->turned - 1 : 2, p);
}

double vox_fit_residual(const double box[3], double h)
{
	double worst = 0;

	for (int d = 0; d < 3; d++) {
		const double n = box[d] / h;

		worst = fmax(worst, fabs(n - fmax(2, round(n))));
	}
	return worst;
}

/* Spacings tried between h and VOX_FIT_LEAST h, evenly in 1/h (so in the cells of a side). */
#define FIT_TRIES 20000

double vox_fit_spacing(const double box[3], double h, double *worst)
{
	double best = h, least = vox_fit_residual(box, h);

	for (int i = 1; i <= FIT_TRIES; i++) {
		const double inv = (1 + i * (1 / VOX_FIT_LEAST - 1) / FIT_TRIES) / h;
		const double r = vox_fit_residual(box, 1 / inv);

		if (r < least) {
			least = r;
			best = 1 / inv;
		} else if (least <= VOX_FIT_TOL && r > least) {
			break;	/* past the bottom of the first spacings within the tolerance */
		}
	}
	if (worst)
		*worst = least;
	return best;
}

void vox_plan_turned(const struct room *room, int slab, struct vox_plan *p)
{
	size_t nonpad = 1, inner = 1;
	double box[3];
	int in[3];

	memset(p, 0, sizeof(*p));
	p->slab = slab;
	for (int d = 0; d < 3; d++)	/* a turned room's box is turned already */
		box[d] = room->turned ? room->box[d] : room->box[room_axis_of(slab, d)];
	p->h = room->spacing;
	p->cells = 1;
	p->halo = room_stencil_reach(room);	/* padding cells each side: the stencil's reach */
	p->fcc = room->stencil == ROOM_STENCIL_FCC;
	if (p->fcc && room->fitted)	/* the nodes just outside hold cut cells (their dual
					 * cells reach in), whose links reach one further */
		p->halo = 2;
	p->on_nodes = p->fcc && !room->shaped;
	for (int d = 0; d < 3; d++) {
		const int align = p->fcc ? 2 * ROW_ALIGN : ROW_ALIGN;

		/* a shaped room's bounds are covered whole: cells beyond them are padding; so
		 * are a box's with fitted walls, whose cut cells then end it where it ends */
		p->room[d] = room->shaped || (room->fitted && !p->fcc)
				     ? (int)ceil(box[d] / room->spacing - 1e-9)
				     : (int)lround(box[d] / room->spacing) + p->on_nodes;
		if (p->room[d] < 2 + p->on_nodes)
			p->room[d] = 2 + p->on_nodes;
		p->n[d] = p->room[d] + 2 * p->halo;
		if (d == 0)	/* the extra cells at the +x end are padding */
			p->n[d] = (p->n[d] + align - 1) / align * align;
		p->size[d] = (p->room[d] - p->on_nodes) * p->h;
		p->cells *= (size_t)p->n[d];
		nonpad *= (size_t)p->room[d];
		in[d] = p->room[d] - 2;
		inner *= (size_t)in[d];
	}
	if (p->fcc) {	/* count the lattice's nodes, half the cells of the array (n[0] even) */
		nonpad = even_cells(p->halo, p->room);
		inner = even_cells(p->halo + 1, in);
	}
	p->air = inner;
	p->boundary = nonpad - inner;
	p->padding = vox_nodes(p) - nonpad;
}

static int is_room(const struct vox_plan *p, int i, int j, int k)
{
	const int h = p->halo;

	return i >= h && i < p->room[0] + h && j >= h && j < p->room[1] + h && k >= h &&
	       k < p->room[2] + h;
}

/* The face a missing neighbour in direction (axis, side) lies behind. */
static int face_of(int axis, int side)
{
	static const int faces[3][2] = { { ROOM_X0, ROOM_X1 }, { ROOM_Y0, ROOM_Y1 },
					 { ROOM_FLOOR, ROOM_CEILING } };
	return faces[axis][side];
}

/*
 * The walls of every non-padding cell of g's own layers from its padding neighbours (those of
 * the layers beside them are read too): a missing neighbour outside the box is behind that
 * face's material, one inside the box (a carved obstacle) behind material `inner`. Aligned
 * with the grid, every wall has area correction 1. wp is the whole grid's plan.
 */
static int box_walls(struct vox_grid *g, const struct vox_plan *wp, const struct room *room,
		     int inner, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	const int n = p->room[2];
	size_t *at = calloc((size_t)n + 1, sizeof(*at));

	free(g->walls);
	g->walls = NULL;
	g->nwalls = 0;
	if (!at)
		return rs_fail(err, RS_ENOMEM, "out of memory for the boundary cells");
	/* each layer's walls counted, then written at their place in cell order */
	for (int pass = 0; pass < 2; pass++) {
#pragma omp parallel for schedule(dynamic, 1)
		for (int q = 0; q < n; q++) {
			const int k = p->halo + q;
			size_t count = 0;

			for (int j = 0; j < p->n[1]; j++)
				for (int i = 0; i < p->n[0]; i++) {
					const size_t c = vox_index(p, i, j, k);
					struct vox_wall w = { .cell = c };
					int walls = 0;

					if (g->cls[c] == VOX_PAD)
						continue;
					for (int f = 0; f < 6; f++) {
						const int a = f / 2, o = f % 2 ? 1 : -1;
						const int e[3] = { i + o * (a == 0), j + o * (a == 1),
								   k + o * (a == 2) };

						w.material[f] = VOX_NO_WALL;
						if (g->cls[vox_index(p, e[0], e[1], e[2])] != VOX_PAD)
							continue;
						w.material[f] = (uint8_t)(is_room(wp, e[0], e[1],
									 e[2] + g->zbase)
							? inner : room->face_material[face_of(a, f % 2)]);
						w.area[f] = 1;
						walls++;
					}
					if (walls && pass)
						g->walls[at[q] + count] = w;
					count += walls > 0;
				}
			if (!pass)
				at[q + 1] = count;
		}
		if (pass)
			break;
		for (int q = 0; q < n; q++)
			at[q + 1] += at[q];
		if (!(g->walls = malloc((at[n] + 1) * sizeof(*g->walls)))) {
			free(at);
			return rs_fail(err, RS_ENOMEM, "out of memory for the boundary cells");
		}
	}
	g->nwalls = at[n];
	free(at);
	return 0;
}

/* Open-addressing table of the kinds of vox_set_kinds: (K, beta_sum) to a kind index. */
#define KIND_SLOTS 1024	/* a power of two, well above VOX_MAX_KINDS */

static uint64_t kind_hash(int K, double b)
{
	uint64_t x;

	memcpy(&x, &b, sizeof(x));
	x ^= (uint64_t)K * 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 32);
}

/* beta_sum rounded to a relative step q (0: kept). */
static double quantise(double b, double q)
{
	return q > 0 && b > 0 ? exp(q * round(log(b) / q)) : b;
}

/*
 * Whether a cell's sum of its six neighbours, ((x- + x+) + (y- + y+)) + (z- + z+) with its
 * missing ones read as 0, can round twice for a uniform field: when the x and y pairs hold
 * three values (2u + u rounds) and the z pair at least one more (and rounds again).
 */
static int kind_diff(const struct vox_wall *wl)
{
	int present[3] = { 0, 0, 0 };

	for (int f = 0; f < 6; f++)
		present[f / 2] += wl->material[f] == VOX_NO_WALL;
	return present[0] + present[1] == 3 && present[2] >= 1;
}

/* A kind as the walls give it, before it has an index. */
struct kind_key {
	double beta;
	int K, diff;
};

/* One rank's kinds, each diff in the order of its first cell; full: more than fit a table. */
struct kind_list {
	int n[2], full;
	double error;		/* the largest relative rounding of its admittance sums */
	struct kind_key key[2][VOX_MAX_KINDS];
};

/* The slot of key k in an open-addressing table of keys `at`, or the empty slot for it. */
static int kind_slot(const int *slot, const struct kind_key *at, const struct kind_key *k)
{
	int s = (int)(kind_hash(k->K + 8 * k->diff, k->beta) & (KIND_SLOTS - 1));

	for (; slot[s] >= 0; s = (s + 1) & (KIND_SLOTS - 1)) {
		const struct kind_key *o = &at[slot[s]];

		if (o->K == k->K && o->beta == k->beta && o->diff == k->diff)
			break;
	}
	return s;
}

/* Add k to l unless there; seen[] is l's table (indices 256 * diff + entry). */
static void list_add(struct kind_list *l, int *seen, struct kind_key *flat, const struct kind_key *k)
{
	const int s = kind_slot(seen, flat, k);

	if (seen[s] >= 0 || l->full)
		return;
	if (l->n[k->diff] == VOX_MAX_KINDS - 2) {	/* with padding and air, too many */
		l->full = 1;
		return;
	}
	l->key[k->diff][l->n[k->diff]] = *k;
	flat[VOX_MAX_KINDS * k->diff + l->n[k->diff]] = *k;
	seen[s] = VOX_MAX_KINDS * k->diff + l->n[k->diff]++;
}

/*
 * g's table of kinds from every rank's list: padding, air, then each diff's kinds in rank
 * order, each new one once, so in the order of their first cells in the whole grid (each
 * rank's slab follows the one before). slot[] maps keys to their indices. -1 when they do not
 * fit the class byte.
 */
static int merge_kinds(struct vox_grid *g, const struct vox_span *sp, const struct kind_list *mine,
		       int *slot)
{
	struct kind_list *all = malloc((size_t)sp->comm->size * sizeof(*all));
	struct kind_key keys[VOX_MAX_KINDS];
	int full = 0;

	if (!all)
		return -2;
	sp->comm->gather(sp->comm->ctx, mine, sizeof(*mine), all);
	for (int q = 0; q < KIND_SLOTS; q++)
		slot[q] = -1;
	g->nkinds = 2;
	g->kind_error = 0;
	for (int r = 0; r < sp->comm->size; r++) {
		full |= all[r].full;
		g->kind_error = fmax(g->kind_error, all[r].error);
	}
	for (int diff = 0; diff < 2 && !full; diff++) {
		g->first_diff = g->nkinds;
		for (int r = 0; r < sp->comm->size && !full; r++)
			for (int e = 0; e < all[r].n[diff] && !full; e++) {
				const struct kind_key *k = &all[r].key[diff][e];
				const int q = kind_slot(slot, keys, k);

				if (slot[q] >= 0)
					continue;
				if (g->nkinds == VOX_MAX_KINDS) {
					full = 1;
					break;
				}
				keys[g->nkinds] = *k;
				g->kinds[g->nkinds] = (struct vox_kind){ k->K, k->beta, k->diff };
				slot[q] = g->nkinds++;
			}
	}
	free(all);
	return full ? -1 : 0;
}

/* The kind of wall wl with admittance sums rounded to step q, and its rounding. */
static struct kind_key wall_kind(const struct vox_grid *g, const struct room *room,
				 const struct vox_wall *wl, double q, double *error)
{
	struct kind_key k = { 0, 6, g->plan.fcc ? 0 : kind_diff(wl) };
	double b = 0;

	for (int f = 0; f < 6; f++)
		if (wl->material[f] != VOX_NO_WALL) {
			b += room->materials[wl->material[f]].beta * wl->area[f];
			k.K--;
		}
	if (g->plan.fcc)	/* a carved room's node: its links left */
		k.K = wl->links;
	k.beta = quantise(b, q);
	*error = b > 0 ? fabs(k.beta - b) / b : 0;
	return k;
}

/* The cells of g in this rank's slab of span s: [*lo, *hi). */
static void own_cells(const struct vox_grid *g, const struct vox_span *s, size_t *lo, size_t *hi)
{
	const size_t layer = (size_t)g->plan.n[0] * g->plan.n[1];

	*lo = (size_t)(s->own0 - g->zbase) * layer;
	*hi = (size_t)(s->own1 - g->zbase + 1) * layer;
}

/*
 * Give every wall's cell its kind with admittance sums rounded to step q, the kinds with diff
 * = 0 first; -1 if they overflow (-2: out of memory).
 */
static int assign_kinds(struct vox_grid *g, const struct room *room, const struct vox_span *s,
			double q)
{
	const int T = omp_get_max_threads();
	struct kind_list *mine = calloc((size_t)T + 1, sizeof(*mine));
	struct kind_key *flat = malloc(2 * VOX_MAX_KINDS * sizeof(*flat)), keys[VOX_MAX_KINDS];
	int seen[KIND_SLOTS], slot[KIND_SLOTS], rc, stray = 0;
	double error = 0;
	size_t lo, hi;

	if (!mine || !flat) {
		free(mine);
		free(flat);
		return -2;
	}
	own_cells(g, s, &lo, &hi);
	/* this rank's kinds, in the order of its cells: each thread lists those of its run of
	 * walls (mine[1 + t]), and the lists are joined in the runs' order */
#pragma omp parallel num_threads(T) reduction(max : error)
	{
		const int t = omp_get_thread_num(), nt = omp_get_num_threads();
		const size_t w0 = g->nwalls * (size_t)t / (size_t)nt;
		const size_t w1 = g->nwalls * (size_t)(t + 1) / (size_t)nt;
		struct kind_key own[2 * VOX_MAX_KINDS];
		int tseen[KIND_SLOTS];

		for (int e = 0; e < KIND_SLOTS; e++)
			tseen[e] = -1;
		for (size_t w = w0; w < w1; w++) {
			double err;
			struct kind_key k;

			if (g->walls[w].cell < lo || g->walls[w].cell >= hi)
				continue;
			k = wall_kind(g, room, &g->walls[w], q, &err);
			error = fmax(error, err);
			list_add(&mine[1 + t], tseen, own, &k);
		}
	}
	for (int e = 0; e < KIND_SLOTS; e++)
		seen[e] = -1;
	mine->error = error;
	for (int diff = 0; diff < 2; diff++)
		for (int t = 0; t < T; t++) {
			mine->full |= mine[1 + t].full;
			for (int e = 0; e < mine[1 + t].n[diff]; e++)
				list_add(mine, seen, flat, &mine[1 + t].key[diff][e]);
		}
	rc = merge_kinds(g, s, mine, slot);
	for (int t = 2; t < g->nkinds && !rc; t++)
		keys[t] = (struct kind_key){ g->kinds[t].beta_sum, g->kinds[t].K, g->kinds[t].diff };
	if (!rc) {
#pragma omp parallel for schedule(static) num_threads(T) reduction(| : stray)
		for (size_t w = 0; w < g->nwalls; w++) {
			double err;
			const struct kind_key k = wall_kind(g, room, &g->walls[w], q, &err);
			const int e = slot[kind_slot(slot, keys, &k)];

			if (e < 0)	/* a wall no rank's slab holds: not a valid span */
				stray = 1;
			else
				g->cls[g->walls[w].cell] = (uint8_t)e;
		}
		rc = stray ? -3 : 0;
	}
	free(mine);
	free(flat);
	return rc;
}

/* Relative steps tried for the admittance sums, exact first (docs/physics.md, "Kinds"). */
static const double kind_steps[] = { 0, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1 };

int vox_set_kinds(struct vox_grid *g, const struct room *room, const struct vox_span *s,
		  struct rs_error *err)
{
	for (size_t q = 0; q < sizeof(kind_steps) / sizeof(kind_steps[0]); q++) {
		const int rc = assign_kinds(g, room, s, kind_steps[q]);

		if (!rc)
			return 0;
		if (rc == -2)
			return rs_fail(err, RS_ENOMEM, "out of memory for the boundary kinds");
		if (rc == -3)
			return rs_fail(err, RS_EINTERNAL, "a window's wall lies in no rank's slab");
	}
	return rs_fail(err, RS_EINTERNAL, "the boundary cells need more than %d kinds even with "
		       "admittance sums rounded to a factor e", VOX_MAX_KINDS);
}

/* The walls the fcc box grid's cell at (i, j, k) of the whole grid lies on, into w; their
 * number, and the sum of their admittances in *beta. */
static int box_node_walls(const struct vox_plan *wp, const struct room *room, const int at[3],
			  struct vox_wall *w, double *beta)
{
	int walls = 0;

	*beta = 0;
	memset(w->material, VOX_NO_WALL, sizeof(w->material));
	for (int a = 0; a < 3; a++)
		for (int s = 0; s < 2; s++)
			if (at[a] == wp->halo + s * (wp->room[a] - 1)) {
				const int m = room->face_material[face_of(a, s)];

				*beta += room->materials[m].beta;
				w->material[2 * a + s] = (uint8_t)m;
				w->area[2 * a + s] = 1;
				walls++;
			}
	return walls;
}

/*
 * The fcc grid's kinds: a room cell on a wall takes the sum of the admittances of the walls
 * it lies on (an edge two, a corner three; docs/physics.md, "FCC walls"), the others are air.
 * Each node on a wall (i + j + k even) is listed in g->walls with the materials of the walls
 * it lies on, area 1 each (the frequency-dependent walls of solver/branch.h read them). The
 * kinds are numbered in the order of their first cells in the whole grid, agreed over s.
 */
static int classify_nodes(struct vox_grid *g, const struct vox_plan *wp, const struct room *room,
			  const struct vox_span *sp, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	struct kind_list *mine = calloc(1, sizeof(*mine));
	struct kind_key *flat = malloc(2 * VOX_MAX_KINDS * sizeof(*flat)), keys[VOX_MAX_KINDS];
	int seen[KIND_SLOTS], slot[KIND_SLOTS], rc = 0;
	size_t cap = 0, lo, hi;

	free(g->walls);
	g->walls = NULL;
	g->nwalls = 0;
	if (!mine || !flat) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the boundary kinds");
		goto out;
	}
	for (int e = 0; e < KIND_SLOTS; e++)
		seen[e] = -1;
	own_cells(g, sp, &lo, &hi);
	for (int pass = 0; pass < 2 && !rc; pass++) {
		if (pass) {	/* the table of every rank's kinds */
			const int m = merge_kinds(g, sp, mine, slot);

			if (m == -2)
				rc = rs_fail(err, RS_ENOMEM, "out of memory for the boundary kinds");
			else if (m)
				rc = rs_fail(err, RS_EINTERNAL, "more than %d boundary kinds",
					     VOX_MAX_KINDS);
			for (int t = 2; t < g->nkinds; t++)
				keys[t] = (struct kind_key){ g->kinds[t].beta_sum, 12, 0 };
		}
		/* every cell air first; the walls' cells take their kinds below */
		if (pass && !rc) {
#pragma omp parallel for schedule(static)
			for (int k = 0; k < p->n[2]; k++)
				for (size_t c = vox_index(p, 0, 0, k); c < vox_index(p, 0, 0, k + 1); c++)
					if (g->cls[c] != VOX_PAD)
						g->cls[c] = VOX_AIR;
		}
		for (int k = 0; k < p->n[2] && !rc; k++)
			for (int j = 0; j < p->n[1] && !rc; j++) {
				/* a row off the walls of y and z meets those of x alone */
				const int whole = j == wp->halo || j == wp->halo + wp->room[1] - 1 ||
						  k + g->zbase == wp->halo ||
						  k + g->zbase == wp->halo + wp->room[2] - 1;
				const int first = whole ? 0 : wp->halo,
					  last = whole ? p->n[0] - 1 : wp->halo + wp->room[0] - 1,
					  step = whole || wp->room[0] < 2 ? 1 : wp->room[0] - 1;

				for (int i = first; i <= last && i < p->n[0]; i += step) {
					const int at[3] = { i, j, k + g->zbase };
					struct vox_wall w = { .cell = vox_index(p, i, j, k) };
					struct kind_key key = { 0, 12, 0 };
					int walls;

					if (g->cls[w.cell] == VOX_PAD || (!pass && (w.cell < lo || w.cell >= hi)))
						continue;
					walls = box_node_walls(wp, room, at, &w, &key.beta);
					if (!pass) {
						if (walls)
							list_add(mine, seen, flat, &key);
						continue;
					}
					if (walls)
						g->cls[w.cell] = (uint8_t)slot[kind_slot(slot, keys, &key)];
					if (!walls || (i + j + k) % 2)
						continue;
					if (g->nwalls == cap) {
						struct vox_wall *grown;

						cap = cap ? 2 * cap : 4096;
						if (!(grown = realloc(g->walls, cap * sizeof(*grown)))) {
							rc = rs_fail(err, RS_ENOMEM, "out of memory for "
								     "the walls");
							break;
						}
						g->walls = grown;
					}
					g->walls[g->nwalls++] = w;
				}
			}
	}
	g->first_diff = VOX_MAX_KINDS;	/* no kind's sum rounds twice on this lattice */
out:
	free(mine);
	free(flat);
	return rc;
}

/* Cells of the box room are non-padding (any kind but VOX_PAD), the halo is padding: in g's
 * own layers and `beside` more each side. */
static void fill_box(struct vox_grid *g, const struct vox_plan *wp, int beside)
{
	const struct vox_plan *p = &g->plan;

#pragma omp parallel for schedule(static)
	for (int k = 0; k < p->n[2]; k++) {
		const int own = k >= p->halo - beside && k < p->halo + p->room[2] + beside;

		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++)
				g->cls[vox_index(p, i, j, k)] =
					own && is_room(wp, i, j, k + g->zbase) ? VOX_AIR : VOX_PAD;
	}
}

/* Turn the layers of g beside its own into padding (they were built for their neighbours). */
void vox_pad_beside(struct vox_grid *g)
{
	const struct vox_plan *p = &g->plan;
	const size_t layer = (size_t)p->n[0] * p->n[1];

	memset(g->cls, VOX_PAD, (size_t)p->halo * layer);
	memset(g->cls + (size_t)(p->halo + p->room[2]) * layer, VOX_PAD, (size_t)p->halo * layer);
}

/* Recount air, boundary and padding cells after the grid changed. */
void vox_count_cells(struct vox_grid *g)
{
	struct vox_plan *p = &g->plan;
	const long long cells = (long long)p->cells;
	size_t air = 0, boundary = 0, padding = 0;

#pragma omp parallel for schedule(static) reduction(+ : air, boundary, padding)
	for (long long n = 0; n < cells; n++) {
		if (g->cls[n] == VOX_PAD)
			padding++;
		else if (g->cls[n] == VOX_AIR)
			air++;
		else
			boundary++;
	}
	p->air = air;
	p->boundary = boundary;
	p->padding = padding;
}

/* Per-column first and last non-padding k (seed 003 section 4.3.3); rows on the threads,
 * each layer's row read in memory order. */
void vox_column_heights(struct vox_grid *g)
{
	const struct vox_plan *p = &g->plan;

#pragma omp parallel for schedule(static)
	for (int j = 0; j < p->n[1]; j++) {
		int32_t *lo = &g->kstart[(size_t)p->n[0] * j], *hi = &g->kstop[(size_t)p->n[0] * j];

		for (int i = 0; i < p->n[0]; i++) {
			lo[i] = p->n[2];
			hi[i] = -1;
		}
		for (int k = 0; k < p->n[2]; k++) {
			const uint8_t *row = &g->cls[vox_index(p, 0, j, k)];

			for (int i = 0; i < p->n[0]; i++)
				if (row[i] != VOX_PAD) {
					lo[i] = lo[i] < k ? lo[i] : k;
					hi[i] = k;
				}
		}
	}
}

/* One process's collectives: its own values are every rank's. */
static void solo_reduce(void *ctx, double *v, int n, int max)
{
	(void)ctx, (void)v, (void)n, (void)max;
}

static void solo_gather(void *ctx, const void *mine, size_t bytes, void *all)
{
	(void)ctx;
	memcpy(all, mine, bytes);
}

static void solo_swap(void *ctx, const void *below, const void *above, void *from_below,
		      void *from_above, size_t bytes)
{
	(void)ctx, (void)below, (void)above, (void)from_below, (void)from_above, (void)bytes;
}

static const struct vox_comm solo = { 0, 1, NULL, solo_reduce, solo_gather, solo_swap };

void vox_span_whole(const struct vox_plan *p, struct vox_span *s)
{
	s->w0 = s->own0 = p->halo;
	s->w1 = s->own1 = p->halo + p->room[2] - 1;
	s->comm = &solo;
	s->probe = 0;
}

struct vox_grid *vox_alloc(const struct room *room, int w0, int w1, struct rs_error *err)
{
	struct vox_grid *g = calloc(1, sizeof(*g));
	struct vox_plan *p;
	size_t columns;

	if (!g)
		goto out_nomem;
	p = &g->plan;
	vox_plan(room, p);
	if (w0 < p->halo || w1 > p->halo + p->room[2] - 1 || w1 < w0 ||
	    (p->fcc && (w0 - p->halo) % 2)) {
		rs_fail(err, RS_EINTERNAL, "no window of layers %d to %d in a grid of %d", w0, w1,
			p->n[2]);
		free(g);
		return NULL;
	}
	if (w0 > p->halo || w1 < p->halo + p->room[2] - 1) {	/* a window, as vox_window cuts */
		p->room[2] = w1 - w0 + 1;
		p->n[2] = p->room[2] + 2 * p->halo;
		p->size[2] = (p->on_nodes ? p->room[2] - 1 : p->room[2]) * p->h;
		p->cells = (size_t)p->n[0] * p->n[1] * (size_t)p->n[2];
		g->zbase = w0 - p->halo;
	}
	columns = (size_t)p->n[0] * (size_t)p->n[1];
	_Static_assert(VOX_PAD == 0, "a zeroed grid is padding");
	/* zeroed (VOX_PAD) by the kernel's fresh pages: no pass of one thread over the grid,
	 * and each page is first touched by the thread that builds its cells */
	g->cls = calloc(p->cells, 1);
	g->kstart = malloc(columns * sizeof(*g->kstart));
	g->kstop = malloc(columns * sizeof(*g->kstop));
	if (!g->cls || !g->kstart || !g->kstop)
		goto out_nomem;
	for (int d = 0; d < 3; d++)	/* the first room node: at h / 2, or on the wall */
		g->origin[d] = room->origin[d] + ((p->on_nodes ? 0 : 0.5) - p->halo) * p->h;
	g->kinds[VOX_PAD] = (struct vox_kind){ 0, 0, 0 };
	g->kinds[VOX_AIR] = (struct vox_kind){ p->fcc ? 12 : 6, 0, 0 };
	g->nkinds = 2;
	g->first_diff = VOX_MAX_KINDS;
	return g;

out_nomem:
	rs_fail(err, RS_ENOMEM, "out of memory for the voxel grid (%zu cells)", g ? g->plan.cells : 0);
	vox_free(g);
	return NULL;
}

/* The window s of a box room. */
static struct vox_grid *build_box(const struct room *room, const struct vox_span *s,
				  struct rs_error *err)
{
	struct vox_grid *g = vox_alloc(room, s->w0, s->w1, err);
	struct vox_plan wp;

	if (!g)
		return NULL;
	vox_plan(room, &wp);
	fill_box(g, &wp, !wp.fcc && !s->probe);	/* the cubic walls read the layers beside */
	if (s->probe) {
		vox_column_heights(g);
		return g;
	}
	if (wp.fcc ? classify_nodes(g, &wp, room, s, err)
		   : box_walls(g, &wp, room, -1, err) || (vox_pad_beside(g), 0) ||
		     vox_set_kinds(g, room, s, err)) {
		vox_free(g);
		return NULL;
	}
	if (room->fitted && !wp.fcc) {	/* a box whose sides are not whole cells */
		struct build b = { .room = room, .g = g, .whole = wp };

		if (vx_cut_cells(&b, err)) {
			vox_free(g);
			return NULL;
		}
	}
	vox_column_heights(g);
	return g;
}

/* The window of span s (a whole grid keeps its plan's counts). */
static struct vox_grid *build_span(const struct room *room, const struct vox_span *s,
				   struct rs_error *err)
{
	return room->shaped ? vox_build_shaped(room, s, err) : build_box(room, s, err);
}

struct vox_grid *vox_build(const struct room *room, struct rs_error *err)
{
	struct vox_plan p;
	struct vox_span s;

	vox_plan(room, &p);
	vox_span_whole(&p, &s);
	return build_span(room, &s, err);
}

struct vox_grid *vox_build_window(const struct room *room, int w0, int w1, int own0, int own1,
				  const struct vox_comm *comm, struct rs_error *err)
{
	struct vox_plan p;
	struct vox_span s;
	struct vox_grid *g;

	vox_plan(room, &p);
	s.w0 = w0;
	s.w1 = w1;
	s.own0 = comm ? own0 : w0;
	s.own1 = comm ? own1 : w1;
	s.comm = comm ? comm : &solo;
	s.probe = comm == NULL;
	if (s.own0 < w0 || s.own1 > w1 || s.own1 < s.own0 ||
	    (s.comm->rank > 0 && s.own0 - 1 < w0) ||
	    (s.comm->rank < s.comm->size - 1 && s.own1 + 1 > w1)) {
		rs_fail(err, RS_EINTERNAL, "rank %d's slab %d..%d and the layers beside it do not "
			"lie in its window %d..%d", s.comm->rank, own0, own1, w0, w1);
		return NULL;
	}
	if (!(g = build_span(room, &s, err)))
		return NULL;
	vox_count_cells(g);	/* as vox_window counts */
	return g;
}

int vox_carve(struct vox_grid *g, const struct room *room, const double lo[3],
	      const double hi[3], int material, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	struct vox_span span;

	if (p->fcc)
		return rs_fail(err, RS_EINPUT, "the fcc scheme's box grid has its walls through its "
			       "nodes and cannot be carved: give the room as shapes (docs/input.md)");
	if (p->slab != 2)
		return rs_fail(err, RS_EINPUT, "vox_carve: a grid in the room's own frame");
	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++) {
				const int ijk[3] = { i, j, k };
				int inside = 1;

				for (int d = 0; d < 3; d++) {
					double x = g->origin[d] + ijk[d] * p->h;

					inside &= x >= lo[d] && x <= hi[d];
				}
				if (inside)
					g->cls[vox_index(p, i, j, k)] = VOX_PAD;
			}
	g->carved = 1;
	/* Kinds are recomputed from scratch; the table restarts with padding and air. */
	for (size_t n = 0; n < p->cells; n++)
		if (g->cls[n] != VOX_PAD)
			g->cls[n] = VOX_AIR;
	vox_span_whole(p, &span);
	if (box_walls(g, p, room, material, err) || vox_set_kinds(g, room, &span, err))
		return err ? err->code : RS_EINTERNAL;
	vox_column_heights(g);
	vox_count_cells(g);
	return 0;
}

struct vox_grid *vox_window(const struct vox_grid *g, int w0, int w1, struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	const size_t slab = (size_t)p->n[0] * p->n[1];
	struct vox_grid *w;
	size_t nw = 0, first;

	if (w0 < p->halo || w1 > p->halo + p->room[2] - 1 || w1 < w0 ||
	    (p->fcc && (w0 - p->halo) % 2)) {
		rs_fail(err, RS_EINTERNAL, "no window of layers %d to %d in a grid of %d", w0, w1,
			p->n[2]);
		return NULL;
	}
	if (g->cut)
		return rs_fail(err, RS_EINPUT, "grid.walls: fitted runs in one process so far: run "
			       "it without ranks"), NULL;
	if (!(w = calloc(1, sizeof(*w))))
		goto out_nomem;
	*w = *g;	/* kinds, flags; the arrays below are its own */
	w->cls = NULL;
	w->kstart = w->kstop = NULL;
	w->walls = NULL;
	w->nwalls = 0;
	w->plan.room[2] = w1 - w0 + 1;
	w->plan.n[2] = w->plan.room[2] + 2 * p->halo;
	w->plan.size[2] = (p->on_nodes ? w->plan.room[2] - 1 : w->plan.room[2]) * p->h;
	w->plan.cells = slab * (size_t)w->plan.n[2];
	w->zbase = g->zbase + (w0 - p->halo);
	first = (size_t)(w0 - p->halo) * slab;	/* the global cell of local cell 0 */
	w->cls = calloc(w->plan.cells, 1);	/* VOX_PAD */
	w->kstart = malloc(slab * sizeof(*w->kstart));
	w->kstop = malloc(slab * sizeof(*w->kstop));
	if (!w->cls || !w->kstart || !w->kstop)
		goto out_nomem;
	memcpy(w->cls + (size_t)p->halo * slab, g->cls + (size_t)w0 * slab,
	       (size_t)w->plan.room[2] * slab);
	for (size_t q = 0; q < g->nwalls; q++)
		nw += g->walls[q].cell / slab >= (size_t)w0 && g->walls[q].cell / slab <= (size_t)w1;
	if (nw && !(w->walls = malloc(nw * sizeof(*w->walls))))
		goto out_nomem;
	for (size_t q = 0; q < g->nwalls; q++)
		if (g->walls[q].cell / slab >= (size_t)w0 && g->walls[q].cell / slab <= (size_t)w1) {
			w->walls[w->nwalls] = g->walls[q];
			w->walls[w->nwalls++].cell -= first;
		}
	vox_column_heights(w);
	vox_count_cells(w);
	return w;

out_nomem:
	rs_fail(err, RS_ENOMEM, "out of memory for a window of %d layers of the voxel grid",
		w1 - w0 + 1);
	vox_free(w);
	return NULL;
}

struct vox_grid *vox_sketch(const struct room *room, struct rs_error *err)
{
	struct vox_grid *g = calloc(1, sizeof(*g));
	struct vox_plan *p;

	if (!g)
		goto out_nomem;
	p = &g->plan;
	vox_plan(room, p);
	g->cls = calloc(p->cells, 1);	/* VOX_PAD; untouched pages cost nothing */
	g->kstart = calloc((size_t)p->n[0] * p->n[1], sizeof(*g->kstart));
	g->kstop = calloc((size_t)p->n[0] * p->n[1], sizeof(*g->kstop));
	if (!g->cls || !g->kstart || !g->kstop)
		goto out_nomem;
	for (int d = 0; d < 3; d++)	/* as vox_alloc */
		g->origin[d] = room->origin[d] + ((p->on_nodes ? 0 : 0.5) - p->halo) * p->h;
	g->kinds[VOX_PAD] = (struct vox_kind){ 0, 0, 0 };
	g->kinds[VOX_AIR] = (struct vox_kind){ p->fcc ? 12 : 6, 0, 0 };
	g->nkinds = 2;
	g->first_diff = VOX_MAX_KINDS;
	g->carved = room->shaped;
	return g;

out_nomem:
	rs_fail(err, RS_ENOMEM, "out of memory for a sketch of the voxel grid");
	vox_free(g);
	return NULL;
}

int vox_sketch_fill(struct vox_grid *s, const struct room *room, int k0, int k1,
		    struct rs_error *err)
{
	const struct vox_plan *p = &s->plan;
	const size_t layer = (size_t)p->n[0] * p->n[1];
	struct vox_grid *w;

	k0 = k0 < p->halo ? p->halo : k0;
	k1 = k1 > p->halo + p->room[2] - 1 ? p->halo + p->room[2] - 1 : k1;
	if (p->fcc && (k0 - p->halo) % 2)	/* a node keeps its parity */
		k0--;
	if (k1 < k0)
		return 0;
	if (!(w = vox_build_window(room, k0, k1, 0, 0, NULL, err)))
		return err ? err->code : RS_EINTERNAL;
	memcpy(s->cls + (size_t)k0 * layer, w->cls + (size_t)p->halo * layer,
	       (size_t)(k1 - k0 + 1) * layer);
	vox_free(w);
	return 0;
}

void vox_free(struct vox_grid *g)
{
	if (!g)
		return;
	free(g->cls);
	free(g->kstart);
	free(g->kstop);
	free(g->walls);
	vox_cut_free(g->cut);
	free(g);
}

/*
 * vox_point on the fcc lattice, pos in the grid's frame: piecewise linear over the lattice's
 * own cells, its tetrahedra and octahedra. The lattice's nodes are the cubic grid's even
 * points (i + j + k even); in the unit cube around pos the four even corners span a regular
 * tetrahedron, and what lies outside it is the corner of an octahedron centred on an odd
 * corner o, whose six vertices o +- e_d are nodes. In the tetrahedron: its barycentric
 * weights, 1 - |pos - e|_1 / 2 for each even corner e. In the octahedron, d = pos - o with
 * |d|_1 < 1: vertex o + s e_d weighs max(s d_d, 0) + (1 - |d|_1) / 6. Both are exact for
 * linear fields, non-negative and agree on the faces they share, and they reach no node
 * farther than 2 h from pos (the primitive cell's parallelepiped reached 3.5 h, which
 * low-passed a point's response: -3 dB at fmax at 7.7 points per wavelength).
 */
static int vox_point_fcc(const struct vox_grid *g, const double pos[3], int node[8][3],
			 double w[8], double *distance)
{
	const struct vox_plan *p = &g->plan;
	double x[3], f[3], out = 0;
	int b[3], o[3] = { -1, -1, -1 }, n = 0, padded = 0;

	for (int d = 0; d < 3; d++) {	/* in the whole grid's layers (zbase) */
		x[d] = (pos[d] - g->origin[d]) / p->h;
		b[d] = (int)floor(x[d]);
		f[d] = x[d] - b[d];
	}
	for (int q = 0; q < 8 && o[0] < 0; q++) {	/* an odd corner within 1 (L1) */
		const int c[3] = { q & 1, q >> 1 & 1, q >> 2 & 1 };

		if (((b[0] + b[1] + b[2] + c[0] + c[1] + c[2]) & 1) &&
		    fabs(f[0] - c[0]) + fabs(f[1] - c[1]) + fabs(f[2] - c[2]) < 1)
			for (int d = 0; d < 3; d++)
				o[d] = c[d];
	}
	if (o[0] < 0) {	/* the tetrahedron of the even corners */
		for (int q = 0; q < 8; q++) {
			const int c[3] = { q & 1, q >> 1 & 1, q >> 2 & 1 };

			if ((b[0] + b[1] + b[2] + c[0] + c[1] + c[2]) & 1)
				continue;
			for (int d = 0; d < 3; d++)
				node[n][d] = b[d] + c[d];
			w[n++] = 1 - 0.5 * (fabs(f[0] - c[0]) + fabs(f[1] - c[1]) + fabs(f[2] - c[2]));
		}
	} else {	/* the octahedron around the odd corner */
		const double dd[3] = { f[0] - o[0], f[1] - o[1], f[2] - o[2] };
		const double rest = (1 - fabs(dd[0]) - fabs(dd[1]) - fabs(dd[2])) / 6;

		for (int d = 0; d < 3; d++)
			for (int s = -1; s <= 1; s += 2) {
				for (int e = 0; e < 3; e++)
					node[n][e] = b[e] + o[e] + (e == d ? s : 0);
				w[n++] = fmax(s * dd[d], 0) + rest;
			}
	}
	for (int q = 0; q < 8; q++) {
		if (q >= n) {	/* the slots left: the first node, of weight 0 */
			memcpy(node[q], node[0], sizeof(node[q]));
			w[q] = 0;
			continue;
		}
		node[q][2] -= g->zbase;
		if (w[q] == 0)
			continue;
		for (int d = 0; d < 3; d++) {
			const int lo = p->halo, hi = p->halo + p->room[d] - 1;

			if (node[q][d] < lo)
				out = fmax(out, (lo - node[q][d]) * p->h);
			if (node[q][d] > hi)
				out = fmax(out, (node[q][d] - hi) * p->h);
		}
		/* in a carved room a node inside the bounds may be solid */
		if (out == 0 && g->carved &&
		    g->cls[vox_index(p, node[q][0], node[q][1], node[q][2])] == VOX_PAD)
			padded = 1;
	}
	if (distance)
		*distance = out;
	return out > 0 || padded ? -1 : 0;
}

static int locate(const struct vox_grid *g, const double pos[3], int base[3], double w[3],
		  double *distance);

int vox_point(const struct vox_grid *g, const double at[3], int node[8][3], double w[8],
	      double *distance)
{
	int base[3], rc;
	double f[3], pos[3];

	vox_to_grid(&g->plan, at, pos);
	if (g->plan.fcc)
		return vox_point_fcc(g, pos, node, w, distance);
	rc = locate(g, pos, base, f, distance);	/* the nodes either way */
	for (int c = 0; c < 8; c++) {
		const int dx = c & 1, dy = c >> 1 & 1, dz = c >> 2 & 1;

		node[c][0] = base[0] + dx;
		node[c][1] = base[1] + dy;
		node[c][2] = base[2] + dz;
		w[c] = (dx ? f[0] : 1 - f[0]) * (dy ? f[1] : 1 - f[1]) * (dz ? f[2] : 1 - f[2]);
	}
	return rc;
}

void vox_point_layers(const struct vox_grid *g, const double pos[3], int *lo, int *hi)
{
	int node[8][3];
	double w[8], d;

	vox_point(g, pos, node, w, &d);
	*lo = *hi = node[0][2];
	for (int c = 1; c < 8; c++) {
		*lo = node[c][2] < *lo ? node[c][2] : *lo;
		*hi = node[c][2] > *hi ? node[c][2] : *hi;
	}
}

int vox_locate(const struct vox_grid *g, const double at[3], int base[3], double w[3],
	       double *distance)
{
	double pos[3];

	vox_to_grid(&g->plan, at, pos);
	return locate(g, pos, base, w, distance);
}

/* vox_locate in the grid's frame */
static int locate(const struct vox_grid *g, const double pos[3], int base[3], double w[3],
		  double *distance)
{
	const struct vox_plan *p = &g->plan;
	double out = 0;
	int ok = 1;

	for (int d = 0; d < 3; d++) {
		/* in a window, its own layers: exactly the whole grid's less zbase, so that the
		 * weights are the same bits (w = f - floor f either way) */
		double f = (pos[d] - g->origin[d]) / p->h - (d == 2 ? g->zbase : 0);
		/* nodes base and base + 1 must both be room cells: halo <= base < room + halo - 1 */
		double lo = p->halo, hi = p->room[d] + p->halo - 1;

		if (f < lo)
			out = fmax(out, (lo - f) * p->h);
		if (f > hi)
			out = fmax(out, (f - hi) * p->h);
		if (f < lo || f > hi) {
			ok = 0;
			f = f < lo ? lo : hi;
		}
		base[d] = (int)floor(f);
		if (base[d] >= p->room[d] + p->halo - 1)
			base[d] = p->room[d] + p->halo - 2;
		w[d] = f - base[d];
	}
	for (int c = 0; ok && c < 8; c++)
		if (g->cls[vox_index(p, base[0] + (c & 1), base[1] + (c >> 1 & 1),
				     base[2] + (c >> 2 & 1))] == VOX_PAD)
			ok = 0;
	if (distance)
		*distance = out;
	return ok ? 0 : -1;
}

/* The walls an fcc node of a box lies on (its share of its dual cell is 2^-walls). */
static int node_walls(const struct vox_wall *w)
{
	int n = 0;

	for (int f = 0; f < 6; f++)
		n += w->material[f] != VOX_NO_WALL;
	return n;
}

double vox_wall_area(const struct vox_grid *g, const struct vox_wall *w, int f)
{
	const double h2 = g->plan.h * g->plan.h;

	if (w->material[f] == VOX_NO_WALL)
		return 0;
	if (!g->plan.fcc)
		return w->area[f] * h2;
	if (!g->plan.on_nodes)	/* 4 h^2 per unit of a link's weight (voxel.h) */
		return 4 * w->area[f] * h2;
	/* a box's node on one wall has a face of 2 h^2 there, on an edge h^2 on each */
	return ldexp(2 * h2, 1 - node_walls(w));
}

void vox_measure(const struct vox_grid *g, double *volume, double *area)
{
	const struct vox_plan *p = &g->plan;
	const double h3 = p->h * p->h * p->h;
	double a = 0, v = (double)(p->air + p->boundary) * h3;

	for (size_t w = 0; w < g->nwalls; w++)
		for (int f = 0; f < 6; f++)
			a += vox_wall_area(g, &g->walls[w], f);
	if (p->fcc) {	/* a node holds 2 h^3, on a box's walls 2^-walls of it */
		v *= 2;
		for (size_t w = 0; p->on_nodes && w < g->nwalls; w++)
			v -= 2 * h3 * (1 - ldexp(1, -node_walls(&g->walls[w])));
	}
	*volume = v;
	*area = a;
}

size_t vox_count_nodes(const struct vox_grid *g, int k0, int k1)
{
	const struct vox_plan *p = &g->plan;
	size_t n = 0;

#pragma omp parallel for schedule(static) reduction(+ : n)
	for (int k = k0; k <= k1; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++)
				n += g->cls[vox_index(p, i, j, k)] != VOX_PAD &&
				     (!p->fcc || (i + j + k + g->zbase) % 2 == 0);
	return n;
}

void vox_measure_add(const struct vox_grid *g, int k0, int k1, int nm, double *volume,
		     double *area)
{
	const struct vox_plan *p = &g->plan;
	const size_t layer = (size_t)p->n[0] * p->n[1];
	const double h3 = p->h * p->h * p->h;

	for (size_t w = 0; w < g->nwalls; w++) {
		const struct vox_wall *wl = &g->walls[w];

		if (wl->cell < (size_t)k0 * layer || wl->cell >= (size_t)(k1 + 1) * layer)
			continue;
		if (p->fcc && p->on_nodes)
			*volume -= 2 * h3 * (1 - ldexp(1, -node_walls(wl)));
		for (int f = 0; f < 6; f++)
			if (wl->material[f] < nm)
				area[wl->material[f]] += vox_wall_area(g, wl, f);
	}
}

int vox_nearest_point(const struct vox_grid *g, const double at[3], double reach,
		      double near[3], double *distance)
{
	const struct vox_plan *p = &g->plan;
	const int r = (int)ceil(reach / p->h) + 1;
	double best = INFINITY, pos[3];
	int c[3];

	vox_to_grid(p, at, pos);
	for (int d = 0; d < 3; d++)
		c[d] = (int)floor((pos[d] - g->origin[d]) / p->h);
	/* on the fcc lattice: the nearest node (a node's interpolation is the node alone) */
	for (int k = c[2] - r; p->fcc && k <= c[2] + r; k++)
		for (int j = c[1] - r; j <= c[1] + r; j++)
			for (int i = c[0] - r; i <= c[0] + r; i++) {
				const int b[3] = { i, j, k };
				double d2 = 0;
				int ok = (i + j + k) % 2 == 0;

				for (int d = 0; d < 3; d++)
					ok &= b[d] >= 0 && b[d] < p->n[d];
				if (!ok || g->cls[vox_index(p, i, j, k)] == VOX_PAD)
					continue;
				for (int d = 0; d < 3; d++) {
					const double x = g->origin[d] + b[d] * p->h;

					d2 += (x - pos[d]) * (x - pos[d]);
				}
				if (d2 < best) {
					best = d2;
					for (int d = 0; d < 3; d++)
						near[d] = g->origin[d] + b[d] * p->h;
				}
			}
	/* every base cell b near pos whose eight cells are room nodes: the nearest point of
	 * the cube between its nodes */
	for (int k = c[2] - r; !p->fcc && k <= c[2] + r; k++)
		for (int j = c[1] - r; j <= c[1] + r; j++)
			for (int i = c[0] - r; i <= c[0] + r; i++) {
				const int b[3] = { i, j, k };
				double q[3], d2 = 0;
				int ok = 1;

				for (int d = 0; d < 3; d++)
					ok &= b[d] >= 0 && b[d] + 1 < p->n[d];
				for (int q8 = 0; ok && q8 < 8; q8++)
					ok = g->cls[vox_index(p, i + (q8 & 1), j + (q8 >> 1 & 1),
							      k + (q8 >> 2 & 1))] != VOX_PAD;
				if (!ok)
					continue;
				for (int d = 0; d < 3; d++) {
					const double lo = g->origin[d] + b[d] * p->h;

					q[d] = fmin(fmax(pos[d], lo), lo + p->h);
					d2 += (q[d] - pos[d]) * (q[d] - pos[d]);
				}
				if (d2 < best) {
					best = d2;
					memcpy(near, q, sizeof(q));
				}
			}
	*distance = sqrt(best);
	if (best < INFINITY)
		vox_to_room(p, near, near);
	return best <= reach * reach ? 0 : -1;
}
