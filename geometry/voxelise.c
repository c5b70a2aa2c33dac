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
#include "build.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

struct tri {
	double v[3][3];		/* vertices */
	double n[3];		/* unit normal */
	double lo[3], hi[3];	/* bounds */
	int material;
};

struct build {
	const struct room *room;
	struct vox_grid *g;
	struct tri *tri;	/* the mesh's triangles without duplicates, or NULL */
	size_t ntri;
	void *file;		/* a voxel file base, open (room->geo.voxels), or NULL */
	/* nearest-triangle bins: bin b holds bin_tri[bin_at[b] .. bin_at[b + 1]) */
	int nbin[3];
	size_t *bin_at;
	uint32_t *bin_tri;
};

/* The class byte of room cell (i, j, k), indices within the room (no halo). */
static uint8_t *cell(const struct build *b, int i, int j, int k)
{
	const int h = b->g->plan.halo;

	return &b->g->cls[vox_index(&b->g->plan, i + h, j + h, k + h)];
}

/* Room coordinate of the node of room cell m along axis d. */
static double node_at(const struct build *b, int d, int m)
{
	return b->room->origin[d] + (m + 0.5) * b->g->plan.h;
}

/* Triangles in canonical order (vertices sorted) compare equal when they are duplicates. */
static int tri_cmp(const void *pa, const void *pb)
{
	const struct tri *a = pa, *b = pb;

	return memcmp(a->v, b->v, sizeof(a->v)) ? (memcmp(a->v, b->v, sizeof(a->v)) < 0 ? -1 : 1)
						  : 0;
}

static int vertex_less(const double *a, const double *b)
{
	return a[0] != b[0] ? a[0] < b[0] : a[1] != b[1] ? a[1] < b[1] : a[2] < b[2];
}

/* The mesh as struct tri, vertices sorted in each, duplicates and zero-area ones dropped. */
static int load_triangles(struct build *b, struct rs_error *err)
{
	const struct mesh *m = &b->room->geo.mesh;
	size_t kept = 0;

	if (!(b->tri = malloc(m->ntri * sizeof(*b->tri))))
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu triangles", m->ntri);
	for (size_t t = 0; t < m->ntri; t++) {
		struct tri *o = &b->tri[t];
		double e1[3], e2[3], len;

		memset(o, 0, sizeof(*o));	/* no padding bytes in memcmp's way */
		for (int c = 0; c < 3; c++)
			memcpy(o->v[c], m->v[m->tri[t][c]], sizeof(o->v[c]));
		for (int i = 1; i < 3; i++)	/* insertion sort of three vertices */
			for (int j = i; j > 0 && vertex_less(o->v[j], o->v[j - 1]); j--) {
				double s[3];

				memcpy(s, o->v[j], sizeof(s));
				memcpy(o->v[j], o->v[j - 1], sizeof(s));
				memcpy(o->v[j - 1], s, sizeof(s));
			}
		for (int d = 0; d < 3; d++) {
			e1[d] = o->v[1][d] - o->v[0][d];
			e2[d] = o->v[2][d] - o->v[0][d];
		}
		for (int d = 0; d < 3; d++) {
			o->lo[d] = fmin(o->v[0][d], fmin(o->v[1][d], o->v[2][d]));
			o->hi[d] = fmax(o->v[0][d], fmax(o->v[1][d], o->v[2][d]));
		}
		o->n[0] = e1[1] * e2[2] - e1[2] * e2[1];
		o->n[1] = e1[2] * e2[0] - e1[0] * e2[2];
		o->n[2] = e1[0] * e2[1] - e1[1] * e2[0];
		len = sqrt(o->n[0] * o->n[0] + o->n[1] * o->n[1] + o->n[2] * o->n[2]);
		for (int d = 0; d < 3; d++)
			o->n[d] = len > 0 ? o->n[d] / len : 0;
		o->material = m->parts[m->part[t]].material;
	}
	qsort(b->tri, m->ntri, sizeof(*b->tri), tri_cmp);
	for (size_t t = 0; t < m->ntri; t++) {
		const struct tri *o = &b->tri[t];

		if (o->n[0] == 0 && o->n[1] == 0 && o->n[2] == 0)
			continue;
		if (kept && !tri_cmp(o, &b->tri[kept - 1]))
			continue;
		b->tri[kept++] = *o;
	}
	b->ntri = kept;
	return 0;
}

/*
 * The side of P on edge XY in the projection (u, v): +1 or -1, never 0. The edge is taken in
 * a canonical direction, so two triangles sharing it compute the same product and see P on
 * opposite sides; a P exactly on the line is moved to P + (e, e^2) for an infinitesimal e
 * (simulation of simplicity), which decides ties the same way for every triangle.
 */
static int edge_side(const double *X, const double *Y, double pu, double pv, int u, int v)
{
	const int flip = X[u] > Y[u] || (X[u] == Y[u] && X[v] > Y[v]);
	const double *a = flip ? Y : X, *c = flip ? X : Y;
	const double du = c[u] - a[u], dv = c[v] - a[v];
	const double e = du * (pv - a[v]) - dv * (pu - a[u]);
	int s;

	if (e != 0)
		s = e > 0 ? 1 : -1;
	else
		s = dv != 0 ? (dv > 0 ? -1 : 1) : 1;	/* du > 0 when dv == 0 */
	return flip ? -s : s;
}

