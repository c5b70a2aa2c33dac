/*
 * run.h - what the parts of `roomsim run` share (app/run*.c): the run's state, and the
 * outputs, snapshot writer, checkpoints and ranks that run.c's step loop calls.
 */
#ifndef APP_RUN_H
#define APP_RUN_H

#include <pthread.h>
#include <stdint.h>

#include "app.h"
#include "grids.h"
#include "../io/checkpoint.h"
#include "../io/snapshot.h"
#include "../solver/fdtd.h"
#include "../solver/ga/ga.h"
#include "../solver/part.h"

struct run {
	const struct room *room;
	struct app_plan plan;
	struct vox_grid *grid;
	struct fdtd *engine;
	const char *out;
	int quiet;
	int threads;
	int backend;		/* enum room_backend as chosen on the command line */
	int kernel;		/* --kernel, or -1 for scheme.kernel */
	char engine_name[64];	/* "cpu" or "cuda:<kernel>", recorded in rirs.h5 */
	double *signals;	/* [source][receiver][sample] raw pressure */
	double *air;		/* the same with the air's absorption (NULL: medium off) */
	long *completed;	/* steps done per source */
	struct wall_banks *banks;	/* the fits of the materials given by band */
	struct run_grids grids;	/* the receiver grids' points and their stream */
	int nsources_done;	/* sources whose signals are final (finished or interrupted) */
	size_t wav_clipped;
	int gpus;		/* --gpus: ranks to start through mpirun (0: none) */
	char *sets[APP_MAX_SETS];	/* --set KEY=VALUE overrides (io/config.h) */
	int nsets;
	/* a decomposed run (solver/part.h): this rank's share; the engine runs `window`, a
	 * receiver q is read where its lowest node lies (rec_rank[q]), as engine receiver
	 * rec_index[q] there */
	struct part part;
	struct room *turned;	/* the room in the grid's frame for the voxelisers
				 * (room_turned), when its slab axis is not z; else NULL */
	struct vox_grid *window;
	int *rec_rank, *rec_index;
	/* the air volume and each material's wall area (vox_measure), for rirs.h5: measured
	 * when the grid is built, by every rank of its own layers */
	double volume, *mat_area;
	double vox_seconds;	/* what building the voxel grid took */
	long vox_peak;		/* the most host memory held by then, KiB */
	/* decomposed: grid is a sketch of the whole grid (vox_sketch) with the layers its points
	 * need, and each snapshot plane's room cells (as run_make_planes gives them) */
	unsigned char **plane_room;
	struct app_disk disk;	/* what the outputs take at most (app_disk_need) */
	int reserved;		/* rank 0 keeps space for the WAVs and rirs.h5 (app_reserve) */
	/* checkpoints (io/checkpoint.h): every ckpt_seconds of running or ckpt_steps steps
	 * (the room's, or --checkpoint), the last one's time and step */
	double ckpt_seconds;
	long ckpt_steps;
	double ckpt_last;
	long ckpt_last_step;
	uint64_t grid_hash, points_hash;	/* what a checkpoint must match (ckpt_meta) */
	int fingerprinted;	/* grid_hash and points_hash made (run_ckpt.c) */
	long hold;		/* ROOMSIM_HOLD_AT: the step to hold at (-1: none) */
	char hold_source[ROOM_NAME_MAX];	/* ... of this source (SOURCE:STEP); "": the first */
	int *frame_p;		/* per plane: its index among the engine's frames, or -1 */
	/* a hybrid run's geometric part (run_hybrid.c), on rank 0: per source and receiver
	 * the unit response (ga_ir), with the source's signal (geo) and joined to the wave
	 * part (full), each wav_frames at the WAV rate; a thread traces source after source */
	struct ga *ga;
	double *ga_ir, *geo, *full;
	size_t *ga_images;	/* per pair: image sources found */
	long *ga_escaped;	/* per source: rays lost through holes */
	double *ga_reflections;	/* per source: reflections per ray */
	double ga_seconds;	/* the thread's time so far */
	int ga_order;		/* the image sources' order (ga_order()) */
	int ga_done, ga_rc, ga_started;	/* sources traced; the thread's error */
	int ga_stop;		/* the run ends: trace no further source */
	int ga_joined;		/* the thread has ended (run_hybrid_stop) */
	int ga_joinable;	/* sources whose geo is ready (run_hybrid_wait) */
	struct rs_error ga_err;
	pthread_t ga_thread;
	pthread_mutex_t ga_mu;
	pthread_cond_t ga_cv;
	/* spatial receivers (run_spatial.c): the engine reads npoints points, the receivers
	 * then each spatial receiver's ball; a source's signals are nrows rows, the receivers'
	 * then each spatial receiver's ambisonic channels at the simulation rate */
	struct run_spatial *sp;
	int nsp, npoints, nrows;
	double sp_seconds[3];	/* their time: opening (HRTFs), encoding, WAVs */
	/* the binaural receivers' HRTFs open on a thread of their own (run_spatial_hrtfs) */
	pthread_t sp_thread;
	pthread_mutex_t sp_mu;
	int sp_opening;		/* 1: sp_thread is to be joined */
	int sp_hrtf_rc;		/* its result, and its error */
	struct rs_error sp_hrtf_err;
	int resume;		/* --resume: go on from resume_path */
	struct ckpt_meta resumed;	/* its meta */
	char resume_path[ROOM_PATH_MAX + 64];
};

