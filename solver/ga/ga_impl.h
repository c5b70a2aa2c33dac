/*
 * ga_impl.h - what the geometric engine's files share (the files of solver/ga): the scene, the
 * triangles and planes, the random numbers, and the wall hit. Internal to solver/ga.
 */
#ifndef SOLVER_GA_IMPL_H
#define SOLVER_GA_IMPL_H

#include <embree3/rtcore.h>
#include <stdint.h>

#include "ga.h"

struct ga_tri {
	double n[3];		/* unit normal, pointing out of its owner (the box, mesh or shape) */
	double c[3];		/* centroid */
	int material;		/* index into room->materials */
	int owner;		/* -1: the base (box or mesh); s >= 0: shape s */
	int plane;		/* index into planes */
};

struct ga_plane {
	double n[3], d;		/* n . x = d */
	int side;		/* +1: air on the +n side, -1: on the -n side, 0: both or unknown */
};

struct ga {
	const struct room *room;
	RTCDevice dev;
	RTCScene scene;		/* every triangle */
	RTCScene base;		/* a mesh base alone, for the parity test with shapes; or NULL */
	struct ga_tri *tri;
	size_t ntri;
	struct ga_plane *planes;
	int nplanes;
	int filter;		/* 1: shapes: a hit is a wall only where air is on one side */
	int oblique;		/* a wall's normal is off the axes (walls may meet at acute
				 * angles) */
	double alpha[ROOM_MAX_MATERIALS][GA_BANDS];	/* absorption per band */
	double scat[ROOM_MAX_MATERIALS][GA_BANDS];	/* scattering per band */
	double air[GA_BANDS];	/* the air's intensity attenuation, 1/m (0: medium off) */
	double c, volume, area, scale;	/* m/s, m^3, m^2, the room's largest extent in m */
	double mat_area[ROOM_MAX_MATERIALS];	/* m^2 of walls of each material */
	double cast_rate;	/* wall hits per second on one thread, measured by the probe */
	const struct room_source *src;	/* the source's directivity (ga_directivity); NULL: omni */
	double lead;		/* s, the source's lead: every arrival that much later */
};

/* The source's pressure gain towards the unit vector d in band b. */
static inline double ga_pattern(const struct ga *g, const double d[3], int b)
{
	return g->src ? room_source_gain(g->src, d, ga_band_f[b]) : 1;
}

/* A wall hit: distance along the ray and the triangle. */
struct ga_hit {
	double t;
	size_t tri;
};

/* The first wall along org + t dir for t in (tnear, tfar); 0 when none. */
int ga_cast(const struct ga *g, const double org[3], const double dir[3], double tnear,
	    double tfar, struct ga_hit *hit);

/* How far p, just off triangle tri, may move along the unit vector dir, up to len: half the
 * way to the first wall there that is not of tri's plane (which the move is to clear:
 * rounding may have put p a little behind it), or len. A move off a wall near an acute edge
 * then does not cross the wall beside it. */
double ga_clearance(const struct ga *g, const double p[3], const double dir[3], double len,
		    size_t tri);

/* splitmix64: a generator of its own per ray, so that the ray's numbers do not depend on the
 * thread that traces it. */
static inline uint64_t ga_rand64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double ga_rand(uint64_t *s)
{
	return (double)(ga_rand64(s) >> 11) * 0x1.0p-53;
}

static inline double ga_dot(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

#endif
