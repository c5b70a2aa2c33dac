/*
 * ga_scene.c - the geometric engine's scene (ga.h): the room's surfaces as triangles with
 * their materials and outward normals, grouped into planes for the image sources, in an
 * Embree scene; which side of a surface is air; the materials and the air per band.
 */
#include <fftw3.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_impl.h"
#include "../../geometry/build.h"
#include "../air.h"
#include "../wall.h"

const double ga_band_f[GA_BANDS] = { 63, 125, 250, 500, 1000, 2000, 4000, 8000, 16000 };

#define CYL_SEGMENTS 64		/* facets round a cylinder */
#define SPHERE_STACKS 24	/* and a sphere: stacks by slices */
#define SPHERE_SLICES 48
#define PROBE_RAYS 2048		/* rays per source that check the room is closed */
#define PROBE_BOUNCES 48
#define PROBE_LEAKS 2		/* rays that may leave (rounding at edges) before it is a hole */
#define VOLUME_SAMPLES 200000	/* points that measure a room of shapes */

/* The triangles while they are collected. */
struct tris {
	double (*v)[3][3];
	struct ga_tri *t;
	size_t n, cap;
};

/* Add triangle abc of owner (with material) to T, its normal turned to point along out. */
static int add_tri(struct tris *T, const double a[3], const double b[3], const double c[3],
		   const double out[3], int material, int owner)
{
	double u[3], w[3], n[3], len;
	struct ga_tri *t;

	for (int d = 0; d < 3; d++) {
		u[d] = b[d] - a[d];
		w[d] = c[d] - a[d];
	}
	n[0] = u[1] * w[2] - u[2] * w[1];
	n[1] = u[2] * w[0] - u[0] * w[2];
	n[2] = u[0] * w[1] - u[1] * w[0];
	len = sqrt(ga_dot(n, n));
	if (!(len > 1e-14))	/* degenerate: no surface */
		return 0;
	if (T->n == T->cap) {
		size_t cap = T->cap ? 2 * T->cap : 1024;
		void *v = realloc(T->v, cap * sizeof(*T->v)), *tt;

		if (!v)
			return -1;
		T->v = v;
		if (!(tt = realloc(T->t, cap * sizeof(*T->t))))
			return -1;
		T->t = tt;
		T->cap = cap;
	}
	t = &T->t[T->n];
	if (ga_dot(n, out) < 0)
		len = -len;
	for (int d = 0; d < 3; d++) {
		t->n[d] = n[d] / len;
		t->c[d] = (a[d] + b[d] + c[d]) / 3;
		T->v[T->n][0][d] = a[d];
		T->v[T->n][1][d] = b[d];
		T->v[T->n][2][d] = c[d];
	}
	t->material = material;
	t->owner = owner;
	t->plane = -1;
	T->n++;
	return 0;
}

/* A quad abcd (in order round it) as two triangles. */
static int add_quad(struct tris *T, const double a[3], const double b[3], const double c[3],
		    const double d[3], const double out[3], int material, int owner)
{
	return add_tri(T, a, b, c, out, material, owner) || add_tri(T, a, c, d, out, material, owner);
}

/* The box [lo, hi], faces with materials mat[6] (-x, +x, -y, +y, -z, +z). */
static int add_box(struct tris *T, const double lo[3], const double hi[3], const int mat[6],
		   int owner)
{
	for (int f = 0; f < 6; f++) {
		const int ax = f / 2, u = (ax + 1) % 3, w = (ax + 2) % 3;
		double p[4][3], out[3] = { 0, 0, 0 };

		out[ax] = f % 2 ? 1 : -1;
		for (int k = 0; k < 4; k++) {
			p[k][ax] = f % 2 ? hi[ax] : lo[ax];
			p[k][u] = k == 1 || k == 2 ? hi[u] : lo[u];
			p[k][w] = k >= 2 ? hi[w] : lo[w];
		}
		if (add_quad(T, p[0], p[1], p[2], p[3], out, mat[f], owner))
			return -1;
	}
	return 0;
}

/* Corner k (0 to 3) of facet (i, j) of sphere s: stacks i and i + 1 by slices j and j + 1. */
static void sphere_corner(const struct room_shape *s, int i, int j, int k, double v[3])
{
	const double th = M_PI * (i + (k >= 2)) / SPHERE_STACKS;
	const double ph = 2 * M_PI * (j + (k == 1 || k == 2)) / SPHERE_SLICES;

	v[0] = s->center[0] + s->radius * sin(th) * cos(ph);
	v[1] = s->center[1] + s->radius * sin(th) * sin(ph);
	v[2] = s->center[2] + s->radius * cos(th);
}

