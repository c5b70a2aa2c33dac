/*
 * ga_rays.c - ray tracing (ga.h): rays from the source carry energy per band, lose it to the
 * walls' absorption and the air, reflect specularly or diffusely by the walls' scattering,
 * and leave it in the receivers' spheres as they cross them (docs/physics.md, "Ray tracing").
 *
 * Each ray's random numbers come from the seed and the ray's index alone, and the
 * histograms add in fixed point (128-bit integers), so that the sums are the same bits in
 * any order: the result does not depend on the number of threads.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ga_impl.h"

__extension__ typedef __int128 acc_t;

#define ACC_ONE 0x1.0p100	/* fixed point: energy 1 is 2^100 */
#define RAY_FLOOR 1e-9		/* a ray ends when every band is 90 dB below its start */

/* A direction uniform on the sphere. */
static void sphere_dir(uint64_t *s, double d[3])
{
	const double z = 2 * ga_rand(s) - 1, ph = 2 * M_PI * ga_rand(s), r = sqrt(1 - z * z);

	d[0] = r * cos(ph);
	d[1] = r * sin(ph);
	d[2] = z;
}

/* A direction on the hemisphere about n, by Lambert's law (cosine-weighted). */
static void lambert_dir(uint64_t *s, const double n[3], double d[3])
{
	const double r = sqrt(ga_rand(s)), ph = 2 * M_PI * ga_rand(s);
	const double x = r * cos(ph), y = r * sin(ph), z = sqrt(fmax(0, 1 - r * r));
	double u[3], v[3], len;

	/* u, v: an orthonormal pair perpendicular to n */
	if (fabs(n[0]) < 0.9) {
		u[0] = 0;
		u[1] = n[2];
		u[2] = -n[1];
	} else {
		u[0] = -n[2];
		u[1] = 0;
		u[2] = n[0];
	}
	len = sqrt(ga_dot(u, u));
	for (int i = 0; i < 3; i++)
		u[i] /= len;
	v[0] = n[1] * u[2] - n[2] * u[1];
	v[1] = n[2] * u[0] - n[0] * u[2];
	v[2] = n[0] * u[1] - n[1] * u[0];
	for (int i = 0; i < 3; i++)
		d[i] = x * u[i] + y * v[i] + z * n[i];
}

/* The chord of the segment org + t dir, t in [0, tmax], in the sphere (c, r): its start and
 * end in *t0, *t1; 0 when it misses. */
static int chord(const double org[3], const double dir[3], double tmax, const double c[3],
		 double r, double *t0, double *t1)
{
	double oc[3], b, q, disc;

	for (int i = 0; i < 3; i++)
		oc[i] = org[i] - c[i];
	b = ga_dot(oc, dir);
	q = ga_dot(oc, oc) - r * r;
	disc = b * b - q;
	if (disc <= 0)
		return 0;
	disc = sqrt(disc);
	*t0 = fmax(0, -b - disc);
	*t1 = fmin(tmax, -b + disc);
	return *t1 > *t0;
}

struct tracer {
	const struct ga *g;
	const double (*rec)[3];
	int nrec, skip;
	double radius, vrec, dmax, dt;
	size_t nbins;
	const int *dir_of;	/* per receiver: its direction histogram, or -1 */
	size_t ndbins, cells;	/* direction bins; the energy histogram's values (the direction
				 * histograms follow them in a thread's accumulators) */
};

int ga_dir_cell(const double d[3])
{
	const double a[3] = { fabs(d[0]), fabs(d[1]), fabs(d[2]) };
	const int ax = a[0] >= a[1] && a[0] >= a[2] ? 0 : a[1] >= a[2] ? 1 : 2;
	const int u = (ax + 1) % 3, v = (ax + 2) % 3;
	const int face = 2 * ax + (d[ax] < 0);
	const double m = fmax(a[ax], 1e-300);
	const int i = (int)fmin(2, floor((d[u] / m + 1) * 1.5));
	const int j = (int)fmin(2, floor((d[v] / m + 1) * 1.5));

	return face * 9 + (i < 0 ? 0 : i) * 3 + (j < 0 ? 0 : j);
}

