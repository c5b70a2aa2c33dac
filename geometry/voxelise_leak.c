/*
 * voxelise_leak.c - the leak check of a mesh: a flood from outside through the cells no
 * triangle meets (voxelise.c, step 2).
 */
#include "voxelise.h"
#include "../common/rs_phase.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Akenine-Moeller's separating-axis test: does triangle t meet the box c +- half? */
static int tri_box(const struct tri *t, const double c[3], double half)
{
	double v[3][3], e[3][3];

	for (int i = 0; i < 3; i++)
		for (int d = 0; d < 3; d++)
			v[i][d] = t->v[i][d] - c[d];
	{	/* the triangle's plane first: it rejects most cells of a tilted triangle */
		double dist = t->n[0] * v[0][0] + t->n[1] * v[0][1] + t->n[2] * v[0][2];

		if (fabs(dist) > half * (fabs(t->n[0]) + fabs(t->n[1]) + fabs(t->n[2])))
			return 0;
	}
	for (int i = 0; i < 3; i++)
		for (int d = 0; d < 3; d++)
			e[i][d] = v[(i + 1) % 3][d] - v[i][d];
	/* the nine cross products of the box axes with the edges */
	for (int i = 0; i < 3; i++)
		for (int a = 0; a < 3; a++) {
			double ax[3] = { 0, 0, 0 }, p[3], r, lo, hi;

			/* axis = unit(a) x e[i] */
			ax[(a + 1) % 3] = -e[i][(a + 2) % 3];
			ax[(a + 2) % 3] = e[i][(a + 1) % 3];
			for (int q = 0; q < 3; q++)
				p[q] = ax[0] * v[q][0] + ax[1] * v[q][1] + ax[2] * v[q][2];
			r = half * (fabs(ax[0]) + fabs(ax[1]) + fabs(ax[2]));
			lo = fmin(p[0], fmin(p[1], p[2]));
			hi = fmax(p[0], fmax(p[1], p[2]));
			if (lo > r || hi < -r)
				return 0;
		}
	/* the box's own axes */
	for (int d = 0; d < 3; d++)
		if (fmin(v[0][d], fmin(v[1][d], v[2][d])) > half ||
		    fmax(v[0][d], fmax(v[1][d], v[2][d])) < -half)
			return 0;
	return 1;
}

/* The axis d of triangle t's normal's largest component; *a < *c the other two. */
static int tri_axes(const struct tri *t, int *a, int *c)
{
	int d = fabs(t->n[1]) > fabs(t->n[0]) ? 1 : 0;

	d = fabs(t->n[2]) > fabs(t->n[d]) ? 2 : d;
	*a = d == 0 ? 1 : 0;
	*c = d == 2 ? 1 : 2;
	return d;
}

/*
 * Mark the cells whose (slightly grown) box a triangle meets. Along the triangle's normal's
 * largest axis d only the cells near its plane can: in each column (a, c) those whose node's
 * n . x lies within half (|n0| + |n1| + |n2|) of the plane's (tri_box's first test), a range
 * taken a cell wider each way so that rounding loses none; tri_box decides each of them.
 * Work item w is row a of triangle t, rows[t] <= w < rows[t + 1] (rows: ntri + 1 entries),
 * so that a large triangle spreads over the threads.
 */
