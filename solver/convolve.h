/*
 * convolve.h - long convolutions by overlap-add with FFTW (roomsim auralize).
 */
#ifndef SOLVER_CONVOLVE_H
#define SOLVER_CONVOLVE_H

#include <stddef.h>

/*
 * y[0..nx + nh - 1) = x * h: x in blocks of B samples (B the power of two at least nh, and
 * at least 4096), each transformed at 2 B, multiplied by h's transform and added back. Any
 * length of x at memory O(B) besides y. 0, or -1 when out of memory.
 */
int conv_ola(const double *x, size_t nx, const double *h, size_t nh, double *y);

#endif