/* Where source src is: its position, or a directional source's cell's centre. */
void run_source_pos(const struct run *r, const struct room_source *src, double pos[3]);

/* ---- outputs (run_out.c) ---- */

/* Source s's receiver signals with the air's absorption over the path (solver/air.h). */
int run_absorb_air(struct run *r, int s, struct rs_error *err);

/* Source s's WAVs and rirs.h5 (with every source done so far). */
int run_write_outputs(struct run *r, int s, struct rs_error *err);

/* The wave part of a WAV of source s from a raw signal (overwritten): conditioned (band
 * limited at fmax unless joined to a geometric part), resampled to the WAV rate into wav
 * (room for wav_frames), scaled; *nframes the frames computed. */
int run_wave_wav(struct run *r, int s, double *raw, double *wav, int joined, size_t *nframes,
		 struct rs_error *err);

/* ---- spatial receivers (run_spatial.c) ---- */

/* The spatial receivers: their encoders, each point checked to be in the air (RS_EINPUT
 * naming the receiver's key), the HRTFs of binaural ones on rank 0; sets npoints, nrows. */
int run_spatial_open(struct run *r, struct rs_error *err);
void run_spatial_close(struct run *r);

/* Wait for the binaural receivers' HRTFs (opened beside the first source's stepping); their
 * error, copied into err when not NULL. Any thread may call it, any number of times. */
int run_spatial_hrtfs(struct run *r, struct rs_error *err);

/* Engine point i's position (i < nreceivers: receiver i). */
void run_point(const struct run *r, int i, double pos[3]);

/* After source s: its spatial receivers' points gathered on rank 0 and encoded into their
 * rows of r->signals. */
int run_spatial_encode(struct run *r, int s, struct rs_error *err);

/* Receiver q's spatial WAVs of source s (none when it is not spatial), from the rows with
 * the air's absorption, joined to the geometric part when ready, scaled by gain; written
 * only when write is set (else the pass that finds the peak). */
int run_spatial_wavs(struct run *r, int s, int q, int write, double gain, double *peak,
		     struct rs_error *err);

/* The hybrid's part: the geometric engine's receivers that record directions (flags[q] 1 or
 * 0, nreceivers of them), and source s's spatial geometric responses from its images and
 * rays. */
void run_spatial_flags(const struct run *r, int *flags);
int run_spatial_synth(struct run *r, int s, struct ga_image *const *im, const size_t *n,
		      const struct ga_hist *h, struct rs_error *err);
/* ... with the source's signal src (wav_frames at the WAV rate). */
int run_spatial_signal(struct run *r, int s, const double *src, struct rs_error *err);

/* ---- the hybrid's geometric part (run_hybrid.c) ---- */

/* A hybrid room: the geometric engine's scene (every rank: it checks the room is closed),
 * and on rank 0 the responses' memory; nothing otherwise. */
int run_hybrid_open(struct run *r, struct rs_error *err);

/* Start tracing every source on a thread of its own. */
int run_hybrid_start(struct run *r, struct rs_error *err);

/* Wait for the geometric responses of every source up to s, then give them their source's
 * signal; the thread's error if it failed. */
int run_hybrid_wait(struct run *r, int s, struct rs_error *err);

/* Receiver q's WAV signal of source s (frames at the WAV rate, the wave part) joined at the
 * crossover with its geometric response, in place; kept for rirs.h5's rir_full. */
int run_hybrid_join(struct run *r, int s, int q, double *wav, size_t frames,
		    struct rs_error *err);

/* Let the thread finish the source it traces and join it. */
void run_hybrid_stop(struct run *r);

/* Join the thread if need be and free the hybrid's state. */
void run_hybrid_close(struct run *r);

/* ---- snapshots (run_snap.c) ---- */

