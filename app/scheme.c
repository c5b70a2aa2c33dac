/*
 * scheme.c - `roomsim scheme`: a stencil's size, Courant limit and dispersion
 * (docs/stencils.md), computed from the scheme's amplification symbol.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "../solver/stencil.h"

static const char usage_scheme[] =
	"usage: roomsim scheme [FILE.yaml] [--csv FILE]\n"
	"       roomsim scheme [--stencil leggy|compact|box|interpolated|fcc] [--order 2M]\n"
	"                      [--radius2 R] [--q Q1,Q2,Q3] [--weights A1,A2,...]\n"
	"                      [--variant NAME] [--courant C] [--csv FILE]\n"
	"\n"
	"Print a stencil's size and reach, the Courant limit of its two-step scheme (the\n"
	"maximum of its symbol over the Brillouin zone), the relative phase-velocity error\n"
	"against points per wavelength along the axial, side-diagonal and diagonal directions\n"
	"and its worst case and mean over all directions, the points per wavelength that keep\n"
	"the worst case under 1 %% and 2 %%, those at which its mean error is at most the\n"
	"7-point scheme's at every frequency up to fmax, and the cell updates a room needs at\n"
	"both against the 7-point scheme's; --csv writes the curves. With a room file, its\n"
	"scheme at its grid.courant; otherwise the one the options give.\n"
	"\n"
	"  --stencil leggy --order 2M      (6M + 1)-point leggy stencil, 2M = 2..16 (default 2)\n"
	"  --stencil compact --radius2 R   shells with |q|^2 <= R, R = 1..22 a sum of 3 squares\n"
	"  --stencil box --q Q1,Q2,Q3      shells up to (Q1, Q2, Q3), e.g. 2,2,2 = 125 points\n"
	"  --weights A1,...                per-shell weights (sum 1; default: docs/stencils.md)\n"
	"  --stencil interpolated --variant NAME\n"
	"                                  27-point scheme: IWB, IISO, IISO2, CCP, OCTA, IDWM,\n"
	"                                  SRL (SLF), at its published Courant number\n"
	"  --stencil fcc                   13-point scheme on the FCC lattice (half the nodes\n"
	"                                  of the cubic grid at the same spacing)\n"
	"  --courant C                     fraction of the Courant limit (default 1)\n";

struct scheme_opts {
	int family;		/* enum room_stencil */
	int order, radius2, q[3], nweights, variant;
	double weights[STN_MAX_SHELLS], courant;	/* courant < 0: the scheme's default */
	const char *csv, *room;
};

