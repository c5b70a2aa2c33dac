/*
 * analyze.c - `roomsim analyze`: the ISO 3382-1 parameters (solver/iso3382.h) of every
 * source-receiver pair of a run's rirs.h5, or of every channel of WAV files, per octave or
 * third-octave band: a table on stdout, and analysis.csv and analysis.json.
 */
#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/rirs.h"
#include "../solver/iso3382.h"
#include "app.h"

static const char usage_analyze[] =
	"usage: roomsim analyze PATH... [--third] [--out DIR] [-q]\n"
	"\n"
	"The room acoustic parameters of ISO 3382-1 per octave band, from 63 Hz up to the\n"
	"band whose upper edge is the run's fmax: EDT, T20, T30 (s), C50, C80 (dB), D50 (%),\n"
	"Ts (ms) and G (dB, the strength against the source's free-field level 10 m away).\n"
	"PATH is a run's output directory or its rirs.h5 (every source and receiver; the\n"
	"signals with the air's absorption when the run has them), or WAV files (every\n"
	"channel, bands up to 0.45 times the sample rate; no G, since a WAV's level is not\n"
	"calibrated). Writes a table to stdout and analysis.csv and analysis.json into DIR.\n"
	"  --third     third-octave bands from 50 Hz instead of octaves\n"
	"  --out DIR   where the files go (default: the directory of the first PATH)\n"
	"  -q          no table on stdout\n"
	"docs/analysis.md says how each value is computed and what it was checked against.\n";

/* One signal to analyse: its name and samples. */
struct pair {
	char name[140];
	const double *h;
	size_t n;
	double fs, fmax;
	const double *src;	/* the source's free-field pressure 1 m away, or NULL */
	size_t nsrc;
};

struct result {
	struct iso_band band[ISO_MAX_BANDS];
	struct iso_params p[ISO_MAX_BANDS];
	int nbands;
};

/* The energy in band b of the source's free-field pressure 10 m away (G's reference). */
static double reference10(const struct pair *q, const struct iso_band *b)
{
	struct sig_filter f;
	double *y = malloc(q->nsrc * sizeof(double)), e = 0;

	if (!y)
		return NAN;
	memcpy(y, q->src, q->nsrc * sizeof(double));
	iso_band_filter(b, q->fs, &f);
	sig_apply(&f, y, q->nsrc);	/* forwards: the signal starts at once */
	for (size_t i = 0; i < q->nsrc; i++)
		e += y[i] * y[i];
	free(y);
	return e / 100;	/* 1 / r^2 from 1 m to 10 m */
}

/*
 * Each band of q: filtered in reverse time with PAD_PERIODS periods of the band's lower edge
 * of silence in front, where the filter's ringing goes (a response that starts at once, a
 * receiver by its source, would lose it); times from the onset of the whole response (the
 * direct sound), so that the ringing before it counts in no band.
 */
#define PAD_PERIODS 10

static int analyse(const struct pair *q, int third, struct result *r)
{
	const size_t onset = iso_onset(q->h, q->n);
	double *y = NULL;

	r->nbands = iso_bands(third, q->fmax, q->fs, r->band);
	for (int k = 0; k < r->nbands; k++) {
		const size_t pad = (size_t)ceil(PAD_PERIODS * q->fs / r->band[k].f1);
		struct sig_filter f;
		double *more = realloc(y, (q->n + pad) * sizeof(double));

		if (!more) {
			free(y);
			return -1;
		}
		y = more;
		memset(y, 0, pad * sizeof(double));
		memcpy(y + pad, q->h, q->n * sizeof(double));
		iso_band_filter(&r->band[k], q->fs, &f);
		sig_apply_reversed(&f, y, q->n + pad);
		iso_analyse(y, q->n + pad, q->fs, pad + onset,
			    q->src ? reference10(q, &r->band[k]) : NAN, &r->p[k], NULL);
	}
	free(y);
	return 0;
}

