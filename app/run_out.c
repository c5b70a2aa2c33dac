/*
 * run_out.c - a run's WAVs and rirs.h5, written after each source (run.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "../io/gridfile.h"
#include "../io/rirs.h"
#include "../io/wav.h"
#include "../solver/air.h"
#include "../solver/signal.h"
#include "../solver/wall.h"

int run_wave_wav(struct run *r, int s, double *raw, double *wav, int joined, size_t *nframes,
		 struct rs_error *err)
{
	const struct room *room = r->room;
	const struct room_source *src = &room->sources[s];
	/* WAVs of an interrupted source hold what was computed. */
	const double t_done = fmin(room->duration, r->completed[s] * r->plan.dt);
	const size_t frames = (size_t)llround(t_done * room->wav_rate);
	/* An impulse source's WAV is an impulse response: scale to unit in-band gain. */
	const double scale = src->signal == ROOM_SIG_IMPULSE ? r->plan.fs / room->wav_rate : 1;

	/* joined: the crossover's low branch band-limits the wave part instead of fmax's */
	wav_condition(raw, (size_t)r->completed[s] + 1, r->plan.fs, joined ? r->plan.fs : room->fmax,
		      room->wav_highpass);
	*nframes = frames;
	if (wav_resample(raw, (size_t)r->completed[s] + 1, r->plan.fs, room->wav_rate, wav, frames,
			 err))
		return err->code;
	for (size_t i = 0; i < frames; i++)
		wav[i] *= scale;
	return 0;
}

/* One WAV of source s from its raw signal (overwritten): its wave part, joined to its
 * geometric response when it is receiver q (>= 0) of a hybrid run, scaled by gain; written
 * to path unless path is NULL (the pass that finds the peak). */
static int wav_one(struct run *r, int s, int q, double *raw, double *wav, const char *path,
		   double gain, double *peak, struct rs_error *err)
{
	const struct room *room = r->room;
	const int join = q >= 0 && s < r->ga_joinable;
	size_t clipped, frames;
	int rc = run_wave_wav(r, s, raw, wav, join, &frames, err);

	if (!rc && join)
		rc = run_hybrid_join(r, s, q, wav, frames, err);
	for (size_t i = 0; i < frames && !rc; i++) {
		wav[i] *= gain;
		*peak = fmax(*peak, fabs(wav[i]));
	}
	if (rc || !path)
		return rc;
	rc = wav_write(path, wav, frames, room->wav_rate, room->wav_format, &clipped, err);
	r->wav_clipped += clipped;
	return rc;
}

/* Grid g's points of source s that ask for WAVs: each point's raw signal, with the air's
 * absorption when the room has it, through wav_one(). */
static int wav_grid(struct run *r, int s, int g, double *raw, double *wav, int write,
		    double gain, double *peak, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t ns = r->plan.nsamples;
	const struct air air = { room->temperature, room->humidity, room->pressure };
	char file[ROOM_PATH_MAX * 2], path[ROOM_PATH_MAX * 2], dset[ROOM_NAME_MAX + 8];
	int rc = 0;

	snprintf(file, sizeof(file), "%s/%s_grids.h5", r->out, room->sources[s].name);
	snprintf(dset, sizeof(dset), "%s/rir", room->grids[g].name);
	for (size_t q = 0; q < r->grids.pts[g].n && !rc; q++) {
		if ((rc = gridf_read(file, dset, q, 1, ns, raw, err)))
			break;
		if (room->air_absorption &&
		    air_apply(&air, room->c, r->plan.fs, raw, (size_t)r->completed[s] + 1))
			return rs_fail(err, RS_ENOMEM, "out of memory for the air's absorption");
		snprintf(path, sizeof(path), "%s/%s_%s_%zu.wav", r->out, room->sources[s].name,
			 room->grids[g].name, q);
		rc = wav_one(r, s, -1, raw, wav, write ? path : NULL, gain, peak, err);
	}
	return rc;
}

/* Render and write every WAV of the sources done so far, with one common gain. */
static int write_wavs(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t ns = r->plan.nsamples;
	double *raw = malloc(ns * sizeof(double));
	double *wav = malloc(r->plan.wav_frames * sizeof(double)), peak = 0, gain = 1;
	int rc = 0;

	if (!raw || !wav) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory rendering WAVs");
		goto out;
	}
	for (int pass = room->wav_normalize ? 0 : 1; pass < 2 && !rc; pass++) {
		if (pass == 1 && room->wav_normalize && peak > 0)
			gain = pow(10, -1 / 20.0) / peak;	/* loudest peak at -1 dBFS */
		r->wav_clipped = 0;
		for (int s = 0; s < r->nsources_done && !rc; s++) {
			for (int q = 0; q < room->nreceivers && !rc; q++) {
				char path[ROOM_PATH_MAX * 2];

				memcpy(raw, (r->air ? r->air : r->signals) +
						    ((size_t)s * r->nrows + q) * ns,
				       ns * sizeof(double));
				snprintf(path, sizeof(path), "%s/%s_%s.wav", r->out,
					 room->sources[s].name, room->receivers[q].name);
				rc = wav_one(r, s, q, raw, wav, pass ? path : NULL, gain, &peak,
					     err);
				if (!rc) {
					const double t0 = app_now();

					rc = run_spatial_wavs(r, s, q, pass, gain, &peak, err);
					r->sp_seconds[2] += app_now() - t0;
				}
			}
			for (int g = 0; g < room->ngrids && !rc; g++)
				if (room->grids[g].wavs && r->completed[s] > 0)
					rc = wav_grid(r, s, g, raw, wav, pass, gain, &peak, err);
		}
	}
