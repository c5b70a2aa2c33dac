/*
 * test_grids - receiver grids: the lattice of a plane grid and of grids over the floor and
 * over a mesh's named surface, clipped to the air; the engine's grid samples equal the named
 * receivers' at the same points, rounded to float, whatever the scheme, precision and window;
 * a window that would overrun is refused.
 */
#include "helper.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../geometry/receivers.h"

/* The points of room grid i over s's voxel grid. */
static void points(struct sim *s, int i, struct grid_points *p)
{
	struct rs_error err = { 0 };

	if (grid_points_make(s->room, &s->room->grids[i], s->grid, NULL, 0, p, &err))
		fail_msg("%s", err.msg);
}

static void plane_lattice(void **state)
{
	struct sim *s = sim_open("grid: {spacing: 0.1}\n"
				 "duration: 0.01\n"
				 "geometry: {box: [3.0, 2.0, 2.5]}\n"
				 "sources: [{name: S, position: [1.0, 1.0, 1.0]}]\n"
				 "receivers:\n"
				 "  - {name: all, grid: {at: 1.2, spacing: 0.5}}\n"
				 "  - {name: part, grid: {plane: x, at: 1.5, spacing: 0.25,"
				 " from: [0.5, 0.5], to: [1.5, 2.0]}}\n");
	struct grid_points p;

	(void)state;
	points(s, 0, &p);
	/* 0..3 by 0..2 at 0.5 m: 7 x 5 lattice points, the outer ring on the walls dropped */
	assert_int_equal(p.dims[0], 7);
	assert_int_equal(p.dims[1], 5);
	assert_int_equal(p.n, 5 * 3);
	for (size_t q = 0; q < p.n; q++) {
		assert_true(p.pos[q][0] > 0.4 && p.pos[q][0] < 2.6);
		assert_true(fabs(p.pos[q][2] - 1.2) < 1e-12);
		assert_true(fabs(p.pos[q][0] - (p.first[0] + p.ij[q][0] * 0.5)) < 1e-12);
		assert_true(fabs(p.pos[q][1] - (p.first[1] + p.ij[q][1] * 0.5)) < 1e-12);
	}
	grid_points_free(&p);
	points(s, 1, &p);
	/* y 0.5..1.5 and z 0.5..2.0 at 0.25 m: 5 x 7, all in the air */
	assert_int_equal(p.axes[0], 1);
	assert_int_equal(p.axes[1], 2);
	assert_int_equal(p.n, 35);
	assert_true(fabs(p.pos[34][1] - 1.5) < 1e-12 && fabs(p.pos[34][2] - 2.0) < 1e-12);
	grid_points_free(&p);
	sim_close(s);
}

/* Over the floor of a room with a raised stage: the points stand on the stage there. */
static void over_floor(void **state)
{
	struct sim *s = sim_open("grid: {spacing: 0.1}\n"
				 "duration: 0.01\n"
				 "geometry:\n"
				 "  box: [4.0, 3.0, 3.0]\n"
				 "  shapes: [{remove: box, min: [0, 0, 0], max: [1.5, 3, 0.8]}]\n"
				 "sources: [{name: S, position: [3.0, 1.0, 1.5]}]\n"
				 "receivers: [{name: seats, grid: {over: floor, height: 1.2,"
				 " spacing: 0.5}}]\n");
	struct grid_points p;
	int stage = 0, floor = 0;

	(void)state;
	points(s, 0, &p);
	for (size_t q = 0; q < p.n; q++) {
		const double want = p.pos[q][0] < 1.5 ? 0.8 + 1.2 : 1.2;

		/* the floor as the grid has it: within half a cell of the surface */
		assert_true(fabs(p.pos[q][2] - want) <= 0.05 + 1e-9);
		stage += p.pos[q][0] < 1.5;
		floor += p.pos[q][0] > 1.5;
	}
	assert_true(stage >= 4 && floor >= 8);
	grid_points_free(&p);
	sim_close(s);
}

