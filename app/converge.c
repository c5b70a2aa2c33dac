/*
 * converge.c - `roomsim converge`: a room run at rising resolution with each scheme, every run
 * against a converged one (the 7-point scheme at many points per wavelength, or a scheme named
 * with --reference at a small dispersion), per octave band (docs/performance.md, "Accuracy in
 * real rooms").
 *
 * Each run is `roomsim run` in a process of its own (this binary, /proc/self/exe), the scheme
 * and grid given with --set, its WAVs in OUT/NAME/. Against the reference's WAVs of the same
 * source and receiver, per octave band up to fmax:
 *   spectrum  the rms over the octave's six sixth-octave bands of their level differences
 *   early     the level difference of the first 50 ms after the direct sound
 *   T30, EDT  the relative differences (ISO 3382-1, as roomsim analyze gives them)
 *   C80       the difference
 * each the worst over the pairs. With --placements N each scheme and dispersion runs N times, at
 * dispersions a percent apart (spacings about half a percent apart), so that the grid falls
 * elsewhere on the room: the walls' staircases, a box's rounded sides, the sources and
 * receivers within their cells; the table adds each measure's mean over those runs and its
 * range (largest less smallest).
 */
#include <errno.h>
#include <fcntl.h>
#include <fftw3.h>
#include <getopt.h>
#include <math.h>
#include <sndfile.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze.h"
#include "app.h"
#include "../io/config.h"
#include "../solver/iso3382.h"
#include "../solver/stencil.h"

#define MAX_RUNS 32
#define REFERENCE_PPW 24.0	/* the reference: the 7-point scheme, its dispersion 0.1 % */
#define EARLY_SECONDS 0.05	/* the early window after the direct sound */
#define SIXTHS 6
#define MAX_PLACEMENTS 5

/* --placements: each run's grid.dispersion, as a factor of the one listed */
static const double placement[MAX_PLACEMENTS] = { 1, 1.01, 0.99, 1.02, 0.98 };

extern char **environ;

static const char usage_converge[] =
	"usage: roomsim converge FILE.yaml [--schemes LIST] [--dispersions LIST]\n"
	"                        [--reference PPW|NAME:D] [--out DIR] [--backend cpu|cuda|auto]\n"
	"                        [--placements N] [--set KEY=VALUE]... [--reuse] [-q]\n"
	"\n"
	"Run the room of FILE.yaml with each scheme of LIST at each grid.dispersion of LIST,\n"
	"and once with the 7-point scheme at PPW points per wavelength (default 24), or with\n"
	"scheme NAME at grid.dispersion D, the reference; print each run's error against the\n"
	"reference per octave band up to fmax, the worst over the source-receiver pairs, and\n"
	"its time:\n"
	"  spectrum  rms of the sixth-octave level differences over the octave, dB\n"
	"  early     level difference of the first 50 ms after the direct sound, dB\n"
	"  T30, EDT  relative differences, %; C80 difference, dB\n"
	"\n"
	"  --schemes LIST      comma-separated, of 7-point, leggy-4, compact-r2, compact-r3,\n"
	"                      compact-r4, iwb, iiso, fcc, auto (default 7-point,auto)\n"
	"  --dispersions LIST  grid.dispersion of each run (default 0.04,0.02,0.01)\n"
	"  --reference PPW     the reference's points per wavelength at fmax (the 7-point\n"
	"                      scheme), or NAME:D, a scheme of LIST but auto at grid.dispersion\n"
	"                      D (e.g. fcc:0.001: a reference without the 7-point scheme's\n"
	"                      error along the axes, which its runs share)\n"
	"  --out DIR           each run's outputs in DIR/NAME, the table in DIR/converge.csv\n"
	"                      (default: output.dir of the file, /converge)\n"
	"  --placements N      each scheme and dispersion D run N times (1 to 5, default 1),\n"
	"                      at D, 1.01 D, 0.99 D, 1.02 D, 0.98 D, so that the grid falls\n"
	"                      elsewhere on the room each time (the walls' staircases, the\n"
	"                      sources and receivers in their cells); the table adds each\n"
	"                      measure's mean over the N runs and its range (largest less\n"
	"                      smallest), as NAME-mean and NAME-range\n"
	"  --backend NAME      as roomsim run's\n"
	"  --set KEY=VALUE     as roomsim run's, for every run (e.g. duration=0.5)\n"
	"  --reuse             a run whose outputs in DIR are an earlier converge's with the\n"
	"                      same room file, settings and build is not run again (the\n"
	"                      reference made once serves later lists of schemes)\n"
	"  -q, --quiet         only the table\n"
	"\n"
	"Exit status: 0 done, 1 a run failed, 2 bad usage or bad input.\n";

