/* plan.c - what a run needs, before anything big is allocated; progress display. */
#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../solver/branch.h"
#include "../solver/fdtd.h"
#include "../solver/signal.h"
#include "../geometry/receivers.h"
#include "grids.h"
#ifdef ROOMSIM_CUDA
#include "../solver/cuda/fdtd_cuda.h"
#endif

/* Beyond any machine or cluster: 2^44 cells (141 TB of float32 fields), 2^30 along an axis. */
#define MOST_CELLS 17592186044416.0
#define MOST_AXIS 1073741824.0

void app_warn_unused(const struct room *room)
{
	const int m = room_unused_material(room);
	struct rs_error err = { 0 };
	char key[ROOM_NAME_MAX + 16];

	if (m < 0)
		return;
	snprintf(key, sizeof(key), "materials.%s", room->materials[m].name);
	room_at(&err, room, room->materials[m].at, key, "on no surface, so it has no effect (%s; "
		"valid: name it under surfaces, e.g. surfaces: {default: %s})",
		room->geo.nshapes ? "neither surfaces nor a shape names it"
		: room->geo.mesh.ntri ? "surfaces names it for no part of the mesh"
				      : "surfaces names it nowhere, and a face surfaces gives no "
					"material is rigid",
		room->materials[m].name);
	fprintf(stderr, "roomsim: warning: %s\n", err.msg);
}

/*
 * The grid's size in double, before vox_plan() counts it in int and size_t (app.h): an absurd room
 * (a mesh in the wrong units, coordinates of 10^12 m) is refused here with its figures, not
 * wrapped round into a small grid. Bounds past 1 km suggest geometry.units.
 */
int app_check_size(const struct room *room, struct rs_error *err)
{
	const int reach = room_stencil_reach(room);
	double cells = 1, most = 0;

	for (int d = 0; d < 3; d++) {
		const double n = room->box[d] / room->spacing + 2 * reach + 16;

		cells *= n < MOST_AXIS ? n : isnan(n) ? INFINITY : fmax(n, MOST_CELLS);
		most = fmax(most, room->box[d]);
	}
	if (cells < MOST_CELLS)
		return 0;
	return room_at(err, room, room->geo.mesh_path[0] ? room->geo.mesh_at : room->grid_at,
		       room->geo.mesh_path[0] ? "geometry.mesh" : "grid",
		       "the room is %.4g x %.4g x %.4g m, %.3g cells of %.4g m: past any "
		       "machine's memory (valid: at most %.3g cells%s)", room->box[0], room->box[1],
		       room->box[2], cells, room->spacing, MOST_CELLS, most > 1000
		       ? "; bounds past 1 km suggest a model in other units: set geometry.units, "
			 "e.g. mm" : ", a coarser grid or a smaller room");
}

int app_spatial_order(const struct room_receiver *c)
{
	return c->binaural && c->ambisonics < 3 ? 3 : c->ambisonics;
}

int app_spatial_cells(const struct room *room, double h, int order)
{
	const int alias = (int)floor((order + 2) * room->c / (2 * M_PI * room->fmax * h));

	return alias < 1 ? 1 : alias < 2 * order ? alias : 2 * order;
}