static int add_sphere(struct tris *T, const struct room_shape *s, int owner)
{
	for (int i = 0; i < SPHERE_STACKS; i++)
		for (int j = 0; j < SPHERE_SLICES; j++) {
			double p[4][3], out[3] = { 0, 0, 0 };

			for (int k = 0; k < 4; k++) {
				sphere_corner(s, i, j, k, p[k]);
				for (int d = 0; d < 3; d++)
					out[d] += p[k][d] - s->center[d];
			}
			if (add_quad(T, p[0], p[1], p[2], p[3], out, s->material, owner))
				return -1;
		}
	return 0;
}

static int add_cylinder(struct tris *T, const struct room_shape *s, int owner)
{
	const int a = s->axis, u = (a + 1) % 3, w = (a + 2) % 3;
	const double z0 = s->lo[a], z1 = s->hi[a];

	for (int j = 0; j < CYL_SEGMENTS; j++) {
		double p[4][3], c0[3], c1[3], out[3] = { 0, 0, 0 }, down[3] = { 0, 0, 0 },
		       up[3] = { 0, 0, 0 };

		for (int k = 0; k < 4; k++) {
			const double ph = 2 * M_PI * (j + (k == 1 || k == 2)) / CYL_SEGMENTS;

			p[k][u] = s->center[u] + s->radius * cos(ph);
			p[k][w] = s->center[w] + s->radius * sin(ph);
			p[k][a] = k >= 2 ? z1 : z0;
			out[u] += cos(ph);
			out[w] += sin(ph);
		}
		memcpy(c0, s->center, sizeof(c0));
		memcpy(c1, s->center, sizeof(c1));
		c0[a] = z0;
		c1[a] = z1;
		down[a] = -1;
		up[a] = 1;
		if (add_quad(T, p[0], p[1], p[2], p[3], out, s->material, owner) ||
		    add_tri(T, c0, p[0], p[1], down, s->material, owner) ||
		    add_tri(T, c1, p[3], p[2], up, s->material, owner))
			return -1;
	}
	return 0;
}

/* Is point p strictly inside triangle abc (2-D)? */
static int in_tri2(const double *p, const double *a, const double *b, const double *c)
{
	const double d1 = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
	const double d2 = (c[0] - b[0]) * (p[1] - b[1]) - (c[1] - b[1]) * (p[0] - b[0]);
	const double d3 = (a[0] - c[0]) * (p[1] - c[1]) - (a[1] - c[1]) * (p[0] - c[0]);

	return (d1 > 0 && d2 > 0 && d3 > 0) || (d1 < 0 && d2 < 0 && d3 < 0);
}

/* An extrusion: its sides, and its polygon at both ends cut into triangles by ear clipping. */
static int add_extrusion(struct tris *T, const struct room_shape *s, int owner)
{
	const int n = s->npolygon;
	const double z0 = s->lo[2], z1 = s->hi[2];
	int idx[ROOM_MAX_POLYGON], m = n;
	double area2 = 0;

	for (int i = 0, j = n - 1; i < n; j = i++)
		area2 += s->polygon[j][0] * s->polygon[i][1] - s->polygon[i][0] * s->polygon[j][1];
	for (int i = 0; i < n; i++) {
		const double *a = s->polygon[i], *b = s->polygon[(i + 1) % n];
		/* counter-clockwise polygons have the outside on the right of each edge */
		const double sg = area2 > 0 ? 1 : -1;
		double p[4][3] = { { a[0], a[1], z0 }, { b[0], b[1], z0 }, { b[0], b[1], z1 },
				   { a[0], a[1], z1 } };
		double out[3] = { sg * (b[1] - a[1]), -sg * (b[0] - a[0]), 0 };

		if (add_quad(T, p[0], p[1], p[2], p[3], out, s->material, owner))
			return -1;
		idx[i] = i;
	}
	while (m > 2) {
		int found = 0;

		for (int i = 0; i < m && !found; i++) {
			const double *a = s->polygon[idx[(i + m - 1) % m]], *b = s->polygon[idx[i]],
				     *c = s->polygon[idx[(i + 1) % m]];
			const double cr = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
			int ear = cr * area2 > 0;

			for (int k = 0; k < m && ear; k++) {
				const double *q = s->polygon[idx[k]];

				if (q != a && q != b && q != c && in_tri2(q, a, b, c))
					ear = 0;
			}
			if (!ear)
				continue;
			{
				double p0[3] = { a[0], a[1], z0 }, p1[3] = { b[0], b[1], z0 },
				       p2[3] = { c[0], c[1], z0 };
				double q0[3] = { a[0], a[1], z1 }, q1[3] = { b[0], b[1], z1 },
				       q2[3] = { c[0], c[1], z1 };
				const double down[3] = { 0, 0, -1 }, up[3] = { 0, 0, 1 };

				if (add_tri(T, p0, p1, p2, down, s->material, owner) ||
				    add_tri(T, q0, q1, q2, up, s->material, owner))
					return -1;
			}
			memmove(&idx[i], &idx[i + 1], (size_t)(m - i - 1) * sizeof(int));
			m--;
			found = 1;
		}
		if (!found)	/* collinear rest: nothing with area left */
			break;
	}
	return 0;
}