/* Where the ray along a through (pu, pv) crosses triangle t, if it does. */
static int crossing(const struct tri *t, int a, double pu, double pv, double *at)
{
	const int u = (a + 1) % 3, v = (a + 2) % 3;
	const int s0 = edge_side(t->v[1], t->v[2], pu, pv, u, v);
	const int s1 = edge_side(t->v[2], t->v[0], pu, pv, u, v);
	const int s2 = edge_side(t->v[0], t->v[1], pu, pv, u, v);
	double w[3], sum;

	if (s0 != s1 || s1 != s2)
		return 0;
	/* barycentric weights from the signed areas opposite each vertex */
	for (int c = 0; c < 3; c++) {
		const double *p = t->v[(c + 1) % 3], *q = t->v[(c + 2) % 3];

		w[c] = fabs((q[u] - p[u]) * (pv - p[v]) - (q[v] - p[v]) * (pu - p[u]));
	}
	sum = w[0] + w[1] + w[2];
	*at = sum > 0 ? (w[0] * t->v[0][a] + w[1] * t->v[1][a] + w[2] * t->v[2][a]) / sum
		      : (t->v[0][a] + t->v[1][a] + t->v[2][a]) / 3;
	return 1;
}

/* The room cells m with node in [lo, hi] along axis d: [*m0, *m1], empty when m1 < m0. */
static void node_range(const struct build *b, int d, double lo, double hi, int *m0, int *m1)
{
	const double h = b->g->plan.h, o = b->room->origin[d];

	*m0 = (int)fmax(0, ceil((lo - o) / h - 0.5));
	*m1 = (int)fmin(b->g->plan.room[d] - 1, floor((hi - o) / h - 0.5));
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The sorted crossings of the rays along one axis: ray r has cross[at[r] .. at[r + 1]). */
struct rays {
	size_t *at;
	double *cross;
};

/* Every ray along axis a through the nodes: where it crosses the surface, sorted. */
static int axis_rays(struct build *b, int a, struct rays *out, struct rs_error *err)
{
	const struct vox_plan *p = &b->g->plan;
	const int u = (a + 1) % 3, v = (a + 2) % 3, nu = p->room[u], nv = p->room[v];
	const size_t rays = (size_t)nu * (size_t)nv;
	size_t *at = calloc(rays + 1, sizeof(*at)), *fill = malloc(rays * sizeof(*fill));
	double *cross = NULL;

	out->at = at;
	out->cross = NULL;
	if (!at || !fill) {
		free(fill);
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu rays", rays);
	}
	for (int pass = 0; pass < 2; pass++) {
#pragma omp parallel for schedule(dynamic, 256)
		for (size_t t = 0; t < b->ntri; t++) {
			const struct tri *tr = &b->tri[t];
			int u0, u1, v0, v1;

			node_range(b, u, tr->lo[u], tr->hi[u], &u0, &u1);
			node_range(b, v, tr->lo[v], tr->hi[v], &v0, &v1);
			for (int jv = v0; jv <= v1; jv++)
				for (int ju = u0; ju <= u1; ju++) {
					const size_t r = (size_t)ju + (size_t)nu * (size_t)jv;
					double x;
					size_t slot;

					if (!crossing(tr, a, node_at(b, u, ju), node_at(b, v, jv), &x))
						continue;
					if (pass == 0) {
#pragma omp atomic
						at[r + 1]++;
						continue;
					}
#pragma omp atomic capture
					slot = fill[r]++;
					cross[slot] = x;
				}
		}
		if (pass == 1)
			break;
		for (size_t r = 0; r < rays; r++) {
			at[r + 1] += at[r];
			fill[r] = at[r];
		}
		if (!(out->cross = cross = malloc((at[rays] + 1) * sizeof(*cross)))) {
			free(fill);
			return rs_fail(err, RS_ENOMEM, "out of memory for %zu ray crossings", at[rays]);
		}
	}
	free(fill);
#pragma omp parallel for schedule(dynamic, 256)
	for (size_t r = 0; r < rays; r++)
		qsort(cross + at[r], at[r + 1] - at[r], sizeof(*cross), cmp_double);
	return 0;
}

/* The first node m along axis a with c < node m (the node where a crossing at c is passed). */
static int passed_at(const struct build *b, int a, double c)
{
	const int n = b->g->plan.room[a];
	double f = floor((c - b->room->origin[a]) / b->g->plan.h - 0.5) + 1;
	int m = f < 0 ? 0 : f > n ? n : (int)f;

	while (m > 0 && node_at(b, a, m - 1) > c)	/* exactly the test of the node loops */
		m--;
	while (m < n && !(c < node_at(b, a, m)))
		m++;
	return m;
}

#define WORD 64	/* nodes per bit word */

/* Toggle bit i of the bitset w. */
static void flip(uint64_t *w, int i)
{
	w[i / WORD] ^= 1ull << (i % WORD);
}

/*
 * The votes of the three rays through the nodes of z-slabs [k0, k1), as bitsets: a ray's
 * parity changes only where it crosses the surface, so each ray's bits are flipped at its
 * crossings (events) and carried from node to node, and the majority of three is bitwise.
 * A ray with an odd number of crossings in all (it passed a hole) does not vote. A node thus
 * costs a few bit operations; the crossings cost the rest.
 */
static int inside_slabs(struct build *b, const struct rays *ry, int k0, int k1)
{
	const int *n = b->g->plan.room, W = (n[0] + WORD - 1) / WORD;
	const size_t cols = (size_t)n[1] * W;
	/* z: parity and validity per column, rows of W words; y: per slab, one row of W words */
	uint64_t *zpar = calloc(cols, 8), *zok = calloc(cols, 8), *ypar = calloc((size_t)W, 8);
	uint64_t *yok = calloc((size_t)W, 8), *x = calloc((size_t)W + 1, 8);
	size_t *yat = calloc((size_t)n[1] + 2, sizeof(size_t)), ycap = 0;
	size_t *zat = calloc((size_t)(k1 - k0) + 1, sizeof(size_t)), *zev = NULL;
	int *yev = NULL, rc = 0;
	uint64_t bytes[256] = { 0 };	/* 8 bits to 8 class bytes of B_BASE or 0 */

	if (!zpar || !zok || !ypar || !yok || !x || !yat || !zat) {
		rc = -1;
		goto out;
	}
	for (int v = 0; v < 256; v++)
		for (int q = 0; q < 8; q++)
			bytes[v] |= (uint64_t)(v >> q & 1 ? B_BASE : 0) << (8 * q);
	/* z-rays: validity, the crossings passed up to slab k0, the later ones by slab */
	for (int pass = 0; pass < 2; pass++) {
		for (int j = 0; j < n[1]; j++)
			for (int i = 0; i < n[0]; i++) {
				const size_t r = (size_t)i + (size_t)n[0] * j;

				if (!pass && (ry[2].at[r + 1] - ry[2].at[r]) % 2 == 0)
					flip(zok + (size_t)j * W, i);
				for (size_t q = ry[2].at[r]; q < ry[2].at[r + 1]; q++) {
					const int k = passed_at(b, 2, ry[2].cross[q]);

					if (k <= k0 && !pass)
						flip(zpar + (size_t)j * W, i);
					else if (k > k0 && k < k1 && pass)
						zev[zat[k - k0]++] = r;
					else if (k > k0 && k < k1)
						zat[k - k0 + 1]++;
				}
			}
		if (pass)
			break;
		/* counted at m + 1, so zat[m] starts slab k0 + m's events; filled, it ends them */
		for (int k = 0; k < k1 - k0; k++)
			zat[k + 1] += zat[k];
		if (!(zev = malloc((zat[k1 - k0] + 1) * sizeof(*zev)))) {
			rc = -1;
			goto out;
		}
	}
	for (int k = k0; k < k1; k++) {
		size_t nev = 0;

		/* the z-crossings passed at this slab */
		for (size_t e = k > k0 ? zat[k - k0 - 1] : 0; k > k0 && e < zat[k - k0]; e++)
			flip(zpar + zev[e] / (size_t)n[0] * W, (int)(zev[e] % (size_t)n[0]));
		/* the y-rays of this slab: their crossings bucketed by the row j they flip at */
		memset(ypar, 0, (size_t)W * 8);
		memset(yok, 0, (size_t)W * 8);
		memset(yat, 0, ((size_t)n[1] + 2) * sizeof(size_t));
		for (int pass = 0; pass < 2; pass++) {
			for (int i = 0; i < n[0]; i++) {
				const size_t r = (size_t)k + (size_t)n[2] * i;

				if (!pass && (ry[1].at[r + 1] - ry[1].at[r]) % 2 == 0)
					flip(yok, i);
				for (size_t q = ry[1].at[r]; q < ry[1].at[r + 1]; q++) {
					const int j = passed_at(b, 1, ry[1].cross[q]);

					if (j == n[1])
						continue;	/* passed after the last row */
					if (pass)
						yev[yat[j + 1]++] = i;
					else
						yat[j + 2]++;
				}
			}
			if (pass)
				break;
			/* counted at j + 2, filled at j + 1: row j's events end as [yat[j], yat[j + 1]) */
			for (int j = 0; j < n[1]; j++)
				yat[j + 2] += yat[j + 1];
			nev = yat[n[1] + 1];
			if (nev > ycap) {
				int *grown = realloc(yev, nev * sizeof(*yev));

				if (!grown) {
					rc = -1;
					goto out;
				}
				yev = grown;
				ycap = nev;
			}
		}
		for (int j = 0; j < n[1]; j++) {
			const size_t rx = (size_t)j + (size_t)n[1] * k;
			const uint64_t xok = (ry[0].at[rx + 1] - ry[0].at[rx]) % 2 ? 0 : ~0ull;
			const uint64_t *zp = zpar + (size_t)j * W, *zo = zok + (size_t)j * W;
			uint64_t carry = 0;
			uint8_t *row = cell(b, 0, j, k);

			for (size_t e = yat[j]; e < yat[j + 1]; e++)	/* y-crossings passed at row j */
				flip(ypar, yev[e]);
			/* x: flips at the crossings, then a running parity across the row */
			memset(x, 0, ((size_t)W + 1) * 8);
			for (size_t q = ry[0].at[rx]; q < ry[0].at[rx + 1]; q++)
				flip(x, passed_at(b, 0, ry[0].cross[q]));
			for (int w = 0; w < W; w++) {
				uint64_t v = x[w];

				for (int sh = 1; sh < WORD; sh *= 2)	/* prefix xor within the word */
					v ^= v << sh;
				v ^= carry;
				carry = v >> (WORD - 1) ? ~0ull : 0;
				x[w] = v;
			}
			for (int w = 0; w < W; w++) {
				const uint64_t a = x[w] & xok, yb = ypar[w] & yok[w], zb = zp[w] & zo[w];
				const uint64_t in = (a & yb) | (a & zb) | (yb & zb);
				const int m = n[0] - w * WORD < WORD ? n[0] - w * WORD : WORD;

				for (int q = 0; q < m; q += 8) {
					const uint64_t eight = bytes[in >> q & 0xff];

					if (m - q >= 8)
						memcpy(row + w * WORD + q, &eight, 8);
					else
						memcpy(row + w * WORD + q, &eight, (size_t)(m - q));
				}
			}
		}
	}
out:
	free(zpar);
	free(zok);
	free(ypar);
	free(yok);
	free(x);
	free(yat);
	free(yev);
	free(zat);
	free(zev);
	return rc;
}

/* The mesh's inside: a node is inside when at least two of its three rays say so. */
static int mesh_inside(struct build *b, struct rs_error *err)
{
	const int *n = b->g->plan.room;
	struct rays ry[3] = { { 0 } };
	int rc = 0;

	for (int a = 0; a < 3 && !rc; a++)
		rc = axis_rays(b, a, &ry[a], err);
	if (!rc) {
#pragma omp parallel reduction(| : rc)
		{
			const int t = omp_get_thread_num(), nt = omp_get_num_threads();
			const int k0 = (int)((long)n[2] * t / nt), k1 = (int)((long)n[2] * (t + 1) / nt);

			if (k0 < k1 && inside_slabs(b, ry, k0, k1))
				rc = 1;
		}
		if (rc)
			rc = rs_fail(err, RS_ENOMEM, "out of memory for the rays' votes");
	}
	for (int a = 0; a < 3; a++) {
		free(ry[a].at);
		free(ry[a].cross);
	}
	return rc;
}

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

/* Mark the cells whose (slightly grown) box a triangle meets. */
static void touch_cells(struct build *b)
{
	const double h = b->g->plan.h, half = 0.5 * h * (1 + 1e-9);

#pragma omp parallel for schedule(dynamic, 64)
	for (size_t t = 0; t < b->ntri; t++) {
		const struct tri *tr = &b->tri[t];
		int m0[3], m1[3];

		for (int d = 0; d < 3; d++)	/* cells whose box [node +- h/2] meets the bounds */
			node_range(b, d, tr->lo[d] - half, tr->hi[d] + half, &m0[d], &m1[d]);
		for (int k = m0[2]; k <= m1[2]; k++)
			for (int j = m0[1]; j <= m1[1]; j++)
				for (int i = m0[0]; i <= m1[0]; i++) {
					const double c[3] = { node_at(b, 0, i), node_at(b, 1, j),
							      node_at(b, 2, k) };
					uint8_t *cl = cell(b, i, j, k);

					if (tri_box(tr, c, half))
#pragma omp atomic
						*cl |= B_TOUCH;
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
		size_t cap = st->cap ? 2 * st->cap : 1 << 16;
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
 * push a seed for every open run beside it in the four rows j +- 1, k +- 1 (a scanline fill,
 * which walks rows in memory order rather than cell by cell).
 */
static int flood_run(struct build *b, struct seeds *st, int i, int j, int k, size_t *leaked)
{
	const int *n = b->g->plan.room;
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

		if (jj < 0 || kk < 0 || jj >= n[1] || kk >= n[2])
			continue;
		next = cell(b, 0, jj, kk);
		for (int x = lo; x <= hi; x++)
			if (open_cell(next[x]) && (x == lo || !open_cell(next[x - 1])) &&
			    push(st, x, jj, kk))
				return -1;
	}
	return 0;
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
	const int *n = b->g->plan.room;
	const ptrdiff_t step[3] = { 1, b->g->plan.n[0], (ptrdiff_t)b->g->plan.n[0] * b->g->plan.n[1] };

	for (int k = 0; k < n[2]; k++)
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

/* Flood from the room's outer cells through the untouched ones; a leak reaches B_BASE. */
static int leak_check(struct build *b, struct rs_error *err)
{
	const struct vox_plan *p = &b->g->plan;
	const int *n = p->room;
	struct seeds st = { 0 };
	double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
	size_t leaked = 0;
	int rc = 0;

	touch_cells(b);
	for (int k = 0; k < n[2] && !rc; k++)	/* seeds: every open run of the outer layer */
		for (int j = 0; j < n[1] && !rc; j++)
			for (int i = 0; i < n[0] && !rc; i++) {
				if (!outer(n, i, j, k) && i == 1)
					i = n[0] - 1;	/* inside rows: only their two ends */
				if (outer(n, i, j, k) && open_cell(*cell(b, i, j, k)))
					rc = push(&st, i, j, k);
			}
	while (!rc && st.n > 0) {
		st.n--;
		rc = flood_run(b, &st, st.s[st.n][0], st.s[st.n][1], st.s[st.n][2], &leaked);
	}
	free(st.s);
	if (rc)
		return rs_fail(err, RS_ENOMEM, "out of memory for the leak check");
	if (!leaked)
		return 0;
	leak_place(b, lo, hi);
	return room_at(err, b->room, b->room->geo.mesh_at, "geometry.mesh", "%s is not "
		       "closed: %.3g m^3 of its inside reach the outside through a gap wider "
		       "than a cell (%g m) at about (%.2f, %.2f, %.2f) m, where x %.2f..%.2f, "
		       "y %.2f..%.2f, z %.2f..%.2f (valid: a closed mesh; gaps narrower than "
		       "a cell are bridged, so a coarser grid may also do)",
		       b->room->geo.mesh_path, (double)leaked * pow(p->h, 3),
		       p->h, 0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]),
		       0.5 * (lo[2] + hi[2]), lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
}

/* Bins of BIN_CELLS cells holding the triangles whose bounds meet them. */
static int make_bins(struct build *b, struct rs_error *err)
{
	const struct vox_plan *p = &b->g->plan;
	const double side = BIN_CELLS * p->h;
	size_t nbins = 1, *fill;

	for (int d = 0; d < 3; d++) {
		b->nbin[d] = (p->room[d] + BIN_CELLS - 1) / BIN_CELLS;
		nbins *= (size_t)b->nbin[d];
	}
	b->bin_at = calloc(nbins + 1, sizeof(*b->bin_at));
	fill = malloc(nbins * sizeof(*fill));
	if (!b->bin_at || !fill) {
		free(fill);
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu bins", nbins);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < b->ntri; t++) {
			int m0[3], m1[3];

			for (int d = 0; d < 3; d++) {
				const struct tri *tr = &b->tri[t];

				m0[d] = (int)fmax(0, floor((tr->lo[d] - b->room->origin[d]) / side));
				m1[d] = (int)fmin(b->nbin[d] - 1,
						  floor((tr->hi[d] - b->room->origin[d]) / side));
			}
			for (int k = m0[2]; k <= m1[2]; k++)
				for (int j = m0[1]; j <= m1[1]; j++)
					for (int i = m0[0]; i <= m1[0]; i++) {
						size_t bin = (size_t)i + (size_t)b->nbin[0] *
							     ((size_t)j + (size_t)b->nbin[1] * k);

						if (pass)
							b->bin_tri[fill[bin]++] = (uint32_t)t;
						else
							b->bin_at[bin + 1]++;
					}
		}
		if (pass)
			break;
		for (size_t bin = 0; bin < nbins; bin++) {
			b->bin_at[bin + 1] += b->bin_at[bin];
			fill[bin] = b->bin_at[bin];
		}
		if (!(b->bin_tri = malloc((b->bin_at[nbins] + 1) * sizeof(*b->bin_tri)))) {
			free(fill);
			return rs_fail(err, RS_ENOMEM, "out of memory for the triangle bins");
		}
	}
	free(fill);
	return 0;
}

/* Squared distance from x to triangle t (Ericson, Real-Time Collision Detection 5.1.5). */
static double tri_distance2(const struct tri *t, const double x[3])
{
	const double *a = t->v[0], *b = t->v[1], *c = t->v[2];
	double ab[3], ac[3], ap[3], bp[3], cp[3], q[3], d1, d2, d3, d4, d5, d6, va, vb, vc, v, w;
	double r = 0;

	for (int i = 0; i < 3; i++) {
		ab[i] = b[i] - a[i];
		ac[i] = c[i] - a[i];
		ap[i] = x[i] - a[i];
		bp[i] = x[i] - b[i];
		cp[i] = x[i] - c[i];
	}
#define DOT(p, s) ((p)[0] * (s)[0] + (p)[1] * (s)[1] + (p)[2] * (s)[2])
	d1 = DOT(ab, ap);
	d2 = DOT(ac, ap);
	d3 = DOT(ab, bp);
	d4 = DOT(ac, bp);
	d5 = DOT(ab, cp);
	d6 = DOT(ac, cp);
#undef DOT
	vc = d1 * d4 - d3 * d2;
	vb = d5 * d2 - d1 * d6;
	va = d3 * d6 - d5 * d4;
	if (d1 <= 0 && d2 <= 0) {
		v = 0, w = 0;
	} else if (d3 >= 0 && d4 <= d3) {
		v = 1, w = 0;
	} else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
		v = d1 / (d1 - d3), w = 0;
	} else if (d6 >= 0 && d5 <= d6) {
		v = 0, w = 1;
	} else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
		v = 0, w = d2 / (d2 - d6);
	} else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
		w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
		v = 1 - w;
	} else {
		v = vb / (va + vb + vc);
		w = vc / (va + vb + vc);
	}
	for (int i = 0; i < 3; i++) {
		q[i] = a[i] + ab[i] * v + ac[i] * w - x[i];
		r += q[i] * q[i];
	}
	return r;
}

