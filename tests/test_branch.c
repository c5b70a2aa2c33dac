/*
 * test_branch - frequency-dependent walls in the engine (solver/branch.h; docs/physics.md,
 * "Branch walls"): one real branch is the scalar wall, the energy with the branches' share
 * never rises over 10^6 steps, and a plane pulse in a duct comes back from a material with
 * the fitted model's normal-incidence reflection; the node and entry lists in branch.h's order.
 */
#include "helper.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/branch.h"
#include "../solver/signal.h"
#include "../solver/wall.h"

/* Replace s's engine by one whose material m is the bank w (the grid is kept). */
static void use_bank(struct sim *s, int m, const struct wall_model *w)
{
	const struct wall_model *banks[ROOM_MAX_MATERIALS] = { 0 };

	banks[m] = w;
	sim_engine(s, banks);
}

#define BOX(walls, precision, stencil) \
	"grid: {spacing: 0.05, courant: 0.999}\n" \
	"scheme: {precision: " precision stencil "}\n" \
	"duration: 0.3\n" \
	"geometry: {box: [1.0, 0.8, 0.6]}\n" \
	"materials: {w: " walls ", hard: {admittance: 0}}\n" \
	"surfaces: {default: hard, x1: w, y0: w, ceiling: w}\n" \
	"sources: [{name: S, position: [0.31, 0.27, 0.22], signal: impulse, highpass: 0}]\n" \
	"receivers: [{name: R, position: [0.7, 0.5, 0.4]}]\n"

/*
 * A bank of one real branch (r, no mass, no stiffness) is the scalar wall of admittance 1 / r,
 * to rounding: the branch update solves for the same u^(n+1) as the kind's update. Three
 * faces carry it, so edges and a corner take two and three walls.
 */
static void one_real_branch_is_the_scalar_wall(const char *stencil, int carved)
{
	char yaml[1024];
	struct sim *a, *b;
	const struct wall_model real = { .n = 1, .r = { 4.0 } };
	double peak = 0, diff = 0;

	snprintf(yaml, sizeof(yaml), BOX("{admittance: 0.25}", "float64", "%s"), stencil);
	a = sim_open(yaml);
	snprintf(yaml, sizeof(yaml), BOX("{admittance: 0}", "float64", "%s"), stencil);
	b = sim_open(yaml);
	if (carved) {	/* an L with a stepped ceiling: leggy legs fold about it */
		sim_carve_l(a, 0.8, 0.65, 0.5, 0.2);
		sim_carve_l(b, 0.8, 0.65, 0.5, 0.2);
		use_bank(a, 0, NULL);	/* the engine again, on the carved grid */
	}
	use_bank(b, 0, &real);
	sim_run(a, 0, -1);
	sim_run(b, 0, -1);
	for (long n = 0; n <= a->steps; n++) {
		const double x = fdtd_receiver(a->engine, 0)[n], y = fdtd_receiver(b->engine, 0)[n];

		peak = fmax(peak, fabs(x));
		diff = fmax(diff, fabs(x - y));
	}
	print_message("# %s%s: one real branch against the scalar wall: %.2e of the peak over %ld "
		      "steps\n", *stencil ? stencil : "7-point", carved ? ", carved" : "", diff / peak,
		      a->steps);
	assert_true(peak > 0);
	assert_true(diff < 1e-11 * peak);
	sim_close(a);
	sim_close(b);
}

static void real_branch_seven_point(void **state)
{
	(void)state;
	one_real_branch_is_the_scalar_wall("", 0);
}

static void real_branch_larger_stencil(void **state)
{
	(void)state;
	one_real_branch_is_the_scalar_wall(", stencil: leggy, order: 4", 0);
	one_real_branch_is_the_scalar_wall(", stencil: leggy, order: 4", 1);
}

static void real_branch_fcc(void **state)
{
	(void)state;
	one_real_branch_is_the_scalar_wall(", stencil: fcc", 0);
}

/* The library's most resonant material: 0.10 0.45 0.85 0.30 0.10 0.05 from 125 Hz. */
#define RESONANT "{library: microperforated_glass_sheets}"

#define PASSIVE_STEPS 1000000L
#define PASSIVE_EVERY 50	/* steps between energy checks after the first PASSIVE_DENSE */
#define PASSIVE_DENSE 20000

