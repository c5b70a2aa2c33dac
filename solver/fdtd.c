/*
 * fdtd.c - the engines' facade (fdtd.h): the coefficients, stencil and fallback cells both
 * engines share, sources and receivers, and the dispatch of every call to the CPU engine
 * (cpu.c) or the CUDA engine (cuda/); the energy and fields as the tests read them.
 * docs/physics.md derives every formula used here.
 */
#include "fdtd_impl.h"
#include "../common/hash.h"
#include "../common/rs_phase.h"
#include "wall.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ROOMSIM_CUDA
#include "cuda/fdtd_cuda.h"
#endif

#ifndef ROOMSIM_CUDA
/* A CPU-only build: the GPU calls exist but are never reached (f->gpu stays NULL). */
struct cuda_engine;
static int cuda_available(char *name, size_t len, size_t *memory)
{
	(void)name, (void)len, (void)memory;
	return 0;
}
#define GPU_CALL(expr) RS_ENODEV
#define GPU_VALUE(expr, dflt) (dflt)
#else
#define GPU_CALL(expr) (expr)
#define GPU_VALUE(expr, dflt) (expr)
#endif

/*
 * lambda^2 as the engines use it: at most the stencil's limit computed in double (squaring a
 * limit of 1/sqrt(3) gives 1/3 plus an ulp), then rounded down to the run's precision (float
 * 1/3 is above 1/3), so that the scheme with its rounded coefficient is within the limit.
 */
static double l2_of(const struct stn_stencil *s, double lambda, int precision)
{
	const double lim = !s || stn_is_seven_point(s) ? 1 / 3.0 : stn_lambda2_limit(s);
	double l2 = fmin(lambda * lambda, lim);
	float f = (float)l2;

	if (precision == 4) {
		if ((double)f > l2)
			f = nextafterf(f, 0);
		l2 = f;
	}
	return l2;
}

void fdtd_coefficients(const struct vox_grid *g, const struct stn_stencil *s, double lambda,
		       int precision, struct fdtd_coefs *c)
{
	memset(c, 0, sizeof(*c));
	/* fcc: weight 1/4 per neighbour, and a node on a wall holds half the volume
	 * (physics.md "FCC walls") */
	c->l2 = l2_of(s, lambda, precision) / (g->plan.fcc ? 4 : 1);
	c->first_diff = g->first_diff;
	for (int t = 0; t < g->nkinds; t++) {
		/* Kowalczyk & van Walstijn (2008), the K-neighbour form: physics.md "Walls". */
		const double gl = (g->plan.fcc ? 1 : 0.5) * lambda * g->kinds[t].beta_sum;
		const int K = g->kinds[t].K;

		if (t == VOX_PAD)
			continue;
		/* T + be u is exactly 0 for a uniform field: physics.md, "A uniform field stays
		 * uniform" (fcc: the twelve mirrored neighbours, always present; in a carved room
		 * a wall node sums its links' differences, cpu_fcc.inc) */
		c->be[t] = g->plan.fcc && g->carved && t != VOX_AIR ? 0
			   : g->kinds[t].diff ? 6 - K : -K;
		c->cb[t] = 1 - gl;
		c->sc[t] = 1 / (1 + gl);
	}
}

size_t fdtd_memory(const struct vox_plan *p, int precision, int nrec, size_t nsamples)
{
	const size_t rows = (size_t)p->n[1] * (size_t)p->n[2];

	if (p->fcc)	/* folded fields, class bytes, column heights, receivers */
		return p->cells * (size_t)precision + p->cells +
		       2 * sizeof(int32_t) * (size_t)p->n[0] * p->n[1] +
		       (size_t)nrec * nsamples * sizeof(double);
	/* fields, class bytes, column heights, receivers, row bounds, boundary lists and runs
	 * (at most one more per row than boundary cells), one row of scratch per thread */
	return 2 * p->cells * (size_t)precision + p->cells +
	       2 * sizeof(int32_t) * (size_t)p->n[0] * p->n[1] +
	       (size_t)nrec * nsamples * sizeof(double) + (size_t)p->n[1] * sizeof(struct fdtd_row) +
	       2 * (rows + 1) * sizeof(size_t) + p->boundary * sizeof(uint32_t) +
	       2 * (p->boundary + rows) * sizeof(uint32_t) +
	       (size_t)omp_get_max_threads() * (size_t)p->n[0] * (size_t)precision;
}

/* Dilate the bytes of `in` by r cells along axis a into `out` (a max filter), OpenMP. */
static void dilate(const struct vox_plan *p, const uint8_t *in, uint8_t *out, int a, int r)
{
	const ptrdiff_t stride[3] = { 1, p->n[0], (ptrdiff_t)p->n[0] * p->n[1] };

#pragma omp parallel for schedule(static)
	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++) {
				const int at[3] = { i, j, k };
				const size_t n = vox_index(p, i, j, k);
				uint8_t v = 0;

				for (int d = -r; d <= r && !v; d++)
					if (at[a] + d >= 0 && at[a] + d < p->n[a])
						v = in[(ptrdiff_t)n + d * stride[a]];
				out[n] = v;
			}
}

/* m[n] = 1 for the padding inside the room's box (a carved solid), else 0. */
static void carved_pad(const struct vox_grid *g, uint8_t *m)
{
	const struct vox_plan *p = &g->plan;
	const int lo = p->halo;

	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++) {
				const size_t n = vox_index(p, i, j, k);

				m[n] = g->cls[n] == VOX_PAD && i >= lo && j >= lo && k >= lo &&
				       i < lo + p->room[0] && j < lo + p->room[1] &&
				       k < lo + p->room[2];
			}
}

/*
 * A room that is not a box (docs/physics.md, "Larger stencils"): the cells whose box of reach
 * r holds padding inside the room (a carved solid) take the 7-point update with its
 * K-neighbour walls (f->fallback). The other cells read their stencil as in a box, mirrored at
 * the box's walls, except that in the cells within reach of a fallback cell (f->touch) the
 * stencil's edges to fallback cells become the 7-point rule's: a unit axial edge of weight 1,
 * the others dropped. Both directions of every edge then have one weight: the operator stays
 * symmetric and the energy of docs/physics.md is conserved.
 */
