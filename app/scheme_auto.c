/*
 * scheme_auto.c - scheme.stencil: auto (app.h, app_scheme_choose): the scheme that reaches the
 * room's dispersion tolerance at fmax in the least time on this machine. Each candidate's
 * spacing follows from its worst-case phase error (docs/stencils.md), its nodes, steps and
 * memory from app_plan(), and its time from a rate measured on a box of its size
 * (app_gpu_rate, cached per device; app_cpu_rate_of). In a room that is not a box a larger
 * stencil that is not axial runs at a Courant number of at most 1/sqrt(3) (its fallback
 * cells', fdtd.c), and at no coarser a spacing than the 7-point scheme's: its walls are the
 * 7-point update, whose error at the larger stencil's spacing `roomsim converge` measures as
 * the 7-point scheme's there (docs/performance.md, "Accuracy in real rooms"): there it is the
 * 7-point scheme. An axial (leggy) stencil's walls are mirrored there as in a box. In a room
 * of a mesh or shapes whose grid.walls is not given, fcc with fitted walls is weighed too, at
 * the coarser spacing at which its error was measured within the 7-point staircase's. No
 * scheme updates a cell faster than the 7-point scheme, so one that updates no fewer cells is
 * never timed, and none is when the 7-point scheme's run is too short to pay for timing
 * them; when the 7-point scheme is left alone, nothing is timed. On the GPU the 7-point
 * scheme itself is timed last, and not at all when another's predicted time is less than
 * half of the least its own can be: its room's air cells at a rate above any it reached
 * (AUTO_GPU_RATE_BOUND, air_share).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "../geometry/voxel.h"
#include "../solver/fdtd.h"
#ifdef ROOMSIM_CUDA
#include "../solver/cuda/fdtd_cuda.h"
#endif

#define CPU_RATE_CELLS 2e6	/* the CPU's timing box, as roomsim info's calibration */
#define CPU_RATE_MIN 2e5
#define CPU_RATE_STEPS 4

/*
 * Each candidate runs at `accuracy` times grid.dispersion: the multiple at which `roomsim
 * converge` measured its error within the 7-point scheme's at grid.dispersion in every room
 * tried (docs/performance.md, "Accuracy in real rooms": the shoebox example and the studio,
 * 0.5 s, against 24 points per wavelength; with grid.fit fcc comes within it at 0.6 there but
 * not in the corridor at 0.4, tests/converge-boxes.sh). 0: not weighed, its error not brought
 * there at any dispersion tried (leggy order 4 and compact R = 4 stay above it in the shoebox
 * at 0.0015), or not measured. fcc's fitted walls run in carved rooms only, at 1.75 times
 * (docs/performance.md, "Fitted walls in carved rooms": within the 7-point staircase's error
 * at 63 Hz to 1 kHz in the concert hall at 2 kHz over 0.6 s, at 1.5, 1.65 and 1.75 times, in
 * the seminar room at 2 kHz over 0.5 s, the mean of three placements, at 1.5, 1.75 and 2
 * times, and in the L-shaped room at 2 times; at 2 times 0.02 dB over it at 500 Hz in the
 * hall). ROOMSIM_AUTO_ACCURACY=dispersion weighs every one at grid.dispersion itself, by its
 * open-space dispersion alone (the tests' way to weigh them).
 */
static const struct {
	enum room_stencil stencil;
	int order, radius2;
	const char *variant;
	const char *name;	/* the stencil's (stn_from_config's), for one not weighed */
	double accuracy;
	int fitted;		/* with fitted walls (grid.walls: fitted), in a carved room */
} candidates[] = {
	{ ROOM_STENCIL_LEGGY, 2, 0, NULL, "leggy order 2 (7 points)", 1, 0 },	/* the 7-point */
	{ ROOM_STENCIL_LEGGY, 4, 0, NULL, "leggy order 4 (13 points)", 0, 0 },
	{ ROOM_STENCIL_COMPACT, 2, 2, NULL, "compact-in-space (19 points)", 0, 0 },
	{ ROOM_STENCIL_COMPACT, 2, 3, NULL, "compact-in-space (27 points)", 0, 0 },
	{ ROOM_STENCIL_COMPACT, 2, 4, NULL, "compact-in-space (33 points)", 0, 0 },
	{ ROOM_STENCIL_INTERPOLATED, 2, 0, "IWB", "interpolated IWB (27 points)", 0.15, 0 },
	{ ROOM_STENCIL_INTERPOLATED, 2, 0, "IISO", "interpolated IISO (19 points)", 0, 0 },
	{ ROOM_STENCIL_FCC, 2, 0, NULL, "fcc (13 points on the FCC lattice)", 0.15, 0 },
	{ ROOM_STENCIL_FCC, 2, 0, NULL, "fcc (13 points on the FCC lattice), fitted walls", 1.75,
	  1 },
};

