/*
 * cpu.c - the CPU engine (OpenMP): the fields, the row lists and thread partition it walks,
 * and the time step of each scheme (cpu_step.inc, cpu_general.inc, cpu_fcc.inc, instantiated
 * per precision). solver/fdtd.c, the engines' facade, sets up what both engines share and
 * calls these through fdtd_impl.h. docs/physics.md derives every formula used here.
 */
#include "fdtd_impl.h"
#include "lines.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REAL float
#define SFX _f32
#include "cpu_step.inc"
#include "cpu_general.inc"
#include "cpu_fcc.inc"
#undef REAL
#undef SFX
#define REAL double
#define SFX _f64
#include "cpu_step.inc"
#include "cpu_general.inc"
#include "cpu_fcc.inc"
#undef REAL
#undef SFX

double cpu_touch_sum(const struct fdtd *f, const double *u, int i, int j, int k)
{
	return touch_sum_f64(f, u, i, j, k);
}

double cpu_line_sum(const struct fdtd *f, const double *u, int i, int j, int k)
{
	return line_sum_f64(f, u, i, j, k);
}

double cpu_get(const struct fdtd *f, const void *u, size_t n)
{
	return f->precision == 4 ? ((const float *)u)[n] : ((const double *)u)[n];
}

static void add(const struct fdtd *f, void *u, size_t n, double v)
{
	if (f->precision == 4)
		((float *)u)[n] += (float)v;
	else
		((double *)u)[n] += v;
}

static void row_bounds(struct fdtd *f)
{
	const struct vox_grid *g = f->grid;
	const struct vox_plan *p = &g->plan;

	f->k0 = p->n[2];
	f->k1 = -1;
	for (int j = 0; j < p->n[1]; j++) {
		struct fdtd_row *r = &f->rows[j];

		*r = (struct fdtd_row){ p->n[2], -1, p->n[0], -1 };
		for (int i = 0; i < p->n[0]; i++) {
			size_t c = (size_t)i + (size_t)p->n[0] * j;

			if (g->kstart[c] > g->kstop[c])
				continue;
			r->k0 = g->kstart[c] < r->k0 ? g->kstart[c] : r->k0;
			r->k1 = g->kstop[c] > r->k1 ? g->kstop[c] : r->k1;
			r->i0 = i < r->i0 ? i : r->i0;
			r->i1 = i;
		}
		f->k0 = r->k0 < f->k0 ? r->k0 : f->k0;
		f->k1 = r->k1 > f->k1 ? r->k1 : f->k1;
	}
}

/*
 * Split the slabs into one contiguous range per thread with about equal numbers of
 * non-padding cells, so a room whose padding sits in some slabs keeps every core busy
 * (each thread also keeps its k - 1, k, k + 1 slabs in cache as it marches).
 */
static int partition(struct fdtd *f)
{
	const struct vox_plan *p = &f->grid->plan;
	double total = 0, done = 0;
	int t = 1;

	f->kpart = malloc(sizeof(int) * (size_t)(f->threads + 1));
	if (!f->kpart)
		return RS_ENOMEM;
	total = (double)(p->cells - p->padding);
	f->kpart[0] = f->k0;
	for (int k = f->k0; k <= f->k1 && t < f->threads; k++) {
		for (int j = 0; j < p->n[1]; j++)
			for (int i = 0; i < p->n[0]; i++)
				done += f->grid->cls[vox_index(p, i, j, k)] != VOX_PAD;
		while (t < f->threads && done >= total * t / f->threads)
			f->kpart[t++] = k + 1;
	}
	while (t <= f->threads)
		f->kpart[t++] = f->k1 + 1;
	return 0;
}

/*
 * Per x-row: the runs of non-padding cells (updated by the vectorised air loop) and the
 * boundary cells among them (redone with their own coefficients). Padding is in neither.
 */