/* ---- the scene ---- */

static RTCScene make_scene(RTCDevice dev, const struct tris *T, size_t from, size_t to)
{
	RTCScene sc = rtcNewScene(dev);
	RTCGeometry geo = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
	float *vb = rtcSetNewGeometryBuffer(geo, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
					    3 * sizeof(float), 3 * (to - from));
	unsigned *ib = rtcSetNewGeometryBuffer(geo, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
					       3 * sizeof(unsigned), to - from);

	if (!vb || !ib) {
		rtcReleaseGeometry(geo);
		rtcReleaseScene(sc);
		return NULL;
	}
	for (size_t i = from; i < to; i++)
		for (int k = 0; k < 3; k++) {
			for (int d = 0; d < 3; d++)
				vb[9 * (i - from) + 3 * k + d] = (float)T->v[i][k][d];
			ib[3 * (i - from) + k] = (unsigned)(3 * (i - from) + k);
		}
	/* watertight: no ray slips through the edge two triangles share */
	rtcSetSceneFlags(sc, RTC_SCENE_FLAG_ROBUST);
	rtcSetSceneBuildQuality(sc, RTC_BUILD_QUALITY_HIGH);
	rtcCommitGeometry(geo);
	rtcAttachGeometry(sc, geo);
	rtcReleaseGeometry(geo);
	rtcCommitScene(sc);
	return sc;
}

/* The first hit in scene sc along org + t dir, t in (tnear, tfar): its t and primitive. */
static int intersect(RTCScene sc, const double org[3], const double dir[3], double tnear,
		     double tfar, double *t, unsigned *prim)
{
	struct RTCIntersectContext ctx;
	struct RTCRayHit rh;

	rtcInitIntersectContext(&ctx);
	rh.ray.org_x = (float)org[0];
	rh.ray.org_y = (float)org[1];
	rh.ray.org_z = (float)org[2];
	rh.ray.dir_x = (float)dir[0];
	rh.ray.dir_y = (float)dir[1];
	rh.ray.dir_z = (float)dir[2];
	rh.ray.tnear = (float)tnear;
	rh.ray.tfar = tfar > 3e38 ? INFINITY : (float)tfar;
	rh.ray.mask = 0xffffffffu;
	rh.ray.flags = 0;
	rh.ray.time = 0;
	rh.ray.id = 0;
	rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
	rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
	rtcIntersect1(sc, &ctx, &rh);
	if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID)
		return 0;
	*t = rh.ray.tfar;
	*prim = rh.hit.primID;
	return 1;
}

/* Does the base (box or mesh) hold p? A mesh by the parity of its crossings along a ray. */
static int base_holds(const struct ga *g, const double p[3])
{
	const struct room *room = g->room;

	if (room->geo.has_box)
		return p[0] >= 0 && p[1] >= 0 && p[2] >= 0 && p[0] <= room->geo.box[0] &&
		       p[1] <= room->geo.box[1] && p[2] <= room->geo.box[2];
	if (g->base) {
		static const double dir[3] = { 0.5314218, 0.6172133, 0.5801947 };
		double t = 0, th;
		unsigned prim;
		int crossings = 0;

		while (crossings < 10000 && intersect(g->base, p, dir, t, INFINITY, &th, &prim)) {
			crossings++;
			t = th + 1e-7 * g->scale;
		}
		return crossings % 2;
	}
	return 0;
}

/* Is p inside the side of the plane through a, b, c that holds the point `in`? */
static int same_side(const double a[3], const double b[3], const double c[3], const double in[3],
		     const double p[3])
{
	double u[3], w[3], n[3], dp = 0, di = 0;

	for (int k = 0; k < 3; k++) {
		u[k] = b[k] - a[k];
		w[k] = c[k] - a[k];
	}
	n[0] = u[1] * w[2] - u[2] * w[1];
	n[1] = u[2] * w[0] - u[0] * w[2];
	n[2] = u[0] * w[1] - u[1] * w[0];
	for (int k = 0; k < 3; k++) {
		dp += n[k] * (p[k] - a[k]);
		di += n[k] * (in[k] - a[k]);
	}
	return dp * di >= 0;
}

/* Is p inside the plane of facet (i, j) of sphere s, as add_sphere() makes it (a quad's plane,
 * or at a pole its triangle's: two corners coincide there)? */