static int set_fallback(struct fdtd *f, int r)
{
	const struct vox_plan *p = &f->grid->plan;
	uint8_t *m = malloc(p->cells), *t = malloc(p->cells);

	f->fallback = calloc(p->cells / 32 + 1, sizeof(uint32_t));
	f->touch = calloc(p->cells / 32 + 1, sizeof(uint32_t));
	if (!m || !t || !f->fallback || !f->touch) {
		free(m);
		free(t);
		return RS_ENOMEM;
	}
	carved_pad(f->grid, m);
	dilate(p, m, t, 0, r);
	dilate(p, t, m, 1, r);
	dilate(p, m, t, 2, r);
	for (size_t n = 0; n < p->cells; n++) {
		t[n] = t[n] && f->grid->cls[n] != VOX_PAD;
		if (t[n])
			f->fallback[n >> 5] |= 1u << (n & 31);
	}
	dilate(p, t, m, 0, r);
	dilate(p, m, t, 1, r);
	dilate(p, t, m, 2, r);
	for (size_t n = 0; n < p->cells; n++)
		if (m[n] && f->grid->cls[n] != VOX_PAD && !fdtd_bit(f->fallback, n))
			f->touch[n >> 5] |= 1u << (n & 31);
	free(m);
	free(t);
	return 0;
}

/*
 * A room that is not a box and an axial stencil (docs/physics.md, "Larger stencils"): the
 * cells with padding inside the box within reach along an axis (f->lines). Their legs read
 * along their lines, mirrored about the first walls there (solver/lines.h); every other cell
 * reads its stencil as in a box.
 */
static int set_lines(struct fdtd *f, int r)
{
	const struct vox_plan *p = &f->grid->plan;
	uint8_t *m = malloc(p->cells), *t = malloc(p->cells);

	f->lines = calloc(p->cells / 32 + 1, sizeof(uint32_t));
	if (!m || !t || !f->lines) {
		free(m);
		free(t);
		return RS_ENOMEM;
	}
	carved_pad(f->grid, m);
	for (int a = 0; a < 3; a++) {
		dilate(p, m, t, a, r);
		for (size_t n = 0; n < p->cells; n++)
			if (t[n] && f->grid->cls[n] != VOX_PAD)
				f->lines[n >> 5] |= 1u << (n & 31);
	}
	free(m);
	free(t);
	return 0;
}

/* A stencil reaching further than one cell: the general step, mirrored walls. */
static int set_stencil(struct fdtd *f, const struct fdtd_setup *s, struct rs_error *err)
{
	const struct vox_plan *p = &s->grid->plan;
	/* fcc has its own walls; an axial stencil's legs fold at carved walls as at a box's */
	const int lines = s->grid->carved && !p->fcc && stn_is_axial(s->stencil);
	const int fallback = s->grid->carved && !p->fcc && !lines;

	/* the 7-point rule of the fallback cells is stable up to 1/sqrt(3) only */
	if (fallback && s->lambda > 1 / sqrt(3.0) * (1 + 1e-12))
		return rs_fail(err, RS_EINPUT, "in a room that is not a box, the cells within "
			       "reach of its carved walls take the 7-point update, stable up to a "
			       "Courant number of 1/sqrt(3) = %.6f; %s would run at %.6f (multiply "
			       "grid.courant by %.4f or less)", 1 / sqrt(3.0), s->stencil->name,
			       s->lambda, 1 / sqrt(3.0) / s->lambda);
	if (fallback && set_fallback(f, s->stencil->reach))
		return rs_fail(err, RS_ENOMEM, "out of memory for the fallback cells");
	if (lines && set_lines(f, s->stencil->reach))
		return rs_fail(err, RS_ENOMEM, "out of memory for the cells by carved walls");
	if (p->halo < s->stencil->reach)
		return rs_fail(err, RS_EINTERNAL, "the grid's halo %d is less than the stencil's "
			       "reach %d", p->halo, s->stencil->reach);
	f->stencil = malloc(sizeof(*f->stencil));
	f->goff = malloc(sizeof(*f->goff) * (size_t)s->stencil->K);
	if (!f->stencil || !f->goff)
		return rs_fail(err, RS_ENOMEM, "out of memory for the stencil");
	*f->stencil = *s->stencil;
	for (int q = 0; q < s->stencil->K; q++)
		f->goff[q] = s->stencil->off[q][0] + (ptrdiff_t)p->n[0] * s->stencil->off[q][1] +
			     (ptrdiff_t)p->n[0] * p->n[1] * s->stencil->off[q][2];
	return 0;
}

/* The frequency-dependent walls of s->banks (branch.h). */
static int set_branches(struct fdtd *f, const struct fdtd_setup *s, struct rs_error *err)
{
	struct rs_error e = { 0 };
	int any = 0;

	for (int m = 0; m < s->nbanks; m++) {
		any |= s->banks[m] != NULL;
		/* physics.md, "The uniform mode in float32" */
		if (s->banks[m] && s->grid->plan.fcc && s->precision == 4 &&
		    !(wall_dc_conductance(s->banks[m]) > 0))
			return rs_fail(err, RS_EINPUT, "the fcc scheme in float32 needs branch walls "
				       "that conduct at 0 Hz (material %d has none)", m);
	}
	if (!any)
		return 0;
	if (!(s->dt > 0))
		return rs_fail(err, RS_EINTERNAL, "branch walls need the time step");
	f->branch = branch_create(s->grid, s->banks, s->nbanks, s->lambda, s->dt, s->precision,
				  &e);
	if (!f->branch && e.code) {
		*err = e;
		return e.code;
	}
	return 0;
}

/* grid.walls: fitted (voxel.h, struct vox_cut): each group's lambda^2 / V, sc and cb, for
 * both engines (they round them alike to the run's precision). */
