/*
 * analyze_grid.c - roomsim analyze over receiver grids (analyze.h, analyze_grids): every
 * parameter in every band at every point of a grid, per source, into maps.h5, and a map per
 * parameter of its mid-frequency value (ISO 3382-1 annex A's single numbers: the mean of the
 * 500 Hz and 1 kHz octaves; of the highest band where the run stops below them).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/gridfile.h"
#include "../io/plot.h"
#include "../solver/air.h"
#include "analyze.h"
#include "app.h"

#define BLOCK 256	/* points read at once (a chunk of the grid files) */

/* The signals of grid g and source s of the run's rirs.h5 at path: the parameters per band
 * at every point into v[param][band][point]. */
static int grid_values(const char *path, const struct rirs_data *d, const struct grid_meta *g,
		       int s, const struct iso_band *band, int nb, double *v, struct rs_error *err)
{
	const size_t ns = d->nsamples, np = g->pts.n;
	const size_t len = (size_t)d->completed[s] + 1 < ns ? (size_t)d->completed[s] + 1 : ns;
	const struct air air = { d->medium[0], d->medium[1], d->medium[2] };
	double ref[ISO_MAX_BANDS], *buf = malloc((size_t)BLOCK * ns * sizeof(double));
	size_t scratch = 0;
	char dset[200];
	int rc = 0;

	if (!buf)
		return rs_fail(err, RS_ENOMEM, "out of memory analysing grid %s", g->name);
	snprintf(dset, sizeof(dset), "grids/%s/rir/%s", g->name, d->source_names[s]);
	{	/* G's references: the source low-passed as the signals are */
		size_t nsrc = 0;
		double *src = d->source ? an_source(d->source + (size_t)s * ns, ns, d->fs, d->fmax,
						    &nsrc) : NULL;

		for (int k = 0; k < nb; k++) {
			ref[k] = src ? an_reference10(src, nsrc, d->fs, &band[k]) : NAN;
			scratch = fmax(scratch, an_band_scratch(len, d->fs, &band[k]));
		}
		free(src);
	}
	for (size_t p0 = 0; p0 < np && !rc; p0 += BLOCK) {
		const size_t bn = np - p0 < BLOCK ? np - p0 : BLOCK;
		int fail = 0;

		if ((rc = gridf_read(path, dset, p0, bn, ns, buf, err)))
			break;
		for (size_t q = 0; d->air && q < bn && !fail; q++)	/* FFTW plans: one thread */
			fail = air_apply(&air, d->c, d->fs, buf + q * ns, len) != 0;
#pragma omp parallel reduction(| : fail)
		{
			double *y = malloc(scratch * sizeof(double));

			fail |= !y;
#pragma omp for schedule(dynamic)
			for (size_t q = 0; q < bn; q++) {
				double *h = buf + q * ns;
				size_t onset;

				if (!y) {
					fail = 1;
					continue;
				}
				onset = iso_onset(h, len);
				for (int k = 0; k < nb; k++) {
					struct iso_params p;

					an_band(h, len, d->fs, onset, &band[k], ref[k], y, &p, NULL);
					for (int i = 0; i < AN_NPARAMS; i++)
						v[((size_t)i * nb + k) * np + p0 + q] = an_value(&p, i);
				}
			}
			free(y);
		}
		if (fail)
			rc = rs_fail(err, RS_ENOMEM, "out of memory analysing grid %s", g->name);
	}
	free(buf);
	return rc;
}

/* The bands of the mid-frequency value: those within the 500 Hz and 1 kHz octaves, else the
 * highest; their number, their indices into mid, and their names into what. */
static int mid_bands(const struct iso_band *band, int nb, int *mid, char *what, size_t len)
{
	int n = 0;

	for (int k = 0; k < nb; k++)
		if (band[k].fm > 350 && band[k].fm < 1420)
			mid[n++] = k;
	if (n)
		snprintf(what, len, "%s to %s Hz bands averaged", band[mid[0]].name,
			 band[mid[n - 1]].name);
	else if (nb)
		snprintf(what, len, "%s Hz band, the highest of the run", band[(mid[n++] = nb - 1)].name);
	return n;
}

