/*
 * voxelize.c - `roomsim voxelize`: the room's voxel grid as an HDF5 file and three PNG slices,
 * with its air volume and wall area against the mesh's own (docs/cli.md).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "../io/image.h"
#include "../io/voxfile.h"

#define SLICE_PIXELS 1024	/* cells are drawn as squares up to this many pixels across */
#define SLICE_SCALE_MAX 8	/* and at most this many pixels per cell */

static const char usage_voxelize[] =
	"usage: roomsim voxelize FILE.yaml [--out GRID.h5] [--at X,Y,Z]\n"
	"\n"
	"Voxelise the room of FILE.yaml at its grid and write GRID.h5 (default: voxels.h5 in\n"
	"output.dir), which geometry.voxels reads back, and GRID_x.png, GRID_y.png, GRID_z.png:\n"
	"slices through the room, padding grey, air white, walls coloured by material. Prints\n"
	"the air volume and the wall area (corrected, docs/physics.md) against the mesh's own.\n"
	"With scheme.stencil fcc it measures the fcc lattice and writes the slices only: a\n"
	"voxel file holds cubic cells.\n"
	"\n"
	"  --out GRID.h5    the voxel file to write\n"
	"  --at X,Y,Z      where the slices cut, in metres (default: the room's centre)\n"
	"  -q, --quiet      print nothing but errors\n";

/* Wall colours by material index: distinct, readable on white. */
static const uint8_t palette[][3] = {
	{ 31, 119, 180 }, { 255, 127, 14 }, { 44, 160, 44 }, { 214, 39, 40 }, { 148, 103, 189 },
	{ 140, 86, 75 }, { 227, 119, 194 }, { 188, 189, 34 }, { 23, 190, 207 }, { 127, 127, 127 },
};

/* The colour of cell n: padding, air, or the material of its first wall. */
static void colour(const struct vox_grid *g, size_t n, const size_t *wall_of, uint8_t rgb[3])
{
	static const uint8_t pad[3] = { 60, 60, 60 }, air[3] = { 250, 250, 250 };
	const uint8_t *c = g->cls[n] == VOX_PAD ? pad : air;

	if (g->cls[n] != VOX_PAD && g->cls[n] != VOX_AIR && wall_of) {
		const struct vox_wall *w = &g->walls[wall_of[0]];

		for (int f = 0; f < 6; f++)
			if (w->material[f] != VOX_NO_WALL) {
				c = palette[w->material[f] % (sizeof(palette) / sizeof(palette[0]))];
				break;
			}
	}
	memcpy(rgb, c, 3);
}

/* The index in g->walls of cell n, by bisection (walls are in cell order), or NULL. */
static const size_t *find_wall(const struct vox_grid *g, size_t n, size_t *slot)
{
	size_t lo = 0, hi = g->nwalls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->walls[mid].cell < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == g->nwalls || g->walls[lo].cell != n)
		return NULL;
	*slot = lo;
	return slot;
}

/* The slice normal to axis a through room cell m: x right, then y or z up. */
static int write_slice(const struct vox_grid *g, int a, int m, const char *path,
		       struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	const int u = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2, w = p->room[u], h = p->room[v];
	int s = SLICE_PIXELS / (w > h ? w : h), rc;
	uint8_t *rgb;

	s = s < 1 ? 1 : s > SLICE_SCALE_MAX ? SLICE_SCALE_MAX : s;
	if (!(rgb = malloc((size_t)w * s * h * s * 3)))
		return rs_fail(err, RS_ENOMEM, "out of memory for a slice image");
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			int at[3];
			uint8_t c[3];
			size_t n, slot;

			at[a] = m + p->halo;
			at[u] = x + p->halo;
			at[v] = y + p->halo;
			if (g->carved && p->fcc && (at[0] + at[1] + at[2]) % 2)	/* no node: */
				at[u] += at[u] > p->halo ? -1 : 1;	/* show the one beside */
			n = vox_index(p, at[0], at[1], at[2]);
			colour(g, n, find_wall(g, n, &slot), c);
			for (int dy = 0; dy < s; dy++)
				for (int dx = 0; dx < s; dx++)
					memcpy(rgb + 3 * (((size_t)(h - 1 - y) * s + dy) * w * s +
							  (size_t)x * s + dx), c, 3);
		}
	rc = img_write_png(path, rgb, w * s, h * s, err);
	free(rgb);
	return rc;
}