/*
 * 10^6 steps of a small box whose three faces are the resonant material. A high-passed
 * impulse (its sum and first moment 0, so it leaves no uniform drift: physics.md, "Sources")
 * plays for the first 0.3 s; from then on the energy (the branches' included) may rise only
 * by rounding: float64, 1e-12 of it per check; float32, 1e-5 of it, or 1e-9 of the energy
 * at the start once it is down there. At the end it must have fallen, not grown back.
 */
static void passive(const char *precision, const char *stencil, double rel, double floor)
{
	char yaml[1024];
	struct sim *s;
	double e0, prev, worst = 0, low = INFINITY, last;
	long rises = 0;

	snprintf(yaml, sizeof(yaml),
		 "grid: {spacing: 0.05, courant: 0.999}\n"
		 "scheme: {precision: %s%s}\n"
		 "duration: 0.3\n"
		 "geometry: {box: [0.5, 0.4, 0.3]}\n"
		 "materials: {w: " RESONANT ", hard: {admittance: 0}}\n"
		 "surfaces: {default: hard, x1: w, y0: w, ceiling: w}\n"
		 "sources: [{name: S, position: [0.21, 0.17, 0.12], signal: impulse}]\n"
		 "receivers: [{name: R, position: [0.3, 0.25, 0.2]}]\n", precision, stencil);
	s = sim_open(yaml);
	sim_run(s, 0, -1);
	e0 = prev = fdtd_energy(s->engine);
	assert_true(e0 > 0);
	for (long n = s->steps; n < PASSIVE_STEPS;) {
		const long step = n < s->steps + PASSIVE_DENSE ? 1 : PASSIVE_EVERY;
		double e;

		assert_int_equal(fdtd_advance(s->engine, step, NULL), 0);
		n += step;
		e = fdtd_energy(s->engine);
		if (e > prev * (1 + rel) + floor * e0)
			rises++;
		if (e > prev)
			worst = fmax(worst, (e - prev) / e0);
		if (n - step < PASSIVE_STEPS / 2 && n >= PASSIVE_STEPS / 2)
			low = e;
		prev = e;
	}
	last = prev;
	print_message("# %s%s: energy %.3e of that at the source's end after %ld steps (%.3e at half way), %ld "
		      "rises past rounding (the largest rise %.2e of the energy at the start)\n", precision,
		      stencil, last / e0, PASSIVE_STEPS,
		      low / e0, rises, worst);
	assert_int_equal(rises, 0);
	assert_true(last <= low + floor * e0);
	assert_true(last < 1e-3 * e0);
	sim_close(s);
}

static void passive_float64(void **state)
{
	(void)state;
	passive("float64", "", 1e-12, 1e-15);
}

static void passive_float32(void **state)
{
	(void)state;
	passive("float32", "", 1e-5, 1e-7);
}

/* The fcc scheme's energy sums lambda^2 u L u over nodes weighted by their dual cells, whose
 * rounding leaves 2.4e-13 of the start at the uniform drift of the impulse's net volume
 * (physics.md, "Sources"): the floor is 1e-12 there. */
static void passive_fcc(void **state)
{
	(void)state;
	passive("float64", ", stencil: fcc", 1e-12, 1e-12);
}

/* In float32 the fit's conductance at 0 Hz holds the uniform mode (physics.md, "The uniform
 * mode in float32"): without it, this run's energy grew ninefold over its second half. */
static void passive_fcc_float32(void **state)
{
	(void)state;
	passive("float32", ", stencil: fcc", 1e-5, 1e-7);
}

/*
 * Normal incidence: a duct of 2 x 2 cells with rigid sides, a Ricker pulse launched at its
 * rigid end, the material at the far end. The receiver halfway sees the incident pulse, then
 * the reflected one, each alone in its window; |R(f)| is the ratio of their spectra and must
 * be within 0.03 of the fitted model's, |(1 - beta) / (1 + beta)|, from 50 Hz to fmax / 2.
 */
#define DUCT_L 28.0		/* m */
#define DUCT_FMAX 4000.0	/* Hz */

static double complex dft(const double *x, long a, long b, double f, double dt)
{
	double complex s = 0;

	for (long n = a; n < b; n++)
		s += x[n] * cexp(-2 * I * M_PI * f * (double)n * dt);
	return s;
}

