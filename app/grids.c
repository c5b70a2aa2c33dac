/* grids.c - a run's receiver grids and the stream of their samples (grids.h). */
#include "grids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The floor of a decomposed run, or of a grid whose slab axis is not z (geometry/receivers.h,
 * vox_floor_line): each line's first room cell along the room's z in the whole grid of
 * `layers` z layers, the least over the ranks' windows (INT32_MAX: none). Without `scan`
 * (no grid stands over the floor) every line has none.
 */
static int32_t *floors(const struct vox_grid *w, int layers, const struct part *pt, int scan)
{
	const struct vox_plan *p = &w->plan;
	const int gz = room_grid_axis(p->slab, 2);
	const size_t lines = vox_floor_lines(p, layers);
	int32_t *f = malloc(lines * sizeof(*f));

	if (!f)
		return NULL;
	for (size_t c = 0; c < lines; c++)
		f[c] = INT32_MAX;
	if (!scan)	/* the same on every rank */
		return f;
	if (gz == 2)	/* the columns' */
		for (size_t c = 0; c < lines; c++)
			f[c] = w->kstop[c] < w->kstart[c] ? INT32_MAX : w->kstart[c] + w->zbase;
	for (int k = 0; gz != 2 && k < p->n[2]; k++) {	/* the window's layers, across */
		const int o = gz == 1 ? 0 : 1;

		if (k + w->zbase < 0 || k + w->zbase >= layers)
			continue;
		for (int i = 0; i < p->n[o]; i++) {
			int c[3] = { 0, 0, k };

			c[o] = i;
			for (c[gz] = 0; c[gz] < p->n[gz]; c[gz]++)
				if (w->cls[vox_index(p, c[0], c[1], k)] != VOX_PAD)
					break;
			if (c[gz] < p->n[gz]) {
				const int first = c[gz];

				c[2] = k + w->zbase;
				f[vox_floor_line(p, c)] = first;
			}
		}
	}
	if (pt && pt->size > 1)
		part_min_ints(pt, f, lines);
	return f;
}

/*
 * A decomposed run's grid points: each rank keeps those its window decides, and all take
 * every point some rank kept, in the lattice's order, with the position of the first rank
 * that kept it (every rank computes the same).
 */
static int gather_points(struct grid_points *p, const struct part *pt, struct rs_error *err)
{
	const size_t total = (size_t)p->dims[0] * p->dims[1];
	int *who = malloc(total * sizeof(int));
	double *pos = calloc(total * 3, sizeof(double));
	size_t n = 0;

	if (!who || !pos || total > (size_t)INT32_MAX ||
	    !(p->pos = realloc(p->pos, (total + 1) * sizeof(*p->pos))) ||
	    !(p->ij = realloc(p->ij, (total + 1) * sizeof(*p->ij)))) {
		free(who);
		free(pos);
		return rs_fail(err, RS_ENOMEM, "out of memory for a receiver grid's %zu points", total);
	}
	for (size_t q = 0; q < total; q++)
		who[q] = INT32_MAX;
	for (size_t q = 0; q < p->n; q++)
		who[p->ij[q][0] + (size_t)p->dims[0] * p->ij[q][1]] = pt->rank;
	part_min_ints(pt, who, total);
	for (size_t q = 0; q < p->n; q++) {
		const size_t at = p->ij[q][0] + (size_t)p->dims[0] * p->ij[q][1];

		if (who[at] == pt->rank)
			memcpy(pos + 3 * at, p->pos[q], 3 * sizeof(double));
	}
	part_sum_doubles(pt, pos, total * 3);	/* one term each: exact */
	for (size_t at = 0; at < total; at++) {
		if (who[at] == INT32_MAX)
			continue;
		memcpy(p->pos[n], pos + 3 * at, 3 * sizeof(double));
		p->ij[n][0] = (int)(at % (size_t)p->dims[0]);
		p->ij[n][1] = (int)(at / (size_t)p->dims[0]);
		n++;
	}
	p->n = n;
	free(who);
	free(pos);
	return 0;
}

