/*
 * run.c - `roomsim run`: simulate every source, write WAVs, rirs.h5 and snapshots.
 *
 * Order of work: parse and validate the room, plan the run and check memory, voxelise,
 * check sources and receivers against the grid; only then create the output directory and
 * allocate the fields. Each source's WAVs and the rirs.h5 of every source done so far are
 * written as soon as that source finishes, so Ctrl-C loses nothing already computed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "grids.h"
#include "../common/hash.h"
#include "../io/checkpoint.h"
#include "../io/config.h"
#include "../io/rirs.h"
#include "../io/snapshot.h"
#include "../io/wav.h"
#include "../solver/air.h"
#include "../solver/fdtd.h"
#include "../solver/part.h"
#include "../solver/signal.h"

/* Steps per call of the engine: 64, or in a small room as many as about CHUNK_NODES node
 * updates (a few milliseconds on a GPU), at most 1024, so that the call's synchronisation
 * and copies do not idle the device while Ctrl-C and progress stay responsive; rounded up
 * to a multiple of the engine's batch, fdtd_batch(). */
#define CHUNK_STEPS 64
#define CHUNK_MAX 1024
#define CHUNK_NODES 2e9

static volatile sig_atomic_t stop_requested;

/* The signals that stop a run (on_signal) while it steps. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGUSR1, SIGUSR2 };

/* SIGUSR1 and SIGUSR2 stand for SIGINT and SIGTERM where mpirun passes them on: it turns
 * those two into a kill of the ranks one second later (docs/parallel.md, "Interrupting"). */
static void on_signal(int sig)
{
	stop_requested = sig == SIGUSR1 ? SIGINT : sig == SIGUSR2 ? SIGTERM : sig;
	signal(sig, SIG_DFL);	/* a second Ctrl-C ends at once */
}

static volatile sig_atomic_t ranks_pid;

/* --gpus: Ctrl-C and SIGTERM reach mpirun as the signals it passes on unchanged. */
static void pass_signal(int sig)
{
	if (ranks_pid > 0)
		kill((pid_t)ranks_pid, sig == SIGINT ? SIGUSR1 : SIGUSR2);
}

struct run {
	const struct room *room;
	struct app_plan plan;
	struct vox_grid *grid;
	struct fdtd *engine;
	const char *out;
	int quiet;
	int threads;
	int backend;		/* enum room_backend as chosen on the command line */
	int kernel;		/* --kernel, or -1 for scheme.kernel */
	char engine_name[64];	/* "cpu" or "cuda:<kernel>", recorded in rirs.h5 */
	double *signals;	/* [source][receiver][sample] raw pressure */
	double *air;		/* the same with the air's absorption (NULL: medium off) */
	long *completed;	/* steps done per source */
	struct wall_banks *banks;	/* the fits of the materials given by band */
	struct run_grids grids;	/* the receiver grids' points and their stream */
	int nsources_done;	/* sources whose signals are final (finished or interrupted) */
	size_t wav_clipped;
	int gpus;		/* --gpus: ranks to start through mpirun (0: none) */
	/* a decomposed run (solver/part.h): this rank's share; the engine runs `window`, a
	 * receiver q is read where its lowest node lies (rec_rank[q]), as engine receiver
	 * rec_index[q] there */
	struct part part;
	struct vox_grid *window;
	int *rec_rank, *rec_index;
	struct app_disk disk;	/* what the outputs take at most (app_disk_need) */
	int reserved;		/* rank 0 keeps space for the WAVs and rirs.h5 (app_reserve) */
	/* checkpoints (io/checkpoint.h): every ckpt_seconds of running or ckpt_steps steps
	 * (the room's, or --checkpoint), the last one's time and step */
	double ckpt_seconds;
	long ckpt_steps;
	double ckpt_last;
	long ckpt_last_step;
	uint64_t grid_hash, points_hash;	/* what a checkpoint must match (ckpt_meta) */
	long hold;		/* ROOMSIM_HOLD_AT: the step to hold at (-1: none) */
	int resume;		/* --resume: go on from resume_path */
	struct ckpt_meta resumed;	/* its meta */
	char resume_path[ROOM_PATH_MAX + 64];
};

static const char usage_run[] =
	"usage: roomsim run FILE.yaml [--out DIR] [--backend cpu|cuda|auto] [--kernel NAME]\n"
	"                   [--threads N] [--gpus N] [--checkpoint EVERY] [--resume] [-q]\n"
	"\n"
	"Simulate the room in FILE.yaml and write, into DIR (default: output.dir of the file):\n"
	"  <source>_<receiver>.wav   one impulse response per pair, at output.wav.samplerate\n"
	"  rirs.h5                   every raw receiver signal at the simulation rate, metadata\n"
	"  <source>_snapshots.h5     pressure planes, when output.snapshots is given\n"
	"  <source>_grids.h5         the signals of the receiver grids, when receivers has grids\n"
	"\n"
	"  --out DIR        write into DIR instead of output.dir\n"
	"  --backend NAME   cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
	"  --kernel NAME    CUDA kernel (overrides scheme.kernel): auto, the fastest that\n"
	"                   runs the room, or one of those `roomsim kernels` lists\n"
	"  --threads N      CPU threads (default: all cores)\n"
	"  --gpus N         run on N GPUs of this node: starts N ranks through mpirun, each\n"
	"                   a slab of the room (docs/parallel.md); under mpirun or srun the\n"
	"                   ranks are the run's already\n"
	"  --checkpoint EVERY  write a checkpoint every EVERY of running ('10 min', '2 h',\n"
	"                   '5000 steps'; overrides output.checkpoint.every) into DIR:\n"
	"                   checkpoint.h5, the one before kept as checkpoint.prev.h5\n"
	"  --resume         go on from DIR's checkpoint, bitwise as if never stopped\n"
	"  -q, --quiet      no progress on stderr\n"
	"\n"
	"\n"
	"SIGTERM (a scheduler's) writes a checkpoint before the run ends; so does Ctrl-C when\n"
	"checkpoints are on. A run that finishes removes its checkpoints.\n"
	"\n"
	"Exit status: 0 done, 1 run-time failure or interrupted, 2 bad usage or bad input.\n";

#define NEAR_REACH 5.0	/* m: how far from a misplaced point the nearest air is looked for */