/* The triangles of the bins that box [lo, hi] meets: best and best2 updated. */
static void search_box(const struct build *b, const double lo[3], const double hi[3],
		       const double x[3], const struct tri **best, double *best2)
{
	const double side = BIN_CELLS * b->g->plan.h;
	int m0[3], m1[3];

	for (int d = 0; d < 3; d++) {
		m0[d] = (int)fmax(0, floor((lo[d] - b->room->origin[d]) / side));
		m1[d] = (int)fmin(b->nbin[d] - 1, floor((hi[d] - b->room->origin[d]) / side));
	}
	for (int k = m0[2]; k <= m1[2]; k++)
		for (int j = m0[1]; j <= m1[1]; j++)
			for (int i = m0[0]; i <= m1[0]; i++) {
				size_t bin = (size_t)i + (size_t)b->nbin[0] *
					     ((size_t)j + (size_t)b->nbin[1] * k);

				for (size_t q = b->bin_at[bin]; q < b->bin_at[bin + 1]; q++) {
					const struct tri *t = &b->tri[b->bin_tri[q]];
					double d2 = tri_distance2(t, x);

					if (d2 < *best2) {
						*best2 = d2;
						*best = t;
					}
				}
			}
}

/*
 * The triangle nearest x. With a hint (the last answer, usually the same surface), only the
 * bins within the hint's distance of x can hold a nearer one; without, rings of bins
 * outwards until no nearer one can lie further out.
 */
