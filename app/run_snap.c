/*
 * run_snap.c - a run's snapshot planes and their writer thread (run.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "../solver/signal.h"

void run_free_planes(struct snap_plane *pl, int n)
{
	for (int i = 0; pl && i < n; i++)
		free((void *)pl[i].room);
	free(pl);
}

/* a x b bytes or floats into b x a */
static void flip(const void *in, void *out, int a, int b, size_t size)
{
	for (int i = 0; i < a; i++)
		for (int j = 0; j < b; j++)
			memcpy((char *)out + ((size_t)j * a + i) * size,
			       (const char *)in + ((size_t)i * b + j) * size, size);
}

/* The snapshot planes of the room, with their grid index along the normal and their room
 * cells. */
struct snap_plane *run_make_planes(const struct run *r, int *index)
{
	const struct room *room = r->room;
	const struct vox_plan *g = &r->plan.grid;
	struct snap_plane *pl = calloc((size_t)room->nplanes, sizeof(*pl));
	static const char axes[] = "xyz";

	if (!pl)
		return NULL;
	for (int i = 0; i < room->nplanes; i++) {
		/* the room's axes (the file's) and the grid's: the normal, the slower and the
		 * faster in-plane axis */
		const int a = room->planes[i].axis, u = a == 2 ? 1 : 2, v = a == 0 ? 1 : 0;
		const int ga = room_grid_axis(g->slab, a), gu = ga == 2 ? 1 : 2;
		/* room node m lies at (m + 1/2) h, or at m h where the walls pass through nodes */
		const double first = g->fcc ? 0 : 0.5;
		long m = lround((room->planes[i].at - room->origin[a]) / g->h - first);
		unsigned char *mask;

		m = m < 0 ? 0 : m >= g->room[ga] ? g->room[ga] - 1 : m;
		index[i] = (int)m + g->halo;	/* past the halo */
		pl[i].axis = a;
		pl[i].grid_axis = ga;
		pl[i].swap = room_axis_of(g->slab, gu) != u;
		pl[i].at = room->origin[a] + (m + first) * g->h;
		pl[i].n1 = g->room[room_grid_axis(g->slab, u)];
		pl[i].n2 = g->room[room_grid_axis(g->slab, v)];
		for (int d = 0; d < 3; d++)
			pl[i].origin[d] = room->origin[d] + first * g->h;
		pl[i].origin[a] = pl[i].at;
		snprintf(pl[i].name, sizeof(pl[i].name), "%c_%.3f", axes[a], room->planes[i].at);
		if (r->plane_room) {	/* gathered, in the file's layout */
			if ((mask = malloc((size_t)pl[i].n1 * pl[i].n2)))
				memcpy(mask, r->plane_room[i], (size_t)pl[i].n1 * pl[i].n2);
		} else if ((mask = run_plane_room(r, i, index[i])) && pl[i].swap) {
			unsigned char *t = malloc((size_t)pl[i].n1 * pl[i].n2);

			if (t)
				flip(mask, t, pl[i].n2, pl[i].n1, 1);
			free(mask);
			mask = t;
		}
		if (!mask) {
			run_free_planes(pl, i);
			return NULL;
		}
		pl[i].room = mask;
	}
	return pl;
}

/*
 * A frame is written only while the file system holds it uncompressed with SNAP_MARGIN to
 * spare (the file's own close and its .xmf), beyond the space kept for the WAVs and rirs.h5
 * (app_reserve): snapshots never take the space of the outputs that matter most, and the
 * file stays whole, with the frames written so far.
 */
#define SNAP_MARGIN (256 * 1024.0)

static int frame_fits(struct snapper *w, int p)
{
	const double need = 4.0 * w->planes[p].n1 * w->planes[p].n2 + SNAP_MARGIN;
	const double have = app_disk_avail(w->dir);
	char a[32], b[32];

	if (have < 0 || have >= need)
		return 0;
	return rs_fail(&w->err, RS_EIO, "%s: no space left on the device for the next snapshot "
		       "frame (%s free, %s needed); the file keeps the %ld frames written so far",
		       w->path, app_bytes(have, a), app_bytes(need, b), w->frames);
}

/* A job's frame in the file's layout: the engine's, or turned round into w->flip. */
static const float *plane_frame(struct snapper *w, const struct snap_job *job)
{
	const struct snap_plane *p = &w->planes[job->plane];

	if (!p->swap)
		return job->buf;
	flip(job->buf, w->flip, p->n2, p->n1, sizeof(float));
	return w->flip;
}