static int row_lists(struct fdtd *f)
{
	const struct vox_plan *p = &f->grid->plan;
	const uint8_t *cls = f->grid->cls;
	const size_t rows = (size_t)p->n[1] * (size_t)p->n[2];
	size_t nfix = 0, nrun = 0;

	f->fix_start = malloc((rows + 1) * sizeof(*f->fix_start));
	f->run_start = malloc((rows + 1) * sizeof(*f->run_start));
	if (!f->fix_start || !f->run_start)
		return RS_ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		nfix = nrun = 0;
		for (int k = 0; k < p->n[2]; k++)
			for (int j = 0; j < p->n[1]; j++) {
				const struct fdtd_row *r = &f->rows[j];
				const size_t q = (size_t)k * p->n[1] + j;
				int open = 0;

				f->fix_start[q] = nfix;
				f->run_start[q] = nrun;
				if (k < r->k0 || k > r->k1)
					continue;
				for (int i = r->i0; i <= r->i1 + 1; i++) {
					const uint8_t c = i <= r->i1 ? cls[vox_index(p, i, j, k)] : VOX_PAD;

					if (c != VOX_PAD && c != VOX_AIR) {
						if (pass)
							f->fix_i[nfix] = (uint32_t)i;
						nfix++;
					}
					if (c != VOX_PAD && !open) {
						if (pass)
							f->runs[2 * nrun] = (uint32_t)i;
						open = 1;
					} else if (c == VOX_PAD && open) {
						if (pass)
							f->runs[2 * nrun + 1] = (uint32_t)(i - 1);
						nrun++;
						open = 0;
					}
				}
			}
		f->fix_start[rows] = nfix;
		f->run_start[rows] = nrun;
		if (!pass && (!(f->fix_i = malloc((nfix ? nfix : 1) * sizeof(*f->fix_i))) ||
			      !(f->runs = malloc((nrun ? 2 * nrun : 2) * sizeof(*f->runs)))))
			return RS_ENOMEM;
	}
	return 0;
}

int cpu_create(struct fdtd *f, struct rs_error *err)
{
	const struct vox_plan *p = &f->grid->plan;

	f->cur = calloc(f->values, (size_t)f->precision);
	f->prev = calloc(f->values, (size_t)f->precision);
	f->rows = calloc((size_t)p->n[1], sizeof(*f->rows));
	if (!f->cur || !f->prev || !f->rows)
		goto out_nomem;
	row_bounds(f);
	/* scratch rows: the general step sums in double whatever the precision
	 * (cpu_general.inc); the row lists serve the 7-point step only, the general step walks
	 * the box itself; the fcc step needs neither */
	if (!p->fcc &&
	    !(f->scratch = malloc((size_t)f->threads * (size_t)p->n[0] * sizeof(double))))
		goto out_nomem;
	if ((!f->stencil && row_lists(f)) || partition(f))
		goto out_nomem;
	if (f->grid->cut &&	/* the cut groups' u^(n-1) */
	    !(f->cut_old = malloc((f->grid->cut->ngroups + 1) * (size_t)f->precision)))
		goto out_nomem;
	return 0;

out_nomem:
	return rs_fail(err, RS_ENOMEM, "out of memory allocating the CPU engine (%zu bytes of "
		       "fields)", 2 * f->values * (size_t)f->precision);
}

void cpu_free(struct fdtd *f)
{
	free(f->cur);
	free(f->prev);
	free(f->rows);
	free(f->fix_start);
	free(f->fix_i);
	free(f->run_start);
	free(f->runs);
	free(f->kpart);
	free(f->scratch);
	free(f->cut_old);
	free(f->cut_l2v);
	free(f->cut_sc);
	free(f->cut_cb);
}

/*
 * grid.walls: fitted (voxel.h, struct vox_cut): each group's u^(n-1), which the step may
 * overwrite, saved before it; after it, the group's finite-volume update written to all its
 * members. Its faces' sum takes each member's faces in order (a face between two members
 * adds exactly 0, as they hold one value), each weighed by its open fraction. A member's
 * value is at cell >> sh (sh = 1 on the fcc lattice, whose fields are folded: vox_folded).
 */
