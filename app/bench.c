/*
 * bench.c - `roomsim bench`: voxel updates per second of the engine next to the machine's
 * own streaming bandwidth, measured in the same run (docs/performance.md, "Method").
 */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "../solver/fdtd.h"

#define BENCH_RUNS 5			/* timed runs; the median is reported */
#define STREAM_BYTES (256u << 20)	/* per array: far beyond any CPU's last-level cache */
#define BENCH_ABSORPTION 0.1		/* absorbing walls, so boundary cells do their real work */

static const char usage_bench[] =
	"usage: roomsim bench [FILE.yaml] [--cells N] [--steps N] [--precision float32|float64]\n"
	"                     [--threads N]\n"
	"\n"
	"Measure the machine's streaming bandwidth (STREAM copy and add), then the engine's\n"
	"voxel updates per second: all grid cells x steps / time of the step loop, median of\n"
	"%d runs after a warm-up. Without FILE, a box of about N cells (default 1.6e7) with\n"
	"absorbing walls. The limit column is add bandwidth / bytes per update (12 in float32,\n"
	"24 in float64: read u^n and u^(n-1), write u^(n+1)).\n";

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A box room of about cells cells with every wall absorbing. */
static struct cfg_room *synthetic(double cells, int precision)
{
	struct cfg_room *r = calloc(1, sizeof(*r));
	double side = cbrt(cells);

	if (!r)
		return NULL;
	strcpy(r->name, "bench");
	strcpy(r->file, "(synthetic box)");
	r->c = 343;
	r->spacing = 0.05;
	r->courant = 1;
	r->precision = precision;
	r->order = 2;
	/* Proportions 1.5 : 1.2 : 0.55 of a hall, scaled to the requested cell count. */
	r->box[0] = 1.5 / cbrt(1.5 * 1.2 * 0.55) * side * r->spacing;
	r->box[1] = 1.2 / cbrt(1.5 * 1.2 * 0.55) * side * r->spacing;
	r->box[2] = 0.55 / cbrt(1.5 * 1.2 * 0.55) * side * r->spacing;
	r->nmaterials = 1;
	strcpy(r->materials[0].name, "wall");
	r->materials[0].absorption = BENCH_ABSORPTION;
	r->materials[0].beta = BENCH_ABSORPTION / 8;	/* Paris, small-beta limit */
	return r;
}

static double median_rate(struct fdtd *f, double cells, int steps, int runs)
{
	double rate[BENCH_RUNS];

	if (runs > BENCH_RUNS)
		runs = BENCH_RUNS;
	fdtd_advance(f, 2, NULL);	/* warm-up: first touch, thread start */
	for (int i = 0; i < runs; i++) {
		double t = app_now();

		fdtd_advance(f, steps, NULL);
		rate[i] = cells * steps / (app_now() - t);
	}
	qsort(rate, (size_t)runs, sizeof(double), cmp_double);
	return rate[runs / 2];
}

static double rate_of(const struct cfg_room *room, int threads, int steps, int runs,
		      double *air_fraction, double *cells)
{
	struct vox_grid *g = vox_build(room, NULL);
	struct fdtd_setup s = { g, room->courant / sqrt(3.0), room->precision, threads };
	struct fdtd *f = g ? fdtd_create(&s, NULL) : NULL;
	double rate = 0;

	if (f) {
		rate = median_rate(f, (double)g->plan.cells, steps, runs);
		if (air_fraction)
			*air_fraction = (double)g->plan.air / (double)g->plan.cells;
		if (cells)
			*cells = (double)g->plan.cells;
	}
	fdtd_destroy(f);
	vox_free(g);
	return rate;
}

double app_cpu_rate(int precision, int threads, double cells, int steps, int runs,
		    double *air_fraction)
{
	struct cfg_room *room = synthetic(cells, precision);
	double rate = room ? rate_of(room, threads, steps, runs, air_fraction, NULL) : 0;

	free(room);
	return rate;
}