static int cut_coefficients(struct fdtd *f)
{
	const struct vox_cut *c = f->grid->cut;
	/* a whole face's area over the nodes' distance: h on the cubic grid, (h^2 / sqrt 2) /
	 * (sqrt 2 h) on the fcc lattice */
	const double l2 = f->lambda * f->lambda * (c->faces == 12 ? 0.5 : 1);
	const size_t ng = c->ngroups + 1;

	f->cut_l2v = malloc(ng * sizeof(double));
	f->cut_sc = malloc(ng * sizeof(double));
	f->cut_cb = malloc(ng * sizeof(double));
	if (!f->cut_l2v || !f->cut_sc || !f->cut_cb)
		return RS_ENOMEM;
	for (size_t q = 0; q < c->ngroups; q++) {
		const double gl = 0.5 * f->lambda * c->loss[q] / c->vol[q];

		f->cut_l2v[q] = l2 / c->vol[q];
		f->cut_sc[q] = 1 / (1 + gl);
		f->cut_cb[q] = 1 - gl;
	}
	return 0;
}

static int create_gpu(struct fdtd *f, const struct fdtd_setup *s, struct rs_error *err)
{
#ifdef ROOMSIM_CUDA
	struct cuda_setup cs = { s->grid, &f->coefs, s->precision, s->kernel,
				 { s->block[0] ? s->block[0] : 32, s->block[1] ? s->block[1] : 8 },
				 s->tex_limit, f->stencil, f->fallback, f->touch, f->lines, s->dts,
				 s->nt, s->split, f->branch, s->grid_receivers, s->band_frames,
				 s->block_sources, s->exchange, s->exchange_ctx,
				 { s->zown[0], s->zown[1] },
				 { s->zedge[0], s->zedge[1] }, s->exchange_async,
				 f->cut_l2v, f->cut_sc, f->cut_cb };

	f->gpu = cuda_create(&cs, err);
	return f->gpu ? 0 : err ? err->code : RS_EDEVICE;
#else
	(void)f, (void)s;
	return rs_fail(err, RS_ENODEV, "this build has no CUDA engine (build with nvcc found)");
#endif
}

int fdtd_cuda_available(char *name, size_t len)
{
	return cuda_available(name, len, NULL);
}

void fdtd_cuda_warm(void)
{
#ifdef ROOMSIM_CUDA
	cuda_warm();
#endif
}

void fdtd_cuda_settle(void)
{
#ifdef ROOMSIM_CUDA
	cuda_warm_wait();
#endif
}

enum kernel_id fdtd_kernel(const struct fdtd *f)
{
	return f->gpu ? GPU_VALUE(cuda_kernel(f->gpu), KERNEL_AUTO) : KERNEL_AUTO;
}

int fdtd_diamond(const struct fdtd *f, int *dts, int *nt, int *split)
{
#ifdef ROOMSIM_CUDA
	if (f->gpu && cuda_kernel(f->gpu) == KERNEL_DIAMOND) {
		cuda_diamond(f->gpu, dts, nt, split);
		return 1;
	}
#endif
	(void)f, (void)dts, (void)nt, (void)split;
	return 0;
}

long fdtd_batch(const struct fdtd *f)
{
	int dts, nt, split;

	return fdtd_diamond(f, &dts, &nt, &split) ? nt : 1;
}

double fdtd_time_steps(struct fdtd *f, int steps)
{
	double t = -1;

	(void)steps;	/* only the CUDA engine times steps */
	if (!f->gpu || GPU_CALL(cuda_time_kernel(f->gpu, cuda_kernel(f->gpu), steps, 3, &t,
						 &f->err)))
		return -1;
	return t;
}

const double *fdtd_kernel_rates(const struct fdtd *f)
{
	return f->gpu ? GPU_VALUE(cuda_auto_rates(f->gpu), NULL) : NULL;
}

int fdtd_kernel_why(const struct fdtd *f, enum kernel_id k, char *why, size_t len)
{
	(void)k;
	if (!f->gpu) {
		snprintf(why, len, "the CPU engine runs no kernels");
		return 1;
	}
	return GPU_VALUE(cuda_kernel_why(f->gpu, k, why, len), 1);
}

const char *fdtd_error(const struct fdtd *f)
{
	return f->err.msg;
}

/*
 * Threads when none are asked for: all cores, but no more than one per CELLS_PER_THREAD
 * nodes. Below that a thread's share of a step is shorter than the threads' meeting at its
 * end, and on a busy machine that meeting waits, every step, for a thread the system has
 * set aside (milliseconds: a 2 x 1.6 x 1.2 m room at 500 Hz ran 100 times slower on two
 * cores beside another job). Every thread count gives the same bytes.
 */
#define CELLS_PER_THREAD 65536.0

static int default_threads(const struct vox_plan *p)
{
	const double most = ceil((double)(p->air + p->boundary) / CELLS_PER_THREAD);

	return most < omp_get_max_threads() ? (int)fmax(most, 1) : omp_get_max_threads();
}

struct fdtd *fdtd_create(const struct fdtd_setup *s, struct rs_error *err)
{
	struct fdtd *f = calloc(1, sizeof(*f));
	const struct vox_plan *p = &s->grid->plan;