static int sphere_facet_holds(const struct room_shape *s, int i, int j, const double p[3])
{
	double v[4][3];

	for (int k = 0; k < 4; k++)
		sphere_corner(s, i, j, k, v[k]);
	return i == 0 ? same_side(v[0], v[2], v[3], s->center, p)
		      : same_side(v[0], v[1], v[2], s->center, p);
}

/* Is p inside the plane of side j of cylinder s, as add_cylinder() makes it? */
static int cylinder_side_holds(const struct room_shape *s, int j, const double p[3])
{
	const int a = s->axis, u = (a + 1) % 3, w = (a + 2) % 3;
	double v0[3], v1[3], v2[3];

	memcpy(v0, s->center, sizeof(v0));
	memcpy(v1, s->center, sizeof(v1));
	v0[u] += s->radius * cos(2 * M_PI * j / CYL_SEGMENTS);
	v0[w] += s->radius * sin(2 * M_PI * j / CYL_SEGMENTS);
	v1[u] += s->radius * cos(2 * M_PI * (j + 1) / CYL_SEGMENTS);
	v1[w] += s->radius * sin(2 * M_PI * (j + 1) / CYL_SEGMENTS);
	memcpy(v2, v0, sizeof(v2));
	v2[a] += 1;	/* the side's plane holds the axis direction */
	return same_side(v0, v1, v2, s->center, p);
}

/*
 * Does shape s hold p, as its triangles bound it? A sphere or cylinder by its facets (the
 * exact surface lies outside them: a point between the two would be air on one count and not
 * on the other, and rays would leave through the gap): inside the planes of the facet over
 * p's direction and of those beside it (round a pole, all of its stack), so that a point just
 * outside one facet near its edge is not taken as held by the next. Boxes and extrusions as
 * they are.
 */
static int shape_holds(const struct room_shape *s, const double p[3])
{
	if (s->kind == ROOM_SHAPE_SPHERE) {
		const double dx = p[0] - s->center[0], dy = p[1] - s->center[1];
		const double dz = p[2] - s->center[2], rr = sqrt(dx * dx + dy * dy + dz * dz);
		double th, ph;
		int i, j;

		if (rr > s->radius)
			return 0;
		if (rr == 0)
			return 1;
		th = acos(fmax(-1, fmin(1, dz / rr)));
		ph = atan2(dy, dx);
		if (ph < 0)
			ph += 2 * M_PI;
		i = (int)fmin(SPHERE_STACKS - 1, floor(th / M_PI * SPHERE_STACKS));
		j = (int)fmin(SPHERE_SLICES - 1, floor(ph / (2 * M_PI) * SPHERE_SLICES));
		for (int ii = i - 1; ii <= i + 1; ii++) {
			const int pole = ii == 0 || ii == SPHERE_STACKS - 1;

			if (ii < 0 || ii >= SPHERE_STACKS)
				continue;
			for (int jj = pole ? 0 : j - 1; jj <= (pole ? SPHERE_SLICES - 1 : j + 1); jj++)
				if (!sphere_facet_holds(s, ii, (jj + SPHERE_SLICES) % SPHERE_SLICES, p))
					return 0;
		}
		return 1;
	}
	if (s->kind == ROOM_SHAPE_CYLINDER) {
		const int a = s->axis, u = (a + 1) % 3, w = (a + 2) % 3;
		const double du = p[u] - s->center[u], dw = p[w] - s->center[w];
		double ph = atan2(dw, du);
		int j;

		if (p[a] < s->lo[a] || p[a] > s->hi[a] || du * du + dw * dw > s->radius * s->radius)
			return 0;
		if (ph < 0)
			ph += 2 * M_PI;
		j = (int)fmin(CYL_SEGMENTS - 1, floor(ph / (2 * M_PI) * CYL_SEGMENTS));
		for (int jj = j - 1; jj <= j + 1; jj++)
			if (!cylinder_side_holds(s, (jj + CYL_SEGMENTS) % CYL_SEGMENTS, p))
				return 0;
		return 1;
	}
	return vox_shape_holds(s, p);
}

/* Is p air, with shape `forced` (-1 the base; -2 none) taken to hold p or not (fin)? As the
 * voxeliser decides: the last shape holding p adds or removes it, else the base's. */
static int air_at(const struct ga *g, const double p[3], int forced, int fin)
{
	const struct room_geometry *geo = &g->room->geo;
	int last = -1;

	for (int s = 0; s < geo->nshapes; s++)
		if (s == forced ? fin : shape_holds(&geo->shapes[s], p))
			last = s;
	if (last >= 0)
		return !geo->shapes[last].remove;
	return forced == -1 ? fin : base_holds(g, p);
}

/* Is there air on one side only of triangle i's plane at p, judged at points 10^-5 of the room
 * off it either side (not at p: a point on a face two shapes share is held by both)? */
