/*
 * measure.c - a mesh's own volume and surface area, to check a voxelisation against
 * (roomsim voxelize; docs/physics.md, "Voxelisation").
 *
 * The enclosed volume of a closed component is |sum over its triangles of
 * v0 . (v1 x v2) / 6| (the divergence theorem) once its triangles face one way: each is
 * turned to agree with its neighbours across every edge two triangles share (a model whose
 * walls face out and ceiling in is common), and a mesh that cannot be oriented so (a
 * Moebius-like sheet) gets no volume (NAN), rather than a wrong one. Components
 * nested in an odd number of others (a pillar or a balcony inside the hall's shell) are
 * solid, so their volume is subtracted; nesting is decided by the parity of a vertical ray
 * from points on the component through the other components.
 */
#include "build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROBES 9	/* points per component whose majority decides its nesting */
#define NEST_WORK 2e9	/* probe-triangle tests beyond which nesting is not worked out */

static size_t find(size_t *parent, size_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

struct vkey {
	double p[3];
	size_t id;
};

static int vkey_cmp(const void *a, const void *b)
{
	const struct vkey *x = a, *y = b;
	int c = memcmp(x->p, y->p, sizeof(x->p));

	return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Does the vertical ray up from x cross triangle (a, b, c) of the mesh? (x, y) even-odd. */
static int crosses_up(const double *a, const double *b, const double *c, const double x[3])
{
	const double *v[3] = { a, b, c };
	double w[3], sum = 0, z = 0;
	int pos = 0, neg = 0;

	for (int i = 0; i < 3; i++) {
		const double *p = v[(i + 1) % 3], *q = v[(i + 2) % 3];

		w[i] = (q[0] - p[0]) * (x[1] - p[1]) - (q[1] - p[1]) * (x[0] - p[0]);
		pos += w[i] > 0;
		neg += w[i] < 0;
	}
	if ((pos && neg) || (!pos && !neg))
		return 0;
	for (int i = 0; i < 3; i++) {
		sum += w[i];
		z += w[i] * v[i][2];
	}
	return z / sum > x[2];
}

struct edge {
	size_t lo, hi;		/* welded vertices, lo < hi */
	size_t t;		/* the triangle */
	int up;			/* 1: the triangle runs lo -> hi */
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->lo != y->lo)
		return (x->lo > y->lo) - (x->lo < y->lo);
	if (x->hi != y->hi)
		return (x->hi > y->hi) - (x->hi < y->hi);
	return (x->t > y->t) - (x->t < y->t);
}

/* Sorted edges i and i + 1 are the same edge, which no other triangle runs. */
static int shared(const struct edge *e, size_t ne, size_t i)
{
	return e[i].lo == e[i + 1].lo && e[i].hi == e[i + 1].hi && e[i].lo != e[i].hi &&
	       (i == 0 || e[i - 1].lo != e[i].lo || e[i - 1].hi != e[i].hi) &&
	       (i + 2 >= ne || e[i + 2].lo != e[i].lo || e[i + 2].hi != e[i].hi);
}

/*
 * flip[t] = 1 for the triangles to turn so that every edge two triangles share is run in
 * opposite directions by them (weld: each vertex's first vertex of equal position). Returns
 * -1 when no such choice exists or memory lacks; edges of one or of three or more triangles
 * (an open or branching surface) do not constrain.
 */
static int orient(const struct mesh *m, const size_t *weld, unsigned char *flip)
{
	const size_t nt = m->ntri, ne = 3 * nt;
	struct edge *e = malloc(ne * sizeof(*e));
	size_t *start = calloc(nt + 1, sizeof(*start)), *adj = malloc(2 * ne * sizeof(*adj));
	size_t *queue = malloc(nt * sizeof(*queue));
	unsigned char *seen = calloc(nt, 1), *same = malloc(2 * ne);
	int rc = -1;

	if (!e || !start || !adj || !queue || !seen || !same)
		goto out;
	for (size_t t = 0; t < nt; t++)
		for (int c = 0; c < 3; c++) {
			const size_t a = weld[m->tri[t][c]], b = weld[m->tri[t][(c + 1) % 3]];

			e[3 * t + c] = (struct edge){ a < b ? a : b, a < b ? b : a, t, a < b };
		}
	qsort(e, ne, sizeof(*e), edge_cmp);
	for (size_t i = 0; i + 1 < ne; i++)	/* adjacency of the edges two triangles share */
		if (shared(e, ne, i)) {
			start[e[i].t + 1]++;
			start[e[i + 1].t + 1]++;
		}
	for (size_t t = 0; t < nt; t++)
		start[t + 1] += start[t];
	{
		size_t *at = malloc(nt * sizeof(*at));

		if (!at)
			goto out;
		memcpy(at, start, nt * sizeof(*at));
		for (size_t i = 0; i + 1 < ne; i++)
			if (shared(e, ne, i)) {
				const int s = e[i].up == e[i + 1].up;	/* one of them turns */

				same[at[e[i].t]] = (unsigned char)s;
				adj[at[e[i].t]++] = e[i + 1].t;
				same[at[e[i + 1].t]] = (unsigned char)s;
				adj[at[e[i + 1].t]++] = e[i].t;
			}
		free(at);
	}
	for (size_t r = 0; r < nt; r++) {	/* each connected sheet from its first triangle */
		size_t head = 0, tail = 0;

		if (seen[r])
			continue;
		seen[r] = 1;
		flip[r] = 0;
		queue[tail++] = r;
		while (head < tail) {
			const size_t t = queue[head++];

			for (size_t k = start[t]; k < start[t + 1]; k++) {
				const unsigned char f = flip[t] ^ same[k];

				if (!seen[adj[k]]) {
					seen[adj[k]] = 1;
					flip[adj[k]] = f;
					queue[tail++] = adj[k];
				} else if (flip[adj[k]] != f) {
					goto out;	/* cannot be oriented */
				}
			}
		}
	}
	rc = 0;
out:
	free(e);
	free(start);
	free(adj);
	free(queue);
	free(seen);
	free(same);
	return rc;
}

static double tri_area(const struct mesh *m, size_t t)
{
	const double *a = m->v[m->tri[t][0]], *b = m->v[m->tri[t][1]], *c = m->v[m->tri[t][2]];
	const double e1[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
	const double e2[3] = { c[0] - a[0], c[1] - a[1], c[2] - a[2] };
	const double n[3] = { e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
			      e1[0] * e2[1] - e1[1] * e2[0] };

	return 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

void vox_mesh_measure(const struct mesh *m, double *volume, double *area)
{
	const size_t nt = m->ntri;
	size_t *parent = malloc(m->nv * sizeof(*parent)), *comp = malloc(nt * sizeof(*comp));
	size_t *weld = malloc(m->nv * sizeof(*weld));
	struct vkey *key = malloc(m->nv * sizeof(*key));
	double *vol = calloc(m->nv, sizeof(*vol));
	unsigned char *flip = calloc(nt ? nt : 1, 1);

	*volume = *area = 0;
	if (!parent || !comp || !key || !vol || !weld || !flip)
		goto out;
	/* weld vertices of equal position, then join the vertices of each triangle */
	for (size_t i = 0; i < m->nv; i++) {
		memcpy(key[i].p, m->v[i], sizeof(key[i].p));
		key[i].id = i;
		parent[i] = i;
	}
	qsort(key, m->nv, sizeof(*key), vkey_cmp);
	for (size_t i = 0; i < m->nv; i++) {
		const int dup = i > 0 && !memcmp(key[i].p, key[i - 1].p, sizeof(key[i].p));

		weld[key[i].id] = dup ? weld[key[i - 1].id] : key[i].id;
		if (dup)
			parent[find(parent, key[i].id)] = find(parent, key[i - 1].id);
	}
	if (orient(m, weld, flip)) {
		*volume = NAN;
		for (size_t t = 0; t < nt; t++)
			*area += tri_area(m, t);
		goto out;
	}
	for (size_t t = 0; t < nt; t++)
		for (int c = 1; c < 3; c++)
			parent[find(parent, m->tri[t][c])] = find(parent, m->tri[t][0]);
	for (size_t t = 0; t < nt; t++) {	/* a turned triangle runs a, c, b */
		const double *a = m->v[m->tri[t][0]], *b = m->v[m->tri[t][flip[t] ? 2 : 1]],
			     *c = m->v[m->tri[t][flip[t] ? 1 : 2]];

		comp[t] = find(parent, m->tri[t][0]);
		*area += tri_area(m, t);
		vol[comp[t]] += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] -
				 b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
	}
	/* each component's volume, signed by the parity of its nesting in the others */
	for (size_t r = 0, n = 0; r < m->nv; r++)
		if (find(parent, r) == r && vol[r] && (double)++n * PROBES * (double)nt > NEST_WORK) {
			*volume = NAN;
			goto out;
		}
	for (size_t r = 0; r < m->nv; r++) {
		int votes = 0, probes = 0;
		size_t count = 0, step, seen = 0;

		if (find(parent, r) != r || !vol[r])
			continue;
		for (size_t t = 0; t < nt; t++)
			count += comp[t] == r;
		step = count / PROBES + 1;
		for (size_t t = 0; t < nt && probes < PROBES; t++) {
			double x[3] = { 0, 0, 0 };
			int inside = 0;

			if (comp[t] != r || seen++ % step)
				continue;
			for (int c = 0; c < 3; c++)
				for (int d = 0; d < 3; d++)
					x[d] += m->v[m->tri[t][c]][d] / 3;
			for (size_t q = 0; q < nt; q++)
				if (comp[q] != r)
					inside ^= crosses_up(m->v[m->tri[q][0]], m->v[m->tri[q][1]],
							     m->v[m->tri[q][2]], x);
			votes += inside;
			probes++;
		}
		*volume += (2 * votes > probes ? -1 : 1) * fabs(vol[r]);
	}
out:
	free(parent);
	free(comp);
	free(weld);
	free(key);
	free(vol);
	free(flip);
}
