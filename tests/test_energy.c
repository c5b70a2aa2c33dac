/*
 * test_energy - the scheme's discrete energy (docs/physics.md, "Energy"): conserved to
 * round-off in a rigid room, never rising and decaying in an absorbing one.
 */
#include "helper.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOM_S(walls, precision, scheme) \
	"grid: {spacing: 0.05, courant: 0.999}\n" \
	"scheme: {precision: " precision scheme "}\n" \
	"duration: 1.0\n" \
	"geometry: {box: [1.0, 0.8, 0.6]}\n" \
	"materials: {w: " walls "}\n" \
	"surfaces: {default: w}\n" \
	"sources: [{name: S, position: [0.31, 0.27, 0.22], signal: impulse, highpass: 0}]\n" \
	"receivers: [{name: R, position: [0.7, 0.5, 0.4]}]\n"
#define ROOM(walls, precision) ROOM_S(walls, precision, "")

/* Steps of the conservation test (the figure) and its tolerance. */
#define CONSERVE_STEPS 5000
#define CONSERVE_TOL 1e-10

/* After the source's first step, the largest relative energy change over `steps` steps. */
static double drift(struct sim *s, int steps)
{
	double e0, worst = 0;

	sim_run(s, 0, 1);
	e0 = fdtd_energy(s->engine);
	assert_true(e0 > 0);
	for (int n = 0; n < steps; n++) {
		assert_int_equal(fdtd_advance(s->engine, 1, NULL), 0);
		worst = fmax(worst, fabs(fdtd_energy(s->engine) - e0) / e0);
	}
	return worst;
}

/* After the source's first step, `steps` steps in which the energy must never rise; returns
 * the final energy over the initial. */
static double decay(struct sim *s, int steps)
{
	double e0, prev;

	sim_run(s, 0, 1);
	e0 = prev = fdtd_energy(s->engine);
	for (int n = 0; n < steps; n++) {
		double e;

		assert_int_equal(fdtd_advance(s->engine, 1, NULL), 0);
		e = fdtd_energy(s->engine);
		if (e > prev * (1 + 1e-13))
			fail_msg("%s: energy rose at step %d: %.17g -> %.17g", s->stencil.name, n,
				 prev, e);
		prev = e;
	}
	return prev / e0;
}

static void rigid_box_conserves_energy_float64(void **state)
{
	struct sim *s = sim_open(ROOM("{admittance: 0}", "float64"));
	double e0, worst = 0, moved = 0;

	(void)state;
	sim_run(s, 0, 1);	/* the impulse is injected in step 0; then the room is closed */
	e0 = fdtd_energy(s->engine);
	assert_true(e0 > 0);
	for (int n = 0; n < CONSERVE_STEPS; n++) {
		assert_int_equal(fdtd_advance(s->engine, 1, NULL), 0);
		worst = fmax(worst, fabs(fdtd_energy(s->engine) - e0) / e0);
		moved = fmax(moved, fabs(fdtd_receiver(s->engine, 0)[fdtd_steps(s->engine)]));
	}
	print_message("# max relative energy change over %d steps: %.3e\n", CONSERVE_STEPS, worst);
	assert_true(moved > 0);		/* the wave did reach the receiver */
	assert_true(worst < CONSERVE_TOL);
	sim_close(s);
}

static void absorbing_box_energy_never_rises(void **state)
{
	struct sim *s = sim_open(ROOM("{absorption: 0.3}", "float64"));
	const double fell = decay(s, 3000);

	(void)state;
	print_message("# energy after 3000 steps: %.3e of the initial\n", fell);
	assert_true(fell < 0.5);	/* and the walls did absorb */
	sim_close(s);
}

static void rigid_box_float32_stays_close(void **state)
{
	struct sim *s = sim_open(ROOM("{admittance: 0}", "float32"));
	const double worst = drift(s, 2000);

	(void)state;
	print_message("# float32: max relative energy change %.3e\n", worst);
	assert_true(worst < 1e-3);
	sim_close(s);
}

/*
 * Stencils reaching further than one cell read mirrored values beyond rigid walls: the
 * operator is symmetric, so the same energy is conserved (docs/physics.md, "Larger
 * stencils"); absorbing walls only take energy away. The fcc scheme mirrors about walls
 * through its nodes, and its energy weighs wall nodes by their share (physics.md, "FCC").
 */