/* The parameters in the order of the table and the files, with their units and scales. */
static const struct {
	const char *name, *unit;
	size_t off;
	double scale;
	int digits;	/* in the table */
} params[] = {
	{ "EDT", "s", offsetof(struct iso_params, edt), 1, 2 },
	{ "T20", "s", offsetof(struct iso_params, t20), 1, 2 },
	{ "T30", "s", offsetof(struct iso_params, t30), 1, 2 },
	{ "C50", "dB", offsetof(struct iso_params, c50), 1, 1 },
	{ "C80", "dB", offsetof(struct iso_params, c80), 1, 1 },
	{ "D50", "%", offsetof(struct iso_params, d50), 100, 0 },
	{ "Ts", "ms", offsetof(struct iso_params, ts), 1000, 0 },
	{ "G", "dB", offsetof(struct iso_params, g), 1, 1 },
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

static double value(const struct iso_params *p, size_t i)
{
	return *(const double *)((const char *)p + params[i].off) * params[i].scale;
}

static void print_table(const struct pair *q, const struct result *r)
{
	printf("%s (%.1f Hz)\n%-8s", q->name, q->fs, "band Hz");
	for (int k = 0; k < r->nbands; k++)
		printf(" %7s", r->band[k].name);
	printf("\n");
	for (size_t i = 0; i < NPARAMS; i++) {
		char label[16];

		snprintf(label, sizeof(label), "%s %s", params[i].name, params[i].unit);
		printf("%-8s", label);
		for (int k = 0; k < r->nbands; k++) {
			char v[32];
			const double x = value(&r->p[k], i);

			if (isnan(x))
				snprintf(v, sizeof(v), "-");
			else
				snprintf(v, sizeof(v), "%.*f", params[i].digits, x);
			printf(" %7s", v);
		}
		printf("\n");
	}
	printf("\n");
}

static void json_number(FILE *f, double x)
{
	if (isnan(x) || isinf(x))
		fputs("null", f);
	else
		fprintf(f, "%.6g", x);
}

/* A JSON string of s (names are plain, but quote what needs it). */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	fputc('"', f);
}

static int write_files(const char *dir, const struct pair *q, const struct result *r, int n,
		       int third, struct rs_error *err)
{
	char csv[4200], json[4200], tcsv[4300], tjson[4300];
	FILE *c, *j;

	snprintf(csv, sizeof(csv), "%s/analysis.csv", dir);
	snprintf(json, sizeof(json), "%s/analysis.json", dir);
	snprintf(tcsv, sizeof(tcsv), "%s.tmp", csv);
	snprintf(tjson, sizeof(tjson), "%s.tmp", json);
	if (!(c = fopen(tcsv, "w")))
		return rs_fail(err, RS_EIO, "%s: %s", tcsv, strerror(errno));
	if (!(j = fopen(tjson, "w"))) {
		fclose(c);
		remove(tcsv);
		return rs_fail(err, RS_EIO, "%s: %s", tjson, strerror(errno));
	}
	fprintf(c, "pair,band,fm_hz");
	for (size_t i = 0; i < NPARAMS; i++)
		fprintf(c, ",%s_%s", params[i].name, strcmp(params[i].unit, "%") ? params[i].unit
										 : "percent");
	fprintf(c, ",decay_range_db\n");
	fprintf(j, "{\n  \"bands\": \"%s\",\n  \"units\": {", third ? "third-octave" : "octave");
	for (size_t i = 0; i < NPARAMS; i++)
		fprintf(j, "%s\"%s\": \"%s\"", i ? ", " : "", params[i].name, params[i].unit);
	fprintf(j, "},\n  \"pairs\": [\n");
	for (int p = 0; p < n; p++) {
		fprintf(j, "    {\"name\": ");
		json_string(j, q[p].name);
		fprintf(j, ", \"sample_rate\": %.9g, \"bands\": [\n", q[p].fs);
		for (int k = 0; k < r[p].nbands; k++) {
			const struct iso_params *v = &r[p].p[k];

			fprintf(c, "\"%s\",%s,%.2f", q[p].name, r[p].band[k].name, r[p].band[k].fm);
			fprintf(j, "      {\"band\": \"%s\", \"fm\": %.2f", r[p].band[k].name,
				r[p].band[k].fm);
			for (size_t i = 0; i < NPARAMS; i++) {
				const double x = value(v, i);

				if (isnan(x))
					fprintf(c, ",");
				else
					fprintf(c, ",%.6g", x);
				fprintf(j, ", \"%s\": ", params[i].name);
				json_number(j, x);
			}
			fprintf(c, ",%.1f\n", v->range);
			fprintf(j, ", \"decay_range\": %.1f}%s\n", v->range,
				k + 1 < r[p].nbands ? "," : "");
		}
		fprintf(j, "    ]}%s\n", p + 1 < n ? "," : "");
	}
	fprintf(j, "  ]\n}\n");
	if ((fclose(c) != 0) | (fclose(j) != 0) || rename(tcsv, csv) || rename(tjson, json)) {
		remove(tcsv);
		remove(tjson);
		return rs_fail(err, RS_EIO, "%s: cannot write the analysis files: %s", dir,
			       strerror(errno));
	}
	return 0;
}