/* Every source and receiver must sit where all eight interpolation nodes are room nodes. */
static int check_points(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	double lo = 0.5 * room->spacing, d, w[8];
	int node[8][3];

	for (int i = 0; i < room->nsources + room->nreceivers; i++) {
		int is_src = i < room->nsources;
		const double *pos = is_src ? room->sources[i].pos
					   : room->receivers[i - room->nsources].pos;
		const struct room_mark at = is_src ? room->sources[i].at
						  : room->receivers[i - room->nsources].at;
		char key[64];

		if (!vox_point(r->grid, pos, node, w, &d))
			continue;
		snprintf(key, sizeof(key), "%s[%d].position", is_src ? "sources" : "receivers",
			 is_src ? i : i - room->nsources);
		if (r->plan.grid.fcc && !r->grid->carved)	/* the region depends on the lattice */
			return room_at(err, room, at, key, "[%g, %g, %g] is too close to a wall: the "
				       "fcc lattice nodes that would interpolate it lie up to %.3g m "
				       "beyond the walls "
				       "(valid: any position at least 2 cells, %g m, inside every wall; "
				       "many closer ones too)", pos[0], pos[1], pos[2], d,
				       2 * room->spacing);
		if (r->grid->carved) {	/* a wall or the outside: say where the air is */
			double near[3];

			if (vox_nearest_point(r->grid, pos, NEAR_REACH, near, &d))
				return room_at(err, room, at, key,
					       "[%g, %g, %g] is not in the air: it is inside a wall "
					       "or outside the room, more than %g m from any air "
					       "(valid: a position in the room's air, half a cell "
					       "from its walls)", pos[0], pos[1], pos[2], NEAR_REACH);
			if (r->plan.grid.fcc)	/* its eight nodes reach up to 2 cells out */
				return room_at(err, room, at, key,
					       "[%g, %g, %g] is too close to a wall or outside the "
					       "room: the fcc lattice nodes that would interpolate "
					       "it are not all in the air; the nearest node that is "
					       "lies %.3g m away, at [%.3f, %.3f, %.3f] (valid: a "
					       "position whose lattice nodes are all in the air, "
					       "any node among them)", pos[0], pos[1], pos[2], d,
					       near[0], near[1], near[2]);
			return room_at(err, room, at, key,
				       "[%g, %g, %g] is not in the air: it is inside a wall or "
				       "outside the room, %.3g m from the nearest position that works, "
				       "[%.3f, %.3f, %.3f] (valid: a position in the room's air, half a "
				       "cell from its walls)", pos[0], pos[1], pos[2], d, near[0],
				       near[1], near[2]);
		}
		return room_at(err, room, at, key,
			       "[%g, %g, %g] is outside the air by %.3g m (valid: within "
			       "[%g, %g] x [%g, %g] x [%g, %g], half a cell inside the walls)",
			       pos[0], pos[1], pos[2], d, lo, r->plan.grid.size[0] - lo, lo,
			       r->plan.grid.size[1] - lo, lo, r->plan.grid.size[2] - lo);
	}
	return 0;
}

/* One WAV of source s from its raw signal (overwritten): conditioned, resampled, scaled by
 * gain; written to path unless path is NULL (the pass that finds the peak). */
static int wav_one(struct run *r, int s, double *raw, double *wav, const char *path,
		   double gain, double *peak, struct rs_error *err)
{
	const struct room *room = r->room;
	const struct room_source *src = &room->sources[s];
	/* WAVs of an interrupted source hold what was computed. */
	const double t_done = fmin(room->duration, r->completed[s] * r->plan.dt);
	const size_t frames = (size_t)llround(t_done * room->wav_rate);
	/* An impulse source's WAV is an impulse response: scale to unit in-band gain. */
	const double scale = src->signal == ROOM_SIG_IMPULSE ? r->plan.fs / room->wav_rate : 1;
	size_t clipped;
	int rc;

	wav_condition(raw, (size_t)r->completed[s] + 1, r->plan.fs, room->fmax, room->wav_highpass);
	rc = wav_resample(raw, (size_t)r->completed[s] + 1, r->plan.fs, room->wav_rate, wav, frames,
			  err);
	for (size_t i = 0; i < frames && !rc; i++) {
		wav[i] *= scale * gain;
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
		rc = wav_one(r, s, raw, wav, write ? path : NULL, gain, peak, err);
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
						    ((size_t)s * room->nreceivers + q) * ns,
				       ns * sizeof(double));
				snprintf(path, sizeof(path), "%s/%s_%s.wav", r->out,
					 room->sources[s].name, room->receivers[q].name);
				rc = wav_one(r, s, raw, wav, pass ? path : NULL, gain, &peak, err);
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
static int absorb_air(struct run *r, int s, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t ns = r->plan.nsamples;
	const struct air air = { room->temperature, room->humidity, room->pressure };

	for (int q = 0; r->air && q < room->nreceivers; q++) {
		const size_t at = ((size_t)s * room->nreceivers + q) * ns;

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
	const int nm = r->room->nmaterials;
	double *area = calloc((size_t)nm, sizeof(double));
	double *alpha = malloc((size_t)nm * RIRS_BANDS * sizeof(double));
	int rc;

	/* each source's free-field pressure 1 m away, for roomsim analyze's G */
	for (int s = 0; src && s < r->room->nsources; s++)
		sig_source(&r->room->sources[s], r->plan.dt, ns, src + (size_t)s * ns);
	/* and what Sabine and Eyring need: the air, each material's walls and absorption */
	if (area && alpha && r->grid && r->banks) {
		double area_all;

		vox_measure(r->grid, &meta.volume, &area_all);
		for (size_t w = 0; w < r->grid->nwalls; w++)
			for (int f = 0; f < 6; f++)
				if (r->grid->walls[w].material[f] < nm)
					area[r->grid->walls[w].material[f]] +=
						vox_wall_area(r->grid, &r->grid->walls[w], f);
		for (int m = 0; m < nm; m++)
			for (int k = 0; k < RIRS_BANDS; k++)
				alpha[(size_t)m * RIRS_BANDS + k] =
					r->banks->bank[m] ? wall_alpha_band(r->banks->bank[m],
									 1000 * pow(10, 0.1 * (k - 13)), 1)
						       : r->room->materials[m].absorption;
		meta.area = area;
		meta.band_alpha = alpha;
	}
	snprintf(path, sizeof(path), "%s/rirs.h5", r->out);
	rc = rirs_write(path, &meta, err);
	free(src);
	free(area);
	free(alpha);
	return rc;
}

/* Source s's WAVs and rirs.h5 (with every source done so far). */
static int write_outputs(struct run *r, int s, struct rs_error *err)
{
	int rc = absorb_air(r, s, err);

	if (!rc)
		rc = write_wavs(r, err);
	if (!rc)
		rc = write_rirs(r, err);
	return rc;
}

static void free_planes(struct snap_plane *pl, int n)
{
	for (int i = 0; pl && i < n; i++)
		free((void *)pl[i].room);
	free(pl);
}

/* The snapshot planes of the room, with their grid index along the normal and their room
 * cells. */
static struct snap_plane *make_planes(const struct run *r, int *index)
{
	const struct room *room = r->room;
	const struct vox_plan *g = &r->plan.grid;
	struct snap_plane *pl = calloc((size_t)room->nplanes, sizeof(*pl));
	static const char axes[] = "xyz";
	unsigned char *mask;

	if (!pl)
		return NULL;
	for (int i = 0; i < room->nplanes; i++) {
		int a = room->planes[i].axis, u = a == 2 ? 1 : 2, v = a == 0 ? 1 : 0;
		/* room node m lies at (m + 1/2) h, or at m h where the walls pass through nodes */
		const double first = g->fcc ? 0 : 0.5;
		long m = lround((room->planes[i].at - room->origin[a]) / g->h - first);

		m = m < 0 ? 0 : m >= g->room[a] ? g->room[a] - 1 : m;
		index[i] = (int)m + g->halo;	/* past the halo */
		pl[i].axis = a;
		pl[i].at = room->origin[a] + (m + first) * g->h;
		pl[i].n1 = g->room[u];
		pl[i].n2 = g->room[v];
		for (int d = 0; d < 3; d++)
			pl[i].origin[d] = room->origin[d] + first * g->h;
		pl[i].origin[a] = pl[i].at;
		snprintf(pl[i].name, sizeof(pl[i].name), "%c_%.3f", axes[a], room->planes[i].at);
		if (!(mask = malloc((size_t)pl[i].n1 * pl[i].n2))) {
			free_planes(pl, i);
			return NULL;
		}
		for (int b = 0; b < pl[i].n1; b++)	/* the room cells, as fdtd_plane orders them */
			for (int c = 0; c < pl[i].n2; c++) {
				int ijk[3];

				ijk[a] = index[i];
				ijk[u] = b + g->halo;
				ijk[v] = c + g->halo;
				mask[(size_t)b * pl[i].n2 + c] =
					r->grid->cls[vox_index(g, ijk[0], ijk[1], ijk[2])] != VOX_PAD;
			}
		pl[i].room = mask;
	}
	return pl;
}

/*
 * Snapshots go to HDF5 on a writer thread: the stepping thread only starts each plane's copy
 * (on the GPU an asynchronous copy into pinned memory, ordered after the steps before it)
 * and queues it; the writer waits for the copy and compresses and writes the frame. The
 * loop blocks only when SNAP_BUFFERS frames per plane are still waiting to be written.
 */
#define SNAP_BUFFERS 4

struct snap_job {
	float *buf;		/* one plane, from fdtd_host_alloc() */
	struct fdtd_copy copy;
	int plane;
	double t;
};

struct snapper {
	struct fdtd *engine;
	struct snap_file *file;
	const struct snap_plane *planes;
	const char *dir;	/* where the file is: a frame is written only while it fits */
	const char *path;
	long frames;		/* frames written */
	struct snap_job *jobs;	/* ring of cap jobs; queued: [head, head + count) */
	int cap, head, count, done, rc;
	struct rs_error err;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	pthread_t thread;
	int started;
};

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
			 !(rc = snap_append(w->file, job->plane, job->buf, job->t, &w->err)))
			w->frames++;
		pthread_mutex_lock(&w->mu);
		w->rc = w->rc ? w->rc : rc;
		w->head = (w->head + 1) % w->cap;
		w->count--;
		pthread_cond_signal(&w->room);
		pthread_mutex_unlock(&w->mu);
	}
}