	if (!f)
		goto out_nomem;
	if (s->precision != 4 && s->precision != 8) {
		rs_fail(err, RS_EINTERNAL, "precision must be 4 or 8 bytes, not %d", s->precision);
		goto out_free;
	}
	if (!(s->lambda > 0) ||
	    ((!s->stencil || stn_is_seven_point(s->stencil)) && s->lambda > 1 / sqrt(3.0))) {
		rs_fail(err, RS_EINPUT, "Courant number %g is past the 7-point scheme's limit "
			"1/sqrt(3) = %.6f", s->lambda, 1 / sqrt(3.0));
		goto out_free;
	}
	if (p->fcc != (s->stencil && s->stencil->fcc)) {
		rs_fail(err, RS_EINTERNAL, "the fcc scheme needs the fcc grid, and only it does");
		goto out_free;
	}
	if (s->grid->cut && s->stencil && !stn_is_seven_point(s->stencil) && !s->stencil->fcc) {
		rs_fail(err, RS_EINPUT, "grid.walls: fitted runs with the 7-point and fcc schemes "
			"only so far");
		goto out_free;
	}
	f->grid = s->grid;
	f->exchange = s->exchange;
	f->exchange_ctx = s->exchange_ctx;
	f->values = p->fcc ? p->cells / 2 : p->cells;
	f->lambda = s->lambda;
	f->precision = s->precision;
	f->threads = s->threads > 0 ? s->threads : default_threads(p);
	/* delta -> 1 / (node volume): h^3, or 2 h^3 per node of the fcc lattice */
	f->inject = 4 * M_PI * s->lambda * s->lambda / p->h / (p->fcc ? 2 : 1);
	fdtd_coefficients(s->grid, s->stencil, s->lambda, s->precision, &f->coefs);
	if (s->stencil && !stn_is_seven_point(s->stencil) && set_stencil(f, s, err))
		goto out_free;
	if (s->banks && set_branches(f, s, err))
		goto out_free;
	if (s->grid->cut && cut_coefficients(f))
		goto out_nomem;
	rs_phase("engine: stencil and branch walls");
	if (s->cuda)
		return create_gpu(f, s, err) ? (fdtd_destroy(f), NULL) : f;
	if (cpu_create(f, err))
		goto out_free;
	return f;

out_nomem:
	rs_fail(err, RS_ENOMEM, "out of memory for the engine");
out_free:
	fdtd_destroy(f);
	return NULL;
}

static void free_points(struct fdtd_point *pts, int n)
{
	if (!pts)	/* the GPU keeps its points itself */
		return;
	for (int i = 0; i < n; i++) {
		free(pts[i].signal);
		free(pts[i].nodes);
		free(pts[i].mcell);
	}
	free(pts);
}

void fdtd_destroy(struct fdtd *f)
{
	if (!f)
		return;
#ifdef ROOMSIM_CUDA
	cuda_destroy(f->gpu);
#endif
	cpu_free(f);
	free(f->stencil);
	free(f->goff);
	free(f->fallback);
	free(f->lines);
	free(f->touch);
	branch_free(f->branch);
	frames_free(f->frames);
	free_points(f->src, f->nsrc);
	free_points(f->rec, f->nrec);
	free(f->gcell);
	free(f->gw);
	free(f->gbuf);
	free(f);
}

/* The interpolation nodes of pos (vox_point) as indices into the fields. */
static int locate(const struct fdtd *f, const double pos[3], struct fdtd_point *pt)
{
	const struct vox_plan *p = &f->grid->plan;
	int node[8][3], some = 0;

	if (vox_point(f->grid, pos, node, pt->w, NULL))
		return -1;
	while (pt->w[some] == 0)	/* the weights sum to 1: some node has weight */
		some++;
	for (int c = 0; c < 8; c++) {
		if (pt->w[c] == 0)	/* an fcc node of weight 0 may lie beyond the walls */
			memcpy(node[c], node[some], sizeof(node[c]));
		pt->cell[c] = p->fcc ? vox_folded(p, node[c][0], node[c][1], node[c][2])
				     : vox_index(p, node[c][0], node[c][1], node[c][2]);
	}
	return 0;
}

static struct fdtd_point *grow(struct fdtd_point **pts, int *n)
{
	struct fdtd_point *more = realloc(*pts, (size_t)(*n + 1) * sizeof(**pts));

	if (!more)
		return NULL;
	*pts = more;
	memset(&more[*n], 0, sizeof(**pts));
	return &more[(*n)++];
}

/* The GPU gets, per step, the eight values the CPU's inject() would add, computed alike. */
static int gpu_source(struct fdtd *f, const struct fdtd_point *pt, const double *signal,
		      size_t n)
{
	double *inj = malloc(n * 8 * sizeof(double));
	int rc;

	if (!inj)
		return -1;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < 8; c++)
			inj[8 * i + c] = f->inject * signal[i] * pt->w[c];
	rc = GPU_CALL(cuda_set_source(f->gpu, pt->cell, 8, inj, n, &f->err));
	free(inj);
	return rc ? -1 : 0;
}

int fdtd_add_source(struct fdtd *f, const double pos[3], const double *signal, size_t n)
{
	struct fdtd_point pt = { 0 }, *slot;

	if (locate(f, pos, &pt))
		return -1;
	if (f->gpu)
		return gpu_source(f, &pt, signal, n);
	pt.signal = malloc(n * sizeof(*pt.signal));
	if (!pt.signal || !(slot = grow(&f->src, &f->nsrc))) {
		free(pt.signal);
		return -1;
	}
	memcpy(pt.signal, signal, n * sizeof(*pt.signal));
	pt.len = n;
	*slot = pt;
	return f->nsrc - 1;
}

int fdtd_add_source_nodes(struct fdtd *f, const double pos[3], const double *values, size_t n)
{
	struct fdtd_point pt = { 0 }, *slot;

	if (locate(f, pos, &pt))
		return -1;
	if (f->gpu) {
		double *inj = malloc(n * 8 * sizeof(double));
		int rc;

		if (!inj)
			return -1;
		for (size_t i = 0; i < 8 * n; i++)
			inj[i] = f->inject * values[i];
		rc = GPU_CALL(cuda_set_source(f->gpu, pt.cell, 8, inj, n, &f->err));
		free(inj);
		return rc ? -1 : 0;
	}
	pt.m = 8;
	pt.nodes = malloc(n * 8 * sizeof(*pt.nodes));
	if (!pt.nodes || !(slot = grow(&f->src, &f->nsrc))) {
		free(pt.nodes);
		return -1;
	}
	memcpy(pt.nodes, values, n * 8 * sizeof(*pt.nodes));
	pt.len = n;
	*slot = pt;
	return f->nsrc - 1;
}

