/*
 * test_freefield - before the first reflection the room is free field: the direct sound
 * arrives at r/c (within one sample at the simulation rate) and falls as 1/r, with the
 * absolute level of docs/physics.md ("Sources": the signal is the pressure at 1 m).
 */
#include "helper.h"

#include <math.h>

#define FC 400.0		/* Hz, gaussian pulse: well resolved at 10.5 ppw of 1 kHz */
#define LEAD (1.5 / FC)		/* the pulse peaks this long after t = 0 (signal.c) */

/* The source sits off the grid nodes; receivers lie on rays through it. */
static const char room[] =
	"grid: {fmax: 1000, ppw: 10.5}\n"
	"scheme: {precision: float64}\n"
	"duration: 0.0125\n"
	"geometry: {box: [4.0, 4.0, 4.0]}\n"
	"sources: [{name: S, position: [1.513, 2.021, 1.987], signal: gaussian, fc: 400, "
	"highpass: 0}]\n"
	"receivers:\n"
	"  - {name: A1, position: [2.013, 2.021, 1.987]}\n"	/* +x, 0.5 m */
	"  - {name: A2, position: [2.513, 2.021, 1.987]}\n"	/* +x, 1.0 m */
	"  - {name: D1, position: [1.913, 2.421, 2.387]}\n"	/* diagonal, 0.693 m */
	"  - {name: D2, position: [2.213, 2.721, 2.687]}\n";	/* diagonal, 1.212 m */

static void direct_sound(void **state)
{
	struct sim *s = sim_open(room);
	const double c = s->room->c, *src = s->room->sources[0].pos;
	double r[4], amp[4];

	(void)state;
	sim_run(s, 0, -1);
	for (int q = 0; q < 4; q++) {
		const double *pos = s->room->receivers[q].pos, *y = fdtd_receiver(s->engine, q);
		size_t i;
		double t, expect;

		r[q] = sqrt(pow(pos[0] - src[0], 2) + pow(pos[1] - src[1], 2) +
			    pow(pos[2] - src[2], 2));
		expect = LEAD + r[q] / c;
		i = peak_index(y, 1, (size_t)s->steps);
		t = peak_refined(y, i) * s->dt;
		amp[q] = y[i];
		print_message("# %s: r = %.3f m, peak at %.4f ms (r/c + lead %.4f ms, %+.2f samples),"
			      " amplitude %.4f (1/r = %.4f)\n", s->room->receivers[q].name, r[q],
			      t * 1e3, expect * 1e3, (t - expect) / s->dt, amp[q], 1 / r[q]);
		assert_true(fabs(t - expect) < s->dt);
		assert_true(fabs(amp[q] * r[q] - 1) < 0.05);
	}
	for (int q = 0; q < 4; q += 2) {
		double ratio = amp[q] / amp[q + 1], want = r[q + 1] / r[q];

		print_message("# amplitude ratio %.4f, 1/r predicts %.4f\n", ratio, want);
		assert_true(fabs(ratio / want - 1) < 0.03);
	}
	sim_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(direct_sound) };

	return cmocka_run_group_tests_name("freefield", tests, NULL, NULL);
}
