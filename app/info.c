/* info.c - `roomsim info`: what a run will be and need, allocating nothing big. */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "grids.h"
#include "../solver/air.h"
#include "../solver/directivity.h"
#include "../solver/fdtd.h"
#include "../solver/ga/ga.h"
#include "../solver/part.h"
#include "../solver/spatial.h"
#include "../solver/wall.h"
#ifdef ROOMSIM_CUDA
#include "../solver/cuda/fdtd_cuda.h"
#endif

/* The calibration box for the time estimate: large enough to leave the caches. */
#define CALIBRATION_CELLS 2e6
#define CALIBRATION_STEPS 4

static const char usage_info[] =
	"usage: roomsim info FILE.yaml [--threads N] [--ranks N] [--set KEY=VALUE]...\n"
	"\n"
	"Print the grid (dimensions, air / boundary / padding cells), spacing, time step,\n"
	"simulation rate, steps, memory and disk needed and a time estimate for FILE.yaml.\n"
	"Only a small calibration box is allocated (%.0f cells), never the room's grid. With a\n"
	"usable GPU the estimate is the GPU's, timed once per device and setting on a box of\n"
	"the run's size (at most 1.2e8 cells, a few seconds) and cached in\n"
	"$XDG_CACHE_HOME/roomsim/gpu-rates (~/.cache/roomsim/gpu-rates); the CPU's follows.\n"
	"With --ranks N, what each of N ranks of a decomposed run needs (docs/parallel.md).\n"
	"--set KEY=VALUE overrides a key of FILE.yaml as `roomsim run --set` does.\n";

static double mega(size_t n)
{
	return (double)n / 1e6;
}

/* Each material given per band: its passive fit up to fmax, and every band that misses. */
static void print_band_materials(const struct room *room)
{
	struct wall_banks *banks = NULL;

	if (wall_banks_of(room, &banks)) {	/* app_plan() has said why */
		free(banks);
		return;
	}
	for (int i = 0; i < room->nmaterials; i++) {
		const struct room_material *m = &room->materials[i];
		const struct wall_fit *fit = &banks->fit[i];

		if (m->nbranches) {
			printf("material   %s: %d branches given; absorption from 125 Hz by octave",
			       m->name, m->nbranches);
			for (double f = 125; f <= 8000; f *= 2)
				printf(" %.2f", wall_alpha(&fit->model, f));
			printf("\n");
			continue;
		}
		if (!m->nbands)
			continue;
		printf("material   %s%s%s: %d %s bands, %g to %g Hz; %d fitted to fmax, %d "
		       "branches, %s\n", m->name, *m->library ? " = library " : "", m->library,
		       m->nbands, m->third ? "third-octave" : "octave", m->band_f[0],
		       m->band_f[m->nbands - 1], fit->used, fit->model.n,
		       fit->misses ? "some bands miss:" : "every band within 0.02 or 5 %");
		for (int k = 0; k < fit->used; k++)
			if (wall_band_missed(fit->fitted[k], m->band_alpha[k]))
				printf("           %g Hz: %.3f fitted for %.3f\n", m->band_f[k],
				       fit->fitted[k], m->band_alpha[k]);
		if (fit->used < m->nbands)
			printf("           bands above fmax (%.0f Hz) are not fitted\n", room->fmax);
	}
	free(banks);
}

/* A directional source: its pattern and aim; a balloon's grid, and its wave part's block,
 * lead and level error per octave band (solver/directivity.h). */
static void print_directivity(const struct room *room, const struct room_source *src,
			      const struct app_plan *p)
{
	const struct room_balloon *b = src->balloon;
	struct dir_design *d;
	struct rs_error err = { 0 };

	printf("source     %s: %s aimed at [%.3f, %.3f, %.3f], at its cell's centre\n", src->name,
	       src->pattern, src->aim[0], src->aim[1], src->aim[2]);
	if (!b)
		return;
	printf("           %d bands %.0f to %.0f Hz, %d x %d directions; wave part: %d^3 nodes, "
	       "%d steps (%.3f ms) late, as is the geometric part\n", b->nbands, b->f[0],
	       b->f[b->nbands - 1], b->naz, b->nel, DIR_NODES, DIR_LEAD, DIR_LEAD * p->dt * 1e3);
	if (!(d = malloc(sizeof(*d))))
		return;
	if (!dir_design(src, p->grid.h, p->dt, room->c, room->fmax, d, &err)) {
		printf("           wave part's level error per octave (dB):");
		for (int k = 0; k < d->nbands; k++)
			printf(" %.0f Hz %.2f%s", d->band_f[k], d->band_err[k],
			       k + 1 < d->nbands ? "," : "");
		printf("\n           within %.0f dB up to %.0f Hz\n", DIR_TOL_DB, d->fvalid);
	}
	free(d);
}