static int air_one_side(const struct ga *g, size_t i, const double p[3])
{
	const double e = 1e-5 * g->scale;
	double a[3], b[3];

	for (int d = 0; d < 3; d++) {
		a[d] = p[d] + e * g->tri[i].n[d];
		b[d] = p[d] - e * g->tri[i].n[d];
	}
	return air_at(g, a, -2, 0) != air_at(g, b, -2, 0);
}

/*
 * The share of triangle i (vertices v) that is wall: of its k^2 congruent parts, those with
 * air on one side of the plane only at their centroid (air_one_side). k gives parts of 5 cm
 * or less along the longest edge, at most 32: a face that a shape covers in part counts the
 * part it leaves open.
 */
static double wall_share(const struct ga *g, size_t i, double v[3][3])
{
	double len = 0;
	int k, walls = 0;

	for (int a = 0; a < 3; a++) {
		double l = 0;

		for (int d = 0; d < 3; d++)
			l += (v[(a + 1) % 3][d] - v[a][d]) * (v[(a + 1) % 3][d] - v[a][d]);
		len = fmax(len, sqrt(l));
	}
	k = (int)fmin(32, fmax(1, ceil(len / 0.05)));
	/* the parts' centroids: (a + 1/3, b + 1/3) / k for a + b < k, (a + 2/3, b + 2/3) / k
	 * for a + b < k - 1, in the edges v1 - v0 and v2 - v0 */
	for (int up = 1; up >= 0; up--)
		for (int a = 0; a < k; a++)
			for (int b = 0; a + b < k - 1 + up; b++) {
				const double f = up ? 1.0 / 3 : 2.0 / 3, s = (a + f) / k,
					     t = (b + f) / k;
				double c[3];

				for (int d = 0; d < 3; d++)
					c[d] = v[0][d] + s * (v[1][d] - v[0][d]) +
					       t * (v[2][d] - v[0][d]);
				walls += air_one_side(g, i, c);
			}
	return (double)walls / ((double)k * k);
}

/*
 * Does a ray along dir that meets triangle i at p leave the air there: is it a wall? The ray
 * travels in air, so it does where the point just past p along it is not air, or where air
 * lies on one side of the surface only, judged at points off the triangle's plane either side
 * of p. Each by 10^-5 of the room (a hundred times float32's step along a ray), not at p: a
 * point on the boundary of two shapes (a face they share, or its edge) is held by both, so
 * that the seam of a wall with a shape beside it would look like a face between two shapes.
 * The first judge holds at seams and acute edges, where the point behind a face is out of the
 * room too; the second at grazing incidence, where the point past p is barely off the face.
 */
static int wall_met(const struct ga *g, size_t i, const double p[3], const double dir[3])
{
	const double e = 1e-5 * g->scale;
	double a[3];

	for (int d = 0; d < 3; d++)
		a[d] = p[d] + e * dir[d];
	return !air_at(g, a, -2, 0) || air_one_side(g, i, p);
}

int ga_cast(const struct ga *g, const double org[3], const double dir[3], double tnear,
	    double tfar, struct ga_hit *hit)
{
	unsigned prim;
	double t;

	for (int tries = 0; tries < 4096; tries++) {
		double p[3];

		if (!intersect(g->scene, org, dir, tnear, tfar, &t, &prim))
			return 0;
		for (int d = 0; d < 3; d++)
			p[d] = org[d] + t * dir[d];
		if (!g->filter || wall_met(g, prim, p, dir)) {
			hit->t = t;
			hit->tri = prim;
			return 1;
		}
		tnear = t + 1e-6 * g->scale;
	}
	return 0;
}

double ga_clearance(const struct ga *g, const double p[3], const double dir[3], double len,
		    size_t tri)
{
	struct RTCIntersectContext ctx;
	struct RTCRay ray = {
		.org_x = (float)p[0], .org_y = (float)p[1], .org_z = (float)p[2],
		.dir_x = (float)dir[0], .dir_y = (float)dir[1], .dir_z = (float)dir[2],
		.tnear = 0, .tfar = (float)len, .mask = 0xffffffffu,
	};
	struct ga_hit h;
	double tnear = 0;

	if (!g->oblique)	/* walls meet at right angles: a move along one parallels the rest */
		return len;
	/* nearly always nothing is there: an occlusion test says so, cheaper than a hit */
	rtcInitIntersectContext(&ctx);
	rtcOccluded1(g->scene, &ctx, &ray);
	if (ray.tfar >= 0)
		return len;
	for (int tries = 0; tries < 64 && ga_cast(g, p, dir, tnear, len, &h); tries++) {
		if (g->tri[h.tri].plane != g->tri[tri].plane)
			return h.t / 2;
		tnear = h.t + 1e-7 * g->scale;	/* about float32's step at the room's extent */
	}
	return len;
}

