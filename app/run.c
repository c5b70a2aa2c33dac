/*
 * run.c - `roomsim run`: simulate every source, write WAVs, rirs.h5 and snapshots.
 *
 * Order of work: parse and validate the room, plan the run and check memory, voxelise,
 * check sources and receivers against the grid; only then create the output directory and
 * allocate the fields. Each source's WAVs and the rirs.h5 of every source done so far are
 * written as soon as that source finishes, so Ctrl-C loses nothing already computed.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "../solver/directivity.h"
#include "../io/config.h"
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
#define PHASE_STEPS 64	/* ROOMSIM_PHASES: steps timed alone after the run */

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

static const char usage_run[] =
	"usage: roomsim run FILE.yaml [--out DIR] [--backend cpu|cuda|auto] [--kernel NAME]\n"
	"                   [--threads N] [--gpus N] [--checkpoint EVERY] [--resume]\n"
	"                   [--set KEY=VALUE]... [-q]\n"
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
	"  --set KEY=VALUE  as if FILE.yaml gave KEY (a dotted path, e.g. grid.ppw=12 or\n"
	"                   scheme.stencil=fcc) the value VALUE; KEY= removes the key\n"
	"  -q, --quiet      no progress on stderr\n"
	"\n"
	"\n"
	"SIGTERM (a scheduler's) writes a checkpoint before the run ends; so does Ctrl-C when\n"
	"checkpoints are on. A run that finishes removes its checkpoints.\n"
	"\n"
	"Exit status: 0 done, 1 run-time failure or interrupted, 2 bad usage or bad input.\n";

#define NEAR_REACH 5.0	/* m: how far from a misplaced point the nearest air is looked for */

/* The lowest node of the DIR_NODES^3 block around the cell of the eight nodes node[]. */
static void block_lo(int node[8][3], int lo[3])
{
	for (int k = 0; k < 3; k++) {
		lo[k] = INT_MAX;
		for (int c = 0; c < 8; c++)
			lo[k] = node[c][k] < lo[k] ? node[c][k] : lo[k];
		lo[k] -= DIR_NODES / 2 - 1;
	}
}

/* 1 when every node of the block around the cell of node[] is a room node of g. */
static int block_in_air(const struct vox_grid *g, int node[8][3])
{
	const struct vox_plan *p = &g->plan;
	int lo[3];

	block_lo(node, lo);
	for (int c = 0; c < DIR_NODES * DIR_NODES * DIR_NODES; c++) {
		const int i = lo[0] + c % DIR_NODES, j = lo[1] + c / DIR_NODES % DIR_NODES;
		const int k = lo[2] + c / (DIR_NODES * DIR_NODES);

		if (i < 0 || j < 0 || k < 0 || i >= p->n[0] || j >= p->n[1] || k >= p->n[2] ||
		    g->cls[vox_index(p, i, j, k)] == VOX_PAD)
			return 0;
	}
	return 1;
}