static void *snap_writer(void *arg)
{
	struct snapper *w = arg;

	for (;;) {
		struct snap_job *job;
		int rc;

		pthread_mutex_lock(&w->mu);
		while (!w->count && !w->done)
			pthread_cond_wait(&w->more, &w->mu);
		if (!w->count) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		job = &w->jobs[w->head];
		pthread_mutex_unlock(&w->mu);
		if ((rc = fdtd_plane_finish(w->engine, &job->copy)))
			rs_fail(&w->err, rc, "copying a snapshot plane: %s", fdtd_error(w->engine));
		else if (!w->rc && !(rc = frame_fits(w, job->plane)) &&
			 !(rc = snap_append(w->file, job->plane, plane_frame(w, job), job->t,
					    &w->err)))
			w->frames++;
		pthread_mutex_lock(&w->mu);
		w->rc = w->rc ? w->rc : rc;
		w->head = (w->head + 1) % w->cap;
		w->count--;
		pthread_cond_signal(&w->room);
		pthread_mutex_unlock(&w->mu);
	}
}

int snapper_start(struct snapper *w, struct fdtd *engine, struct snap_file *file,
		  const struct snap_plane *planes, int nplanes, size_t frame,
		  const char *dir, const char *path, struct rs_error *err)
{
	memset(w, 0, sizeof(*w));
	w->engine = engine;
	w->file = file;
	w->planes = planes;
	w->dir = dir;
	w->path = path;
	w->cap = nplanes * SNAP_BUFFERS;
	w->jobs = calloc((size_t)w->cap, sizeof(*w->jobs));
	w->flip = malloc(frame * sizeof(float));
	if (!w->jobs || !w->flip)
		return rs_fail(err, RS_ENOMEM, "out of memory for snapshot buffers");
	for (int i = 0; i < w->cap; i++)
		if (!(w->jobs[i].buf = fdtd_host_alloc(engine, frame)))
			return rs_fail(err, RS_ENOMEM, "out of memory for snapshot buffers");
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->more, NULL);
	pthread_cond_init(&w->room, NULL);
	if (pthread_create(&w->thread, NULL, snap_writer, w))
		return rs_fail(err, RS_EINTERNAL, "cannot start the snapshot writer thread");
	w->started = 1;
	return 0;
}

static int frame_fail(const struct run *r, struct rs_error *err)
{
	return rs_fail(err, RS_EDEVICE, "snapshot frame: %s", fdtd_error(r->engine));
}

/* This rank's share of snapshot plane p (axis, index as the engine counts them): the
 * newest level's, or with frame >= 0 band-limited frame `frame` (fdtd_frame_take). */
static int read_plane(const struct run *r, int p, int axis, int index, long frame, float *out)
{
	if (frame < 0) {
		fdtd_plane(r->engine, axis, index, out);
		return 0;
	}
	return fdtd_frame_take(r->engine, r->frame_p[p], frame, out) ? RS_EDEVICE : 0;
}

/*
 * A decomposed run's plane across `axis` at whole-grid index `index`, gathered into out on
 * rank 0 (n1 x n2 floats, fdtd_plane's layout; out is NULL on the others): a z plane from the
 * rank whose slab holds it, the rows of an x or y plane from each rank's own layers.
 */
static int plane_gather(const struct run *r, int p, int axis, int index, long frame, float *out,
			struct rs_error *err)
{
	const struct part *pt = &r->part;
	const struct vox_plan *g = &r->plan.grid, *w = &r->window->plan;
	const int n2 = g->room[axis == 0 ? 1 : 0];
	float *tmp;
	int first, last;

	if (axis == 2) {
		const int owner = part_owner(pt, g, index);
		const size_t bytes = (size_t)g->room[0] * g->room[1] * sizeof(float);

		int rc = 0;

		if (owner == pt->rank && owner == 0)
			return read_plane(r, p, 2, index - pt->base, frame, out) ? frame_fail(r, err)
										   : 0;
		if (owner == pt->rank || pt->rank == 0) {
			if (!(tmp = malloc(bytes)))
				return rs_fail(err, RS_ENOMEM, "out of memory for a snapshot");
			if (owner == pt->rank)
				rc = read_plane(r, p, 2, index - pt->base, frame, tmp);
			part_send0(pt, owner, tmp, out, bytes);
			free(tmp);
		}
		return rc ? frame_fail(r, err) : 0;
	}
	if (!(tmp = malloc((size_t)w->room[2] * n2 * sizeof(float))))
		return rs_fail(err, RS_ENOMEM, "out of memory for a snapshot");
	if (read_plane(r, p, axis, index, frame, tmp)) {	/* the window's layers, its rows */
		free(tmp);
		return frame_fail(r, err);
	}
	for (int q = 0; q < pt->size; q++) {
		part_slab(pt, g, q, &first, &last);
		if (q == 0 && pt->rank == 0 && out)
			memcpy(out, tmp + (size_t)(first - pt->win[0]) * n2,
			       (size_t)(last - first + 1) * n2 * sizeof(float));
		else
			part_send0(pt, q, tmp + (size_t)(pt->own[0] - pt->win[0]) * n2,
				   out ? out + (size_t)(first - g->halo) * n2 : NULL,
				   (size_t)(last - first + 1) * n2 * sizeof(float));
	}
	free(tmp);
	return 0;
}