/* The schemes it knows: a name and the settings that make a room run it. */
static const struct {
	const char *name;
	const char *sets[3];
} schemes[] = {
	{ "7-point", { "scheme.stencil=leggy", "scheme.order=2", NULL } },
	{ "leggy-4", { "scheme.stencil=leggy", "scheme.order=4", NULL } },
	{ "compact-r2", { "scheme.stencil=compact", "scheme.radius2=2", NULL } },
	{ "compact-r3", { "scheme.stencil=compact", "scheme.radius2=3", NULL } },
	{ "compact-r4", { "scheme.stencil=compact", "scheme.radius2=4", NULL } },
	{ "iwb", { "scheme.stencil=interpolated", "scheme.variant=IWB", NULL } },
	{ "iiso", { "scheme.stencil=interpolated", "scheme.variant=IISO", NULL } },
	{ "fcc", { "scheme.stencil=fcc", NULL, NULL } },
	{ "auto", { "scheme.stencil=auto", NULL, NULL } },
};
#define NSCHEMES (int)(sizeof(schemes) / sizeof(schemes[0]))

/* What a scheme's settings replace: every key that belongs to one stencil or one grid. */
static const char *const cleared[] = { "scheme.stencil=", "scheme.order=", "scheme.radius2=",
				       "scheme.q=", "scheme.weights=", "scheme.variant=",
				       "scheme.kernel=", "scheme.dts=", "scheme.nt=",
				       "scheme.split=", "grid.ppw=", "grid.spacing=",
				       "grid.dispersion=", "grid.courant=", NULL };

struct crun {
	char name[64];		/* its folder */
	char why[200];		/* a failed run: the last line of its log */
	int scheme;		/* index into schemes[]; -1: the reference */
	int last;		/* the last run of its placements (--placements) */
	double dispersion;
	double seconds;		/* wall time */
	int rc;			/* its exit status */
	int reused;		/* its outputs an earlier run's (--reuse) */
	long cells;		/* its grid's, from its log */
	char chosen[96];	/* auto: what it chose */
	/* per band: the worst over the pairs */
	double spectrum[ISO_MAX_BANDS], early[ISO_MAX_BANDS], t30[ISO_MAX_BANDS],
		edt[ISO_MAX_BANDS], c80[ISO_MAX_BANDS];
};

struct copts {
	const char *file, *out, *backend;
	char *sets[APP_MAX_SETS];
	int nsets, quiet, reuse;
	int scheme[NSCHEMES], nscheme;
	double disp[8];
	int ndisp, placements;
	double ref_ppw;
	int ref_scheme;		/* the reference's scheme (index into schemes[]) */
	double ref_disp;	/* named NAME:D, at this grid.dispersion; 0: the 7-point at ref_ppw */
	unsigned long long room_hash;	/* the room file's, as the runs start (file_hash) */
	long room_bytes;
};

/* --reference: PPW (the 7-point scheme) or NAME:D; 0, or -1 for a value not valid. */
static int parse_reference(const char *arg, struct copts *o)
{
	const char *colon = strchr(arg, ':');
	char *end;

	o->ref_scheme = 0;
	o->ref_disp = 0;
	if (!colon) {
		o->ref_ppw = strtod(arg, &end);
		return *end || !(o->ref_ppw >= 4 && o->ref_ppw <= 200) ? -1 : 0;
	}
	while (o->ref_scheme < NSCHEMES - 1 &&	/* not auto, the last */
	       (strncmp(schemes[o->ref_scheme].name, arg, (size_t)(colon - arg)) ||
		schemes[o->ref_scheme].name[colon - arg]))
		o->ref_scheme++;
	o->ref_disp = strtod(colon + 1, &end);
	return o->ref_scheme == NSCHEMES - 1 || *end || colon[1] == 0 ||
			       !(o->ref_disp >= 1e-4 && o->ref_disp <= 0.5)
		       ? -1
		       : 0;
}