/* ---- planes, materials, volume ---- */

/* Group the triangles into planes; each plane's air side from its triangles' centroids. */
static int make_planes(struct ga *g)
{
	const double eps = 1e-4 * g->scale;

	g->planes = malloc(g->ntri * sizeof(*g->planes));
	if (!g->planes)
		return -1;
	for (size_t i = 0; i < g->ntri; i++) {
		struct ga_tri *t = &g->tri[i];
		const double d = ga_dot(t->n, t->c);
		double in[3], out[3];
		int side, k;

		for (k = 0; k < g->nplanes; k++) {
			const struct ga_plane *pl = &g->planes[k];
			const double cs = ga_dot(pl->n, t->n);

			if (fabs(cs) > 1 - 1e-9 && fabs(d * (cs > 0 ? 1 : -1) - pl->d) < eps)
				break;
		}
		for (int a = 0; a < 3; a++) {
			in[a] = t->c[a] - eps * t->n[a];
			out[a] = t->c[a] + eps * t->n[a];
		}
		/* air outside the owner only: +1 along n; inside only: -1; else 0. The base's
		 * triangles point out of the air. */
		side = -1;
		if (g->filter) {
			const int ai = air_at(g, in, t->owner, 1), ao = air_at(g, out, t->owner, 0);

			side = ao && !ai ? 1 : ai && !ao ? -1 : 0;
		}
		if (k == g->nplanes) {
			memcpy(g->planes[k].n, t->n, sizeof(t->n));
			g->planes[k].d = d;
			g->planes[k].side = side;
			g->nplanes++;
		} else if (side) {
			const int s = ga_dot(g->planes[k].n, t->n) > 0 ? side : -side;

			if (g->planes[k].side != s)
				g->planes[k].side = 0;
		}
		t->plane = k;
	}
	return 0;
}

/* Log-frequency interpolation of v at centres f[0..n), constant beyond the ends. */
static double interp(const double *f, const double *v, int n, double x)
{
	if (n == 1 || x <= f[0])
		return v[0];
	for (int i = 1; i < n; i++)
		if (x <= f[i]) {
			const double w = log(x / f[i - 1]) / log(f[i] / f[i - 1]);

			return v[i - 1] + w * (v[i] - v[i - 1]);
		}
	return v[n - 1];
}

static void material_bands(struct ga *g)
{
	const struct room *room = g->room;

	for (int m = 0; m < room->nmaterials; m++) {
		const struct room_material *mat = &room->materials[m];

		for (int b = 0; b < GA_BANDS; b++) {
			const double f = ga_band_f[b];

			if (mat->nbands)
				g->alpha[m][b] = interp(mat->band_f, mat->band_alpha, mat->nbands, f);
			else if (mat->nbranches) {
				struct wall_model w = { .n = mat->nbranches };

				for (int j = 0; j < mat->nbranches; j++) {
					w.r[j] = mat->br_r[j];
					w.m[j] = mat->br_m[j];
					w.k[j] = mat->br_k[j];
				}
				g->alpha[m][b] = wall_alpha_band(&w, f, 0);
			} else {
				g->alpha[m][b] = mat->absorption;
			}
			g->alpha[m][b] = fmin(1, fmax(0, g->alpha[m][b]));
			if (mat->nscat == 1 && mat->scat_f[0] == 0)
				g->scat[m][b] = mat->scat[0];
			else if (mat->nscat)
				g->scat[m][b] = interp(mat->scat_f, mat->scat, mat->nscat, f);
			else
				g->scat[m][b] = fmax(0, room->hybrid.scattering);
		}
	}
}

/* The air's volume: the box's, a closed mesh's (summed as its triangles are made), or by
 * sampling points of the room's bounds. */
static void measure(struct ga *g)
{
	const struct room *room = g->room;

	if (!room->shaped) {
		g->volume = room->box[0] * room->box[1] * room->box[2];
	} else if (!g->filter && g->base) {
		g->volume = fabs(g->volume);
	} else {
		uint64_t s = 12345;
		long in = 0;

		for (long i = 0; i < VOLUME_SAMPLES; i++) {
			double p[3];

			for (int d = 0; d < 3; d++)
				p[d] = room->origin[d] + ga_rand(&s) * room->box[d];
			in += air_at(g, p, -2, 0);
		}
		g->volume = room->box[0] * room->box[1] * room->box[2] * in / VOLUME_SAMPLES;
	}
}

