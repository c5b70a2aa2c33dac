/*
 * run_ckpt.c - a run's checkpoints and --resume (run.h; docs/cli.md, "Checkpoints").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "../common/hash.h"
#include "../solver/signal.h"

static void fingerprint(struct run *r);

/* What this rank's checkpoint is made of, at source s and the engine's step. */
static void ckpt_describe(struct run *r, int s, struct ckpt_meta *m)
{
	const struct vox_plan *g = r->window ? &r->window->plan : &r->plan.grid;
	size_t values, bstates, bW;

	fingerprint(r);
	memset(m, 0, sizeof(*m));
	snprintf(m->room, sizeof(m->room), "%s", r->room->name);
	snprintf(m->scheme, sizeof(m->scheme), "%s", r->plan.stencil.name);
	snprintf(m->engine, sizeof(m->engine), "%s", r->engine_name);
	for (int a = 0; a < 3; a++)
		m->n[a] = g->n[a];
	m->h = g->h;
	m->dt = r->plan.dt;
	m->precision = r->room->precision;
	m->steps = r->plan.steps;
	m->nsamples = (long long)r->plan.nsamples;
	m->nsources = r->room->nsources;
	m->nreceivers = r->nrows;	/* the rows of signals, the spatial receivers' too */
	for (int q = 0; q < r->npoints; q++)
		m->nrec += r->rec_index[q] >= 0;
	m->rank = r->part.rank;
	m->ranks = r->part.size;
	m->grid_hash = r->grid_hash;
	m->points_hash = r->points_hash;
	m->source = s;
	m->step = fdtd_steps(r->engine);
	fdtd_state_sizes(r->engine, &values, &bstates, &bW);
	m->values = (long long)values;
	m->bstates = (long long)bstates;
	m->bW = (long long)bW;
	m->frames = (long long)fdtd_frames_size(r->engine);
}

static void ckpt_free(struct ckpt_data *d)
{
	free(d->completed);
	free(d->rec);
	free(d->cur);
	free(d->prev);
	free(d->bstate);
	free(d->bW);
	free(d->frames);
	memset(d, 0, sizeof(*d));
}

/* Buffers for the arrays of m (signals borrowed from the run on rank 0). */
static int ckpt_alloc(const struct ckpt_meta *m, struct ckpt_data *d, struct rs_error *err)
{
	const size_t bytes = (size_t)m->values * (size_t)m->precision;

	memset(d, 0, sizeof(*d));
	d->completed = calloc((size_t)m->nsources, sizeof(long long));
	d->rec = malloc((size_t)(m->nrec ? m->nrec : 1) * (size_t)(m->step + 1) * sizeof(double));
	d->cur = malloc(bytes ? bytes : 1);
	d->prev = malloc(bytes ? bytes : 1);
	if (m->bstates) {
		d->bstate = malloc((size_t)m->bstates * (size_t)m->precision);
		d->bW = malloc((size_t)(m->bW ? m->bW : 1) * (size_t)m->precision);
	}
	if (m->frames)
		d->frames = malloc((size_t)m->frames * sizeof(float));
	if (!d->completed || !d->rec || !d->cur || !d->prev ||
	    (m->bstates && (!d->bstate || !d->bW)) || (m->frames && !d->frames)) {
		ckpt_free(d);
		return rs_fail(err, RS_ENOMEM, "out of memory for a checkpoint (%.0f MB)",
			       2e-6 * (double)bytes);
	}
	return 0;
}

/*
 * Write a checkpoint of source s at the engine's step, after the snapshot and grid writers
 * have put everything up to it on the disk; every rank its own file, each moved into place
 * only when all were written.
 */