static int parse_at(const char *s, double at[3])
{
	return sscanf(s, "%lf,%lf,%lf", &at[0], &at[1], &at[2]) == 3 ? 0 : -1;
}

static void report(const struct room *room, const struct vox_grid *g, double seconds)
{
	const struct vox_plan *p = &g->plan;
	double volume, area, faces = 0, mv = NAN, ma = NAN;

	vox_measure(g, &volume, &area);
	for (size_t w = 0; w < g->nwalls; w++)
		for (int f = 0; f < 6 && !(p->fcc && g->carved); f++)
			faces += g->walls[w].material[f] != VOX_NO_WALL;
	for (size_t w = 0; p->fcc && g->carved && w < g->nwalls; w++)	/* a link's face: */
		faces += (12 - g->walls[w].links) / M_SQRT2;		/* h^2 / sqrt 2 */
	if (p->fcc && !g->carved)
		faces = area / (p->h * p->h);
	if (room->geo.mesh.ntri && !room->geo.nshapes)
		vox_mesh_measure(&room->geo.mesh, &mv, &ma);
	else if (room->geo.has_box && !room->geo.nshapes) {
		mv = room->box[0] * room->box[1] * room->box[2];
		ma = 2 * (room->box[0] * room->box[1] + room->box[1] * room->box[2] +
			  room->box[2] * room->box[0]);
	}
	printf("grid       %d x %d x %d room cells of %.2f mm, %.3f G cells in all (%.0f Mcells/s "
	       "in %.2f s)\n", p->room[0], p->room[1], p->room[2], p->h * 1e3, p->cells / 1e9,
	       p->cells / seconds / 1e6, seconds);
	if (p->fcc)
		printf("nodes      air %zu, boundary %zu, padding %zu (the fcc lattice, i + j + k "
		       "even)\n", p->air, p->boundary, p->padding);
	else
		printf("cells      air %zu, boundary %zu, padding %zu\n", p->air, p->boundary,
		       p->padding);
	printf("volume     %.4f m^3 of air", volume);
	if (isfinite(mv))
		printf("; the %s's own %.4f m^3 (%+.2f %%)", room->geo.mesh.ntri ? "mesh" : "box",
		       mv, 100 * (volume / mv - 1));
	else if (room->geo.mesh.ntri && !room->geo.nshapes)
		printf("; the mesh's own is not given: its triangles cannot all be turned to face "
		       "one way, or it has too many separate parts to tell which are nested");
	printf("\narea       %.4f m^2 of walls (%.4f m^2 of %s faces, before the correction)",
	       area, faces * p->h * p->h, p->fcc ? "dual-cell" : "cell");
	if (isfinite(ma))
		printf("; the %s's own %.4f m^2 (%+.2f %%)", room->geo.mesh.ntri ? "mesh" : "box",
		       ma, 100 * (area / ma - 1));
	printf("\nkinds      %d boundary kinds", g->nkinds - 2);
	if (g->kind_error > 0)
		printf(", admittance sums rounded by up to %.2g %% to fit", 100 * g->kind_error);
	printf("\n");
	if (g->cut) {	/* grid.walls: fitted: the room the cut cells hold */
		const struct vox_cut *c = g->cut;
		size_t inside = 0;
		double fa = 0, fv;

		for (size_t m = 0; m < c->n; m++) {
			inside += g->cls[c->cell[m]] != VOX_PAD;
			fa += c->area[m];
		}
		/* the nodes not cut hold whole cells: h^3, or 2 h^3 on the fcc lattice */
		fv = ((double)(p->air + p->boundary - inside) * (p->fcc ? 2 : 1) + c->volume) *
		     p->h * p->h * p->h;
		printf("fitted     %zu cut cells in %zu groups (%zu merged for the step's "
		       "stability", c->n, c->ngroups, c->merged);
		if (c->rounds)
			printf("; stable after %d more round%s", c->rounds, c->rounds > 1 ? "s" : "");
		printf("): %.4f m^3 of air", fv);
		if (isfinite(mv))
			printf(" (%+.2f %%)", 100 * (fv / mv - 1));
		printf(", %.4f m^2 of walls", fa * p->h * p->h);
		if (isfinite(ma))
			printf(" (%+.2f %%)", 100 * (fa * p->h * p->h / ma - 1));
		printf("\n");
	}
}

