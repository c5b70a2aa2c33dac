/*
 * app.h - the command line's internal interface: one function per command, and what the
 * commands share (the run plan, memory checks, progress). Only app/ prints to the user.
 */
#ifndef APP_APP_H
#define APP_APP_H

#include <stddef.h>

#include "../common/rs_error.h"
#include "../common/rs_phase.h"
#include "../geometry/voxel.h"
#include "../io/config.h"
#include "../model/room.h"
#include "../solver/stencil.h"
#include "../solver/wall.h"

/* Exit statuses of docs/cli.md. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Everything about a run that follows from its room without allocating the grid. */
struct app_plan {
	struct vox_plan grid;
	struct stn_stencil stencil;	/* the scheme's stencil (docs/stencils.md) */
	double limit;		/* its Courant limit, computed from the symbol */
	double lambda;		/* Courant number: grid.courant x limit */
	double dt;		/* time step k = lambda h / c, s */
	double fs;		/* simulation rate 1 / k, Hz */
	long steps;		/* updates per source: sample steps is at t >= duration */
	size_t nsamples;	/* steps + 1: sample n is the pressure at t = n k */
	size_t wav_frames;	/* round(duration * output rate) */
	int branches;		/* the most branches of a material given by band (0: none) */
	size_t cut_members;	/* grid.walls: fitted: cut cells, at most (vox_cut_members) */
	size_t cut_memory;	/* and the bytes their building takes, at most (vox_cut_memory) */
	size_t branch_memory;	/* bytes of the branch walls' lists and state, at most */
	size_t grid_points;	/* the receiver grids' lattice points, those in walls too */
	size_t grid_memory;	/* bytes of their nodes, weights and sample windows, at most */
	int frame_m;		/* band-limited snapshots: the filter's half-length, steps
				 * (sig_band_fir; 0: none, raw frames or no snapshots) */
	int frame_slots;	/* frames summed at a time, each plane */
	size_t frame_memory;	/* bytes of their sums (on the GPU, of device memory) */
	int spatial_points;	/* the spatial receivers' points (app_spatial_cells) */
	int spatial_rows;	/* and their channels per source */
	size_t memory;		/* bytes the run needs, those included */
};

/*
 * A spatial receiver's encoder (docs/physics.md, "Ambisonic receivers"): its order, the
 * ambisonic order or at least 3 for a binaural response (0: not spatial); the fit's order,
 * 2 more; the radius of its ball of grid points, in cells of spacing h: twice the order,
 * less where the fit would alias below fmax, at least 1.
 */
#define APP_SPATIAL_GAIN 1000.0	/* the encoder's gain limit (sp_encoder_ball's max_gain) */
#define APP_SPATIAL_TOP 0.9	/* its band ends at most this times fmax: the grid's dispersion
				 * near fmax puts the higher orders' gains 0.5 dB off */
int app_spatial_order(const struct room_receiver *c);
int app_spatial_cells(const struct room *room, double h, int order);


/* wall_banks_of() with its failures as errors: RS_EINPUT naming the material whose bands
 * cannot be fitted, RS_ENOMEM. *out is allocated (free() it) even on failure. */
int app_banks(const struct room *room, struct wall_banks **out, struct rs_error *err);

/* Plan room's run; RS_EINPUT naming the grid key when it cannot fit in memory. */
int app_plan(const struct room *room, struct app_plan *plan, struct rs_error *err);

/* Device bytes the run of plan needs on one GPU with kernel k (-1: the room's): fields,
 * tables, receivers, branch walls, receiver grids and snapshot frames (kernel auto's least:
 * cuda_memory); 0 in a build without CUDA. */
size_t app_device_memory(const struct room *room, const struct app_plan *plan, int k);

/* RS_EINPUT naming the grid key when a run on one GPU with kernel k (-1: the room's) needs
 * more device memory than the GPU has; 0 where it fits or no GPU is usable. Before the grid
 * is built, so that a room too large fails at once. */
int app_check_device(const struct room *room, const struct app_plan *plan, int k,
		     struct rs_error *err);

/* RS_EINPUT, naming the geometry key, when the room's grid would pass 2^44 cells or 2^30
 * along an axis (counted in double, before anything counts it in int); app_plan calls it. */
int app_check_size(const struct room *room, struct rs_error *err);

/* On stderr, a warning naming a material the file defines that no surface uses (it has no
 * effect; with no surfaces key a room's walls are rigid), and where it is. */
void app_warn_unused(const struct room *room);

/* mkdir -p path; RS_EIO naming the part that cannot be made. */
int app_mkdirs(const char *path, struct rs_error *err);

/* Bytes of memory the system can give now (MemAvailable). */
size_t app_memory_available(void);

/* What a run's outputs take on disk at most (the HDF5 files uncompressed), bytes. */
struct app_disk {
	double wav, rirs, snapshots, grids, total;	/* grids: the <source>_grids.h5 files */
};
void app_disk_need(const struct room *room, const struct app_plan *plan, struct app_disk *d);