static int parse_list(const char *arg, struct copts *o, int schemes_list, struct rs_error *err)
{
	char buf[512], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (schemes_list) {
			int k = 0;

			while (k < NSCHEMES && strcmp(schemes[k].name, tok))
				k++;
			if (k == NSCHEMES || o->nscheme == NSCHEMES)
				return rs_fail(err, RS_EINPUT, "--schemes: '%s' is not a scheme it "
					       "knows (valid: 7-point, leggy-4, compact-r2, compact-r3, "
					       "compact-r4, iwb, iiso, fcc, auto)", tok);
			o->scheme[o->nscheme++] = k;
		} else {
			char *end;
			const double d = strtod(tok, &end);

			if (*end || !(d > 0 && d < 0.5) || o->ndisp == 8)
				return rs_fail(err, RS_EINPUT, "--dispersions: '%s' is not valid "
					       "(valid: up to 8 values in (0, 0.5), e.g. 0.04,0.02,0.01)",
					       tok);
			o->disp[o->ndisp++] = d;
		}
	}
	return 0;
}

/* The folder name of scheme k of the list at dispersion d of the list, placement p. */
static void run_name(const struct copts *o, int k, int d, int p, char *name, size_t size)
{
	snprintf(name, size, "%s-d%g", schemes[o->scheme[k]].name, o->disp[d] * placement[p]);
}

static int parse(int argc, char **argv, struct copts *o, struct rs_error *err)
{
	static const struct option opts[] = {
		{ "schemes", required_argument, NULL, 'S' },
		{ "dispersions", required_argument, NULL, 'd' },
		{ "reference", required_argument, NULL, 'R' },
		{ "out", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, 'b' },
		{ "set", required_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "reuse", no_argument, NULL, 'u' },
		{ "placements", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->ref_ppw = REFERENCE_PPW;
	o->placements = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "S:d:R:o:b:s:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (parse_list(optarg, o, 1, err))
				return err->code;
			break;
		case 'd':
			if (parse_list(optarg, o, 0, err))
				return err->code;
			break;
		case 'R':
			if (parse_reference(optarg, o))
				return rs_fail(err, RS_EINPUT, "--reference: '%s' is not valid (valid: "
					       "points per wavelength from 4 to 200, or NAME:D with NAME "
					       "a scheme of --schemes but auto and D from 0.0001 to "
					       "0.5, e.g. fcc:0.001)", optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'b':
			if (app_backend_of(optarg) < 0)
				return rs_fail(err, RS_EINPUT, "--backend: '%s' is not valid (valid: "
					       "cpu | cuda | auto)", optarg);
			o->backend = optarg;
			break;
		case 's':
			if (o->nsets == APP_MAX_SETS - 32)	/* room for a run's own */
				return rs_fail(err, RS_EINPUT, "--set: too many");
			o->sets[o->nsets++] = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'u':
			o->reuse = 1;
			break;
		case 'p': {
			char *end;
			const long n = strtol(optarg, &end, 10);

			if (*end || n < 1 || n > MAX_PLACEMENTS)
				return rs_fail(err, RS_EINPUT, "--placements: '%s' is not valid (valid: "
					       "1 to %d)", optarg, MAX_PLACEMENTS);
			o->placements = (int)n;
			break;
		}
		case 'h':
			fputs(usage_converge, stdout);
			exit(EXIT_OK);
		default:
			return rs_fail(err, RS_EINPUT, "see 'roomsim converge --help'");
		}
	}
	if (optind != argc - 1)
		return rs_fail(err, RS_EINPUT, "expected one room file (see 'roomsim converge "
			       "--help')");
	o->file = argv[optind];
	if (!o->nscheme) {
		o->scheme[o->nscheme++] = 0;
		o->scheme[o->nscheme++] = NSCHEMES - 1;
	}
	if (!o->ndisp) {
		o->disp[o->ndisp++] = 0.04;
		o->disp[o->ndisp++] = 0.02;
		o->disp[o->ndisp++] = 0.01;
	}
	if (1 + o->nscheme * o->ndisp * o->placements > MAX_RUNS)
		return rs_fail(err, RS_EINPUT, "%d schemes at %d dispersions%s make %d runs beside "
			       "the reference, more than %d (valid: fewer schemes, dispersions or "
			       "placements)", o->nscheme, o->ndisp,
			       o->placements > 1 ? " and their placements" : "",
			       o->nscheme * o->ndisp * o->placements, MAX_RUNS - 1);
	for (int i = 0; i < o->nscheme * o->ndisp * o->placements; i++)
		for (int j = 0; j < i; j++) {	/* each run its own folder */
			const int n = o->ndisp * o->placements;
			char a[64], b[64];

			run_name(o, i / n, i % n / o->placements, i % o->placements, a, sizeof(a));
			run_name(o, j / n, j % n / o->placements, j % o->placements, b, sizeof(b));
			if (!strcmp(a, b))
				return rs_fail(err, RS_EINPUT, "--schemes, --dispersions and "
					       "--placements give run %s twice (valid: each scheme "
					       "once, dispersions further apart)", a);
		}
	return 0;
}

/*
 * In a room that is not a box the cells by the carved walls of a larger stencil that is not
 * axial take the 7-point update, stable to a Courant number of 1/sqrt(3) only (fdtd.c): the
 * grid.courant that keeps the scheme of sets there, into out; 0 when none is needed.
 */
static int carved_courant(const struct copts *o, const char *const *sets, char *out,
			  size_t len)
{
	char *all[APP_MAX_SETS];
	int n = 0, rc = 0;
	struct rs_error err = { 0 };
	struct room *r;
	struct stn_stencil *st = malloc(sizeof(*st));	/* large: not on the stack */
	double limit;

	for (int i = 0; i < o->nsets; i++)
		all[n++] = o->sets[i];
	for (int i = 0; cleared[i]; i++)
		all[n++] = (char *)cleared[i];
	for (int i = 0; i < 3 && sets[i]; i++)
		all[n++] = (char *)sets[i];
	if (st && (r = cfg_load_set(o->file, all, n, &err))) {
		if (r->shaped && !r->stencil_auto && r->stencil != ROOM_STENCIL_FCC &&
		    !stn_from_config(r, st) && !stn_is_axial(st) &&
		    (limit = stn_courant_limit(st)) * r->courant > 1 / sqrt(3.0)) {
			snprintf(out, len, "grid.courant=%.6f", floor(1e6 / sqrt(3.0) / limit) / 1e6);
			rc = 1;
		}
		room_free(r);
	}
	free(st);
	return rc;
}

/* FNV-1a of the file at path and its size: what --reuse compares of the room file; 0 when it
 * cannot be read. */
static unsigned long long file_hash(const char *path, long *size)
{
	unsigned long long h = 1469598103934665603ull;
	FILE *f = fopen(path, "rb");
	int ch;

	*size = 0;
	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF) {
		h = (h ^ (unsigned char)ch) * 1099511628211ull;
		++*size;
	}
	fclose(f);
	return h;
}

