/* wav.c - signal conditioning (filters), resampling (libsoxr) and WAV files (libsndfile). */
#include "wav.h"

#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/signal.h"

void wav_condition(double *x, size_t n, double fs, double fmax, double highpass)
{
	struct sig_filter f;

	if (fmax < 0.45 * fs) {	/* above that the rate itself band-limits the signal */
		sig_butterworth(&f, 0, 4, fmax, fs);
		sig_apply_zero_phase(&f, x, n);
	}
	if (highpass > 0) {
		sig_butterworth(&f, 1, 2, highpass, fs);
		sig_apply(&f, x, n);
	}
}

int wav_resample(const double *x, size_t n, double fs_in, double fs_out, double *out,
		 size_t nout, struct rs_error *err)
{
	soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT64_I, SOXR_FLOAT64_I);
	soxr_quality_spec_t q = soxr_quality_spec(SOXR_VHQ, SOXR_LINEAR_PHASE);
	size_t cap = (size_t)ceil(n * fs_out / fs_in) + 64, done = 0;
	double *buf = malloc((cap > nout ? cap : nout) * sizeof(*buf));
	soxr_error_t e;

	if (!buf)
		return rs_fail(err, RS_ENOMEM, "out of memory resampling %zu samples", n);
	e = soxr_oneshot(fs_in, fs_out, 1, x, n, NULL, buf, cap, &done, &io, &q, NULL);
	if (e) {
		free(buf);
		return rs_fail(err, RS_EINTERNAL, "libsoxr: resampling %g Hz to %g Hz: %s", fs_in,
			       fs_out, soxr_strerror(e));
	}
	memcpy(out, buf, (done < nout ? done : nout) * sizeof(*out));
	if (done < nout)
		memset(out + done, 0, (nout - done) * sizeof(*out));
	free(buf);
	return 0;
}

int wav_write(const char *path, const double *x, size_t n, int rate, enum room_wavfmt fmt,
	      size_t *clipped, struct rs_error *err)
{
	return wav_write_frames(path, x, n, 1, rate, fmt, clipped, err);
}

int wav_write_frames(const char *path, const double *x, size_t n, int channels, int rate,
		     enum room_wavfmt fmt, size_t *clipped, struct rs_error *err)
{
	static const int subtype[] = { [ROOM_WAV_FLOAT32] = SF_FORMAT_FLOAT,
				       [ROOM_WAV_PCM24] = SF_FORMAT_PCM_24,
				       [ROOM_WAV_PCM16] = SF_FORMAT_PCM_16 };
	SF_INFO info = { .samplerate = rate, .channels = channels,
			 .format = SF_FORMAT_WAV | subtype[fmt] };
	char tmp[ROOM_PATH_MAX + 8];
	SNDFILE *sf;
	sf_count_t wrote;

	*clipped = 0;
	if (fmt != ROOM_WAV_FLOAT32)
		for (size_t i = 0; i < n * (size_t)channels; i++)
			*clipped += fabs(x[i]) > 1;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	errno = 0;
	sf = sf_open(tmp, SFM_WRITE, &info);
	if (!sf) {	/* it may have made the file and failed on the header */
		const int e = errno;

		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: cannot write: %s", path,
			       e ? strerror(e) : sf_strerror(NULL));
	}
	sf_command(sf, SFC_SET_CLIPPING, NULL, SF_TRUE);
	/* No PEAK chunk: it holds a timestamp, and the same run should give the same bytes. */
	sf_command(sf, SFC_SET_ADD_PEAK_CHUNK, NULL, SF_FALSE);
	errno = 0;
	wrote = sf_writef_double(sf, x, (sf_count_t)n);
	if (wrote != (sf_count_t)n) {
		rs_fail(err, RS_EIO, "%s: write failed: %s", path,
			errno ? strerror(errno) : sf_strerror(sf));
		sf_close(sf);
		remove(tmp);
		return RS_EIO;
	}
	if (sf_close(sf) || rename(tmp, path)) {
		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: cannot finish writing: %s", path, strerror(errno));
	}
	return 0;
}