static void duct(const char *material)
{
	char yaml[1024];
	struct sim *s;
	const double c = 343, h = c / (DUCT_FMAX * 20), xr = DUCT_L / 2;
	double worst = 0, at = 0;
	long w1, w2;
	const double *y;
	const struct wall_model *bank;

	snprintf(yaml, sizeof(yaml),
		 "grid: {fmax: %g, ppw: 20}\n"
		 "duration: %g\n"
		 "geometry: {box: [%g, %g, %g]}\n"
		 "materials: {w: {library: %s}, hard: {admittance: 0}}\n"
		 "surfaces: {default: hard, x1: w}\n"
		 "sources: [{name: S, position: [%g, %g, %g], signal: ricker, fc: 1500, "
		 "highpass: 0}]\n"
		 "receivers: [{name: R, position: [%g, %g, %g]}]\n",
		 DUCT_FMAX, 2.05 * DUCT_L / c, DUCT_L, 2 * h, 2 * h, material, 2 * h, h, h,
		 xr, h, h);
	s = sim_open(yaml);
	bank = s->banks->bank[0];
	assert_non_null(bank);
	sim_run(s, 0, -1);
	y = fdtd_receiver(s->engine, 0);
	/* windows cut halfway between arrivals: direct at xr / c = L / 2c, reflected at
	 * (2L - xr) / c = 3L / 2c, its echo from the rigid end at 5L / 2c */
	w1 = lround(DUCT_L / c / s->dt);
	w2 = lround(2 * DUCT_L / c / s->dt);
	assert_true(w2 <= s->steps);
	for (double f = 50; f <= DUCT_FMAX / 2; f += 10) {
		const double complex beta = wall_admittance(bank, f);
		const double model = cabs((1 - beta) / (1 + beta));
		const double got = cabs(dft(y, w1, w2, f, s->dt)) /
				   cabs(dft(y, 0, w1, f, s->dt));

		if (fabs(got - model) > worst) {
			worst = fabs(got - model);
			at = f;
		}
	}
	print_message("# %s: |R(f)| within %.4f of the model from 50 Hz to %g Hz (worst at "
		      "%g Hz)\n", material, worst, DUCT_FMAX / 2, at);
	assert_true(worst < 0.03);
	sim_close(s);
}

static void duct_rising(void **state)
{
	(void)state;
	duct("carpet_6mm_open_cell_foam");
}

static void duct_falling(void **state)
{
	(void)state;
	duct("plywood_thin");
}

static void duct_resonant(void **state)
{
	(void)state;
	duct("microperforated_glass_sheets");
}

/*
 * Per band: a box whose six faces are six different band materials (125, 250 and 500 Hz),
 * against runs of the existing engine with each face's absorption in one band as a scalar
 * wall. In every band the mean T30 of three receivers, each signal filtered to the octave
 * (fourth-order Butterworth high- and low-pass at fc / sqrt 2 and fc sqrt 2, zero phase),
 * must agree within 5 %.
 */
#define T30_BANDS 3
static const double t30_f[T30_BANDS] = { 125, 250, 500 };
static const char *const t30_faces[6] = { "x0", "x1", "y0", "y1", "floor", "ceiling" };
static const double t30_alpha[6][T30_BANDS] = {
	{ 0.10, 0.15, 0.25 }, { 0.30, 0.22, 0.15 }, { 0.06, 0.10, 0.18 },
	{ 0.15, 0.15, 0.15 }, { 0.08, 0.14, 0.30 }, { 0.25, 0.30, 0.35 },
};

/* The box with scalar walls of band b, or (b < 0) with the band materials. */
static void t30_room(char *yaml, size_t len, int b)
{
	int n = snprintf(yaml, len, "grid: {fmax: 700}\nduration: 0.8\n"
				     "geometry: {box: [3.2, 2.6, 2.2]}\nmaterials:\n");

	for (int f = 0; f < 6; f++) {
		if (b >= 0)
			n += snprintf(yaml + n, len - (size_t)n, "  m%d: {absorption: %g}\n", f,
				      t30_alpha[f][b]);
		else
			n += snprintf(yaml + n, len - (size_t)n,
				      "  m%d: {absorption: {125: %g, 250: %g, 500: %g}}\n", f,
				      t30_alpha[f][0], t30_alpha[f][1], t30_alpha[f][2]);
	}
	n += snprintf(yaml + n, len - (size_t)n, "surfaces: {");
	for (int f = 0; f < 6; f++)
		n += snprintf(yaml + n, len - (size_t)n, "%s%s: m%d", f ? ", " : "", t30_faces[f],
			      f);
	snprintf(yaml + n, len - (size_t)n,
		 "}\nsources: [{name: S, position: [0.9, 0.8, 0.7]}]\n"
		 "receivers: [{name: A, position: [2.3, 1.9, 1.5]}, "
		 "{name: B, position: [2.6, 0.9, 1.2]}, {name: C, position: [1.4, 2.0, 1.8]}]\n");
}