/*
 * What makes a run's outputs: the build, the room file's bytes and the run's arguments, one
 * line each, into stamp (DIR/NAME.done holds it after the line of its wall time once the run
 * has finished).
 */
static void run_stamp(const struct copts *o, char *const *argv, char *stamp, size_t size)
{
	size_t n = (size_t)snprintf(stamp, size, "build %s\nroom %016llx %ld\n", ROOMSIM_GIT,
				    o->room_hash, o->room_bytes);

	for (int i = 1; argv[i] && n < size; i++)
		n += (size_t)snprintf(stamp + n, size - n, "%s\n", argv[i]);
}

/* --reuse: 1, with c's wall time, when dir/NAME.done holds stamp after it and NAME's folder is
 * there. */
static int reusable(const char *done, const char *out, const char *stamp, struct crun *c)
{
	char *text = calloc(1, 65536);
	FILE *f = fopen(done, "r");
	struct stat st;
	size_t n = 0;
	int ok = 0;

	if (text && f)
		n = fread(text, 1, 65535, f);
	if (f)
		fclose(f);
	if (n && sscanf(text, "seconds %lf", &c->seconds) == 1 && strchr(text, '\n') &&
	    !strcmp(strchr(text, '\n') + 1, stamp) && !stat(out, &st) && S_ISDIR(st.st_mode))
		ok = 1;
	free(text);
	return ok;
}

/* One run: this binary's `run` with the user's overrides and the run's, its stderr into
 * DIR/NAME.log; the wall time (--reuse: an earlier run's outputs and wall
 * time where reusable). */
