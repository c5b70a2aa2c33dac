/*
 * materials.c - `roomsim materials [NAME]`: the materials library, and the passive fit of an
 * entry's band absorption (solver/wall.h) against its targets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/library.h"
#include "../io/plot.h"
#include "../solver/wall.h"
#include "app.h"

static const char usage_materials[] =
	"usage: roomsim materials [NAME] [--fmax HZ] [--plot DIR]\n"
	"\n"
	"Without NAME, list the materials library (materials/library.yaml): each entry's name,\n"
	"whether the passive wall model fits its absorption, its absorption and its scattering\n"
	"coefficients per octave band from 125 Hz (an entry may have either or both).\n"
	"With NAME, print the entry, its source, its scattering, and per band the target and\n"
	"the fitted random-incidence absorption (band averages), then the model's branches, and\n"
	"plot target against fitted alpha(f) and the model's |R(f)| into DIR/NAME.png and .svg.\n"
	"  --fmax HZ   fit the bands up to HZ (default: every band given)\n"
	"  --plot DIR  where the plots go (default: the current directory)\n";

static int print_entry(const struct library *lib, const struct library_material *m,
		       double fmax, const char *dir)
{
	struct wall_fit fit;
	struct rs_error err = { 0 };
	char base[4096], title[300];

	printf("%s: %s\n", m->name, m->description);
	printf("category  %s\nsource    %s\n", m->category, lib->source_text[m->source]);
	if (m->scat.n) {
		printf("\n%9s %10s\n", "band Hz", "scattering");
		for (int b = 0; b < m->scat.n; b++)
			printf("%9g %10.2f\n", m->scat.f[b], m->scat.alpha[b]);
	}
	if (!m->bands.n) {
		printf("\nno absorption: name it as a material's scattering (docs/input.md)\n");
		return 0;
	}
	if (wall_fit(&m->bands, fmax, &fit)) {
		printf("the bands cannot be fitted\n");
		return 0;
	}
	printf("\n%9s %8s %8s %8s\n", "band Hz", "target", "fitted", "");
	for (int b = 0; b < m->bands.n; b++)
		printf("%9g %8.3f %8.3f %s\n", m->bands.f[b], m->bands.alpha[b], fit.fitted[b],
		       b >= fit.used ? "(above fmax: not fitted)"
		       : wall_band_missed(fit.fitted[b], m->bands.alpha[b]) ? "MISSES" : "");
	printf("\n%d branches (normalised by rho c): r, m (s), k (1/s)\n", fit.model.n);
	for (int j = 0; j < fit.model.n; j++)
		printf("  %10.4g %12.4g %12.4g\n", fit.model.r[j], fit.model.m[j], fit.model.k[j]);
	if (fit.misses)
		printf("\n%d band(s) miss the target by more than 0.02 and 5 %% (docs/physics.md, "
		       "\"Frequency-dependent walls\")\n", fit.misses);
	snprintf(base, sizeof(base), "%s/%s", dir, m->name);
	snprintf(title, sizeof(title), "%s: %d branches", m->name, fit.model.n);
	if (plot_fit(base, title, &m->bands, &fit, &err)) {
		fprintf(stderr, "roomsim: %s\n", err.msg);
		return EXIT_RUNTIME;
	}
	printf("\nplot      %s.png, %s.svg\n", base, base);
	return 0;
}

int cmd_materials(int argc, char **argv)
{
	struct library lib;
	struct rs_error err = { 0 };
	const char *name = NULL, *dir = ".";
	double fmax = 1e9;
	int rc = EXIT_OK;

	for (int a = 1; a < argc; a++) {
		char *end;

		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			fputs(usage_materials, stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[a], "--fmax") && a + 1 < argc) {
			fmax = strtod(argv[++a], &end);
			if (*end || !(fmax > 0))
				return fprintf(stderr, "roomsim materials: --fmax: '%s' is not valid "
					       "(valid: a frequency in Hz above 0)\n", argv[a]),
				       EXIT_USAGE;
			continue;
		}
		if (!strcmp(argv[a], "--plot") && a + 1 < argc) {
			dir = argv[++a];
			continue;
		}
		if (argv[a][0] == '-' || name)
			return fprintf(stderr, "roomsim materials: '%s' is not valid here (see "
				       "roomsim materials --help)\n", argv[a]), EXIT_USAGE;
		name = argv[a];
	}
	if (library_load(&lib, &err)) {
		fprintf(stderr, "roomsim: %s\n", err.msg);
		return EXIT_RUNTIME;
	}
	if (name) {
		const struct library_material *m = library_find(&lib, name);

		if (!m) {
			fprintf(stderr, "roomsim materials: no material named '%s' in the library "
				"(roomsim materials lists them)\n", name);
			library_free(&lib);
			return EXIT_USAGE;
		}
		rc = print_entry(&lib, m, fmax, dir);
	} else {
		printf("%-32s %-8s %-42s %s\n", "name", "fit", "absorption from 125 Hz by octave",
		       "scattering");
		for (int i = 0; i < lib.n; i++) {
			const struct library_material *m = &lib.m[i];
			struct wall_fit fit;
			char fitted[32], list[64] = "-";
			int len = 0;

			if (!m->bands.n)
				snprintf(fitted, sizeof(fitted), "-");
			else if (wall_fit(&m->bands, fmax, &fit))
				snprintf(fitted, sizeof(fitted), "failed");
			else
				snprintf(fitted, sizeof(fitted), fit.misses ? "%d miss" : "ok",
					 fit.misses);
			for (int b = 0; b < m->bands.n; b++)
				len += snprintf(list + len, sizeof(list) - (size_t)len, "%s%.2f",
						b ? " " : "", m->bands.alpha[b]);
			printf("%-32s %-8s %-42s", m->name, fitted, list);
			for (int b = 0; b < m->scat.n; b++)
				printf("%s%.2f", b ? " " : "", m->scat.alpha[b]);
			printf("%s\n", m->scat.n ? "" : "-");
		}
		printf("%d materials (materials/library.yaml)\n", lib.n);
	}
	library_free(&lib);
	return rc;
}