int fdtd_add_source_block(struct fdtd *f, const int lo[3], int k, const double *values,
			  size_t n)
{
	const struct vox_plan *p = &f->grid->plan;
	const int all = k * k * k;
	struct fdtd_point pt = { 0 }, *slot;
	size_t cells[FDTD_SOURCE_NODES];
	int keep[FDTD_SOURCE_NODES], m = 0;
	double *v;

	if (all > FDTD_SOURCE_NODES || k < 1 || p->fcc)
		return -1;
	for (int c = 0; c < all; c++) {
		const int i = lo[0] + c % k, j = lo[1] + c / k % k, l = lo[2] + c / (k * k);

		if (l < 0 || l >= p->n[2])	/* another rank's layer, in a window */
			continue;
		if (i < 0 || j < 0 || i >= p->n[0] || j >= p->n[1] ||
		    f->grid->cls[vox_index(p, i, j, l)] == VOX_PAD)
			return -1;
		keep[m] = c;
		cells[m++] = vox_index(p, i, j, l);
	}
	if (!m)
		return -1;
	if (!(v = malloc(n * m * sizeof(*v))))
		return -1;
	for (size_t i = 0; i < n; i++)	/* the nodes in this grid, on the GPU scaled */
		for (int c = 0; c < m; c++)
			v[i * m + c] = (f->gpu ? f->inject : 1) * values[i * all + keep[c]];
	if (f->gpu) {
		const int rc = GPU_CALL(cuda_set_source(f->gpu, cells, m, v, n, &f->err));

		free(v);
		return rc ? -1 : 0;
	}
	pt.m = m;
	pt.mcell = malloc(m * sizeof(*pt.mcell));
	pt.nodes = v;
	if (!pt.mcell || !(slot = grow(&f->src, &f->nsrc))) {
		free(pt.mcell);
		free(v);
		return -1;
	}
	memcpy(pt.mcell, cells, m * sizeof(*cells));
	pt.len = n;
	*slot = pt;
	return f->nsrc - 1;
}

int fdtd_add_receiver(struct fdtd *f, const double pos[3])
{
	struct fdtd_point pt = { 0 }, *slot;

	if (locate(f, pos, &pt))
		return -1;
	if (f->gpu)
		return GPU_CALL(cuda_add_receiver(f->gpu, pt.cell, pt.w, &f->err)) ? -1 : f->nrec++;
	pt.signal = calloc(f->capacity ? f->capacity : 1, sizeof(*pt.signal));
	if (!pt.signal || !(slot = grow(&f->rec, &f->nrec))) {
		free(pt.signal);
		return -1;
	}
	pt.len = f->capacity ? f->capacity : 1;
	*slot = pt;
	return f->nrec - 1;
}

int fdtd_grid_set(struct fdtd *f, const double *pos, size_t n, size_t window)
{
	struct fdtd_point pt;

	free(f->gcell);
	free(f->gw);
	free(f->gbuf);
	f->gcell = NULL;
	f->gw = NULL;
	f->gbuf = NULL;
	f->ngp = 0;
	f->gcell = malloc(n * sizeof(*f->gcell));
	f->gw = malloc(n * sizeof(*f->gw));
	if (!f->gpu)
		f->gbuf = malloc(n * window * sizeof(float));
	if (!f->gcell || !f->gw || (!f->gpu && !f->gbuf)) {
		rs_fail(&f->err, RS_ENOMEM, "out of memory for a receiver grid of %zu points", n);
		return -1;
	}
	for (size_t q = 0; q < n; q++) {
		if (locate(f, pos + 3 * q, &pt)) {
			rs_fail(&f->err, RS_EINPUT, "grid point %zu, [%g, %g, %g], is not in the air",
				q, pos[3 * q], pos[3 * q + 1], pos[3 * q + 2]);
			return -1;
		}
		memcpy(f->gcell[q], pt.cell, sizeof(pt.cell));
		memcpy(f->gw[q], pt.w, sizeof(pt.w));
	}
	f->ngp = n;
	f->gwin = window;
	f->gbase = fdtd_steps(f) + 1;
	f->gcount = 0;
	return f->gpu && GPU_CALL(cuda_grid_set(f->gpu, f->gcell[0], f->gw[0], n, window, &f->err))
		       ? -1 : 0;
}

long fdtd_grid_take(struct fdtd *f, float *out, long *first)
{
	const long count = f->gcount;

	if (f->gpu && GPU_CALL(cuda_grid_take(f->gpu, out, count, &f->err)))
		return -1;
	if (!f->gpu)
		memcpy(out, f->gbuf, (size_t)count * f->ngp * sizeof(float));
	*first = f->gbase;
	f->gbase += count;
	f->gcount = 0;
	return count;
}

int fdtd_reserve(struct fdtd *f, size_t nsamples)
{
	if (f->gpu)
		return GPU_CALL(cuda_reserve(f->gpu, nsamples, &f->err));
	for (int r = 0; r < f->nrec; r++) {
		double *s = realloc(f->rec[r].signal, nsamples * sizeof(*s));

		if (!s)
			return RS_ENOMEM;
		if (nsamples > f->rec[r].len)
			memset(s + f->rec[r].len, 0, (nsamples - f->rec[r].len) * sizeof(*s));
		f->rec[r].signal = s;
		f->rec[r].len = nsamples;
	}
	f->capacity = nsamples;
	return 0;
}

void fdtd_reset(struct fdtd *f)
{
	const size_t bytes = f->values * (size_t)f->precision;

	branch_reset(f->branch);
	f->gbase = 1;
	f->gcount = 0;
	if (f->gpu) {
		(void)GPU_CALL(cuda_reset(f->gpu, &f->err));
		if (f->frames)
			(void)GPU_CALL(cuda_frames_copy(f->gpu, NULL, f->frames->total, 1, &f->err));
		return;
	}
	if (f->frames)
		memset(f->frames->sum, 0, f->frames->total * sizeof(float));
	memset(f->cur, 0, bytes);
	memset(f->prev, 0, bytes);
	for (int r = 0; r < f->nrec; r++)
		memset(f->rec[r].signal, 0, f->rec[r].len * sizeof(double));
	free_points(f->src, f->nsrc);
	f->src = NULL;
	f->nsrc = 0;
	f->step = 0;
}