int grids_make(struct run_grids *g, const struct room *room, const struct vox_grid *vg,
	       int layers, const struct part *pt, struct rs_error *err)
{
	const int split = pt && pt->size > 1, turned = vg->plan.slab != 2;
	int32_t *floor = NULL;
	size_t at = 0;
	int over_floor = 0;

	for (int i = 0; i < room->ngrids; i++)
		over_floor |= room->grids[i].axis < 0 && !strcmp(room->grids[i].surface, "floor");

	memset(g, 0, sizeof(*g));
	if (!room->ngrids)
		return 0;
	g->pts = calloc((size_t)room->ngrids, sizeof(*g->pts));
	g->desc = calloc((size_t)room->ngrids, sizeof(*g->desc));
	g->kind = calloc((size_t)room->ngrids, sizeof(*g->kind));
	if (!g->pts || !g->desc || !g->kind ||
	    ((split || (turned && over_floor)) && !(floor = floors(vg, layers, pt, over_floor))))
		return rs_fail(err, RS_ENOMEM, "out of memory for the receiver grids");
	for (int i = 0; i < room->ngrids; i++) {
		const struct room_grid *rg = &room->grids[i];
		int rc = grid_points_make(room, rg, vg, floor, layers, &g->pts[i], err);

		if (!rc && (!split || !(rc = gather_points(&g->pts[i], pt, err))) && floor &&
		    !g->pts[i].n)
			rc = grid_points_none(room, rg, (size_t)g->pts[i].dims[0] *
						      g->pts[i].dims[1], err);
		if (rc) {
			grid_points_free(&g->pts[i]);	/* g->n counts only the grids made */
			free(floor);
			return rc;
		}
		g->n++;
		g->total += g->pts[i].n;
		if (rg->axis >= 0)
			snprintf(g->kind[i], sizeof(g->kind[i]), "plane %c = %g m", 'x' + rg->axis,
				 rg->at);
		else
			snprintf(g->kind[i], sizeof(g->kind[i]), "over %s + %g m", rg->surface,
				 rg->height);
		g->desc[i] = (struct grid_desc){ rg->name, &g->pts[i], g->kind[i], rg->wavs };
	}
	free(floor);
	if (!(g->pos = malloc(g->total * 3 * sizeof(double))))
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu grid points", g->total);
	for (int i = 0; i < g->n; i++) {
		memcpy(g->pos + 3 * at, g->pts[i].pos, g->pts[i].n * 3 * sizeof(double));
		at += g->pts[i].n;
	}
	return 0;
}

int grids_split(struct run_grids *g, const struct part *pt, const struct vox_grid *vg,
		 struct rs_error *err)
{
	if (!g->n || pt->size == 1)
		return 0;
	g->part = pt;
	g->owner = malloc(g->total * sizeof(int));
	g->mpos = malloc(g->total * 3 * sizeof(double));
	if (!g->owner || !g->mpos)
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu grid points", g->total);
	for (size_t q = 0; q < g->total; q++) {
		int lo, hi;

		vox_point_layers(vg, g->pos + 3 * q, &lo, &hi);
		g->owner[q] = part_owner(pt, &vg->plan, lo);
		if (g->owner[q] == pt->rank) {
			memcpy(g->mpos + 3 * g->nmine++, g->pos + 3 * q, 3 * sizeof(double));
		}
	}
	return 0;
}

