/*
 * auralize.c - `roomsim auralize IR.wav DRY.wav -o WET.wav`: a dry recording played in the
 * simulated room, by convolution with its impulse response (solver/convolve.h).
 */
#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/wav.h"
#include "../solver/convolve.h"
#include "app.h"

static const char usage_auralize[] =
	"usage: roomsim auralize IR.wav DRY.wav -o WET.wav [--normalize DBFS]\n"
	"                        [--format float32|pcm24|pcm16] [-q]\n"
	"\n"
	"Convolve the dry signal with the impulse response (FFT overlap-add, any length) and\n"
	"write the result at the IR's sample rate; a dry signal at another rate is resampled\n"
	"first (libsoxr). Channels: a mono IR applies to every dry channel, a mono dry signal\n"
	"goes through every IR channel, and equal counts pair channel by channel.\n"
	"The level is calibrated: roomsim's IRs are in Pa per Pa of the source at 1 m, so the\n"
	"result is what the room makes of the dry signal taken as the source's free-field\n"
	"pressure 1 m away. Samples beyond full scale are counted and reported (clipped in\n"
	"PCM formats).\n"
	"  -o WET.wav         the output (required)\n"
	"  --normalize DBFS   scale the result so that its peak is at DBFS (e.g. -1)\n"
	"  --format NAME      float32 (default), pcm24 or pcm16\n"
	"  -q                 nothing on stdout\n";

/* A WAV's frames as one array per channel. */
struct sound {
	double *ch[64];
	int channels, rate;
	size_t frames;
};

static void sound_free(struct sound *s)
{
	for (int c = 0; c < s->channels; c++)
		free(s->ch[c]);
	memset(s, 0, sizeof(*s));
}

static int sound_read(const char *path, struct sound *s, struct rs_error *err)
{
	SF_INFO info = { 0 };
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	double *x;

	memset(s, 0, sizeof(*s));
	if (!sf)
		return rs_fail(err, RS_EINPUT, "%s: %s (valid: a WAV file, or another format "
			       "libsndfile reads)", path, sf_strerror(NULL));
	if (info.channels > 64 || info.frames < 1) {
		sf_close(sf);
		return rs_fail(err, RS_EINPUT, "%s: %d channels of %lld frames (valid: 1 to 64 "
			       "channels, at least one frame)", path, info.channels,
			       (long long)info.frames);
	}
	x = malloc((size_t)info.frames * (size_t)info.channels * sizeof(double));
	if (!x) {
		sf_close(sf);
		return rs_fail(err, RS_ENOMEM, "out of memory reading %s", path);
	}
	if (sf_readf_double(sf, x, info.frames) != info.frames) {
		free(x);
		sf_close(sf);
		return rs_fail(err, RS_EIO, "%s: cannot read its samples", path);
	}
	sf_close(sf);
	s->channels = info.channels;
	s->rate = info.samplerate;
	s->frames = (size_t)info.frames;
	for (int c = 0; c < s->channels; c++) {
		if (!(s->ch[c] = malloc(s->frames * sizeof(double)))) {
			free(x);
			sound_free(s);
			return rs_fail(err, RS_ENOMEM, "out of memory reading %s", path);
		}
		for (size_t i = 0; i < s->frames; i++)
			s->ch[c][i] = x[i * (size_t)s->channels + (size_t)c];
	}
	free(x);
	return 0;
}

/* The dry signal at rate: every channel resampled (libsoxr) when its rate differs. */
static int to_rate(struct sound *s, int rate, struct rs_error *err)
{
	const size_t n = (size_t)llround((double)s->frames * rate / s->rate);

	if (s->rate == rate)
		return 0;
	for (int c = 0; c < s->channels; c++) {
		double *y = malloc((n ? n : 1) * sizeof(double));

		if (!y)
			return rs_fail(err, RS_ENOMEM, "out of memory resampling");
		if (wav_resample(s->ch[c], s->frames, s->rate, rate, y, n, err)) {
			free(y);
			return err->code;
		}
		free(s->ch[c]);
		s->ch[c] = y;
	}
	s->frames = n;
	s->rate = rate;
	return 0;
}