/* Every source and receiver must sit where all eight interpolation nodes are room nodes. */
static int check_points(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	double lo = 0.5 * room->spacing, d, w[8], size[3];
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
			const int reach = (int)(NEAR_REACH / room->spacing) + 2;
			double near[3];
			int k0, k1;

			if (r->window && r->part.rank > 0)	/* rank 0 says why */
				return rs_fail(err, RS_EINPUT, "%s is not in the air", key);
			vox_point_layers(r->grid, pos, &k0, &k1);
			if (run_sketch(r, k0 - reach, k1 + reach, err))
				return err->code;
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
		vox_to_room(&r->plan.grid, r->plan.grid.size, size);
		return room_at(err, room, at, key,
			       "[%g, %g, %g] is outside the air by %.3g m (valid: within "
			       "[%g, %g] x [%g, %g] x [%g, %g], half a cell inside the walls)",
			       pos[0], pos[1], pos[2], d, lo, size[0] - lo, lo, size[1] - lo, lo,
			       size[2] - lo);
	}
	for (int i = 0; i < room->nsources; i++) {	/* directional ones: their cells' centres */
		const struct room_source *s = &room->sources[i];
		double c[3];
		char key[64];

		if (s->pattern_a == 1)
			continue;
		snprintf(key, sizeof(key), "sources[%d].directivity", i);
		if (r->plan.grid.fcc)
			return room_at(err, room, s->pattern_at, key, "%s needs a cubic grid: the "
				       "fcc scheme has no directional sources (valid: omni, or another "
				       "stencil)", s->pattern);
		run_source_pos(r, s, c);
		if (vox_point(r->grid, c, node, w, &d))
			return room_at(err, room, s->pattern_at, key, "a %s source sits at the centre "
				       "of its cell, [%.3f, %.3f, %.3f], and that is not in the air "
				       "(valid: a position a cell or more inside the walls)", s->pattern,
				       c[0], c[1], c[2]);
		if (s->balloon && !block_in_air(r->grid, node))
			return room_at(err, room, s->pattern_at, key, "a source with a balloon (%s) "
				       "is a block of %d x %d x %d nodes around its cell's centre "
				       "[%.3f, %.3f, %.3f], and some lie outside the air (valid: a "
				       "position about %.3g m or more inside every wall)", s->pattern,
				       DIR_NODES, DIR_NODES, DIR_NODES, c[0], c[1], c[2],
				       DIR_NODES / 2 * r->plan.grid.h);
	}
	return 0;
}

/* 1 when source src at pos adds to a cell this rank updates (always, undecomposed): the
 * eight nodes of pos, and a balloon's block DIR_NODES / 2 - 1 layers further. */
static int source_here(const struct run *r, const struct room_source *src, const double pos[3])
{
	const int more = src->balloon ? DIR_NODES / 2 - 1 : 0;
	int lo, hi;

	if (r->part.size == 1)
		return 1;
	vox_point_layers(r->grid, pos, &lo, &hi);
	return hi + more >= r->part.own[0] && lo - more <= r->part.own[1];
}

/*
 * ROOMSIM_HOLD_AT=STEP, for the tests that interrupt a run in a known state however loaded
 * the machine: the first source to reach STEP (or source SOURCE, with SOURCE:STEP) stops
 * there (after any checkpoint or frame of that step), rank 0 says so on stderr, and every
 * rank waits for a stop signal, at most HOLD_SECONDS. 1 when the run is to stop (on every
 * rank, when decomposed).
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

/* Snapshot frames taken by the end of step `step`: frame j at step j every + lag. */
static long frames_by(long step, long every, long lag)
{
	return step < lag ? 0 : (step - lag) / every + 1;
}

void run_source_pos(const struct run *r, const struct room_source *src, double pos[3])
{
	const double h = r->plan.grid.h, *o = r->grid->origin;
	double q[3];

	memcpy(pos, src->pos, sizeof(src->pos));
	if (src->pattern_a == 1)
		return;
	vox_to_grid(&r->plan.grid, src->pos, q);	/* the cell's centre, in the grid */
	for (int a = 0; a < 3; a++)
		q[a] = o[a] + (floor((q[a] - o[a]) / h) + 0.5) * h;
	vox_to_room(&r->plan.grid, q, pos);
}

/*
 * A source with a balloon (solver/directivity.h): the block's filters, designed once per
 * source and run in the room's axes (then each node's is the grid node's there), through
 * which sig drives each node, up to the last sample of sig above
 * SIG_TAIL of its peak and the filters' length after it.
 */
#define SIG_TAIL 1e-12