int app_plan(const struct room *room, struct app_plan *p, struct rs_error *err)
{
	char need[32], have[32];
	size_t avail, pairs = (size_t)room->nsources * (size_t)room->nreceivers;
	struct wall_banks *banks = NULL;

	memset(p, 0, sizeof(*p));
	if (app_check_size(room, err))
		return err->code;
	if (room->slab_axis && room->slab_axis != 3 && room->geo.voxels_path[0])
		return room_at(err, room, room->slab_at, "grid.slab_axis", "a room from a voxel "
			       "file is read in z slabs, so its grid is cut across z (valid: z or "
			       "auto)");
	vox_plan_turned(room, room_slab_axis(room), &p->grid);
	if (stn_from_config(room, &p->stencil))
		return room_at(err, room, room->scheme_at, "scheme.weights", "%d weights given, but "
			       "the stencil has a different number of shells (roomsim scheme lists "
			       "them)", room->nweights);
	p->limit = stn_courant_limit(&p->stencil);
	if (p->limit <= 0)
		return room_at(err, room, room->scheme_at, "scheme", "%s is unstable for every "
			       "Courant number: its symbol is positive somewhere (valid: shell weights "
			       "that keep the Laplacian negative; see roomsim scheme)", p->stencil.name);
	if (room->courant > 1)
		return room_at(err, room, room->courant_at, "grid.courant", "%g is past the "
			       "stability limit of %s: lambda would be %.6f, the computed limit is "
			       "%.6f (valid: (0, 1], a fraction of that limit)", room->courant,
			       p->stencil.name, room->courant * p->limit, p->limit);
	for (int d = 0; d < 3; d++)
		if (p->grid.room[d] < 2 * p->grid.halo)
			return room_at(err, room, room->grid_at, "geometry.box", "the room is %d cells "
				       "along %c, less than twice the stencil's reach %d (valid: a "
				       "finer grid or a smaller stencil)", p->grid.room[d],
				       'x' + room_axis_of(p->grid.slab, d),
				       p->grid.halo);
	p->lambda = room->courant * p->limit;
	p->dt = p->lambda * room->spacing / room->c;
	p->fs = 1 / p->dt;
	p->steps = (long)ceil(room->duration / p->dt - 1e-9);
	p->nsamples = (size_t)p->steps + 1;
	p->wav_frames = (size_t)llround(room->duration * room->wav_rate);
	for (int i = 0; i < room->ngrids; i++) {
		const struct room_grid *g = &room->grids[i];
		double first;

		p->grid_points += (size_t)grid_lattice(g->lo[0], g->hi[0], g->spacing, &first) *
				  (size_t)grid_lattice(g->lo[1], g->hi[1], g->spacing, &first);
	}
	for (int q = 0; q < room->nreceivers; q++) {	/* the spatial receivers' balls */
		const int o = app_spatial_order(&room->receivers[q]);
		const int k = o ? app_spatial_cells(room, p->grid.h, o) : 0;

		for (int i = -k; o && i <= k; i++)
			for (int j = -k; j <= k; j++)
				for (int l = -k; l <= k; l++)
					p->spatial_points += i * i + j * j + l * l <= k * k;
		p->spatial_rows += (o + 1) * (o + 1) * (o > 0);
	}
	/* per point: positions, lattice index, nodes and weights; the engine's window and the
	 * run's two buffers of it, and a transposed one (the GPU holds the window instead) */
	p->grid_memory = p->grid_points * (24 + 8 + 128 + 4 * 4 * GRID_WINDOW);
	/*
	 * The engine's own memory, the grid's wall list (boundary cells: the box's surface, which
	 * a shaped room's walls are of the order of), every raw signal kept for rirs.h5 (twice
	 * with the air's absorption), and the WAV workspace.
	 */
	p->memory = fdtd_memory(&p->grid, room->precision, room->nreceivers + p->spatial_points,
				p->nsamples) +
		    p->grid.boundary * sizeof(struct vox_wall) +
		    (room->air_absorption ? 2 : 1) * (pairs + (size_t)room->nsources *
						      p->spatial_rows) * p->nsamples * sizeof(double) +
		    (size_t)p->spatial_points * p->nsamples * sizeof(double) +
		    4 * (p->nsamples + p->wav_frames) * sizeof(double) + p->grid_memory;
	/* a larger stencil in a room that is not a box: the bitmaps of its cells by the carved
	 * walls (fdtd.c: one bit a cell for a leggy stencil's line cells, two for the others'
	 * fallback and touch cells) and the two bytes a cell that finding them takes */
	if (room->shaped && !p->stencil.fcc && !stn_is_seven_point(&p->stencil))
		p->memory += p->grid.cells / (stn_is_axial(&p->stencil) ? 8 : 4) + 2 * p->grid.cells;
	/* a hybrid run: each pair's geometric response three times at the WAV rate (the unit
	 * response, with the source's signal, joined), and the tracer's histograms and FFTs */
	if (room->hybrid.on)
		p->memory += 3 * (pairs + (size_t)room->nsources * p->spatial_rows) * p->wav_frames *
			     sizeof(double) +
			     (double)room->nreceivers * room->duration / 1e-3 * 9 * 16 * 64 +
			     12 * 4 * (p->wav_frames + room->wav_rate / 4) * sizeof(double);
	/* band-limited snapshot frames (docs/output.md): each plane's sums and one plane */
	p->frame_m = p->frame_slots = 0;
	p->frame_memory = 0;
	if (room->snap_every && !room->snap_full) {
		double *h = NULL;
		size_t most = 0;

		p->frame_m = sig_band_fir(room->fmax, p->fs, &h);
		free(h);
		p->frame_m = p->frame_m > 0 ? p->frame_m : 0;
		p->frame_slots = p->frame_m ? 2 * p->frame_m / room->snap_every + 1 : 0;
		for (int i = 0; p->frame_m && i < room->nplanes; i++) {
			const int a = room_grid_axis(p->grid.slab, room->planes[i].axis);
			const size_t n = (size_t)p->grid.room[a == 0 ? 1 : 0] *
					 (size_t)p->grid.room[a == 2 ? 1 : 2];

			p->frame_memory += n * (size_t)p->frame_slots * sizeof(float);
			most = n > most ? n : most;
		}
		p->frame_memory += most * sizeof(float);
		p->memory += p->frame_memory;
	}
	p->branches = 0;
	if (app_banks(room, &banks, err)) {
		free(banks);
		return err->code;
	}
	for (int i = 0; i < room->nmaterials; i++) {
		char key[ROOM_NAME_MAX + 16];

		if (banks->bank[i] && banks->bank[i]->n > p->branches)
			p->branches = banks->bank[i]->n;
		if (!banks->bank[i] || !p->stencil.fcc || room->precision != 4 ||
		    wall_dc_conductance(banks->bank[i]) > 0)
			continue;
		free(banks);
		snprintf(key, sizeof(key), "materials.%s", room->materials[i].name);
		return room_at(err, room, room->materials[i].at, key, "the fcc scheme in float32 "
			       "needs every material given by branches to conduct at 0 Hz, and every "
			       "branch of this one has stiffness: the room's uniform drift would grow "
			       "(docs/physics.md, \"The uniform mode in float32\"; valid: a branch "
			       "without m and k, such as {r: 100}, scheme.precision: float64, or a "
			       "cubic stencil)");
	}
	free(banks);
	p->branch_memory = branch_memory(p->grid.boundary, p->branches, room->precision);
	p->memory += p->branch_memory;
	/*
	 * The cut cells are built while the grid is voxelised, before the engine takes its
	 * fields: the run needs the larger of that phase (the class bytes, the wall list and the
	 * building's largest phase) and the run itself with the lists kept.
	 */
	p->cut_members = room->fitted ? vox_cut_members(room, &p->grid) : 0;
	p->cut_memory = room->fitted ? vox_cut_memory(&p->grid, p->cut_members, 0) : 0;
	if (room->fitted) {
		const size_t build = p->grid.cells + p->grid.boundary * sizeof(struct vox_wall) +
				     p->cut_memory;

		p->memory += vox_cut_kept(&p->grid, p->cut_members);
		p->memory = build > p->memory ? build : p->memory;
	}
	avail = app_memory_available();
	if (avail && p->memory > avail)
		return room_at(err, room, room->grid_at, "grid", "the run needs %s of memory "
			       "(%d x %d x %d cells) but %s is available (valid: a coarser grid: "
			       "lower fmax or ppw, a larger spacing, or a smaller room)",
			       app_bytes((double)p->memory, need), p->grid.n[0], p->grid.n[1],
			       p->grid.n[2], app_bytes((double)avail, have));
	return 0;
}