out:
	free(raw);
	free(wav);
	return rc;
}

/* Source s's receiver signals with the air's absorption over the path (solver/air.h). */
int run_absorb_air(struct run *r, int s, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t ns = r->plan.nsamples;
	const struct air air = { room->temperature, room->humidity, room->pressure };

	for (int q = 0; r->air && q < r->nrows; q++) {
		const size_t at = ((size_t)s * r->nrows + q) * ns;

		memcpy(r->air + at, r->signals + at, ns * sizeof(double));
		if (air_apply(&air, room->c, r->plan.fs, r->air + at, (size_t)r->completed[s] + 1))
			return rs_fail(err, RS_ENOMEM, "out of memory for the air's absorption");
	}
	return 0;
}

static int write_rirs(struct run *r, struct rs_error *err)
{
	const size_t ns = r->plan.nsamples;
	char path[ROOM_PATH_MAX + 16];
	double *src = malloc((size_t)r->room->nsources * ns * sizeof(double));
	struct rirs_run meta = {
		.room = r->room, .plan = &r->plan.grid, .dt = r->plan.dt,
		.lambda = r->plan.lambda, .engine = r->engine_name, .signals = r->signals,
		.air = r->air, .source = src,
		.scheme = r->plan.stencil.name,
		.nsamples = ns, .completed = r->completed,
		.grids = r->grids.desc, .ngrids = r->grids.n,
	};
	const int nm = r->room->nmaterials, nq = r->room->nreceivers;
	/* the receivers' rows alone, when spatial receivers' rows follow them */
	double *rows = r->nrows > nq ? malloc((size_t)r->room->nsources * nq * ns *
					      (r->air ? 2 : 1) * sizeof(double) + 1) : NULL;
	double *area = calloc((size_t)nm, sizeof(double));
	double *alpha = malloc((size_t)nm * RIRS_BANDS * sizeof(double));
	double *src_full = r->ga_joinable > 0 ? malloc((size_t)r->room->nsources *
						       r->plan.wav_frames * sizeof(double)) : NULL;
	int rc;

	if (rows) {
		for (int k = 0; k < (r->air ? 2 : 1); k++)
			for (int s = 0; s < r->room->nsources; s++)
				memcpy(rows + ((size_t)k * r->room->nsources + s) * nq * ns,
				       (k ? r->air : r->signals) + (size_t)s * r->nrows * ns,
				       (size_t)nq * ns * sizeof(double));
		meta.signals = rows;
		meta.air = r->air ? rows + (size_t)r->room->nsources * nq * ns : NULL;
	} else if (r->nrows > nq) {
		return rs_fail(err, RS_ENOMEM, "out of memory writing rirs.h5");
	}
	/* each source's free-field pressure 1 m away, for roomsim analyze's G */
	for (int s = 0; src && s < r->room->nsources; s++)
		sig_source(&r->room->sources[s], r->plan.dt, ns, src + (size_t)s * ns);
	/* and what Sabine and Eyring need: the air, each material's walls and absorption */
	if (area && alpha && r->mat_area && r->banks) {
		meta.volume = r->volume;
		memcpy(area, r->mat_area, (size_t)nm * sizeof(double));
		for (int m = 0; m < nm; m++)
			for (int k = 0; k < RIRS_BANDS; k++)
				alpha[(size_t)m * RIRS_BANDS + k] =
					r->banks->bank[m] ? wall_alpha_band(r->banks->bank[m],
									 1000 * pow(10, 0.1 * (k - 13)), 1)
						       : r->room->materials[m].absorption;
		meta.area = area;
		meta.band_alpha = alpha;
	}
	/* a hybrid run: its geometric and joined responses, and the source at the WAV rate */
	if (r->ga_joinable > 0 && src_full) {
		for (int s = 0; s < r->room->nsources; s++)
			sig_source(&r->room->sources[s], 1.0 / r->room->wav_rate, r->plan.wav_frames,
				   src_full + (size_t)s * r->plan.wav_frames);
		meta.geo = r->geo;
		meta.full = r->full;
		meta.source_full = src_full;
		meta.nfull = r->plan.wav_frames;
		meta.images = r->ga_images;
		meta.escaped = r->ga_escaped;
		meta.reflections = r->ga_reflections;
	}
	snprintf(path, sizeof(path), "%s/rirs.h5", r->out);
	rc = rirs_write(path, &meta, err);
	free(rows);
	free(src_full);
	free(src);
	free(area);
	free(alpha);
	return rc;
}

/* Source s's WAVs and rirs.h5 (with every source done so far). */
int run_write_outputs(struct run *r, int s, struct rs_error *err)
{
	int rc = run_absorb_air(r, s, err);

	if (!rc)
		rc = write_wavs(r, err);
	if (!rc)
		rc = write_rirs(r, err);
	return rc;
}
