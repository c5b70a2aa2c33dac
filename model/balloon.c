/*
 * balloon.c - a source's pattern per band (model/room.h, struct room_balloon): its gain in
 * any direction and frequency, the source's frame, and the library's balloons from their
 * closed forms (docs/input.md and docs/physics.md, "Directional sources").
 */
#include "room.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library's grid: 5 degrees, and third-octave bands 50 Hz to 16 kHz. */
#define LIB_STEP 5
#define LIB_BAND_LO (-13)	/* 50 Hz: 1000 * 2^(-13/3) */
#define LIB_BAND_HI 12		/* 16 kHz */
#define LIB_SOUND_SPEED 343.0	/* m/s, at which the closed forms' sizes are in wavelengths */
/* the spheres: a head's radius; a small two-way loudspeaker's box as a sphere of about its
 * volume (7 litres), its woofer a piston of 6.5 cm radius */
#define TALKER_RADIUS 0.0875
#define SPEAKER_RADIUS 0.12
#define SPEAKER_PISTON 0.065

const char *const room_balloon_names[] = { "talker", "loudspeaker", NULL };

double room_balloon_gain(const struct room_balloon *b, const double d[3], double f)
{
	const double az = fmod(atan2(d[1], d[0]) * 180 / M_PI + 360, 360);
	const double el = asin(fmax(-1, fmin(1, d[2]))) * 180 / M_PI;
	double x = az / b->daz, y = (el + 90) / b->del, lf, db = 0;
	int a0 = (int)floor(x), e0 = (int)floor(y), k0 = 0;
	double wk = 0;

	x -= a0;
	y -= e0;
	if (e0 >= b->nel - 1) {
		e0 = b->nel - 2;
		y = 1;
	}
	/* frequency: linear in log f between the centres around f */
	lf = log(f > 0 ? f : b->f[0]);
	if (b->nbands > 1 && f > b->f[0]) {
		while (k0 < b->nbands - 2 && f > b->f[k0 + 1])
			k0++;
		wk = (lf - log(b->f[k0])) / (log(b->f[k0 + 1]) - log(b->f[k0]));
		wk = wk > 1 ? 1 : wk;
	}
	for (int i = 0; i < 4; i++) {
		const int a = (a0 + (i & 1)) % b->naz, e = e0 + (i >> 1);
		const double w = ((i & 1) ? x : 1 - x) * ((i >> 1) ? y : 1 - y);
		const float *v = b->db + ((size_t)e * b->naz + a) * b->nbands;

		if (w == 0)
			continue;
		db += w * (b->nbands > 1 ? (1 - wk) * v[k0] + wk * v[k0 + 1] : v[0]);
	}
	return pow(10, db / 20);
}

double room_source_gain(const struct room_source *s, const double d[3], double f)
{
	double l[3];

	if (!s->balloon)
		return s->pattern_a + (1 - s->pattern_a) *
		       (s->aim[0] * d[0] + s->aim[1] * d[1] + s->aim[2] * d[2]);
	for (int i = 0; i < 3; i++)
		l[i] = s->frame[i][0] * d[0] + s->frame[i][1] * d[1] + s->frame[i][2] * d[2];
	return room_balloon_gain(s->balloon, l, f);
}

void room_source_frame(struct room_source *s)
{
	double *f = s->frame[0], *l = s->frame[1], *u = s->frame[2], n;

	memcpy(f, s->aim, sizeof(s->aim));
	l[0] = -f[1];		/* z x front */
	l[1] = f[0];
	l[2] = 0;
	n = hypot(l[0], l[1]);
	if (n < 1e-9) {
		l[0] = 0;
		l[1] = 1;
	} else {
		l[0] /= n;
		l[1] /= n;
	}
	u[0] = f[1] * l[2] - f[2] * l[1];
	u[1] = f[2] * l[0] - f[0] * l[2];
	u[2] = f[0] * l[1] - f[1] * l[0];
}

/* The spherical Bessel functions j_n, y_n (n < nmax, nmax >= 2) at x and their derivatives, by upward
 * recurrence: y_n's is stable, and where j_n's is not (n > x) |y_n| dwarfs it in h_n. */
static void bessel_jy(int nmax, double x, double *j, double *y, double *jd, double *yd)
{
	j[0] = sin(x) / x;
	y[0] = -cos(x) / x;
	j[1] = sin(x) / (x * x) - cos(x) / x;	/* nmax >= 2 */
	y[1] = -cos(x) / (x * x) - sin(x) / x;
	for (int n = 2; n < nmax; n++) {
		j[n] = (2 * n - 1) / x * j[n - 1] - j[n - 2];
		y[n] = (2 * n - 1) / x * y[n - 1] - y[n - 2];
	}
	jd[0] = -j[1];
	yd[0] = -y[1];
	for (int n = 1; n < nmax; n++) {	/* f_n' = f_(n-1) - (n + 1) / x f_n */
		jd[n] = j[n - 1] - (n + 1) / x * j[n];
		yd[n] = y[n - 1] - (n + 1) / x * y[n];
	}
}