/* A point's mid-frequency value of parameter i: the mean over the mid bands (NAN if any is). */
static double mid_value(const double *v, int i, int nb, size_t np, size_t q, const int *mid,
			int nmid)
{
	double sum = 0;

	for (int m = 0; m < nmid; m++)
		sum += v[((size_t)i * nb + mid[m]) * np + q];
	return nmid ? sum / nmid : NAN;
}

/* Figures of map m: each parameter's mid-frequency value over the lattice, sources and
 * receivers marked where they lie within a spacing of the grid's plane or height. */
static int figures(const char *dir, const struct grid_map *m, const struct rirs_data *d,
		   const int *mid, int nmid, const char *what, struct rs_error *err)
{
	const struct grid_points *p = &m->grid->pts;
	const size_t cells = (size_t)p->dims[0] * p->dims[1];
	double *lat = malloc(cells * sizeof(double)), (*mark)[2];
	const char **name;
	int nmark = 0, rc = 0, nn = d->nsources + d->nreceivers;
	char base[4300], title[512];
	struct plot_map pm = { 0 };

	mark = malloc(((size_t)nn + 1) * sizeof(*mark));
	name = malloc(((size_t)nn + 1) * sizeof(*name));
	if (!lat || !mark || !name) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the maps");
		goto out;
	}
	for (int k = 0; k < nn; k++) {	/* sources and receivers near the grid's points */
		const double *x = k < d->nsources ? (d->source_pos ? d->source_pos + 3 * k : NULL)
			: (d->receiver_pos ? d->receiver_pos + 3 * (k - d->nsources) : NULL);
		const int a = 3 - p->axes[0] - p->axes[1];
		double near = HUGE_VAL;

		for (size_t q = 0; x && q < p->n; q++)
			near = fmin(near, fabs(p->pos[q][a] - x[a]));
		if (!x || near > 2 * p->spacing + 1.5)
			continue;
		mark[nmark][0] = x[p->axes[0]];
		mark[nmark][1] = x[p->axes[1]];
		name[nmark++] = k < d->nsources ? d->source_names[k]
						: d->receiver_names[k - d->nsources];
	}
	pm.nx = p->dims[0];
	pm.ny = p->dims[1];
	pm.x0 = p->first[0];
	pm.y0 = p->first[1];
	pm.spacing = p->spacing;
	pm.v = lat;
	for (int a = 0; a < 2; a++) {	/* the extent, and the lattice's cells round it */
		pm.lo[a] = fmin(p->lo[a], p->first[a] - 0.5 * p->spacing);
		pm.hi[a] = fmax(p->hi[a], p->first[a] + (p->dims[a] - 0.5) * p->spacing);
	}
	snprintf(pm.xlabel, sizeof(pm.xlabel), "%c, m", 'x' + p->axes[0]);
	snprintf(pm.ylabel, sizeof(pm.ylabel), "%c, m", 'x' + p->axes[1]);
	pm.nmarks = nmark;
	pm.mark = (const double(*)[2])mark;
	pm.mark_name = name;
	for (int i = 0; i < AN_NPARAMS && !rc; i++) {
		for (size_t c = 0; c < cells; c++)
			lat[c] = NAN;
		for (size_t q = 0; q < p->n; q++)
			lat[(size_t)p->ij[q][0] + (size_t)p->dims[0] * p->ij[q][1]] =
				mid_value(m->v, i, m->nbands, p->n, q, mid, nmid);
		snprintf(title, sizeof(title), "%s, %s: grid %s (%s), source %s", an_params[i].name,
			 what, m->grid->name, m->grid->kind, m->source);
		pm.title = title;
		pm.unit = an_params[i].unit;
		snprintf(base, sizeof(base), "%s/map_%s_%s_%s", dir, m->grid->name, m->source,
			 an_params[i].name);
		rc = plot_map(base, &pm, err);
	}
out:
	free(lat);
	free(mark);
	free(name);
	return rc;
}

