/* gridfile.c - <source>_grids.h5 with HDF5 (gridfile.h), and the grids' part of rirs.h5. */
#include "gridfile.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5attr.h"

struct grid_file {
	char path[4096], tmp[4104];
	hid_t file;
	hid_t *rir;		/* per grid its rir dataset */
	size_t *off;		/* per grid its first point in the rows */
	size_t *npts;
	int ngrids;
	size_t total;		/* points of every grid */
	size_t nsamples;
	float *t;		/* one grid's block of an append, transposed */
	size_t tcap;
};

/* Positions and lattice indices of g under group loc. */
static herr_t put_points(hid_t loc, const struct grid_desc *g)
{
	const struct grid_points *p = g->pts;
	const hsize_t d3[2] = { p->n, 3 }, d2[2] = { p->n, 2 };
	hid_t s2 = H5Screate_simple(2, d2, NULL), d;
	const char axes[3] = { (char)('x' + p->axes[0]), (char)('x' + p->axes[1]), 0 };
	const double dims[2] = { p->dims[0], p->dims[1] };
	const double extent[4] = { p->lo[0], p->hi[0], p->lo[1], p->hi[1] };
	herr_t rc = h5_put_doubles(loc, "positions", 2, d3, NULL, p->pos[0]);
	d = H5Dcreate2(loc, "lattice", H5T_NATIVE_INT, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (d >= 0) {
		rc |= H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, p->ij);
		H5Dclose(d);
	} else {
		rc = -1;
	}
	rc |= h5a_string(loc, "kind", g->kind);
	rc |= h5a_string(loc, "lattice_axes", axes);
	rc |= h5a_doubles(loc, "lattice_first", p->first, 2);
	rc |= h5a_doubles(loc, "lattice_dims", dims, 2);
	rc |= h5a_doubles(loc, "extent", extent, 4);
	rc |= h5a_double(loc, "spacing", p->spacing);
	rc |= h5a_long(loc, "wavs", g->wavs);
	H5Sclose(s2);
	return rc;
}

/* A handle for ngrids grids of nsamples at path (written as path.tmp), no file open yet;
 * NULL and err when memory lacks. */
static struct grid_file *handle(const char *path, int ngrids, size_t nsamples,
				struct rs_error *err)
{
	struct grid_file *f = calloc(1, sizeof(*f));

	if (!f || !(f->rir = calloc((size_t)ngrids, sizeof(hid_t))) ||
	    !(f->off = calloc((size_t)ngrids, sizeof(size_t))) ||
	    !(f->npts = calloc((size_t)ngrids, sizeof(size_t)))) {
		if (f) {
			free(f->rir);
			free(f->off);
		}
		free(f);
		rs_fail(err, RS_ENOMEM, "out of memory opening %s", path);
		return NULL;
	}
	snprintf(f->path, sizeof(f->path), "%s", path);
	snprintf(f->tmp, sizeof(f->tmp), "%s.tmp", path);
	f->ngrids = ngrids;
	f->nsamples = nsamples;
	f->file = -1;
	for (int i = 0; i < ngrids; i++)
		f->rir[i] = -1;
	return f;
}