/*
 * The far-field pressure of a rigid sphere of radius a whose surface moves with the
 * axisymmetric velocity of Legendre coefficients v[n], at angle theta from the axis, ka:
 * sum_n v_n (-i)^(n+1) P_n(cos theta) / h_n'(ka) (Morse and Ingard 1968, section 7.2).
 * cth holds cos theta for nth angles; out gets |p|.
 */
#define SPHERE_TERMS 80
static void sphere_far(const double *v, double ka, const double *cth, int nth, double *out)
{
	double j[SPHERE_TERMS], y[SPHERE_TERMS], jd[SPHERE_TERMS], yd[SPHERE_TERMS];
	double complex c[SPHERE_TERMS], mi = 1;
	const int nt = (int)fmin(SPHERE_TERMS, ka + 30);

	bessel_jy(nt, ka, j, y, jd, yd);
	for (int n = 0; n < nt; n++) {
		mi *= -I;
		c[n] = isfinite(yd[n]) ? v[n] * mi / (jd[n] + I * yd[n]) : 0;
	}
	for (int t = 0; t < nth; t++) {
		double p0 = 1, p1 = cth[t];
		double complex s = c[0] + (nt > 1 ? c[1] * p1 : 0);

		for (int n = 2; n < nt; n++) {
			const double p2 = ((2 * n - 1) * cth[t] * p1 - (n - 1) * p0) / n;

			s += c[n] * p2;
			p0 = p1;
			p1 = p2;
		}
		out[t] = cabs(s);
	}
}

/* Legendre coefficients of the velocity: a point at the pole, (2n + 1); a cap of half-angle
 * alpha moving as one, (P_(n-1)(cos alpha) - P_(n+1)(cos alpha)) / 2 (P_(-1) = 1). */
static void velocity(int piston, double ca, double *v)
{
	double p[SPHERE_TERMS + 1];

	p[0] = 1;
	p[1] = ca;
	for (int n = 2; n <= SPHERE_TERMS; n++)
		p[n] = ((2 * n - 1) * ca * p[n - 1] - (n - 1) * p[n - 2]) / n;
	for (int n = 0; n < SPHERE_TERMS; n++)
		v[n] = !piston ? 2 * n + 1 : 0.5 * ((n ? p[n - 1] : 1) - p[n + 1]);
}

int room_balloon_library(const char *name, struct room_balloon *b)
{
	const int piston = name && !strcmp(name, "loudspeaker");
	const double a = piston ? SPEAKER_RADIUS : TALKER_RADIUS, one = 1;
	double v[SPHERE_TERMS], *cth, *mag, front;
	size_t nd;

	if (!name || (!piston && strcmp(name, "talker")))
		return -1;
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->nbands = LIB_BAND_HI - LIB_BAND_LO + 1;
	b->naz = 360 / LIB_STEP;
	b->nel = 180 / LIB_STEP + 1;
	b->daz = b->del = LIB_STEP;
	nd = (size_t)b->naz * b->nel;
	b->db = malloc(nd * b->nbands * sizeof(*b->db));
	cth = malloc(nd * sizeof(*cth));
	mag = malloc(nd * sizeof(*mag));
	if (!b->db || !cth || !mag) {
		free(cth);
		free(mag);
		return -2;
	}
	velocity(piston, sqrt(1 - (SPEAKER_PISTON / a) * (SPEAKER_PISTON / a)), v);
	for (int e = 0; e < b->nel; e++)	/* the cosine of each direction's angle from the front */
		for (int i = 0; i < b->naz; i++)
			cth[(size_t)e * b->naz + i] = cos((-90 + e * b->del) * M_PI / 180) *
						      cos(i * b->daz * M_PI / 180);
	for (int k = 0; k < b->nbands; k++) {
		double ka;

		b->f[k] = 1000 * pow(2, (LIB_BAND_LO + k) / 3.0);
		ka = 2 * M_PI * b->f[k] / LIB_SOUND_SPEED * a;
		sphere_far(v, ka, &one, 1, &front);
		sphere_far(v, ka, cth, (int)nd, mag);
		for (size_t d = 0; d < nd; d++)
			b->db[d * b->nbands + k] = (float)(20 * log10(fmax(mag[d], 1e-9) / front));
	}
	free(cth);
	free(mag);
	return 0;
}