/* The mean T30 over the receivers of room (scalar walls of band b, or b < 0: bands) in band
 * `band`. */
static double band_t30(int b, int band)
{
	char yaml[2048];
	struct sim *s;
	double t = 0, *y;
	size_t n;

	t30_room(yaml, sizeof(yaml), b);
	s = sim_open(yaml);
	n = (size_t)s->steps + 1;
	assert_non_null(y = malloc(n * sizeof(double)));
	sim_run(s, 0, -1);
	for (int r = 0; r < s->room->nreceivers; r++) {
		struct sig_filter hp, lp;

		memcpy(y, fdtd_receiver(s->engine, r), n * sizeof(double));
		sig_butterworth(&hp, 1, 4, t30_f[band] / M_SQRT2, 1 / s->dt);
		sig_butterworth(&lp, 0, 4, t30_f[band] * M_SQRT2, 1 / s->dt);
		sig_apply_zero_phase(&hp, y, n);
		sig_apply_zero_phase(&lp, y, n);
		t += t30(y, n, 1 / s->dt) / s->room->nreceivers;
	}
	free(y);
	sim_close(s);
	return t;
}

static void per_band_t30(void **state)
{
	double worst = 0;

	(void)state;
	for (int b = 0; b < T30_BANDS; b++) {
		const double bands = band_t30(-1, b), scalar = band_t30(b, b);
		const double d = (bands - scalar) / scalar;

		print_message("# %g Hz: T30 %.3f s with the band materials, %.3f s with scalar walls "
			      "(%+.1f %%)\n", t30_f[b], bands, scalar, 100 * d);
		worst = fmax(worst, fabs(d));
	}
	assert_true(worst < 0.05);
}

/*
 * 255 materials (the class byte's limit): a box whose faces use the last ones, a band
 * material and a scalar one, gives exactly the receiver signal of the same box with only
 * those two materials defined.
 */
static void many_materials(void **state)
{
	const size_t len = 32768;
	char *yaml = malloc(len), *few = malloc(len);
	const char *tail = "surfaces: {default: m200, floor: m254, x1: m254}\n"
			   "sources: [{name: S, position: [1.0, 0.9, 0.8]}]\n"
			   "receivers: [{name: R, position: [2.1, 1.3, 1.1]}]\n";
	const char *head = "grid: {fmax: 400}\nduration: 0.05\ngeometry: {box: [3.0, 2.0, 2.0]}\n"
			   "materials:\n";
	const char *last = "  m200: {absorption: 0.12}\n"
			   "  m254: {absorption: {125: 0.1, 250: 0.3, 500: 0.5}}\n";
	struct sim *a, *b;
	int n;

	(void)state;
	assert_non_null(yaml);
	assert_non_null(few);
	n = snprintf(yaml, len, "%s", head);
	for (int i = 0; i < 255; i++)
		if (i != 200 && i != 254)
			n += snprintf(yaml + n, len - (size_t)n, "  m%d: {absorption: 0.%02d}\n", i,
				      i % 90 + 1);
	snprintf(yaml + n, len - (size_t)n, "%s%s", last, tail);
	snprintf(few, len, "%s%s%s", head, last, tail);
	a = sim_open(yaml);
	b = sim_open(few);
	assert_int_equal(a->room->nmaterials, 255);
	sim_run(a, 0, -1);
	sim_run(b, 0, -1);
	assert_memory_equal(fdtd_receiver(a->engine, 0), fdtd_receiver(b->engine, 0),
			    ((size_t)a->steps + 1) * sizeof(double));
	assert_true(fabs(fdtd_receiver(a->engine, 0)[a->steps / 2]) > 0);
	sim_close(a);
	sim_close(b);
	free(yaml);
	free(few);
}

/*
 * The node and entry lists against one plain pass over the walls in order: each wall with a
 * branch material is a node, those with one entry grouped by material and those with several
 * after them, each group in the walls' order; a node's entries in its faces' order with their
 * areas summed; a material's state the nodes of one entry first, then one a entry of the
 * others, in order. branch_create writes them from 64 runs of walls on the threads.
 */