static void larger_stencils(void **state)
{
	static const char *const schemes[] = { ", stencil: leggy, order: 4",
					       ", stencil: leggy, order: 8",
					       ", stencil: compact, radius2: 3",
					       ", stencil: box, q: [2, 2, 2]",
					       ", stencil: interpolated, variant: IWB",
					       ", stencil: interpolated, variant: CCP",
					       ", stencil: fcc" };
	char rigid[2048], lossy[2048];

	(void)state;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		struct sim *s;
		double worst, fell;

		snprintf(rigid, sizeof(rigid), ROOM_S("{admittance: 0}", "float64", "%s"), schemes[i]);
		snprintf(lossy, sizeof(lossy), ROOM_S("{absorption: 0.3}", "float64", "%s"),
			 schemes[i]);
		s = sim_open(rigid);
		worst = drift(s, 1000);
		print_message("# %-34s rigid: energy drift over 1000 steps %.2e\n", s->stencil.name,
			      worst);
		assert_true(worst < CONSERVE_TOL);
		sim_close(s);
		s = sim_open(lossy);
		fell = decay(s, 1000);
		print_message("# %-34s absorbing: energy after 1000 steps %.3f of the initial\n",
			      s->stencil.name, fell);
		assert_true(fell < 0.9);
		sim_close(s);
	}
}

/*
 * The largest |u^n - mean| over the room's cells. The impulse without high-pass gives the
 * rigid room a constant mode that grows linearly (zero frequency), whatever the stencil.
 */
static double field_peak(const struct sim *s)
{
	const size_t cells = s->grid->plan.cells;
	double *u = malloc(cells * sizeof(double)), peak = 0, mean = 0;
	size_t air = 0;

	assert_non_null(u);
	fdtd_field(s->engine, 0, u);
	for (size_t n = 0; n < cells; n++)
		if (s->grid->cls[n] != VOX_PAD) {
			mean += u[n];
			air++;
		}
	mean /= (double)air;
	for (size_t n = 0; n < cells; n++)
		if (s->grid->cls[n] != VOX_PAD)
			peak = fmax(peak, fabs(u[n] - mean));
	free(u);
	return peak;
}

/*
 * After the source's first step, 8000 steps of a rigid room: the largest relative energy
 * change, the energy e0 at the start, and the field's peak (field_peak) after 100 steps and at
 * the end.
 */
static double long_drift(struct sim *s, double *e0, double *peak0, double *peak)
{
	double worst = 0;

	sim_run(s, 0, 1);
	*e0 = fdtd_energy(s->engine);
	for (int n = 0; n < 8000; n += 100) {
		assert_int_equal(fdtd_advance(s->engine, 100, NULL), 0);
		worst = fmax(worst, fabs(fdtd_energy(s->engine) - *e0) / *e0);
		if (n == 0)
			*peak0 = field_peak(s);
	}
	*peak = field_peak(s);
	return worst;
}

/*
 * A room that is not a box (docs/physics.md, "Larger stencils"): an axial stencil's legs fold
 * about the first walls along their lines; any other stencil's cells within its reach of a
 * carved wall take the 7-point update, and their neighbours' edges to them become 7-point
 * edges. Either way the operator stays symmetric and the energy is conserved as in a box.
 * Rigid L-shaped room with a stepped ceiling, 8000 steps.
 */
