/*
 * plot.h - the plot of a material's fit (`roomsim materials NAME`): above, the target
 * absorption per band and the model's random-incidence absorption alpha(f) with its band
 * averages; below, the model's normal-incidence |R(f)| = |(1 - beta) / (1 + beta)|; 20 Hz to
 * 20 kHz on a log axis. Written as BASE.png and BASE.svg (cairo).
 */
#ifndef IO_PLOT_H
#define IO_PLOT_H

#include "../common/rs_error.h"
#include "../solver/wall.h"

/* 0, or RS_EIO naming the file that could not be written. */
int plot_fit(const char *base, const char *title, const struct wall_bands *b,
	     const struct wall_fit *fit, struct rs_error *err);

#endif