size_t app_device_memory(const struct room *room, const struct app_plan *p, int k)
{
#ifdef ROOMSIM_CUDA
	const struct vox_plan *g = &p->grid;

	return cuda_memory(g, room->precision, (enum kernel_id)(k >= 0 ? k : room->kernel),
			   room->nreceivers + p->spatial_points, p->nsamples, (size_t)p->steps) +
	       p->branch_memory + (p->branches ? cuda_branch_columns(g, g->boundary) : 0) +
	       (room->fitted ? vox_cut_memory(g, p->cut_members, 1) : 0) +
	       p->grid_points * (128 + 4 * GRID_WINDOW) + p->frame_memory;
#else
	(void)room;
	(void)p;
	(void)k;
	return 0;
#endif
}

int app_check_device(const struct room *room, const struct app_plan *p, int k,
		     struct rs_error *err)
{
#ifdef ROOMSIM_CUDA
	char name[128], need[32], have[32];
	size_t total = 0;
	const size_t n = app_device_memory(room, p, k);

	if (!cuda_available(name, sizeof(name), &total) || n <= total)
		return 0;
	return room_at(err, room, room->grid_at, "grid", "the run needs %s of device memory "
		       "(%d x %d x %d cells) but the GPU (%s) has %s (valid: a coarser grid: lower "
		       "fmax or ppw, a larger spacing, or a smaller room; several GPUs, with "
		       "mpirun; or --backend cpu)", app_bytes((double)n, need), p->grid.n[0],
		       p->grid.n[1], p->grid.n[2], name, app_bytes((double)total, have));
#else
	(void)room;
	(void)p;
	(void)k;
	(void)err;
	return 0;
#endif
}