static int spawn_run(const struct copts *o, const struct room *room, struct crun *c,
		     const char *dir, char *const *mine, int nmine)
{
	char *argv[2 * APP_MAX_SETS + 16], out[ROOM_PATH_MAX + 80], log[ROOM_PATH_MAX + 80];
	char fmax[64], done[ROOM_PATH_MAX + 80], *stamp = NULL;
	posix_spawn_file_actions_t fa;
	int n = 0, status = 0;
	pid_t pid;
	double t0;

	snprintf(out, sizeof(out), "%s/%s", dir, c->name);
	snprintf(log, sizeof(log), "%s/%s.log", dir, c->name);
	snprintf(fmax, sizeof(fmax), "grid.fmax=%.17g", room->fmax);
	argv[n++] = "roomsim";
	argv[n++] = "run";
	argv[n++] = (char *)o->file;
	argv[n++] = "--out";
	argv[n++] = out;
	if (o->backend) {
		argv[n++] = "--backend";
		argv[n++] = (char *)o->backend;
	}
	for (int i = 0; i < o->nsets; i++) {
		argv[n++] = "--set";
		argv[n++] = o->sets[i];
	}
	for (int i = 0; cleared[i]; i++) {
		argv[n++] = "--set";
		argv[n++] = (char *)cleared[i];
	}
	argv[n++] = "--set";
	argv[n++] = fmax;
	for (int i = 0; i < nmine; i++) {
		argv[n++] = "--set";
		argv[n++] = mine[i];
	}
	argv[n] = NULL;
	snprintf(done, sizeof(done), "%s/%s.done", dir, c->name);
	if (!(stamp = calloc(1, 32768)))
		return c->rc = -1;
	run_stamp(o, argv, stamp, 32768);
	if (o->reuse && reusable(done, out, stamp, c)) {
		c->rc = 0;
		c->reused = 1;
		goto log;
	}
	unlink(done);	/* its outputs are about to change */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = app_now();
	if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		free(stamp);
		return c->rc = -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	c->seconds = app_now() - t0;
	c->rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	if (c->rc == 0) {	/* finished: --reuse may take its outputs later */
		FILE *f = fopen(done, "w");

		if (f) {
			fprintf(f, "seconds %.17g\n%s", c->seconds, stamp);
			if (fclose(f))
				unlink(done);
		}
	}
log:
	free(stamp);
	{	/* the grid, and what auto chose, from its log */
		FILE *f = fopen(log, "r");
		char line[1024];

		while (f && fgets(line, sizeof(line), f)) {
			long steps, nx, ny, nz;
			char *at;

			if ((at = strstr(line, " steps of ")) &&
			    sscanf(at, " steps of %ld x %ld x %ld", &nx, &ny, &nz) == 3)
				c->cells = nx * ny * nz;
			if ((at = strstr(line, "scheme auto: ")))
				snprintf(c->chosen, sizeof(c->chosen), "%.*s", (int)strcspn(at + 13, ","),
					 at + 13);
			if (!strncmp(line, "roomsim: ", 9))
				snprintf(c->why, sizeof(c->why), "%.*s", (int)strcspn(line + 9, "\n"),
					 line + 9);
			(void)steps;
		}
		if (f)
			fclose(f);
	}
	return c->rc;
}

/* A mono WAV's samples (malloc'd), its length and rate; NULL when it cannot be read. */
static double *read_mono(const char *path, size_t *n, int *fs)
{
	SF_INFO info = { 0 };
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	double *x;

	if (!sf)
		return NULL;
	x = info.channels == 1 ? malloc(((size_t)info.frames + 1) * sizeof(double)) : NULL;
	if (x && sf_readf_double(sf, x, info.frames) != info.frames) {
		free(x);
		x = NULL;
	}
	sf_close(sf);
	*n = (size_t)info.frames;
	*fs = info.samplerate;
	return x;
}

/* The power spectrum of x[0..n) zero-padded to m (m / 2 + 1 bins). */
static void power(const double *x, size_t n, size_t m, double *P)
{
	double *y = fftw_alloc_real(m);
	fftw_complex *X = fftw_alloc_complex(m / 2 + 1);
	fftw_plan p = fftw_plan_dft_r2c_1d((int)m, y, X, FFTW_ESTIMATE);

	memset(y, 0, m * sizeof(double));
	memcpy(y, x, (n < m ? n : m) * sizeof(double));
	fftw_execute(p);
	for (size_t k = 0; k <= m / 2; k++)
		P[k] = X[k][0] * X[k][0] + X[k][1] * X[k][1];
	fftw_destroy_plan(p);
	fftw_free(y);
	fftw_free(X);
}

/* The energy of P's bins in [f1, f2) at fs with m points. */
static double band_energy(const double *P, size_t m, double fs, double f1, double f2)
{
	double e = 0;

	for (size_t k = (size_t)ceil(f1 * m / fs); k <= m / 2 && k * fs / m < f2; k++)
		e += P[k];
	return e;
}