static void touch_cells(struct build *b, size_t *rows)
{
	const double h = b->whole.h, half = 0.5 * h * (1 + 1e-9);

	rows[0] = 0;
	for (size_t t = 0; t < b->ntri; t++) {
		const struct tri *tr = &b->tri[t];
		int a, c, m0, m1;

		tri_axes(tr, &a, &c);
		vx_node_range(b, a, tr->lo[a] - half, tr->hi[a] + half, &m0, &m1);
		rows[t + 1] = rows[t] + (size_t)(m1 >= m0 ? m1 - m0 + 1 : 0);
	}
#pragma omp parallel for schedule(dynamic, 16)
	for (size_t w = 0; w < rows[b->ntri]; w++) {
		size_t lo = 0, hi = b->ntri;	/* the t with rows[t] <= w < rows[t + 1] */

		while (hi - lo > 1) {
			const size_t mid = (lo + hi) / 2;

			if (rows[mid] <= w)
				lo = mid;
			else
				hi = mid;
		}
		const struct tri *tr = &b->tri[lo];
		const double r = half * (fabs(tr->n[0]) + fabs(tr->n[1]) + fabs(tr->n[2]));
		const double at = tr->n[0] * tr->v[0][0] + tr->n[1] * tr->v[0][1] +
				  tr->n[2] * tr->v[0][2];
		int a, c, m0[3], m1[3], ijk[3];
		const int d = tri_axes(tr, &a, &c);

		for (int e = 0; e < 3; e++)	/* cells whose box [node +- h/2] meets the bounds */
			vx_node_range(b, e, tr->lo[e] - half, tr->hi[e] + half, &m0[e], &m1[e]);
		m0[2] = m0[2] > b->ok0 ? m0[2] : b->ok0;	/* in this rank's slab */
		m1[2] = m1[2] < b->ok1 ? m1[2] : b->ok1;
		ijk[a] = m0[a] + (int)(w - rows[lo]);
		for (ijk[c] = m0[c]; ijk[c] <= m1[c]; ijk[c]++) {
			/* the plane's place along d in this column, and the nodes within r of it */
			const double off = at - tr->n[a] * node_at(b, a, ijk[a]) -
					   tr->n[c] * node_at(b, c, ijk[c]);
			const double x0 = (off - r) / tr->n[d], x1 = (off + r) / tr->n[d];
			int k0, k1;

			vx_node_range(b, d, fmin(x0, x1) - h, fmax(x0, x1) + h, &k0, &k1);
			k0 = k0 > m0[d] ? k0 : m0[d];
			k1 = k1 < m1[d] ? k1 : m1[d];
			for (ijk[d] = k0; ijk[d] <= k1; ijk[d]++) {
				const double ctr[3] = { node_at(b, 0, ijk[0]), node_at(b, 1, ijk[1]),
							node_at(b, 2, ijk[2]) };
				uint8_t *cl = cell(b, ijk[0], ijk[1], ijk[2]);

				if (tri_box(tr, ctr, half))
#pragma omp atomic
					*cl |= B_TOUCH;
			}
		}
	}
}

/* A stack of row seeds (i, j, k) for the flood; grows as needed. */
struct seeds {
	int (*s)[3];
	size_t n, cap;
};

static int push(struct seeds *st, int i, int j, int k)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 1 << 12;
		int (*grown)[3] = realloc(st->s, cap * sizeof(*grown));

		if (!grown)
			return -1;
		st->s = grown;
		st->cap = cap;
	}
	st->s[st->n][0] = i;
	st->s[st->n][1] = j;
	st->s[st->n][2] = k;
	st->n++;
	return 0;
}

/* Can the flood enter room cell c: not touched by a triangle and not reached yet? */
static int open_cell(uint8_t c)
{
	return !(c & (B_TOUCH | B_SEEN));
}

/*
 * Flood one x-run from seed (i, j, k): extend it both ways through open cells, mark them, and
 * push a seed for every open run beside it in the four rows j +- 1, k +- 1 within layers
 * k0..k1 (a scanline fill, which walks rows in memory order rather than cell by cell).
 */
