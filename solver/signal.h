/*
 * signal.h - source signals and the IIR filters used on sources and receivers.
 *
 * Signals are sampled at t = n k (k the time step) and scaled as the free-field pressure,
 * in Pa, that the source produces 1 m away (docs/physics.md, "Sources").
 */
#ifndef SIG_SIGNAL_H
#define SIG_SIGNAL_H

#include <stddef.h>

#include "../model/room.h"

/* One second-order section, a0 normalised to 1 (direct form II transposed). */
struct sig_biquad {
	double b0, b1, b2, a1, a2;
};

#define SIG_MAX_SECTIONS 4	/* the band-passes of order 8 (iso3382.h) */

struct sig_filter {
	struct sig_biquad s[SIG_MAX_SECTIONS];
	int nsections;
};

/*
 * Butterworth high-pass or low-pass of order 2 or 4 at fc Hz for sample rate fs, by the
 * bilinear transform with pre-warping (RBJ Audio EQ Cookbook sections, Butterworth Qs).
 */
void sig_butterworth(struct sig_filter *f, int highpass, int order, double fc, double fs);

/* Run f over x[0..n) in place, causally, from rest. */
void sig_apply(const struct sig_filter *f, double *x, size_t n);

/* Run f over x[0..n) in place backwards in time, from rest after the last sample. */
void sig_apply_reversed(const struct sig_filter *f, double *x, size_t n);

/* Run f forwards then backwards: zero phase, squared magnitude. */
void sig_apply_zero_phase(const struct sig_filter *f, double *x, size_t n);

/*
 * The injected signal of source s for n steps of k seconds: the pulse (impulse, gaussian,
 * ricker) followed by the source's DC-blocking high-pass when s->highpass > 0.
 */
void sig_source(const struct room_source *s, double k, size_t n, double *out);

/*
 * The band-limiting filter of the snapshots (docs/output.md, "Snapshots"): a zero-phase
 * low-pass FIR h[0 .. 2m] for a signal sampled at fs, a Kaiser-windowed sinc whose stop band
 * (at least SIG_BAND_STOP_DB down) starts at fmax and whose transition is SIG_BAND_WIDTH x
 * fmax wide below it, with unit gain at DC. Returns m (0 with h[0] = 1 where fmax is above
 * 0.45 fs, which the rate band-limits itself); -1 when out of memory. *h is malloc'd.
 */
/*
 * The minimum-phase spectrum of a log magnitude, by the real cepstrum (Oppenheim and Schafer
 * 1975, section 10.5): spec holds the L / 2 + 1 bins of an L-point transform (L even) as
 * (re, im) pairs, the log magnitudes in re on entry (im ignored), the minimum-phase spectrum
 * on return. -1 when out of memory.
 */
int sig_min_phase(double *spec, size_t L);

#define SIG_BAND_STOP_DB 60.0
#define SIG_BAND_WIDTH 0.25
int sig_band_fir(double fmax, double fs, double **h);

#endif