/*
 * The room's extent: a mesh's or shapes' bounds, or a box as given and as simulated, whole
 * cells a side (geometry/voxel.c), with how far its sides are from whole cells; then the fit
 * of grid.fit, or for a box a quarter cell or more off, the fit it would take (docs/input.md,
 * "grid.fit").
 */
static void print_extent(const struct room *room, const struct vox_plan *g)
{
	double off = 0, worst;

	if (room->shaped) {
		printf("bounds     x %.3f..%.3f, y %.3f..%.3f, z %.3f..%.3f m%s%s; %d shape(s)\n",
		       room->origin[0], room->origin[0] + room->box[0], room->origin[1],
		       room->origin[1] + room->box[1], room->origin[2],
		       room->origin[2] + room->box[2], room->geo.mesh.ntri ? "; mesh " : "",
		       room->geo.mesh.ntri ? room->geo.mesh_path : "", room->geo.nshapes);
	} else {
		for (int d = 0; d < 3; d++)	/* g->size is in the grid's axes, a turned room's */
			off = fmax(off, fabs(g->size[d] - room->box[room_axis_of(g->slab, d)]) /
						room->box[room_axis_of(g->slab, d)]);
		printf("box        %.3f x %.3f x %.3f m as given; simulated %.4f x %.4f x %.4f m (a "
		       "side %.2f %% off at most)\n", room->box[0], room->box[1], room->box[2],
		       g->size[0], g->size[1], g->size[2], 100 * off);
	}
	if (room->fit)
		printf("fit        grid.fit: the spacing %.4g of the %.3f mm fmax gives, so that the "
		       "%s are within %.3f cells of whole cells\n", g->h / room->unfitted,
		       room->unfitted * 1e3, room->shaped ? "bounds' sides" : "sides",
		       vox_fit_residual(room->box, g->h));
	else if (!room->shaped && vox_fit_residual(room->box, g->h) >= 0.25 && room->fmax > 0) {
		const double h = vox_fit_spacing(room->box, g->h, &worst);

		printf("fit        the sides are up to %.2f cells from whole cells; grid.fit: true "
		       "would take the spacing %.4g of this one, within %.3f cells\n",
		       vox_fit_residual(room->box, g->h), h / g->h, worst);
	}
}