static void carved_room_walls(void **state)
{
	static const char *const schemes[] = { ", stencil: leggy, order: 4",
					       ", stencil: leggy, order: 8",
					       ", stencil: compact, radius2: 3" };
	const double lo1[3] = { 0.55, 0.45, -1 }, hi1[3] = { 9, 9, 9 };
	const double lo2[3] = { -1, -1, 0.4 }, hi2[3] = { 0.3, 9, 9 };
	char yaml[2048];

	(void)state;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		struct sim *s;
		struct rs_error err = { 0 };
		struct fdtd_setup setup;
		double e0, worst, peak0 = 0, peak;

		snprintf(yaml, sizeof(yaml), ROOM_S("{admittance: 0}", "float64", "%s"), schemes[i]);
		s = sim_open(yaml);
		assert_int_equal(vox_carve(s->grid, s->room, lo1, hi1, 0, &err), 0);
		assert_int_equal(vox_carve(s->grid, s->room, lo2, hi2, 0, &err), 0);
		fdtd_destroy(s->engine);
		setup = (struct fdtd_setup){ .grid = s->grid, .stencil = &s->stencil,
					     .lambda = s->lambda, .precision = 8 };
		/* past 1/sqrt(3), the 7-point rule of the fallback cells would grow: refused */
		if (s->lambda > 1 / sqrt(3.0)) {
			assert_null(fdtd_create(&setup, &err));
			print_message("# %s at %.4f: %s\n", s->stencil.name, s->lambda, err.msg);
			assert_non_null(strstr(err.msg, "1/sqrt(3)"));
			setup.lambda = s->lambda = 0.99 / sqrt(3.0);
		}
		s->engine = fdtd_create(&setup, &err);
		if (!s->engine)
			fail_msg("%s", err.msg);
		worst = long_drift(s, &e0, &peak0, &peak);
		print_message("# %-30s L-shaped, rigid, lambda %.4f: energy drift over 8000 steps "
			      "%.2e; field peak %.3g after 100 steps, %.3g at the end\n",
			      s->stencil.name, s->lambda, worst, peak0, peak);
		/* a conserved energy bounds the field only if it is positive: check the field */
		assert_true(e0 > 0 && worst < CONSERVE_TOL && peak < 2 * peak0);
		sim_close(s);
	}
}

/*
 * The fcc lattice in a room that is not a box (docs/physics.md, "FCC walls in carved rooms"):
 * a node's links to nodes outside are left out, each node keeps its whole dual cell, so the
 * operator is a graph Laplacian and the energy is conserved at the lattice's own Courant
 * limit. An L-shaped room with a tilted cylinder removed (walls at every angle), rigid for
 * 8000 steps; absorbing (scalar walls), the energy never rises.
 */
#define L_ROOM(grid, scheme, walls) \
	"grid: {" grid "}\n" \
	"scheme: {precision: float64" scheme "}\n" \
	"duration: 1.0\n" \
	"geometry:\n" \
	"  shapes:\n" \
	"    - {add: box, min: [0, 0, 0], max: [1.0, 0.45, 0.6]}\n" \
	"    - {add: box, min: [0, 0.45, 0], max: [0.55, 0.8, 0.6]}\n" \
	"    - {remove: sphere, center: [0.5, 0.3, 0.3], radius: 0.12}\n" \
	"materials: {w: " walls "}\n" \
	"surfaces: {default: w}\n" \
	"sources: [{name: S, position: [0.21, 0.17, 0.22], signal: impulse, highpass: 0}]\n" \
	"receivers: [{name: R, position: [0.3, 0.6, 0.4]}]\n"
#define FCC_L(walls) L_ROOM("spacing: 0.05", ", stencil: fcc", walls)

/*
 * grid.walls: fitted (physics.md, "Fitted walls"): the cut cells' finite-volume update keeps
 * the operator symmetric, so the energy with each group's volume and each face's open share
 * is conserved in the same L-shaped room with its sphere, rigid, whose walls (none on a cell
 * face at 4.5 cm) cut slivers that merge; and absorbing, it never rises. At the scheme's own
 * limit too, where most slivers merge.
 */
#define FIT_L(courant, walls) L_ROOM("spacing: 0.045, walls: fitted" courant, "", walls)

static void fitted_walls(void **state)
{
	const char *rooms[] = { FIT_L("", "{admittance: 0}"), FIT_L(", courant: 0.999",
								  "{admittance: 0}") };
	double e0, worst, peak0 = 0, peak, e, prev;

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct sim *s = sim_open(rooms[i]);

		assert_non_null(s->grid->cut);
		worst = long_drift(s, &e0, &peak0, &peak);
		print_message("# fitted walls, rigid, lambda %.4f: %zu cut cells in %zu groups; energy "
			      "drift over 8000 steps %.2e; field peak %.3g after 100 steps, %.3g at "
			      "the end\n", s->lambda, s->grid->cut->n, s->grid->cut->ngroups, worst,
			      peak0, peak);
		assert_true(s->grid->cut->ngroups < s->grid->cut->n);	/* some merged */
		assert_true(e0 > 0 && worst < CONSERVE_TOL && peak < 2 * peak0);
		sim_close(s);
	}
	{
		struct sim *s = sim_open(FIT_L("", "{absorption: 0.3}"));

		sim_run(s, 0, 1);
		e0 = prev = fdtd_energy(s->engine);
		worst = 0;
		for (int n = 0; n < 4000; n += 50) {
			assert_int_equal(fdtd_advance(s->engine, 50, NULL), 0);
			e = fdtd_energy(s->engine);
			worst = fmax(worst, (e - prev) / e0);
			prev = e;
		}
		print_message("# fitted walls, absorption 0.3: energy %.3g of its start after 4000 "
			      "steps, its largest rise %.2e of it\n", e / e0, worst);
		assert_true(worst <= 1e-12 && e < 0.5 * e0);
		sim_close(s);
	}
}
#undef FIT_L

