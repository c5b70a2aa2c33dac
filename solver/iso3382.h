/*
 * iso3382.h - room acoustic parameters of an impulse response (ISO 3382-1:2009, annex A):
 * octave and third-octave band filters, the energy decay curve by backward integration, and
 * EDT, T20, T30, C50, C80, D50, Ts and G per band (docs/analysis.md).
 */
#ifndef SOLVER_ISO3382_H
#define SOLVER_ISO3382_H

#include <stddef.h>

#include "signal.h"

/* A band: its exact mid-band frequency and edges (IEC 61260-1, base ten) and nominal name. */
struct iso_band {
	double fm, f1, f2;	/* Hz */
	char name[8];		/* "63", "1k", ... */
};

#define ISO_MAX_BANDS 40	/* third octaves from 20 Hz to 20 kHz are 31 */

/*
 * The octave (third = 0) or third-octave bands from 63 Hz (50 Hz in thirds) up whose upper
 * edge is at most fmax and below fs / 2, into out; their number.
 */
int iso_bands(int third, double fmax, double fs, struct iso_band *out);

/*
 * The band's filter at sample rate fs: a Butterworth band-pass of order 8 (four sections,
 * the low-pass prototype of order 4 mapped onto the band edges, pre-warped for the bilinear
 * transform), unit gain at its centre. It meets IEC 61260-1 class 1 for octave and
 * third-octave bands (tests/test_analysis.c checks the tolerance mask at the standard's
 * breakpoints). Run it with sig_apply_reversed(): in reverse time the filter's ringing
 * precedes the onset instead of lengthening the decay (ISO 3382-1 A.2.4).
 */
void iso_band_filter(const struct iso_band *b, double fs, struct sig_filter *f);

/* The onset of h: the first sample whose square reaches 20 dB below the largest (ISO 3382-1
 * A.3.4); 0 for silence. */
size_t iso_onset(const double *h, size_t n);

/* What analysis of one band gives; NAN where it cannot be had (a decay range not reached,
 * G without the source's energy). */
struct iso_params {
	double edt, t20, t30;	/* s */
	double c50, c80;	/* dB */
	double d50;		/* ratio, 0 to 1 */
	double ts;		/* s */
	double g;		/* dB */
	double tail;		/* the energy added past the end, as a fraction of the total */
	double range;		/* dB from the start of the decay curve to where it is cut */
};

/*
 * The parameters of h[0..n) (one band, already filtered), sampled at fs, times from sample
 * onset. The decay curve is the backward integral of h^2 plus the energy an exponential
 * tail would add past the end (its rate fitted to the envelope's last 20 dB, ISO 3382-1
 * A.2.2's compensation for a truncated response); edc, when not NULL, receives it in dB
 * from onset on (n - onset values). ref10: the energy in the band of the source's
 * free-field pressure 10 m away (G; NAN: none).
 */
void iso_analyse(const double *h, size_t n, double fs, size_t onset, double ref10,
		 struct iso_params *p, double *edc);

/*
 * ISO 3382-1 A.2.6's lateral energy fractions of one band from a first-order ambisonic
 * response: w the omnidirectional channel and y the lateral figure-of-eight (ACN 1, SN3D: unit
 * gain to the side, as the omni's), both filtered, n samples at fs, times from sample onset.
 * LF = E_y(5..80 ms) / E_w(0..80 ms), LFC = sum |y w| (5..80 ms) / E_w(0..80 ms); NAN where
 * the response is shorter than 80 ms or silent.
 */
void iso_lateral(const double *w, const double *y, size_t n, double fs, size_t onset, double *lf,
		 double *lfc);

/* The least-squares decay of edc (dB, one value per sample at fs) between hi and lo dB
 * (hi > lo): the time for 60 dB, and the line's intercept (dB) and slope (dB/s) into a, s
 * when not NULL; NAN when edc does not reach lo. */
double iso_decay(const double *edc, size_t n, double fs, double hi, double lo, double *a,
		 double *s);

#endif