#define CUT_STEP(REAL, SFX)                                                                   \
	static void cut_save_##SFX(struct fdtd *f)                                            \
	{                                                                                     \
		const struct vox_cut *c = f->grid->cut;                                       \
		const int sh = f->grid->plan.fcc;                                             \
		const REAL *b = f->prev;                                                      \
		REAL *old = f->cut_old;                                                       \
                                                                                              \
		for (size_t q = 0; q < c->ngroups; q++)                                       \
			old[q] = b[c->cell[c->gstart[q]] >> sh];                              \
	}                                                                                     \
	static void cut_step_##SFX(struct fdtd *f)                                            \
	{                                                                                     \
		const struct vox_cut *c = f->grid->cut;                                       \
		const struct vox_plan *p = &f->grid->plan;                                    \
		const int sh = p->fcc, nf = c->faces;                                         \
		const REAL *a = f->cur, *old = f->cut_old;                                    \
		REAL *b = f->prev;                                                            \
		ptrdiff_t st[12];                                                             \
                                                                                              \
		for (int e = 0; e < nf; e++)                                                  \
			st[e] = vox_cut_offset(p, nf, e);                                     \
		_Pragma("omp parallel for num_threads(f->threads) schedule(static)")         \
		for (size_t q = 0; q < c->ngroups; q++) {                                     \
			const size_t m0 = c->gstart[q], m1 = c->gstart[q + 1];                \
			const REAL u = a[c->cell[m0] >> sh];                                  \
			REAL t = 0, v;                                                        \
                                                                                              \
			for (size_t m = m0; m < m1; m++)                                      \
				for (int e = 0; e < nf; e++)                                  \
					t += (REAL)c->open[m * nf + e] *                      \
					     (a[(c->cell[m] + st[e]) >> sh] - u);             \
			v = u + (REAL)f->cut_sc[q] *                                          \
					((REAL)f->cut_cb[q] * (u - old[q]) +                  \
					 (REAL)f->cut_l2v[q] * t);                            \
			for (size_t m = m0; m < m1; m++)                                      \
				b[c->cell[m] >> sh] = v;                                      \
		}                                                                             \
	}
#define CUT_SPREAD(REAL, SFX)                                                                 \
	static void cut_spread_##SFX(struct fdtd *f)                                          \
	{                                                                                     \
		const struct vox_cut *c = f->grid->cut;                                       \
		const int sh = f->grid->plan.fcc;                                             \
		REAL *b = f->prev;                                                            \
                                                                                              \
		for (size_t q = 0; q < c->ngroups; q++)                                       \
			for (size_t m = c->gstart[q] + 1; m < c->gstart[q + 1]; m++)          \
				b[c->cell[m] >> sh] = b[c->cell[c->gstart[q]] >> sh];         \
	}
CUT_SPREAD(float, f32)
CUT_SPREAD(double, f64)
#undef CUT_SPREAD
CUT_STEP(float, f32)
CUT_STEP(double, f64)
#undef CUT_STEP

/* u^(n+1) += inject * s^n at the nodes of each source (physics.md "Sources"). */
static void inject(struct fdtd *f)
{
	for (int s = 0; s < f->nsrc; s++) {
		const struct fdtd_point *pt = &f->src[s];

		if ((size_t)f->step >= pt->len)
			continue;
		if (pt->nodes) {	/* node by node, as the GPU gets them */
			const size_t *cell = pt->mcell ? pt->mcell : pt->cell;
			const double *v = pt->nodes + (size_t)pt->m * f->step;

			for (int c = 0; c < pt->m; c++)
				if (v[c] != 0)
					add(f, f->prev, cell[c], f->inject * v[c]);
			continue;
		}
		if (pt->signal[f->step] == 0)
			continue;
		for (int c = 0; c < 8; c++)
			add(f, f->prev, pt->cell[c], f->inject * pt->signal[f->step] * pt->w[c]);
	}
}