/* Over a mesh's raked floor: a room whose floor rises 1 m over its 4 m length. */
static void over_mesh_surface(void **state)
{
	char obj[] = "/tmp/roomsim-test-grid-XXXXXX.obj", yaml[1024];
	static const double v[8][3] = {
		{ 0, 0, 0 }, { 4, 0, 1 }, { 4, 3, 1 }, { 0, 3, 0 },
		{ 0, 0, 3 }, { 4, 0, 3 }, { 4, 3, 3 }, { 0, 3, 3 },
	};
	int fd = mkstemps(obj, 4);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct grid_points p;
	struct sim *s;

	(void)state;
	assert_non_null(f);
	for (int i = 0; i < 8; i++)
		fprintf(f, "v %g %g %g\n", v[i][0], v[i][1], v[i][2]);
	/* faces wound outwards; the floor is the group Seats */
	fprintf(f, "g Seats\nf 1 3 2\nf 1 4 3\ng Walls\nf 5 6 7\nf 5 7 8\n"
		   "f 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n");
	fclose(f);
	snprintf(yaml, sizeof(yaml), "grid: {spacing: 0.1}\nduration: 0.01\n"
		 "geometry: {mesh: %s}\n"
		 "sources: [{name: S, position: [2.0, 1.5, 2.5]}]\n"
		 "receivers: [{name: seats, grid: {over: Seats, height: 1.2, spacing: 0.5}}]\n",
		 obj);
	s = sim_open(yaml);
	points(s, 0, &p);
	/* 0..4 by 0..3 at 0.5 m; on the walls' lines the points fall outside the air */
	assert_int_equal(p.dims[0], 9);
	assert_int_equal(p.dims[1], 7);
	assert_true(p.n >= 7 * 5);
	for (size_t q = 0; q < p.n; q++)
		assert_true(fabs(p.pos[q][2] - (p.pos[q][0] / 4 + 1.2)) < 1e-9);
	grid_points_free(&p);
	sim_close(s);
	remove(obj);
}

/*
 * Named receivers at every point of a grid, and the grid itself on the same engine: each grid
 * sample is the named receiver's sample rounded to float, taken window by window.
 */
static void grid_equals_receivers(const char *scheme, const char *precision)
{
	char yaml[2048];
	size_t len;
	struct sim *s;
	struct grid_points p;
	const long window = 37;	/* not a divisor of the steps: the last take is short */
	float *buf;
	long first = 0, got = 0;

	len = (size_t)snprintf(yaml, sizeof(yaml), "grid: {spacing: 0.08}\nduration: 0.05\n"
			       "scheme: {%s, precision: %s}\n"
			       "geometry: {box: [1.6, 1.2, 1.0]}\n"
			       "materials: {wall: {absorption: 0.3}}\nsurfaces: {default: wall}\n"
			       "sources: [{name: S, position: [0.41, 0.37, 0.33]}]\n"
			       "receivers:\n  - {name: g, grid: {at: 0.55, spacing: 0.3}}\n",
			       scheme, precision);
	s = sim_open(yaml);
	points(s, 0, &p);
	assert_true(p.n >= 6);
	for (size_t q = 0; q < p.n; q++)
		assert_true(fdtd_add_receiver(s->engine, p.pos[q]) == (int)q);
	assert_int_equal(fdtd_reserve(s->engine, (size_t)s->steps + 1), 0);
	assert_int_equal(fdtd_grid_set(s->engine, p.pos[0], p.n, (size_t)window), 0);
	buf = malloc((size_t)window * p.n * sizeof(float));
	assert_non_null(buf);
	assert_true(len < sizeof(yaml));
	fdtd_reset(s->engine);
	assert_true(fdtd_add_source(s->engine, s->room->sources[0].pos, (double[]){ 1.0 }, 1) == 0);
	while (fdtd_steps(s->engine) < s->steps) {
		const long n = s->steps - fdtd_steps(s->engine) < window
				       ? s->steps - fdtd_steps(s->engine) : window;
		long count;

		assert_int_equal(fdtd_advance(s->engine, n, NULL), 0);
		if (n == window)	/* the window is full: one step more is refused */
			assert_int_equal(fdtd_advance(s->engine, 1, NULL), RS_EINTERNAL);
		count = fdtd_grid_take(s->engine, buf, &first);
		assert_true(count == fdtd_steps(s->engine) - got);
		assert_int_equal(first, got + 1);
		for (long t = 0; t < count; t++)
			for (size_t q = 0; q < p.n; q++) {
				const double y = fdtd_receiver(s->engine, (int)q)[first + t];

				if (buf[(size_t)t * p.n + q] != (float)y)
					fail_msg("%s %s: point %zu, sample %ld: %.9g, not %.9g", scheme,
						 precision, q, first + t, buf[(size_t)t * p.n + q], y);
			}
		got += count;
	}
	assert_int_equal(got, s->steps);
	free(buf);
	grid_points_free(&p);
	sim_close(s);
}

static void samples_equal_receivers(void **state)
{
	(void)state;
	grid_equals_receivers("stencil: leggy", "float32");
	grid_equals_receivers("stencil: leggy", "float64");
	grid_equals_receivers("stencil: leggy, order: 4", "float32");
	grid_equals_receivers("stencil: fcc", "float64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plane_lattice),
		cmocka_unit_test(over_floor),
		cmocka_unit_test(over_mesh_surface),
		cmocka_unit_test(samples_equal_receivers),
	};

	return cmocka_run_group_tests_name("grids", tests, NULL, NULL);
}