static void lists_in_order(void **state)
{
	struct sim *s = sim_open("grid: {spacing: 0.05}\nduration: 0.01\n"
				 "geometry: {box: [1.3, 1.1, 0.9]}\n"
				 "materials: {a: {absorption: 0.1}, b: {absorption: 0.2}, "
				 "c: {absorption: 0.3}}\n"
				 "surfaces: {default: a, x1: b, y0: b, floor: c, ceiling: b}\n"
				 "sources: [{name: S, position: [0.31, 0.27, 0.22]}]\n"
				 "receivers: [{name: R, position: [0.7, 0.5, 0.4]}]\n");
	const struct wall_model two = { .n = 2, .r = { 4.0, 9.0 }, .m = { 0, 1e-4 } };
	const struct wall_model three = { .n = 3, .r = { 5.0, 7.0, 11.0 }, .m = { 0, 0, 2e-4 },
					  .k = { 0, 30.0, 0 } };
	const struct wall_model *banks[VOX_NO_WALL] = { 0 };
	struct branch_walls *b;
	size_t next[4] = { 0 }, in_multi[3] = { 0 }, multi, seen = 0;
	const struct vox_grid *g;
	struct rs_error err = { 0 };

	(void)state;
	sim_carve_l(s, 0.8, 0.65, 0.5, 0.2);	/* edges and corners of two materials */
	g = s->grid;
	banks[1] = &two;	/* b, c (a stays scalar) */
	banks[2] = &three;
	b = branch_create(g, banks, 3, s->lambda, s->dt, 8, &err);
	assert_non_null(b);
	assert_int_equal(b->nmat, 2);
	assert_true(b->seg[2] < b->nodes);	/* some nodes have several entries */
	assert_true(b->nodes > 64);		/* more nodes than runs of walls */
	for (int x = 0; x <= 2; x++)
		next[x] = b->seg[x];
	multi = b->seg[2];
	for (size_t w = 0; w < g->nwalls; w++) {
		const struct vox_wall *wl = &g->walls[w];
		int mats[6], ns = 0;
		double area[6];
		size_t n, e0;

		for (int f = 0; f < 6; f++) {
			const int m = wl->material[f];
			int e;

			if (m == VOX_NO_WALL || !banks[m])
				continue;
			for (e = 0; e < ns && mats[e] != m; e++)
				;
			if (e < ns)
				area[e] += wl->area[f];
			else {
				mats[ns] = m;
				area[ns++] = wl->area[f];
			}
		}
		if (!ns)
			continue;
		seen++;
		n = next[ns == 1 ? b->material_of[mats[0]] : 2]++;
		e0 = ns == 1 ? n : multi;
		multi += ns > 1 ? (size_t)ns : 0;
		assert_int_equal(b->at[n], wl->cell);
		assert_int_equal(b->first[n], e0);
		assert_int_equal(b->first[n + 1] - b->first[n], ns);
		for (int e = 0; e < ns; e++) {
			const int x = b->material_of[mats[e]];
			const size_t singles = b->seg[x + 1] - b->seg[x];
			size_t first = 0;

			for (int y = 0; y < x; y++)
				first += 2 * (size_t)b->nb[y] * b->stride[y];
			assert_int_equal(b->mat[e0 + (size_t)e], x);
			assert_int_equal(b->so[e0 + (size_t)e],
					 first + (ns == 1 ? n - b->seg[x] : singles + in_multi[x]++));
			assert_true(fabs(b->gam[e0 + (size_t)e] - 0.5 * s->lambda * area[e]) <=
				    1e-15 * area[e]);
		}
	}
	assert_int_equal(seen, b->nodes);
	assert_int_equal(multi, b->entries);
	for (int x = 0; x < 2; x++)
		assert_int_equal(next[x], b->seg[x + 1]);
	branch_free(b);
	sim_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_branch_seven_point),
		cmocka_unit_test(real_branch_larger_stencil),
		cmocka_unit_test(real_branch_fcc),
		cmocka_unit_test(duct_rising),
		cmocka_unit_test(duct_falling),
		cmocka_unit_test(duct_resonant),
		cmocka_unit_test(per_band_t30),
		cmocka_unit_test(many_materials),
		cmocka_unit_test(lists_in_order),
		cmocka_unit_test(passive_float64),
		cmocka_unit_test(passive_float32),
		cmocka_unit_test(passive_fcc),
		cmocka_unit_test(passive_fcc_float32),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
