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
};

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
	for (int b = 0; b < GA_BANDS; b++)
		e[b] = 4 * M_PI / rays;
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
				const size_t k = (size_t)(at / (g->c * tr->dt));
				acc_t *a = acc + ((size_t)q * tr->nbins + k) * GA_BANDS;

				if (k >= tr->nbins)
					continue;
				for (int b = 0; b < GA_BANDS; b++)
					a[b] += (acc_t)(e[b] * exp(-g->air[b] * at) * (t1 - t0) / tr->vrec *
							ACC_ONE);
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
			double n[3] = { sg * t->n[0], sg * t->n[1], sg * t->n[2] };

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
			for (int a = 0; a < 3; a++)
				p[a] += 1e-5 * g->scale * n[a];
		}
	}
	return refl;
}

int ga_trace(const struct ga *g, const double src[3], const double (*rec)[3], int nrec,
	     double radius, double duration, long rays, int skip_order, unsigned long seed,
	     struct ga_hist *h, struct rs_error *err)
{
	struct tracer tr = {
		.g = g, .rec = rec, .nrec = nrec, .skip = skip_order, .radius = radius,
		.vrec = 4.0 / 3 * M_PI * radius * radius * radius, .dmax = duration * g->c,
		.dt = GA_BIN, .nbins = (size_t)ceil(duration / GA_BIN),
	};
	const size_t cells = (size_t)nrec * tr.nbins * GA_BANDS;
	const int nth = omp_get_max_threads();
	acc_t *acc = calloc((size_t)nth * cells, sizeof(acc_t));
	long escaped = 0, refl = 0;

	memset(h, 0, sizeof(*h));
	h->nrec = nrec;
	h->nbins = tr.nbins;
	h->e = malloc(cells * sizeof(double));
	if (!acc || !h->e) {
		free(acc);
		free(h->e);
		h->e = NULL;
		return rs_fail(err, RS_ENOMEM, "out of memory for the rays' histograms "
			       "(%zu values)", cells);
	}
#pragma omp parallel num_threads(nth) reduction(+ : escaped, refl)
	{
		acc_t *mine = acc + (size_t)omp_get_thread_num() * cells;

#pragma omp for schedule(dynamic, 256)
		for (long i = 0; i < rays; i++)
			refl += trace_one(&tr, src, rays, (uint64_t)seed, i, mine, &escaped);
	}
	for (size_t c = 0; c < cells; c++) {
		acc_t sum = 0;

		for (int t = 0; t < nth; t++)
			sum += acc[(size_t)t * cells + c];
		h->e[c] = (double)sum / ACC_ONE;
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
	h->e = NULL;
}
