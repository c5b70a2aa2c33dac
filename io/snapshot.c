/* snapshot.c - extendible HDF5 datasets of plane frames. */
#include "snapshot.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5attr.h"

struct snap_set {
	hid_t dset;
	hsize_t frames;
	double *times;		/* frame times, grown as frames arrive */
	hsize_t cap;
	int n1, n2;
};

struct snap_file {
	hid_t file;
	struct snap_set *sets;
	int nsets;
	char path[1024];
};

static hid_t create_set(hid_t file, const struct snap_plane *p, double h, double dt)
{
	static const char *const axes[] = { "x", "y", "z" };
	hsize_t dims[3] = { 0, (hsize_t)p->n1, (hsize_t)p->n2 };
	hsize_t max[3] = { H5S_UNLIMITED, (hsize_t)p->n1, (hsize_t)p->n2 };
	hsize_t chunk[3] = { 1, (hsize_t)p->n1, (hsize_t)p->n2 };
	hid_t sp = H5Screate_simple(3, dims, max), pl = H5Pcreate(H5P_DATASET_CREATE), d;

	H5Pset_chunk(pl, 3, chunk);
	H5Pset_shuffle(pl);
	H5Pset_deflate(pl, 4);
	d = H5Dcreate2(file, p->name, H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
	H5Pclose(pl);
	H5Sclose(sp);
	if (d < 0)
		return d;
	if (h5a_string(d, "axis", axes[p->axis]) < 0 || h5a_double(d, "at", p->at) < 0 ||
	    h5a_double(d, "spacing", h) < 0 || h5a_doubles(d, "origin", p->origin, 3) < 0 ||
	    h5a_double(d, "frame_interval", dt) < 0 ||
	    h5a_string(d, "layout", p->axis == 2 ? "[frame][y][x]" :
			p->axis == 1 ? "[frame][z][x]" : "[frame][z][y]") < 0 ||
	    h5a_string(d, "units", "Pa") < 0) {
		H5Dclose(d);
		return -1;
	}
	return d;
}

struct snap_file *snap_open(const char *path, const struct snap_plane *planes, int nplanes,
			    double spacing, double frame_dt, struct rs_error *err)
{
	struct snap_file *s = calloc(1, sizeof(*s));
	hid_t fapl;

	if (!s || !(s->sets = calloc((size_t)nplanes, sizeof(*s->sets)))) {
		free(s);
		rs_fail(err, RS_ENOMEM, "out of memory opening %s", path);
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	fapl = h5a_fapl();
	s->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (s->file < 0) {
		rs_fail(err, RS_EIO, "%s: cannot create the HDF5 file", path);
		goto out_free;
	}
	for (int i = 0; i < nplanes; i++) {
		s->sets[i].n1 = planes[i].n1;
		s->sets[i].n2 = planes[i].n2;
		s->sets[i].dset = create_set(s->file, &planes[i], spacing, frame_dt);
		s->nsets = i + 1;
		if (s->sets[i].dset < 0) {
			rs_fail(err, RS_EIO, "%s: cannot create dataset %s", path, planes[i].name);
			snap_close(s, NULL);
			return NULL;
		}
	}
	return s;
out_free:
	free(s->sets);
	free(s);
	return NULL;
}

int snap_append(struct snap_file *s, int p, const float *frame, double t, struct rs_error *err)
{
	struct snap_set *set = &s->sets[p];
	hsize_t dims[3] = { set->frames + 1, (hsize_t)set->n1, (hsize_t)set->n2 };
	hsize_t start[3] = { set->frames, 0, 0 }, count[3] = { 1, dims[1], dims[2] };
	hid_t fs, ms;
	herr_t rc;

	if (set->frames == set->cap) {
		hsize_t cap = set->cap ? 2 * set->cap : 64;
		double *tt = realloc(set->times, cap * sizeof(*tt));

		if (!tt)
			return rs_fail(err, RS_ENOMEM, "out of memory appending a snapshot");
		set->times = tt;
		set->cap = cap;
	}
	if (H5Dset_extent(set->dset, dims) < 0)
		return rs_fail(err, RS_EIO, "%s: cannot extend a snapshot dataset", s->path);
	fs = H5Dget_space(set->dset);
	ms = H5Screate_simple(3, count, NULL);
	H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
	rc = H5Dwrite(set->dset, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, frame);
	H5Sclose(ms);
	H5Sclose(fs);
	if (rc < 0 || H5Fflush(s->file, H5F_SCOPE_LOCAL) < 0)
		return rs_fail(err, RS_EIO, "%s: writing a snapshot frame failed", s->path);
	set->times[set->frames++] = t;
	return 0;
}

int snap_close(struct snap_file *s, struct rs_error *err)
{
	herr_t rc = 0;

	if (!s)
		return 0;
	for (int i = 0; i < s->nsets; i++) {
		struct snap_set *set = &s->sets[i];

		if (set->dset >= 0) {
			/* h5py cannot read an empty attribute array: a run with no frame gets none. */
			if (set->frames)
				rc |= h5a_doubles(set->dset, "times", set->times, set->frames);
			rc |= H5Dclose(set->dset);
		}
		free(set->times);
	}
	if (s->file >= 0)
		rc |= H5Fclose(s->file);
	free(s->sets);
	if (rc < 0)
		rs_fail(err, RS_EIO, "%s: closing the HDF5 file failed", s->path);
	free(s);
	return rc < 0 ? RS_EIO : 0;
}
