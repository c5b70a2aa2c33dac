/*
 * library.h - the materials library shipped with roomsim (materials/library.yaml, built into
 * the binary): each entry's absorption and scattering per octave band (either may be
 * missing, not both), what it is, and its source.
 */
#ifndef IO_LIBRARY_H
#define IO_LIBRARY_H

#include "../common/rs_error.h"
#include "../solver/wall.h"

#define LIBRARY_FILE "materials/library.yaml"
#define LIBRARY_TEXT 1024	/* longest description or source text kept */

struct library_material {
	char name[64];
	char description[LIBRARY_TEXT];
	char category[128];
	int source;		/* index into the library's sources */
	struct wall_bands bands;	/* absorption; n = 0: none */
	struct wall_bands scat;		/* scattering coefficients (ISO 17497-1); n = 0: none */
};

struct library {
	int n;
	struct library_material *m;
	int nsources;
	char source_key[16][64];
	char source_text[16][LIBRARY_TEXT];
};

/* Read the built-in library; errors name LIBRARY_FILE:LINE:COL and the key. */
int library_load(struct library *lib, struct rs_error *err);

/* The entry named name, or NULL. */
const struct library_material *library_find(const struct library *lib, const char *name);

void library_free(struct library *lib);

#endif