static int flood_run(struct build *b, struct seeds *st, int i, int j, int k, int k0, int k1,
		     size_t *leaked)
{
	const int *n = b->whole.room;
	uint8_t *row = cell(b, 0, j, k);
	int lo = i, hi = i;

	if (!open_cell(row[i]))
		return 0;
	while (lo > 0 && open_cell(row[lo - 1]))
		lo--;
	while (hi < n[0] - 1 && open_cell(row[hi + 1]))
		hi++;
	for (int x = lo; x <= hi; x++) {
		row[x] |= B_SEEN;
		*leaked += (row[x] & B_BASE) != 0;
	}
	for (int q = 0; q < 4; q++) {
		const int jj = j + (q == 0 ? -1 : q == 1 ? 1 : 0), kk = k + (q == 2 ? -1 : q == 3);
		const uint8_t *next;

		if (jj < 0 || kk < k0 || jj >= n[1] || kk > k1)
			continue;
		next = cell(b, 0, jj, kk);
		for (int x = lo; x <= hi; x++)
			if (open_cell(next[x]) && (x == lo || !open_cell(next[x - 1])) &&
			    push(st, x, jj, kk))
				return -1;
	}
	return 0;
}

/* The first of layers 0..layers - 1 in run t of nt. */
static int run_start(int t, int layers, int nt)
{
	return (int)((long)t * layers / nt);
}

#define FLOOD_RUNS 8	/* runs of layers per thread: the flood's work lies where the outside is */

/*
 * The flood of the rank's slab (layers ok0..ok1) from the seeds in st, on the threads: the
 * slab is cut into runs of layers, and each run is flooded from the seeds in it, within it;
 * then each run takes a seed at every open run of cells of its end layers beside cells that
 * the next run's flood reached, and they flood again, until none goes further. The cells
 * reached are those of one flood, whatever the order. Leaves st empty; adds the B_BASE cells
 * reached to *leaked. 0, or -1 when out of memory.
 */
static int flood_slab(struct build *b, struct seeds *st, size_t *leaked)
{
	const int layers = b->ok1 - b->ok0 + 1, *n = b->whole.room;
	const int most = FLOOD_RUNS * omp_get_max_threads();
	const int nr = most < layers ? most : layers;
	struct seeds *rs;
	size_t *got;
	int rc;

	if (!st->n)	/* a later round of the ranks' with nothing new here */
		return 0;
	rs = calloc((size_t)nr, sizeof(*rs));
	got = calloc((size_t)nr, sizeof(*got));
	rc = !rs || !got;

	for (size_t s = 0; s < st->n && !rc; s++) {	/* each seed to the run of its layer: */
		const long x = st->s[s][2] - b->ok0;	/* the last r with run_start(r) <= x */
		const int r = (int)(((x + 1) * nr + layers - 1) / layers) - 1;

		rc = push(&rs[r], st->s[s][0], st->s[s][1], st->s[s][2]);
	}
	st->n = 0;
	for (long pushed = 1; pushed && !rc;) {
		pushed = 0;
#pragma omp parallel reduction(| : rc) reduction(+ : pushed)
		{
#pragma omp for schedule(dynamic, 1)
			for (int r = 0; r < nr; r++) {
				const int k0 = b->ok0 + run_start(r, layers, nr);
				const int k1 = b->ok0 + run_start(r + 1, layers, nr) - 1;
				struct seeds *q = &rs[r];

				while (!rc && q->n > 0) {
					q->n--;
					rc = flood_run(b, q, q->s[q->n][0], q->s[q->n][1],
						       q->s[q->n][2], k0, k1, &got[r]);
				}
			}
			/* every run's flood is done: read the layers beside each run's ends */
#pragma omp for schedule(dynamic, 1)
			for (int r = 0; r < nr; r++)
				for (int side = 0; side < 2 && !rc; side++) {
					const int k = b->ok0 + (side ? run_start(r + 1, layers, nr) - 1
								     : run_start(r, layers, nr));
					const int beside = side ? k + 1 : k - 1;

					if (beside < b->ok0 || beside > b->ok1)
						continue;
					for (int j = 0; j < n[1] && !rc; j++) {
						const uint8_t *row = cell(b, 0, j, k);
						const uint8_t *by = cell(b, 0, j, beside);

						for (int i = 0; i < n[0] && !rc; i++)
							if (open_cell(row[i]) && (by[i] & B_SEEN) &&
							    (i == 0 || !open_cell(row[i - 1]) ||
							     !(by[i - 1] & B_SEEN))) {
								rc = push(&rs[r], i, j, k);
								pushed++;
							}
					}
				}
		}
	}
	for (int r = 0; r < nr && got; r++)
		*leaked += got[r];
	for (int r = 0; r < nr && rs; r++)
		free(rs[r].s);
	free(rs);
	free(got);
	return rc ? -1 : 0;
}