/* Every channel of a WAV file as pairs; their samples in *buf (free it). */
static int read_wav(const char *path, struct pair **q, int *n, double **buf,
		    struct rs_error *err)
{
	SF_INFO info = { 0 };
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	double *x, *all;
	struct pair *more;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (!sf)
		return rs_fail(err, RS_EINPUT, "%s: %s (valid: a WAV file, or a run's output "
			       "directory)", path, sf_strerror(NULL));
	x = malloc((size_t)info.frames * (size_t)info.channels * sizeof(double) + 1);
	all = malloc((size_t)info.frames * (size_t)info.channels * sizeof(double) + 1);
	more = realloc(*q, (size_t)(*n + info.channels) * sizeof(**q));
	if (!x || !all || !more) {
		free(x);
		free(all);
		sf_close(sf);
		if (more)
			*q = more;
		return rs_fail(err, RS_ENOMEM, "out of memory reading %s", path);
	}
	*q = more;
	if (sf_readf_double(sf, x, info.frames) != info.frames) {
		free(x);
		free(all);
		sf_close(sf);
		return rs_fail(err, RS_EIO, "%s: cannot read its samples", path);
	}
	sf_close(sf);
	for (int ch = 0; ch < info.channels; ch++) {
		struct pair *p = &(*q)[*n + ch];
		double *h = all + (size_t)ch * (size_t)info.frames;

		for (sf_count_t i = 0; i < info.frames; i++)
			h[i] = x[(size_t)i * (size_t)info.channels + (size_t)ch];
		memset(p, 0, sizeof(*p));
		if (info.channels > 1)
			snprintf(p->name, sizeof(p->name), "%s:%d", base, ch + 1);
		else
			snprintf(p->name, sizeof(p->name), "%s", base);
		p->h = h;
		p->n = (size_t)info.frames;
		p->fs = info.samplerate;
		p->fmax = 0.45 * info.samplerate;
	}
	*n += info.channels;
	free(x);
	*buf = all;
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	const char *out = NULL, *paths[64];
	int npaths = 0, third = 0, quiet = 0, n = 0, rc = EXIT_OK, nbufs = 0;
	struct rirs_data d[64];
	double *bufs[64];
	struct pair *q = NULL;
	struct result *r = NULL;
	struct rs_error err = { 0 };
	char dir[4096];

	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			fputs(usage_analyze, stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[a], "--third")) {
			third = 1;
		} else if (!strcmp(argv[a], "-q") || !strcmp(argv[a], "--quiet")) {
			quiet = 1;
		} else if (!strcmp(argv[a], "--out") && a + 1 < argc) {
			out = argv[++a];
		} else if (argv[a][0] == '-' || npaths == 64) {
			return fprintf(stderr, "roomsim analyze: '%s' is not valid here (see roomsim "
				       "analyze --help)\n", argv[a]), EXIT_USAGE;
		} else {
			paths[npaths++] = argv[a];
		}
	}
	if (!npaths)
		return fprintf(stderr, "roomsim analyze: no PATH (see roomsim analyze --help)\n"),
		       EXIT_USAGE;
	for (int i = 0; i < npaths; i++) {
		struct stat st;
		char h5[4200];
		const char *dot = strrchr(paths[i], '.');

		if (stat(paths[i], &st)) {
			rc = rs_fail(&err, RS_EINPUT, "%s: %s (valid: a run's output directory, its "
				     "rirs.h5, or WAV files)", paths[i], strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode) || (dot && !strcmp(dot, ".h5"))) {
			struct rirs_data *e = &d[nbufs];
			struct pair *more;

			snprintf(h5, sizeof(h5), S_ISDIR(st.st_mode) ? "%s/rirs.h5" : "%s", paths[i]);
			if ((rc = rirs_read(h5, e, &err)))
				break;
			bufs[nbufs++] = NULL;
			more = realloc(q, (size_t)(n + e->nsources * e->nreceivers) * sizeof(*q));
			if (!more) {
				rc = rs_fail(&err, RS_ENOMEM, "out of memory");
				break;
			}
			q = more;
			for (int s = 0; s < e->nsources; s++)
				for (int k = 0; k < e->nreceivers; k++) {
					struct pair *p = &q[n++];
					const size_t len = (size_t)e->completed[s] + 1 < e->nsamples
								   ? (size_t)e->completed[s] + 1
								   : e->nsamples;

					memset(p, 0, sizeof(*p));
					snprintf(p->name, sizeof(p->name), "%s_%s%s", e->source_names[s],
						 e->receiver_names[k], e->air ? "" : " (no air)");
					p->h = e->signals + ((size_t)s * e->nreceivers + k) * e->nsamples;
					p->n = len;
					p->fs = e->fs;
					p->fmax = e->fmax;
					p->src = e->source ? e->source + (size_t)s * e->nsamples : NULL;
					p->nsrc = e->nsamples;
				}
		} else {
			memset(&d[nbufs], 0, sizeof(d[nbufs]));
			if ((rc = read_wav(paths[i], &q, &n, &bufs[nbufs], &err)))
				break;
			nbufs++;
		}
	}
	if (!rc && !(r = calloc((size_t)(n ? n : 1), sizeof(*r))))
		rc = rs_fail(&err, RS_ENOMEM, "out of memory");
	for (int p = 0; !rc && p < n; p++) {
		if (analyse(&q[p], third, &r[p])) {
			rc = rs_fail(&err, RS_ENOMEM, "out of memory");
			break;
		}
		if (!r[p].nbands)
			fprintf(stderr, "roomsim analyze: %s: no %s band fits below its fmax "
				"(%.0f Hz)\n", q[p].name, third ? "third-octave" : "octave",
				q[p].fmax);
		if (!quiet)
			print_table(&q[p], &r[p]);
	}
	if (!rc) {
		if (out) {
			snprintf(dir, sizeof(dir), "%s", out);
		} else {
			struct stat st;

			snprintf(dir, sizeof(dir), "%s", paths[0]);
			if (stat(paths[0], &st) || !S_ISDIR(st.st_mode)) {
				char *slash = strrchr(dir, '/');

				if (slash)
					*slash = 0;
				else
					snprintf(dir, sizeof(dir), ".");
			}
		}
		if (!(rc = app_mkdirs(dir, &err)))
			rc = write_files(dir, q, r, n, third, &err);
		if (!rc && !quiet)
			printf("analysis.csv and analysis.json in %s/\n", dir);
	}
	if (rc)
		fprintf(stderr, "roomsim analyze: %s\n", err.msg);
	for (int i = 0; i < nbufs; i++) {
		if (bufs[i])
			free(bufs[i]);
		else
			rirs_free(&d[i]);
	}
	free(q);
	free(r);
	return rc ? app_exit_status(rc) : EXIT_OK;
}