static int add_balloon(struct run *r, const struct room_source *src, const double *sig, long n)
{
	const int nb = DIR_NODES * DIR_NODES * DIR_NODES;
	const struct vox_grid *g = r->window ? r->window : r->grid;
	struct dir_design *dd = malloc(sizeof(*dd));
	struct rs_error err = { 0 };
	int of[DIR_NODES * DIR_NODES * DIR_NODES];
	double pos[3], w[8], d, peak = 0, *v = NULL;
	int node[8][3], lo[3], rc = -1;
	long last = 0, len;

	if (!dd)
		return -1;
	run_source_pos(r, src, pos);
	if (vox_point(g, pos, node, w, &d) ||
	    dir_design(src, r->plan.grid.h, r->plan.dt, r->room->c, r->room->fmax, dd, &err))
		goto out;
	block_lo(node, lo);
	for (long i = 0; i < n; i++)
		peak = fmax(peak, fabs(sig[i]));
	for (long i = 0; i < n; i++)
		if (fabs(sig[i]) > SIG_TAIL * peak)
			last = i;
	len = last + DIR_TAPS < n ? last + DIR_TAPS : n;
	if (!(v = calloc((size_t)len * nb, sizeof(*v))))
		goto out;
	for (int c = 0; c < nb; c++) {	/* the design's node (the room's axes) of grid node c */
		const int at[3] = { c % DIR_NODES, c / DIR_NODES % DIR_NODES,
				    c / (DIR_NODES * DIR_NODES) };
		int m[3];

		for (int a = 0; a < 3; a++)
			m[room_axis_of(r->plan.grid.slab, a)] = at[a];
		of[c] = m[0] + DIR_NODES * (m[1] + DIR_NODES * m[2]);
	}
	for (long i = 0; i < len; i++)
		for (long j = 0; j < DIR_TAPS && j <= i; j++) {
			const double s = sig[i - j];

			if (s == 0)
				continue;
			for (int c = 0; c < nb; c++)
				v[(size_t)i * nb + c] += dd->g[of[c]][j] * s;
		}
	rc = fdtd_add_source_block(r->engine, lo, DIR_NODES, v, (size_t)len) < 0 ? -1 : 0;
out:
	free(dd);
	free(v);
	return rc;
}

/*
 * Source src into the engine, driven by sig: an omni source as a point; a directional one
 * (docs/physics.md, "Directional sources") at its cell's centre, on its eight nodes, as a
 * monopole of a sig and a dipole along its aim whose two poles, a cell apart, carry
 * +-(1 - a) lambda times the running sum of sig (trapezoidal): in the far field
 * (a + (1 - a) cos) sig.
 */
static int add_source(struct run *r, const struct room_source *src, const double *sig, long n)
{
	const double a = src->pattern_a;
	double pos[3], w[8], d, g[8], aim[3], *v, sum = 0;
	int node[8][3], lo[3] = { INT_MAX, INT_MAX, INT_MAX }, rc;

	if (a == 1)
		return fdtd_add_source(r->engine, src->pos, sig, (size_t)n) < 0 ? -1 : 0;
	if (src->balloon)
		return add_balloon(r, src, sig, n);
	run_source_pos(r, src, pos);
	if (vox_point(r->grid, pos, node, w, &d) || !(v = malloc((size_t)n * 8 * sizeof(double))))
		return -1;
	for (int c = 0; c < 8; c++)
		for (int k = 0; k < 3; k++)
			lo[k] = node[c][k] < lo[k] ? node[c][k] : lo[k];
	/* the aim's derivative of each node's weight at the centre, times h: +-1/4 per axis */
	vox_to_grid(&r->plan.grid, src->aim, aim);
	for (int c = 0; c < 8; c++) {
		g[c] = 0;
		for (int k = 0; k < 3; k++)
			g[c] += aim[k] * (node[c][k] > lo[k] ? 0.25 : -0.25);
	}
	for (long i = 0; i < n; i++) {
		const double q = (1 - a) * r->plan.lambda * (sum + 0.5 * sig[i]);

		for (int c = 0; c < 8; c++)
			v[8 * i + c] = a * sig[i] * w[c] + q * g[c];
		sum += sig[i];
	}
	rc = fdtd_add_source_nodes(r->engine, pos, v, (size_t)n);
	free(v);
	return rc < 0 ? -1 : 0;
}