struct grid_file *gridf_open(const char *path, const struct grid_desc *g, int ngrids,
			     size_t nsamples, double fs, size_t window, struct rs_error *err)
{
	struct grid_file *f = handle(path, ngrids, nsamples, err);
	hid_t fapl;
	herr_t rc = 0;

	if (!f)
		return NULL;
	fapl = h5a_fapl();
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f->file = H5Fcreate(f->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f->file < 0) {
		rs_fail(err, RS_EIO, "%s: cannot create the HDF5 file", f->tmp);
		gridf_close(f, 0, NULL);
		return NULL;
	}
	rc |= h5a_double(f->file, "sample_rate", fs);
	rc |= h5a_string(f->file, "units", "rir: Pa for a source of 1 Pa at 1 m in free field, "
			 "raw (no air absorption)");
	for (int i = 0; i < ngrids && rc >= 0; i++) {
		const size_t n = g[i].pts->n;
		const hsize_t dims[2] = { n, nsamples };
		/* an append fills whole chunks: no chunk is read back and rewritten */
		const hsize_t chunk[2] = { n < 256 ? n : 256, window < nsamples ? window : nsamples };
		hid_t grp = H5Gcreate2(f->file, g[i].name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		hid_t sp = H5Screate_simple(2, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
		const float zero = 0;

		H5Pset_chunk(pl, 2, chunk);
		H5Pset_fill_value(pl, H5T_NATIVE_FLOAT, &zero);
		if (grp < 0 || (f->rir[i] = H5Dcreate2(grp, "rir", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT,
						       pl, H5P_DEFAULT)) < 0)
			rc = -1;
		else
			rc |= put_points(grp, &g[i]);
		H5Pclose(pl);
		H5Sclose(sp);
		if (grp >= 0)
			H5Gclose(grp);
		f->off[i] = f->total;
		f->npts[i] = n;
		f->total += n;
	}
	if (rc < 0) {
		rs_fail(err, RS_EIO, "%s: cannot lay out the receiver grids", f->tmp);
		gridf_close(f, 0, NULL);
		return NULL;
	}
	return f;
}

struct grid_file *gridf_reopen(const char *path, const struct grid_desc *g, int ngrids,
			       size_t nsamples, struct rs_error *err)
{
	struct grid_file *f = handle(path, ngrids, nsamples, err);
	char name[300];

	if (!f)
		return NULL;
	/* an interrupted run renamed it into place; one that was killed left it at tmp */
	if (access(f->tmp, F_OK) && rename(f->path, f->tmp)) {
		rs_fail(err, RS_EIO, "%s: cannot go on with the grid file: %s", path,
			strerror(errno));
		gridf_close(f, 0, NULL);
		return NULL;
	}
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f->file = H5Fopen(f->tmp, H5F_ACC_RDWR, H5P_DEFAULT);
	for (int i = 0; i < ngrids && f->file >= 0; i++) {
		snprintf(name, sizeof(name), "%s/rir", g[i].name);
		f->rir[i] = H5Dopen2(f->file, name, H5P_DEFAULT);
		f->off[i] = f->total;
		f->npts[i] = g[i].pts->n;
		f->total += g[i].pts->n;
		if (f->rir[i] < 0)
			break;
	}
	if (f->file < 0 || (ngrids && f->rir[ngrids - 1] < 0)) {
		rs_fail(err, RS_EIO, "%s: cannot open the grid file to go on with it", f->tmp);
		gridf_close(f, 0, NULL);
		return NULL;
	}
	if (H5Aexists(f->file, "completed_steps") > 0)	/* written again at the close */
		H5Adelete(f->file, "completed_steps");
	return f;
}

int gridf_flush(struct grid_file *f, struct rs_error *err)
{
	return f && H5Fflush(f->file, H5F_SCOPE_LOCAL) < 0
		       ? rs_fail(err, RS_EIO, "%s: cannot flush the grid samples", f->tmp) : 0;
}

int gridf_append(struct grid_file *f, const float *rows, long first, long count,
		 struct rs_error *err)
{
	if (count <= 0)
		return 0;
	if ((size_t)(first + count) > f->nsamples)
		count = (long)f->nsamples - first;
	for (int i = 0; i < f->ngrids; i++) {
		const size_t n = f->npts[i];
		const hsize_t start[2] = { 0, (hsize_t)first }, cnt[2] = { n, (hsize_t)count };
		hid_t fs, ms;
		herr_t rc;

		if (n * (size_t)count > f->tcap) {
			free(f->t);
			f->tcap = n * (size_t)count;
			if (!(f->t = malloc(f->tcap * sizeof(float)))) {
				f->tcap = 0;
				return rs_fail(err, RS_ENOMEM, "out of memory writing %s", f->tmp);
			}
		}
		for (size_t q = 0; q < n; q++)
			for (long s = 0; s < count; s++)
				f->t[q * (size_t)count + (size_t)s] =
					rows[(size_t)s * f->total + f->off[i] + q];
		fs = H5Dget_space(f->rir[i]);
		ms = H5Screate_simple(2, cnt, NULL);
		rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
		if (rc >= 0)
			rc = H5Dwrite(f->rir[i], H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, f->t);
		H5Sclose(ms);
		H5Sclose(fs);
		if (rc < 0)
			return rs_fail(err, RS_EIO, "%s: writing grid samples failed (disk full?)",
				       f->tmp);
	}
	return 0;
}

int gridf_close(struct grid_file *f, long completed, struct rs_error *err)
{
	int rc = 0;

	if (!f)
		return 0;
	if (f->file >= 0 && h5a_long(f->file, "completed_steps", completed) < 0)
		rc = RS_EIO;
	for (int i = 0; i < f->ngrids; i++)
		if (f->rir[i] >= 0)
			H5Dclose(f->rir[i]);
	if (f->file >= 0 && H5Fclose(f->file) < 0)
		rc = RS_EIO;
	if (!rc && f->file >= 0 && rename(f->tmp, f->path))
		rc = RS_EIO;
	if (rc && err)
		rs_fail(err, rc, "%s: cannot finish the grid file: %s", f->path, strerror(errno));
	free(f->rir);
	free(f->off);
	free(f->npts);
	free(f->t);
	free(f);
	return rc;
}

int gridf_read(const char *path, const char *dset, size_t p0, size_t np, size_t nsamples,
	       double *out, struct rs_error *err)
{
	hid_t f, d, fs, ms;
	herr_t rc = -1;
	const hsize_t start[2] = { p0, 0 }, cnt[2] = { np, nsamples };

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return rs_fail(err, RS_EIO, "%s: cannot open the grid file", path);
	if ((d = H5Dopen2(f, dset, H5P_DEFAULT)) >= 0) {
		fs = H5Dget_space(d);
		ms = H5Screate_simple(2, cnt, NULL);
		if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0)
			rc = H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, out);
		H5Sclose(ms);
		H5Sclose(fs);
		H5Dclose(d);
	}
	H5Fclose(f);
	return rc < 0 ? rs_fail(err, RS_EIO, "%s: cannot read %s", path, dset) : 0;
}

