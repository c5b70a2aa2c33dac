/*
 * directivity.h - a source with a per-band pattern (a balloon, model/room.h) on the grid:
 * filters for the nodes of a small block around it whose far fields add up to the pattern
 * (docs/physics.md, "Directional sources").
 *
 * The block is DIR_NODES^3 nodes centred on the source's cell's centre. Per frequency, the
 * nodes' weights are the least-squares fit (Tikhonov-limited) of the pattern on
 * DIR_DIRECTIONS directions, each direction's response the minimum-phase filter of the
 * balloon's levels there. The monopole of the cell's eight central nodes carries all that
 * the fit leaves: above 1.5 x ftop the source is a point. The filters are DIR_TAPS long
 * and start DIR_LEAD steps before the source's centre sounds, so the source sounds
 * DIR_LEAD steps late (the geometric part adds the same delay).
 */
#ifndef SOLVER_DIRECTIVITY_H
#define SOLVER_DIRECTIVITY_H

#include "../common/rs_error.h"
#include "../model/room.h"

#define DIR_NODES 4		/* per side: orders up to 3 of the pattern */
#define DIR_FFT 1024		/* steps of the design's frequency grid */
#define DIR_LEAD 32		/* steps the node filters reach before the centre's sound */
#define DIR_TAPS 256		/* steps each node's filter lasts */
#define DIR_DIRECTIONS 240	/* directions the design fits */
#define DIR_CHECK_DIRECTIONS 500	/* and that its check measures */
#define DIR_REG 1e-4		/* Tikhonov weight per direction: bounds the weights */
#define DIR_TOL_DB 1.0		/* the level error per band that the wave part is valid within */
#define DIR_BANDS 10		/* octave bands checked: 31.5 Hz to 16 kHz */

struct dir_design {
	double g[DIR_NODES * DIR_NODES * DIR_NODES][DIR_TAPS];	/* node (x fastest) taps */
	int nbands;		/* octave bands whose centre is at most ftop */
	double band_f[DIR_BANDS];	/* their centres, Hz */
	double band_err[DIR_BANDS];	/* each one's worst level error, dB, over directions
					 * within 20 dB of its loudest */
	double fvalid;		/* the highest centre up to which every band is within
				 * DIR_TOL_DB (0: none) */
};

/*
 * Design the block's filters for source s (its balloon in its frame) on a grid of spacing
 * h, time step dt, sound speed c, the pattern fitted up to ftop Hz. Node n's value at step
 * i is sum_j g[n][j] sig[i - j] for the source's signal sig. RS_ENOMEM.
 */
int dir_design(const struct room_source *s, double h, double dt, double c, double ftop,
	       struct dir_design *d, struct rs_error *err);

#endif