/* Run c's errors against the reference ref, pair by pair, band by band: the worst of each. */
static int compare(const struct room *room, const char *dir, const struct crun *ref,
		   struct crun *c, const struct iso_band *bands, int nb)
{
	for (int b = 0; b < nb; b++)
		c->spectrum[b] = c->early[b] = c->t30[b] = c->edt[b] = c->c80[b] = 0;
	for (int s = 0; s < room->nsources; s++)
		for (int q = 0; q < room->nreceivers; q++) {
			char pa[ROOM_PATH_MAX + 200], pb[ROOM_PATH_MAX + 200];
			size_t na, nb2, m = 1, n, onset, early;
			int fa, fb;
			double *a, *x, *Pa, *Pb, *Ea, *Eb, *y;

			snprintf(pa, sizeof(pa), "%s/%s/%s_%s.wav", dir, ref->name,
				 room->sources[s].name, room->receivers[q].name);
			snprintf(pb, sizeof(pb), "%s/%s/%s_%s.wav", dir, c->name, room->sources[s].name,
				 room->receivers[q].name);
			a = read_mono(pa, &na, &fa);
			x = read_mono(pb, &nb2, &fb);
			if (!a || !x || fa != fb) {
				free(a);
				free(x);
				return -1;
			}
			n = na < nb2 ? na : nb2;
			while (m < n)
				m *= 2;
			onset = iso_onset(a, n);
			early = onset + (size_t)(EARLY_SECONDS * fa);
			early = early < n ? early : n;
			Pa = malloc((m / 2 + 1) * sizeof(double));
			Pb = malloc((m / 2 + 1) * sizeof(double));
			Ea = malloc((m / 2 + 1) * sizeof(double));
			Eb = malloc((m / 2 + 1) * sizeof(double));
			y = malloc(an_band_scratch(n, fa, &bands[0]) * sizeof(double));
			if (!Pa || !Pb || !Ea || !Eb || !y) {
				free(a), free(x), free(Pa), free(Pb), free(Ea), free(Eb), free(y);
				return -1;
			}
			power(a, n, m, Pa);
			power(x, n, m, Pb);
			power(a, early, m, Ea);
			power(x, early, m, Eb);
			for (int b = 0; b < nb; b++) {
				struct iso_params ia, ix;
				double sum = 0, d;

				for (int j = 0; j < SIXTHS; j++) {	/* the octave's sixths */
					const double lo = bands[b].f1 * pow(2, j / 6.0);
					const double hi = bands[b].f1 * pow(2, (j + 1) / 6.0);

					d = 10 * log10(band_energy(Pb, m, fa, lo, hi) /
						       band_energy(Pa, m, fa, lo, hi));
					sum += d * d;
				}
				c->spectrum[b] = fmax(c->spectrum[b], sqrt(sum / SIXTHS));
				d = 10 * log10(band_energy(Eb, m, fa, bands[b].f1, bands[b].f2) /
					       band_energy(Ea, m, fa, bands[b].f1, bands[b].f2));
				c->early[b] = fabs(d) > fabs(c->early[b]) ? d : c->early[b];
				an_band(a, n, fa, onset, &bands[b], NAN, y, &ia, NULL);
				an_band(x, n, fa, iso_onset(x, n), &bands[b], NAN, y, &ix, NULL);
				d = 100 * (ix.t30 / ia.t30 - 1);
				c->t30[b] = !(fabs(d) <= fabs(c->t30[b])) ? d : c->t30[b];
				d = 100 * (ix.edt / ia.edt - 1);
				c->edt[b] = !(fabs(d) <= fabs(c->edt[b])) ? d : c->edt[b];
				d = ix.c80 - ia.c80;
				c->c80[b] = !(fabs(d) <= fabs(c->c80[b])) ? d : c->c80[b];
			}
			free(a), free(x), free(Pa), free(Pb), free(Ea), free(Eb), free(y);
		}
	return 0;
}

static const char *const what[] = { "spectrum dB", "early dB", "T30 %", "EDT %", "C80 dB" };

/* Run c's measure k (what[k]), per band. */
static const double *measure(const struct crun *c, int k)
{
	return k == 0 ? c->spectrum : k == 1 ? c->early : k == 2 ? c->t30 : k == 3 ? c->edt
										: c->c80;
}