/* The snapshot planes of the room, with their grid index along the normal (index[i]) and
 * their room cells; NULL when out of memory. run_free_planes() frees them. */
struct snap_plane *run_make_planes(const struct run *r, int *index);

/*
 * The voxel grid (run_grid.c): the whole one in r->grid, or in a decomposed run this rank's
 * window in r->window, built alone, and a sketch of the whole grid in r->grid with the layers
 * that the sources', receivers' and spatial receivers' checks read; the volume and the wall
 * areas either way, and the snapshot planes' room cells of a decomposed run. Every rank
 * together.
 */
int run_build_grid(struct run *r, struct rs_error *err);

/* Make sure the sketch of a decomposed run holds layers k0..k1 (a no-op otherwise). */
int run_sketch(struct run *r, int k0, int k1, struct rs_error *err);

/* The room cells of snapshot plane i at index `at` along its axis in the grid, in the
 * engine's layout of its frames (run_make_planes turns them into the file's); NULL when out
 * of memory. */
unsigned char *run_plane_room(const struct run *r, int i, int at);
void run_free_planes(struct snap_plane *pl, int n);

/*
 * Snapshots go to HDF5 on a writer thread: the stepping thread only starts each plane's copy
 * (on the GPU an asynchronous copy into pinned memory, ordered after the steps before it)
 * and queues it; the writer waits for the copy and compresses and writes the frame. The
 * loop blocks only when SNAP_BUFFERS frames per plane are still waiting to be written.
 */
#define SNAP_BUFFERS 4

struct snap_job {
	float *buf;		/* one plane, from fdtd_host_alloc() */
	struct fdtd_copy copy;
	int plane;
	double t;
};

struct snapper {
	struct fdtd *engine;
	struct snap_file *file;
	const struct snap_plane *planes;
	const char *dir;	/* where the file is: a frame is written only while it fits */
	const char *path;
	long frames;		/* frames written */
	struct snap_job *jobs;	/* ring of cap jobs; queued: [head, head + count) */
	float *flip;		/* a frame turned into the file's layout (snap_plane.swap) */
	int cap, head, count, done, rc;
	struct rs_error err;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	pthread_t thread;
	int started;
};

/* Start the writer of `file` with buffers of `frame` floats; dir and path name the file. */
int snapper_start(struct snapper *w, struct fdtd *engine, struct snap_file *file,
		  const struct snap_plane *planes, int nplanes, size_t frame,
		  const char *dir, const char *path, struct rs_error *err);

/* Queue frame `frame` of every plane (several ranks: gathered on rank 0 first): the newest
 * level, at step frame x every, or band-limited (r->plan.frame_m > 0) the engine's sum, once
 * complete at step frame x every + frame_m. */
int snapper_queue(struct snapper *w, const struct run *r, const struct snap_plane *pl,
		  const int *index, long frame, struct rs_error *err);

/* Band-limited frames (output.snapshots.band: fmax, when the plan's filter has
 * r->plan.frame_m > 0): the engine's sums and, on this rank, each plane's index among them
 * (r->frame_p, -1 where the plane is another rank's); RS_ENOMEM, or the engine's error. */
int run_frames_setup(struct run *r, struct rs_error *err);

/* Wait until every queued frame is in the file (a checkpoint counts them); its error. */
int snapper_drain(struct snapper *w, struct rs_error *err);

/* Let the writer drain the queue, stop it, free the buffers; its first error if any (err
 * may be NULL). */
int snapper_stop(struct snapper *w, struct rs_error *err);

/* ---- checkpoints and --resume (run_ckpt.c; docs/cli.md, "Checkpoints") ---- */

/* Write a checkpoint of source s at the engine's step, after w and the grid writers have
 * put everything up to it on the disk; every rank its own file, all or none. */
int run_checkpoint(struct run *r, int s, struct snapper *w, struct rs_error *err);

/* 1 when a checkpoint is due at this chunk's end (rank 0's clock decides for all). */
int run_checkpoint_due(struct run *r);

/* --resume: find and check this rank's checkpoint, load the finished sources (rank 0). */
int run_resume_open(struct run *r, struct rs_error *err);

/* The engine at the checkpoint's step of the source it was running (after fdtd_reset and
 * the source): fields, wall states, step, this rank's receivers so far. */
int run_resume_engine(struct run *r, struct rs_error *err);

/* ---- ranks (run_ranks.c; docs/parallel.md) ---- */

/* --gpus N outside mpirun: run again as N ranks of mpirun and exit with its status;
 * returns only when mpirun cannot be started. */
int run_start_ranks(int gpus, int argc, char **argv, struct rs_error *err);

#endif