/* Is room cell (i, j, k) on the room's outer layer? */
static int outer(const int *n, int i, int j, int k)
{
	return !i || !j || !k || i == n[0] - 1 || j == n[1] - 1 || k == n[2] - 1;
}

/*
 * Where a leak enters: the reached cells inside the mesh next to reached cells outside it,
 * or on the room's outer layer, as a box of nodes.
 */
static void leak_place(const struct build *b, double lo[3], double hi[3])
{
	const int *n = b->whole.room;
	const ptrdiff_t step[3] = { 1, b->g->plan.n[0], (ptrdiff_t)b->g->plan.n[0] * b->g->plan.n[1] };

	for (int k = b->ok0; k <= b->ok1; k++)
		for (int j = 0; j < n[1]; j++)
			for (int i = 0; i < n[0]; i++) {
				const uint8_t *c = cell(b, i, j, k);
				const int at[3] = { i, j, k };
				int entry = outer(n, i, j, k);

				if ((*c & (B_SEEN | B_BASE)) != (B_SEEN | B_BASE))
					continue;
				for (int f = 0; f < 6 && !entry; f++)
					entry = (c[(f % 2 ? 1 : -1) * step[f / 2]] & (B_SEEN | B_BASE)) ==
						B_SEEN;
				for (int d = 0; entry && d < 3; d++) {
					lo[d] = fmin(lo[d], node_at(b, d, at[d]));
					hi[d] = fmax(hi[d], node_at(b, d, at[d]));
				}
			}
}

/*
 * One round of a decomposed flood: each rank's cells of its slab's end layers to its
 * neighbours (received into below and above, a layer of g each), their B_SEEN into the layers
 * beside the slab, and a seed at every open cell of an end layer that the flood reached beside
 * it. Returns the seeds pushed (-1: out of memory, after the swap that every rank makes).
 */
static long swap_seen(struct build *b, struct seeds *st, uint8_t *below, uint8_t *above)
{
	const struct vox_plan *p = &b->g->plan;
	const size_t layer = (size_t)p->n[0] * p->n[1];
	const int *n = b->whole.room;
	long pushed = 0;

	/* whole layers of g, from their first byte: cell (i, j) at the same offset in each */
	b->comm->swap(b->comm->ctx, cell(b, -p->halo, -p->halo, b->ok0),
		      cell(b, -p->halo, -p->halo, b->ok1), below, above, layer);
	for (int side = 0; side < 2; side++) {
		const int k = side ? b->ok1 : b->ok0, beside = side ? k + 1 : k - 1;
		const uint8_t *got = (side ? above : below) + (size_t)p->halo * (p->n[0] + 1);

		if (beside < 0 || beside >= n[2])
			continue;
		for (int j = 0; j < n[1]; j++) {
			const uint8_t *from = got + (size_t)p->n[0] * j;
			uint8_t *to = cell(b, 0, j, beside), *row = cell(b, 0, j, k);

			for (int i = 0; i < n[0]; i++) {
				if (!(from[i] & B_SEEN) || (to[i] & B_SEEN))
					continue;
				to[i] |= B_SEEN;
				if (!open_cell(row[i]))
					continue;
				if (push(st, i, j, k))
					return -1;
				pushed++;
			}
		}
	}
	return pushed;
}