/*
 * The fcc lattice's fitted walls in the same room: the energy over the rhombic dodecahedra's
 * cut volumes and faces is conserved, rigid, at the default Courant number and at 0.95, where
 * the cells lent volume at first still leave a mode along the walls above the bound, which
 * the stability check finds and the next rounds remove (without them the field passes 10^11
 * within 100 steps); absorbing, it never rises.
 */
#define FCC_FIT_L(courant, walls) \
	L_ROOM("spacing: 0.045, walls: fitted" courant, ", stencil: fcc", walls)
static void fcc_fitted_walls(void **state)
{
	const char *rooms[] = { FCC_FIT_L("", "{admittance: 0}"),
				FCC_FIT_L(", courant: 0.95", "{admittance: 0}") };
	double e0, worst, peak0 = 0, peak, fell;

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct sim *s = sim_open(rooms[i]);

		assert_non_null(s->grid->cut);
		assert_int_equal(s->grid->cut->faces, 12);
		worst = long_drift(s, &e0, &peak0, &peak);
		print_message("# fcc, fitted walls, rigid, lambda %.4f: %zu cut cells in %zu groups "
			      "after %d more rounds; energy drift over 8000 steps %.2e; field peak "
			      "%.3g after 100 steps, %.3g at the end\n", s->lambda, s->grid->cut->n,
			      s->grid->cut->ngroups, s->grid->cut->rounds, worst, peak0, peak);
		assert_true(e0 > 0 && worst < CONSERVE_TOL && peak < 2 * peak0);
		if (i)	/* the check was needed */
			assert_true(s->grid->cut->rounds > 0);
		sim_close(s);
	}
	{
		struct sim *s = sim_open(FCC_FIT_L("", "{absorption: 0.3}"));

		fell = decay(s, 2000);
		print_message("# fcc, fitted walls, absorption 0.3: energy after 2000 steps %.3g of "
			      "the initial\n", fell);
		assert_true(fell < 0.5);
		sim_close(s);
	}
}
#undef FCC_FIT_L

static void fcc_carved_room(void **state)
{
	struct sim *s = sim_open(FCC_L("{admittance: 0}"));
	double e0, worst, peak0 = 0, peak, fell;

	(void)state;
	assert_true(s->grid->carved && s->grid->plan.fcc && s->lambda > 0.99);
	worst = long_drift(s, &e0, &peak0, &peak);
	print_message("# fcc, L-shaped with a sphere removed, rigid, lambda %.4f: energy drift "
		      "over 8000 steps %.2e; field peak %.3g after 100 steps, %.3g at the end\n",
		      s->lambda, worst, peak0, peak);
	assert_true(e0 > 0 && worst < CONSERVE_TOL && peak < 2 * peak0);
	sim_close(s);
	s = sim_open(FCC_L("{absorption: 0.3}"));
	fell = decay(s, 2000);
	print_message("# fcc, the same room absorbing: energy after 2000 steps %.3g of the "
		      "initial\n", fell);
	assert_true(fell < 0.5);
	sim_close(s);
}

/*
 * A rigid box of 0.6 m at 5 cm, 12 cells a side, with up to 160 cubes of one and two cells
 * removed at random places (the source's and the receiver's corners kept clear), run with
 * `scheme` at its own Courant limit for 8000 steps: the energy's worst drift, and whether the
 * field stayed bounded. It returns the stencil's Courant number in *lambda.
 */