/* Rays from every source must stay inside: a hole (an open mesh) lets them out. */
static int probe(struct ga *g, struct rs_error *err)
{
	const struct room *room = g->room;
	const double t0 = omp_get_wtime();
	long casts = 0;

	for (int s = 0; s < room->nsources; s++) {
		uint64_t st = 0x5eedull + (uint64_t)s;
		int escaped = 0;

		for (int i = 0; i < PROBE_RAYS; i++) {
			double p[3], d[3];
			struct ga_hit h;
			const double z = 2 * ga_rand(&st) - 1, ph = 2 * M_PI * ga_rand(&st);

			memcpy(p, room->sources[s].pos, sizeof(p));
			d[0] = sqrt(1 - z * z) * cos(ph);
			d[1] = sqrt(1 - z * z) * sin(ph);
			d[2] = z;
			for (int k = 0; k < PROBE_BOUNCES; k++) {
				const struct ga_tri *t;
				double dn;

				if (!ga_cast(g, p, d, 0, INFINITY, &h)) {
					struct room_mark at = room->geo.mesh.ntri ? room->geo.mesh_at :
							      room->sources[s].at;

					if (++escaped <= PROBE_LEAKS)
						break;
					return room_at(err, room, at, room->geo.mesh.ntri ?
						       "geometry.mesh" : "geometry",
						       "rays from source '%s' leave the room, last "
						       "reflected at (%.3f, %.3f, %.3f) m: the surfaces "
						       "have a hole (valid: a closed mesh; roomsim "
						       "voxelize reports leaks)", room->sources[s].name,
						       p[0], p[1], p[2]);
				}
				casts++;
				t = &g->tri[h.tri];
				dn = ga_dot(d, t->n);
				/* off the wall: a little back along the path it came by */
				for (int a = 0; a < 3; a++) {
					p[a] += h.t * d[a] - fmin(h.t / 2, 1e-5 * g->scale) * d[a];
					d[a] -= 2 * dn * t->n[a];
				}
			}
		}
	}
	g->cast_rate = (double)casts / fmax(omp_get_wtime() - t0, 1e-6);
	return 0;
}

int ga_open(const struct room *room, struct ga **out, struct rs_error *err)
{
	const struct room_geometry *geo = &room->geo;
	struct ga *g = calloc(1, sizeof(*g));
	struct tris T = { 0 };
	size_t nbase, mesh_from;
	int rc = 0;

	*out = NULL;
	if (!g)
		return rs_fail(err, RS_ENOMEM, "out of memory for the geometric engine");
	/* the synthesis plans FFTs on the engine's thread while the outputs plan theirs */
	fftw_make_planner_thread_safe();
	g->room = room;
	g->c = room->c;
	g->scale = fmax(room->box[0], fmax(room->box[1], room->box[2]));
	if (geo->voxels_path[0]) {
		free(g);
		return room_at(err, room, geo->voxels_at, "geometry.voxels", "the geometric engine "
			       "needs the room's surfaces (valid: a box, a mesh or shapes)");
	}
	/* the base first: the box, or the mesh */
	if (geo->has_box || !room->shaped) {
		const double lo[3] = { 0, 0, 0 };
		const double *hi = geo->has_box ? geo->box : room->box;
		int mat[6];

		for (int f = 0; f < 6; f++)
			mat[f] = room->face_material[f] >= 0 ? room->face_material[f] :
				 geo->default_material;
		rc = add_box(&T, lo, hi, mat, -1);
	}
	mesh_from = T.n;
	for (size_t i = 0; !rc && i < geo->mesh.ntri; i++) {
		const uint32_t *t = geo->mesh.tri[i];
		const double zero[3] = { 0, 0, 0 };

		rc = add_tri(&T, geo->mesh.v[t[0]], geo->mesh.v[t[1]], geo->mesh.v[t[2]], zero,
			     geo->mesh.parts[geo->mesh.part[i]].material, -1);
	}
	nbase = T.n;
	for (int s = 0; !rc && s < geo->nshapes; s++) {
		const struct room_shape *sh = &geo->shapes[s];
		const int mat[6] = { sh->material, sh->material, sh->material, sh->material,
				     sh->material, sh->material };

		switch (sh->kind) {
		case ROOM_SHAPE_BOX:
			rc = add_box(&T, sh->lo, sh->hi, mat, s);
			break;
		case ROOM_SHAPE_SPHERE:
			rc = add_sphere(&T, sh, s);
			break;
		case ROOM_SHAPE_CYLINDER:
			rc = add_cylinder(&T, sh, s);
			break;
		default:
			rc = add_extrusion(&T, sh, s);
			break;
		}
	}
	if (rc || !T.n) {
		free(T.v);
		free(T.t);
		free(g);
		return rc ? rs_fail(err, RS_ENOMEM, "out of memory for the room's triangles")
			  : rs_fail(err, RS_EINPUT, "%s: the room has no surfaces", room->file);
	}
	g->tri = T.t;
	g->ntri = T.n;
	g->filter = geo->nshapes > 0;
	for (size_t i = 0; i < T.n; i++) {
		const double *n = g->tri[i].n;

		g->oblique |= fmax(fabs(n[0]), fmax(fabs(n[1]), fabs(n[2]))) < 1 - 1e-12;
	}
	g->dev = rtcNewDevice(NULL);
	if (!g->dev) {
		rc = rs_fail(err, RS_EINTERNAL, "Embree: no device (%d)", (int)rtcGetDeviceError(NULL));
		goto fail;
	}
	g->scene = make_scene(g->dev, &T, 0, T.n);
	if (geo->mesh.ntri)
		g->base = make_scene(g->dev, &T, mesh_from, nbase);
	if (!g->scene || (geo->mesh.ntri && !g->base)) {
		rc = rs_fail(err, RS_ENOMEM, "Embree: out of memory for the scene");
		goto fail;
	}
	/* a mesh's triangles turned outward: the side its parity says is outside */
	for (size_t i = mesh_from; i < nbase; i++) {
		struct ga_tri *t = &g->tri[i];
		double p[3];

		for (int d = 0; d < 3; d++)
			p[d] = t->c[d] + 1e-4 * g->scale * t->n[d];
		if (base_holds(g, p))
			for (int d = 0; d < 3; d++)
				t->n[d] = -t->n[d];
	}
	for (size_t i = 0; i < T.n; i++) {
		double u[3], w[3], cr[3];

		for (int d = 0; d < 3; d++) {
			u[d] = T.v[i][1][d] - T.v[i][0][d];
			w[d] = T.v[i][2][d] - T.v[i][0][d];
		}
		cr[0] = u[1] * w[2] - u[2] * w[1];
		cr[1] = u[2] * w[0] - u[0] * w[2];
		cr[2] = u[0] * w[1] - u[1] * w[0];
		if (i >= mesh_from && i < nbase)	/* divergence theorem: V = sum (c . n) A / 3 */
			g->volume += ga_dot(g->tri[i].c, g->tri[i].n) * sqrt(ga_dot(cr, cr)) / 6;
		const double a = sqrt(ga_dot(cr, cr)) / 2 * (g->filter ? wall_share(g, i, T.v[i]) : 1);

		g->area += a;
		if (g->tri[i].material >= 0)
			g->mat_area[g->tri[i].material] += a;
	}
	free(T.v);
	T.v = NULL;
	if (make_planes(g)) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the room's planes");
		goto fail;
	}
	material_bands(g);
	if (room->air_absorption) {
		const struct air air = { room->temperature, room->humidity, room->pressure };

		for (int b = 0; b < GA_BANDS; b++)
			g->air[b] = air_attenuation(&air, ga_band_f[b]) * log(10) / 10;
	}
	measure(g);
	if ((rc = probe(g, err)))
		goto fail;
	*out = g;
	return 0;
