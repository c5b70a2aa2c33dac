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
#ifdef ROOMSIM_CUDA
#include "../solver/cuda/fdtd_cuda.h"
#endif

#define BENCH_RUNS 5			/* timed runs; the median is reported */
#define STREAM_BYTES (256u << 20)	/* per array: far beyond any CPU's last-level cache */
#define BENCH_ABSORPTION 0.1		/* absorbing walls, so boundary cells do their real work */
#define CPU_CELLS 1.6e7			/* default box: big enough to leave a CPU's caches */
#define GPU_CELLS 5e8			/* default box on a GPU: the issue's ~5 x 10^8 cells */

static const char usage_bench[] =
	"usage: roomsim bench [FILE.yaml] [--backend cpu|cuda|auto] [--kernel NAME|all]\n"
	"                     [--cells N] [--steps N] [--precision float32|float64] [--threads N]\n"
	"                     [--padding F] [--block XxY] [--dts LIST] [--nt LIST] [--split LIST]\n"
	"                     [--band-walls]\n"
	"\n"
	"Measure the streaming bandwidth (copy and add: read 2, write 1) of the CPU or GPU,\n"
	"then the engine's voxel updates per second: all grid cells x steps / time of the step\n"
	"loop (CUDA events on the GPU), median of %d runs after a warm-up; on the GPU one row\n"
	"per kernel (default all) with its registers and shared memory. Without FILE, a box of\n"
	"about N cells (default 1.6e7 on the CPU, 5e8 on the GPU) with absorbing walls. The\n"
	"limit is add bandwidth / bytes per update (12 in float32, 24 in float64). --padding F\n"
	"lowers the ceiling over most of the box so that a fraction F of it is padding.\n"
	"--band-walls gives the box's walls absorption in 8 octave bands (63 Hz to 8 kHz, all\n"
	"fitted): the engines then also update the walls' branches (solver/branch.h).\n"
	"--dts, --nt and --split (comma-separated lists) time the diamond kernel at each tile\n"
	"size, tower height and number of blocks a tower is split over in z, with steps rounded\n"
	"up to whole towers, each next to the prediction of seed 002's locality model\n"
	"(docs/performance.md, \"DiamondTorre\").\n";

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A box room of about cells cells with every wall absorbing. */
static struct room *synthetic(double cells, int precision)
{
	struct room *r = calloc(1, sizeof(*r));
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

/* The synthetic box's walls in 8 octave bands (a hall's mix of surfaces), all fitted. */
static void band_walls(struct room *r)
{
	static const double f[8] = { 63, 125, 250, 500, 1000, 2000, 4000, 8000 };
	static const double alpha[8] = { 0.08, 0.1, 0.14, 0.2, 0.26, 0.3, 0.32, 0.34 };
	struct room_material *m = &r->materials[0];

	m->nbands = 8;
	m->third = 0;
	for (int b = 0; b < 8; b++) {
		m->band_f[b] = f[b];
		m->band_alpha[b] = alpha[b];
	}
	m->beta = 0;
	r->fmax = 1e4;		/* the fit's: every band */
}

/*
 * Lower the ceiling over the first 80 % of the room's length so that `frac` of the room
 * becomes padding: per-column start/stop heights then skip it (seed 003 section 4.3.3).
 */
static int pad_room(struct vox_grid *g, const struct room *room, double frac)
{
	const double lo[3] = { -1, -1, room->box[2] * (1 - frac / 0.8) };
	const double hi[3] = { 0.8 * room->box[0], room->box[1] + 1, room->box[2] + 1 };

	return frac > 0 ? vox_carve(g, room, lo, hi, 0, NULL) : 0;
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

static double rate_of(const struct room *room, int threads, int steps, int runs,
		      double padding, double *air_fraction, double *cells)
{
	static struct stn_stencil st;	/* large: not on the stack */
	struct vox_grid *g = stn_from_config(room, &st) ? NULL : vox_build(room, NULL);

	if (g && pad_room(g, room, padding)) {
		vox_free(g);
		g = NULL;
	}
	struct wall_banks *banks = NULL;
	struct fdtd_setup s = { .grid = g, .stencil = &st,
				.lambda = room->courant * stn_courant_limit(&st),
				.precision = room->precision, .threads = threads };
	struct fdtd *f = NULL;
	double rate = 0;

	if (g && !wall_banks_of(room, &banks)) {
		s.banks = banks->bank;
		s.nbanks = room->nmaterials;
		s.dt = s.lambda * room->spacing / room->c;
		f = fdtd_create(&s, NULL);
	}
	free(banks);

	if (f) {
		rate = median_rate(f, (double)vox_nodes(&g->plan), steps, runs);
		if (air_fraction)
			*air_fraction = (double)g->plan.air / (double)vox_nodes(&g->plan);
		if (cells)
			*cells = (double)vox_nodes(&g->plan);
	}
	fdtd_destroy(f);
	vox_free(g);
	return rate;
}

double app_cpu_rate(int precision, int threads, double cells, int steps, int runs,
		    double *air_fraction)
{
	struct room *room = synthetic(cells, precision);
	double rate = room ? rate_of(room, threads, steps, runs, 0, air_fraction, NULL) : 0;

	free(room);
	return rate;
}

/* 1 when a material of room has frequency-dependent walls (bands or branches). */
static int has_bands(const struct room *room)
{
	for (int m = 0; m < room->nmaterials; m++)
		if (room_material_banded(&room->materials[m]))
			return 1;
	return 0;
}

/* The synthetic box of about cells cells with room's scheme, precision and kind of walls (a
 * hall's 8 octave bands when any of room's materials is given by band). */
static struct room *synthetic_of(const struct room *room, double cells)
{
	struct room *r = synthetic(cells, room->precision);

	if (!r)
		return NULL;
	r->stencil = room->stencil;
	r->order = room->order;
	r->radius2 = room->radius2;
	memcpy(r->boxq, room->boxq, sizeof(r->boxq));
	memcpy(r->weights, room->weights, sizeof(r->weights));
	r->nweights = room->nweights;
	r->variant = room->variant;
	r->courant = room->courant;
	if (has_bands(room))
		band_walls(r);
	return r;
}

/* The cache file's path into buf; 0, or -1 without a home. */
static int cache_path(char *buf, size_t len, int dir_only)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (x && *x)
		snprintf(buf, len, "%s/roomsim%s", x, dir_only ? "" : "/gpu-rates");
	else if (home && *home)
		snprintf(buf, len, "%s/.cache/roomsim%s", home, dir_only ? "" : "/gpu-rates");
	else
		return -1;
	return 0;
}

/* The cached rate of key, and the kernel that ran it (len bytes); 1 when found. */
static int cache_get(const char *key, char *kernel, size_t len, double *rate)
{
	char path[4200], line[1024];
	int found = 0;
	FILE *f;

	if (cache_path(path, sizeof(path), 0) || !(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {	/* KEY|kernel|rate; the last one counts */
		char *bar = strrchr(line, '|'), *k2;

		if (!bar || strncmp(line, key, strlen(key)) || line[strlen(key)] != '|')
			continue;
		*bar = 0;
		k2 = strrchr(line, '|');
		if (k2 && k2 == line + strlen(key) && sscanf(bar + 1, "%lf", rate) == 1) {
			snprintf(kernel, len, "%s", k2 + 1);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static void cache_put(const char *key, const char *kernel, double rate)
{
	char path[4200];
	FILE *f;

	if (rate > 0 && !cache_path(path, sizeof(path), 1) && !app_mkdirs(path, NULL) &&
	    !cache_path(path, sizeof(path), 0) && (f = fopen(path, "a"))) {
		fprintf(f, "%s|%s|%.6g\n", key, kernel, rate);
		fclose(f);
	}
}

double app_cpu_rate_of(const struct room *room, int threads, double cells, int steps)
{
	struct room *r;
	struct stn_stencil st;
	char key[512], kernel[64];
	double rate = 0;
	const int bands = has_bands(room);

	/* what decides the rate, as for the GPU's: so that info and run agree on a busy machine */
	snprintf(key, sizeof(key), "%s %s|cpu, %d threads|%s|%s|%s|%s|%.2g", ROOMSIM_VERSION,
		 ROOMSIM_GIT, threads > 0 ? threads : omp_get_max_threads(),
		 stn_from_config(room, &st) ? "?" : st.name,
		 room->precision == 4 ? "float32" : "float64", bands ? "band walls" : "scalar walls",
		 room->shaped ? "carved" : "box", cells);
	if (cache_get(key, kernel, sizeof(kernel), &rate))
		return rate;
	/* a carved room's box is carved too: larger stencils then fall back near its walls */
	if ((r = synthetic_of(room, cells)))
		rate = rate_of(r, threads, steps, 1, room->shaped ? 0.2 : 0, NULL, NULL);
	free(r);
	cache_put(key, "cpu", rate);
	return rate;
}

#define GPU_RATE_CELLS 1.2e8	/* the largest box app_gpu_rate times on */
#define GPU_RATE_STEPS 20

void app_gpu_rate(const struct room *room, double cells, struct app_gpu_rate *out)
{
	char key[512];
	struct stn_stencil st;
	const int bands = has_bands(room);

	memset(out, 0, sizeof(*out));
	if (!fdtd_cuda_available(out->device, sizeof(out->device)))
		return;
	if (stn_from_config(room, &st))
		return;
	cells = fmin(cells, GPU_RATE_CELLS);
	/* what decides the rate: the build (its kernels), the device, scheme, precision,
	 * kernel, walls, grids, carving, size */
	snprintf(key, sizeof(key), "%s %s|%s|%s|%s|%s|%s|%s|%s|%.2g", ROOMSIM_VERSION,
		 ROOMSIM_GIT, out->device, st.name,
		 room->precision == 4 ? "float32" : "float64", kernel_names[room->kernel],
		 bands ? "band walls" : "scalar walls", room->ngrids ? "grids" : "no grids",
		 room->shaped ? "carved" : "box", cells);
	if (cache_get(key, out->kernel, sizeof(out->kernel), &out->rate)) {
		out->cells = cells;
		out->cached = 1;
		return;
	}
	{
		struct room *r = synthetic_of(room, cells);
		struct vox_grid *g;
		struct wall_banks *banks = NULL;
		struct fdtd *e = NULL;

		if (!r)
			return;
		/* a carved room: so is the box, so that the kernels that can run it are timed */
		if ((g = vox_build(r, NULL)) && room->shaped && pad_room(g, r, 0.2)) {
			vox_free(g);
			g = NULL;
		}
		if (!g)
			snprintf(out->why, sizeof(out->why), "its timing box cannot be built");
		if (g && !wall_banks_of(r, &banks)) {
			struct rs_error e2 = { 0 };
			struct fdtd_setup s = {
				.grid = g, .stencil = &st, .precision = room->precision, .cuda = 1,
				.lambda = room->courant * stn_courant_limit(&st),
				.kernel = (enum kernel_id)room->kernel,
				.block = { room->block[0], room->block[1] }, .dts = room->dts,
				.nt = room->nt, .split = room->split, .banks = banks->bank, .nbanks = r->nmaterials,
				.grid_receivers = room->ngrids > 0,
			};

			s.dt = s.lambda * r->spacing / r->c;
			if (!(e = fdtd_create(&s, &e2))) {
				snprintf(out->why, sizeof(out->why), "%.150s", e2.msg);
			} else {
				const long batch = fdtd_batch(e);
				const int steps = (int)((GPU_RATE_STEPS + batch - 1) / batch * batch);

				out->cells = (double)vox_nodes(&g->plan);
				out->rate = median_rate(e, out->cells, steps, 3);
				snprintf(out->kernel, sizeof(out->kernel), "%s",
					 kernel_names[fdtd_kernel(e)]);
			}
		}
		fdtd_destroy(e);
		free(banks);
		vox_free(g);
		free(r);
	}
	cache_put(key, out->kernel, out->rate);
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
	double cells;		/* 0: the backend's default */
	int steps, precision, threads;
	int precision_given;	/* --precision was given: it overrides FILE's */
	int backend;		/* enum room_backend */
	int kernel;		/* -1: all */
	double padding;		/* fraction of the room turned into padding (a stepped ceiling) */
	int block[2];		/* GPU threads per block; 0: the room's (default 32 x 8) */
	int dts[8], ndts;	/* diamond tile sizes to time; none: the default */
	int nt[16], nnt;	/* diamond tower heights to time; none: the default */
	int split[8], nsplit;	/* diamond blocks per tower to time; none: the default */
	int band_walls;		/* the synthetic box's walls given in 8 octave bands */
};

/* A comma-separated list of at most max integers in [lo, hi]; its length, or -1. */
static int int_list(const char *s, int *out, int max, int lo, int hi)
{
	int n = 0;
	char *end;

	while (n < max) {
		long v = strtol(s, &end, 10);

		if (end == s || v < lo || v > hi)
			return -1;
		out[n++] = (int)v;
		if (!*end)
			return n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
	return -1;
}



static int parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "cells", required_argument, NULL, 'c' },
		{ "steps", required_argument, NULL, 's' },
		{ "precision", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "backend", required_argument, NULL, 'b' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "padding", required_argument, NULL, 'P' },
		{ "block", required_argument, NULL, 'B' },
		{ "dts", required_argument, NULL, 'D' },
		{ "nt", required_argument, NULL, 'T' },
		{ "split", required_argument, NULL, 'S' },
		{ "band-walls", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char names[512];

	*o = (struct bench_opts){ .steps = 20, .precision = 4, .backend = ROOM_BACKEND_AUTO,
				  .kernel = -1 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:s:p:t:b:k:P:B:D:T:S:Wh", opts, NULL)) != -1) {
		switch (c) {
		case 'W':
			o->band_walls = 1;
			break;
		case 'D':
			if ((o->ndts = int_list(optarg, o->dts, 8, 1, ROOM_MAX_DTS)) < 0)
				return fprintf(stderr, "roomsim: --dts: valid: up to 8 tile sizes of 1 "
					       "to %d, comma-separated\n", ROOM_MAX_DTS), -1;
			break;
		case 'T':
			if ((o->nnt = int_list(optarg, o->nt, 16, 1, ROOM_MAX_NT)) < 0)
				return fprintf(stderr, "roomsim: --nt: valid: up to 16 tower heights of "
					       "1 to %d, comma-separated\n", ROOM_MAX_NT), -1;
			break;
		case 'S':
			if ((o->nsplit = int_list(optarg, o->split, 8, 1, ROOM_MAX_SPLIT)) < 0)
				return fprintf(stderr, "roomsim: --split: valid: up to 8 block counts "
					       "of 1 to %d, comma-separated\n", ROOM_MAX_SPLIT), -1;
			break;
		case 'B':
			if (sscanf(optarg, "%dx%d", &o->block[0], &o->block[1]) != 2 ||
			    o->block[0] < 32 || o->block[0] % 32 || o->block[1] < 1 ||
			    o->block[0] * o->block[1] > 1024)
				return fprintf(stderr, "roomsim: --block: valid: XxY, X a multiple of "
					       "32, X * Y at most 1024 (e.g. 32x8)\n"), -1;
			break;
		case 'P':
			if ((o->padding = atof(optarg)) < 0 || o->padding > 0.75)
				return fprintf(stderr, "roomsim: --padding: valid: 0 to 0.75\n"), -1;
			break;
		case 'b':
			if ((o->backend = app_backend_of(optarg)) < 0)
				return fprintf(stderr, "roomsim: --backend: valid: cpu | cuda | "
					       "auto\n"), -1;
			break;
		case 'k':
			o->kernel = strcmp(optarg, "all") ? kernel_of(optarg) : -1;
			if (o->kernel == KERNEL_AUTO || (strcmp(optarg, "all") && o->kernel < 0))
				return fprintf(stderr, "roomsim: --kernel: valid: all, %s\n",
					       kernel_list(0, names, sizeof(names))), -1;
			break;
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
			o->precision_given = 1;
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

static void table_head(void)
{
	printf("%-17s %-8s %12s %6s %8s %9s %10s %9s %8s %5s %7s\n", "engine", "prec", "cells",
	       "steps", "ms/step", "Gvox/s", "Gvox/s air", "GB/s eff", "% limit", "regs", "smem B");
}

static void table_row(const char *name, int precision, double cells, int steps, double rate,
		      double air, double add, int regs, size_t smem)
{
	const double bytes = 3.0 * precision;

	printf("%-17s %-8s %12.0f %6d %8.3f %9.2f %10.2f %9.1f %7.1f%% %5d %7zu\n", name,
	       precision == 4 ? "float32" : "float64", cells, steps, 1e3 * cells / rate, rate / 1e9,
	       rate * air / 1e9, rate * bytes / 1e9, 100 * rate * bytes / add, regs, smem);
}

static int bench_cpu(const struct bench_opts *o, struct room *room)
{
	double copy, add, rate, air = 0, cells = 0;

	if (stream(o->threads, &copy, &add)) {
		fprintf(stderr, "roomsim: out of memory for the bandwidth test\n");
		return EXIT_RUNTIME;
	}
	printf("bandwidth  CPU copy %.2f GB/s, add (read 2, write 1) %.2f GB/s: limit %.3f Gvox/s "
	       "at %d bytes per update\n", copy / 1e9, add / 1e9, add / (3.0 * room->precision) / 1e9,
	       3 * room->precision);
	rate = rate_of(room, o->threads, o->steps, BENCH_RUNS, o->padding, &air, &cells);
	if (rate <= 0) {
		fprintf(stderr, "roomsim: cannot allocate the benchmark grid\n");
		return EXIT_RUNTIME;
	}
	table_head();
	table_row("cpu", room->precision, cells, o->steps, rate, air, add, 0, 0);
	return EXIT_OK;
}

#ifdef ROOMSIM_CUDA
/*
 * Seed 002 section 5: the locality of a row of DiamondTorres of tile size dts and height nt
 * (cell updates per cell moved to or from memory), dts n / (n (4 - 1/dts) + 2 - 2/dts +
 * 1/dts^2) with n = nt / (2 dts); times the streaming bandwidth in cells/s it bounds the rate.
 */
static double diamond_model(int dts, int nt, double add, int precision)
{
	const double d = dts, n = nt / (2.0 * dts);

	return d * n / (n * (4 - 1 / d) + 2 - 2 / d + 1 / (d * d)) * add / precision;
}

/* The diamond kernel at each tile size and tower height asked for (or the defaults). */
static int bench_diamond(const struct bench_opts *o, struct cuda_engine *e, double cells,
			 double air, double add, int precision, struct rs_error *err)
{
	const int nd = o->ndts ? o->ndts : 1, nn = o->nnt ? o->nnt : 1;
	const int ns = o->nsplit ? o->nsplit : 1;

	for (int i = 0; i < nd * nn * ns; i++) {
		const int a = i / (nn * ns), b = i / ns % nn, q = i % ns;
		char name[48];
		int dts, nt, split, regs, steps;
		size_t smem;
		double t;

		if (cuda_set_diamond(e, o->ndts ? o->dts[a] : 0, o->nnt ? o->nt[b] : 0,
				     o->nsplit ? o->split[q] : 0, err)) {
			printf("%-17s %s\n", "diamond", err->msg);
			continue;
		}
		cuda_diamond(e, &dts, &nt, &split);
		steps = (o->steps + nt - 1) / nt * nt;
		if (cuda_time_kernel(e, KERNEL_DIAMOND, steps, BENCH_RUNS, &t, err))
			return -1;
		cuda_kernel_resources(e, KERNEL_DIAMOND, &regs, &smem);
		if (split > 1)
			snprintf(name, sizeof(name), "diamond d%d t%d s%d", dts, nt, split);
		else
			snprintf(name, sizeof(name), "diamond d%d t%d", dts, nt);
		table_row(name, precision, cells, steps, cells * steps / t, air, add, regs, smem);
		printf("%-17s model %.2f Gvox/s (seed 002 locality %.3f)\n", "",
		       diamond_model(dts, nt, add, precision) / 1e9,
		       diamond_model(dts, nt, add, precision) * precision / add);
		fflush(stdout);
	}
	return 0;
}

static int bench_gpu(const struct bench_opts *o, struct room *room)
{
	struct rs_error err = { 0 };
	static struct stn_stencil st;
	struct vox_grid *g = vox_build(room, &err);
	struct fdtd_coefs coefs;
	struct cuda_engine *e = NULL;
	struct wall_banks *banks = NULL;
	struct branch_walls *bw = NULL;
	double copy, add, air, lambda;
	char name[128] = "";
	int rc = EXIT_RUNTIME;

	cuda_available(name, sizeof(name), NULL);
	if (!g || pad_room(g, room, o->padding) || cuda_bandwidth(&copy, &add, &err))
		goto out;
	printf("bandwidth  %s copy %.0f GB/s, add (read 2, write 1) %.0f GB/s: limit %.1f Gvox/s "
	       "at %d bytes per update\n", name, copy / 1e9, add / 1e9,
	       add / (3.0 * room->precision) / 1e9, 3 * room->precision);
	if (stn_from_config(room, &st)) {
		rs_fail(&err, RS_EINPUT, "the room's stencil is not valid");
		goto out;
	}
	lambda = room->courant * stn_courant_limit(&st);
	fdtd_coefficients(g, &st, lambda, room->precision, &coefs);
	printf("scheme     %s\n", st.name);
	if (app_banks(room, &banks, &err))
		goto out;
	if (banks->any &&
	    !(bw = branch_create(g, banks->bank, room->nmaterials, lambda,
				 lambda * room->spacing / room->c, room->precision, &err)) &&
	    err.code)
		goto out;
	if (bw)
		printf("walls      %zu boundary cells with branch walls, %d branches in all, %zu "
		       "state values\n", bw->nodes, bw->nbranch, bw->states);
	{
		struct cuda_setup cs = { g, &coefs, room->precision,
					 st.fcc ? KERNEL_FCC
					 : stn_is_seven_point(&st) ? KERNEL_NAIVE3D
								   : KERNEL_GENERAL,
					 { room->block[0], room->block[1] }, 0, &st, NULL, NULL, NULL,
					 room->dts, room->nt, room->split, bw, 0, 0, 0, NULL, NULL,
					 { 0, 0 }, { 0, 0 }, 0, NULL, NULL, NULL };

		if (!(e = cuda_create(&cs, &err)) ||
		    ((o->kernel < 0 || o->kernel == KERNEL_DIAMOND) &&
		     cuda_diamond_tables(e, g, &err)))
			goto out;
	}
	air = (double)g->plan.air / (double)vox_nodes(&g->plan);
	printf("grid       %d x %d x %d cells, blocks %dx%d: air %.1f %%, boundary %.1f %%, "
	       "padding %.1f %%\n", g->plan.n[0], g->plan.n[1], g->plan.n[2], room->block[0],
	       room->block[1], 100 * air, 100.0 * g->plan.boundary / vox_nodes(&g->plan),
	       100.0 * g->plan.padding / vox_nodes(&g->plan));
	table_head();
	for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
		double t;
		int regs;
		size_t smem;

		char why[256];

		if (o->kernel >= 0 && k != o->kernel)
			continue;
		if (cuda_kernel_why(e, (enum kernel_id)k, why, sizeof(why))) {
			printf("%-17s cannot run here: %s\n", kernel_names[k], why);	/* its row */
			continue;
		}
		if (k == KERNEL_DIAMOND) {
			if (bench_diamond(o, e, (double)vox_nodes(&g->plan), air, add, room->precision,
					  &err))
				goto out;
			continue;
		}
		if (cuda_time_kernel(e, (enum kernel_id)k, o->steps, BENCH_RUNS, &t, &err))
			goto out;
		cuda_kernel_resources(e, (enum kernel_id)k, &regs, &smem);
		table_row(kernel_names[k], room->precision, (double)vox_nodes(&g->plan), o->steps,
			  (double)vox_nodes(&g->plan) * o->steps / t, air, add, regs, smem);
		fflush(stdout);
	}
	rc = EXIT_OK;
out:
	if (rc)
		fprintf(stderr, "roomsim: %s\n", err.msg);
	cuda_destroy(e);
	branch_free(bw);
	free(banks);
	vox_free(g);
	return rc;
}
#endif

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o;
	struct rs_error err = { 0 };
	struct room *room;
	int gpu, rc;

	if (parse(argc, argv, &o))
		return EXIT_USAGE;
	gpu = o.backend != ROOM_BACKEND_CPU && fdtd_cuda_available(NULL, 0);
	if (o.backend == ROOM_BACKEND_CUDA && !gpu) {
		fprintf(stderr, "roomsim: --backend cuda: no usable CUDA device\n");
		return EXIT_RUNTIME;
	}
	if (!o.cells)
		o.cells = gpu ? GPU_CELLS : CPU_CELLS;
	room = o.file ? cfg_load(o.file, &err) : synthetic(o.cells, o.precision);
	if (!room) {
		fprintf(stderr, "roomsim: %s\n", o.file ? err.msg : "out of memory");
		return app_exit_status(o.file ? err.code : RS_ENOMEM);
	}
	if (o.band_walls && !o.file)
		band_walls(room);
	if (o.file && o.precision_given)
		room->precision = o.precision;
	if (!o.file) {
		room->block[0] = 32;
		room->block[1] = 8;
	}
	if (o.block[0]) {
		room->block[0] = o.block[0];
		room->block[1] = o.block[1];
	}
#ifdef ROOMSIM_CUDA
	rc = gpu ? bench_gpu(&o, room) : bench_cpu(&o, room);
#else
	rc = bench_cpu(&o, room);
#endif
	room_free(room);
	return rc;
}
