/*
 * test_stencil - the stencil families and the analysis of their schemes (docs/stencils.md):
 * Fornberg weights, point counts of the families, Courant limits with closed forms, the
 * 7-point dispersion relation, the mean error over directions and the spacing that matches the
 * 7-point scheme's across the band, and plane waves on a periodic grid oscillating at the
 * frequency the symbol predicts, for every family.
 */
#include "helper.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/stencil.h"

static struct stn_stencil st;	/* large */

static void leggy_weights(void **state)
{
	/* The 1-D second-derivative weights c0, c1 of orders 2, 4, 6, 8 (Fornberg 1988). */
	static const double c0[] = { -2, -5.0 / 2, -49.0 / 18, -205.0 / 72 };
	static const double c1[] = { 1, 4.0 / 3, 3.0 / 2, 8.0 / 5 };

	(void)state;
	for (int M = 1; M <= 4; M++) {
		double sum = 0;

		assert_int_equal(stn_leggy(&st, M), 0);
		assert_int_equal(st.K, 6 * M + 1);
		assert_int_equal(st.reach, M);
		/* rounded to the stencil's quantum q <= 2^-23 (each by at most q / 2) so that
		 * they sum to exactly 0: the centre, minus the others' sum, by at most K q / 2 */
		assert_true(fabs(st.w[0] - 3 * c0[M - 1]) < st.K * ldexp(1, -24));
		assert_true(fabs(st.w[1] - c1[M - 1]) < 1e-7);
		for (int k = 0; k < st.K; k++)
			sum += st.w[k];
		assert_true(sum == 0);
	}
	assert_int_equal(stn_leggy(&st, 8), 0);
	assert_int_equal(st.K, 49);
	assert_int_not_equal(stn_leggy(&st, 9), 0);
}

static void family_sizes(void **state)
{
	static const int R[] = { 1, 2, 3, 22 }, K[] = { 7, 19, 27, 461 };
	const int q[3] = { 2, 2, 2 };
	struct stn_shell sh[STN_MAX_SHELLS];
	int n;

	(void)state;
	for (int i = 0; i < 4; i++) {
		n = stn_compact_shells(R[i], sh, STN_MAX_SHELLS);
		assert_true(n > 0);
		assert_int_equal(stn_from_shells(&st, sh, n, NULL, "compact"), 0);
		assert_int_equal(st.K, K[i]);
	}
	assert_int_equal(stn_compact_shells(7, sh, STN_MAX_SHELLS), -1);	/* not 3 squares */
	n = stn_box_shells(q, sh, STN_MAX_SHELLS);
	assert_int_equal(stn_from_shells(&st, sh, n, NULL, "box"), 0);
	assert_int_equal(st.K, 125);
}

static void courant_limits(void **state)
{
	(void)state;
	stn_leggy(&st, 1);
	assert_true(fabs(stn_courant_limit(&st) - 1 / sqrt(3.0)) < 1e-9);
	/* leggy order 4: max -W = 3 (5/2 + 8/3 + 1/6) = 16 at xi = (pi, pi, pi): lambda <= 1/2 */
	stn_leggy(&st, 2);
	assert_true(fabs(stn_courant_limit(&st) - 0.5) < 1e-7);	/* the weights' quantum */
	/* the 7-point scheme needs 10.5 points per wavelength for 1 % (roomsim's default ppw) */
	stn_leggy(&st, 1);
	print_message("# 7-point ppw for 1 %%: %.3f\n", stn_ppw_for(&st, 1 / sqrt(3.0), 0.01));
	assert_true(fabs(stn_ppw_for(&st, 1 / sqrt(3.0), 0.01) - 10.5) < 0.1);
}