void ga_dir_centre(int cell, double d[3])
{
	const int face = cell / 9, ax = face / 2, u = (ax + 1) % 3, v = (ax + 2) % 3;
	const double len = sqrt(1 + pow(-1 + (2 * (cell % 9 / 3) + 1) / 3.0, 2) +
				pow(-1 + (2 * (cell % 3) + 1) / 3.0, 2));

	d[ax] = (face % 2 ? -1 : 1) / len;
	d[u] = (-1 + (2 * (cell % 9 / 3) + 1) / 3.0) / len;
	d[v] = (-1 + (2 * (cell % 3) + 1) / 3.0) / len;
}

/* Trace ray i of seed into the thread's histogram acc; its reflections. */
static long trace_one(const struct tracer *tr, const double src[3], long rays, uint64_t seed,
		      long i, acc_t *acc, long *escaped)
{
	const struct ga *g = tr->g;
	uint64_t s = seed ^ (0x632be59bd9b4e019ull * (uint64_t)(i + 1));
	double p[3], d[3], e[GA_BANDS], dist = 0;
	int specular = 1, order = 0;
	long refl = 0;

	(void)ga_rand64(&s);
	memcpy(p, src, sizeof(p));
	sphere_dir(&s, d);
	for (int b = 0; b < GA_BANDS; b++) {	/* the source's pattern, squared: energy */
		const double pat = ga_pattern(g, d, b);

		e[b] = 4 * M_PI / rays * pat * pat;
	}
	for (;;) {
		struct ga_hit h;
		const struct ga_tri *t;
		double dn, smean = 0, emax = 0;

		if (!ga_cast(g, p, d, 0, INFINITY, &h)) {
			(*escaped)++;
			break;
		}
		/* the receivers this leg crosses */
		for (int q = 0; q < tr->nrec && !(specular && order <= tr->skip); q++) {
			double t0, t1;

			if (chord(p, d, h.t, tr->rec[q], tr->radius, &t0, &t1)) {
				const double at = dist + 0.5 * (t0 + t1);
				/* the source's lead as distance: 0 leaves at's bits */
				const size_t k = (size_t)((at + g->c * g->lead) / (g->c * tr->dt));
				acc_t *a = acc + ((size_t)q * tr->nbins + k) * GA_BANDS;

				if (k >= tr->nbins)
					continue;
				for (int b = 0; b < GA_BANDS; b++)
					a[b] += (acc_t)(e[b] * exp(-g->air[b] * at) * (t1 - t0) / tr->vrec *
							ACC_ONE);
				if (tr->dir_of && tr->dir_of[q] >= 0) {	/* it arrives from -d */
					const double from[3] = { -d[0], -d[1], -d[2] };
					const size_t kd = (size_t)((at + g->c * g->lead) /
								   (g->c * GA_DIR_BIN));

					if (kd >= tr->ndbins)
						continue;
					a = acc + tr->cells +
					    (((size_t)tr->dir_of[q] * tr->ndbins + kd) * GA_DIR_CELLS +
					     (size_t)ga_dir_cell(from)) * GA_BANDS;
					for (int b = 0; b < GA_BANDS; b++)
						a[b] += (acc_t)(e[b] * exp(-g->air[b] * at) * (t1 - t0) /
								tr->vrec * ACC_ONE);
				}
			}
		}
		dist += h.t;
		if (dist >= tr->dmax)
			break;
		t = &g->tri[h.tri];
		dn = ga_dot(d, t->n);
		/* the next leg starts a little before the hit, on the path the ray came by:
		 * in the air even at an edge, where the hit rounds to either wall */
		for (int a = 0; a < 3; a++)
			p[a] += h.t * d[a] - fmin(h.t / 2, 1e-5 * g->scale) * d[a];
		for (int b = 0; b < GA_BANDS; b++) {
			e[b] *= 1 - g->alpha[t->material][b];
			smean += g->scat[t->material][b] / GA_BANDS;
			emax = fmax(emax, e[b] * exp(-g->air[b] * dist));
		}
		order++;
		refl++;
		if (emax < RAY_FLOOR * 4 * M_PI / rays)
			break;
		{
			/* the normal on the air's side, against the incoming ray */
			const double sg = dn > 0 ? -1 : 1;
			double n[3] = { sg * t->n[0], sg * t->n[1], sg * t->n[2] }, off;

			if (smean > 0 && ga_rand(&s) < smean) {	/* diffuse */
				for (int b = 0; b < GA_BANDS; b++)
					e[b] *= g->scat[t->material][b] / smean;
				lambert_dir(&s, n, d);
				specular = 0;
			} else {	/* specular */
				for (int b = 0; b < GA_BANDS && smean > 0; b++)
					e[b] *= (1 - g->scat[t->material][b]) / (1 - smean);
				for (int a = 0; a < 3; a++)
					d[a] -= 2 * dn * t->n[a];
			}
			/* and off the wall, so that the next cast cannot meet it at once: as
			 * far as is clear of the walls beside it */
			off = ga_clearance(g, p, n, 1e-5 * g->scale, h.tri);
			for (int a = 0; a < 3; a++)
				p[a] += off * n[a];
		}
	}
	return refl;
}