static double rough_room(const char *scheme, double *lambda)
{
	char yaml[16384];
	int n = snprintf(yaml, sizeof(yaml),
			 "grid: {spacing: 0.05}\n"
			 "scheme: {precision: float64, %s}\n"
			 "duration: 1.0\n"
			 "geometry:\n"
			 "  shapes:\n"
			 "    - {add: box, min: [0, 0, 0], max: [0.6, 0.6, 0.6]}\n", scheme);
	unsigned long x = 12345;
	struct sim *s;
	double e0, worst, peak0 = 0, peak;

	for (int b = 0; b < 160; b++) {
		int c[3], size;

		for (int a = 0; a < 3; a++) {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			c[a] = 1 + (int)(x >> 33) % 10;
		}
		size = 1 + (int)(x >> 40) % 2;
		if ((c[0] < 4 && c[1] < 4 && c[2] < 4) ||
		    (c[0] + size > 8 && c[1] + size > 8 && c[2] + size > 8))
			continue;	/* the source's and the receiver's corners stay clear */
		n += snprintf(yaml + n, sizeof(yaml) - (size_t)n,
			      "    - {remove: box, min: [%g, %g, %g], max: [%g, %g, %g]}\n",
			      0.05 * c[0], 0.05 * c[1], 0.05 * c[2], 0.05 * (c[0] + size),
			      0.05 * (c[1] + size), 0.05 * (c[2] + size));
	}
	snprintf(yaml + n, sizeof(yaml) - (size_t)n,
		 "materials: {w: {admittance: 0}}\n"
		 "surfaces: {default: w}\n"
		 "sources: [{name: S, position: [0.1, 0.1, 0.1], signal: impulse, "
		 "highpass: 0}]\n"
		 "receivers: [{name: R, position: [0.5, 0.5, 0.5]}]\n");
	s = sim_open(yaml);
	assert_true(s->grid->carved);
	worst = long_drift(s, &e0, &peak0, &peak);
	print_message("# %s, a box with small cubes removed, rigid, lambda %.4f: energy drift "
		      "over 8000 steps %.2e; field peak %.3g after 100 steps, %.3g at the end\n",
		      s->stencil.name, s->lambda, worst, peak0, peak);
	assert_true(e0 > 0 && peak < 2 * peak0);
	*lambda = s->lambda / stn_courant_limit(&s->stencil);
	sim_close(s);
	return worst;
}

/*
 * The bound behind the fcc walls' weights (docs/physics.md, "FCC walls in carved rooms"): in
 * the rough room, nodes on walls meet every way their tetrahedra can lose vertices. At the
 * lattice's own Courant limit the energy stays and the field does not grow; a weight a step
 * larger for a tetrahedron that lost one vertex (1/4 in place of 1/6) lets modes grow
 * without bound in rooms like this one.
 */
static void fcc_rough_room(void **state)
{
	double courant;

	(void)state;
	assert_true(rough_room("stencil: fcc", &courant) < CONSERVE_TOL);
	assert_true(courant > 0.99);
}

/*
 * Leggy stencils' folded legs (docs/physics.md, "Larger stencils") in the rough room, at
 * their own Courant limits, which the 7-point rule of the fallback cells would not allow
 * past order 2: runs of room cells shorter than the reach (order 8 reaches 4 cells, and the
 * gaps between removed cubes are often 1 to 3) fold a leg twice and more.
 */
static void leggy_rough_room(void **state)
{
	static const char *const schemes[] = { "stencil: leggy, order: 4",
					       "stencil: leggy, order: 8" };
	double courant;

	(void)state;
	for (int i = 0; i < 2; i++) {
		assert_true(rough_room(schemes[i], &courant) < CONSERVE_TOL);
		assert_true(courant > 0.99);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rigid_box_conserves_energy_float64),
		cmocka_unit_test(absorbing_box_energy_never_rises),
		cmocka_unit_test(rigid_box_float32_stays_close),
		cmocka_unit_test(larger_stencils),
		cmocka_unit_test(carved_room_walls),
		cmocka_unit_test(fitted_walls),
		cmocka_unit_test(fcc_fitted_walls),
		cmocka_unit_test(fcc_carved_room),
		cmocka_unit_test(fcc_rough_room),
		cmocka_unit_test(leggy_rough_room),
	};

	return cmocka_run_group_tests_name("energy", tests, NULL, NULL);
}
