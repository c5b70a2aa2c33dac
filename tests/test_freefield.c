/*
 * test_freefield - before the first reflection the room is free field: the direct sound
 * arrives at r/c (within one sample at the simulation rate) and falls as 1/r, with the
 * absolute level of docs/physics.md ("Sources": the signal is the pressure at 1 m). And the
 * first reflection off a wall at normal incidence has the wall's reflection coefficient.
 */
#include "helper.h"

#include <math.h>
#include <stdio.h>

#define FC 400.0		/* Hz, gaussian pulse: well resolved at 10.5 ppw of 1 kHz */
#define LEAD (1.5 / FC)		/* the pulse peaks this long after t = 0 (signal.c) */

/* The source sits off the grid nodes; receivers lie on rays through it. */
#define ROOM(scheme) \
	"grid: {fmax: 1000, ppw: 10.5}\n" \
	"scheme: {precision: float64" scheme "}\n" \
	"duration: 0.0125\n" \
	"geometry: {box: [4.0, 4.0, 4.0]}\n" \
	"sources: [{name: S, position: [1.513, 2.021, 1.987], signal: gaussian, fc: 400, " \
	"highpass: 0}]\n" \
	"receivers:\n" \
	"  - {name: A1, position: [2.013, 2.021, 1.987]}\n"	/* +x, 0.5 m */ \
	"  - {name: A2, position: [2.513, 2.021, 1.987]}\n"	/* +x, 1.0 m */ \
	"  - {name: D1, position: [1.913, 2.421, 2.387]}\n"	/* diagonal, 0.693 m */ \
	"  - {name: D2, position: [2.213, 2.721, 2.687]}\n"	/* diagonal, 1.212 m */

static void check_direct(const char *room)
{
	struct sim *s = sim_open(room);
	const double c = s->room->c, *src = s->room->sources[0].pos;
	double r[4], amp[4];

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

static void direct_sound(void **state)
{
	(void)state;
	check_direct(ROOM(""));
}

/* The fcc lattice interpolates its source and receivers in its own basis (voxel.h). */
static void direct_sound_fcc(void **state)
{
	(void)state;
	check_direct(ROOM(", stencil: fcc"));
}

/* The largest |x| over the samples of [t0, t1), with its sign. */
static double peak_in(const double *x, double dt, double t0, double t1)
{
	double p = 0;

	for (size_t n = (size_t)(t0 / dt); n < (size_t)(t1 / dt); n++)
		if (fabs(x[n]) > fabs(p))
			p = x[n];
	return p;
}

/* The pulse that the far wall (x1) sends back to the receiver of a rigid duct. */
static double duct_echo(const char *scheme, const char *wall)
{
	char yaml[1024];
	struct sim *s;
	double echo;

	snprintf(yaml, sizeof(yaml),
		 "grid: {spacing: 0.02}\nscheme: {precision: float64%s}\nduration: 0.06\n"
		 "geometry: {box: [12.0, 0.2, 0.2]}\n"
		 "materials: {rigid: {admittance: 0}, w: %s}\nsurfaces: {default: rigid, x1: w}\n"
		 "sources: [{name: S, position: [2.0, 0.1, 0.1], signal: ricker, fc: 250}]\n"
		 "receivers: [{name: R, position: [5.0, 0.1, 0.1]}]\n", scheme, wall);
	s = sim_open(yaml);
	sim_run(s, 0, -1);
	/* source to x1 and back to the receiver: 17 m; the echo of x0 comes at 7 m */
	echo = peak_in(fdtd_receiver(s->engine, 0), s->dt, 15 / s->room->c, 19 / s->room->c);
	sim_close(s);
	return echo;
}

/*
 * Normal incidence on a locally reacting wall: a duct 0.2 m wide is one-dimensional below
 * 850 Hz, so a 250 Hz Ricker pulse is a plane wave at the receiver. Its echo off a wall of
 * reflection R over the echo off a rigid wall (same path, same dispersion) must be R, for the
 * 7-point walls and for the larger stencils' mirrored walls with the same loss term
 * (docs/physics.md, "Larger stencils").
 */
static void wall_reflection(void **state)
{
	static const char *const schemes[] = { "", ", stencil: leggy, order: 4",
					       ", stencil: compact, radius2: 3", ", stencil: fcc" };

	(void)state;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		const double rigid = duct_echo(schemes[i], "{admittance: 0}");
		const double r = duct_echo(schemes[i], "{reflection: 0.5}") / rigid;

		print_message("# %-30s reflection 0.5: measured %.4f\n",
			      schemes[i][0] ? schemes[i] + 2 : "7-point", r);
		assert_true(fabs(r - 0.5) < 0.01);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(direct_sound),
					    cmocka_unit_test(direct_sound_fcc),
					    cmocka_unit_test(wall_reflection) };

	return cmocka_run_group_tests_name("freefield", tests, NULL, NULL);
}