/*
 * The placements of one scheme and dispersion, the n runs from g on (--placements): each
 * measure's mean over those that ran and its range, as rows NAME-mean and NAME-range (NAME the
 * first run's), in the text table or the csv.
 */
static void print_placements(FILE *f, int csv, const struct crun *g, int n,
			     const struct iso_band *bands, int nb)
{
	double seconds = 0;
	long cells = 0;
	int ok = 0;

	for (int i = 0; i < n; i++)
		if (!g[i].rc) {
			seconds += g[i].seconds;
			cells += g[i].cells;
			ok++;
		}
	if (!ok)
		return;
	if (!csv) {
		fprintf(f, "%-22s %s over %d of %d placements, %.3g M cells, %.1f s on average: "
			"each measure's mean, then its range\n", g->name, schemes[g->scheme].name,
			ok, n, (double)cells / ok / 1e6, seconds / ok);
		fprintf(f, "  %-18s", "band");
		for (int b = 0; b < nb; b++)
			fprintf(f, " %7s", bands[b].name);
		fprintf(f, "\n");
	}
	for (int range = 0; range < 2; range++)
		for (int k = 0; k < 5; k++) {
			if (csv)
				fprintf(f, "%s-%s,%s,%g,%ld,%.3f,%s", g->name, range ? "range" : "mean",
					schemes[g->scheme].name, g->dispersion, cells / ok,
					seconds / ok, what[k]);
			else
				fprintf(f, "  %-5s %-12s", range ? "range" : "mean", what[k]);
			for (int b = 0; b < nb; b++) {
				double sum = 0, lo = INFINITY, hi = -INFINITY;

				for (int i = 0; i < n; i++)
					if (!g[i].rc) {	/* a NaN (no T30) makes both NaN */
						const double v = measure(&g[i], k)[b];

						sum += v;
						lo = v < lo || isnan(v) ? v : lo;
						hi = v > hi || isnan(v) ? v : hi;
					}
				fprintf(f, csv ? ",%.4g" : " %7.2f", range ? hi - lo : sum / ok);
			}
			fprintf(f, "\n");
		}
}

static void print_table(FILE *f, int csv, const struct crun *runs, int nr, int placements,
			const struct iso_band *bands, int nb)
{
	if (csv) {
		fprintf(f, "run,scheme,dispersion,cells,seconds,measure");
		for (int b = 0; b < nb; b++)
			fprintf(f, ",%s", bands[b].name);
		fprintf(f, "\n");
	}
	for (int r = 0; r < nr; r++) {
		const struct crun *c = &runs[r];

		if (!csv) {
			fprintf(f, "%-22s %s%s%s, %.3g M cells, %.1f s%s%s%s\n", c->name,
				c->scheme < 0 ? "the reference" : schemes[c->scheme].name,
				c->chosen[0] ? " -> " : "", c->chosen, c->cells / 1e6, c->seconds,
				c->reused ? " (reused)" : "", c->rc ? "  FAILED: " : "",
				c->rc ? c->why : "");
			if (!c->rc && c->scheme >= 0) {
				fprintf(f, "  %-12s", "band");
				for (int b = 0; b < nb; b++)
					fprintf(f, " %7s", bands[b].name);
				fprintf(f, "\n");
			}
		}
		for (int k = 0; k < 5 && !c->rc && c->scheme >= 0; k++) {
			const double *v = measure(c, k);

			if (csv)
				fprintf(f, "%s,%s,%g,%ld,%.3f,%s", c->name, schemes[c->scheme].name,
					c->dispersion, c->cells, c->seconds, what[k]);
			else
				fprintf(f, "  %-12s", what[k]);
			for (int b = 0; b < nb; b++)
				fprintf(f, csv ? ",%.4g" : " %7.2f", v[b]);
			fprintf(f, "\n");
		}
		if (placements > 1 && c->scheme >= 0 && c->last)
			print_placements(f, csv, c - (placements - 1), placements, bands, nb);
	}
}