/* The named 27-point schemes: their computed limits are their published Courant numbers. */
static void interpolated_variants(void **state)
{
	static const int points[] = { 7, 7, 13, 9, 27, 19, 27, 27 };

	(void)state;
	for (int v = 0; stn_variant_names[v]; v++) {
		double limit;

		assert_int_equal(stn_interpolated(&st, v), 0);
		limit = stn_courant_limit(&st);
		print_message("# %-30s limit %.6f, published %.6f\n", st.name, limit, st.courant);
		assert_int_equal(st.K, points[v]);
		if (!strcmp(stn_variant_names[v], "IDWM"))	/* published below its limit */
			assert_true(limit > st.courant);
		else
			assert_true(fabs(limit - st.courant) < 1e-7);	/* the weights' quantum */
	}
	assert_int_equal(stn_interpolated(&st, 99), -1);
}

/*
 * The fcc scheme: the twelve side diagonals at 1/4 each (the FCC lattice's neighbours, which
 * keep i + j + k even), Courant limit 1, the folded engines' flag.
 */
static void fcc_stencil(void **state)
{
	double sum = 0;

	(void)state;
	assert_int_equal(stn_fcc(&st), 0);
	assert_int_equal(st.fcc, 1);
	assert_int_equal(st.K, 13);
	assert_int_equal(st.reach, 1);
	for (int q = 1; q < st.K; q++) {
		const int *o = st.off[q];

		assert_int_equal(abs(o[0]) + abs(o[1]) + abs(o[2]), 2);
		assert_int_equal((o[0] + o[1] + o[2]) % 2, 0);
		assert_true(fabs(st.w[q] - 0.25) < 1e-15);
		sum += st.w[q];
	}
	assert_true(fabs(sum + st.w[0]) < 1e-14);	/* a Laplacian: the row sums to 0 */
	assert_true(fabs(stn_courant_limit(&st) - 1) < 1e-9);
	print_message("# fcc ppw for 1 %%: %.3f\n", stn_ppw_for(&st, 1, 0.01));
	assert_true(fabs(stn_ppw_for(&st, 1, 0.01) - 7.65) < 0.05);
}

/* ppw^4 / lambda for 1 % worst-case error at the limit: what the default weights minimise. */
static double work_at_limit(const struct stn_stencil *s)
{
	const double limit = stn_courant_limit(s), ppw = stn_ppw_for(s, limit, 0.01);

	assert_true(limit > 0);
	return ppw * ppw * ppw * ppw / limit;
}

/* The default (fitted) shell weights are stable, sum to 1 and do less work than equal ones. */
static void default_weights(void **state)
{
	static const int radii[] = { 2, 3, 4, 5, 6, 9 };
	struct stn_shell sh[STN_MAX_SHELLS];
	double a[STN_MAX_SHELLS];

	(void)state;
	for (size_t r = 0; r < sizeof(radii) / sizeof(radii[0]); r++) {
		const int n = stn_compact_shells(radii[r], sh, STN_MAX_SHELLS);
		double sum = 0, fitted, equal;

		assert_int_equal(stn_default_weights(sh, n, a), 1);
		for (int p = 0; p < n; p++)
			sum += a[p];
		assert_true(fabs(sum - 1) < 1e-12);
		assert_int_equal(stn_from_shells(&st, sh, n, a, "fit"), 0);
		fitted = work_at_limit(&st);
		assert_int_equal(stn_from_shells(&st, sh, n, NULL, "equal"), 0);
		equal = work_at_limit(&st);
		print_message("# compact R = %-2d work (ppw^4 / lambda for 1 %%): fitted %.0f, "
			      "equal %.0f\n", radii[r], fitted, equal);
		assert_true(fitted < equal);
	}
}

static void unstable_weights_refused(void **state)
{
	struct stn_shell sh[STN_MAX_SHELLS];
	int n = stn_compact_shells(2, sh, STN_MAX_SHELLS);
	/* sums to 1, but W(pi, pi, pi) = -(-12) + 2 * 0 = 12 > 0: growth for every lambda */
	const double a[2] = { -1, 2 };

	(void)state;
	assert_int_equal(stn_from_shells(&st, sh, n, a, "compact"), 0);
	assert_true(stn_courant_limit(&st) == 0);
}

