/*
 * ga_images.c - image sources (ga.h): the source mirrored in the room's planes, order by
 * order, each image kept for the receivers whose path to it reflects on the walls' own
 * triangles in turn with nothing in between (docs/physics.md, "Image sources").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ga_impl.h"

#define MAX_ORDER 16

struct list {
	struct ga_image *a;
	size_t n, cap;
};

struct walk {
	const struct ga *g;
	const double (*rec)[3];
	int nrec, order;
	int seq[MAX_ORDER + 1];		/* seq[k]: the plane of reflection k (1-based) */
	double img[MAX_ORDER + 1][3];	/* img[k]: the image after k reflections */
	struct list *out;		/* [nrec] */
	double count;			/* candidates seen */
	int oom;
};

static void mirror(const struct ga_plane *p, const double x[3], double y[3])
{
	const double s = ga_dot(p->n, x) - p->d;

	for (int d = 0; d < 3; d++)
		y[d] = x[d] - 2 * s * p->n[d];
}

/* May the image x be mirrored in plane p: on its air side, not in it. */
static int faces(const struct ga_plane *p, const double x[3], double tol)
{
	const double s = ga_dot(p->n, x) - p->d;

	return p->side ? p->side * s > tol : fabs(s) > tol;
}

/* The path from receiver q to the image of order k, back through the walls to the source:
 * 1 with its arrival in *a (amplitudes with the walls', the air's and the distance's loss)
 * when every reflection lands on its plane's triangles and no wall is in the way. */
static int path(const struct walk *w, int q, int k, struct ga_image *a)
{
	const struct ga *g = w->g;
	const double eps = 1e-6 * g->scale;
	double x[3], amp[GA_BANDS], dist = 0;

	memcpy(x, w->rec[q], sizeof(x));
	for (int b = 0; b < GA_BANDS; b++)
		amp[b] = 1;
	for (int j = k; j >= 0; j--) {
		double d[3], len;
		struct ga_hit h;

		for (int i = 0; i < 3; i++)
			d[i] = w->img[j][i] - x[i];
		len = sqrt(ga_dot(d, d));
		if (!(len > eps))
			return 0;
		for (int i = 0; i < 3; i++)
			d[i] /= len;
		if (j == k) {
			dist = len;
			memcpy(a->dir, d, sizeof(a->dir));
		}
		if (j == 0) {	/* the last leg: nothing between here and the source */
			if (ga_cast(g, x, d, j == k ? 0 : eps, len * (1 - 1e-7), &h))
				return 0;
			const double from[3] = { -d[0], -d[1], -d[2] };	/* the source's way out */
			a->order = k;
			a->t = dist / g->c + g->lead;
			for (int b = 0; b < GA_BANDS; b++)
				a->amp[b] = ga_pattern(g, from, b) * amp[b] *
					    exp(-0.5 * g->air[b] * dist) / dist;
			return 1;
		}
		if (!ga_cast(g, x, d, j == k ? 0 : eps, len, &h) || g->tri[h.tri].plane != w->seq[j])
			return 0;
		{
			const int m = g->tri[h.tri].material;

			for (int b = 0; b < GA_BANDS; b++)
				amp[b] *= sqrt((1 - g->alpha[m][b]) * (1 - g->scat[m][b]));
		}
		{	/* the reflection point in double precision: where the leg meets the plane
			 * (Embree's hit is in float) */
			const struct ga_plane *pl = &g->planes[w->seq[j]];
			const double t = (pl->d - ga_dot(pl->n, x)) / ga_dot(pl->n, d);

			for (int i = 0; i < 3; i++)
				x[i] += t * d[i];
		}
	}
	return 0;
}

static int push(struct list *l, const struct ga_image *a)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct ga_image *v = realloc(l->a, cap * sizeof(*v));

		if (!v)
			return -1;
		l->a = v;
		l->cap = cap;
	}
	l->a[l->n++] = *a;
	return 0;
}

