/*
 * analyze.c - `roomsim analyze`: the ISO 3382-1 parameters (solver/iso3382.h) of every
 * source-receiver pair of a run's rirs.h5, or of every channel of WAV files, per octave or
 * third-octave band, with Sabine's and Eyring's times for the run's room: a table on stdout,
 * analysis.csv, analysis.json and a figure per response (io/plot.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/plot.h"
#include "../io/wav.h"
#include "../io/rirs.h"
#include "../solver/air.h"
#include "../solver/iso3382.h"
#include "analyze.h"
#include "app.h"

static const char usage_analyze[] =
	"usage: roomsim analyze PATH... [--third] [--part P] [--out DIR] [--no-plots] [-q]\n"
	"\n"
	"The room acoustic parameters of ISO 3382-1 per octave band, from 63 Hz up to the\n"
	"band whose upper edge is the run's fmax: EDT, T20, T30 (s), C50, C80 (dB), D50 (%),\n"
	"Ts (ms) and G (dB, the strength against the source's free-field level 10 m away),\n"
	"and beside them Sabine's and Eyring's reverberation times from the run's room.\n"
	"PATH is a run's output directory or its rirs.h5 (every source and receiver; the\n"
	"signals with the air's absorption when the run has them, low-passed at fmax as the\n"
	"WAVs are), or WAV files (every\n"
	"channel, bands up to 0.45 times the sample rate; no G, since a WAV's level is not\n"
	"calibrated; a first- or higher-order ambisonic WAV, NAME.ambix.wav in ACN order and\n"
	"SN3D, is one response, its W channel, with the lateral energy fractions LF and LFC\n"
	"from its Y channel). Writes a table to stdout, and analysis.csv, analysis.json and a figure\n"
	"per response (analysis_<pair>.png and .svg: waveform, decay curves, T30 and EDT\n"
	"against Sabine and Eyring, spectrogram) into DIR.\n"
	"  --third     third-octave bands from 50 Hz instead of octaves\n"
	"  --part P    a hybrid run's responses: joined (the default: the WAVs', the whole\n"
	"              band to 8 kHz), wave (the wave engine's, to fmax) or geometric (the\n"
	"              geometric engine's, the whole band)\n"
	"  --out DIR   where the files go (default: the directory of the first PATH)\n"
	"  --no-plots  no figures\n"
	"  -q          no table on stdout\n"
	"docs/analysis.md says how each value is computed and what it was checked against.\n";

double *an_source(const double *src, size_t n, double fs, double fmax, size_t *len)
{
	const size_t pad = fmax < 0.45 * fs ? (size_t)ceil(32 * fs / fmax) : 0;
	double *x = calloc(n + pad + 1, sizeof(double));

	if (!x)
		return NULL;
	memcpy(x + pad, src, n * sizeof(double));
	wav_condition(x, n + pad, fs, fmax, 0);
	*len = n + pad;
	return x;
}

/* One signal to analyse: its name and samples. */
struct pair {
	char name[140];
	const double *h;
	size_t n;
	double fs, fmax;
	const double *src;	/* the source's free-field pressure 1 m away, or NULL */
	size_t nsrc;
	const double *lat;	/* an ambisonic WAV's lateral figure-of-eight (ACN 1), or NULL */
	const struct rirs_data *room;	/* its run's room description, or NULL */
};

struct result {
	struct iso_band band[ISO_MAX_BANDS];
	struct iso_params p[ISO_MAX_BANDS];
	double sabine[ISO_MAX_BANDS], eyring[ISO_MAX_BANDS];	/* s; NAN: no room */
	double lf[ISO_MAX_BANDS], lfc[ISO_MAX_BANDS];	/* NAN: no lateral channel */
	double *edc[ISO_MAX_BANDS];	/* the decay curves from the onset (for the figure) */
	size_t nedc, onset;
	int nbands;
};

_Static_assert(ISO_MAX_BANDS <= PLOT_MAX_BANDS, "a result's bands fit a figure");