static void seven_point_dispersion(void **state)
{
	const double lambda = 0.999 / sqrt(3.0);

	(void)state;
	stn_leggy(&st, 1);
	for (double ppw = 3; ppw < 60; ppw *= 1.3) {
		/* axial: sin(omega k / 2) = lambda sin(kappa h / 2) */
		const double kh = 2 * M_PI / ppw;
		const double exact = 2 * asin(lambda * sin(kh / 2)) / (lambda * kh) - 1;

		assert_true(fabs(stn_phase_error(&st, lambda, STN_AXIAL, ppw) - exact) < 1e-12);
	}
}

/*
 * The mean error over directions, against its small-kh limits: for the 7-point scheme at its
 * limit e = (kh)^2 / 24 (1/3 - sum n_i^4), whose mean over the sphere is -(kh)^2 / 90 and
 * whose worst (axial) is -(kh)^2 / 36, 0.4 of it; for a stencil of order 4 only the time
 * step's error is left, lambda^2 (kh)^2 / 24 in every direction. Matching the 7-point
 * scheme's mean error at every frequency then needs sqrt(90 / 96) of its points per
 * wavelength from leggy order 4 at lambda = 1/2, and the 7-point scheme matches itself.
 */
static void mean_error_and_matching(void **state)
{
	static struct stn_stencil seven;
	const double kh = 2 * M_PI / 50, l7 = 1 / sqrt(3.0);
	double p7, pm, mean;

	(void)state;
	stn_leggy(&seven, 1);
	mean = stn_mean_error(&seven, l7, 50);
	assert_true(fabs(mean / (kh * kh / 90) - 1) < 0.01);
	assert_true(fabs(mean / stn_worst_error(&seven, l7, 50) - 0.4) < 0.004);
	stn_leggy(&st, 2);
	mean = stn_mean_error(&st, 0.5, 50);
	assert_true(fabs(mean / (0.25 * kh * kh / 24) - 1) < 0.01);
	assert_true(mean / stn_worst_error(&st, 0.5, 50) > 0.97);
	p7 = stn_ppw_for(&seven, l7, 0.01);
	assert_true(fabs(stn_ppw_matching(&seven, l7, &seven, l7, p7) / p7 - 1) < 1e-6);
	pm = stn_ppw_matching(&st, 0.5, &seven, l7, p7);
	assert_true(fabs(pm / (p7 * sqrt(90 / 96.0)) - 1) < 0.01);
	/* at its own 1 % worst case, a third fewer points, it is further off at low frequencies */
	assert_true(pm > 1.5 * stn_ppw_for(&st, 0.5, 0.01));
}

/*
 * cos(xi . x) is an eigenvector of every stencil on a periodic grid, so the scheme makes it
 * oscillate at exactly the frequency of cos(omega k) = 1 + lambda^2 W(xi) / 2. Run it with
 * the stencil applied point by point and measure the frequency from the time series.
 */