/*
 * fcc's fitted walls cost time twice, neither measured by timing a box: their setup (measuring
 * the cut cells, lending, the stability check), FITTED_FCC_SETUP core-seconds per boundary
 * node of the plan (the concert hall at 2 kHz on 16 cores: 2.65 to 2.77 us a node at
 * dispersions 0.02 to 0.01, 7.1 to 14.4 s), and their pass after each step: on the GPU
 * FITTED_FCC_PASS_GPU seconds per boundary node (the H200, over the hall's update at the
 * staircase's 150 G nodes/s: 0.27, 0.23 and 0.09 ns at 0.02, 0.015 and 0.01), on the CPU
 * FITTED_FCC_PASS_CPU core-seconds (the development machine's 2 cores: 74 ns a node in a
 * carved box of 1.7·10^6 nodes and 62427 boundary nodes, 48 ns in rooms/l-shaped.yaml at
 * dispersion 0.015).
 */
#define FITTED_FCC_SETUP 4.5e-5
#define FITTED_FCC_PASS_GPU 2.7e-10
#define FITTED_FCC_PASS_CPU 1.5e-7

static double accuracy(int k);

static const char fcc_carved[] = "its staircase measured less accurate than the 7-point "
				 "scheme's in carved rooms: name it to run it "
				 "(docs/performance.md)";
/* With grid.walls: fitted the 7-point scheme alone is weighed: the larger stencils do not run
 * fitted walls, and fcc's, at grid.dispersion, were measured further from the converged
 * answer than the 7-point scheme's at 500 Hz and 1 kHz in the seminar room and at 63 Hz in
 * the L-shaped room (docs/performance.md, "Fitted walls in carved rooms"). */
static const char fitted_fcc[] = "its fitted walls measured less accurate than the 7-point "
				 "scheme's: name it to run it (docs/performance.md)";

/* Candidate k as a room: room with that stencil at the spacing and Courant number it needs. */
static int candidate(const struct room *room, int k, double ppw7, struct room *r,
		     struct app_candidate *c)
{
	static struct stn_stencil st;	/* large: not on the stack */
	double limit;
	int walls7;	/* by carved walls it takes the 7-point update (fdtd.c) */

