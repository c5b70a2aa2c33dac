/*
 * helper.h - run the CPU engine on a room given as YAML text, for the physics tests.
 */
#ifndef TESTS_HELPER_H
#define TESTS_HELPER_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cmocka.h>

#include "../geometry/voxel.h"
#include "../io/config.h"
#include "../solver/fdtd.h"


struct wall_banks;	/* solver/wall.h (it brings complex.h, which changes fftw_complex) */
struct wall_model;

struct sim {
	struct room *room;
	struct vox_grid *grid;
	struct fdtd *engine;
	struct stn_stencil stencil;	/* the room's scheme */
	double lambda;		/* Courant number */
	double dt;		/* time step, s */
	long steps;		/* steps covering room->duration */
	struct wall_banks *banks;	/* the fits of its materials given by band */
};

/* Parse yaml, voxelise, create the engine with every receiver; fails the test on error. */
struct sim *sim_open(const char *yaml);

/* (Re)create s's engine on its grid with the materials' banks (solver/wall.h; NULL entries:
 * scalar walls), every receiver added and room for its steps; fails the test on error. */
void sim_engine(struct sim *s, const struct wall_model *const *banks);

/* Reset and run source s for steps steps (all of them when steps < 0). */
void sim_run(struct sim *s, int source, long steps);

void sim_close(struct sim *s);

/* Carve s's grid into an L with a stepped ceiling: no cells with x > x1 and y > y1, and none
 * above z1 where x < x2 (vox_carve, material 0). The engine is not rebuilt. */
void sim_carve_l(struct sim *s, double x1, double y1, double z1, double x2);

/* Run the shell command made from fmt and its arguments; its exit status (-1 when it did not
 * exit). */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Wait for a state, not a time: start the shell command made from fmt and its arguments in
 * the background with ROOMSIM_HOLD_AT=at in its environment (a run holds at that step of its
 * first source until a signal), and wait until the file at log, where the command sends its
 * stderr, says "holding at step AT" (at most AWAIT_SECONDS, and only while the command
 * runs). Its pid, to signal; fails the test when it never holds.
 */
#define AWAIT_SECONDS 900
pid_t start_held(const char *log, long at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* pid's exit status, or 128 + the signal that ended it; fails the test when pid is not a
 * child that ends. */
int exit_status(pid_t pid);

/* T30 of x (n samples at rate fs): the -5 to -35 dB span of the Schroeder curve, fitted by
 * least squares, times two; fails the test when the curve does not span it. */
double t30(const double *x, size_t n, double fs);

/* Every frame of the WAV file at path, channels interleaved, malloc'd; its frames, channels
 * and rate. Fails the test when the file cannot be read. */
double *wav_read(const char *path, size_t *frames, int *channels, int *rate);

/* Index and value of the largest |x[i]| for i in [from, to). */
size_t peak_index(const double *x, size_t from, size_t to);

/* The peak position refined by a parabola through the three samples around it. */
double peak_refined(const double *x, size_t i);

#endif