/*
 * Sabine's and Eyring's reverberation times in band b from the run's air volume, each
 * material's wall area and absorption (its third octaves, averaged over an octave), and the
 * air's absorption when the signals have it: 24 ln(10) V / (c A), A = sum S a + 4 m V or
 * -S ln(1 - sum S a / S) + 4 m V, m the air's intensity attenuation per metre.
 */
static void predictions(const struct rirs_data *d, const struct iso_band *b, int third,
			double *sabine, double *eyring)
{
	const int k3 = (int)lround(10 * log10(b->fm / 1000)) + 13;
	const struct air air = { d->medium[0], d->medium[1], d->medium[2] };
	double a = 0, s = 0, m = 0;

	*sabine = *eyring = NAN;
	if (!(d->volume > 0) || !(d->c > 0))
		return;
	for (int i = 0; i < d->nmaterials; i++) {
		double al = 0;
		int n = 0;

		for (int k = third ? k3 : k3 - 1; k <= (third ? k3 : k3 + 1); k++)
			if (k >= 0 && k < RIRS_BANDS) {
				al += d->band_alpha[(size_t)i * RIRS_BANDS + k];
				n++;
			}
		if (!n)
			return;
		a += d->area[i] * al / n;
		s += d->area[i];
	}
	if (d->air)
		m = air_attenuation(&air, b->fm) / (10 * log10(exp(1)));
	if (a > 0 && s > 0) {
		*sabine = 24 * log(10) * d->volume / (d->c * (a + 4 * m * d->volume));
		if (a < s)
			*eyring = 24 * log(10) * d->volume /
				  (d->c * (-s * log(1 - a / s) + 4 * m * d->volume));
	}
}

/* G's references of the last source analysed, per band: the pairs of a source share them. */
struct reference {
	const double *src;
	double e[ISO_MAX_BANDS];
	int third;
};

/* The energy in band b of the source's free-field pressure 10 m away (G's reference), from
 * its pressure at 1 m, src[0..n) at fs. */
double an_reference10(const double *src, size_t n, double fs, const struct iso_band *b)
{
	struct sig_filter f;
	double *y = malloc(n * sizeof(double)), e = 0;

	if (!y)
		return NAN;
	memcpy(y, src, n * sizeof(double));
	iso_band_filter(b, fs, &f);
	sig_apply(&f, y, n);	/* forwards: the signal starts at once */
	for (size_t i = 0; i < n; i++)
		e += y[i] * y[i];
	free(y);
	return e / 100;	/* 1 / r^2 from 1 m to 10 m */
}

/*
 * Band b of h[0..n): filtered in reverse time with PAD_PERIODS periods of the band's lower
 * edge of silence in front, where the filter's ringing goes (a response that starts at once,
 * a receiver by its source, would lose it); times from onset, the onset of the whole response
 * (the direct sound), the direct sound's band energy before it counted at it. y: room for
 * an_band_scratch() values.
 */
#define PAD_PERIODS 10

size_t an_band_scratch(size_t n, double fs, const struct iso_band *b)
{
	return n + (size_t)ceil(PAD_PERIODS * fs / b->f1);
}

/* h[0..n) in band b into y (an_band_scratch() values): silence in front, filtered in reverse
 * time; the silence's length. */
static size_t band_filter(const double *h, size_t n, double fs, const struct iso_band *b,
			  double *y)
{
	const size_t pad = an_band_scratch(n, fs, b) - n;
	struct sig_filter f;

	memset(y, 0, pad * sizeof(double));
	memcpy(y + pad, h, n * sizeof(double));
	iso_band_filter(b, fs, &f);
	sig_apply_reversed(&f, y, n + pad);
	return pad;
}