	*r = *room;	/* shallow: read only */
	r->stencil = candidates[k].stencil;
	r->order = candidates[k].order;
	r->radius2 = candidates[k].radius2;
	r->nweights = 0;
	r->variant = 0;
	for (int v = 0; candidates[k].variant && stn_variant_names[v]; v++)
		if (!strcmp(stn_variant_names[v], candidates[k].variant))
			r->variant = v;
	memset(c, 0, sizeof(*c));
	c->seconds = HUGE_VAL;
	if (stn_from_config(r, &st) || (limit = stn_courant_limit(&st)) <= 0)
		return snprintf(c->why, sizeof(c->why), "not a stable scheme"), -1;
	snprintf(c->name, sizeof(c->name), "%s", st.name);
	if (candidates[k].fitted)
		snprintf(c->name, sizeof(c->name), "%.48s, fitted walls", st.name);
	if (r->stencil == ROOM_STENCIL_FCC && room->shaped && !candidates[k].fitted)
		return snprintf(c->why, sizeof(c->why), "%s", fcc_carved), -1;
	walls7 = k > 0 && r->stencil != ROOM_STENCIL_FCC && !stn_is_axial(&st);
	r->fitted = room->fitted || candidates[k].fitted;
	/* a named scheme at its published Courant number, the others at their limit; the
	 * 7-point scheme's fitted walls at the one the room's reading gave them, fcc's at theirs */
	if (!room->courant_given)
		r->courant = candidates[k].fitted ? FITTED_FCC_COURANT
			     : room->fitted ? room->courant
			     : r->stencil == ROOM_STENCIL_INTERPOLATED || r->stencil == ROOM_STENCIL_FCC
				     ? fmin(1, st.courant / limit) : 1;
	/* a carved room's fallback cells take the 7-point update: stable to 1/sqrt(3) only */
	if (room->shaped && walls7 && r->courant * limit > 1 / sqrt(3.0)) {
		if (room->courant_given)
			return snprintf(c->why, sizeof(c->why), "grid.courant %g is past 1/sqrt(3) "
					"in a room that is not a box", r->courant), -1;
		r->courant = 1 / sqrt(3.0) / limit;
	}
	r->ppw = stn_ppw_for(&st, r->courant * limit, accuracy(k) * room->dispersion);
	if (!isfinite(r->ppw))
		return snprintf(c->why, sizeof(c->why), "cannot reach %g",
				accuracy(k) * room->dispersion), -1;
	if (room->shaped && walls7)	/* its walls: the 7-point scheme's error at its spacing */
		r->ppw = fmax(r->ppw, ppw7);
	r->spacing = r->c / (r->fmax * r->ppw);
	if (room->fit) {	/* grid.fit: each candidate's spacing fitted to the box */
		r->unfitted = r->spacing;
		r->spacing = vox_fit_spacing(r->box, r->spacing, NULL);
		r->ppw = r->c / (r->fmax * r->spacing);
	}
	c->stencil = r->stencil;
	c->order = r->order;
	c->radius2 = r->radius2;
	c->variant = r->variant;
	c->fitted = r->fitted;
	c->courant = r->courant;
	c->ppw = r->ppw;
	c->spacing = r->spacing;
	c->unfitted = r->fit ? r->unfitted : r->spacing;
	return 0;
}

/* The rate the 7-point scheme cannot beat here, for the quick estimate of its run: on the
 * GPU above any measured per cell it updates (157 Gvox/s on the H100 bench box,
 * docs/performance.md; 269 on an H200 in the concert hall at 2 kHz, 238.8 s for 6.43e13
 * updates; the add bandwidth's 344 at 12 bytes a cell), on the CPU its own, measured. The GPU
 * kernels leave each block's layers of padding above and below its air, so counted over the
 * whole grid the rate can pass it (380 Gvox/s in rooms/auditorium, whose air fills 57 % of
 * its box): see air_share. */
#define AUTO_GPU_RATE_BOUND 3e11
/* A run the 7-point scheme finishes in less than this (at that bound) does not pay for timing
 * the others, on the GPU a box of the run's size each when not cached (seconds each);
 * ROOMSIM_AUTO_WEIGH=SECONDS sets another (0: weigh always). */
#define AUTO_WEIGH_SECONDS 60.0

/* Candidate k's fraction of grid.dispersion (above; 1 for all by ROOMSIM_AUTO_ACCURACY). */
static double accuracy(int k)
{
	const char *v = getenv("ROOMSIM_AUTO_ACCURACY");

	return v && !strcmp(v, "dispersion") ? 1 : candidates[k].accuracy;
}

static double weigh_seconds(void)
{
	const char *v = getenv("ROOMSIM_AUTO_WEIGH");
	char *end;
	double s;

	if (!v || !*v)
		return AUTO_WEIGH_SECONDS;
	s = strtod(v, &end);
	return *end || !(s >= 0) ? AUTO_WEIGH_SECONDS : s;
}

/* Candidate k's rate on this machine (0 and why when none), its memory on the GPU. A box is
 * timed with the staircase (fitted walls' pass is counted apart), r's walls set so for the
 * timing alone; fcc's box is never carved: its walls take no other update than its nodes',
 * and vox_carve cuts the cubic grid alone. */