/* Simulate source s; its signals land in r->signals. */
static int simulate(struct run *r, int s, struct rs_error *err)
{
	const struct room *room = r->room;
	const struct room_source *src = &room->sources[s];
	const long steps = r->plan.steps;
	const int resuming = r->resume && s == r->resumed.source;
	/* ROOMSIM_HOLD_AT holds in this source */
	const int mine = !r->hold_source[0] || !strcmp(r->hold_source, src->name);
	/* frame j is taken at step j every + lag: band-limited, once its window has passed */
	const long every = room->snap_every, lag = r->plan.frame_m;
	struct snap_plane *pl = NULL;
	struct snap_file *sf = NULL;
	struct snapper writer = { 0 };
	struct app_progress prog;
	double *sig = malloc((size_t)steps * sizeof(double));
	int *index = NULL, rc = 0;
	long batch, chunk;
	char path[ROOM_PATH_MAX + 80];
	double at[3];

	if (!sig)
		return rs_fail(err, RS_ENOMEM, "out of memory for the source signal");
	fdtd_reset(r->engine);
	sig_source(src, r->plan.dt, (size_t)steps, sig);
	run_source_pos(r, src, at);
	if (source_here(r, src, at) && add_source(r, src, sig, steps)) {
		rc = rs_fail(err, RS_ENOMEM, "cannot add source %s: %s", src->name,
			     fdtd_error(r->engine));
		goto out;
	}
	if (resuming && (rc = run_resume_engine(r, err)))
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
		if (!index || !(pl = run_make_planes(r, index))) {
			rc = rs_fail(err, RS_ENOMEM, "out of memory for snapshots");
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s_snapshots.h5", r->out, src->name);
		if (r->part.rank == 0 &&	/* it writes them */
		    (!(sf = resuming ? snap_reopen(path, pl, room->nplanes, g->h, every, r->plan.dt,
						   frames_by(fdtd_steps(r->engine), every, lag), err)
				     : snap_open(path, pl, room->nplanes, g->h, every * r->plan.dt,
						 err)) ||
		     (rc = snapper_start(&writer, r->engine, sf, pl, room->nplanes, most, r->out,
					 path, err)))) {
			rc = err->code;	/* several ranks: cmd_run ends them all */
			goto out;
		}
		if (!resuming && !lag && (rc = snapper_queue(&writer, r, pl, index, 0, err)))
			goto out;
		if (sf && (rc = snap_band(sf, lag ? room->fmax : 0, 2 * lag + 1, err)))
			goto out;
	}
	batch = fdtd_batch(r->engine);
	chunk = (long)fmin(CHUNK_MAX, fmax(CHUNK_STEPS, CHUNK_NODES /
					   (double)vox_nodes(&r->plan.grid))) / CHUNK_STEPS * CHUNK_STEPS;
	chunk = (chunk + batch - 1) / batch * batch;	/* whole towers of diamond */
	rs_phase("source set");
	app_progress_begin(&prog, src->name, steps, (double)vox_nodes(&r->plan.grid), r->quiet);
	while (fdtd_steps(r->engine) < steps) {
		long done = fdtd_steps(r->engine), n = steps - done;

		if (n > chunk)
			n = chunk;
		if (every && n > frames_by(done, every, lag) * every + lag - done)
			n = frames_by(done, every, lag) * every + lag - done;
		if (n > grids_room(&r->grids))
			n = grids_room(&r->grids);
		if (mine && r->hold > done && n > r->hold - done)
			n = r->hold - done;
		/* the ranks of a decomposed run stop together, at the end of a chunk */
		if (mine && done == r->hold)
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
		if (every && fdtd_steps(r->engine) > done && fdtd_steps(r->engine) >= lag &&
		    (fdtd_steps(r->engine) - lag) % every == 0 &&
		    snapper_queue(&writer, r, pl, index, (fdtd_steps(r->engine) - lag) / every,
				  err)) {
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
		if (run_checkpoint_due(r) && (rc = run_checkpoint(r, s, &writer, err)))
			break;
		app_progress_update(&prog, fdtd_steps(r->engine));
		if (!done)
			rs_phase("first chunk stepped");
	}
	rs_phase("stepped");
	/* SIGTERM (a scheduler's), or any interrupt of a run that takes checkpoints: one more */
	if (rc == RS_EINTR &&
	    part_any(&r->part, stop_requested == SIGTERM || r->ckpt_seconds > 0 || r->ckpt_steps > 0)) {
		struct rs_error e = { 0 };
		/* none again at the step of the last one (nor at a source's start) */
		int have = r->ckpt_last_step > 0 && fdtd_steps(r->engine) == r->ckpt_last_step;

		if (fdtd_steps(r->engine) > r->ckpt_last_step) {
			if (run_checkpoint(r, s, &writer, &e))
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
		double *to = r->signals + ((size_t)s * r->nrows + q) * r->plan.nsamples;

		if (r->rec_index[q] >= 0)
			memcpy(to, fdtd_receiver(r->engine, r->rec_index[q]),
			       r->plan.nsamples * sizeof(double));
		part_send0(&r->part, r->rec_rank[q], to, to, r->plan.nsamples * sizeof(double));
	}
	rs_phase("receivers gathered");
	if (r->nsp) {
		const double t0 = app_now();

		rc = run_spatial_encode(r, s, err);
		r->sp_seconds[1] += app_now() - t0;
		if (rc) {
			rc = err->code;
			goto out;
		}
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
	run_free_planes(pl, room->nplanes);
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
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end, names[512];

	*backend = ROOM_BACKEND_AUTO;
	r->kernel = -1;
	optind = 1;
	r->ckpt_seconds = -1;	/* the room's unless --checkpoint */
	while ((c = getopt_long(argc, argv, "o:b:k:t:g:c:rqs:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (r->nsets == APP_MAX_SETS)
				return rs_fail(err, RS_EINPUT, "--set: more than %d of them",
					       APP_MAX_SETS);
			r->sets[r->nsets++] = optarg;
			break;
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
		const char *v = getenv("ROOMSIM_HOLD_AT"), *colon = strchr(v, ':');

		if (colon && (size_t)(colon - v) < sizeof(r->hold_source)) {
			memcpy(r->hold_source, v, (size_t)(colon - v));
			r->hold_source[colon - v] = 0;
			v = colon + 1;
		}
		r->hold = strtol(v, &end, 10);
		if (*end || r->hold < 1 || (colon && !r->hold_source[0]))
			return rs_fail(err, RS_EINPUT, "ROOMSIM_HOLD_AT: '%s' is not valid (valid: "
				       "a step, a whole number from 1, or SOURCE:STEP)",
				       getenv("ROOMSIM_HOLD_AT"));
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
 * A decomposed run (solver/part.h), its window built (run_build_grid): the receiver grids'
 * points this rank reads, its GPU and the connections to its neighbours.
 */
static int decompose(struct run *r, struct rs_error *err)
{
	const int cuda = r->backend == ROOM_BACKEND_CUDA;

	if (r->part.size == 1)
		return 0;
	if (grids_split(&r->grids, &r->part, r->grid, err))
		return err->code;
	if (cuda && part_connect_wait(&r->part, err))	/* started in prepare */
		return err->code;
	rs_phase("GPU and NCCL awaited");
	if (!r->quiet) {
		int least = r->plan.grid.room[2], most = 0;
		char slabs[96];

		for (int q = 0; q < r->part.size; q++) {
			int first, last;

			part_slab(&r->part, &r->plan.grid, q, &first, &last);
			least = last - first + 1 < least ? last - first + 1 : least;
			most = last - first + 1 > most ? last - first + 1 : most;
		}
		if (r->part.cut)
			snprintf(slabs, sizeof(slabs), "slabs of %d to %d layers (of equal work)",
				 least, most);
		else if (most > least)
			snprintf(slabs, sizeof(slabs), "slabs of %d or %d layers", least, most);
		else
			snprintf(slabs, sizeof(slabs), "slabs of %d layers", least);
		fprintf(stderr, "roomsim: %d ranks%s, %s across %c; rank 0 updates layers %d to "
			"%d of its window %d to %d\n", r->part.size,
			!cuda ? " (halos through MPI)" : r->part.staged ? " on GPUs (halos through "
			"host memory and MPI)" : " on as many GPUs (halos through NCCL)", slabs,
			'x' + r->plan.grid.slab, r->part.own[0], r->part.own[1], r->part.win[0],
			r->part.win[1]);
	}
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
	struct room *room = cfg_load_set(file, r->sets, r->nsets, err);
	struct fdtd_setup setup = { 0 };
	size_t pairs;
	int rc;

	if (!room)
		return err->code;
	rs_phase("room read");
	r->room = room;
	if (r->part.rank == 0)
		app_warn_unused(room);
	if (!r->out)
		r->out = room->out_dir;
	r->backend = backend;
	if (choose_backend(r, err))
		return err->code;
	rs_phase("backend chosen");
	/* several ranks: the GPUs' communicator and contexts made beside the setup; one GPU:
	 * its context */
	if (r->part.size > 1 && part_connect(&r->part, r->backend == ROOM_BACKEND_CUDA, err))
		return err->code;
	if (r->part.size == 1 && r->backend == ROOM_BACKEND_CUDA)
		fdtd_cuda_warm();
	if (room->stencil_auto) {	/* the fastest scheme for the dispersion asked */
		struct app_candidate c[APP_MAX_CANDIDATES];
		int n, k = app_scheme_choose(room, r->backend == ROOM_BACKEND_CUDA, r->threads,
					     r->part.size, c, &n, err);

		if (k < 0)
			return err->code;
		if (!r->quiet && isnan(c[k].seconds))
			fprintf(stderr, "roomsim: scheme auto: %s, %.2f points per wavelength for %g "
				"at fmax: the only one of %d schemes left to weigh, so not timed "
				"(roomsim info says why)\n", c[k].name, c[k].ppw, room->dispersion, n);
		else if (!r->quiet)
			fprintf(stderr, "roomsim: scheme auto: %s, %.2f points per wavelength for %g "
				"at fmax: %.1f s of stepping%s predicted (%.1f Gvox/s), the least of "
				"%d schemes (roomsim info lists them)\n", c[k].name, c[k].ppw,
				room->dispersion, c[k].seconds, c[k].fitted ? " and fitting walls" : "",
				c[k].rate / 1e9, n);
	}
	if (app_plan(room, &r->plan, err))
		return err->code;
	/* one GPU: the run must fit in its memory (a decomposed run's slabs are checked by each
	 * rank's engine) */
	if (r->backend == ROOM_BACKEND_CUDA && r->part.size == 1 &&
	    app_check_device(room, &r->plan, r->kernel, err))
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
	/* the geometric engine's scene: a hole in the room is bad input, found before the grid */
	if (run_hybrid_open(r, err))
		return err->code;
	rs_phase("geometric scene built");
	if (run_build_grid(r, err))
		return err->code;
	rs_phase("voxel grid built");
	if (check_points(r, err) || run_spatial_open(r, err) ||
	    grids_make(&r->grids, room, r->window ? r->window : r->grid, r->plan.grid.n[2],
		       &r->part, err))
		return err->code;
	rs_phase("points checked");
	if (decompose(r, err))
		return err->code;
	for (int i = 0; i < r->grids.n && !r->quiet; i++)
		fprintf(stderr, "roomsim: receiver grid %s: %zu points (%s, %d x %d lattice)\n",
			room->grids[i].name, r->grids.pts[i].n, r->grids.kind[i],
			r->grids.pts[i].dims[0], r->grids.pts[i].dims[1]);
	pairs = (size_t)room->nsources * r->nrows;
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
	rs_phase("materials fitted");
	setup.banks = r->banks->bank;
	setup.nbanks = room->nmaterials;
	setup.dt = r->plan.dt;
	setup.grid_receivers = room->ngrids > 0;
	setup.band_frames = r->plan.frame_m > 0;
	for (int i = 0; i < room->nsources; i++)
		setup.block_sources |= room->sources[i].balloon != NULL;
	if (create_engine(r, &setup, err) || (setup.band_frames && run_frames_setup(r, err)))
		return err->code;
	rs_phase("engine made");
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
	r->rec_rank = calloc((size_t)r->npoints + 1, sizeof(int));
	r->rec_index = calloc((size_t)r->npoints + 1, sizeof(int));
	if (!r->rec_rank || !r->rec_index)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	for (int q = 0; q < r->npoints; q++) {	/* each read by one rank */
		double pos[3];
		int lo, hi;

		run_point(r, q, pos);
		vox_point_layers(r->grid, pos, &lo, &hi);
		r->rec_rank[q] = part_owner(&r->part, &r->plan.grid, lo);
		r->rec_index[q] = -1;
		if (r->rec_rank[q] == r->part.rank &&
		    (r->rec_index[q] = fdtd_add_receiver(r->engine, pos)) < 0)
			return rs_fail(err, RS_ENOMEM, "cannot add receiver %s: %s",
				       room->receivers[q < room->nreceivers ? q : 0].name,
				       fdtd_error(r->engine));
	}
	if (fdtd_reserve(r->engine, r->plan.nsamples))
		return rs_fail(err, RS_ENOMEM, "receiver buffers: %s", fdtd_error(r->engine));
	if (r->ckpt_seconds < 0) {	/* no --checkpoint: the room's */
		r->ckpt_seconds = room->ckpt_seconds;
		r->ckpt_steps = room->ckpt_steps;
	}
	/* the output directory, the checkpoint to go on from, the space kept for the WAVs and
	 * rirs.h5: every rank goes on only when all have them */
	rc = r->part.rank == 0 ? app_mkdirs(r->out, err) : 0;
	if (!rc && r->resume)
		rc = run_resume_open(r, err);
	if (!rc && r->part.rank == 0)
		rc = keep_space(r, err);
	if (part_any(&r->part, rc != 0))
		return rc ? rc : rs_fail(err, RS_EIO, "another rank could not start (rank 0 says why)");
	rs_phase("outputs' space kept");
	return 0;
}

static void summary(struct run *r, double seconds)
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
	if (!r->quiet && r->nsp && r->part.rank == 0 && !run_spatial_hrtfs(r, NULL))
		fprintf(stderr, "roomsim: spatial receivers: %.1f s encoding, %.1f s writing their "
			"WAVs; %.1f s opening HRTFs beside the stepping\n", r->sp_seconds[1],
			r->sp_seconds[2], r->sp_seconds[0]);
	if (!r->quiet && r->ga_started) {
		long lost = 0;

		for (int s = 0; s < r->ga_done; s++)
			lost += r->ga_escaped[s];
		fprintf(stderr, "roomsim: geometric engine: %d source(s) traced in %.1f s beside the "
			"wave part, %.0f reflections per ray\n", r->ga_done, r->ga_seconds,
			r->ga_done ? r->ga_reflections[0] : 0.0);
		if (lost)
			fprintf(stderr, "roomsim: geometric engine: %ld ray(s) left the room through "
				"gaps in its surfaces (their energy is lost)\n", lost);
	}
	if (r->wav_clipped)
		fprintf(stderr, "roomsim: warning: %zu WAV samples clipped at full scale (use "
			"output.wav.format: float32 or output.wav.normalize: true)\n", r->wav_clipped);
}

/*
 * What the setup took, before the first step: its time and the voxel grid's, and the most
 * host memory any rank has held, by then and by the grid's end, against its slab's share of
 * the grid's class bytes and walls (every rank together).
 */
static void setup_summary(struct run *r, double seconds)
{
	const struct vox_grid *g = r->window ? r->window : r->grid;
	const size_t layer = (size_t)g->plan.n[0] * g->plan.n[1];
	/* this rank's layers of g: its slab, or all */
	const int k0 = r->window ? r->part.own[0] - g->zbase : 0;
	const int k1 = r->window ? r->part.own[1] - g->zbase : g->plan.n[2] - 1;
	size_t walls = 0;
	struct rusage ru;
	int peak[3];
	char a[32], b[32], c[32];

	for (size_t w = 0; w < g->nwalls; w++)
		walls += g->walls[w].cell / layer >= (size_t)k0 && g->walls[w].cell / layer <= (size_t)k1;
	getrusage(RUSAGE_SELF, &ru);
	peak[0] = -(int)ru.ru_maxrss;	/* KiB, the largest as the least */
	peak[1] = -(int)r->vox_peak;
	peak[2] = -(int)(((double)layer * (k1 - k0 + 1) + (double)walls * sizeof(struct vox_wall)) /
			 1024);
	part_min_ints(&r->part, peak, 3);
	if (!r->quiet)
		fprintf(stderr, "roomsim: set up in %.1f s, the voxel grid in %.1f s; host memory at "
			"most %s a process (%s by the grid's end), for a share of the grid of %s\n",
			seconds, r->vox_seconds, app_bytes(1024.0 * -peak[0], a),
			app_bytes(1024.0 * -peak[1], c), app_bytes(1024.0 * -peak[2], b));
}

int cmd_run(int argc, char **argv)
{
	struct run r = { 0 };
	struct rs_error err = { 0 };
	const char *file = NULL;
	int backend, rc;
	double t0 = app_now();

	rs_phase("started");
	rc = part_init(&r.part, &err);
	if (!rc && r.part.size > 1) {
		rs_phase_rank(r.part.rank);
		rs_phase("MPI started");
	}
	if (!rc)
		rc = parse_args(argc, argv, &file, &r, &backend, &err);
	if (!rc && r.gpus > 1 && r.part.size == 1)
		rc = run_start_ranks(r.gpus, argc, argv, &err);
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
	if (!rc)
		setup_summary(&r, app_now() - t0);
	if (!rc)
		rc = run_hybrid_start(&r, &err);
	if (!rc) {
		rs_phase("ready to step");
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
			/* the geometric part of this source, for its full-band WAVs */
			wrc = run_hybrid_wait(&r, s, rc ? &werr : &err);
			rs_phase("geometric part awaited");
			if (wrc && rc)
				fprintf(stderr, "roomsim: %s\n", werr.msg);
			if (!rc)
				rc = wrc;
			wrc = run_write_outputs(&r, s, rc ? &werr : &err);
			if (wrc && rc)	/* the first failure is the run's; say this one too */
				fprintf(stderr, "roomsim: %s\n", werr.msg);
			if (!rc)
				rc = wrc;
			rs_phase("outputs written");
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
		run_hybrid_stop(&r);	/* the tracer's thread ends with its source */
		if (!rc || rc == RS_EINTR)
			summary(&r, app_now() - t0);
	}
	/* every rank meets the same bad input: rank 0 says it; the others their own failures */
	if (rc && (r.part.rank == 0 || (rc != RS_EINPUT && rc != RS_EINTR)))
		fprintf(stderr, r.part.rank ? "roomsim: rank %d: %s\n" : "roomsim: %.0d%s\n",
			r.part.rank, err.msg[0] ? err.msg : rs_strerror(rc));
	if (r.reserved)
		app_unreserve(r.out);
	run_hybrid_close(&r);
	run_spatial_close(&r);
	grids_free(&r.grids);
	if (rs_phases() && r.engine && r.backend == ROOM_BACKEND_CUDA) {
		/* each rank's own work, to see how even its slab is (it overwrites the fields) */
		char what[128];
		const double t = fdtd_time_steps(r.engine, PHASE_STEPS);

		snprintf(what, sizeof(what), "%d steps of the update alone: %.3f ms a step "
			 "(layers %d to %d)", PHASE_STEPS, t * 1e3 / PHASE_STEPS, r.part.own[0],
			 r.part.own[1]);
		rs_phase(what);
	}
	rs_phase("run done");
	fdtd_destroy(r.engine);
	fdtd_cuda_settle();	/* a run that failed before its engine */
	rs_phase("engine freed");
	free(r.banks);
	vox_free(r.window);
	vox_free(r.grid);
	room_turned_free(r.turned);
	free(r.mat_area);
	for (int i = 0; r.plane_room && i < r.room->nplanes; i++)
		free(r.plane_room[i]);
	free(r.plane_room);
	free(r.rec_rank);
	free(r.rec_index);
	free(r.frame_p);
	part_end(&r.part);
	rs_phase("MPI ended");
	free(r.signals);
	free(r.air);
	free(r.completed);
	room_free((struct room *)r.room);
	return app_exit_status(rc);
}