void an_band(const double *h, size_t n, double fs, size_t onset, const struct iso_band *b,
	     double ref10, double *y, struct iso_params *p, double *edc)
{
	const size_t pad = band_filter(h, n, fs, b, y), at = pad + onset;
	double e = 0;

	/* The reverse-time filter puts a pulse's band energy before the pulse: the direct
	 * sound's lies before the onset. It is the direct sound's, at t = 0: gathered into the
	 * onset's sample from where it rises to 20 dB below its peak. */
	for (size_t i = iso_onset(y, at + 1); i <= at; i++) {
		e += y[i] * y[i];
		if (i < at)
			y[i] = 0;
	}
	y[at] = copysign(sqrt(e), y[at]);
	iso_analyse(y, n + pad, fs, at, ref10, p, edc);
}

/* LF and LFC of band b (ISO 3382-1 A.2.6) from q's omni channel and its lateral one, both
 * filtered as an_band() filters (y holds the omni's, filtered, from an_band()). */
static int lateral(const struct pair *q, size_t onset, const struct iso_band *b, const double *y,
		   double *lf, double *lfc)
{
	const size_t len = an_band_scratch(q->n, q->fs, b);
	double *l = malloc(len * sizeof(double));

	if (!l)
		return -1;
	iso_lateral(y, l, len, q->fs, band_filter(q->lat, q->n, q->fs, b, l) + onset, lf, lfc);
	free(l);
	return 0;
}

static int analyse(const struct pair *q, int third, struct result *r, struct reference *ref)
{
	const size_t onset = iso_onset(q->h, q->n);
	double *y = NULL;

	r->nbands = iso_bands(third, q->fmax, q->fs, r->band);
	r->onset = onset;
	r->nedc = q->n - onset;
	if (q->src && (ref->src != q->src || ref->third != third)) {
		for (int k = 0; k < r->nbands; k++)
			ref->e[k] = an_reference10(q->src, q->nsrc, q->fs, &r->band[k]);
		ref->src = q->src;
		ref->third = third;
	}
	for (int k = 0; k < r->nbands; k++) {
		double *more = realloc(y, an_band_scratch(q->n, q->fs, &r->band[k]) *
					       sizeof(double));

		if (!more) {
			free(y);
			return -1;
		}
		y = more;
		if (!(r->edc[k] = malloc((r->nedc ? r->nedc : 1) * sizeof(double)))) {
			free(y);
			return -1;
		}
		an_band(q->h, q->n, q->fs, onset, &r->band[k], q->src ? ref->e[k] : NAN, y,
			&r->p[k], r->edc[k]);
		r->lf[k] = r->lfc[k] = NAN;
		if (q->lat && lateral(q, onset, &r->band[k], y, &r->lf[k], &r->lfc[k]))
			return free(y), -1;
		r->sabine[k] = r->eyring[k] = NAN;
		if (q->room)
			predictions(q->room, &r->band[k], third, &r->sabine[k], &r->eyring[k]);
	}
	free(y);
	return 0;
}

const struct an_param an_params[AN_NPARAMS] = {
	{ "EDT", "s", offsetof(struct iso_params, edt), 1, 2 },
	{ "T20", "s", offsetof(struct iso_params, t20), 1, 2 },
	{ "T30", "s", offsetof(struct iso_params, t30), 1, 2 },
	{ "C50", "dB", offsetof(struct iso_params, c50), 1, 1 },
	{ "C80", "dB", offsetof(struct iso_params, c80), 1, 1 },
	{ "D50", "%", offsetof(struct iso_params, d50), 100, 0 },
	{ "Ts", "ms", offsetof(struct iso_params, ts), 1000, 0 },
	{ "G", "dB", offsetof(struct iso_params, g), 1, 1 },
};
double an_value(const struct iso_params *p, size_t i)
{
	return *(const double *)((const char *)p + an_params[i].off) * an_params[i].scale;
}