int cmd_converge(int argc, char **argv)
{
	struct copts o = { 0 };
	struct rs_error err = { 0 };
	struct room *room = NULL;
	struct crun *runs = calloc(MAX_RUNS, sizeof(*runs));
	struct iso_band bands[ISO_MAX_BANDS];
	char dir[ROOM_PATH_MAX + 16], ref_set[64];
	int nr = 0, nb, failed = 0, rc = EXIT_OK;

	if (!runs || parse(argc, argv, &o, &err) ||
	    !(room = cfg_load_set(o.file, o.sets, o.nsets, &err))) {
		fprintf(stderr, "roomsim: %s\n", runs ? err.msg : "out of memory");
		free(runs);
		return app_exit_status(runs ? err.code : RS_ENOMEM);
	}
	app_warn_unused(room);
	o.room_hash = file_hash(o.file, &o.room_bytes);
	snprintf(dir, sizeof(dir), "%s", o.out ? o.out : room->out_dir);
	if (!o.out)
		strncat(dir, "/converge", sizeof(dir) - strlen(dir) - 1);
	if (app_mkdirs(dir, &err)) {
		fprintf(stderr, "roomsim: %s\n", err.msg);
		rc = app_exit_status(err.code);
		goto out;
	}
	nb = iso_bands(0, room->fmax, room->wav_rate, bands);
	/* the reference, then each scheme at each dispersion */
	if (o.ref_disp > 0)
		snprintf(runs[nr].name, sizeof(runs[nr].name), "reference-%s-d%g",
			 schemes[o.ref_scheme].name, o.ref_disp);
	else
		snprintf(runs[nr].name, sizeof(runs[nr].name), "reference-ppw%g", o.ref_ppw);
	runs[nr++].scheme = -1;
	for (int k = 0; k < o.nscheme; k++)	/* parse() keeps them within MAX_RUNS */
		for (int d = 0; d < o.ndisp; d++)
			for (int p = 0; p < o.placements; p++, nr++) {
				runs[nr].scheme = o.scheme[k];
				runs[nr].dispersion = o.disp[d] * placement[p];
				runs[nr].last = p == o.placements - 1;
				run_name(&o, k, d, p, runs[nr].name, sizeof(runs[nr].name));
			}
	if (o.ref_disp > 0)
		snprintf(ref_set, sizeof(ref_set), "grid.dispersion=%g", o.ref_disp);
	else
		snprintf(ref_set, sizeof(ref_set), "grid.ppw=%g", o.ref_ppw);
	for (int r = 0; r < nr; r++) {
		struct crun *c = &runs[r];
		char *mine[5], disp[64], courant[64];
		int n = 0;

		if (c->scheme < 0) {
			for (int i = 0; i < 3 && schemes[o.ref_scheme].sets[i]; i++)
				mine[n++] = (char *)schemes[o.ref_scheme].sets[i];
			mine[n++] = ref_set;
			if (carved_courant(&o, schemes[o.ref_scheme].sets, courant, sizeof(courant)))
				mine[n++] = courant;
		} else {
			for (int i = 0; i < 3 && schemes[c->scheme].sets[i]; i++)
				mine[n++] = (char *)schemes[c->scheme].sets[i];
			snprintf(disp, sizeof(disp), "grid.dispersion=%g", c->dispersion);
			mine[n++] = disp;
			if (carved_courant(&o, schemes[c->scheme].sets, courant, sizeof(courant)))
				mine[n++] = courant;
		}
		if (!o.quiet)
			fprintf(stderr, "roomsim: converge: %s (%d of %d)\n", c->name, r + 1, nr);
		if (spawn_run(&o, room, c, dir, mine, n) == 0 && c->reused && !o.quiet)
			fprintf(stderr, "roomsim: converge: %s reused: its outputs in %s/%s are an "
				"earlier run's with the same room file, settings and build\n", c->name,
				dir, c->name);
		if (c->rc) {
			failed = 1;
			if (c->scheme < 0) {
				fprintf(stderr, "roomsim: the reference run failed: see %s/%s.log\n", dir,
					c->name);
				rc = EXIT_RUNTIME;
				goto out;
			}
			continue;
		}
		if (c->scheme >= 0 && compare(room, dir, &runs[0], c, bands, nb)) {
			fprintf(stderr, "roomsim: cannot compare %s's WAVs with the reference's\n",
				c->name);
			c->rc = 1;
			failed = 1;
		}
	}
	print_table(stdout, 0, runs, nr, o.placements, bands, nb);
	{
		char path[ROOM_PATH_MAX + 40];
		FILE *f;

		snprintf(path, sizeof(path), "%s/converge.csv", dir);
		if ((f = fopen(path, "w"))) {
			print_table(f, 1, runs, nr, o.placements, bands, nb);
			fclose(f);
		}
	}
	rc = failed ? EXIT_RUNTIME : EXIT_OK;
out:
	room_free(room);
	free(runs);
	return rc;
}