int fdtd_advance(struct fdtd *f, long nsteps, volatile sig_atomic_t *stop)
{
	const long before = fdtd_steps(f);
	int rc;

	if (f->ngp && nsteps > (long)f->gwin - f->gcount)
		return rs_fail(&f->err, RS_EINTERNAL, "%ld steps would overrun the receiver grid's "
			       "window (%ld of %zu steps free): take its samples first", nsteps,
			       (long)f->gwin - f->gcount, f->gwin);
	rc = f->gpu ? GPU_CALL(cuda_advance(f->gpu, nsteps, stop, &f->err))
		    : cpu_advance(f, nsteps, stop);
	f->gcount += fdtd_steps(f) - before;
	return rc;
}

long fdtd_graph_steps(const struct fdtd *f, const char **why)
{
	*why = "";
	return f->gpu ? GPU_VALUE(cuda_graph_steps(f->gpu, why), 0) : 0;
}

long fdtd_overlap_steps(const struct fdtd *f)
{
	return f->gpu ? GPU_VALUE(cuda_overlap_steps(f->gpu), 0) : 0;
}

long fdtd_steps(const struct fdtd *f)
{
	return f->gpu ? GPU_VALUE(cuda_steps(f->gpu), 0) : f->step;
}

const double *fdtd_receiver(const struct fdtd *f, int r)
{
	return f->gpu ? GPU_VALUE(cuda_receiver(f->gpu, r), NULL) : f->rec[r].signal;
}

/* (L u)_n of the general stencil with mirrored reads, u as doubles. */
static double apply_general(const struct vox_plan *p, const struct stn_stencil *s,
			    const double *u, int i, int j, int k)
{
	double sum = 0;

	for (int q = 0; q < s->K; q++)
		sum += s->w[q] * u[vox_index(p, fold(p, 0, i + s->off[q][0]), fold(p, 1, j + s->off[q][1]),
					     fold(p, 2, k + s->off[q][2]))];
	return sum;
}

/* (L u)_n of a carved room's fallback cell: the 7-point rule, padding neighbours left out. */
static double apply_seven(const struct vox_grid *g, const double *u, size_t n)
{
	const size_t st[3] = { 1, (size_t)g->plan.n[0], (size_t)g->plan.n[0] * g->plan.n[1] };
	double sum = 0;

	for (int a = 0; a < 3; a++)
		for (int d = -1; d <= 1; d += 2) {
			const size_t m = d < 0 ? n - st[a] : n + st[a];

			if (g->cls[m] != VOX_PAD)
				sum += u[m] - u[n];
		}
	return sum;
}

/*
 * The fcc scheme's energy over fields laid out as fdtd_field() gives them: the same form with
 * the inner product weighted by each node's share of its dual cell, 1/2 per wall it lies on,
 * under which the mirrored operator is symmetric (physics.md, "FCC walls"); in a carved room
 * every node has weight 1 and L sums its present links with their weights (cpu_fcc.inc).
 */
static double energy_fcc(const struct vox_grid *g, double lambda, const double *cur,
			 const double *prev)
{
	const struct vox_plan *p = &g->plan;
	const int lo = p->halo;
	static const double weight[3][3] = VOX_FCC_WEIGHT;
	long double e = 0;

	for (int k = lo; k < lo + p->room[2]; k++)
		for (int j = lo; j < lo + p->room[1]; j++)
			for (int i = lo + ((lo + j + k) & 1); i < lo + p->room[0]; i += 2) {
				const size_t n = vox_index(p, i, j, k);
				const int at[3] = { i, j, k };
				double lu = p->on_nodes ? -3 * prev[n] : 0, w = 1, d = cur[n] - prev[n];
				unsigned gone = 0;

				if (g->cls[n] == VOX_PAD)
					continue;
				for (int q = 0; q < 12 && !p->on_nodes; q++)
					gone |= (unsigned)(g->cls[vox_index(p, i + fcc_order[q][0],
									    j + fcc_order[q][1],
									    k + fcc_order[q][2])] ==
							   VOX_PAD) << q;
				for (int q = 0; q < 12; q++) {
					const int x[3] = { i + fcc_order[q][0], j + fcc_order[q][1],
							   k + fcc_order[q][2] };
					size_t m;

					if (!p->on_nodes) {	/* carved: the links present, weighted */
						m = vox_index(p, x[0], x[1], x[2]);
						if (!(gone >> q & 1)) {
							const int at_w = fcc_weight_at(gone, q);

							lu += 0.25 * (prev[m] - prev[n]) *
							      weight[at_w / 3][at_w % 3];
						}
						continue;
					}
					m = vox_index(p, fcc_mirror(p, 0, x[0]), fcc_mirror(p, 1, x[1]),
						      fcc_mirror(p, 2, x[2]));
					lu += 0.25 * prev[m];
				}
				for (int a = 0; a < 3 && p->on_nodes; a++)
					if (at[a] == lo || at[a] == lo + p->room[a] - 1)
						w *= 0.5;
				e += (long double)w * (d * d - lambda * lambda * cur[n] * lu);
			}
	return (double)e;
}

/* The energy of fdtd_energy_of(), with f's fallback and touch cells when f is given. */
/*
 * grid.walls: fitted (physics.md, "Fitted walls"): each group's volume times its (u+ - u)^2
 * and each other room node's (a whole cell's volume), plus lambda^2 a times each face's open
 * share times the product of its two nodes' differences (a face of a group's member: the
 * member's share; a as in cut_coefficients()); over the fcc lattice's whole cell, 2 h^3, so
 * that it is energy_fcc()'s where no cell is cut. -1 without the memory for its map of
 * members.
 */