int gridf_describe(long long file, const struct grid_desc *g, int ngrids,
		   const char *const *sources, int nsources)
{
	hid_t top = H5Gcreate2((hid_t)file, "grids", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	herr_t rc = top < 0 ? -1 : 0;

	for (int i = 0; i < ngrids && rc >= 0; i++) {
		hid_t grp = H5Gcreate2(top, g[i].name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), links;
		char target[512], obj[300];

		if (grp < 0) {
			rc = -1;
			break;
		}
		rc |= put_points(grp, &g[i]);
		links = H5Gcreate2(grp, "rir", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		snprintf(obj, sizeof(obj), "/%s/rir", g[i].name);
		for (int s = 0; s < nsources && links >= 0; s++) {
			snprintf(target, sizeof(target), "%s_grids.h5", sources[s]);
			rc |= H5Lcreate_external(target, obj, links, sources[s], H5P_DEFAULT,
						 H5P_DEFAULT);
		}
		if (links < 0)
			rc = -1;
		else
			H5Gclose(links);
		H5Gclose(grp);
	}
	if (top >= 0)
		H5Gclose(top);
	return rc;
}

/* ---- reading rirs.h5's grids, writing maps.h5 ------------------------------------------ */

/* One grid group of rirs.h5 into m. */
static int read_grid(hid_t grp, struct grid_meta *m)
{
	char axes[8] = "";
	double dims[2], extent[4];
	hid_t d, sp, links;
	hsize_t dd[2];
	H5G_info_t info;

	if (h5a_get_string(grp, "kind", m->kind, sizeof(m->kind)) ||
	    h5a_get_string(grp, "lattice_axes", axes, sizeof(axes)) || strlen(axes) != 2 ||
	    h5a_get(grp, "lattice_first", H5T_NATIVE_DOUBLE, m->pts.first) ||
	    h5a_get(grp, "lattice_dims", H5T_NATIVE_DOUBLE, dims) ||
	    h5a_get(grp, "spacing", H5T_NATIVE_DOUBLE, &m->pts.spacing) ||
	    h5a_get(grp, "extent", H5T_NATIVE_DOUBLE, extent))
		return -1;
	for (int a = 0; a < 2; a++) {
		m->pts.lo[a] = extent[2 * a];
		m->pts.hi[a] = extent[2 * a + 1];
	}
	m->pts.axes[0] = axes[0] - 'x';
	m->pts.axes[1] = axes[1] - 'x';
	m->pts.dims[0] = (int)dims[0];
	m->pts.dims[1] = (int)dims[1];
	if ((d = H5Dopen2(grp, "positions", H5P_DEFAULT)) < 0)
		return -1;
	sp = H5Dget_space(d);
	H5Sget_simple_extent_dims(sp, dd, NULL);
	H5Sclose(sp);
	m->pts.n = (size_t)dd[0];
	m->pts.pos = malloc(m->pts.n * sizeof(*m->pts.pos) + 1);
	m->pts.ij = malloc(m->pts.n * sizeof(*m->pts.ij) + 1);
	if (!m->pts.pos || !m->pts.ij ||
	    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m->pts.pos) < 0) {
		H5Dclose(d);
		return -1;
	}
	H5Dclose(d);
	if ((d = H5Dopen2(grp, "lattice", H5P_DEFAULT)) < 0)
		return -1;
	if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, m->pts.ij) < 0) {
		H5Dclose(d);
		return -1;
	}
	H5Dclose(d);
	if ((links = H5Gopen2(grp, "rir", H5P_DEFAULT)) < 0 || H5Gget_info(links, &info) < 0)
		return -1;
	m->sources = calloc(info.nlinks + 1, sizeof(*m->sources));
	for (hsize_t i = 0; m->sources && i < info.nlinks; i++)
		if (H5Lget_name_by_idx(links, ".", H5_INDEX_NAME, H5_ITER_INC, i,
				       m->sources[m->nsources], 64, H5P_DEFAULT) > 0)
			m->nsources++;
	H5Gclose(links);
	return m->sources ? 0 : -1;
}