int cmd_auralize(int argc, char **argv)
{
	const char *files[2] = { NULL, NULL }, *out = NULL;
	double normalize = NAN;
	enum room_wavfmt fmt = ROOM_WAV_FLOAT32;
	int nfiles = 0, quiet = 0, rc = 0, nout;
	struct sound ir = { 0 }, dry = { 0 };
	struct rs_error err = { 0 };
	double *y = NULL, peak = 0;
	size_t ny, clipped = 0;

	for (int a = 1; a < argc; a++) {
		char *end;

		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			fputs(usage_auralize, stdout);
			return EXIT_OK;
		}
		if ((!strcmp(argv[a], "-o") || !strcmp(argv[a], "--out")) && a + 1 < argc) {
			out = argv[++a];
		} else if (!strcmp(argv[a], "--normalize") && a + 1 < argc) {
			normalize = strtod(argv[++a], &end);
			if (*end || !(normalize <= 0))
				return fprintf(stderr, "roomsim auralize: --normalize: '%s' is not valid "
					       "(valid: a peak level in dBFS, 0 or below)\n", argv[a]),
				       EXIT_USAGE;
		} else if (!strcmp(argv[a], "--format") && a + 1 < argc) {
			a++;
			if (!strcmp(argv[a], "float32"))
				fmt = ROOM_WAV_FLOAT32;
			else if (!strcmp(argv[a], "pcm24"))
				fmt = ROOM_WAV_PCM24;
			else if (!strcmp(argv[a], "pcm16"))
				fmt = ROOM_WAV_PCM16;
			else
				return fprintf(stderr, "roomsim auralize: --format: '%s' is not valid "
					       "(valid: float32, pcm24, pcm16)\n", argv[a]), EXIT_USAGE;
		} else if (!strcmp(argv[a], "-q")) {
			quiet = 1;
		} else if (argv[a][0] == '-' || nfiles == 2) {
			return fprintf(stderr, "roomsim auralize: '%s' is not valid here (see roomsim "
				       "auralize --help)\n", argv[a]), EXIT_USAGE;
		} else {
			files[nfiles++] = argv[a];
		}
	}
	if (nfiles != 2 || !out)
		return fprintf(stderr, "roomsim auralize: expected IR.wav DRY.wav -o WET.wav (see "
			       "roomsim auralize --help)\n"), EXIT_USAGE;
	if ((rc = sound_read(files[0], &ir, &err)) || (rc = sound_read(files[1], &dry, &err)))
		goto done;
	if (ir.channels > 1 && dry.channels > 1 && ir.channels != dry.channels) {
		rc = rs_fail(&err, RS_EINPUT, "%s has %d channels and %s has %d (valid: a mono IR "
			     "or dry signal, or equal counts)", files[0], ir.channels, files[1],
			     dry.channels);
		goto done;
	}
	if ((rc = to_rate(&dry, ir.rate, &err)))
		goto done;
	nout = ir.channels > dry.channels ? ir.channels : dry.channels;
	ny = dry.frames + ir.frames - 1;
	{
		double *one = malloc(ny * sizeof(double));

		if (!one || !(y = malloc(ny * (size_t)nout * sizeof(double)))) {
			free(one);
			rc = rs_fail(&err, RS_ENOMEM, "out of memory for %zu output frames", ny);
			goto done;
		}
		for (int c = 0; c < nout; c++) {
			if (conv_ola(dry.ch[dry.channels > 1 ? c : 0], dry.frames,
				     ir.ch[ir.channels > 1 ? c : 0], ir.frames, one)) {
				free(one);
				rc = rs_fail(&err, RS_ENOMEM, "out of memory convolving");
				goto done;
			}
			for (size_t i = 0; i < ny; i++) {
				y[i * (size_t)nout + (size_t)c] = one[i];
				peak = fmax(peak, fabs(one[i]));
			}
		}
		free(one);
	}
	if (!isnan(normalize) && peak > 0) {
		const double g = pow(10, normalize / 20) / peak;

		for (size_t i = 0; i < ny * (size_t)nout; i++)
			y[i] *= g;
		peak *= g;
	}
	if ((rc = wav_write_frames(out, y, ny, nout, ir.rate, fmt, &clipped, &err)))
		goto done;
	for (size_t i = 0; fmt == ROOM_WAV_FLOAT32 && i < ny * (size_t)nout; i++)
		clipped += fabs(y[i]) > 1;	/* counted by the writer in PCM only */
	if (!quiet)
		printf("%s: %zu frames of %d channel(s) at %d Hz, peak %.1f dBFS\n", out, ny, nout,
		       ir.rate, 20 * log10(peak > 0 ? peak : 1e-300));
	if (clipped)
		fprintf(stderr, "roomsim auralize: %zu samples of %s lie beyond full scale (%s; "
			"--normalize -1 keeps the peak at -1 dBFS)\n", clipped, out,
			fmt == ROOM_WAV_FLOAT32 ? "kept in float32, but players clip them"
						: "clipped");
done:
	if (rc)
		fprintf(stderr, "roomsim auralize: %s\n", err.msg);
	free(y);
	sound_free(&ir);
	sound_free(&dry);
	return rc ? app_exit_status(rc) : EXIT_OK;
}
