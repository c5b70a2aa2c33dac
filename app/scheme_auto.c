/*
 * scheme_auto.c - scheme.stencil: auto (app.h, app_scheme_choose): the scheme that reaches the
 * room's dispersion tolerance at fmax in the least time on this machine. Each candidate's
 * spacing follows from its worst-case phase error (docs/stencils.md), its nodes, steps and
 * memory from app_plan(), and its time from a rate measured on a box of its size
 * (app_gpu_rate, cached per device; app_cpu_rate_of). In a room that is not a box a larger
 * stencil runs at a Courant number of at most 1/sqrt(3) (its fallback cells', fdtd.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "../solver/fdtd.h"
#ifdef ROOMSIM_CUDA
#include "../solver/cuda/fdtd_cuda.h"
#endif

#define CPU_RATE_CELLS 2e6	/* the CPU's timing box, as roomsim info's calibration */
#define CPU_RATE_MIN 2e5
#define CPU_RATE_STEPS 4

static const struct {
	enum room_stencil stencil;
	int order, radius2;
	const char *variant;
} candidates[] = {
	{ ROOM_STENCIL_LEGGY, 2, 0, NULL },	/* the 7-point scheme */
	{ ROOM_STENCIL_LEGGY, 4, 0, NULL },
	{ ROOM_STENCIL_COMPACT, 2, 2, NULL },
	{ ROOM_STENCIL_COMPACT, 2, 3, NULL },
	{ ROOM_STENCIL_COMPACT, 2, 4, NULL },
	{ ROOM_STENCIL_INTERPOLATED, 2, 0, "IWB" },
	{ ROOM_STENCIL_INTERPOLATED, 2, 0, "IISO" },
	{ ROOM_STENCIL_FCC, 2, 0, NULL },
};

/* Candidate k as a room: room with that stencil at the spacing and Courant number it needs. */
static int candidate(const struct room *room, int k, struct room *r, struct app_candidate *c)
{
	static struct stn_stencil st;	/* large: not on the stack */
	double limit;

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
	if (r->stencil == ROOM_STENCIL_FCC && room->shaped)
		return snprintf(c->why, sizeof(c->why), "fcc's walls in a room that is not a box "
				"are first-order, not bounded by grid.dispersion: name it to run "
				"it (docs/physics.md)"), -1;
	/* a named scheme at its published Courant number, the others at their limit */
	if (!room->courant_given)
		r->courant = r->stencil == ROOM_STENCIL_INTERPOLATED || r->stencil == ROOM_STENCIL_FCC
				     ? fmin(1, st.courant / limit) : 1;
	/* a carved room's fallback cells take the 7-point update: stable to 1/sqrt(3) only */
	if (room->shaped && r->stencil != ROOM_STENCIL_FCC && r->courant * limit > 1 / sqrt(3.0)) {
		if (room->courant_given)
			return snprintf(c->why, sizeof(c->why), "grid.courant %g is past 1/sqrt(3) "
					"in a room that is not a box", r->courant), -1;
		r->courant = 1 / sqrt(3.0) / limit;
	}
	r->ppw = stn_ppw_for(&st, r->courant * limit, room->dispersion);
	if (!isfinite(r->ppw))
		return snprintf(c->why, sizeof(c->why), "cannot reach %g", room->dispersion), -1;
	r->spacing = r->c / (r->fmax * r->ppw);
	c->stencil = r->stencil;
	c->order = r->order;
	c->radius2 = r->radius2;
	c->variant = r->variant;
	c->courant = r->courant;
	c->ppw = r->ppw;
	c->spacing = r->spacing;
	return 0;
}

int app_scheme_choose(struct room *room, int gpu, int threads, struct app_candidate *c, int *n,
		      struct rs_error *err)
{
	const double host = (double)app_memory_available();
	double device = 0;

	(void)device;	/* the device's memory: CUDA builds only */
	int best = -1;

#ifdef ROOMSIM_CUDA
	if (gpu) {
		size_t mem = 0;
		char name[128];

		if (cuda_available(name, sizeof(name), &mem))
			device = (double)mem;
	}
#endif
	*n = 0;
	for (int k = 0; k < (int)(sizeof(candidates) / sizeof(candidates[0])); k++) {
		struct app_candidate *x = &c[(*n)++];
		struct app_plan plan;
		struct rs_error e = { 0 };
		struct room r;

		if (candidate(room, k, &r, x))
			continue;
		if (app_plan(&r, &plan, &e)) {
			snprintf(x->why, sizeof(x->why), "%.120s", e.msg);
			continue;
		}
		x->nodes = (double)vox_nodes(&plan.grid);
		x->steps = plan.steps;
		x->memory = (double)plan.memory;
		if (host > 0 && x->memory > host) {
			snprintf(x->why, sizeof(x->why), "needs more memory than is free");
			continue;
		}
#ifdef ROOMSIM_CUDA
		if (gpu) {
			struct app_gpu_rate g;

			x->memory = (double)cuda_memory(&plan.grid, r.precision, r.kernel, r.nreceivers,
							plan.nsamples, (size_t)plan.steps) +
				    (double)plan.branch_memory;
			if (device > 0 && x->memory > device) {
				snprintf(x->why, sizeof(x->why), "needs more device memory than the GPU has");
				continue;
			}
			app_gpu_rate(&r, x->nodes, &g);
			x->rate = g.rate;
			if (!(g.rate > 0) && g.why[0]) {
				snprintf(x->why, sizeof(x->why), "%.120s", g.why);
				continue;
			}
			snprintf(x->kernel, sizeof(x->kernel), "%s", g.kernel);
		}
#endif
		if (!gpu)
			x->rate = app_cpu_rate_of(&r, threads,	/* not so few that threads idle */
						  fmin(fmax(x->nodes, CPU_RATE_MIN), CPU_RATE_CELLS),
						  CPU_RATE_STEPS);
		if (!(x->rate > 0)) {
			snprintf(x->why, sizeof(x->why), "no engine here runs it");
			continue;
		}
		x->seconds = x->nodes * (double)x->steps * room->nsources / x->rate;
		if (best < 0 || x->seconds < c[best].seconds)
			best = *n - 1;
	}
	if (best < 0)
		return rs_fail(err, RS_EINPUT, "%s: scheme.stencil: auto: no scheme reaches %g at "
			       "fmax within this machine's memory (valid: a larger grid.dispersion, a "
			       "lower fmax, or a stencil named)", room->file, room->dispersion), -1;
	room->stencil = c[best].stencil;
	room->order = c[best].order;
	room->radius2 = c[best].radius2;
	room->variant = c[best].variant;
	room->nweights = 0;
	room->courant = c[best].courant;
	room->ppw = c[best].ppw;
	room->spacing = c[best].spacing;
	return best;
}
