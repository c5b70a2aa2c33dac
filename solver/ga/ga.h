/*
 * ga.h - the geometric-acoustics engine (docs/physics.md, "Geometric acoustics"): image
 * sources and ray tracing through the room's own surfaces with Embree, and the synthesis of a
 * pressure impulse response from them, for the part of a hybrid run above the crossover.
 *
 * The engine reads the same struct room as the wave engine: a box's six faces, a mesh's
 * triangles and shapes as triangles (a shape's surface is a wall where it has air on one side
 * only, as the voxeliser decides), each with its material's absorption and scattering in the
 * octave bands ga_band_f. Energies are in units of the direct sound's energy 1 m from the
 * source, so that a synthesised response has the wave part's scale: a unit impulse at the
 * source gives 1/r at distance r (Pa per Pa at 1 m).
 */
#ifndef SOLVER_GA_H
#define SOLVER_GA_H

#include <stddef.h>

#include "../../common/rs_error.h"
#include "../../model/room.h"

#define GA_BANDS 9		/* octaves 63 Hz to 16 kHz */
#define GA_BIN 1e-3		/* s: the rays' energy histogram's bin */

/* The octave bands' nominal centres, Hz. */
extern const double ga_band_f[GA_BANDS];

struct ga;

/*
 * The room's surfaces as an Embree scene, the materials per band and the air's absorption;
 * then rays from every source check that the room is closed. Errors name the room file's
 * key (RS_EINPUT): a voxel-file room, a mesh with a hole the rays leave by.
 */
int ga_open(const struct room *room, struct ga **out, struct rs_error *err);
void ga_close(struct ga *g);

/* The directivity of the source of the ga_images() and ga_trace() calls that follow: s's
 * (room_source_gain() at each band's centre; kept, not copied), every arrival lead seconds
 * later (a balloon's wave part sounds DIR_LEAD steps late); NULL: omni (ga_open's). */
void ga_directivity(struct ga *g, const struct room_source *s, double lead);

/* The mixing time of the room's response, s: sqrt(V) ms (V in m^3; Lindau, Kosanke and
 * Weinzierl 2012), after which the crossover treats the two parts as diffuse. */
double ga_mixing_time(const struct ga *g);

/* The reflections a ray makes in duration seconds (the mean free path 4 V / S, or until
 * the band that loses least is 90 dB down), and the seconds one wall hit takes on one
 * thread, as measured when the scene was opened: what roomsim info estimates from. */
void ga_estimate(const struct ga *g, double duration, double *reflections, double *seconds);

/* What ga_open() found: triangles, planes (coplanar triangles), the air's volume (m^3) and
 * the walls' area (m^2). */
void ga_describe(const struct ga *g, size_t *ntri, int *nplanes, double *volume, double *area);

/* One specular arrival at a receiver: its delay, the direction it arrives from (a unit
 * vector from the receiver towards its image), its order and its pressure amplitude per band
 * (1/distance times each wall's sqrt((1 - alpha)(1 - scattering)) and the air's loss). */
struct ga_image {
	double t;
	double dir[3];
	double amp[GA_BANDS];
	int order;
};

/*
 * Every image source of src up to `order` that the receivers rec[0..nrec) see through the
 * room's walls (each reflection on the wall's own triangles, nothing in between), into
 * out[q] (malloc'd, n[q] of them, sorted by time). RS_ENOMEM, or RS_EINPUT (naming
 * hybrid.image_order) when the room's planes make more than GA_MAX_IMAGES candidates.
 */
#define GA_MAX_IMAGES 20000000L
int ga_images(const struct ga *g, const double src[3], const double (*rec)[3], int nrec,
	      int order, struct ga_image **out, size_t *n, struct rs_error *err);

/* The number of candidate image sources up to order (before visibility), for roomsim info. */
double ga_image_candidates(const struct ga *g, const double src[3], int order);

/* The image order a run uses: hybrid.image_order when given; else the default, lowered until
 * no source has more than GA_AUTO_IMAGES candidates (a room of many planes: curved shapes'
 * facets, a detailed mesh). */
#define GA_AUTO_IMAGES 2000000.0
int ga_order(const struct ga *g);

/*
 * The rays' energy histograms of one source: e[(q * nbins + k) * GA_BANDS + b] is the energy
 * of band b that reaches receiver q in bin k (times k GA_BIN to (k + 1) GA_BIN), from paths
 * that are not specular of order `skip_order` or less (the image sources have those).
 */