/* Sample n of every receiver: the interpolation of u^n at its eight nodes (on the threads
 * when there are many: a spatial receiver's ball). */
static void record(struct fdtd *f)
{
#pragma omp parallel for if (f->nrec > 256) num_threads(f->threads) schedule(static)
	for (int r = 0; r < f->nrec; r++) {
		struct fdtd_point *pt = &f->rec[r];
		double y = 0;

		if ((size_t)f->step >= pt->len)
			continue;
		for (int c = 0; c < 8; c++)
			y += pt->w[c] * cpu_get(f, f->cur, pt->cell[c]);
		pt->signal[f->step] = y;
	}
}

/* Sample n of every grid point, into row n - gbase of the window, as record() reads one. */
static void record_grid(struct fdtd *f)
{
	float *row = f->gbuf + (size_t)(f->step - f->gbase) * f->ngp;

#pragma omp parallel for if (f->ngp > 4096) num_threads(f->threads) schedule(static)
	for (size_t q = 0; q < f->ngp; q++) {
		double y = 0;

		for (int c = 0; c < 8; c++)
			y += f->gw[q][c] * cpu_get(f, f->cur, f->gcell[q][c]);
		row[q] = (float)y;
	}
}

int cpu_advance(struct fdtd *f, long nsteps, volatile sig_atomic_t *stop)
{
	for (long i = 0; i < nsteps; i++) {
		void *t;

		if (stop && *stop)
			return RS_EINTR;
		if (f->grid->cut)
			f->precision == 4 ? cut_save_f32(f) : cut_save_f64(f);
		if (f->grid->plan.fcc && f->grid->carved)
			f->precision == 4 ? fcc_carved_f32(f) : fcc_carved_f64(f);
		else if (f->grid->plan.fcc)
			f->precision == 4 ? fcc_f32(f) : fcc_f64(f);
		else if (f->stencil)
			f->precision == 4 ? general_f32(f) : general_f64(f);
		else if (f->precision == 4)
			step_f32(f);
		else
			step_f64(f);
		if (f->grid->cut)
			f->precision == 4 ? cut_step_f32(f) : cut_step_f64(f);
		branch_step(f->branch, f->cur, f->prev, f->threads);
		if (f->grid->cut && f->branch)	/* a group's branch walls update its first */
			f->precision == 4 ? cut_spread_f32(f) : cut_spread_f64(f);
		inject(f);
		t = f->cur;
		f->cur = f->prev;
		f->prev = t;
		f->step++;
		if (f->exchange) {	/* a decomposed run: the halo layers, before the receivers */
			const int rc = f->exchange(f->exchange_ctx, f->cur, NULL, &f->err);

			if (rc)
				return rc;
		}
		record(f);
		if (f->ngp)
			record_grid(f);
		if (f->frames)
			cpu_frames_add(f, f->step);
	}
	return 0;
}

void cpu_plane(const struct fdtd *f, int axis, int index, float *out)
{
	const struct vox_plan *p = &f->grid->plan;
	/* The two in-plane axes, slower first: z planes are [y][x], x and y planes [z][.]. */
	const int u = axis == 2 ? 1 : 2, v = axis == 0 ? 1 : 0;

	/* rows in parallel: no thread idles through a serial stretch between steps */
#pragma omp parallel for num_threads(f->threads) schedule(static) \
	if (p->room[u] * p->room[v] > 16384)
	for (int b = p->halo; b < p->room[u] + p->halo; b++)
		for (int c = p->halo; c < p->room[v] + p->halo; c++) {
			const size_t o = (size_t)(b - p->halo) * p->room[v] + (size_t)(c - p->halo);
			int ijk[3];

			ijk[axis] = index;
			ijk[u] = b;
			ijk[v] = c;
			out[o] = p->fcc ? (float)(f->precision == 4 ? fcc_plane_f32(f, axis, ijk)
								    : fcc_plane_f64(f, axis, ijk))
					: (float)cpu_get(f, f->cur, vox_index(p, ijk[0], ijk[1], ijk[2]));
		}
}