static void rate_of(struct room *r, struct app_candidate *x, int gpu, int threads,
		    double device)
{
	const int fitted = r->fitted, shaped = r->shaped;
#ifdef ROOMSIM_CUDA
	struct app_gpu_rate g = { 0 };

	if (gpu) {
		struct app_plan plan;
		struct rs_error e = { 0 };

		if (app_plan(r, &plan, &e))
			return;
		x->memory = (double)cuda_memory(&plan.grid, r->precision, r->kernel, r->nreceivers,
						plan.nsamples, (size_t)plan.steps) +
			    (double)plan.branch_memory;
		if (device > 0 && x->memory > device) {
			snprintf(x->why, sizeof(x->why), "needs more device memory than the GPU has");
			return;
		}
	}
#else
	(void)device;
#endif
	r->fitted = 0;
	if (r->stencil == ROOM_STENCIL_FCC)
		r->shaped = 0;
#ifdef ROOMSIM_CUDA
	if (gpu) {
		app_gpu_rate(r, x->nodes, &g);
		x->rate = g.rate;
		if (!(g.rate > 0) && g.why[0])
			snprintf(x->why, sizeof(x->why), "%.120s", g.why);
		else
			snprintf(x->kernel, sizeof(x->kernel), "%s", g.kernel);
	}
#endif
	if (!gpu)
		x->rate = app_cpu_rate_of(r, threads,	/* not so few that threads idle */
					  fmin(fmax(x->nodes, CPU_RATE_MIN), CPU_RATE_CELLS),
					  CPU_RATE_STEPS);
	r->fitted = fitted;
	r->shaped = shaped;
	if (!(x->rate > 0) && !x->why[0])
		snprintf(x->why, sizeof(x->why), "no engine here runs it");
}

/* Why candidate k is not weighed in room (into why, len bytes): 1, or 0 when it is. */
static int left_out(const struct room *room, int k, int ranks, double quick, double weigh,
		    double rate7, char *why, size_t len)
{
	const int fcc = candidates[k].stencil == ROOM_STENCIL_FCC, fit = candidates[k].fitted;

	if (k == 0)
		return 0;
	if (room->fitted)
		snprintf(why, len, "%s", fcc ? fitted_fcc : "runs no fitted walls (grid.walls)");
	else if (fit && room->geo.voxels_path[0])
		snprintf(why, len, "a voxel file's room has no surface to fit");
	else if (fit && !room->shaped)
		snprintf(why, len, "runs rooms of a mesh or shapes: a box's walls pass through "
			 "fcc's nodes already");
	else if (fit && room->walls_given)
		snprintf(why, len, "grid.walls: staircase is given");
	else if (fit && ranks > 1)
		snprintf(why, len, "fitted walls run in one process, not in %d ranks", ranks);
	else if (!fit && room->shaped && fcc)
		snprintf(why, len, "%s", fcc_carved);
	else if (!fit && room->shaped)
		snprintf(why, len, "at the 7-point spacing (its walls are the 7-point update) it "
			 "updates no fewer cells, so it is never faster");
	else if (!accuracy(k))
		snprintf(why, len, "not weighed: roomsim converge has not seen it reach the 7-point "
			 "scheme's accuracy (docs/performance.md)");
	else if (quick < weigh)
		snprintf(why, len, "not weighed: the 7-point scheme's run (%.2g s at %.3g Gvox/s) "
			 "is too short to pay for timing it", quick, rate7 / 1e9);
	else
		return 0;
	return 1;
}

/*
 * The share of a grid of volume box that the 7-point scheme's GPU kernels cannot leave: the
 * room's air, which they update every step. A box fills it; a mesh's own volume is known; a
 * room of shapes or a voxel file gives 0 (unknown here), so that the 7-point scheme is timed.
 */
static double air_share(const struct room *room, double box)
{
	double v, a;

	vox_room_measure(room, &v, &a);
	return v > 0 && box > 0 ? fmin(1, v / box) : 0;
}