struct ga_hist {
	int nrec;
	size_t nbins;
	double *e;
	/* with directions (ga_trace_spatial): per receiver its index among those that record
	 * them (-1: none), and d[((qd * ndbins + K) * GA_DIR_CELLS + c) * GA_BANDS + b] the
	 * energy of band b arriving from direction cell c (ga_dir_cell) in bin K of GA_DIR_BIN */
	int *dir_of;
	size_t ndbins;
	double *d;
	long rays;		/* traced */
	long escaped;		/* left the room (a hole in the surfaces) */
	double reflections;	/* mean per ray */
};

/*
 * Trace `rays` rays from src for `duration` seconds: specular or diffuse (Lambert) at each
 * wall by its scattering, energy lost by absorption and the air, receivers spheres of
 * `radius` metres. The same seed gives the same bits on any number of threads. RS_ENOMEM.
 */
int ga_trace(const struct ga *g, const double src[3], const double (*rec)[3], int nrec,
	     double radius, double duration, long rays, int skip_order, unsigned long seed,
	     struct ga_hist *h, struct rs_error *err);

/* The same, and for each receiver q with spatial[q] set the directions energy arrives from,
 * in cells of the sphere (a cube's faces, 3 x 3 each) and bins of GA_DIR_BIN. */
#define GA_DIR_BIN 10e-3
#define GA_DIR_CELLS 54
int ga_trace_spatial(const struct ga *g, const double src[3], const double (*rec)[3], int nrec,
		     const int *spatial, double radius, double duration, long rays,
		     int skip_order, unsigned long seed, struct ga_hist *h, struct rs_error *err);

/* The direction cell of the unit vector d, and its centre as a unit vector. */
int ga_dir_cell(const double d[3]);
void ga_dir_centre(int cell, double d[3]);
void ga_hist_free(struct ga_hist *h);

/*
 * Receiver q's pressure impulse response at rate fs, n samples, into out: the arrivals as
 * band-interpolated impulses at their exact times, and the histogram (h may be NULL) as a
 * Dirac sequence of the room's reflection density shaped by each band's envelope; the bands
 * join through zero-phase weights that sum to one at every frequency. The sequence's random
 * numbers come from seed. RS_ENOMEM.
 */
int ga_synth(const struct ga *g, const struct ga_image *im, size_t nim, const struct ga_hist *h,
	     int q, double fs, size_t n, unsigned long seed, double *out, struct rs_error *err);

/*
 * How sound arriving from a direction becomes the channels of a spatial response: nch
 * channels of FIRs of `taps` taps at the synthesis rate. filter() gives, for the unit vector
 * d from the receiver towards where the sound comes from, out[ch * taps + j] and a delay in
 * seconds per channel (delay[ch], >= 0). Ambisonics: taps 1, the spherical harmonics;
 * binaural: two HRIRs.
 */
struct ga_render {
	int nch, taps;
	void (*filter)(void *ctx, const double d[3], double *out, double *delay);
	void *ctx;
};

/*
 * ga_synth() for a spatial receiver q (one that recorded directions): out[ch] (n samples
 * each) the arrivals through the filters of their directions, and each band of each
 * pulse of the Dirac sequence (the same pulses as ga_synth's, so that a channel whose
 * filter is 1 everywhere is ga_synth's response) through the filter of a direction drawn
 * from that band's energy per direction cell in its time bin. RS_ENOMEM.
 */
int ga_synth_render(const struct ga *g, const struct ga_image *im, size_t nim,
		    const struct ga_hist *h, int q, const struct ga_render *rd, double fs,
		    size_t n, unsigned long seed, double **out, struct rs_error *err);

/*
 * The crossover: low <- lowpass(low) + highpass(high), both n samples at fs, through
 * zero-phase filters over the half octave centred on fc (the low branch 1 below fc 2^-1/4,
 * 0 above fc 2^1/4, raised cosines in log frequency between). Before t_mix (s) the two parts
 * hold the same arrivals, coherent: there the branches' gains sum to one. After it the parts
 * are diffuse fields of independent phases: there their squares sum to one, so that the
 * energy is flat. A 5 ms crossfade joins the two. RS_ENOMEM.
 */
int ga_crossover(double *low, const double *high, size_t n, double fs, double fc, double t_mix,
		 struct rs_error *err);

/* The crossover's low branch gain at f: coherent (the high branch's is 1 minus it), or
 * not (the high branch's is the square root of 1 minus its square). */
double ga_crossover_gain(double f, double fc, int coherent);

/* Band b's weight at f in the synthesis (the weights sum to one at every f). */
double ga_band_weight(int b, double f);

#endif