/* Bytes free for an unprivileged writer in dir, or in its nearest existing parent (-1:
 * unknown). ROOMSIM_DISK_FREE, when set, stands in for it (the tests' full disk). */
double app_disk_free(const char *dir);

/* The same without ROOMSIM_DISK_FREE: what the file system says now. */
double app_disk_avail(const char *dir);

/*
 * Keep `bytes` of dir's file system for the outputs that matter most (the WAVs and rirs.h5):
 * a file APP_RESERVE allocated in dir (posix_fallocate), made anew at each call; bytes < 1
 * removes it, as app_unreserve() does. RS_EIO naming dir when the space is not there.
 */
#define APP_RESERVE ".roomsim-reserve"
#define APP_MAX_SETS 64		/* --set overrides a command takes */
int app_reserve(const char *dir, double bytes, struct rs_error *err);
void app_unreserve(const char *dir);

/* "1.23 GiB" and friends; returns buf. */
const char *app_bytes(double bytes, char buf[32]);

/* The backend named by --backend (cpu, cuda, auto), or -1. */
int app_backend_of(const char *name);

/* Exit status for an error code. */
int app_exit_status(int code);

/* Progress on stderr: percent, steps, throughput, time left; silent when quiet. */
struct app_progress {
	const char *label;
	long total;
	double cells;
	double t0, last;
	int quiet, tty;
};
double app_now(void);
void app_progress_begin(struct app_progress *p, const char *label, long total, double cells,
			int quiet);
void app_progress_update(struct app_progress *p, long done);
void app_progress_end(struct app_progress *p, long done);

/*
 * Time the CPU engine on a synthetic box of about cells cells with absorbing walls:
 * median voxel updates per second (all cells) over runs of steps steps. 0 on failure.
 */
double app_cpu_rate(int precision, int threads, double cells, int steps, int runs,
		    double *air_fraction);

/* The same for room's scheme, precision and kind of walls (app_scheme_choose's candidates). */
double app_cpu_rate_of(const struct room *room, int threads, double cells, int steps);

/* The GPU engine's speed for room's run (app_gpu_rate). */
struct app_gpu_rate {
	double rate;		/* voxel updates per second; 0: no usable device */
	char device[128];
	char kernel[32];	/* the kernel it ran: room's, or the one auto chose */
	double cells;		/* of the box it was measured on */
	int cached;		/* 1: read from the cache (app_gpu_rate's file), not measured now */
	char why[160];		/* rate 0 with a device: why the engine could not be made */
};

/*
 * The CUDA engine's voxel updates per second for room's scheme, precision, kernel (auto: the
 * fastest, as a run chooses it, with a run's exclusions: no diamond with band materials or
 * receiver grids) and kind of walls (scalar, or fitted bands), timed on a box of absorbing
 * walls of the run's cells, at most BOX cells; remembered per device and setting in
 * $XDG_CACHE_HOME/roomsim/gpu-rates (default ~/.cache/...), which later calls read instead.
 * rate 0 when no device is usable or this build has no CUDA engine.
 */
void app_gpu_rate(const struct room *room, double cells, struct app_gpu_rate *out);

/* A scheme scheme.stencil: auto weighs (app_scheme_choose). */
struct app_candidate {
	char name[64];		/* the stencil's */
	enum room_stencil stencil;
	int order, radius2, variant;
	int fitted;		/* with fitted walls (grid.walls: fitted) */
	double courant, ppw, spacing, unfitted;	/* unfitted: before grid.fit */
	double nodes;		/* the scheme's nodes (vox_nodes) */
	long steps;
	double memory;		/* bytes on the host, and on the device for the GPU */
	double rate;		/* voxel updates per second, measured (app_gpu_rate, cached) */
	char kernel[32];	/* on the GPU: the kernel timed */
	double pass;		/* seconds its fitted walls' pass is estimated to take a step, or 0 */
	double setup;		/* seconds its fitted walls' setup is estimated to take, or 0 */
	double seconds;		/* of stepping, every source, and setup; HUGE_VAL where it
				 * cannot run */
	char why[128];		/* why it cannot, or "" */
};

#define APP_MAX_CANDIDATES 12

/*
 * scheme.stencil: auto: every candidate scheme (the 7-point scheme, leggy order 4, compact
 * R = 2, 3, 4 with fitted weights, interpolated IWB and IISO, fcc in box rooms, and fcc with
 * fitted walls in carved rooms whose grid.walls is not given, in one process: ranks 1) at the
 * spacing that meets room->dispersion at fmax, its nodes, steps and memory, and its rate on
 * this machine (gpu: the CUDA engine's, else the CPU's with threads); the fastest that fits
 * in memory is applied to room (its walls too). Returns the chosen index (c[0..*n) filled),
 * or -1 with err when none can run.
 */
int app_scheme_choose(struct room *room, int gpu, int threads, int ranks,
		      struct app_candidate *c, int *n, struct rs_error *err);

int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_scheme(int argc, char **argv);
int cmd_voxelize(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_materials(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_auralize(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_converge(int argc, char **argv);

#endif