static double energy_cut(const struct vox_grid *g, double lambda, const double *cur,
			 const double *prev)
{
	const struct vox_cut *c = g->cut;
	const struct vox_plan *p = &g->plan;
	const int nf = c->faces;
	const double whole = nf == 12 ? 2 : 1, a = nf == 12 ? 0.5 : 1;
	ptrdiff_t st[12];
	int opp[12];
	long double kin = 0, pot = 0;
	size_t *member = malloc(p->cells * sizeof(*member));

	if (!member)
		return -1;
	for (int e = 0; e < nf; e++) {
		st[e] = vox_cut_offset(p, nf, e);
		for (int o = 0; o < nf; o++)
			if (vox_cut_offset(p, nf, o) == -vox_cut_offset(p, nf, e))
				opp[e] = o;
	}
	for (size_t n = 0; n < p->cells; n++)
		member[n] = SIZE_MAX;
	for (size_t q = 0; q < c->ngroups; q++) {
		const size_t m0 = c->cell[c->gstart[q]];
		const double d = cur[m0] - prev[m0];

		kin += (long double)c->vol[q] * d * d;
		for (size_t m = c->gstart[q]; m < c->gstart[q + 1]; m++)
			member[c->cell[m]] = m;
	}
	for (size_t n = 0; n < p->cells; n++) {
		const int in = member[n] != SIZE_MAX;

		if (!in && g->cls[n] == VOX_PAD)
			continue;
		if (!in)
			kin += (long double)whole * (cur[n] - prev[n]) * (cur[n] - prev[n]);
		for (int e = 1; e < nf; e += 2) {	/* the faces towards + (opp: the others) */
			const size_t m = n + st[e];
			double S;

			if (m >= p->cells)
				continue;
			S = in ? c->open[member[n] * nf + e]
			    : member[m] != SIZE_MAX ? c->open[member[m] * nf + opp[e]]
			    : g->cls[m] != VOX_PAD;
			pot += (long double)S * (cur[n] - cur[m]) * (prev[n] - prev[m]);
		}
	}
	free(member);
	return (double)((kin + (long double)(lambda * lambda * a) * pot) / whole);
}

static double energy(const struct vox_grid *g, double lambda, const struct stn_stencil *s,
		     const struct fdtd *f, const double *cur, const double *prev)
{
	const struct vox_plan *p = &g->plan;
	const uint8_t *cls = g->cls;
	const size_t st[3] = { 1, (size_t)p->n[0], (size_t)p->n[0] * p->n[1] };
	long double kin = 0, pot = 0;
	const int general = s && !stn_is_seven_point(s);

	if (g->cut)
		return energy_cut(g, lambda, cur, prev);
	if (p->fcc)
		return energy_fcc(g, lambda, cur, prev);
	for (size_t n = 0; n < p->cells; n++) {
		double d;

		if (cls[n] == VOX_PAD)
			continue;
		d = cur[n] - prev[n];
		kin += (long double)d * d;
		if (general) {
			/* -<u^n, L u^(n-1)>: L is symmetric (mirrored reads), physics.md "Energy" */
			const int i = (int)(n % st[1]), j = (int)(n / st[1] % (size_t)p->n[1]),
				  k = (int)(n / st[2]);

			pot -= (long double)cur[n] *
			       (f && fdtd_bit(f->fallback, n) ? apply_seven(g, prev, n)
				: f && fdtd_bit(f->touch, n) ? cpu_touch_sum(f, prev, i, j, k)
				: f && fdtd_bit(f->lines, n) ? cpu_line_sum(f, prev, i, j, k)
							    : apply_general(p, s, prev, i, j, k));
			continue;
		}
		/* Each neighbour pair once: the +x, +y, +z neighbour, when it is not padding. */
		for (int a = 0; a < 3; a++) {
			size_t m = n + st[a];

			if (m >= p->cells || cls[m] == VOX_PAD)
				continue;
			pot += (long double)(cur[n] - cur[m]) * (prev[n] - prev[m]);
		}
	}
	return (double)(kin + (long double)(lambda * lambda) * pot);
}

double fdtd_energy_of(const struct vox_grid *g, double lambda, const struct stn_stencil *s,
		      const double *cur, const double *prev)
{
	return energy(g, lambda, s, NULL, cur, prev);
}

double fdtd_energy(const struct fdtd *f)
{
	size_t cells = f->grid->plan.cells;
	double *cur = malloc(cells * sizeof(double)), *prev = malloc(cells * sizeof(double));
	double e = -1;

	if (cur && prev) {
		fdtd_field(f, 0, cur);
		fdtd_field(f, 1, prev);
		e = energy(f->grid, f->lambda, f->stencil, f, cur, prev);
		if (f->branch && (!f->gpu || !GPU_CALL(cuda_branch_state(
							 f->gpu, f->branch, (struct rs_error *)&f->err))))
			e += branch_energy(f->branch, cur, prev);
		else if (f->branch)
			e = -1;
	}
	free(cur);
	free(prev);
	return e;
}

void fdtd_plane(const struct fdtd *f, int axis, int index, float *out)
{
	if (f->gpu) {
		(void)GPU_CALL(cuda_plane(f->gpu, axis, index, out, (struct rs_error *)&f->err));
		return;
	}
	cpu_plane(f, axis, index, out);
}

int fdtd_plane_start(struct fdtd *f, int axis, int index, float *out, struct fdtd_copy *c)
{
	c->event = NULL;
	if (f->gpu)
		return GPU_CALL(cuda_plane_start(f->gpu, axis, index, out, &c->event, &f->err));
	fdtd_plane(f, axis, index, out);
	return 0;
}

int fdtd_plane_finish(struct fdtd *f, struct fdtd_copy *c)
{
	void *ev = c->event;

	c->event = NULL;
	(void)f;
	return ev ? GPU_CALL(cuda_plane_finish(ev, NULL)) : 0;
}

float *fdtd_host_alloc(struct fdtd *f, size_t n)
{
	return f->gpu ? GPU_VALUE(cuda_host_alloc(n), NULL) : malloc(n * sizeof(float));
}

void fdtd_host_free(struct fdtd *f, float *p)
{
	if (!f->gpu)
		free(p);
#ifdef ROOMSIM_CUDA
	else
		cuda_host_free(p);
#endif
}