static const struct tri *nearest_tri(const struct build *b, const double x[3],
				     const struct tri *hint)
{
	const double side = BIN_CELLS * b->g->plan.h;
	const struct tri *best = NULL;
	double best2 = INFINITY;
	int c[3], rmax = 0;

	if (hint) {
		double lo[3], hi[3], r;

		best = hint;
		best2 = tri_distance2(hint, x);
		r = sqrt(best2);
		for (int d = 0; d < 3; d++) {
			lo[d] = x[d] - r;
			hi[d] = x[d] + r;
		}
		if (r < 2 * side) {	/* else the rings are cheaper */
			search_box(b, lo, hi, x, &best, &best2);
			return best;
		}
		best = NULL;
		best2 = INFINITY;
	}

	for (int d = 0; d < 3; d++) {
		c[d] = (int)floor((x[d] - b->room->origin[d]) / side);
		c[d] = c[d] < 0 ? 0 : c[d] >= b->nbin[d] ? b->nbin[d] - 1 : c[d];
		rmax = b->nbin[d] > rmax ? b->nbin[d] : rmax;
	}
	for (int r = 0; r <= rmax; r++) {
		if (best && best2 <= (double)(r - 1) * (r - 1) * side * side)
			break;	/* every bin of ring r lies at least (r - 1) bins away */
		for (int k = c[2] - r; k <= c[2] + r; k++)
			for (int j = c[1] - r; j <= c[1] + r; j++)
				for (int i = c[0] - r; i <= c[0] + r; i++) {
					size_t bin;

					if (abs(i - c[0]) != r && abs(j - c[1]) != r &&
					    abs(k - c[2]) != r)
						continue;	/* inside the ring: seen */
					if (i < 0 || j < 0 || k < 0 || i >= b->nbin[0] ||
					    j >= b->nbin[1] || k >= b->nbin[2])
						continue;
					bin = (size_t)i + (size_t)b->nbin[0] *
					      ((size_t)j + (size_t)b->nbin[1] * k);
					for (size_t q = b->bin_at[bin]; q < b->bin_at[bin + 1]; q++) {
						const struct tri *t = &b->tri[b->bin_tri[q]];
						double d2 = tri_distance2(t, x);

						if (d2 < best2) {
							best2 = d2;
							best = t;
						}
					}
				}
	}
	return best;
}