/*
 * Flood from the room's outer cells through the untouched ones; a leak reaches B_BASE. Each
 * rank floods its slab; decomposed, the ranks then pass on what reached their slabs' ends
 * until no flood goes further, so the cells reached are those of one flood of the whole room.
 */
int vx_leak_check(struct build *b, struct rs_error *err)
{
	const struct vox_plan *p = &b->whole;
	const int *n = p->room;
	const int ranks = b->comm && b->comm->size > 1;
	const size_t layer = (size_t)b->g->plan.n[0] * b->g->plan.n[1];
	struct seeds st = { 0 };
	double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
	double sum[2] = { 0, 0 };
	uint8_t *swap = ranks ? calloc(2 * layer, 1) : NULL;	/* the neighbours' end layers */
	size_t leaked = 0, *rows = malloc((b->ntri + 1) * sizeof(*rows));
	int rc = 0;

	sum[1] = (ranks && !swap) || !rows;
	if (ranks)	/* every rank has its buffers, or none goes on */
		b->comm->reduce(b->comm->ctx, &sum[1], 1, 1);
	if (sum[1] > 0) {
		free(swap);
		free(rows);
		return rs_fail(err, RS_ENOMEM, "out of memory for the leak check");
	}
	touch_cells(b, rows);
	free(rows);
	rs_phase("grid: leak check: the cells the triangles meet");
	for (int k = b->ok0; k <= b->ok1 && !rc; k++)	/* seeds: every open run of the outer layer */
		for (int j = 0; j < n[1] && !rc; j++)
			for (int i = 0; i < n[0] && !rc; i++) {
				if (!outer(n, i, j, k) && i == 1)
					i = n[0] - 1;	/* inside rows: only their two ends */
				/* one seed a run: where the cell before is not a seed too */
				if (outer(n, i, j, k) && open_cell(*cell(b, i, j, k)) &&
				    (i == 0 || !outer(n, i - 1, j, k) ||
				     !open_cell(*cell(b, i - 1, j, k))))
					rc = push(&st, i, j, k);
			}
	for (;;) {
		long pushed;

		rc = rc ? rc : flood_slab(b, &st, &leaked);
		if (!ranks)
			break;
		pushed = swap_seen(b, &st, swap, swap + layer);
		pushed = rc ? -1 : pushed;
		sum[0] = pushed > 0 ? (double)pushed : 0;
		sum[1] = pushed < 0;
		b->comm->reduce(b->comm->ctx, sum, 2, 0);
		if (sum[1] > 0) {	/* out of memory somewhere: every rank stops */
			rc = -1;
			break;
		}
		if (sum[0] == 0)
			break;
	}
	free(st.s);
	free(swap);
	if (rc)
		return rs_fail(err, RS_ENOMEM, "out of memory for the leak check");
	if (ranks) {
		double v = (double)leaked;

		b->comm->reduce(b->comm->ctx, &v, 1, 0);
		leaked = (size_t)v;
	}
	if (!leaked)
		return 0;
	leak_place(b, lo, hi);
	if (ranks) {
		double box[6] = { -lo[0], -lo[1], -lo[2], hi[0], hi[1], hi[2] };

		b->comm->reduce(b->comm->ctx, box, 6, 1);
		for (int d = 0; d < 3; d++) {
			lo[d] = -box[d];
			hi[d] = box[3 + d];
		}
	}
	return room_at(err, b->room, b->room->geo.mesh_at, "geometry.mesh", "%s is not "
		       "closed: %.3g m^3 of its inside reach the outside through a gap wider "
		       "than a cell (%g m) at about (%.2f, %.2f, %.2f) m, where x %.2f..%.2f, "
		       "y %.2f..%.2f, z %.2f..%.2f (valid: a closed mesh; gaps narrower than "
		       "a cell are bridged, so a coarser grid may also do)",
		       b->room->geo.mesh_path, (double)leaked * pow(p->h, 3),
		       p->h, 0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]),
		       0.5 * (lo[2] + hi[2]), lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
}