/* Best-of-runs STREAM copy (c = a) and add (c = a + b) bandwidth in bytes/s. */
static int stream(int threads, double *copy, double *add)
{
	size_t n = STREAM_BYTES / sizeof(float);
	float *a = malloc(STREAM_BYTES), *b = malloc(STREAM_BYTES), *c = malloc(STREAM_BYTES);
	int nt = threads > 0 ? threads : omp_get_max_threads();

	*copy = *add = 0;
	if (!a || !b || !c) {
		free(a);
		free(b);
		free(c);
		return RS_ENOMEM;
	}
#pragma omp parallel for schedule(static) num_threads(nt)
	for (size_t i = 0; i < n; i++) {
		a[i] = 1.0f;
		b[i] = 2.0f;
		c[i] = 0.0f;
	}
	for (int r = 0; r < BENCH_RUNS; r++) {
		double t = app_now();

#pragma omp parallel for schedule(static) num_threads(nt)
		for (size_t i = 0; i < n; i++)
			c[i] = a[i];
		t = app_now() - t;
		*copy = fmax(*copy, 2.0 * STREAM_BYTES / t);
		t = app_now();
#pragma omp parallel for schedule(static) num_threads(nt)
		for (size_t i = 0; i < n; i++)
			c[i] = a[i] + b[i];
		t = app_now() - t;
		*add = fmax(*add, 3.0 * STREAM_BYTES / t);
	}
	free(a);
	free(b);
	free(c);
	return 0;
}

struct bench_opts {
	const char *file;
	double cells;
	int steps, precision, threads;
};

static int parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "cells", required_argument, NULL, 'c' },
		{ "steps", required_argument, NULL, 's' },
		{ "precision", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct bench_opts){ NULL, 1.6e7, 20, 4, 0 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:s:p:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if ((o->cells = atof(optarg)) < 1000 || o->cells > 1e12)
				return fprintf(stderr, "roomsim: --cells: valid: 1000 to 1e12\n"), -1;
			break;
		case 's':
			if ((o->steps = atoi(optarg)) < 1)
				return fprintf(stderr, "roomsim: --steps: valid: 1 or more\n"), -1;
			break;
		case 'p':
			if (strcmp(optarg, "float32") && strcmp(optarg, "float64"))
				return fprintf(stderr, "roomsim: --precision: valid: float32 | "
					       "float64\n"), -1;
			o->precision = strcmp(optarg, "float32") ? 8 : 4;
			break;
		case 't':
			if ((o->threads = atoi(optarg)) < 1)
				return fprintf(stderr, "roomsim: --threads: valid: 1 or more\n"), -1;
			break;
		case 'h':
			printf(usage_bench, BENCH_RUNS);
			exit(EXIT_OK);
		default:
			return fprintf(stderr, "roomsim: see 'roomsim bench --help'\n"), -1;
		}
	}
	if (optind < argc - 1)
		return fprintf(stderr, "roomsim: at most one room file\n"), -1;
	o->file = optind == argc - 1 ? argv[optind] : NULL;
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o;
	struct rs_error err = { 0 };
	struct cfg_room *room;
	double copy, add, rate, air = 0, bytes, cells = 0;

	if (parse(argc, argv, &o))
		return EXIT_USAGE;
	room = o.file ? cfg_load(o.file, &err) : synthetic(o.cells, o.precision);
	if (!room) {
		fprintf(stderr, "roomsim: %s\n", o.file ? err.msg : "out of memory");
		return app_exit_status(o.file ? err.code : RS_ENOMEM);
	}
	room->precision = o.file ? room->precision : o.precision;
	bytes = 3.0 * room->precision;
	if (stream(o.threads, &copy, &add)) {
		fprintf(stderr, "roomsim: out of memory for the bandwidth test\n");
		cfg_free(room);
		return EXIT_RUNTIME;
	}
	printf("bandwidth  copy %.2f GB/s, add (read 2, write 1) %.2f GB/s: limit %.3f Gvox/s "
	       "at %.0f bytes per update\n", copy / 1e9, add / 1e9, add / bytes / 1e9, bytes);
	rate = rate_of(room, o.threads, o.steps, BENCH_RUNS, &air, &cells);
	if (rate <= 0) {
		fprintf(stderr, "roomsim: cannot allocate the benchmark grid\n");
		cfg_free(room);
		return EXIT_RUNTIME;
	}
	printf("%-8s %-8s %12s %6s %12s %12s %10s %8s\n", "engine", "prec", "cells", "steps",
	       "Gvox/s", "Gvox/s air", "GB/s eff", "% limit");
	printf("%-8s %-8s %12.0f %6d %12.3f %12.3f %10.2f %7.1f%%\n", "cpu",
	       room->precision == 4 ? "float32" : "float64", cells, o.steps,
	       rate / 1e9, rate * air / 1e9, rate * bytes / 1e9, 100 * rate * bytes / add);
	cfg_free(room);
	return EXIT_OK;
}