static void print_table(const struct pair *q, const struct result *r)
{
	printf("%s (%.1f Hz)\n%-8s", q->name, q->fs, "band Hz");
	for (int k = 0; k < r->nbands; k++)
		printf(" %7s", r->band[k].name);
	printf("\n");
	for (size_t i = 0; i < AN_NPARAMS; i++) {
		char label[16];

		snprintf(label, sizeof(label), "%s %s", an_params[i].name, an_params[i].unit);
		printf("%-8s", label);
		for (int k = 0; k < r->nbands; k++) {
			char v[32];
			const double x = an_value(&r->p[k], i);

			if (isnan(x))
				snprintf(v, sizeof(v), "-");
			else
				snprintf(v, sizeof(v), "%.*f", an_params[i].digits, x);
			printf(" %7s", v);
		}
		printf("\n");
	}
	for (int e = 0; e < 2 && q->lat; e++) {	/* an ambisonic response's lateral fractions */
		printf("%-8s", e ? "LFC" : "LF");
		for (int k = 0; k < r->nbands; k++) {
			const double x = e ? r->lfc[k] : r->lf[k];

			if (isnan(x))
				printf(" %7s", "-");
			else
				printf(" %7.3f", x);
		}
		printf("\n");
	}
	for (int e = 0; e < 2 && q->room && q->room->volume > 0; e++) {
		printf("%-8s", e ? "Eyring s" : "Sabine s");
		for (int k = 0; k < r->nbands; k++) {
			const double x = e ? r->eyring[k] : r->sabine[k];

			if (isnan(x))
				printf(" %7s", "-");
			else
				printf(" %7.2f", x);
		}
		printf("\n");
	}
	printf("\n");
}

/* DIR/analysis_<pair>.png and .svg (plot.h), the pair's name kept to letters, digits, '-'
 * and '_'. */
static int figure(const char *dir, const struct pair *q, const struct result *r,
		  struct rs_error *err)
{
	struct plot_response f = { .title = q->name, .h = q->h + r->onset, .n = q->n - r->onset,
				   .fs = q->fs, .fmax = q->fmax, .nbands = r->nbands };
	char name[sizeof(q->name)], base[4400];
	size_t i;

	for (i = 0; q->name[i] && i + 1 < sizeof(name); i++)
		name[i] = isalnum((unsigned char)q->name[i]) || q->name[i] == '-' ? q->name[i] : '_';
	name[i] = 0;
	for (int k = 0; k < r->nbands; k++) {
		f.band[k] = r->band[k].name;
		f.edc[k] = r->edc[k];
		f.nedc[k] = r->nedc;
		f.edt[k] = r->p[k].edt;
		f.t30[k] = r->p[k].t30;
		f.sabine[k] = r->sabine[k];
		f.eyring[k] = r->eyring[k];
		f.a30[k] = f.s30[k] = NAN;
		if (!isnan(r->p[k].t30))
			iso_decay(r->edc[k], r->nedc, q->fs, -5, -35, &f.a30[k], &f.s30[k]);
	}
	snprintf(base, sizeof(base), "%s/analysis_%s", dir, name);
	return plot_response(base, &f, err);
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
	for (size_t i = 0; i < AN_NPARAMS; i++)
		fprintf(c, ",%s_%s", an_params[i].name, strcmp(an_params[i].unit, "%") ? an_params[i].unit
										 : "percent");
	fprintf(c, ",decay_range_db,sabine_s,eyring_s,LF,LFC\n");
	fprintf(j, "{\n  \"bands\": \"%s\",\n  \"units\": {", third ? "third-octave" : "octave");
	for (size_t i = 0; i < AN_NPARAMS; i++)
		fprintf(j, "%s\"%s\": \"%s\"", i ? ", " : "", an_params[i].name, an_params[i].unit);
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
			for (size_t i = 0; i < AN_NPARAMS; i++) {
				const double x = an_value(v, i);

				if (isnan(x))
					fprintf(c, ",");
				else
					fprintf(c, ",%.6g", x);
				fprintf(j, ", \"%s\": ", an_params[i].name);
				json_number(j, x);
			}
			if (isfinite(v->range))	/* infinite: the response ends in silence */
				fprintf(c, ",%.1f", v->range);
			else
				fprintf(c, ",");
			fprintf(j, ", \"decay_range\": ");
			json_number(j, isfinite(v->range) ? round(10 * v->range) / 10 : NAN);
			fprintf(j, ", \"Sabine\": ");
			json_number(j, r[p].sabine[k]);
			fprintf(j, ", \"Eyring\": ");
			json_number(j, r[p].eyring[k]);
			fprintf(j, ", \"LF\": ");
			json_number(j, r[p].lf[k]);
			fprintf(j, ", \"LFC\": ");
			json_number(j, r[p].lfc[k]);
			fprintf(j, "}%s\n", k + 1 < r[p].nbands ? "," : "");
			for (int e = 0; e < 4; e++) {
				const double x = e == 3 ? r[p].lfc[k] : e == 2 ? r[p].lf[k] :
						 e ? r[p].eyring[k] : r[p].sabine[k];

				if (isnan(x))
					fprintf(c, ",");
				else
					fprintf(c, ",%.6g", x);
			}
			fprintf(c, "\n");
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

/* Is a WAV of this name and channel count an ambisonic response: NAME.ambix.wav with
 * (N + 1)^2 channels, N from 1 (ACN order, SN3D)? */
static int ambisonic(const char *name, int channels)
{
	const size_t len = strlen(name);
	int n = 1;

	while ((n + 1) * (n + 1) < channels)
		n++;
	return len > 10 && !strcmp(name + len - 10, ".ambix.wav") && (n + 1) * (n + 1) == channels;
}

/* Every channel of a WAV file as pairs, or an ambisonic WAV as one pair with its lateral
 * channel (ambisonic()); their samples in *buf (free it). */
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
		double *h = all + (size_t)ch * (size_t)info.frames;