/* One line per parameter: the mid-frequency value's least, mean and largest over the grid. */
static void summary(const struct grid_map *m, const int *mid, int nmid, const char *what)
{
	const size_t np = m->grid->pts.n;

	printf("grid %s (%s, %zu points), source %s: %s\n", m->grid->name, m->grid->kind, np,
	       m->source, what);
	for (int i = 0; i < AN_NPARAMS; i++) {
		double lo = HUGE_VAL, hi = -HUGE_VAL, sum = 0;
		size_t n = 0;

		for (size_t q = 0; q < np; q++) {
			const double x = mid_value(m->v, i, m->nbands, np, q, mid, nmid);

			if (isnan(x))
				continue;
			lo = fmin(lo, x);
			hi = fmax(hi, x);
			sum += x;
			n++;
		}
		if (n)
			printf("  %-4s %-3s  least %8.*f  mean %8.*f  largest %8.*f  (%zu points)\n",
			       an_params[i].name, an_params[i].unit, an_params[i].digits, lo,
			       an_params[i].digits, sum / n, an_params[i].digits, hi, n);
		else
			printf("  %-4s %-3s  -\n", an_params[i].name, an_params[i].unit);
	}
}

int analyze_grids(const char *path, const struct rirs_data *d, int third, const char *dir,
		  int plots, int quiet, struct rs_error *err)
{
	struct grid_meta *g = NULL;
	struct grid_map *maps = NULL;
	struct iso_band band[ISO_MAX_BANDS];
	const char *pname[AN_NPARAMS], *punit[AN_NPARAMS];
	double fm[ISO_MAX_BANDS];
	int ng, nmaps = 0, rc, nb, mid[ISO_MAX_BANDS], nmid;
	char what[96], out[4200];

	if ((rc = gridf_list(path, &g, &ng, err)) || !ng)
		return rc;
	nb = iso_bands(third, d->fmax, d->fs, band);
	nmid = mid_bands(band, nb, mid, what, sizeof(what));
	for (int k = 0; k < nb; k++)
		fm[k] = band[k].fm;
	for (int i = 0; i < AN_NPARAMS; i++) {
		pname[i] = an_params[i].name;
		punit[i] = an_params[i].unit;
	}
	for (int i = 0; i < ng; i++)
		nmaps += g[i].nsources;
	if (!(maps = calloc((size_t)nmaps + 1, sizeof(*maps)))) {
		gridf_list_free(g, ng);
		return rs_fail(err, RS_ENOMEM, "out of memory for the maps");
	}
	nmaps = 0;
	for (int i = 0; i < ng && !rc; i++)
		for (int j = 0; j < g[i].nsources && !rc; j++) {
			struct grid_map *m = &maps[nmaps];
			double *v;
			int s = 0;

			while (s < d->nsources && strcmp(d->source_names[s], g[i].sources[j]))
				s++;
			if (s == d->nsources)
				continue;	/* not a source of this file */
			if (!(v = malloc((size_t)AN_NPARAMS * nb * g[i].pts.n * sizeof(double) + 1))) {
				rc = rs_fail(err, RS_ENOMEM, "out of memory for the maps of grid %s",
					     g[i].name);
				break;
			}
			*m = (struct grid_map){ &g[i], g[i].sources[j], AN_NPARAMS, nb, pname, punit,
						fm, v };
			nmaps++;
			if (!quiet)
				fprintf(stderr, "roomsim analyze: grid %s, source %s: %zu points\n",
					g[i].name, g[i].sources[j], g[i].pts.n);
			rc = grid_values(path, d, &g[i], s, band, nb, v, err);
			if (!rc && !quiet)
				summary(m, mid, nmid, what);
			if (!rc && plots && nb)
				rc = figures(dir, m, d, mid, nmid, what, err);
		}
	snprintf(out, sizeof(out), "%s/maps.h5", dir);
	if (!rc)
		rc = gridf_write_maps(out, maps, nmaps, err);
	if (!rc && !quiet)
		printf("maps.h5%s in %s/\n\n", plots ? " and the maps (map_*.png, .svg)" : "", dir);
	for (int i = 0; i < nmaps; i++)
		free((void *)maps[i].v);
	free(maps);
	gridf_list_free(g, ng);
	return rc;
}