int app_scheme_choose(struct room *room, int gpu, int threads, int ranks,
		      struct app_candidate *c, int *n, struct rs_error *err)
{
	const int ncand = (int)(sizeof(candidates) / sizeof(candidates[0]));
	const double host = (double)app_memory_available();
	struct room *rooms = malloc(ncand * sizeof(*rooms));	/* large: not on the stack */
	int contends[sizeof(candidates) / sizeof(candidates[0])] = { 0 }, left = 0, best = -1;
	const double weigh = weigh_seconds();
	double device = 0, updates7 = HUGE_VAL, quick = HUGE_VAL, rate7 = 0, least7 = 0;

#ifdef ROOMSIM_CUDA
	if (gpu) {
		size_t mem = 0;
		char name[128];

		if (cuda_available(name, sizeof(name), &mem))
			device = (double)mem;
	}
#endif
	if (!rooms)
		return rs_fail(err, RS_ENOMEM, "out of memory weighing the schemes"), -1;
	*n = 0;
	for (int k = 0; k < ncand; k++) {	/* each candidate's grid and memory */
		struct app_candidate *x = &c[(*n)++];
		struct app_plan plan;
		struct rs_error e = { 0 };
		struct room *r = &rooms[k];

		memset(x, 0, sizeof(*x));
		if (left_out(room, k, ranks, quick, weigh, rate7, x->why, sizeof(x->why))) {
			x->seconds = HUGE_VAL;
			snprintf(x->name, sizeof(x->name), "%s", candidates[k].name);
			continue;
		}
		if (candidate(room, k, c[0].ppw, r, x))
			continue;
		if (app_plan(r, &plan, &e)) {
			snprintf(x->why, sizeof(x->why), "%.120s", e.msg);
			continue;
		}
		x->nodes = (double)vox_nodes(&plan.grid);
		x->steps = plan.steps;
		if (r->fitted && r->stencil == ROOM_STENCIL_FCC) {
			const int nt = threads > 0 ? threads : omp_get_max_threads();

			x->pass = (gpu ? FITTED_FCC_PASS_GPU : FITTED_FCC_PASS_CPU / nt) *
				  (double)plan.grid.boundary;
			x->setup = FITTED_FCC_SETUP * (double)plan.grid.boundary / nt;
		}
		x->memory = (double)plan.memory;
		if (host > 0 && x->memory > host) {
			snprintf(x->why, sizeof(x->why), "needs more memory than is free");
			continue;
		}
		if (k == 0) {
			updates7 = x->nodes * (double)x->steps;
			if (!gpu)
				rate_of(r, x, gpu, threads, device);
			rate7 = gpu ? AUTO_GPU_RATE_BOUND : x->rate;
			quick = updates7 * room->nsources / rate7;
			least7 = quick * air_share(room, x->nodes * pow(plan.grid.h, 3));
		} else if (x->nodes * (double)x->steps >= updates7) {
			snprintf(x->why, sizeof(x->why), "updates no fewer cells than the 7-point "
				 "scheme, so it is never faster");
			continue;
		}
		contends[k] = 1;
		left++;
	}
	/* the contenders' rates, the 7-point scheme's last: on the GPU it is not timed when
	 * another takes less than half the time of its air cells at the rate it cannot beat */
	for (int e = 1; e <= ncand; e++) {
		const int k = e % ncand;
		struct app_candidate *x = &c[k];

		if (!contends[k])
			continue;
		if (left == 1) {	/* nothing to weigh it against: not timed */
			x->rate = 0;
			x->seconds = NAN;
			best = k;
			break;
		}
		if (k == 0 && gpu && best >= 0 && 2 * c[best].seconds < least7) {
			x->seconds = HUGE_VAL;
			snprintf(x->why, sizeof(x->why), "not timed: at least %.3g s (its air cells "
				 "at %.3g Gvox/s, a rate it never reached), over twice %.3g s", least7,
				 rate7 / 1e9, c[best].seconds);
			continue;
		}
		if (!(k == 0 && !gpu))	/* the CPU's 7-point rate is measured already */
			rate_of(&rooms[k], x, gpu, threads, device);
		if (!(x->rate > 0))
			continue;
		x->seconds = (x->nodes / x->rate + x->pass) * (double)x->steps * room->nsources +
			     x->setup;
		if (best < 0 || x->seconds < c[best].seconds)
			best = k;
	}
	free(rooms);
	if (best < 0)
		return rs_fail(err, RS_EINPUT, "%s: scheme.stencil: auto: no scheme reaches %g at "
			       "fmax within this machine's memory (valid: a larger grid.dispersion, a "
			       "lower fmax, or a stencil named)", room->file, room->dispersion), -1;
	room->stencil = c[best].stencil;
	room->order = c[best].order;
	room->radius2 = c[best].radius2;
	room->variant = c[best].variant;
	room->nweights = 0;
	room->fitted = c[best].fitted;
	room->courant = c[best].courant;
	room->ppw = c[best].ppw;
	room->spacing = c[best].spacing;
	room->unfitted = c[best].unfitted;
	return best;
}