static double measured_error(const struct stn_stencil *s, double lambda, const int m[3], int N)
{
	const size_t cells = (size_t)N * N * N;
	double *u = malloc(cells * sizeof(double)), *v = malloc(cells * sizeof(double));
	const double xi[3] = { 2 * M_PI * m[0] / N, 2 * M_PI * m[1] / N, 2 * M_PI * m[2] / N };
	const int steps = 400;
	double prev2 = 0, prev = 0, cosw = 0, kh;
	int samples = 0;

	assert_non_null(u);
	assert_non_null(v);
	for (int k = 0; k < N; k++)	/* u = u^0, v = u^-1: a standing wave at rest */
		for (int j = 0; j < N; j++)
			for (int i = 0; i < N; i++)
				u[i + N * (j + N * k)] = v[i + N * (j + N * k)] =
					cos(xi[0] * i + xi[1] * j + xi[2] * k);
	for (int n = 0; n < steps; n++) {
		for (int k = 0; k < N; k++)
			for (int j = 0; j < N; j++)
				for (int i = 0; i < N; i++) {
					double w = 0;

					for (int p = 0; p < s->K; p++) {
						const int a = (i + s->off[p][0] + N) % N,
							  b = (j + s->off[p][1] + N) % N,
							  c = (k + s->off[p][2] + N) % N;

						w += s->w[p] * u[a + N * (b + N * c)];
					}
					v[i + N * (j + N * k)] = 2 * u[i + N * (j + N * k)] -
								 v[i + N * (j + N * k)] + lambda * lambda * w;
				}
		double *t = u;

		u = v;
		v = t;
		/* u^(n+1) + u^(n-1) = 2 cos(omega k) u^n at the origin: average the estimate */
		if (n >= 1 && fabs(prev) > 0.2) {
			cosw += (u[0] + prev2) / (2 * prev);
			samples++;
		}
		prev2 = prev;
		prev = u[0];
		if (n == 0)
			prev2 = 1;	/* u^0 at the origin */
	}
	free(u);
	free(v);
	assert_true(samples > 10);
	cosw /= samples;
	kh = sqrt(xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]);
	return acos(cosw) / (lambda * kh) - 1;
}

static void plane_waves_on_a_periodic_grid(void **state)
{
	struct stn_shell sh[STN_MAX_SHELLS];
	const int q[3] = { 2, 1, 1 }, N = 16;
	const int dirs[3][3] = { { 2, 0, 0 }, { 2, 2, 0 }, { 1, 1, 1 } };

	(void)state;
	for (int fam = 0; fam < 7; fam++) {
		int n;

		if (fam >= 4)	/* IWB, IISO, CCP */
			stn_interpolated(&st, fam == 4 ? 4 : fam == 5 ? 5 : 2);
		else if (fam == 0)
			stn_leggy(&st, 1);
		else if (fam == 1)
			stn_leggy(&st, 3);
		else if (fam == 2)
			n = stn_compact_shells(3, sh, STN_MAX_SHELLS),
			stn_from_shells(&st, sh, n, NULL, "compact");
		else
			n = stn_box_shells(q, sh, STN_MAX_SHELLS), stn_from_shells(&st, sh, n, NULL, "box");
		const double lambda = 0.9 * stn_courant_limit(&st);

		for (int d = 0; d < 3; d++) {
			const double kh = 2 * M_PI / N * sqrt((double)(dirs[d][0] * dirs[d][0] +
								      dirs[d][1] * dirs[d][1] +
								      dirs[d][2] * dirs[d][2]));
			const double xi[3] = { 2 * M_PI * dirs[d][0] / N, 2 * M_PI * dirs[d][1] / N,
					       2 * M_PI * dirs[d][2] / N };
			const double predicted = acos(1 + 0.5 * lambda * lambda * stn_symbol(&st, xi)) /
							 (lambda * kh) - 1;
			const double got = measured_error(&st, lambda, dirs[d], N);

			print_message("# %-28s dir %d: phase velocity error %+.6f, predicted %+.6f\n",
				      st.name, d, got, predicted);
			assert_true(fabs((1 + got) / (1 + predicted) - 1) < 1e-3);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leggy_weights),	   cmocka_unit_test(family_sizes),
		cmocka_unit_test(courant_limits),	   cmocka_unit_test(interpolated_variants),
		cmocka_unit_test(fcc_stencil),
		cmocka_unit_test(default_weights),
		cmocka_unit_test(unstable_weights_refused),
		cmocka_unit_test(seven_point_dispersion), cmocka_unit_test(mean_error_and_matching),
		cmocka_unit_test(plane_waves_on_a_periodic_grid),
	};

	return cmocka_run_group_tests_name("stencil", tests, NULL, NULL);
}