static int snapper_start(struct snapper *w, struct fdtd *engine, struct snap_file *file,
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
	if (!w->jobs)
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

/*
 * A decomposed run's plane across `axis` at whole-grid index `index`, gathered into out on
 * rank 0 (n1 x n2 floats, fdtd_plane's layout; out is NULL on the others): a z plane from the
 * rank whose slab holds it, the rows of an x or y plane from each rank's own layers.
 */
static int plane_gather(const struct run *r, int axis, int index, float *out,
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

		if (owner == pt->rank && owner == 0) {
			fdtd_plane(r->engine, 2, index - pt->base, out);
			return 0;
		}
		if (owner == pt->rank || pt->rank == 0) {
			if (!(tmp = malloc(bytes)))
				return rs_fail(err, RS_ENOMEM, "out of memory for a snapshot");
			if (owner == pt->rank)
				fdtd_plane(r->engine, 2, index - pt->base, tmp);
			part_send0(pt, owner, tmp, out, bytes);
			free(tmp);
		}
		return 0;
	}
	if (!(tmp = malloc((size_t)w->room[2] * n2 * sizeof(float))))
		return rs_fail(err, RS_ENOMEM, "out of memory for a snapshot");
	fdtd_plane(r->engine, axis, index, tmp);	/* the window's layers, its rows */
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
static int snapper_queue(struct snapper *w, const struct run *r, const struct snap_plane *pl,
			 const int *index, struct rs_error *err)
{
	const double t = fdtd_steps(r->engine) * r->plan.dt;

	for (int p = 0; r->part.rank > 0 && p < r->room->nplanes; p++)	/* their share */
		if (plane_gather(r, pl[p].axis, index[p], NULL, err))
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
		if (r->part.size > 1 ? plane_gather(r, pl[p].axis, index[p], job->buf, err)
				     : fdtd_plane_start(r->engine, pl[p].axis, index[p], job->buf,
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
static int snapper_drain(struct snapper *w, struct rs_error *err)
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
static int snapper_stop(struct snapper *w, struct rs_error *err)
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
	rc = w->rc;
	if (rc && err)
		rs_fail(err, rc, "%s", w->err.msg);
	return rc;
}

/* ---- checkpoints (io/checkpoint.h; docs/cli.md, "Checkpoints") ---- */

/* What this rank's checkpoint is made of, at source s and the engine's step. */
static void ckpt_describe(const struct run *r, int s, struct ckpt_meta *m)
{
	const struct vox_plan *g = r->window ? &r->window->plan : &r->plan.grid;
	size_t values, bstates, bW;

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
	m->nreceivers = r->room->nreceivers;
	for (int q = 0; q < r->room->nreceivers; q++)
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
}

static void ckpt_free(struct ckpt_data *d)
{
	free(d->completed);
	free(d->rec);
	free(d->cur);
	free(d->prev);
	free(d->bstate);
	free(d->bW);
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
	if (!d->completed || !d->rec || !d->cur || !d->prev || (m->bstates && (!d->bstate || !d->bW))) {
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
static int checkpoint(struct run *r, int s, struct snapper *w, struct rs_error *err)
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
	for (int q = 0, i = 0; q < r->room->nreceivers; q++)	/* the receivers it reads */
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
	rc = fdtd_get_state(r->engine, d.cur, d.prev, d.bstate, d.bW)
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

/* What a checkpoint must match besides its sizes: the whole grid's classes and the update's
 * constants; the sources' positions and signals and the receivers' positions. */
static void fingerprint(struct run *r)
{
	const struct room *room = r->room;
	double *sig = malloc((size_t)r->plan.steps * sizeof(double));
	uint64_t h = rs_hash(RS_HASH_START, r->grid->cls, r->plan.grid.cells);

	r->grid_hash = fdtd_fingerprint(r->engine, h);
	h = RS_HASH_START;
	for (int s = 0; s < room->nsources; s++) {
		h = rs_hash(h, room->sources[s].pos, sizeof(room->sources[s].pos));
		if (sig) {
			sig_source(&room->sources[s], r->plan.dt, (size_t)r->plan.steps, sig);
			h = rs_hash(h, sig, (size_t)r->plan.steps * sizeof(double));
		}
	}
	for (int q = 0; q < room->nreceivers; q++)
		h = rs_hash(h, room->receivers[q].pos, sizeof(room->receivers[q].pos));
	r->points_hash = h;
	free(sig);
}

/* 1 when a checkpoint is due at this chunk's end (rank 0's clock decides for all). */
static int checkpoint_due(struct run *r)
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
static int resume_open(struct run *r, struct rs_error *err)
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
		if (absorb_air(r, s, err))
			return err->code;
	if (!r->quiet)
		fprintf(stderr, "roomsim: resuming from %s: source %s at step %lld of %lld (written "
			"by %s)\n", r->resume_path, r->room->sources[r->resumed.source].name,
			r->resumed.step, r->resumed.steps, r->resumed.engine);
	return 0;
}

/* The engine at the checkpoint's step of the source it was running (after fdtd_reset and
 * the source): fields, wall states, step, this rank's receivers so far. */
static int resume_engine(struct run *r, struct rs_error *err)
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
	if (!rc && fdtd_set_state(r->engine, (long)m->step, d.cur, d.prev, d.bstate, d.bW))
		rc = rs_fail(err, RS_EDEVICE, "resume: %s", fdtd_error(r->engine));
	for (int q = 0, i = 0; !rc && q < r->room->nreceivers; q++)
		if (r->rec_index[q] >= 0 &&
		    fdtd_set_receiver(r->engine, r->rec_index[q],
				      d.rec + (size_t)i++ * (size_t)(m->step + 1), (size_t)m->step + 1))
			rc = rs_fail(err, RS_EINTERNAL, "resume: %s", fdtd_error(r->engine));
	ckpt_free(&d);
	return rc;
}

/* Simulate source s; its signals land in r->signals. */
/* 1 when a source at pos adds to a cell this rank updates (always, undecomposed). */
static int point_here(const struct run *r, const double pos[3])
{
	int lo, hi;

	if (r->part.size == 1)
		return 1;
	vox_point_layers(r->grid, pos, &lo, &hi);
	return hi >= r->part.own[0] && lo <= r->part.own[1];
}

/*
 * ROOMSIM_HOLD_AT=STEP, for the tests that interrupt a run in a known state however loaded
 * the machine: the first source to reach STEP stops there (after any checkpoint or frame of
 * that step), rank 0 says so on stderr, and every rank waits for a stop signal, at most
 * HOLD_SECONDS. 1 when the run is to stop (on every rank, when decomposed).
 */
#define HOLD_SECONDS 900

static int hold(struct run *r, const char *source)
{
	const struct timespec tick = { 0, 10000000 };

	if (r->part.rank == 0)
		fprintf(stderr, "roomsim: holding at step %ld of source %s until a signal "
			"(ROOMSIM_HOLD_AT)\n", r->hold, source);
	r->hold = -1;
	for (long i = 0; i < HOLD_SECONDS * 100L && !stop_requested; i++)
		nanosleep(&tick, NULL);
	return r->part.size > 1 ? part_any(&r->part, stop_requested) : stop_requested != 0;
}

static int simulate(struct run *r, int s, struct rs_error *err)
{
	const struct room *room = r->room;
	const struct room_source *src = &room->sources[s];
	const long steps = r->plan.steps;
	const int resuming = r->resume && s == r->resumed.source;
	struct snap_plane *pl = NULL;
	struct snap_file *sf = NULL;
	struct snapper writer = { 0 };
	struct app_progress prog;
	double *sig = malloc((size_t)steps * sizeof(double));
	int *index = NULL, rc = 0;
	long batch, chunk;
	char path[ROOM_PATH_MAX + 80];

	if (!sig)
		return rs_fail(err, RS_ENOMEM, "out of memory for the source signal");
	fdtd_reset(r->engine);
	sig_source(src, r->plan.dt, (size_t)steps, sig);
	if (point_here(r, src->pos) &&
	    fdtd_add_source(r->engine, src->pos, sig, (size_t)steps) < 0) {
		rc = rs_fail(err, RS_ENOMEM, "cannot add source %s: %s", src->name,
			     fdtd_error(r->engine));
		goto out;
	}
	if (resuming && (rc = resume_engine(r, err)))
		goto out;
	r->ckpt_last = app_now();
	r->ckpt_last_step = fdtd_steps(r->engine);
	snprintf(path, sizeof(path), "%s/%s_grids.h5", r->out, src->name);
	if ((rc = grids_begin(&r->grids, r->engine, path, r->plan.nsamples, r->plan.fs, resuming,
			      err)))
		goto out;
	if (room->snap_every) {
		const struct vox_plan *g = &r->plan.grid;
		size_t most = (size_t)g->room[0] * g->room[1] > (size_t)g->room[1] * g->room[2]
				      ? (size_t)g->room[0] * g->room[1]
				      : (size_t)g->room[1] * g->room[2];

		most = most > (size_t)g->room[0] * g->room[2] ? most : (size_t)g->room[0] * g->room[2];
		index = malloc(sizeof(int) * (size_t)room->nplanes);
		if (!index || !(pl = make_planes(r, index))) {
			rc = rs_fail(err, RS_ENOMEM, "out of memory for snapshots");
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s_snapshots.h5", r->out, src->name);
		if (r->part.rank == 0 &&	/* it writes them */
		    (!(sf = resuming ? snap_reopen(path, pl, room->nplanes, g->h, room->snap_every,
						   r->plan.dt,
						   fdtd_steps(r->engine) / room->snap_every + 1, err)
				     : snap_open(path, pl, room->nplanes, g->h,
						 room->snap_every * r->plan.dt, err)) ||
		     (rc = snapper_start(&writer, r->engine, sf, pl, room->nplanes, most, r->out,
					 path, err)))) {
			rc = err->code;	/* several ranks: cmd_run ends them all */
			goto out;
		}
		if (!resuming && (rc = snapper_queue(&writer, r, pl, index, err)))
			goto out;
	}
	batch = fdtd_batch(r->engine);
	chunk = (long)fmin(CHUNK_MAX, fmax(CHUNK_STEPS, CHUNK_NODES /
					   (double)vox_nodes(&r->plan.grid))) / CHUNK_STEPS * CHUNK_STEPS;
	chunk = (chunk + batch - 1) / batch * batch;	/* whole towers of diamond */
	app_progress_begin(&prog, src->name, steps, (double)vox_nodes(&r->plan.grid), r->quiet);
	while (fdtd_steps(r->engine) < steps) {
		long done = fdtd_steps(r->engine), n = steps - done;

		if (n > chunk)
			n = chunk;
		if (room->snap_every && n > room->snap_every - done % room->snap_every)
			n = room->snap_every - done % room->snap_every;
		if (n > grids_room(&r->grids))
			n = grids_room(&r->grids);
		if (r->hold > done && n > r->hold - done)
			n = r->hold - done;
		/* the ranks of a decomposed run stop together, at the end of a chunk */
		if (done == r->hold)
			rc = hold(r, src->name) ? RS_EINTR : 0;
		else
			rc = r->part.size > 1 ? fdtd_advance(r->engine, n, NULL) :
						fdtd_advance(r->engine, n, &stop_requested);
		if (!rc && r->part.size > 1 && part_any(&r->part, stop_requested))
			rc = RS_EINTR;
		if (rc && rc != RS_EINTR) {
			rs_fail(err, rc, "%s", fdtd_error(r->engine));
			break;
		}
		/* the frame of this step, interrupted or not: a checkpoint counts it written */
		if (room->snap_every && fdtd_steps(r->engine) % room->snap_every == 0 &&
		    fdtd_steps(r->engine) > done && snapper_queue(&writer, r, pl, index, err)) {
			rc = err->code;
			break;
		}
		if (rc) {
			rs_fail(err, rc, "interrupted at step %ld of %ld (source %s); the files hold "
				"what was computed", fdtd_steps(r->engine), steps, src->name);
			break;
		}
		if (!grids_room(&r->grids) && (rc = grids_take(&r->grids, err)))
			break;
		if (checkpoint_due(r) && (rc = checkpoint(r, s, &writer, err)))
			break;
		app_progress_update(&prog, fdtd_steps(r->engine));
	}
	/* SIGTERM (a scheduler's), or any interrupt of a run that takes checkpoints: one more */
	if (rc == RS_EINTR &&
	    part_any(&r->part, stop_requested == SIGTERM || r->ckpt_seconds > 0 || r->ckpt_steps > 0)) {
		struct rs_error e = { 0 };
		/* none again at the step of the last one (nor at a source's start) */
		int have = r->ckpt_last_step > 0 && fdtd_steps(r->engine) == r->ckpt_last_step;

		if (fdtd_steps(r->engine) > r->ckpt_last_step) {
			if (checkpoint(r, s, &writer, &e))
				fprintf(stderr, "roomsim: %s\n", e.msg);
			else
				have = 1;
		}
		if (have)
			snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
				 "; roomsim run --resume goes on from the checkpoint");
	}
	app_progress_end(&prog, fdtd_steps(r->engine));
	r->completed[s] = fdtd_steps(r->engine);
	for (int q = 0; q < room->nreceivers; q++) {	/* rank 0 gathers them */
		double *to = r->signals + ((size_t)s * room->nreceivers + q) * r->plan.nsamples;

		if (r->rec_index[q] >= 0)
			memcpy(to, fdtd_receiver(r->engine, r->rec_index[q]),
			       r->plan.nsamples * sizeof(double));
		part_send0(&r->part, r->rec_rank[q], to, to, r->plan.nsamples * sizeof(double));
	}
	r->nsources_done = s + 1;
out:
	if (grids_end(&r->grids, fdtd_steps(r->engine), rc ? NULL : err) && !rc)
		rc = err->code;
	if (snapper_stop(&writer, rc ? NULL : err) && !rc)
		rc = err->code;
	if (snap_close(sf, rc ? NULL : err) && !rc)
		rc = RS_EIO;
	free(sig);
	free(index);
	free_planes(pl, room->nplanes);
	return rc;
}

static int parse_args(int argc, char **argv, const char **file, struct run *r, int *backend,
		      struct rs_error *err)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, 'b' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "threads", required_argument, NULL, 't' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "checkpoint", required_argument, NULL, 'c' },
		{ "resume", no_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end, names[512];

	*backend = ROOM_BACKEND_AUTO;
	r->kernel = -1;
	optind = 1;
	r->ckpt_seconds = -1;	/* the room's unless --checkpoint */
	while ((c = getopt_long(argc, argv, "o:b:k:t:g:c:rqh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (cfg_interval(optarg, &r->ckpt_seconds, &r->ckpt_steps))
				return rs_fail(err, RS_EINPUT, "--checkpoint: '%s' is not an interval "
					       "(valid: a positive number of s, min or h, e.g. 10min "
					       "or '10 min', or of steps, e.g. '5000 steps')", optarg);
			break;
		case 'r':
			r->resume = 1;
			break;
		case 'g':
			r->gpus = (int)strtol(optarg, &end, 10);
			if (*end || r->gpus < 1 || r->gpus > 1024)
				return rs_fail(err, RS_EINPUT, "--gpus: '%s' is not valid (valid: a "
					       "whole number from 1 to 1024, the GPUs of this node)",
					       optarg);
			break;
		case 'k':
			if ((r->kernel = kernel_of(optarg)) < 0)
				return rs_fail(err, RS_EINPUT, "--kernel: '%s' is not valid (valid: "
					       "%s)", optarg, kernel_list(1, names, sizeof(names)));
			break;
		case 'o':
			r->out = optarg;
			break;
		case 'b':
			if ((*backend = app_backend_of(optarg)) < 0)
				return rs_fail(err, RS_EINPUT, "--backend: '%s' is not valid (valid: "
					       "cpu | cuda | auto)", optarg);
			break;
		case 't':
			r->threads = (int)strtol(optarg, &end, 10);
			if (*end || r->threads < 1 || r->threads > 4096)
				return rs_fail(err, RS_EINPUT, "--threads: '%s' is not valid (valid: "
					       "a whole number from 1 to 4096)", optarg);
			break;
		case 'q':
			r->quiet = 1;
			break;
		case 'h':
			fputs(usage_run, stdout);
			exit(EXIT_OK);
		default:
			return rs_fail(err, RS_EINPUT, "see 'roomsim run --help'");
		}
	}
	if (optind != argc - 1)
		return rs_fail(err, RS_EINPUT, "expected one room file (see 'roomsim run --help')");
	*file = argv[optind];
	r->hold = -1;
	if (getenv("ROOMSIM_HOLD_AT") && *getenv("ROOMSIM_HOLD_AT")) {
		r->hold = strtol(getenv("ROOMSIM_HOLD_AT"), &end, 10);
		if (*end || r->hold < 1)
			return rs_fail(err, RS_EINPUT, "ROOMSIM_HOLD_AT: '%s' is not valid (valid: "
				       "a step, a whole number from 1)", getenv("ROOMSIM_HOLD_AT"));
	}
	return 0;
}

/* Pick the engine: CUDA when asked for or, with auto, when a device is usable. */
static int choose_backend(struct run *r, struct rs_error *err)
{
	char name[128] = "";
	int gpu = fdtd_cuda_available(name, sizeof(name));

	if (r->backend == ROOM_BACKEND_CUDA && !gpu)
		return rs_fail(err, RS_ENODEV, "--backend cuda: no usable CUDA device (or a build "
			       "without nvcc); valid here: --backend cpu or auto");
	if (r->backend == ROOM_BACKEND_AUTO && !gpu && !r->quiet)
		fprintf(stderr, "roomsim: no usable CUDA device; using the CPU engine\n");
	if (r->backend == ROOM_BACKEND_AUTO)
		r->backend = gpu ? ROOM_BACKEND_CUDA : ROOM_BACKEND_CPU;
	if (r->backend == ROOM_BACKEND_CUDA && !r->quiet)
		fprintf(stderr, "roomsim: CUDA engine on %s\n", name);
	return 0;
}

/*
 * A decomposed run (solver/part.h): this rank's slab and window of the grid, and the
 * receiver grids' points it reads.
 */
static int decompose(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	const int cuda = r->backend == ROOM_BACKEND_CUDA;

	if (r->part.size == 1)
		return 0;
	if (part_plan(&r->part, &r->plan.grid, room->precision, cuda, err) ||
	    !(r->window = vox_window(r->grid, r->part.win[0], r->part.win[1], err)) ||
	    grids_split(&r->grids, &r->part, r->grid, err))
		return err->code;
	if (cuda) {
		char bus[64] = "";

		if (fdtd_select_gpu(r->part.local, bus, sizeof(bus), err) ||
		    part_connect(&r->part, bus, err))
			return err->code;
	}
	if (!r->quiet)
		fprintf(stderr, "roomsim: %d ranks%s, slabs of about %d layers in z; rank 0 "
			"updates layers %d to %d of its window %d to %d\n", r->part.size,
			!cuda ? " (halos through MPI)" : r->part.staged ? " on GPUs (halos through "
			"host memory and MPI)" : " on as many GPUs (halos through NCCL)",
			r->plan.grid.room[2] / r->part.size, r->part.own[0], r->part.own[1],
			r->part.win[0], r->part.win[1]);
	return 0;
}

/*
 * The engine. In a decomposed run kernel auto runs on rank 0 alone and the others take its
 * choice, so that every rank runs the same kernel; all ranks go on only when all have one.
 */
static int create_engine(struct run *r, struct fdtd_setup *setup, struct rs_error *err)
{
	int kernel = setup->kernel;

	if (r->part.size == 1) {
		r->engine = fdtd_create(setup, err);
		return r->engine ? 0 : err->code;
	}
	if (setup->cuda && setup->kernel == KERNEL_AUTO) {
		if (r->part.rank == 0 && (r->engine = fdtd_create(setup, err)))
			kernel = fdtd_kernel(r->engine);
		part_bcast(&r->part, &kernel, sizeof(kernel));
		if (kernel == KERNEL_AUTO && r->part.rank > 0)	/* rank 0 has none */
			return rs_fail(err, RS_EIO, "rank 0 could not start its engine");
		setup->kernel = (enum kernel_id)kernel;
	}
	if (!r->engine && (r->part.rank > 0 || !setup->cuda || setup->kernel != KERNEL_AUTO))
		r->engine = fdtd_create(setup, err);
	if (part_any(&r->part, r->engine == NULL))
		return r->engine ? rs_fail(err, RS_EIO, "another rank could not start its engine")
				 : err->code ? err->code : rs_fail(err, RS_EIO, "no engine");
	return 0;
}

/*
 * Keep the space the WAVs and rirs.h5 still need (rank 0): all of them at most, and rirs.h5
 * once more, which is written anew beside the old one before it replaces it, less what the
 * ones written so far take. Snapshots and grid files cannot fill it (app_reserve).
 */
static double output_bytes(const struct run *r)
{
	const struct room *room = r->room;
	char path[ROOM_PATH_MAX * 2];
	struct stat st;
	double sum = 0;

	snprintf(path, sizeof(path), "%s/rirs.h5", r->out);
	if (!stat(path, &st))
		sum += (double)st.st_size;
	for (int s = 0; s < r->nsources_done; s++)
		for (int q = 0; q < room->nreceivers; q++) {
			snprintf(path, sizeof(path), "%s/%s_%s.wav", r->out, room->sources[s].name,
				 room->receivers[q].name);
			if (!stat(path, &st))
				sum += (double)st.st_size;
		}
	return sum;
}

static int keep_space(struct run *r, struct rs_error *err)
{
	const double need = r->disk.wav + 2 * r->disk.rirs - output_bytes(r);

	if (app_reserve(r->out, need, err))
		return err->code;
	r->reserved = need >= 1;
	return 0;
}

static int prepare(struct run *r, const char *file, int backend, struct rs_error *err)
{
	struct room *room = cfg_load(file, err);
	struct fdtd_setup setup = { 0 };
	size_t pairs;
	int rc;

	if (!room)
		return err->code;
	r->room = room;
	if (!r->out)
		r->out = room->out_dir;
	r->backend = backend;
	if (choose_backend(r, err))
		return err->code;
	if (room->stencil_auto) {	/* the fastest scheme for the dispersion asked */
		struct app_candidate c[APP_MAX_CANDIDATES];
		int n, k = app_scheme_choose(room, r->backend == ROOM_BACKEND_CUDA, r->threads, c,
					     &n, err);

		if (k < 0)
			return err->code;
		if (!r->quiet)
			fprintf(stderr, "roomsim: scheme auto: %s, %.2f points per wavelength for %g "
				"at fmax: %.1f s of stepping predicted (%.1f Gvox/s), the least of "
				"%d schemes (roomsim info lists them)\n", c[k].name, c[k].ppw,
				room->dispersion, c[k].seconds, c[k].rate / 1e9, n);
	}
	if (app_plan(room, &r->plan, err))
		return err->code;
	{	/* the outputs must fit on the disk (all of them, the HDF5 files uncompressed) */
		struct app_disk d;
		const double avail = app_disk_free(r->out);
		char need[32], have[32];

		app_disk_need(room, &r->plan, &d);
		r->disk = d;
		if (avail >= 0 && d.total > avail)
			return rs_fail(err, RS_EIO, "the outputs need up to %s (WAVs, rirs.h5%s%s) but "
				       "%s has %s free (valid: free space there, or --out elsewhere%s)",
				       app_bytes(d.total, need), room->snap_every ? ", snapshots" : "",
				       room->ngrids ? ", grid files" : "",
				       r->out, app_bytes(avail, have), room->snap_every
				       ? ", or fewer snapshot planes or frames" : "");
	}
	if (!(r->grid = vox_build(room, err)) || check_points(r, err) ||
	    grids_make(&r->grids, room, r->grid, err) || decompose(r, err))
		return err->code;
	for (int i = 0; i < r->grids.n && !r->quiet; i++)
		fprintf(stderr, "roomsim: receiver grid %s: %zu points (%s, %d x %d lattice)\n",
			room->grids[i].name, r->grids.pts[i].n, r->grids.kind[i],
			r->grids.pts[i].dims[0], r->grids.pts[i].dims[1]);
	pairs = (size_t)room->nsources * room->nreceivers;
	r->signals = calloc(pairs ? pairs * r->plan.nsamples : 1, sizeof(double));
	r->completed = calloc((size_t)room->nsources, sizeof(long));
	if (room->air_absorption)
		r->air = calloc(pairs ? pairs * r->plan.nsamples : 1, sizeof(double));
	if (!r->signals || !r->completed || (room->air_absorption && !r->air))
		return rs_fail(err, RS_ENOMEM, "out of memory for %zu receiver signals", pairs);
	setup.grid = r->window ? r->window : r->grid;
	setup.exchange = r->window ? part_exchange : NULL;
	setup.exchange_ctx = &r->part;
	if (r->window) {
		part_layers(&r->part, setup.zown, setup.zedge);
		setup.exchange_async = r->part.device && !r->part.staged;
	}
	setup.stencil = &r->plan.stencil;
	setup.lambda = r->plan.lambda;
	setup.precision = room->precision;
	setup.threads = r->threads;
	setup.cuda = r->backend == ROOM_BACKEND_CUDA;
	setup.kernel = (enum kernel_id)(r->kernel >= 0 ? r->kernel : room->kernel);
	setup.block[0] = room->block[0];
	setup.block[1] = room->block[1];
	setup.dts = room->dts;
	setup.nt = room->nt;
	setup.split = room->split;
	if (app_banks(room, &r->banks, err))
		return err->code;
	setup.banks = r->banks->bank;
	setup.nbanks = room->nmaterials;
	setup.dt = r->plan.dt;
	setup.grid_receivers = room->ngrids > 0;
	if (create_engine(r, &setup, err))
		return err->code;
	snprintf(r->engine_name, sizeof(r->engine_name), "%s%s", setup.cuda ? "cuda:" : "cpu",
		 setup.cuda ? kernel_names[fdtd_kernel(r->engine)] : "");
	if (r->part.size > 1)
		snprintf(r->engine_name + strlen(r->engine_name),
			 sizeof(r->engine_name) - strlen(r->engine_name), ", %d ranks",
			 r->part.size);
	if (setup.cuda && !r->quiet && setup.kernel == KERNEL_AUTO)
		for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
			char why[256];

			if (fdtd_kernel_rates(r->engine)[k] > 0)	/* the kernels timed */
				fprintf(stderr, "roomsim: kernel %-17s %8.2f Gvox/s\n",
					kernel_names[k], fdtd_kernel_rates(r->engine)[k] / 1e9);
			else if (fdtd_kernel_why(r->engine, (enum kernel_id)k, why, sizeof(why)))
				fprintf(stderr, "roomsim: kernel %-17s cannot run here: %s\n",
					kernel_names[k], why);
			else	/* it could run, and auto left it out (dispatch.cu says why) */
				fprintf(stderr, "roomsim: kernel %-17s not timed: %s\n", kernel_names[k],
					k == KERNEL_DIAMOND ? "band materials make it far slower than "
					"the per-step kernels (docs/performance.md)" : "left out by auto");
		}
	if (setup.cuda && !r->quiet) {
		int dts, nt, split;
		char how[128] = "";

		if (fdtd_diamond(r->engine, &dts, &nt, &split)) {
			const int n = snprintf(how, sizeof(how), ", tile size %d, towers of %d levels",
					       dts, nt);

			if (split > 1)
				snprintf(how + n, sizeof(how) - n, " split over %d blocks in z", split);
		}
		fprintf(stderr, "roomsim: kernel %s%s%s\n", kernel_names[fdtd_kernel(r->engine)],
			how, setup.kernel == KERNEL_AUTO ? " (the fastest on this grid)" : "");
	}
	r->rec_rank = calloc((size_t)room->nreceivers + 1, sizeof(int));
	r->rec_index = calloc((size_t)room->nreceivers + 1, sizeof(int));
	if (!r->rec_rank || !r->rec_index)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	for (int q = 0; q < room->nreceivers; q++) {	/* each read by one rank */
		int lo, hi;

		vox_point_layers(r->grid, room->receivers[q].pos, &lo, &hi);
		r->rec_rank[q] = part_owner(&r->part, &r->plan.grid, lo);
		r->rec_index[q] = -1;
		if (r->rec_rank[q] == r->part.rank &&
		    (r->rec_index[q] = fdtd_add_receiver(r->engine, room->receivers[q].pos)) < 0)
			return rs_fail(err, RS_ENOMEM, "cannot add receiver %s: %s",
				       room->receivers[q].name, fdtd_error(r->engine));
	}
	if (fdtd_reserve(r->engine, r->plan.nsamples))
		return rs_fail(err, RS_ENOMEM, "receiver buffers: %s", fdtd_error(r->engine));
	if (r->ckpt_seconds < 0) {	/* no --checkpoint: the room's */
		r->ckpt_seconds = room->ckpt_seconds;
		r->ckpt_steps = room->ckpt_steps;
	}
	fingerprint(r);
	/* the output directory, the checkpoint to go on from, the space kept for the WAVs and
	 * rirs.h5: every rank goes on only when all have them */
	rc = r->part.rank == 0 ? app_mkdirs(r->out, err) : 0;
	if (!rc && r->resume)
		rc = resume_open(r, err);
	if (!rc && r->part.rank == 0)
		rc = keep_space(r, err);
	if (part_any(&r->part, rc != 0))
		return rc ? rc : rs_fail(err, RS_EIO, "another rank could not start (rank 0 says why)");
	return 0;
}

static void summary(const struct run *r, double seconds)
{
	const struct room *room = r->room;
	double done = 0, vox;

	for (int s = 0; s < r->nsources_done; s++)	/* the steps run here, not those planned */
		done += (double)r->completed[s];
	for (int s = 0; r->resume && s <= r->resumed.source && s < r->nsources_done; s++)
		done -= s < r->resumed.source ? (double)r->completed[s] : (double)r->resumed.step;
	vox = (double)vox_nodes(&r->plan.grid) * done;

	if (r->quiet && !r->wav_clipped)
		return;
	if (!r->quiet && r->backend == ROOM_BACKEND_CUDA) {
		const char *why;
		const long g = fdtd_graph_steps(r->engine, &why);

		if (g || *why)
			fprintf(stderr, "roomsim: %ld of %.0f steps as CUDA graphs%s%s\n", g, done,
				*why ? "; capture failed: " : "", why);
		if (r->window)
			fprintf(stderr, "roomsim: %ld of %.0f steps overlapped their halo exchange "
				"with the update on rank 0\n", fdtd_overlap_steps(r->engine), done);
	}
	if (!r->quiet) {
		char ran[64] = "";

		if (done < (double)r->plan.steps * r->nsources_done)	/* interrupted */
			snprintf(ran, sizeof(ran), " (%.0f of them run)", done);
		fprintf(stderr, "roomsim: %s: %d source(s) x %d receiver(s), %ld steps%s of %d x %d "
			"x %d cells in %.1f s (%.0f Mvox/s); WAVs in %s/\n", room->name,
			r->nsources_done, room->nreceivers, r->plan.steps * r->nsources_done, ran,
			r->plan.grid.n[0], r->plan.grid.n[1], r->plan.grid.n[2], seconds,
			seconds > 0 ? vox / seconds / 1e6 : 0, r->out);
	}
	if (r->wav_clipped)
		fprintf(stderr, "roomsim: warning: %zu WAV samples clipped at full scale (use "
			"output.wav.format: float32 or output.wav.normalize: true)\n", r->wav_clipped);
}

/*
 * --gpus N outside mpirun: run again as N ranks of mpirun, one per GPU of this node, with the
 * same arguments less --gpus, and exit with its status. mpirun runs in a process group of its
 * own, so that a Ctrl-C at the terminal reaches only this process, which passes it on as
 * SIGUSR1 (SIGTERM as SIGUSR2). Returns only when mpirun cannot be started.
 */
static int start_ranks(int gpus, int argc, char **argv, struct rs_error *err)
{
	char **av = calloc((size_t)argc + 12, sizeof(char *)), np[16], self[4096];
	const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int n = 0;

	if (!av)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	if (len <= 0 || len >= (ssize_t)sizeof(self) - 1)
		return rs_fail(err, RS_ENODEV, "--gpus: cannot find this program's path");
	self[len] = 0;	/* this binary, not mpirun's own /proc/self/exe */
	if (!part_available())
		return rs_fail(err, RS_EINPUT, "--gpus %d: this build has no MPI (install "
			       "libopenmpi-dev and openmpi-bin, and rebuild)", gpus);
	snprintf(np, sizeof(np), "%d", gpus);
	av[n++] = "mpirun";
	av[n++] = "-np";
	av[n++] = np;
	if (geteuid() == 0)	/* Open MPI refuses root unless told */
		av[n++] = "--allow-run-as-root";
	av[n++] = "--bind-to";	/* each rank's OpenMP threads on any core */
	av[n++] = "none";
	av[n++] = "--stdin";	/* from a background process group it would stop on a read */
	av[n++] = "none";
	av[n++] = self;
	av[n++] = "run";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gpus") || !strcmp(argv[i], "-g")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--gpus=", 7))
			continue;
		av[n++] = argv[i];
	}
	av[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	{
		int fd[2], status = 0, e = 0;
		pid_t pid;
		struct sigaction sa = { 0 };

		if (pipe(fd) || (pid = fork()) < 0) {
			free(av);
			return rs_fail(err, RS_ENODEV, "--gpus %d: cannot start mpirun: %s", gpus,
				       strerror(errno));
		}
		if (pid == 0) {	/* mpirun, or errno back through the pipe */
			close(fd[0]);
			setpgid(0, 0);
			fcntl(fd[1], F_SETFD, FD_CLOEXEC);
			execvp(av[0], av);
			e = errno;
			(void)!write(fd[1], &e, sizeof(e));
			_exit(127);
		}
		close(fd[1]);
		ranks_pid = pid;
		sa.sa_handler = pass_signal;	/* no SA_RESTART: waitpid sees each one */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (read(fd[0], &e, sizeof(e)) == (ssize_t)sizeof(e)) {
			waitpid(pid, &status, 0);
			rs_fail(err, RS_ENODEV, "--gpus %d: cannot start mpirun: %s (valid: install "
				"openmpi-bin, or start the ranks yourself with mpirun -np %d roomsim "
				"run ...)", gpus, strerror(e), gpus);
			free(av);
			return err->code;
		}
		close(fd[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
}

int cmd_run(int argc, char **argv)
{
	struct run r = { 0 };
	struct rs_error err = { 0 };
	const char *file = NULL;
	int backend, rc;
	double t0 = app_now();

	rc = part_init(&r.part, &err);
	if (!rc)
		rc = parse_args(argc, argv, &file, &r, &backend, &err);
	if (!rc && r.gpus > 1 && r.part.size == 1)
		rc = start_ranks(r.gpus, argc, argv, &err);
	if (!rc && r.gpus > 1 && r.part.size > 1 && r.gpus != r.part.size)
		rc = rs_fail(&err, RS_EINPUT, "--gpus %d under mpirun with %d ranks (valid: leave "
			     "--gpus out; mpirun's -np sets the GPUs, one per rank)", r.gpus,
			     r.part.size);
	if (!rc && r.part.rank > 0)	/* rank 0 speaks for the run */
		r.quiet = 1;
	if (!rc && r.part.size > 1 && backend == ROOM_BACKEND_AUTO && r.gpus > 1)
		backend = ROOM_BACKEND_CUDA;
	if (!rc)
		rc = prepare(&r, file, backend, &err);
	if (!rc) {
		for (size_t q = 0; q < sizeof(stop_signals) / sizeof(stop_signals[0]); q++)
			signal(stop_signals[q], on_signal);
		for (int s = r.resume ? r.resumed.source : 0; s < r.room->nsources && !rc; s++) {
			struct rs_error werr = { 0 };
			int wrc;

			rc = simulate(&r, s, &err);
			if (rc && rc != RS_EINTR && r.part.size > 1) {	/* the others wait on it */
				fprintf(stderr, "roomsim: rank %d: %s\n", r.part.rank, err.msg);
				part_abort(&r.part, app_exit_status(rc));
			}
			if (r.nsources_done <= s)
				break;
			if (r.part.rank > 0)	/* rank 0 gathered the signals and writes them */
				continue;
			/* Write what this source computed even when it was interrupted or a
			 * snapshot failed, into the space kept for it. */
			app_unreserve(r.out);
			r.reserved = 0;
			wrc = write_outputs(&r, s, rc ? &werr : &err);
			if (wrc && rc)	/* the first failure is the run's; say this one too */
				fprintf(stderr, "roomsim: %s\n", werr.msg);
			if (!rc)
				rc = wrc;
			if (!rc && s + 1 < r.room->nsources && keep_space(&r, &werr))
				fprintf(stderr, "roomsim: warning: %s\n", werr.msg);
		}
		for (size_t q = 0; q < sizeof(stop_signals) / sizeof(stop_signals[0]); q++)
			signal(stop_signals[q], SIG_DFL);
		if (!rc)	/* done: nothing to go on from */
			for (int prev = 0; prev < 2; prev++) {
				char path[ROOM_PATH_MAX + 64];

				ckpt_path(path, sizeof(path), r.out, r.part.rank, prev);
				remove(path);
				ckpt_discard(path);	/* a side file a killed run left */
			}
		if (!rc || rc == RS_EINTR)
			summary(&r, app_now() - t0);
	}
	/* every rank meets the same bad input: rank 0 says it; the others their own failures */
	if (rc && (r.part.rank == 0 || (rc != RS_EINPUT && rc != RS_EINTR)))
		fprintf(stderr, r.part.rank ? "roomsim: rank %d: %s\n" : "roomsim: %.0d%s\n",
			r.part.rank, err.msg[0] ? err.msg : rs_strerror(rc));
	if (r.reserved)
		app_unreserve(r.out);
	grids_free(&r.grids);
	fdtd_destroy(r.engine);
	free(r.banks);
	vox_free(r.window);
	vox_free(r.grid);
	free(r.rec_rank);
	free(r.rec_index);
	part_end(&r.part);
	free(r.signals);
	free(r.air);
	free(r.completed);
	room_free((struct room *)r.room);
	return app_exit_status(rc);
}