/* Spread folded values over the cubic layout: the fcc nodes' cells, 0 in the others. */
static void unfold(const struct fdtd *f, const double *in, double *out)
{
	const struct vox_plan *p = &f->grid->plan;

	memset(out, 0, p->cells * sizeof(*out));
	for (int k = 0; k < p->n[2]; k++)
		for (int j = 0; j < p->n[1]; j++)
			for (int i = (j + k) & 1; i < p->n[0]; i += 2)
				out[vox_index(p, i, j, k)] = in[vox_folded(p, i, j, k)];
}

void fdtd_field(const struct fdtd *f, int older, double *out)
{
	const void *u = older ? f->prev : f->cur;
	double *v = f->grid->plan.fcc ? malloc(f->values * sizeof(double)) : out;

	if (!v) {	/* the callers' own allocation was far larger: say so, do not crash */
		memset(out, 0, f->grid->plan.cells * sizeof(*out));
		rs_fail((struct rs_error *)&f->err, RS_ENOMEM, "out of memory unfolding a field");
		return;
	}
	if (f->gpu)
		(void)GPU_CALL(cuda_field(f->gpu, older, v, (struct rs_error *)&f->err));
	else
		for (size_t n = 0; n < f->values; n++)
			v[n] = cpu_get(f, u, n);
	if (v != out) {
		unfold(f, v, out);
		free(v);
	}
}

int fdtd_set_field(struct fdtd *f, const double *cur, const double *prev)
{
	const struct vox_plan *p = &f->grid->plan;
	const double *in[2] = { cur, prev };
	double *v = p->fcc ? malloc(f->values * sizeof(double)) : NULL;
	int rc = 0;

	if (p->fcc && !v)
		return rs_fail(&f->err, RS_ENOMEM, "out of memory folding a field");
	for (int l = 0; l < 2 && !rc; l++) {
		const double *x = in[l];

		if (p->fcc) {	/* the nodes' cells, folded */
			for (int k = 0; k < p->n[2]; k++)
				for (int j = 0; j < p->n[1]; j++)
					for (int i = (j + k) & 1; i < p->n[0]; i += 2)
						v[vox_folded(p, i, j, k)] = in[l][vox_index(p, i, j, k)];
			x = v;
		}
		if (f->gpu) {
			rc = GPU_CALL(cuda_set_field(f->gpu, l, x, &f->err));
			continue;
		}
		for (size_t n = 0; n < f->values; n++)
			if (f->precision == 4)
				((float *)(l ? f->prev : f->cur))[n] = (float)x[n];
			else
				((double *)(l ? f->prev : f->cur))[n] = x[n];
	}
	free(v);
	return rc;
}

size_t fdtd_state_sizes(const struct fdtd *f, size_t *values, size_t *bstates, size_t *bW)
{
	*values = f->values;
	*bstates = f->branch ? f->branch->states : 0;
	*bW = f->branch ? f->branch->entries : 0;
	return (size_t)f->precision;
}

int fdtd_get_state(struct fdtd *f, void *cur, void *prev, void *bstate, void *bW)
{
	const size_t bytes = f->values * (size_t)f->precision;
	const struct branch_walls *b = f->branch;

	if (f->gpu && (GPU_CALL(cuda_levels(f->gpu, cur, prev, &f->err)) ||
		       (b && GPU_CALL(cuda_branch_state(f->gpu, f->branch, &f->err)))))
		return f->err.code ? f->err.code : RS_EDEVICE;
	if (!f->gpu) {
		memcpy(cur, f->cur, bytes);
		memcpy(prev, f->prev, bytes);
	}
	if (b) {	/* on the GPU just downloaded into the host arrays */
		memcpy(bstate, b->state, b->states * (size_t)f->precision);
		memcpy(bW, b->W, b->entries * (size_t)f->precision);
	}
	return 0;
}

int fdtd_set_state(struct fdtd *f, long step, const void *cur, const void *prev,
		   const void *bstate, const void *bW)
{
	const size_t bytes = f->values * (size_t)f->precision;
	const struct branch_walls *b = f->branch;

	f->gbase = step + 1;
	f->gcount = 0;
	if (f->gpu)
		return GPU_CALL(cuda_set_state(f->gpu, step, cur, prev, b ? bstate : NULL,
					       b ? bW : NULL, &f->err));
	memcpy(f->cur, cur, bytes);
	memcpy(f->prev, prev, bytes);
	if (b) {
		memcpy(b->state, bstate, b->states * (size_t)f->precision);
		memcpy(b->W, bW, b->entries * (size_t)f->precision);
	}
	f->step = step;
	return 0;
}

int fdtd_set_receiver(struct fdtd *f, int r, const double *samples, size_t n)
{
	if (f->gpu)
		return GPU_CALL(cuda_set_receiver(f->gpu, r, samples, n, &f->err));
	if (r < 0 || r >= f->nrec || n > f->rec[r].len)
		return rs_fail(&f->err, RS_EINTERNAL, "receiver %d: %zu samples do not fit", r, n);
	memcpy(f->rec[r].signal, samples, n * sizeof(double));
	return 0;
}

uint64_t fdtd_fingerprint(const struct fdtd *f, uint64_t h)
{
	const struct branch_walls *b = f->branch;

	h = rs_hash(h, &f->coefs.first_diff, sizeof(f->coefs.first_diff));	/* no padding */
	h = rs_hash(h, f->coefs.be, sizeof(f->coefs.be));
	h = rs_hash(h, f->coefs.cb, sizeof(f->coefs.cb));
	h = rs_hash(h, f->coefs.sc, sizeof(f->coefs.sc));
	h = rs_hash(h, &f->coefs.l2, sizeof(f->coefs.l2));
	h = rs_hash(h, &f->lambda, sizeof(f->lambda));
	if (b) {
		h = rs_hash(h, b->A, b->nodes * sizeof(double));
		h = rs_hash(h, b->inv, b->nodes * sizeof(double));
		h = rs_hash(h, b->gam, b->entries * sizeof(double));
		h = rs_hash(h, b->bb, (size_t)b->nbranch * sizeof(double));
		h = rs_hash(h, b->cc, (size_t)b->nbranch * sizeof(double));
		h = rs_hash(h, b->kk, (size_t)b->nbranch * sizeof(double));
	}
	return h;
}