int cmd_voxelize(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' }, { "at", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_error err = { 0 };
	struct room *room = NULL;
	struct vox_grid *g = NULL;
	struct app_plan plan;
	char out[ROOM_PATH_MAX + 16], png[ROOM_PATH_MAX + 32], need[32], have[32];
	const char *given = NULL;
	double at[3], t0;
	int c, quiet = 0, has_at = 0, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:a:qh", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_voxelize, stdout);
			return EXIT_OK;
		}
		if (c == 'o') {
			given = optarg;
		} else if (c == 'q') {
			quiet = 1;
		} else if (c == 'a' && !parse_at(optarg, at)) {
			has_at = 1;
		} else {
			fprintf(stderr, "roomsim: see 'roomsim voxelize --help'\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "roomsim: expected one room file (see 'roomsim voxelize --help')\n");
		return EXIT_USAGE;
	}
	if (!(room = cfg_load(argv[optind], &err)) || app_check_size(room, &err))
		goto out;
	vox_plan(room, &plan.grid);
	/* one class byte a cell, its columns, and the walls: refuse before allocating */
	if (app_memory_available() && plan.grid.cells * 1.2 > app_memory_available()) {
		rc = room_at(&err, room, room->grid_at, "grid", "voxelising needs about %s (%zu "
			     "cells) but %s is available (valid: a coarser grid)",
			     app_bytes(plan.grid.cells * 1.2, need), plan.grid.cells,
			     app_bytes((double)app_memory_available(), have));
		goto out;
	}
	snprintf(out, sizeof(out), "%s%s%s", given ? given : room->out_dir, given ? "" : "/",
		 given ? "" : "voxels.h5");
	t0 = app_now();
	if (!(g = vox_build(room, &err)))
		goto out;
	if (!quiet)
		report(room, g, app_now() - t0);
	{	/* the folder the file goes into */
		char folder[ROOM_PATH_MAX + 16];
		const char *slash = strrchr(out, '/');

		snprintf(folder, sizeof(folder), "%.*s", slash ? (int)(slash - out) : 0, out);
		if (folder[0])
			rc = app_mkdirs(folder, &err);
	}
	if (!rc && !plan.grid.fcc)	/* a voxel file holds cubic cells, not the fcc lattice */
		rc = voxf_write(out, g, room, &err);
	for (int a = 0; a < 3 && !rc; a++) {
		double x = has_at ? at[a] : room->origin[a] + 0.5 * room->box[a];
		long m = lround((x - room->origin[a]) / g->plan.h - 0.5);
		size_t stem = strlen(out) > 3 && !strcmp(out + strlen(out) - 3, ".h5") ?
			      strlen(out) - 3 : strlen(out);

		m = m < 0 ? 0 : m >= g->plan.room[a] ? g->plan.room[a] - 1 : m;
		snprintf(png, sizeof(png), "%.*s_%c.png", (int)stem, out, "xyz"[a]);
		rc = write_slice(g, a, (int)m, png, &err);
	}
	if (!rc && !quiet && plan.grid.fcc)
		printf("wrote      the slices %.*s_{x,y,z}.png (a voxel file holds cubic cells: "
		       "voxelize with a cubic scheme to write one)\n", (int)(strlen(out) - 3), out);
	else if (!rc && !quiet)
		printf("wrote      %s and its slices %.*s_{x,y,z}.png\n", out,
		       (int)(strlen(out) - 3), out);
out:
	if (!rc && err.code)
		rc = err.code;
	if (rc)
		fprintf(stderr, "roomsim: %s\n", err.msg);
	vox_free(g);
	room_free(room);
	return app_exit_status(rc);
}
