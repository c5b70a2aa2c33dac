/*
 * wav.h - turn raw receiver signals into WAV impulse responses (docs/physics.md, "Outputs").
 */
#ifndef WAV_WAV_H
#define WAV_WAV_H

#include <stddef.h>

#include "../common/rs_error.h"
#include "config.h"

/*
 * Band-limit x[0..n) at rate fs in place: a zero-phase 4th-order Butterworth low-pass at
 * fmax (so arrival times are kept), then a causal 2nd-order Butterworth high-pass at
 * highpass Hz that removes DC (skipped when highpass is 0).
 */
void wav_condition(double *x, size_t n, double fs, double fmax, double highpass);

/*
 * Resample x[0..n) from rate fs_in to fs_out with libsoxr (very high quality, linear
 * phase, time-aligned) into out[0..nout), zero-filling past the input's end.
 */
int wav_resample(const double *x, size_t n, double fs_in, double fs_out, double *out,
		 size_t nout, struct rs_error *err);

/*
 * Write x[0..n) as a mono WAV at rate in format fmt, through path + ".tmp" renamed onto
 * path, so the file is never seen half written. *clipped counts samples beyond +-1 in
 * PCM formats (they are clipped).
 */
int wav_write(const char *path, const double *x, size_t n, int rate, enum room_wavfmt fmt,
	      size_t *clipped, struct rs_error *err);

/* The same for n frames of channels interleaved values. */
int wav_write_frames(const char *path, const double *x, size_t n, int channels, int rate,
		     enum room_wavfmt fmt, size_t *clipped, struct rs_error *err);

#endif
