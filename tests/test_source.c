/*
 * test_source - a closed rigid room's response does not drift: the default source
 * high-pass injects no net volume (docs/physics.md, "Sources"). Without it, the mean
 * pressure grows linearly, as physics demands; the test checks both, so it can fail.
 */
#include "helper.h"

#include <math.h>

#define ROOM(hp) \
	"grid: {spacing: 0.05}\n" \
	"scheme: {precision: float64}\n" \
	"duration: 1.0\n" \
	"geometry: {box: [1.2, 1.0, 0.8]}\n" \
	"sources: [{name: S, position: [0.3, 0.3, 0.3], highpass: " hp "}]\n" \
	"receivers: [{name: R, position: [0.9, 0.7, 0.5]}]\n"

/* Mean of samples [from, to). */
static double mean(const double *x, size_t from, size_t to)
{
	double s = 0;

	for (size_t i = from; i < to; i++)
		s += x[i];
	return s / (double)(to - from);
}

static void no_dc_growth_with_highpass(void **state)
{
	struct sim *s = sim_open(ROOM("10"));
	size_t n = (size_t)s->steps + 1, tenth = n / 10;
	const double *y;
	double peak, late;

	(void)state;
	sim_run(s, 0, -1);
	y = fdtd_receiver(s->engine, 0);
	peak = fabs(y[peak_index(y, 0, n)]);
	late = mean(y, n - 3 * tenth, n);
	print_message("# mean over the last 0.3 s: %.3e of the peak\n", late / peak);
	assert_true(fabs(late) < 1e-3 * peak);
	sim_close(s);
}

static void dc_grows_without_highpass(void **state)
{
	struct sim *s = sim_open(ROOM("0"));
	size_t n = (size_t)s->steps + 1, tenth = n / 10;
	const double *y;
	double mid, late;

	(void)state;
	sim_run(s, 0, -1);
	y = fdtd_receiver(s->engine, 0);
	mid = mean(y, 4 * tenth, 5 * tenth);
	late = mean(y, 9 * tenth, n);
	print_message("# raw impulse: mean %.4g at 0.45 s, %.4g at 0.95 s\n", mid, late);
	/* linear growth: the mean near 0.95 s is about 0.95/0.45 of the mean near 0.45 s */
	assert_true(late > 0 && fabs(late / mid - 0.95 / 0.45) < 0.1);
	sim_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_dc_growth_with_highpass),
		cmocka_unit_test(dc_grows_without_highpass),
	};

	return cmocka_run_group_tests_name("source", tests, NULL, NULL);
}