int run_checkpoint(struct run *r, int s, struct snapper *w, struct rs_error *err)
{
	struct ckpt_meta m;
	struct ckpt_data d;
	char path[ROOM_PATH_MAX + 64], size[32];
	const double t0 = app_now();
	int rc, e = 0;

	if (snapper_drain(w, err) || grids_sync(&r->grids, err))
		return err->code;
	ckpt_describe(r, s, &m);
	if (ckpt_alloc(&m, &d, err))
		return err->code;
	for (int q = 0, i = 0; q < r->npoints; q++)	/* the points it reads */
		if (r->rec_index[q] >= 0)
			memcpy(d.rec + (size_t)i++ * (size_t)(m.step + 1),
			       fdtd_receiver(r->engine, r->rec_index[q]),
			       (size_t)(m.step + 1) * sizeof(double));
	if (r->part.rank == 0) {
		for (int i = 0; i < m.nsources; i++)
			d.completed[i] = r->completed[i];
		d.signals = r->signals;	/* the finished sources' rows count */
	} else {
		free(d.completed);
		d.completed = NULL;
	}
	ckpt_path(path, sizeof(path), r->out, r->part.rank, 0);
	rc = fdtd_get_state(r->engine, d.cur, d.prev, d.bstate, d.bW) ||
			     (d.frames && fdtd_frames_get(r->engine, d.frames))
		     ? rs_fail(err, RS_EDEVICE, "checkpoint: %s", fdtd_error(r->engine))
		     : ckpt_write_tmp(path, &m, &d, err);
	ckpt_free(&d);
	if (part_any(&r->part, rc != 0)) {	/* all or none */
		ckpt_discard(path);
		return rc ? rc : rs_fail(err, RS_EIO, "checkpoint: another rank could not write its "
					 "file");
	}
	if ((rc = ckpt_commit(path, err)))
		e = 1;
	if (part_any(&r->part, e))
		return rc ? rc : rs_fail(err, RS_EIO, "checkpoint: another rank could not finish "
					 "its file");
	r->ckpt_last = app_now();
	r->ckpt_last_step = m.step;
	if (!r->quiet)
		fprintf(stderr, "roomsim: checkpoint at step %lld of %lld of source %s: %s (%s, "
			"%.1f s)\n", m.step, m.steps, r->room->sources[s].name, path,
			app_bytes(2.0 * (double)m.values * m.precision, size), app_now() - t0);
	return 0;
}

/* The class bytes of g, a hash of each layer's (on the threads) hashed in order. */
static uint64_t grid_hash(const struct vox_grid *g)
{
	const size_t layer = (size_t)g->plan.n[0] * g->plan.n[1];
	const int n = g->plan.n[2];
	uint64_t *each = malloc((size_t)n * sizeof(*each)), h;

	if (!each)	/* one pass instead */
		return rs_hash(RS_HASH_START, g->cls, g->plan.cells);
#pragma omp parallel for schedule(static)
	for (int k = 0; k < n; k++)
		each[k] = rs_hash(RS_HASH_START, g->cls + (size_t)k * layer, layer);
	h = rs_hash(RS_HASH_START, each, (size_t)n * sizeof(*each));
	free(each);
	return h;
}

/* What a checkpoint must match besides its sizes: the grid's classes (this rank's window in
 * a decomposed run) and the update's constants; the sources' positions and signals and the
 * receivers' positions. Made once, when a checkpoint is first written or read: hashing the
 * 4 kHz concert hall's class bytes and wall constants takes 1.2 to 1.5 s a rank. */
static void fingerprint(struct run *r)
{
	const struct room *room = r->room;
	double *sig;
	uint64_t h;

	if (r->fingerprinted)
		return;
	r->fingerprinted = 1;
	sig = malloc((size_t)r->plan.steps * sizeof(double));
	h = grid_hash(r->window ? r->window : r->grid);

	r->grid_hash = fdtd_fingerprint(r->engine, h);
	h = RS_HASH_START;
	for (int s = 0; s < room->nsources; s++) {
		h = rs_hash(h, room->sources[s].pos, sizeof(room->sources[s].pos));
		if (sig) {
			sig_source(&room->sources[s], r->plan.dt, (size_t)r->plan.steps, sig);
			h = rs_hash(h, sig, (size_t)r->plan.steps * sizeof(double));
		}
	}
	for (int q = 0; q < room->nreceivers; q++) {
		const int spatial[2] = { room->receivers[q].ambisonics, room->receivers[q].binaural };

		h = rs_hash(h, room->receivers[q].pos, sizeof(room->receivers[q].pos));
		h = rs_hash(h, spatial, sizeof(spatial));
	}
	r->points_hash = h;
	free(sig);
}