static void *writer(void *arg)
{
	struct run_grids *g = arg;

	pthread_mutex_lock(&g->mu);
	for (;;) {
		const int j = g->next;
		int rc;

		while (!g->queued[j] && !g->done)
			pthread_cond_wait(&g->cv, &g->mu);
		if (!g->queued[j])
			break;
		pthread_mutex_unlock(&g->mu);
		rc = g->rc ? 0 : gridf_append(g->file, g->buf[j], g->first[j], g->count[j], &g->err);
		pthread_mutex_lock(&g->mu);
		g->rc = g->rc ? g->rc : rc;
		g->queued[j] = 0;
		g->next = 1 - j;
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int grids_begin(struct run_grids *g, struct fdtd *engine, const char *path, size_t nsamples,
		double fs, int resume, struct rs_error *err)
{
	if (!g->n)
		return 0;
	g->engine = engine;
	g->fill = g->next = 0;
	g->queued[0] = g->queued[1] = 0;
	g->done = g->rc = 0;
	g->taken = fdtd_steps(engine);	/* 0, or the step a resumed run goes on from */
	if (g->part) {	/* this rank's points, and only rank 0 writes */
		if (!g->lbuf && g->nmine &&
		    !(g->lbuf = fdtd_host_alloc(engine, g->nmine * GRID_WINDOW)))
			return rs_fail(err, RS_ENOMEM, "out of memory for grid samples");
		if (g->nmine && fdtd_grid_set(engine, g->mpos, g->nmine, GRID_WINDOW))
			return rs_fail(err, RS_ENOMEM, "receiver grids: %s", fdtd_error(engine));
		if (g->part->rank > 0)
			return 0;
	}
	for (int i = 0; i < 2; i++)
		if (!g->buf[i] && !(g->buf[i] = fdtd_host_alloc(engine, g->total * GRID_WINDOW)))
			return rs_fail(err, RS_ENOMEM, "out of memory for grid samples (%zu points)",
				       g->total);
	if (!g->part && fdtd_grid_set(engine, g->pos, g->total, GRID_WINDOW))
		return rs_fail(err, RS_ENOMEM, "receiver grids: %s", fdtd_error(engine));
	if (!(g->file = resume ? gridf_reopen(path, g->desc, g->n, nsamples, err)
			       : gridf_open(path, g->desc, g->n, nsamples, fs, GRID_WINDOW, err)))
		return err->code;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	if (pthread_create(&g->thread, NULL, writer, g))
		return rs_fail(err, RS_EINTERNAL, "cannot start the grid writer thread");
	g->started = 1;
	return 0;
}

long grids_room(const struct run_grids *g)
{
	return g->n ? GRID_WINDOW - (fdtd_steps(g->engine) - g->taken) : 1L << 40;
}

/*
 * A decomposed run's take: every rank takes its points' samples since the last take, and
 * rank 0 gathers them into out ([step][point] of every point). Returns the steps.
 */
static long take_split(struct run_grids *g, float *out, long *first, struct rs_error *err)
{
	const struct part *pt = g->part;
	const long count = fdtd_steps(g->engine) - g->taken;
	float *tmp = NULL;

	*first = g->taken + 1;
	if (g->nmine && fdtd_grid_take(g->engine, g->lbuf, first) != count)
		return rs_fail(err, RS_EDEVICE, "receiver grids: %s", fdtd_error(g->engine)), -1;
	for (int q = 0; q < pt->size; q++) {
		size_t n = 0;

		for (size_t p = 0; p < g->total; p++)
			n += g->owner[p] == q;
		if (pt->rank == 0 && q > 0 && n && !(tmp = malloc(n * (size_t)count * sizeof(float))))
			return rs_fail(err, RS_ENOMEM, "out of memory for grid samples"), -1;
		if (n)
			part_send0(pt, q, g->lbuf, tmp, n * (size_t)count * sizeof(float));
		if (pt->rank == 0 && n) {	/* q's points, in the order of g->pos */
			const float *from = q ? tmp : g->lbuf;
			size_t i = 0;

			for (size_t p = 0; p < g->total; p++)
				if (g->owner[p] == q) {
					for (long s = 0; s < count; s++)
						out[(size_t)s * g->total + p] = from[(size_t)s * n + i];
					i++;
				}
		}
		free(tmp);
		tmp = NULL;
	}
	return count;
}

int grids_take(struct run_grids *g, struct rs_error *err)
{
	const int k = g->fill;
	long first, count;
	int rc;

	if (!g->n || fdtd_steps(g->engine) == g->taken)
		return 0;
	if (g->part && g->part->rank > 0) {	/* its share, to rank 0 */
		if (take_split(g, NULL, &first, err) < 0)
			return err->code;
		g->taken = fdtd_steps(g->engine);
		return 0;
	}
	pthread_mutex_lock(&g->mu);
	while (g->queued[k])
		pthread_cond_wait(&g->cv, &g->mu);
	rc = g->rc;
	pthread_mutex_unlock(&g->mu);
	if (rc)
		return rs_fail(err, rc, "%s", g->err.msg);
	if ((count = g->part ? take_split(g, g->buf[k], &first, err)
			     : fdtd_grid_take(g->engine, g->buf[k], &first)) < 0)
		return err->code ? err->code : rs_fail(err, RS_EDEVICE, "receiver grids: %s",
						       fdtd_error(g->engine));
	g->taken = first + count - 1;
	pthread_mutex_lock(&g->mu);
	g->first[k] = first;
	g->count[k] = count;
	g->queued[k] = 1;
	g->fill = 1 - k;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

int grids_sync(struct run_grids *g, struct rs_error *err)
{
	int rc;

	if (!g->n)
		return 0;
	if ((rc = grids_take(g, err)) || (g->part && g->part->rank > 0))
		return rc;
	pthread_mutex_lock(&g->mu);
	while (g->queued[0] || g->queued[1])
		pthread_cond_wait(&g->cv, &g->mu);
	rc = g->rc;
	pthread_mutex_unlock(&g->mu);
	if (rc)
		return rs_fail(err, rc, "%s", g->err.msg);
	return gridf_flush(g->file, err);
}

int grids_end(struct run_grids *g, long completed, struct rs_error *err)
{
	int rc = 0;

	if (!g->n)
		return 0;
	if (g->part && g->part->rank > 0)	/* its last share; rank 0 writes */
		return grids_take(g, err);
	if (g->started) {
		rc = grids_take(g, err);
		pthread_mutex_lock(&g->mu);
		g->done = 1;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->thread, NULL);
		pthread_mutex_destroy(&g->mu);
		pthread_cond_destroy(&g->cv);
		g->started = 0;
		if (!rc && g->rc)
			rc = rs_fail(err, g->rc, "%s", g->err.msg);
	}
	if (gridf_close(g->file, completed, rc ? NULL : err) && !rc)
		rc = RS_EIO;
	g->file = NULL;
	return rc;
}

void grids_free(struct run_grids *g)
{
	for (int i = 0; i < 2; i++)
		if (g->buf[i])
			fdtd_host_free(g->engine, g->buf[i]);
	if (g->lbuf)
		fdtd_host_free(g->engine, g->lbuf);
	free(g->owner);
	free(g->mpos);
	for (int i = 0; i < g->n; i++)
		grid_points_free(&g->pts[i]);
	free(g->pts);
	free(g->desc);
	free(g->kind);
	free(g->pos);
	memset(g, 0, sizeof(*g));
}