int ga_trace(const struct ga *g, const double src[3], const double (*rec)[3], int nrec,
	     double radius, double duration, long rays, int skip_order, unsigned long seed,
	     struct ga_hist *h, struct rs_error *err)
{
	return ga_trace_spatial(g, src, rec, nrec, NULL, radius, duration, rays, skip_order, seed,
				h, err);
}

int ga_trace_spatial(const struct ga *g, const double src[3], const double (*rec)[3], int nrec,
		     const int *spatial, double radius, double duration, long rays,
		     int skip_order, unsigned long seed, struct ga_hist *h, struct rs_error *err)
{
	struct tracer tr = {
		.g = g, .rec = rec, .nrec = nrec, .skip = skip_order, .radius = radius,
		.vrec = 4.0 / 3 * M_PI * radius * radius * radius, .dmax = duration * g->c,
		.dt = GA_BIN, .nbins = (size_t)ceil(duration / GA_BIN),
		.ndbins = (size_t)ceil(duration / GA_DIR_BIN),
	};
	const int nth = omp_get_max_threads();
	size_t cells, dcells;
	acc_t *acc;
	long escaped = 0, refl = 0;
	int ndir = 0;

	memset(h, 0, sizeof(*h));
	h->nrec = nrec;
	h->nbins = tr.nbins;
	h->dir_of = calloc((size_t)nrec + 1, sizeof(int));
	for (int q = 0; h->dir_of && q < nrec; q++)
		h->dir_of[q] = spatial && spatial[q] ? ndir++ : -1;
	tr.cells = cells = (size_t)nrec * tr.nbins * GA_BANDS;
	dcells = (size_t)ndir * tr.ndbins * GA_DIR_CELLS * GA_BANDS;
	tr.dir_of = ndir ? h->dir_of : NULL;
	h->ndbins = ndir ? tr.ndbins : 0;
	h->e = malloc(cells * sizeof(double));
	h->d = ndir ? malloc(dcells * sizeof(double)) : NULL;
	acc = calloc((size_t)nth * (cells + dcells), sizeof(acc_t));
	if (!acc || !h->e || !h->dir_of || (ndir && !h->d)) {
		free(acc);
		ga_hist_free(h);
		return rs_fail(err, RS_ENOMEM, "out of memory for the rays' histograms "
			       "(%zu values)", cells + dcells);
	}
#pragma omp parallel num_threads(nth) reduction(+ : escaped, refl)
	{
		acc_t *mine = acc + (size_t)omp_get_thread_num() * (cells + dcells);

#pragma omp for schedule(dynamic, 256)
		for (long i = 0; i < rays; i++)
			refl += trace_one(&tr, src, rays, (uint64_t)seed, i, mine, &escaped);
	}
	for (size_t c = 0; c < cells + dcells; c++) {
		acc_t sum = 0;

		for (int t = 0; t < nth; t++)
			sum += acc[(size_t)t * (cells + dcells) + c];
		if (c < cells)
			h->e[c] = (double)sum / ACC_ONE;
		else
			h->d[c - cells] = (double)sum / ACC_ONE;
	}
	free(acc);
	h->rays = rays;
	h->escaped = escaped;
	h->reflections = (double)refl / (double)rays;
	return 0;
}

void ga_hist_free(struct ga_hist *h)
{
	free(h->e);
	free(h->d);
	free(h->dir_of);
	h->e = h->d = NULL;
	h->dir_of = NULL;
}