/* 1 when a checkpoint is due at this chunk's end (rank 0's clock decides for all). */
int run_checkpoint_due(struct run *r)
{
	int due = (r->ckpt_steps > 0 && fdtd_steps(r->engine) - r->ckpt_last_step >= r->ckpt_steps) ||
		  (r->ckpt_seconds > 0 && app_now() - r->ckpt_last >= r->ckpt_seconds);

	if (r->part.size > 1 && r->ckpt_seconds > 0)
		part_bcast(&r->part, &due, sizeof(due));
	return due && fdtd_steps(r->engine) < r->plan.steps;
}

/* Differences between the checkpoint's meta and this run's that forbid going on from it. */
static int ckpt_mismatch(const struct ckpt_meta *c, const struct ckpt_meta *m, char *why,
			 size_t len)
{
	if (c->ranks != m->ranks)
		snprintf(why, len, "it was written by %d rank(s), this run has %d", c->ranks,
			 m->ranks);
	else if (c->n[0] != m->n[0] || c->n[1] != m->n[1] || c->n[2] != m->n[2] || c->h != m->h)
		snprintf(why, len, "its grid is %lld x %lld x %lld cells of %g m, this room's %lld x "
			 "%lld x %lld of %g m", c->n[0], c->n[1], c->n[2], c->h, m->n[0], m->n[1],
			 m->n[2], m->h);
	else if (c->steps != m->steps || c->nsamples != m->nsamples)
		snprintf(why, len, "it runs %lld steps per source, this room %lld (duration)",
			 c->steps, m->steps);
	else if (c->grid_hash != m->grid_hash)
		snprintf(why, len, "the room's geometry or materials changed since");
	else if (c->points_hash != m->points_hash)
		snprintf(why, len, "its sources or receivers changed since");
	else if (strcmp(c->scheme, m->scheme) || c->precision != m->precision || c->dt != m->dt)
		snprintf(why, len, "it ran %s in float%d with a step of %g s, this room %s in "
			 "float%d with %g s", c->scheme, 8 * c->precision, c->dt, m->scheme,
			 8 * m->precision, m->dt);
	else if (c->nsources != m->nsources || c->nreceivers != m->nreceivers ||
		 c->nrec != m->nrec)
		snprintf(why, len, "it has %d source(s) and %d receiver(s), this room %d and %d",
			 c->nsources, c->nreceivers, m->nsources, m->nreceivers);
	else if (c->frames != m->frames)
		snprintf(why, len, "its band-limited snapshot frames differ (output.snapshots "
			 "changed since)");
	else if (c->values != m->values || c->bstates != m->bstates || c->bW != m->bW)
		snprintf(why, len, "its fields or wall states differ in size (another scheme or "
			 "materials)");
	else
		return 0;
	return 1;
}

/*
 * --resume: this rank's newest checkpoint, or the one before when any rank's newest is
 * missing, damaged or of another step; checked against this run. On rank 0 the finished
 * sources' signals and steps are loaded, and their air absorption made again.
 */
