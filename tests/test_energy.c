/*
 * test_energy - the scheme's discrete energy (docs/physics.md, "Energy"): conserved to
 * round-off in a rigid room, never rising and decaying in an absorbing one.
 */
#include "helper.h"

#include <math.h>

#define ROOM(walls, precision) \
	"grid: {spacing: 0.05, courant: 0.999}\n" \
	"scheme: {precision: " precision "}\n" \
	"duration: 1.0\n" \
	"geometry: {box: [1.0, 0.8, 0.6]}\n" \
	"materials: {w: " walls "}\n" \
	"surfaces: {default: w}\n" \
	"sources: [{name: S, position: [0.31, 0.27, 0.22], signal: impulse, highpass: 0}]\n" \
	"receivers: [{name: R, position: [0.7, 0.5, 0.4]}]\n"

/* Steps of the conservation test (the figure) and its tolerance. */
#define CONSERVE_STEPS 5000
#define CONSERVE_TOL 1e-10

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
	double e0, prev;

	(void)state;
	sim_run(s, 0, 1);
	e0 = prev = fdtd_energy(s->engine);
	for (int n = 0; n < 3000; n++) {
		double e;

		assert_int_equal(fdtd_advance(s->engine, 1, NULL), 0);
		e = fdtd_energy(s->engine);
		if (e > prev * (1 + 1e-13))
			fail_msg("energy rose at step %d: %.17g -> %.17g", n, prev, e);
		prev = e;
	}
	print_message("# energy after 3000 steps: %.3e of the initial\n", prev / e0);
	assert_true(prev < 0.5 * e0);	/* and the walls did absorb */
	sim_close(s);
}

static void rigid_box_float32_stays_close(void **state)
{
	struct sim *s = sim_open(ROOM("{admittance: 0}", "float32"));
	double e0, worst = 0;

	(void)state;
	sim_run(s, 0, 1);
	e0 = fdtd_energy(s->engine);
	for (int n = 0; n < 2000; n++) {
		assert_int_equal(fdtd_advance(s->engine, 1, NULL), 0);
		worst = fmax(worst, fabs(fdtd_energy(s->engine) - e0) / e0);
	}
	print_message("# float32: max relative energy change %.3e\n", worst);
	assert_true(worst < 1e-3);
	sim_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rigid_box_conserves_energy_float64),
		cmocka_unit_test(absorbing_box_energy_never_rises),
		cmocka_unit_test(rigid_box_float32_stays_close),
	};

	return cmocka_run_group_tests_name("energy", tests, NULL, NULL);
}