int app_mkdirs(const char *path, struct rs_error *err)
{
	char buf[ROOM_PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1;; s++) {
		int end = !*s;

		if (*s != '/' && !end)
			continue;
		*s = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return rs_fail(err, RS_EIO, "%s: cannot create directory: %s", buf,
				       strerror(errno));
		if (end)
			break;
		*s = '/';
	}
	return 0;
}

size_t app_memory_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (size_t)kb * 1024;
}

void app_disk_need(const struct room *room, const struct app_plan *plan, struct app_disk *d)
{
	const struct vox_plan *g = &plan->grid;
	const double pairs = (double)room->nsources * room->nreceivers;
	const int bytes = room->wav_format == ROOM_WAV_PCM16 ? 2
			  : room->wav_format == ROOM_WAV_PCM24 ? 3 : 4;
	double cells = 0;

	d->wav = pairs * (44 + (double)plan->wav_frames * bytes);
	for (int q = 0; q < room->nreceivers; q++) {	/* NAME.ambix.wav, NAME.binaural.wav */
		const struct room_receiver *c = &room->receivers[q];
		const int ch = (c->ambisonics ? (c->ambisonics + 1) * (c->ambisonics + 1) : 0) +
			       2 * c->binaural;

		d->wav += room->nsources * (ch ? 88 + (double)plan->wav_frames * bytes * ch : 0);
	}
	/* rir, rir_air, source_signal, and the metadata */
	d->rirs = 8.0 * (double)plan->nsamples * (pairs * (room->air_absorption ? 2 : 1) +
						  room->nsources) + 65536;
	/* a hybrid run's rir_geometric, rir_full and source_signal_full at the WAV rate */
	if (room->hybrid.on)
		d->rirs += 8.0 * (double)plan->wav_frames * (2 * pairs + room->nsources);
	for (int i = 0; i < room->nplanes; i++) {
		const int a = room_grid_axis(g->slab, room->planes[i].axis);

		cells += (double)g->room[a == 0 ? 1 : 0] * g->room[a == 2 ? 1 : 2];
	}
	/* the frames, and about 1 kB of XDMF per frame and plane */
	d->snapshots = room->snap_every
		? room->nsources * ((4.0 * cells + 1000.0 * room->nplanes) *
					    (double)(plan->steps / room->snap_every + 1) + 65536)
		: 0;
	/* each source's grid file: float samples, positions and lattice; WAVs where asked */
	d->grids = 0;
	for (int i = 0; i < room->ngrids; i++) {
		const struct room_grid *rg = &room->grids[i];
		double first, n = (double)grid_lattice(rg->lo[0], rg->hi[0], rg->spacing, &first) *
				  grid_lattice(rg->lo[1], rg->hi[1], rg->spacing, &first);

		d->grids += room->nsources * (n * (4.0 * (double)plan->nsamples + 32) + 65536);
		if (rg->wavs)
			d->wav += room->nsources * n * (44 + (double)plan->wav_frames * bytes);
	}
	d->total = d->wav + d->rirs + d->snapshots + d->grids;
}

/* Bytes free for an unprivileged writer in path, or in its nearest existing parent. */
static double disk_avail(const char *dir)
{
	char path[ROOM_PATH_MAX + 1];
	struct statvfs st;

	snprintf(path, sizeof(path), "%s", dir && *dir ? dir : ".");
	for (;;) {
		char *slash;

		if (!statvfs(path, &st))
			return (double)st.f_bavail * (double)st.f_frsize;
		if (!(slash = strrchr(path, '/')) || slash == path) {
			if (slash == path && path[1]) {
				path[1] = 0;
				continue;
			}
			if (strcmp(path, ".") && !slash) {
				snprintf(path, sizeof(path), ".");
				continue;
			}
			return -1;
		}
		*slash = 0;
	}
}