/* Queue every plane of the current step (several ranks: gathered on rank 0 first). */
int snapper_queue(struct snapper *w, const struct run *r, const struct snap_plane *pl,
		  const int *index, long frame, struct rs_error *err)
{
	const double t = (double)frame * r->room->snap_every * r->plan.dt;
	const long sum = r->plan.frame_m > 0 ? frame : -1;	/* band-limited: the engine's sum */

	for (int p = 0; r->part.rank > 0 && p < r->room->nplanes; p++)	/* their share */
		if (plane_gather(r, p, pl[p].grid_axis, index[p], sum, NULL, err))
			return err->code;
	for (int p = 0; r->part.rank == 0 && p < r->room->nplanes; p++) {
		struct snap_job *job;
		int rc;

		pthread_mutex_lock(&w->mu);
		while (w->count == w->cap)
			pthread_cond_wait(&w->room, &w->mu);
		job = &w->jobs[(w->head + w->count) % w->cap];
		rc = w->rc;
		pthread_mutex_unlock(&w->mu);
		if (rc)
			return rs_fail(err, rc, "%s", w->err.msg);
		job->plane = p;
		job->t = t;
		job->copy.event = NULL;
		if (r->part.size > 1 ? plane_gather(r, p, pl[p].grid_axis, index[p], sum, job->buf, err)
		    : sum >= 0	     ? fdtd_frame_take(r->engine, r->frame_p[p], sum, job->buf)
				     : fdtd_plane_start(r->engine, pl[p].grid_axis, index[p], job->buf,
							&job->copy))
			return err->code ? err->code : rs_fail(err, RS_EDEVICE, "snapshot: %s",
							       fdtd_error(r->engine));
		pthread_mutex_lock(&w->mu);
		w->count++;
		pthread_cond_signal(&w->more);
		pthread_mutex_unlock(&w->mu);
	}
	return 0;
}

/* Wait until every queued frame is in the file (a checkpoint counts them); its error. */
int snapper_drain(struct snapper *w, struct rs_error *err)
{
	int rc;

	if (!w->started)
		return 0;
	pthread_mutex_lock(&w->mu);
	while (w->count)
		pthread_cond_wait(&w->room, &w->mu);
	rc = w->rc;
	pthread_mutex_unlock(&w->mu);
	return rc ? rs_fail(err, rc, "%s", w->err.msg) : 0;
}

/* Let the writer drain the queue, stop it, free the buffers; its first error if any. */
int snapper_stop(struct snapper *w, struct rs_error *err)
{
	int rc;

	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->done = 1;
		pthread_cond_signal(&w->more);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->more);
		pthread_cond_destroy(&w->room);
	}
	for (int i = 0; w->jobs && i < w->cap; i++)
		if (w->jobs[i].buf)
			fdtd_host_free(w->engine, w->jobs[i].buf);
	free(w->jobs);
	free(w->flip);
	rc = w->rc;
	if (rc && err)
		rs_fail(err, rc, "%s", w->err.msg);
	return rc;
}

int run_frames_setup(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t np = (size_t)room->nplanes;
	int *index = malloc(np * sizeof(int)), *axis = malloc(np * sizeof(int));
	int *local = malloc(np * sizeof(int)), n = 0, rc = 0;
	struct snap_plane *pl = NULL;
	double *h = NULL;

	r->frame_p = malloc(np * sizeof(int));
	if (!index || !axis || !local || !r->frame_p || !(pl = run_make_planes(r, index)) ||
	    sig_band_fir(room->fmax, r->plan.fs, &h) != r->plan.frame_m) {	/* the plan's taps */
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the snapshot frames");
		goto out;
	}
	for (size_t p = 0; p < np; p++) {
		int i = index[p];

		r->frame_p[p] = -1;
		if (r->part.size > 1 && pl[p].grid_axis == 2) {	/* a z plane: its slab's rank */
			if (part_owner(&r->part, &r->plan.grid, i) != r->part.rank)
				continue;
			i -= r->part.base;
		}
		r->frame_p[p] = n;
		axis[n] = pl[p].grid_axis;
		local[n++] = i;
	}
	if (n && fdtd_frames_setup(r->engine, n, axis, local, h, r->plan.frame_m,
				   room->snap_every))
		rc = rs_fail(err, RS_EDEVICE, "snapshot frames: %s", fdtd_error(r->engine));
out:
	run_free_planes(pl, room->nplanes);
	free(index);
	free(axis);
	free(local);
	free(h);
	return rc;
}
