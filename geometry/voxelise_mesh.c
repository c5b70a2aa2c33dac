/*
 * voxelise_mesh.c - the inside of a mesh by ray parity with a vote (voxelise.c, step 1).
 */
#include "voxelise.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

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
int vx_load_triangles(struct build *b, struct rs_error *err)
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

int vx_crossing(const struct tri *t, int a, double pu, double pv, double *at)
{
	return crossing(t, a, pu, pv, at);
}

/* The room cells m with node in [lo, hi] along axis d: [*m0, *m1], empty when m1 < m0. */
void vx_node_range(const struct build *b, int d, double lo, double hi, int *m0, int *m1)
{
	const double h = b->whole.h, o = b->room->origin[d];

	*m0 = (int)fmax(0, ceil((lo - o) / h - 0.5));
	*m1 = (int)fmin(b->whole.room[d] - 1, floor((hi - o) / h - 0.5));
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

/* Every ray along axis a through the nodes of the layers built (along z: all of them): where
 * it crosses the surface, sorted. */
static int axis_rays(struct build *b, int a, struct rays *out, struct rs_error *err)
{
	const struct vox_plan *p = &b->whole;
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

			vx_node_range(b, u, tr->lo[u], tr->hi[u], &u0, &u1);
			vx_node_range(b, v, tr->lo[v], tr->hi[v], &v0, &v1);
			if (u == 2) {	/* rays along x and y: those of the layers built */
				u0 = u0 > b->k0 ? u0 : b->k0;
				u1 = u1 < b->k1 ? u1 : b->k1;
			} else if (v == 2) {
				v0 = v0 > b->k0 ? v0 : b->k0;
				v1 = v1 < b->k1 ? v1 : b->k1;
			}
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
	const int n = b->whole.room[a];
	double f = floor((c - b->room->origin[a]) / b->whole.h - 0.5) + 1;
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
 * The rays along z of the layers built, shared by the threads: their parity at layer b->k0
 * (the crossings passed there or below) and validity per column, as rows of W words, and the
 * columns whose ray is passed at each later layer k <= b->k1 (its events), in ev[at[m] ..
 * at[m + 1]) for m = k - b->k0 - 1, in no set order (they are flips).
 */
struct zrays {
	uint64_t *par, *ok;
	size_t *at, *ev;
};

static void zrays_free(struct zrays *z)
{
	free(z->par);
	free(z->ok);
	free(z->at);
	free(z->ev);
}

static int zrays_make(struct build *b, const struct rays *ry, struct zrays *z)
{
	const int *n = b->whole.room, W = (n[0] + WORD - 1) / WORD, L = b->k1 - b->k0;
	const size_t cols = (size_t)n[1] * W;
	size_t *fill = malloc(((size_t)L + 1) * sizeof(*fill));

	z->par = calloc(cols, 8);
	z->ok = calloc(cols, 8);
	z->at = calloc((size_t)L + 2, sizeof(*z->at));
	z->ev = NULL;
	if (!z->par || !z->ok || !z->at || !fill) {
		free(fill);
		return -1;
	}
	for (int pass = 0; pass < 2; pass++) {
#pragma omp parallel for schedule(dynamic, 16)
		for (int j = 0; j < n[1]; j++)	/* a row's words are its own */
			for (int i = 0; i < n[0]; i++) {
				const size_t r = (size_t)i + (size_t)n[0] * j;

				if (!pass && (ry[2].at[r + 1] - ry[2].at[r]) % 2 == 0)
					flip(z->ok + (size_t)j * W, i);
				for (size_t q = ry[2].at[r]; q < ry[2].at[r + 1]; q++) {
					const int k = passed_at(b, 2, ry[2].cross[q]);
					size_t e;

					if (k <= b->k0 && !pass)
						flip(z->par + (size_t)j * W, i);
					if (k <= b->k0 || k > b->k1)
						continue;
					if (!pass) {
#pragma omp atomic
						z->at[k - b->k0]++;
						continue;
					}
#pragma omp atomic capture
					e = fill[k - b->k0 - 1]++;
					z->ev[e] = r;
				}
			}
		if (pass)
			break;
		for (int m = 0; m < L; m++) {	/* counted at m + 1: at[m] starts bucket m */
			z->at[m + 1] += z->at[m];
			fill[m] = z->at[m];
		}
		if (!(z->ev = malloc((z->at[L] + 1) * sizeof(*z->ev)))) {
			free(fill);
			return -1;
		}
	}
	free(fill);
	return 0;
}

/* Flip the parities zpar of the columns whose z-ray is passed at layer k (b->k0 < k). */
static void z_flips(const struct build *b, const struct zrays *z, uint64_t *zpar, int k)
{
	const int *n = b->whole.room, W = (n[0] + WORD - 1) / WORD;
	const int m = k - b->k0 - 1;

	for (size_t e = z->at[m]; e < z->at[m + 1]; e++)
		flip(zpar + z->ev[e] / (size_t)n[0] * W, (int)(z->ev[e] % (size_t)n[0]));
}

/*
 * The votes of the three rays through the nodes of z-slabs [k0, k1), as bitsets: a ray's
 * parity changes only where it crosses the surface, so each ray's bits are flipped at its
 * crossings (events) and carried from node to node, and the majority of three is bitwise.
 * A ray with an odd number of crossings in all (it passed a hole) does not vote. A node thus
 * costs a few bit operations; the crossings cost the rest.
 */
static int inside_slabs(struct build *b, const struct rays *ry, const struct zrays *z, int k0,
			int k1)
{
	const int *n = b->whole.room, W = (n[0] + WORD - 1) / WORD;
	const size_t cols = (size_t)n[1] * W;
	/* z: parity per column, rows of W words; y: per slab, one row of W words */
	uint64_t *zpar = malloc(cols * 8), *ypar = calloc((size_t)W, 8);
	const uint64_t *zok = z->ok;
	uint64_t *yok = calloc((size_t)W, 8), *x = calloc((size_t)W + 1, 8);
	size_t *yat = calloc((size_t)n[1] + 2, sizeof(size_t)), ycap = 0;
	int *yev = NULL, rc = 0;
	uint64_t bytes[256] = { 0 };	/* 8 bits to 8 class bytes of B_BASE or 0 */

	if (!zpar || !ypar || !yok || !x || !yat) {
		rc = -1;
		goto out;
	}
	for (int v = 0; v < 256; v++)
		for (int q = 0; q < 8; q++)
			bytes[v] |= (uint64_t)(v >> q & 1 ? B_BASE : 0) << (8 * q);
	/* z-rays: the parity at slab k0, from b->k0's */
	memcpy(zpar, z->par, cols * 8);
	for (int k = b->k0 + 1; k <= k0; k++)
		z_flips(b, z, zpar, k);
	for (int k = k0; k < k1; k++) {
		size_t nev = 0;

		if (k > k0)	/* the z-crossings passed at this slab */
			z_flips(b, z, zpar, k);
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
	free(ypar);
	free(yok);
	free(x);
	free(yat);
	free(yev);
	return rc;
}

/* The mesh's inside: a node is inside when at least two of its three rays say so. */
int vx_mesh_inside(struct build *b, struct rs_error *err)
{
	const long layers = b->k1 - b->k0 + 1;
	struct rays ry[3] = { { 0 } };
	struct zrays z = { 0 };
	int rc = 0;

	for (int a = 0; a < 3 && !rc; a++)
		rc = axis_rays(b, a, &ry[a], err);
	if (!rc && zrays_make(b, ry, &z))
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the rays' votes");
	if (!rc) {
#pragma omp parallel reduction(| : rc)
		{
			const int t = omp_get_thread_num(), nt = omp_get_num_threads();
			const int k0 = b->k0 + (int)(layers * t / nt);
			const int k1 = b->k0 + (int)(layers * (t + 1) / nt);

			if (k0 < k1 && inside_slabs(b, ry, &z, k0, k1))
				rc = 1;
		}
		if (rc)
			rc = rs_fail(err, RS_ENOMEM, "out of memory for the rays' votes");
	}
	zrays_free(&z);
	for (int a = 0; a < 3; a++) {
		free(ry[a].at);
		free(ry[a].cross);
	}
	return rc;
}
