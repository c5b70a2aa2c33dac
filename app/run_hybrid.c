/*
 * run_hybrid.c - the geometric part of a hybrid run (run.h; docs/physics.md, "Full-band
 * responses"): on rank 0, a thread of its own traces every source through the geometric
 * engine (solver/ga/ga.h) while the wave engine steps, and the outputs join each receiver's
 * two responses at the crossover.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "../solver/convolve.h"
#include "../solver/directivity.h"
#include "../solver/ga/ga.h"
#include "../solver/signal.h"

/* Source s: its image sources and rays, each receiver's unit response at the WAV rate. */
static int trace_source(struct run *r, int s, struct rs_error *err)
{
	const struct room *room = r->room;
	const struct room_hybrid *hy = &room->hybrid;
	const int nrec = room->nreceivers;
	const size_t nw = r->plan.wav_frames;
	double (*rec)[3] = malloc((size_t)(nrec ? nrec : 1) * sizeof(*rec));
	struct ga_image **im = calloc((size_t)(nrec ? nrec : 1), sizeof(*im));
	size_t *n = calloc((size_t)(nrec ? nrec : 1), sizeof(*n));
	int *spatial = calloc((size_t)(nrec ? nrec : 1), sizeof(*spatial));
	struct ga_hist h = { 0 };
	double at[3];
	int rc;

	if (!rec || !im || !n || !spatial) {
		free(rec);
		free(im);
		free(n);
		free(spatial);
		return rs_fail(err, RS_ENOMEM, "out of memory for the geometric engine");
	}
	for (int q = 0; q < nrec; q++)
		memcpy(rec[q], room->receivers[q].pos, sizeof(rec[q]));
	run_source_pos(r, &room->sources[s], at);
	run_spatial_flags(r, spatial);
	ga_directivity(r->ga, &room->sources[s],
		       room->sources[s].balloon ? DIR_LEAD * r->plan.dt : 0);
	rc = ga_images(r->ga, at, (const double (*)[3])rec, nrec, r->ga_order, im, n, err);
	if (!rc)
		rc = ga_trace_spatial(r->ga, at, (const double (*)[3])rec, nrec,
				      spatial, hy->receiver_radius, room->duration,
				      hy->rays, r->ga_order, hy->seed + (unsigned long)s, &h, err);
	for (int q = 0; q < nrec && !rc; q++) {
		r->ga_images[(size_t)s * nrec + q] = n[q];
		rc = ga_synth(r->ga, im[q], n[q], &h, q, room->wav_rate, nw,
			      hy->seed + (unsigned long)s, r->ga_ir + ((size_t)s * nrec + q) * nw,
			      err);
	}
	if (!rc && r->nsp)
		rc = run_spatial_synth(r, s, im, n, &h, err);
	if (!rc) {
		r->ga_escaped[s] = h.escaped;
		r->ga_reflections[s] = h.reflections;
	}
	for (int q = 0; q < nrec; q++)
		free(im[q]);
	free(im);
	free(n);
	free(rec);
	free(spatial);
	ga_hist_free(&h);
	return rc;
}

static void *tracer(void *arg)
{
	struct run *r = arg;
	struct rs_error err = { 0 };
	int rc = 0;

	for (int s = 0; s < r->room->nsources && !rc; s++) {
		const double t0 = app_now();
		int stop;

		pthread_mutex_lock(&r->ga_mu);
		stop = r->ga_stop;
		pthread_mutex_unlock(&r->ga_mu);
		if (stop)
			break;
		rc = trace_source(r, s, &err);
		pthread_mutex_lock(&r->ga_mu);
		r->ga_seconds += app_now() - t0;
		if (rc) {
			r->ga_rc = rc;
			r->ga_err = err;
		} else {
			r->ga_done = s + 1;
		}
		pthread_cond_broadcast(&r->ga_cv);
		pthread_mutex_unlock(&r->ga_mu);
	}
	return NULL;
}

int run_hybrid_open(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t pairs = (size_t)room->nsources * room->nreceivers;
	const size_t nw = r->plan.wav_frames;
	const double t0 = app_now();

	if (!room->hybrid.on)
		return 0;
	/* every rank checks the room (a hole is the same bad input to all); rank 0 traces */
	if (ga_open(room, &r->ga, err))
		return err->code;
	if (r->part.rank > 0)
		return 0;
	r->ga_order = ga_order(r->ga);
	r->ga_ir = calloc(pairs * nw + 1, sizeof(double));
	r->geo = calloc(pairs * nw + 1, sizeof(double));
	r->full = calloc(pairs * nw + 1, sizeof(double));
	r->ga_images = calloc(pairs + 1, sizeof(size_t));
	r->ga_escaped = calloc((size_t)room->nsources + 1, sizeof(long));
	r->ga_reflections = calloc((size_t)room->nsources + 1, sizeof(double));
	if (!r->ga_ir || !r->geo || !r->full || !r->ga_images || !r->ga_escaped ||
	    !r->ga_reflections)
		return rs_fail(err, RS_ENOMEM, "out of memory for the geometric responses");
	if (!r->quiet) {
		size_t ntri;
		int np;
		double v, a;

		ga_describe(r->ga, &ntri, &np, &v, &a);
		fprintf(stderr, "roomsim: hybrid: crossover %.0f Hz; geometric engine: %zu "
			"triangles in %d planes, images to order %d, %ld rays per source, "
			"receivers of radius %g m (scene built in %.2f s)\n", room->hybrid.crossover,
			ntri, np, r->ga_order, room->hybrid.rays,
			room->hybrid.receiver_radius, app_now() - t0);
	}
	return 0;
}