/* Visit the image of order k (img[k] set) and its children. */
static void visit(struct walk *w, int k)
{
	const struct ga *g = w->g;
	const double tol = 1e-9 * g->scale;

	w->count++;
	for (int q = 0; w->out && q < w->nrec && !w->oom; q++) {
		struct ga_image a;

		if (path(w, q, k, &a) && push(&w->out[q], &a))
			w->oom = 1;
	}
	if (k == w->order || w->count > GA_MAX_IMAGES)
		return;
	for (int p = 0; p < g->nplanes && !w->oom; p++) {
		if ((k && p == w->seq[k]) || !faces(&g->planes[p], w->img[k], tol))
			continue;
		w->seq[k + 1] = p;
		mirror(&g->planes[p], w->img[k], w->img[k + 1]);
		visit(w, k + 1);
	}
}

double ga_image_candidates(const struct ga *g, const double src[3], int order)
{
	struct walk w = { .g = g, .order = order };

	memcpy(w.img[0], src, sizeof(w.img[0]));
	visit(&w, 0);
	return w.count;
}

int ga_order(const struct ga *g)
{
	const struct room *room = g->room;
	int order = room->hybrid.image_order;

	while (!room->hybrid.order_given && order > 1) {
		double most = 0;

		for (int s = 0; s < room->nsources; s++)
			most = fmax(most, ga_image_candidates(g, room->sources[s].pos, order));
		if (most <= GA_AUTO_IMAGES)
			break;
		order--;
	}
	return order;
}

static int by_time(const void *pa, const void *pb)
{
	const struct ga_image *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->order != b->order)
		return a->order - b->order;
	for (int d = 0; d < 3; d++)
		if (a->dir[d] != b->dir[d])
			return a->dir[d] < b->dir[d] ? -1 : 1;
	return 0;
}

int ga_images(const struct ga *g, const double src[3], const double (*rec)[3], int nrec,
	      int order, struct ga_image **out, size_t *n, struct rs_error *err)
{
	const double tol = 1e-9 * g->scale;
	const double cand = ga_image_candidates(g, src, order);
	struct list *all = calloc((size_t)nrec * (size_t)(g->nplanes + 1), sizeof(*all));
	int oom = 0;

	for (int q = 0; q < nrec; q++) {
		out[q] = NULL;
		n[q] = 0;
	}
	if (cand > GA_MAX_IMAGES) {
		free(all);
		return room_at(err, g->room, g->room->hybrid.order_at, "hybrid.image_order",
			       "%d planes make more than %ld candidate image sources to order %d "
			       "(valid: a lower order; roomsim info counts them)", g->nplanes,
			       GA_MAX_IMAGES, order);
	}
	if (!all)
		return rs_fail(err, RS_ENOMEM, "out of memory for image sources");
	/* the direct sound in list 0, each first plane's subtree in a list of its own */
#pragma omp parallel for schedule(dynamic, 1) reduction(|| : oom)
	for (int p = -1; p < g->nplanes; p++) {
		struct walk w = { .g = g, .rec = rec, .nrec = nrec, .order = order,
				  .out = all + (size_t)(p + 1) * nrec };

		memcpy(w.img[0], src, sizeof(w.img[0]));
		if (p < 0) {
			struct ga_image a;

			for (int q = 0; q < nrec && !w.oom; q++)
				if (path(&w, q, 0, &a) && push(&w.out[q], &a))
					w.oom = 1;
		} else if (order > 0 && faces(&g->planes[p], src, tol)) {
			w.seq[1] = p;
			mirror(&g->planes[p], src, w.img[1]);
			visit(&w, 1);
		}
		oom = oom || w.oom;
	}
	for (int q = 0; q < nrec && !oom; q++) {
		size_t total = 0;

		for (int p = 0; p <= g->nplanes; p++)
			total += all[(size_t)p * nrec + q].n;
		if (total && !(out[q] = malloc(total * sizeof(**out)))) {
			oom = 1;
			break;
		}
		for (int p = 0; p <= g->nplanes; p++) {
			const struct list *l = &all[(size_t)p * nrec + q];

			if (l->n)
				memcpy(out[q] + n[q], l->a, l->n * sizeof(*l->a));
			n[q] += l->n;
		}
		qsort(out[q], n[q], sizeof(**out), by_time);
	}
	for (size_t i = 0; i < (size_t)nrec * (size_t)(g->nplanes + 1); i++)
		free(all[i].a);
	free(all);
	if (oom) {
		for (int q = 0; q < nrec; q++) {
			free(out[q]);
			out[q] = NULL;
			n[q] = 0;
		}
		return rs_fail(err, RS_ENOMEM, "out of memory for image sources");
	}
	return 0;
}
