/*
 * air.h - the air's absorption (ISO 9613-1) and its speed of sound, and the time-varying
 * filter that gives a receiver's signal the absorption of the path its sound has travelled
 * (docs/physics.md, "Air absorption").
 *
 * A sample at time t of an impulse response has travelled c t, so its sound has lost
 * a(f) c t dB, a the attenuation coefficient. air_apply() filters a signal frame by frame
 * (overlap-add, FFTW), each frame with the loss at its centre time.
 */
#ifndef SOLVER_AIR_H
#define SOLVER_AIR_H

#include <stddef.h>

struct air {
	double temperature;	/* degrees Celsius */
	double humidity;	/* relative humidity, % */
	double pressure;	/* kPa */
};

/* ISO 9613-1's pure-tone attenuation coefficient at f (Hz), in dB per metre. */
double air_attenuation(const struct air *a, double f);

/* The speed of sound at the air's temperature: 343.0 m/s at 20 degrees, times
 * sqrt(T / 293.15) (an ideal gas; humidity adds under 0.1 % and is left out). */
double air_sound_speed(const struct air *a);

/* Give x[0..n) (samples at rate fs, sample i at time i / fs) the air's absorption over the
 * distance c t its sound has travelled; in place. 0, or -1 when memory or an FFT plan
 * cannot be had. */
int air_apply(const struct air *a, double c, double fs, double *x, size_t n);

/* The frame length air_apply() uses at rate fs (samples, a power of two). */
size_t air_frame(double fs);

#endif