static void print(const struct room *room, const struct app_plan *p, double rate,
		  int threads, const struct app_gpu_rate *gpu)
{
	const struct vox_plan *g = &p->grid;
	double total = (double)vox_nodes(g) * (double)p->steps * room->nsources;
	char need[32], have[32];

	printf("room       %s (%s)\n", room->name, room->file);
	printf("grid       %d x %d x %d cells = %.3f M (room %d x %d x %d, a halo of %d each side, "
	       "rows padded to 8)\n", g->n[0], g->n[1], g->n[2], mega(g->cells), g->room[0], g->room[1],
	       g->room[2], g->halo);
	printf("layers     across %c%s: the grid's x, y, z are the room's %c, %c, %c\n",
	       'x' + g->slab, room->slab_axis ? " (grid.slab_axis)"
			      : room->geo.voxels_path[0] ? " (a voxel file is read in z slabs)"
							 : " (the smallest cut)",
	       'x' + room_axis_of(g->slab, 0), 'x' + room_axis_of(g->slab, 1),
	       'x' + room_axis_of(g->slab, 2));
	if (g->fcc)
		printf("lattice    fcc: %.3f M nodes, the cells with i + j + k even, stored folded\n",
		       mega(vox_nodes(g)));
	if (room->shaped)
		printf("cells      air, boundary and padding are counted by voxelising "
		       "(roomsim voxelize)\n");
	else
		printf("%s      air %.3f M, boundary %.3f M, padding %.3f M\n",
		       g->fcc ? "nodes" : "cells", mega(g->air), mega(g->boundary),
		       mega(g->padding));
	printf("spacing    %.3f mm (fmax %.1f Hz at %.2f points per wavelength)\n", g->h * 1e3,
	       room->fmax, room->ppw);
	print_extent(room, g);
	printf("scheme     %s, %s, Courant number %.6f (%.4g of the limit %.6f)\n",
	       p->stencil.name, room->precision == 4 ? "float32" : "float64", p->lambda,
	       room->courant, p->limit);
	printf("time step  %.4f us (simulation rate %.1f Hz)\n", p->dt * 1e6, p->fs);
	{
		const struct air a = { room->temperature, room->humidity, room->pressure };

		printf("air        %g C, %g %%, %g kPa: c %.2f m/s; %s\n", room->temperature,
		       room->humidity, room->pressure, room->c, room->air_absorption
		       ? "absorption on the receiver signals (ISO 9613-1)" : "no absorption");
		if (room->air_absorption)
			printf("           %.2f dB per 100 m at 1 kHz, %.2f at fmax\n",
			       100 * air_attenuation(&a, 1000), 100 * air_attenuation(&a, room->fmax));
	}
	printf("steps      %ld per source, %d source(s), %d receiver(s)\n", p->steps,
	       room->nsources, room->nreceivers);
	for (int s = 0; s < room->nsources; s++)
		if (room->sources[s].pattern_a != 1 || room->sources[s].balloon)
			print_directivity(room, &room->sources[s], p);
	for (int q = 0; q < room->nreceivers; q++) {
		const struct room_receiver *c = &room->receivers[q];
		const int order = app_spatial_order(c);
		struct sp_encoder e;
		struct rs_error err = { 0 };
		double lo, hi;

		if (!order || sp_encoder_ball(&e, order, order + 2, g->h,
					      app_spatial_cells(room, g->h, order) * g->h,
					      APP_SPATIAL_GAIN, &err))
			continue;
		sp_band(&e, room->c, &lo, &hi);
		printf("spatial    %s: order %d from %d points within %.3g m, exact from %.0f to "
		       "%.0f Hz%s%s%s\n", c->name, order, e.npoints, e.r[e.nshells - 1], lo,
		       fmin(hi, APP_SPATIAL_TOP * room->fmax), c->ambisonics ? "; ambisonic" : "",
		       c->binaural ? "; binaural through " : "", c->binaural ? c->sofa : "");
		sp_encoder_free(&e);
	}
	if (room->ngrids)
		printf("grids      %d receiver grid(s), at most %zu points (those in walls are left "
		       "out when the run starts), %s of memory at most\n", room->ngrids,
		       p->grid_points, app_bytes((double)p->grid_memory, need));
	printf("memory     %s needed, %s available\n", app_bytes((double)p->memory, need),
	       app_bytes((double)app_memory_available(), have));
	{
		struct app_disk d;
		const double avail = app_disk_free(room->out_dir);
		char a[32], b[32], c[32], e[32];

		app_disk_need(room, p, &d);
		printf("disk       %s at most: WAVs %s, rirs.h5 %s, snapshots %s (uncompressed)\n",
		       app_bytes(d.total, a), app_bytes(d.wav, b), app_bytes(d.rirs, c),
		       app_bytes(d.snapshots, e));
		if (room->ngrids)
			printf("           and the grids' files (<source>_grids.h5) %s\n",
			       app_bytes(d.grids, a));
		if (avail >= 0)
			printf("           %s free in %s%s\n", app_bytes(avail, a), room->out_dir,
			       d.total > avail ? ": too little, run will refuse" : "");
	}
	if (room->fitted)
		printf("walls      fitted (grid.walls): %s at most to build the cut cells' lists, "
		       "before the fields; %s of them kept for the run (included above)\n",
		       app_bytes((double)p->cut_memory, need),
		       app_bytes((double)vox_cut_kept(&p->grid, p->cut_members), have));
	if (p->branches)
		printf("walls      branch walls: up to %d branches per material, %s of their "
		       "lists and state at most (included above)\n", p->branches,
		       app_bytes((double)p->branch_memory, need));
	if (room->snap_every)
		printf(p->frame_m ? "snapshots  a frame every %d steps, low-passed at fmax over %d "
				    "steps, %d summed at a time: %s (included above)\n"
				  : "snapshots  a frame every %d steps, the grid's whole band\n",
		       room->snap_every, 2 * p->frame_m + 1, p->frame_slots,
		       app_bytes((double)p->frame_memory, need));
#ifdef ROOMSIM_CUDA
	{
		char name[128];
		size_t devmem = 0, dneed;

		if (cuda_available(name, sizeof(name), &devmem)) {
			dneed = app_device_memory(room, p, -1);
			printf("gpu        %s: %s of device memory needed, %s in all%s\n", name,
			       app_bytes((double)dneed, need), app_bytes((double)devmem, have),
			       dneed > devmem ? ": too little, run on it will refuse" : "");
		}
	}
#endif
	if (gpu->rate > 0)	/* run's default backend, auto, takes the GPU */
		printf("estimate   %.1f s of stepping on the GPU, which run uses (%s, kernel %s: "
		       "%.1f Gvox/s %s on a box of %.3g cells)\n", total / gpu->rate, gpu->device,
		       gpu->kernel, gpu->rate / 1e9, gpu->cached ? "as measured before and cached"
		       : "measured now", gpu->cells);
	if (rate > 0)
		printf("%s %.1f s on the CPU engine (%.0f Mvox/s measured now, ", gpu->rate > 0
		       ? "           or" : "estimate  ", total / rate, rate / 1e6);
	if (rate > 0 && threads)
		printf("%d threads)\n", threads);
	else if (rate > 0)
		printf("all cores)\n");
	print_band_materials(room);
}

