/* helper.c - see helper.h. */
#include "helper.h"

#include <math.h>
#include <sndfile.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../solver/signal.h"
#include "../solver/wall.h"

struct sim *sim_open(const char *yaml)
{
	struct rs_error err = { 0 };
	struct sim *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->room = cfg_load_string(yaml, "test.yaml", &err);
	if (!s->room)
		fail_msg("%s", err.msg);
	s->grid = vox_build(s->room, &err);
	assert_non_null(s->grid);
	assert_int_equal(stn_from_config(s->room, &s->stencil), 0);
	s->lambda = s->room->courant * stn_courant_limit(&s->stencil);
	s->dt = s->lambda * s->room->spacing / s->room->c;
	s->steps = (long)ceil(s->room->duration / s->dt - 1e-9);
	assert_int_equal(wall_banks_of(s->room, &s->banks), 0);
	sim_engine(s, s->banks->bank);
	return s;
}

void sim_engine(struct sim *s, const struct wall_model *const *banks)
{
	struct rs_error err = { 0 };
	struct fdtd_setup setup = { .grid = s->grid, .stencil = &s->stencil, .lambda = s->lambda,
				    .precision = s->room->precision, .banks = banks,
				    .nbanks = s->room->nmaterials, .dt = s->dt };

	fdtd_destroy(s->engine);
	s->engine = fdtd_create(&setup, &err);
	if (!s->engine)
		fail_msg("%s", err.msg);
	for (int r = 0; r < s->room->nreceivers; r++)
		assert_int_equal(fdtd_add_receiver(s->engine, s->room->receivers[r].pos), r);
	assert_int_equal(fdtd_reserve(s->engine, (size_t)s->steps + 1), 0);
}

void sim_run(struct sim *s, int source, long steps)
{
	double *sig = malloc((size_t)s->steps * sizeof(double));

	assert_non_null(sig);
	fdtd_reset(s->engine);
	sig_source(&s->room->sources[source], s->dt, (size_t)s->steps, sig);
	assert_true(fdtd_add_source(s->engine, s->room->sources[source].pos, sig,
				    (size_t)s->steps) >= 0);
	free(sig);
	assert_int_equal(fdtd_advance(s->engine, steps < 0 ? s->steps : steps, NULL), 0);
}

void sim_close(struct sim *s)
{
	fdtd_destroy(s->engine);
	free(s->banks);
	vox_free(s->grid);
	room_free(s->room);
	free(s);
}

void sim_carve_l(struct sim *s, double x1, double y1, double z1, double x2)
{
	const double lo1[3] = { x1, y1, -1 }, hi1[3] = { 1e9, 1e9, 1e9 };
	const double lo2[3] = { -1, -1, z1 }, hi2[3] = { x2, 1e9, 1e9 };
	struct rs_error err = { 0 };

	assert_int_equal(vox_carve(s->grid, s->room, lo1, hi1, 0, &err), 0);
	assert_int_equal(vox_carve(s->grid, s->room, lo2, hi2, 0, &err), 0);
}

int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}


/* 1 when the file at path holds text. */
static int holds(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Wait until the file at path holds text while pid runs: 0 when it does; -1, after saying
 * why, when pid ended first or AWAIT_SECONDS passed. */
static int await_text(const char *path, const char *text, pid_t pid)
{
	const struct timespec tick = { 0, 20000000 };
	siginfo_t info;

	for (long i = 0; i < AWAIT_SECONDS * 50L; i++) {
		if (holds(path, text))
			return 0;
		info.si_pid = 0;	/* still running: waitid leaves it 0 */
		if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    info.si_pid == pid) {
			print_message("# %s: the process ended before it said '%s'\n", path, text);
			return holds(path, text) ? 0 : -1;
		}
		nanosleep(&tick, NULL);
	}
	print_message("# %s: no '%s' after %d s\n", path, text, AWAIT_SECONDS);
	return -1;
}

pid_t start_held(const char *log, long at, const char *fmt, ...)
{
	char cmd[2048], text[64];
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char at_s[32];

		snprintf(at_s, sizeof(at_s), "%ld", at);
		setenv("ROOMSIM_HOLD_AT", at_s, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	snprintf(text, sizeof(text), "holding at step %ld ", at);
	assert_int_equal(await_text(log, text, pid), 0);
	return pid;
}

int exit_status(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

size_t peak_index(const double *x, size_t from, size_t to)
{
	size_t best = from;

	for (size_t i = from; i < to; i++)
		if (fabs(x[i]) > fabs(x[best]))
			best = i;
	return best;
}

double peak_refined(const double *x, size_t i)
{
	double a = x[i - 1], b = x[i], c = x[i + 1], d = a - 2 * b + c;

	return d == 0 ? (double)i : (double)i + 0.5 * (a - c) / d;
}

double t30(const double *x, size_t n, double fs)
{
	double *e = malloc(n * sizeof(double)), total, sx = 0, sy = 0, sxx = 0, sxy = 0;
	int m = 0;

	assert_non_null(e);
	e[n - 1] = x[n - 1] * x[n - 1];
	for (size_t i = n - 1; i-- > 0;)
		e[i] = e[i + 1] + x[i] * x[i];
	total = e[0];
	for (size_t i = 0; i < n; i++) {
		double db = 10 * log10(e[i] / total), t = (double)i / fs;

		if (db > -5 || db < -35)
			continue;
		sx += t;
		sy += db;
		sxx += t * t;
		sxy += t * db;
		m++;
	}
	free(e);
	assert_true(m > 10);
	/* the slope is in dB/s; -60 dB over the slope is the time a 60 dB decay takes */
	return -60 / ((m * sxy - sx * sy) / (m * sxx - sx * sx));
}

double *wav_read(const char *path, size_t *frames, int *channels, int *rate)
{
	SF_INFO info = { 0 };
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	double *x;

	assert_non_null(sf);
	x = malloc((size_t)info.frames * (size_t)info.channels * sizeof(double) + 1);
	assert_non_null(x);
	assert_int_equal(sf_readf_double(sf, x, info.frames), info.frames);
	sf_close(sf);
	*frames = (size_t)info.frames;
	*channels = info.channels;
	*rate = info.samplerate;
	return x;
}