static int parse(int argc, char **argv, struct scheme_opts *o)
{
	static const struct option opts[] = {
		{ "stencil", required_argument, NULL, 's' }, { "order", required_argument, NULL, 'o' },
		{ "radius2", required_argument, NULL, 'r' }, { "q", required_argument, NULL, 'Q' },
		{ "weights", required_argument, NULL, 'w' }, { "courant", required_argument, NULL, 'c' },
		{ "csv", required_argument, NULL, 'v' },     { "help", no_argument, NULL, 'h' },
		{ "variant", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct scheme_opts){ .order = 2, .radius2 = 3, .q = { 2, 2, 2 }, .courant = -1 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *p, *end;

		switch (c) {
		case 's':
			o->family = !strcmp(optarg, "leggy") ? ROOM_STENCIL_LEGGY
				    : !strcmp(optarg, "compact") ? ROOM_STENCIL_COMPACT
				    : !strcmp(optarg, "box") ? ROOM_STENCIL_BOX
				    : !strcmp(optarg, "interpolated") ? ROOM_STENCIL_INTERPOLATED
				    : !strcmp(optarg, "fcc") ? ROOM_STENCIL_FCC : -1;
			if (o->family < 0)
				return fprintf(stderr, "roomsim: --stencil: '%s' is not valid (valid: "
					       "leggy | compact | box | interpolated | fcc)\n", optarg), -1;
			break;
		case 'V':
			for (o->variant = 0; stn_variant_names[o->variant] &&
			     strcmp(stn_variant_names[o->variant], optarg); o->variant++)
				;
			if (!stn_variant_names[o->variant])
				return fprintf(stderr, "roomsim: --variant: '%s' is not valid (valid: "
					       "IWB, IISO, IISO2, CCP, OCTA, IDWM, SRL, SLF)\n",
					       optarg), -1;
			break;
		case 'o':
			o->order = atoi(optarg);
			break;
		case 'r':
			o->radius2 = atoi(optarg);
			break;
		case 'Q':
			if (sscanf(optarg, "%d,%d,%d", &o->q[0], &o->q[1], &o->q[2]) != 3)
				return fprintf(stderr, "roomsim: --q: expected Q1,Q2,Q3\n"), -1;
			break;
		case 'w':
			for (p = optarg; *p && o->nweights < STN_MAX_SHELLS; p = *end ? end + 1 : end) {
				o->weights[o->nweights++] = strtod(p, &end);
				if (end == p)
					return fprintf(stderr, "roomsim: --weights: expected numbers "
						       "separated by commas\n"), -1;
			}
			break;
		case 'c':
			o->courant = atof(optarg);
			if (!(o->courant > 0 && o->courant <= 1))
				return fprintf(stderr, "roomsim: --courant: valid: (0, 1]\n"), -1;
			break;
		case 'v':
			o->csv = optarg;
			break;
		case 'h':
			printf("%s", usage_scheme);
			exit(EXIT_OK);
		default:
			return fprintf(stderr, "roomsim: see 'roomsim scheme --help'\n"), -1;
		}
	}
	if (optind < argc)
		o->room = argv[optind++];
	return optind == argc ? 0 : (fprintf(stderr, "roomsim: unexpected '%s'\n", argv[optind]), -1);
}

static int build(struct scheme_opts *o, struct stn_stencil *s)
{
	struct stn_shell sh[STN_MAX_SHELLS];
	int n;

	if (o->family == ROOM_STENCIL_LEGGY) {
		if (o->order < 2 || o->order > 2 * STN_MAX_LEGGY || o->order % 2)
			return fprintf(stderr, "roomsim: --order: valid: 2, 4, ..., %d\n",
				       2 * STN_MAX_LEGGY), -1;
		return stn_leggy(s, o->order / 2);
	}
	if (o->family == ROOM_STENCIL_INTERPOLATED)
		return stn_interpolated(s, o->variant);
	if (o->family == ROOM_STENCIL_FCC)
		return stn_fcc(s);
	n = o->family == ROOM_STENCIL_COMPACT ? stn_compact_shells(o->radius2, sh, STN_MAX_SHELLS)
					     : stn_box_shells(o->q, sh, STN_MAX_SHELLS);
	if (n < 0)
		return fprintf(stderr, "roomsim: %s\n", o->family == ROOM_STENCIL_COMPACT
			       ? "--radius2: valid: 1 to 22, a sum of three squares (not 7, 15)"
			       : "--q: valid: Q1 >= Q2 >= Q3 >= 0, 1 <= Q1 <= 4"), -1;
	if (o->nweights && o->nweights != n)
		return fprintf(stderr, "roomsim: --weights: this stencil has %d shells, %d weights "
			       "given\n", n, o->nweights), -1;
	if (!o->nweights) {
		printf("weights    %s\n", stn_default_weights(sh, n, o->weights)
		       ? "default: fitted to the dispersion-free symbol (docs/stencils.md)"
		       : "default: equal (no stable fit does better)");
		o->nweights = n;
	}
	if (stn_from_shells(s, sh, n, o->weights,
			    o->family == ROOM_STENCIL_COMPACT ? "compact-in-space" : "box-compact"))
		return fprintf(stderr, "roomsim: --weights: the shell weights must sum to 1\n"), -1;
	printf("shells    ");
	for (int p = 0; p < n; p++)
		printf(" (%d,%d,%d) %.6g%s", sh[p].q[0], sh[p].q[1], sh[p].q[2], o->weights[p],
		       p + 1 < n ? "," : "\n");
	return 0;
}

/* The scheme of a room file, at its grid.courant. */
static int from_room(struct scheme_opts *o, struct stn_stencil *s)
{
	struct rs_error err = { 0 };
	struct room *room = cfg_load(o->room, &err);
	int rc = 0;

	if (!room) {
		fprintf(stderr, "roomsim: %s\n", err.msg);
		return app_exit_status(err.code);
	}
	if (stn_from_config(room, s)) {
		fprintf(stderr, "roomsim: %s: the scheme's stencil is not valid\n", o->room);
		rc = EXIT_USAGE;
	}
	o->courant = room->courant;
	room_free(room);
	return rc;
}

/*
 * Cell updates for a room and a duration at ppw points per wavelength and Courant number
 * lambda, up to a factor common to all schemes: ppw^3 cells (half as many nodes on the fcc
 * lattice) times ppw / lambda steps.
 */
static double work(const struct stn_stencil *s, double lambda, double ppw)
{
	return pow(ppw, 4) / lambda * (s->fcc ? 0.5 : 1);
}

/* Points per wavelength of the printed and written curves. */
static const double table_ppw[] = { 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, 50 };

int cmd_scheme(int argc, char **argv)
{
	static struct stn_stencil s, seven;	/* large: not on the stack */
	struct scheme_opts o;
	double limit, lambda, p1, p2, l7, p7, pm;
	FILE *csv = NULL;

	if (parse(argc, argv, &o))
		return EXIT_USAGE;
	if (o.room) {
		const int rc = from_room(&o, &s);

		if (rc)
			return rc;
	} else if (build(&o, &s)) {
		return EXIT_USAGE;
	}
	limit = stn_courant_limit(&s);
	printf("stencil    %s, reach %d cells\n", s.name, s.reach);
	if (limit <= 0) {
		printf("stability  unstable for every Courant number (the symbol is positive "
		       "somewhere)\n");
		return EXIT_OK;
	}
	/* a named scheme at its published Courant number, any other at its limit */
	if (o.courant < 0)
		o.courant = s.courant > 0 ? fmin(1, s.courant / limit) : 1;
	lambda = o.courant * limit;
	printf("courant    limit %.6f; analysed at %.6f (%.4g of it)", limit, lambda, o.courant);
	if (s.courant > 0)
		printf("; published %.6f", s.courant);
	printf("\n");
	p1 = stn_ppw_for(&s, lambda, 0.01);
	p2 = stn_ppw_for(&s, lambda, 0.02);
	printf("ppw        1 %% worst-case error: %.2f points per wavelength, 2 %%: %.2f\n", p1,
	       p2);
	printf("mean       error over all directions there: %.2f %% and %.2f %%\n",
	       100 * stn_mean_error(&s, lambda, p1), 100 * stn_mean_error(&s, lambda, p2));
	/* against the 7-point scheme at its limit and 1 % worst-case error */
	stn_leggy(&seven, 1);
	l7 = stn_courant_limit(&seven);
	p7 = stn_ppw_for(&seven, l7, 0.01);
	if (s.fcc)	/* ppw counts the cubic spacing h; the lattice has half its nodes */
		printf("nodes      half those of the cubic grid at the same spacing: %.2f nodes "
		       "per cubic wavelength for 1 %%, against %.2f for the 7-point scheme\n",
		       pow(p1, 3) / 2, pow(p7, 3));
	pm = stn_ppw_matching(&s, lambda, &seven, l7, p7);
	printf("matching   the 7-point scheme's mean error at every frequency up to fmax (at %.2f "
	       "points per wavelength): %.2f points per wavelength\n", p7, pm);
	printf("work       cell updates for a room and duration against the 7-point scheme's: "
	       "%.2f at 1 %% worst-case error, %.2f at its accuracy across the band\n",
	       work(&s, lambda, p1) / work(&seven, l7, p7), work(&s, lambda, pm) / work(&seven, l7, p7));
	if (o.csv && !(csv = fopen(o.csv, "w"))) {
		fprintf(stderr, "roomsim: %s: cannot write\n", o.csv);
		return EXIT_RUNTIME;
	}
	if (csv)
		fprintf(csv, "ppw,f_h_over_c,axial,side_diagonal,diagonal,worst,mean\n");
	printf("%8s %10s %10s %10s %10s %10s   (relative phase-velocity error)\n", "ppw",
	       "axial", "side-diag", "diagonal", "worst", "mean |e|");
	for (size_t i = 0; i < sizeof(table_ppw) / sizeof(table_ppw[0]); i++) {
		const double p = table_ppw[i], w = stn_worst_error(&s, lambda, p);
		const double mean = stn_mean_error(&s, lambda, p);
		double e[STN_NDIRS];

		for (int d = 0; d < STN_NDIRS; d++)
			e[d] = stn_phase_error(&s, lambda, (enum stn_dir)d, p);
		printf("%8.1f %+10.5f %+10.5f %+10.5f %10.5f %10.5f\n", p, e[0], e[1], e[2], w,
		       mean);
		if (csv)
			fprintf(csv, "%g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n", p, 1 / p, e[0], e[1],
				e[2], w, mean);
	}
	if (csv && fclose(csv)) {
		fprintf(stderr, "roomsim: %s: write failed\n", o.csv);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