/* A hybrid room: the crossover, the geometric engine's scene and settings, and how long it
 * takes on this machine's cores (it runs beside the wave part). */
static void print_hybrid(const struct room *room)
{
	const struct room_hybrid *hy = &room->hybrid;
	struct rs_error err = { 0 };
	struct ga *g;
	size_t ntri;
	int np, nth = omp_get_max_threads(), order;
	double v, a, refl, per, cand = 0, t;

	if (!hy->on)
		return;
	printf("hybrid     crossover %.0f Hz (the transition %.0f to %.0f Hz); the parts join by "
	       "amplitude before, by energy after the mixing time\n", hy->crossover,
	       hy->crossover * pow(2, -0.25), hy->crossover * pow(2, 0.25));
	if (ga_open(room, &g, &err)) {
		printf("tracer     %s\n", err.msg);
		return;
	}
	ga_describe(g, &ntri, &np, &v, &a);
	ga_estimate(g, room->duration, &refl, &per);
	order = ga_order(g);
	for (int s = 0; s < room->nsources; s++)
		cand = fmax(cand, ga_image_candidates(g, room->sources[s].pos, order));
	printf("tracer     %zu triangles in %d planes, %.1f m^3 of air, %.1f m^2 of walls; mixing "
	       "time %.1f ms\n", ntri, np, v, a, 1e3 * ga_mixing_time(g));
	printf("           image sources to order %d%s (%.0f candidates per source), %ld rays, "
	       "receivers of radius %g m, seed %lu\n", order, order < hy->image_order ?
	       " (lowered: the room has many planes)" : "", cand, hy->rays, hy->receiver_radius,
	       hy->seed);
	t = ((double)hy->rays * refl + cand * room->nreceivers * (order + 1)) * per /
	    nth;
	printf("estimate   %.1f s per source for the tracer on %d threads (about %.0f reflections "
	       "per ray, %.2f M wall hits per second per thread here), beside the wave part\n", t,
	       nth, refl, 1e-6 / per);
	ga_close(g);
}

