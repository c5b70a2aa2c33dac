/*
 * rs_phase.c - the phase stamps of rs_phase.h.
 */
#include "rs_phase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int phase_rank = -1;	/* -1: the process that starts the ranks, or the only one */

void rs_phase_rank(int rank)
{
	phase_rank = rank;
}

int rs_phases(void)
{
	const char *env = getenv("ROOMSIM_PHASES");

	return env && *env && strcmp(env, "0");
}

void rs_phase(const char *what)
{
	static double origin, last;
	struct timespec t;
	double now;

	if (!rs_phases())
		return;
	clock_gettime(CLOCK_REALTIME, &t);	/* since the epoch: ranks and mpirun share it */
	now = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
	if (origin == 0) {	/* a time since the epoch given, or the first stamp's */
		const double env = atof(getenv("ROOMSIM_PHASES"));

		origin = env > 1e9 ? env : now;
		last = origin;
	}
	if (phase_rank >= 0)
		fprintf(stderr, "roomsim: phase rank %d: %8.3f s (+%.3f) %s\n", phase_rank,
			now - origin, now - last, what);
	else
		fprintf(stderr, "roomsim: phase: %8.3f s (+%.3f) %s\n", now - origin, now - last,
			what);
	last = now;
}