int run_resume_open(struct run *r, struct rs_error *err)
{
	struct ckpt_meta m;
	char why[256];
	int prev = 0, bad;

	ckpt_describe(r, 0, &m);
	for (prev = 0; prev < 2; prev++) {
		struct rs_error e = { 0 };
		long long at[2] = { -1, -1 };	/* rank 0's source and step */

		ckpt_path(r->resume_path, sizeof(r->resume_path), r->out, r->part.rank, prev);
		bad = ckpt_read_meta(r->resume_path, &r->resumed, &e) != 0;
		if (!bad) {
			at[0] = r->resumed.source;
			at[1] = r->resumed.step;
		}
		part_bcast(&r->part, at, sizeof(at));	/* rank 0's file decides the step */
		bad |= r->resumed.source != at[0] || r->resumed.step != at[1];
		if (!part_any(&r->part, bad))
			break;
		if (prev == 0 && !r->quiet && !bad)
			fprintf(stderr, "roomsim: another rank's newest checkpoint is not usable; going "
				"on from the ones before\n");
		else if (prev == 0 && !r->quiet)
			fprintf(stderr, "roomsim: %s; trying the checkpoint before\n", e.msg);
		if (prev == 1)
			return bad ? rs_fail(err, RS_EINPUT, "--resume: no usable checkpoint in %s "
					     "(%s; valid: a directory a run with output.checkpoint "
					     "or --checkpoint wrote into, or leave --resume out)",
					     r->out, e.msg[0] ? e.msg : "the ranks' files disagree")
				   : rs_fail(err, RS_EINPUT, "--resume: the ranks' checkpoints in "
					     "%s disagree", r->out);
	}
	m.source = r->resumed.source;
	m.step = r->resumed.step;
	/* an earlier build's checkpoint of one process: its hash took the class bytes in one pass */
	if (r->resumed.grid_hash != m.grid_hash && !r->window &&
	    fdtd_fingerprint(r->engine, rs_hash(RS_HASH_START, r->grid->cls, r->plan.grid.cells)) ==
		    r->resumed.grid_hash)
		m.grid_hash = r->resumed.grid_hash;
	if (ckpt_mismatch(&r->resumed, &m, why, sizeof(why)))
		return rs_fail(err, RS_EINPUT, "--resume: %s does not fit this run: %s (valid: the "
			       "same room file and settings, or leave --resume out to start "
			       "again)", r->resume_path, why);
	if (r->part.rank == 0) {
		struct ckpt_data d = { 0 };
		long long *done = calloc((size_t)m.nsources, sizeof(long long));

		d.completed = done;
		d.signals = r->signals;
		if (!done)
			return rs_fail(err, RS_ENOMEM, "out of memory");
		if (ckpt_read(r->resume_path, &r->resumed, &d, err)) {
			free(done);
			return err->code;
		}
		for (int s = 0; s < m.nsources; s++)
			r->completed[s] = (long)done[s];
		free(done);
	}
	r->nsources_done = r->resumed.source;
	for (int s = 0; s < r->nsources_done; s++)
		if (run_absorb_air(r, s, err))
			return err->code;
	if (!r->quiet)
		fprintf(stderr, "roomsim: resuming from %s: source %s at step %lld of %lld (written "
			"by %s)\n", r->resume_path, r->room->sources[r->resumed.source].name,
			r->resumed.step, r->resumed.steps, r->resumed.engine);
	return 0;
}

/* The engine at the checkpoint's step of the source it was running (after fdtd_reset and
 * the source): fields, wall states, step, this rank's receivers so far. */
int run_resume_engine(struct run *r, struct rs_error *err)
{
	const struct ckpt_meta *m = &r->resumed;
	struct ckpt_data d;
	int rc = 0;

	if (ckpt_alloc(m, &d, err))
		return err->code;
	free(d.completed);
	d.completed = NULL;
	if (ckpt_read(r->resume_path, m, &d, err))
		rc = err->code;
	if (!rc && (fdtd_set_state(r->engine, (long)m->step, d.cur, d.prev, d.bstate, d.bW) ||
		    (d.frames && fdtd_frames_set(r->engine, d.frames))))
		rc = rs_fail(err, RS_EDEVICE, "resume: %s", fdtd_error(r->engine));
	for (int q = 0, i = 0; !rc && q < r->npoints; q++)
		if (r->rec_index[q] >= 0 &&
		    fdtd_set_receiver(r->engine, r->rec_index[q],
				      d.rec + (size_t)i++ * (size_t)(m->step + 1), (size_t)m->step + 1))
			rc = rs_fail(err, RS_EINTERNAL, "resume: %s", fdtd_error(r->engine));
	ckpt_free(&d);
	return rc;
}