fail:
	free(T.v);
	ga_close(g);
	return rc;
}

void ga_close(struct ga *g)
{
	if (!g)
		return;
	if (g->scene)
		rtcReleaseScene(g->scene);
	if (g->base)
		rtcReleaseScene(g->base);
	if (g->dev)
		rtcReleaseDevice(g->dev);
	free(g->tri);
	free(g->planes);
	free(g);
}

void ga_estimate(const struct ga *g, double duration, double *reflections, double *seconds)
{
	double least = 1;

	/* the band that loses least: the area-weighted mean absorption, and the air's over a
	 * mean free path */
	for (int b = 0; b < GA_BANDS; b++) {
		double a = 0;

		for (int m = 0; m < g->room->nmaterials; m++)
			a += g->mat_area[m] * g->alpha[m][b] / fmax(g->area, 1e-9);
		a = 1 - (1 - a) * exp(-g->air[b] * 4 * g->volume / fmax(g->area, 1e-9));
		least = fmin(least, a);
	}
	/* a ray goes on for the duration, or until every band is 90 dB down */
	*reflections = fmin(duration * g->c * g->area / (4 * fmax(g->volume, 1e-9)),
			    least > 0 ? 9 / -log10(1 - fmin(least, 1 - 1e-12)) : 1e12);
	*seconds = 1 / fmax(g->cast_rate, 1);
}

double ga_mixing_time(const struct ga *g)
{
	return 1e-3 * sqrt(g->volume);
}

void ga_describe(const struct ga *g, size_t *ntri, int *nplanes, double *volume, double *area)
{
	*ntri = g->ntri;
	*nplanes = g->nplanes;
	*volume = g->volume;
	*area = g->area;
}

void ga_directivity(struct ga *g, const struct room_source *s, double lead)
{
	g->src = s && (s->balloon || s->pattern_a != 1) ? s : NULL;
	g->lead = lead;
}