		for (sf_count_t i = 0; i < info.frames; i++)
			h[i] = x[(size_t)i * (size_t)info.channels + (size_t)ch];
	}
	if (ambisonic(base, info.channels)) {	/* one response: W, with Y beside it */
		struct pair *p = &(*q)[*n];

		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", base);
		p->h = all;
		p->lat = all + (size_t)info.frames;
		p->n = (size_t)info.frames;
		p->fs = info.samplerate;
		p->fmax = 0.45 * info.samplerate;
		(*n)++;
		free(x);
		*buf = all;
		return 0;
	}
	for (int ch = 0; ch < info.channels; ch++) {
		struct pair *p = &(*q)[*n + ch];
		double *h = all + (size_t)ch * (size_t)info.frames;

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
	int npaths = 0, third = 0, quiet = 0, plots = 1, n = 0, rc = EXIT_OK, nbufs = 0, nsrcs = 0;
	enum rirs_part part = RIRS_JOINED;
	struct rirs_data d[64];
	double *bufs[64], **srcs = NULL;
	char h5s[64][4200];
	struct pair *q = NULL;
	struct result *r = NULL;
	struct rs_error err = { 0 };
	struct reference ref = { 0 };
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
		} else if (!strcmp(argv[a], "--no-plots")) {
			plots = 0;
		} else if (!strcmp(argv[a], "--out") && a + 1 < argc) {
			out = argv[++a];
		} else if (!strcmp(argv[a], "--part") && a + 1 < argc) {
			const char *v = argv[++a];

			if (!strcmp(v, "joined"))
				part = RIRS_JOINED;
			else if (!strcmp(v, "wave"))
				part = RIRS_WAVE;
			else if (!strcmp(v, "geometric"))
				part = RIRS_GEOMETRIC;
			else
				return fprintf(stderr, "roomsim analyze: --part: '%s' is not valid "
					       "(valid: joined, wave, geometric)\n", v), EXIT_USAGE;
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
			if ((rc = rirs_read_part(h5, part, e, &err)))
				break;
			snprintf(h5s[nbufs], sizeof(h5s[nbufs]), "%s", h5);
			bufs[nbufs++] = NULL;
			more = realloc(q, (size_t)(n + e->nsources * e->nreceivers) * sizeof(*q));
			if (!more) {
				rc = rs_fail(&err, RS_ENOMEM, "out of memory");
				break;
			}
			q = more;
			for (int s = 0; s < e->nsources && !rc; s++) {
				/* the source's free-field pressure low-passed as the responses */
				double *src = NULL;
				size_t nsrc = 0;

				if (e->source && !(src = an_source(e->source + (size_t)s *
								       e->nsamples, e->nsamples,
								       e->fs, e->fmax, &nsrc))) {
					rc = rs_fail(&err, RS_ENOMEM, "out of memory");
					break;
				}
				if (src) {
					double **more_src = realloc(srcs, (size_t)(nsrcs + 1) *
								    sizeof(*srcs));

					if (!more_src) {
						free(src);
						rc = rs_fail(&err, RS_ENOMEM, "out of memory");
						break;
					}
					srcs = more_src;
					srcs[nsrcs++] = src;
				}
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
					/* low-passed at fmax as the WAVs are: above it a scheme's
					 * cut-off rings (docs/physics.md, "Band limits") */
					wav_condition(e->signals + ((size_t)s * e->nreceivers + k) *
							      e->nsamples, len, e->fs, e->fmax, 0);
					p->fs = e->fs;
					p->fmax = e->fmax;
					p->src = src;
					p->nsrc = nsrc;
					p->room = e;
				}
			}
		} else {
			memset(&d[nbufs], 0, sizeof(d[nbufs]));
			if ((rc = read_wav(paths[i], &q, &n, &bufs[nbufs], &err)))
				break;
			nbufs++;
		}
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
		rc = app_mkdirs(dir, &err);
	}
	if (!rc && !(r = calloc((size_t)(n ? n : 1), sizeof(*r))))
		rc = rs_fail(&err, RS_ENOMEM, "out of memory");
	for (int p = 0; !rc && p < n; p++) {
		if (analyse(&q[p], third, &r[p], &ref)) {
			rc = rs_fail(&err, RS_ENOMEM, "out of memory");
			break;
		}
		if (!r[p].nbands)
			fprintf(stderr, "roomsim analyze: %s: no %s band fits below its fmax "
				"(%.0f Hz)\n", q[p].name, third ? "third-octave" : "octave",
				q[p].fmax);
		if (!quiet)
			print_table(&q[p], &r[p]);
		if (plots && r[p].nbands)
			rc = figure(dir, &q[p], &r[p], &err);
		for (int k = 0; k < r[p].nbands; k++) {	/* the curves are drawn */
			free(r[p].edc[k]);
			r[p].edc[k] = NULL;
		}
	}
	if (!rc)
		rc = write_files(dir, q, r, n, third, &err);
	if (!rc && !quiet)
		printf("analysis.csv and analysis.json%s in %s/\n",
		       plots ? ", and a figure per response (analysis_*.png, .svg)," : "", dir);
	for (int i = 0; i < nbufs && !rc; i++) {	/* the receiver grids of each run */
		struct rirs_data wave;

		if (bufs[i])
			continue;
		if (!d[i].full) {
			rc = analyze_grids(h5s[i], &d[i], third, dir, plots, quiet, &err);
		} else if (!(rc = rirs_read_part(h5s[i], RIRS_WAVE, &wave, &err))) {
			/* a hybrid run's grids are wave-only, at the simulation rate */
			rc = analyze_grids(h5s[i], &wave, third, dir, plots, quiet, &err);
			rirs_free(&wave);
		}
	}
	if (rc)
		fprintf(stderr, "roomsim analyze: %s\n", err.msg);
	for (int p = 0; r && p < n; p++)
		for (int k = 0; k < r[p].nbands; k++)
			free(r[p].edc[k]);
	for (int i = 0; i < nbufs; i++) {
		if (bufs[i])
			free(bufs[i]);
		else
			rirs_free(&d[i]);
	}
	for (int i = 0; i < nsrcs; i++)
		free(srcs[i]);
	free(srcs);
	free(q);
	free(r);
	return rc ? app_exit_status(rc) : EXIT_OK;
}