int gridf_list(const char *path, struct grid_meta **g, int *n, struct rs_error *err)
{
	hid_t f, top;
	H5G_info_t info;
	int rc = 0;

	*g = NULL;
	*n = 0;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return rs_fail(err, RS_EIO, "%s: cannot open it as HDF5", path);
	if (H5Lexists(f, "grids", H5P_DEFAULT) <= 0) {
		H5Fclose(f);
		return 0;
	}
	top = H5Gopen2(f, "grids", H5P_DEFAULT);
	if (top < 0 || H5Gget_info(top, &info) < 0 ||
	    !(*g = calloc(info.nlinks + 1, sizeof(**g)))) {
		rc = rs_fail(err, RS_EIO, "%s: cannot read its receiver grids", path);
	} else {
		for (hsize_t i = 0; i < info.nlinks && !rc; i++) {
			struct grid_meta *m = &(*g)[*n];
			hid_t grp;

			H5Lget_name_by_idx(top, ".", H5_INDEX_NAME, H5_ITER_INC, i, m->name,
					   sizeof(m->name), H5P_DEFAULT);
			(*n)++;
			grp = H5Gopen2(top, m->name, H5P_DEFAULT);
			if (grp < 0 || read_grid(grp, m))
				rc = rs_fail(err, RS_EIO, "%s: receiver grid %s cannot be read", path,
					     m->name);
			if (grp >= 0)
				H5Gclose(grp);
		}
	}
	if (top >= 0)
		H5Gclose(top);
	H5Fclose(f);
	if (rc) {
		gridf_list_free(*g, *n);
		*g = NULL;
		*n = 0;
	}
	return rc;
}

void gridf_list_free(struct grid_meta *g, int n)
{
	for (int i = 0; g && i < n; i++) {
		grid_points_free(&g[i].pts);
		free(g[i].sources);
	}
	free(g);
}

int gridf_write_maps(const char *path, const struct grid_map *m, int n, struct rs_error *err)
{
	char tmp[4200], name[300];
	hid_t fapl = h5a_fapl(), f;
	herr_t rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f < 0)
		return rs_fail(err, RS_EIO, "%s: cannot create the HDF5 file", tmp);
	rc |= h5a_string(f, "units", "EDT, T20, T30, Ts: s; C50, C80, G: dB; D50: ratio 0 to 1");
	for (int i = 0; i < n && rc >= 0; i++) {
		const struct grid_meta *g = m[i].grid;
		const size_t np = g->pts.n;
		hid_t grp, sg;

		if (H5Lexists(f, g->name, H5P_DEFAULT) <= 0) {
			const struct grid_desc d = { g->name, &g->pts, g->kind, 0 };

			grp = H5Gcreate2(f, g->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
			rc |= grp < 0 ? -1 : put_points(grp, &d);
			if (grp >= 0)
				H5Gclose(grp);
		}
		snprintf(name, sizeof(name), "%s/%s", g->name, m[i].source);
		if ((sg = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
			rc = -1;
			break;
		}
		{
			const hsize_t nb = (hsize_t)m[i].nbands, d2[2] = { nb, np };

			rc |= h5_put_doubles(sg, "band_centres", 1, &nb, NULL, m[i].fm);
			for (int k = 0; k < m[i].nparams && rc >= 0; k++) {
				hid_t d;

				rc |= h5_put_doubles(sg, m[i].param[k], 2, d2, NULL,
						     m[i].v + (size_t)k * nb * np);
				if ((d = H5Dopen2(sg, m[i].param[k], H5P_DEFAULT)) < 0) {
					rc = -1;
					break;
				}
				rc |= h5a_string(d, "unit", m[i].unit[k]);
				H5Dclose(d);
			}
		}
		H5Gclose(sg);
	}
	return h5_finish(f, rc, tmp, path, err);
}