double app_disk_free(const char *dir)
{
	const char *force = getenv("ROOMSIM_DISK_FREE");

	return force && *force ? strtod(force, NULL) : disk_avail(dir);
}

double app_disk_avail(const char *dir)
{
	return disk_avail(dir);
}

int app_reserve(const char *dir, double bytes, struct rs_error *err)
{
	char path[ROOM_PATH_MAX + 32], size[32];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s", dir, APP_RESERVE);
	if (bytes < 1) {
		unlink(path);
		return 0;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return rs_fail(err, RS_EIO, "%s: cannot create: %s", path, strerror(errno));
	rc = posix_fallocate(fd, 0, (off_t)bytes);
	close(fd);
	if (rc) {
		unlink(path);
		return rs_fail(err, RS_EIO, "%s: cannot reserve %s for the WAVs and rirs.h5: %s "
			       "(valid: free space there, or --out elsewhere)", dir,
			       app_bytes(bytes, size), strerror(rc));
	}
	return 0;
}

void app_unreserve(const char *dir)
{
	char path[ROOM_PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", dir, APP_RESERVE);
	unlink(path);
}

const char *app_bytes(double b, char buf[32])
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = 0;

	while (b >= 1024 && u < 6) {
		b /= 1024;
		u++;
	}
	snprintf(buf, 32, u ? "%.2f %s" : "%.0f %s", b, unit[u]);
	return buf;
}

int app_backend_of(const char *name)
{
	return !strcmp(name, "cpu") ? ROOM_BACKEND_CPU : !strcmp(name, "cuda") ? ROOM_BACKEND_CUDA
	       : !strcmp(name, "auto") ? ROOM_BACKEND_AUTO : -1;
}

int app_exit_status(int code)
{
	return code == RS_OK ? EXIT_OK : code == RS_EINPUT ? EXIT_USAGE : EXIT_RUNTIME;
}

static double clock_seconds(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double app_now(void)
{
	return clock_seconds(CLOCK_MONOTONIC);
}

/* Redraw at most this often on a terminal; in a log, one line per this many seconds. */
#define PROGRESS_TTY_S 0.25
#define PROGRESS_LOG_S 10.0

static void progress_line(struct app_progress *p, long done, int final)
{
	double t = app_now() - p->t0, rate = t > 0 ? done * p->cells / t : 0;
	double left = done > 0 ? t * (double)(p->total - done) / (double)done : 0;

	fprintf(stderr, "%s%s: %5.1f%%  %ld/%ld steps  %.0f Mvox/s  %s %.1f s%s",
		p->tty ? "\r" : "", p->label, p->total ? 100.0 * done / p->total : 100.0, done,
		p->total, rate / 1e6, final ? "took" : "left", final ? t : left,
		p->tty && !final ? "   " : "\n");
	fflush(stderr);
}

void app_progress_begin(struct app_progress *p, const char *label, long total, double cells,
			int quiet)
{
	p->label = label;
	p->total = total;
	p->cells = cells;
	p->quiet = quiet;
	p->tty = isatty(2);
	p->t0 = p->last = app_now();
}

void app_progress_update(struct app_progress *p, long done)
{
	double now = app_now();

	if (p->quiet || now - p->last < (p->tty ? PROGRESS_TTY_S : PROGRESS_LOG_S))
		return;
	p->last = now;
	progress_line(p, done, 0);
}

void app_progress_end(struct app_progress *p, long done)
{
	if (!p->quiet)
		progress_line(p, done, 1);
}

int app_banks(const struct room *room, struct wall_banks **out, struct rs_error *err)
{
	const int rc = wall_banks_of(room, out);
	char key[ROOM_NAME_MAX + 16];

	if (rc < 0)
		return rs_fail(err, RS_ENOMEM, "out of memory for the materials' fits");
	if (!rc)
		return 0;
	snprintf(key, sizeof(key), "materials.%s", room->materials[rc - 1].name);
	return room_at(err, room, room->materials[rc - 1].at, key, "its bands cannot be fitted "
		       "(valid: ascending centres, absorption from 0 to 1)");
}
