/*
 * plot.h - the figures of roomsim: a response's analysis (`roomsim analyze`, below), and
 * the plot of a material's fit (`roomsim materials NAME`): above, the target
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

#define PLOT_MAX_BANDS 40

/* One response and its analysis per band (roomsim analyze), for plot_response. */
struct plot_response {
	const char *title;
	const double *h;	/* the response, n samples at fs from its onset on */
	size_t n;
	double fs, fmax;	/* Hz; the spectrogram goes up to fmax */
	int nbands;
	const char *band[PLOT_MAX_BANDS];	/* nominal names */
	const double *edc[PLOT_MAX_BANDS];	/* decay curves, dB, from the onset */
	size_t nedc[PLOT_MAX_BANDS];
	double a30[PLOT_MAX_BANDS], s30[PLOT_MAX_BANDS];	/* T30's line: dB, dB/s */
	double edt[PLOT_MAX_BANDS], t30[PLOT_MAX_BANDS];	/* s, NAN: none */
	double sabine[PLOT_MAX_BANDS], eyring[PLOT_MAX_BANDS];	/* s, NAN: none */
};

/*
 * BASE.png and BASE.svg of a response: its waveform, its decay curve per band with T30's
 * regression lines, T30 and EDT per band against Sabine and Eyring, and its spectrogram
 * (FFTW, Hann windows of about 40 ms). 0, or RS_EIO / RS_ENOMEM.
 */
int plot_response(const char *base, const struct plot_response *r, struct rs_error *err);

/* A parameter over a receiver grid's lattice (roomsim analyze), for plot_map. */
struct plot_map {
	const char *title;
	const char *unit;		/* of the values, for the colour bar */
	char xlabel[16], ylabel[16];	/* the lattice's axes, e.g. "x, m" */
	int nx, ny;			/* the lattice: nx x ny points, x fastest */
	double x0, y0, spacing;		/* its point (0, 0) and spacing, m */
	const double *v;		/* nx * ny values; NAN where no point is */
	double lo[2], hi[2];		/* the room's extent along the two axes, m */
	int nmarks;			/* points to mark: sources and receivers, in the plane */
	const double (*mark)[2];
	const char *const *mark_name;
};

/* BASE.png and BASE.svg of a map: the values as coloured cells of the lattice (grey where
 * no point is) with equal scales in metres, a colour bar in the unit, the room's extent and
 * the marks. 0, or RS_EIO / RS_ENOMEM. */
int plot_map(const char *base, const struct plot_map *m, struct rs_error *err);

#endif