/* The correction of a wall on a surface of unit normal n (docs/physics.md). */
static float area_of(const double n[3])
{
	const double l1 = fabs(n[0]) + fabs(n[1]) + fabs(n[2]);

	return l1 > 0 ? (float)(1 / l1) : 1.0f;
}

/* Apply the shapes in order to the nodes each bounds: the last one holding a node decides. */
static void apply_shapes(struct build *b)
{
	const struct room_geometry *geo = &b->room->geo;

	for (int s = 0; s < geo->nshapes; s++) {
		const struct room_shape *sh = &geo->shapes[s];
		int m0[3], m1[3];

		for (int d = 0; d < 3; d++)
			node_range(b, d, sh->lo[d], sh->hi[d], &m0[d], &m1[d]);
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
 * The last shape that holds exactly one of the nodes at xc and xs: 1, its material and its
 * surface's normal n at mid; 0 when none does (the base is responsible).
 */
static int shape_between(const struct room_geometry *geo, const double xc[3],
			 const double xs[3], const double mid[3], double n[3], uint8_t *material)
{
	for (int q = geo->nshapes - 1; q >= 0; q--) {
		const struct room_shape *sh = &geo->shapes[q];

		if (vox_shape_holds(sh, xc) == vox_shape_holds(sh, xs))
			continue;
		vox_shape_normal(sh, mid, n);
		*material = (uint8_t)sh->material;
		return 1;
	}
	return 0;
}

/*
 * The wall between air cell c and solid neighbour s across face f: the material and area
 * correction of the surface responsible, the last of base and shapes to hold exactly one.
 */
static void face_wall(const struct build *b, const int c[3], const int s[3], int f,
		      uint8_t *material, float *area, const struct tri **hint)
{
	const struct room_geometry *geo = &b->room->geo;
	double xc[3], xs[3], mid[3], n[3];

	for (int d = 0; d < 3; d++) {
		xc[d] = node_at(b, d, c[d]);
		xs[d] = node_at(b, d, s[d]);
		mid[d] = 0.5 * (xc[d] + xs[d]);
	}
	if (shape_between(geo, xc, xs, mid, n, material)) {
		*area = area_of(n);
		return;
	}
	*area = 1;
	*material = (uint8_t)geo->default_material;
	if (geo->has_box) {	/* the box's own faces; s lies beyond one of them */
		static const int face[6] = { ROOM_X0, ROOM_X1, ROOM_Y0, ROOM_Y1, ROOM_FLOOR,
					     ROOM_CEILING };

		*material = (uint8_t)b->room->face_material[face[f]];
	} else if (b->tri) {
		const struct tri *t = nearest_tri(b, mid, *hint);

		*hint = t;
		if (t) {
			*material = (uint8_t)t->material;
			*area = area_of(t->n);
		}
	} else if (b->file) {
		b->room->geo.voxels->wall_of(b->file, c, f, material, area);
	}
}

/* The walls of air cell c (room indices), which has a solid neighbour. */
static void cell_walls(const struct build *b, const int c[3], const struct tri **hint,
		       struct vox_wall *wall)
{
	const struct vox_plan *p = &b->g->plan;
	const ptrdiff_t step[3] = { 1, p->n[0], (ptrdiff_t)p->n[0] * p->n[1] };
	const uint8_t *cl = cell(b, c[0], c[1], c[2]);

	memset(wall, 0, sizeof(*wall));
	wall->cell = vox_index(p, c[0] + p->halo, c[1] + p->halo, c[2] + p->halo);
	for (int f = 0; f < 6; f++) {
		int s[3] = { c[0], c[1], c[2] };

		s[f / 2] += f % 2 ? 1 : -1;
		wall->material[f] = VOX_NO_WALL;
		if (is_air(cl[(f % 2 ? 1 : -1) * step[f / 2]]))
			continue;
		face_wall(b, c, s, f, &wall->material[f], &wall->area[f], hint);
		if (!b->room->geo.area_correction)
			wall->area[f] = 1;
	}
}

/*
 * Per-z-slab lists of walls: each slab's thread appends to its own list, and the lists are
 * joined in cell order into g->walls.
 */
struct slabs {
	int n;
	struct vox_wall **list;
	size_t *count, *cap;
};

static int slabs_open(struct slabs *s, int n, struct rs_error *err)
{
	s->n = n;
	s->list = calloc((size_t)n, sizeof(*s->list));
	s->count = calloc((size_t)n, sizeof(*s->count));
	s->cap = calloc((size_t)n, sizeof(*s->cap));
	if (s->list && s->count && s->cap)
		return 0;
	free(s->list);
	free(s->count);
	free(s->cap);
	return rs_fail(err, RS_ENOMEM, "out of memory for the walls");
}

/* A place for one more wall in slab k, or NULL when out of memory. */
static struct vox_wall *slab_next(struct slabs *s, int k)
{
	if (s->count[k] == s->cap[k]) {
		const size_t cap = s->cap[k] ? 2 * s->cap[k] : 1024;
		struct vox_wall *grown = realloc(s->list[k], cap * sizeof(*grown));

		if (!grown)
			return NULL;
		s->list[k] = grown;
		s->cap[k] = cap;
	}
	return &s->list[k][s->count[k]++];
}

/* Join the slabs into g->walls (unless failed) and free them; `what` names the walls. */
static int slabs_join(struct slabs *s, struct vox_grid *g, int failed, const char *what,
		      struct rs_error *err)
{
	size_t total = 0;

	for (int k = 0; k < s->n; k++)
		total += s->count[k];
	if (!failed && (g->walls = malloc((total + 1) * sizeof(*g->walls)))) {
		for (int k = 0; k < s->n; k++) {
			if (s->count[k])	/* an empty slab's list may be NULL */
				memcpy(g->walls + g->nwalls, s->list[k],
				       s->count[k] * sizeof(*s->list[k]));
			g->nwalls += s->count[k];
		}
	} else {
		failed = 1;
	}
	for (int k = 0; k < s->n; k++)
		free(s->list[k]);
	free(s->list);
	free(s->count);
	free(s->cap);
	return failed ? rs_fail(err, RS_ENOMEM, "out of memory for %zu %s", total, what) : 0;
}

/* The walls of every air cell with a solid neighbour, in cell order: a list per z-slab, joined. */
static int make_walls(struct build *b, struct rs_error *err)
{
	const struct vox_plan *p = &b->g->plan;
	const int *n = p->room;
	const ptrdiff_t sy = p->n[0], sz = (ptrdiff_t)p->n[0] * p->n[1];
	struct slabs sl;
	int failed = 0;

	if (slabs_open(&sl, n[2], err))
		return err ? err->code : RS_ENOMEM;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
	for (int k = 0; k < n[2]; k++) {
		const struct tri *hint = NULL;

		for (int j = 0; j < n[1]; j++)
			for (int i0 = 0; i0 < n[0]; i0 += 8) {
				/* eight cells at once: the air ones with a solid neighbour. Past the
				 * room's end the bytes are the halo's, never air; the halo also keeps
				 * every neighbour inside the array. */
				const uint8_t *c8 = cell(b, i0, j, k);
				uint64_t m = air8(c8) & ~(air8(c8 - 1) & air8(c8 + 1) & air8(c8 - sy) &
							  air8(c8 + sy) & air8(c8 - sz) & air8(c8 + sz));

				for (; m && !failed; m &= m - 1) {
					const int c[3] = { i0 + __builtin_ctzll(m) / 8, j, k };
					struct vox_wall *w = slab_next(&sl, k);

					if (!w) {
						failed = 1;
						break;
					}
					cell_walls(b, c, &hint, w);
				}
			}
	}
	return slabs_join(&sl, b->g, failed, "boundary cells", err);
}

/* ---- the fcc lattice (docs/physics.md, "FCC walls in carved rooms") --------------------- */

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
	const int *r = b->g->plan.room;
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
 * material of the surface responsible, as face_wall() finds it (the last shape holding
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
	if (shape_between(geo, xc, xs, mid, n, material)) {
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
		const struct tri *t = nearest_tri(b, mid, *hint);

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
	const struct vox_plan *p = &b->g->plan;
	int K = 0, slots = 0;

	memset(wall, 0, sizeof(*wall));
	memset(wall->material, VOX_NO_WALL, sizeof(wall->material));
	wall->cell = vox_index(p, c[0] + p->halo, c[1] + p->halo, c[2] + p->halo);
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

/*
 * The fcc lattice's walls, slab by slab, joined in cell order, and its class bytes: air nodes
 * with at least one link to another air node are VOX_AIR (the kinds follow), every other
 * cell VOX_PAD; then the column heights and the node counts.
 */
static int fcc_walls(struct build *b, struct rs_error *err)
{
	struct vox_grid *g = b->g;
	struct vox_plan *p = &g->plan;
	const int *n = p->room;
	struct slabs sl;
	size_t nodes = 0;
	int failed = 0;

	if (slabs_open(&sl, n[2], err))
		return err ? err->code : RS_ENOMEM;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
	for (int k = 0; k < n[2]; k++) {
		const struct tri *hint = NULL;

		for (int j = 0; j < n[1] && !failed; j++)	/* nodes: i + j + k even in the array */
			for (int i = (j + k + p->halo) & 1; i < n[0]; i += 2) {
				const int c[3] = { i, j, k };
				struct vox_wall w, *at;
				int K;

				if (!is_air(*cell(b, i, j, k)))
					continue;
				K = node_walls(b, c, &hint, &w);
				if (K == 12)
					continue;
				if (K == 0) {	/* no link to the air: no node (no air node reads it) */
					*cell(b, i, j, k) = 0;
					continue;
				}
				if (!(at = slab_next(&sl, k))) {
					failed = 1;
					break;
				}
				*at = w;
			}
	}
	if (slabs_join(&sl, g, failed, "boundary nodes", err))
		return err ? err->code : RS_ENOMEM;
#pragma omp parallel for schedule(static) reduction(+ : nodes)
	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++) {
				uint8_t *c = &g->cls[vox_index(p, i, j, k)];
				const int h = p->halo;
				const int room = i >= h && i < h + n[0] && j >= h && j < h + n[1] &&
						 k >= h && k < h + n[2];

				*c = room && (i + j + k) % 2 == 0 && is_air(*c) ? VOX_AIR : VOX_PAD;
				nodes += *c == VOX_AIR;
			}
	vox_column_heights(g);
	p->boundary = g->nwalls;
	p->air = nodes - g->nwalls;
	p->padding = vox_nodes(p) - nodes;
	return 0;
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
 * cell_walls(). */
static int read_voxel_file(struct build *b, struct rs_error *err)
{
	const struct room_voxel_file *vf = b->room->geo.voxels;
	const int *n = b->g->plan.room;
	uint8_t *air = malloc((size_t)n[0] * (size_t)n[1]);
	int rc = 0;

	if (!air)
		return rs_fail(err, RS_ENOMEM, "out of memory for a slab of the voxel file");
	if (!(b->file = vf->open(b->room, err))) {
		free(air);
		return err ? err->code : RS_EIO;
	}
	for (int k = 0; k < n[2] && !rc; k++) {
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
static int make_base(struct build *b, struct rs_error *err)
{
	const struct vox_plan *p = &b->g->plan;

	memset(b->g->cls, VOX_PAD, p->cells);
	if (b->room->geo.has_box) {	/* the box [0, L]: nodes strictly inside it */
		const double *L = b->room->geo.box;

		for (int k = 0; k < p->room[2]; k++)
			for (int j = 0; j < p->room[1]; j++)
				for (int i = 0; i < p->room[0]; i++) {
					const double x = node_at(b, 0, i), y = node_at(b, 1, j);
					const double z = node_at(b, 2, k);

					*cell(b, i, j, k) = x > 0 && x < L[0] && y > 0 && y < L[1] &&
							    z > 0 && z < L[2] ? B_BASE : 0;
				}
		return 0;
	}
	if (b->room->geo.mesh.ntri)
		return load_triangles(b, err) || mesh_inside(b, err) || leak_check(b, err) ||
		       make_bins(b, err) ? (err ? err->code : RS_EINPUT) : 0;
	return b->room->geo.voxels_path[0] ? read_voxel_file(b, err) : 0;
}

struct vox_grid *vox_build_shaped(const struct room *room, struct rs_error *err)
{
	struct build b = { .room = room };

	if (!(b.g = vox_alloc(room, err)))
		return NULL;
	b.g->carved = 1;
	if (make_base(&b, err))
		goto out_free;
	apply_shapes(&b);
	if (b.g->plan.fcc ? fcc_walls(&b, err) : make_walls(&b, err))
		goto out_free;
	if (!b.g->plan.fcc)
		finish(b.g);
	if (vox_set_kinds(b.g, room, err))
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