int run_hybrid_start(struct run *r, struct rs_error *err)
{
	if (!r->ga || r->part.rank > 0)
		return 0;
	pthread_mutex_init(&r->ga_mu, NULL);
	pthread_cond_init(&r->ga_cv, NULL);
	if (pthread_create(&r->ga_thread, NULL, tracer, r))
		return rs_fail(err, RS_ENOMEM, "cannot start the geometric engine's thread");
	r->ga_started = 1;
	return 0;
}

/* Source s's geometric responses with its signal at the WAV rate (r->geo). */
static int with_signal(struct run *r, int s, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t nw = r->plan.wav_frames;
	double *src = malloc(nw * sizeof(double)), *y = malloc(2 * nw * sizeof(double));
	int rc = 0;

	if (!src || !y) {
		free(src);
		free(y);
		return rs_fail(err, RS_ENOMEM, "out of memory joining the responses");
	}
	sig_source(&room->sources[s], 1.0 / room->wav_rate, nw, src);
	for (int q = 0; q < room->nreceivers && !rc; q++) {
		const size_t at = ((size_t)s * room->nreceivers + q) * nw;

		if (conv_ola(src, nw, r->ga_ir + at, nw, y))
			rc = rs_fail(err, RS_ENOMEM, "out of memory joining the responses");
		else
			memcpy(r->geo + at, y, nw * sizeof(double));
	}
	if (!rc)
		rc = run_spatial_signal(r, s, src, err);
	free(src);
	free(y);
	return rc;
}

int run_hybrid_wait(struct run *r, int s, struct rs_error *err)
{
	/* every source up to s: a resumed run writes the WAVs of those before it too */
	while (r->ga_started && r->ga_joinable <= s) {
		const int k = r->ga_joinable;
		int rc;

		pthread_mutex_lock(&r->ga_mu);
		if (r->ga_done <= k && !r->ga_rc && !r->quiet)	/* the wave part was faster */
			fprintf(stderr, "roomsim: waiting for the geometric engine to finish source "
				"%s\n", r->room->sources[k].name);
		while (r->ga_done <= k && !r->ga_rc)
			pthread_cond_wait(&r->ga_cv, &r->ga_mu);
		rc = r->ga_done > k ? 0 : r->ga_rc;
		if (rc)
			*err = r->ga_err;
		pthread_mutex_unlock(&r->ga_mu);
		if (rc || (rc = with_signal(r, k, err)))
			return rc;
		r->ga_joinable = k + 1;
	}
	return 0;
}

int run_hybrid_join(struct run *r, int s, int q, double *wav, size_t frames,
		    struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t nw = r->plan.wav_frames;
	const size_t at = ((size_t)s * room->nreceivers + q) * nw;

	if (ga_crossover(wav, r->geo + at, frames, room->wav_rate, room->hybrid.crossover,
			 ga_mixing_time(r->ga), err))
		return err->code;
	memset(r->full + at, 0, nw * sizeof(double));
	memcpy(r->full + at, wav, (frames < nw ? frames : nw) * sizeof(double));
	return 0;
}

void run_hybrid_stop(struct run *r)
{
	if (!r->ga_started || r->ga_joined)
		return;
	pthread_mutex_lock(&r->ga_mu);	/* the source it traces now is the last */
	r->ga_stop = 1;
	pthread_mutex_unlock(&r->ga_mu);
	pthread_join(r->ga_thread, NULL);
	r->ga_joined = 1;
}

void run_hybrid_close(struct run *r)
{
	if (r->ga_started) {
		run_hybrid_stop(r);
		pthread_mutex_destroy(&r->ga_mu);
		pthread_cond_destroy(&r->ga_cv);
		r->ga_started = 0;
	}
	ga_close(r->ga);
	r->ga = NULL;
	free(r->ga_ir);
	free(r->geo);
	free(r->full);
	free(r->ga_images);
	free(r->ga_escaped);
	free(r->ga_reflections);
}