/* What each of n ranks of a decomposed run holds (solver/part.h): the largest window. */
static void print_ranks(const struct room *room, const struct app_plan *p, int n)
{
	const struct vox_plan *g = &p->grid;
	struct part pt = { .size = n };
	struct vox_plan w = *g;
	struct rs_error err = { 0 };
	char mem[32], halo[32], host[32];
	int most = 0;

	for (int r = 0; r < n; r++) {
		pt.rank = r;
		if (part_plan(&pt, g, room->precision, 0, &err)) {
			printf("ranks      %d: %s\n", n, err.msg);
			return;
		}
		if (pt.win[1] - pt.win[0] + 1 > most)
			most = pt.win[1] - pt.win[0] + 1;
	}
	if (room->shaped && !room->geo.voxels) {	/* run balances the slabs' work */
		const int cap = part_most_layers(g->room[2], n);

		most += cap - (g->room[2] + n - 1) / n;
		most = most < g->room[2] ? most : g->room[2];
		printf("ranks      %d, slabs of equal work, each at most %d of the %d layers "
		       "across %c, in a window of at most %d (%d exchanged each side)\n", n, cap,
		       g->room[2], 'x' + g->slab, most, pt.depth);
	} else {
		printf("ranks      %d, slabs of %d or %d of the %d layers across %c, each in a "
		       "window of at most %d (%d exchanged each side)\n", n, g->room[2] / n,
		       (g->room[2] + n - 1) / n, g->room[2], 'x' + g->slab, most, pt.depth);
	}
	w.room[2] = most;
	w.n[2] = most + 2 * g->halo;
	w.cells = (size_t)w.n[0] * w.n[1] * w.n[2];
	printf("           per rank: %s for its window", app_bytes((double)fdtd_memory(
	       &w, room->precision, room->nreceivers, p->nsamples), mem));
#ifdef ROOMSIM_CUDA
	printf(" (%s on its GPU)", app_bytes((double)cuda_memory(&w, room->precision,
		room->kernel, room->nreceivers, p->nsamples, (size_t)p->steps), mem));
#endif
	printf(", and in host memory %s of class bytes for the window it voxelises, with %zu "
	       "bytes a boundary cell for its walls\n", app_bytes((double)w.cells, host),
	       sizeof(struct vox_wall));
	printf("           halos: %s each way between neighbours per step, %s per step in all\n",
	       app_bytes((double)pt.layer * pt.depth, halo),
	       app_bytes(2.0 * (n - 1) * pt.layer * pt.depth, mem));
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_error err = { 0 };
	struct room *room;
	struct app_plan plan;
	char *sets[APP_MAX_SETS];
	int c, threads = 0, ranks = 1, nsets = 0, rc;
	double rate;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:r:s:h", opts, NULL)) != -1) {
		if (c == 'h') {
			printf(usage_info, CALIBRATION_CELLS);
			return EXIT_OK;
		}
		if (c == 's' && nsets < APP_MAX_SETS) {
			sets[nsets++] = optarg;
			continue;
		}
		if (c == 'r' && (ranks = atoi(optarg)) >= 1 && ranks <= 1024)
			continue;
		if (c != 't' || (threads = atoi(optarg)) < 1) {
			fprintf(stderr, "roomsim: see 'roomsim info --help'\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "roomsim: expected one room file (see 'roomsim info --help')\n");
		return EXIT_USAGE;
	}
	if (!(room = cfg_load_set(argv[optind], sets, nsets, &err))) {
		fprintf(stderr, "roomsim: %s\n", err.msg);
		return app_exit_status(err.code);
	}
	app_warn_unused(room);
	rc = 0;
	if (room->stencil_auto) {	/* every candidate, then the room with the one chosen */
		struct app_candidate cand[APP_MAX_CANDIDATES];
		char mem[32];
		int n, k = app_scheme_choose(room, fdtd_cuda_available(NULL, 0), threads, ranks,
					     cand, &n, &err);

		printf("scheme     auto: the fastest scheme as accurate as the 7-point scheme at %g "
		       "worst-case phase error at %.1f Hz, on this machine's %s\n", room->dispersion,
		       room->fmax,
		       fdtd_cuda_available(NULL, 0) ? "GPU" : "CPU");
		for (int i = 0; i < n; i++) {
			if (isnan(cand[i].seconds))	/* the only contender */
				printf("  %s %-34s ppw %5.2f  h %6.1f mm  %8.1f M nodes  %6ld steps  "
				       "%10s  not timed: the only contender\n", i == k ? "->" : "  ",
				       cand[i].name, cand[i].ppw, 1e3 * cand[i].spacing,
				       cand[i].nodes / 1e6, cand[i].steps, app_bytes(cand[i].memory, mem));
			else if (cand[i].seconds < HUGE_VAL && cand[i].setup > 0)
				printf("  %s %-34s ppw %5.2f  h %6.1f mm  %8.1f M nodes  %6ld steps  "
				       "%10s  %7.1f Gvox/s  %9.1f s (%.1f s of it fitting walls)\n",
				       i == k ? "->" : "  ", cand[i].name, cand[i].ppw,
				       1e3 * cand[i].spacing, cand[i].nodes / 1e6, cand[i].steps,
				       app_bytes(cand[i].memory, mem), cand[i].rate / 1e9,
				       cand[i].seconds, cand[i].setup);
			else if (cand[i].seconds < HUGE_VAL)
				printf("  %s %-34s ppw %5.2f  h %6.1f mm  %8.1f M nodes  %6ld steps  "
				       "%10s  %7.1f Gvox/s  %9.1f s\n", i == k ? "->" : "  ",
				       cand[i].name, cand[i].ppw, 1e3 * cand[i].spacing,
				       cand[i].nodes / 1e6, cand[i].steps, app_bytes(cand[i].memory, mem),
				       cand[i].rate / 1e9, cand[i].seconds);
			else
				printf("     %-34s %s\n", cand[i].name[0] ? cand[i].name : "-",
				       cand[i].why);
		}
		rc = k < 0 ? err.code : 0;
	}
	if (!rc)
		rc = app_plan(room, &plan, &err);
	if (rc) {
		fprintf(stderr, "roomsim: %s\n", err.msg);
	} else {
		struct app_gpu_rate gpu;

		rate = app_cpu_rate(room->precision, threads, CALIBRATION_CELLS, CALIBRATION_STEPS, 1,
				    NULL);
		app_gpu_rate(room, (double)vox_nodes(&plan.grid), &gpu);
		print(room, &plan, rate, threads, &gpu);
		print_hybrid(room);
		if (ranks > 1)
			print_ranks(room, &plan, ranks);
	}
	room_free(room);
	return app_exit_status(rc);
}
