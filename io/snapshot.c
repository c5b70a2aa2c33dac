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
	struct snap_plane plane;
};

struct snap_file {
	hid_t file;
	struct snap_set *sets;
	int nsets;
	double spacing;
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
	s->spacing = spacing;
	for (int i = 0; i < nplanes; i++) {
		s->sets[i].n1 = planes[i].n1;
		s->sets[i].n2 = planes[i].n2;
		s->sets[i].plane = planes[i];
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

/*
 * The XDMF sidecar (path with .h5 replaced by .xmf) that ParaView and VisIt open: per plane a
 * temporal collection of its frames, each a 3-D co-rectilinear grid one node thick, in
 * metres, whose node values are the frame's hyperslab of the HDF5 dataset. XDMF orders the
 * dimensions, origin and spacing slowest first: z, y, x.
 */
static int write_xdmf(const struct snap_file *s)
{
	char path[1100], tmp[1110];
	const char *h5 = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
	const size_t len = strlen(s->path);
	FILE *f;

	snprintf(path, sizeof(path), "%.*s.xmf",
		 (int)(len > 3 && !strcmp(s->path + len - 3, ".h5") ? len - 3 : len), s->path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		return -1;
	fprintf(f, "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n");
	for (int i = 0; i < s->nsets; i++) {
		const struct snap_set *set = &s->sets[i];
		const struct snap_plane *p = &set->plane;
		/* the frame [n1][n2] as z, y, x: the plane's normal is one node thick */
		const int nz = p->axis == 2 ? 1 : p->n1, ny = p->axis == 1 ? 1 : p->axis == 2 ? p->n1
										       : p->n2;
		const int nx = p->axis == 0 ? 1 : p->n2;

		fprintf(f, "  <Grid Name=\"%s\" GridType=\"Collection\" "
			   "CollectionType=\"Temporal\">\n", p->name);
		for (hsize_t t = 0; t < set->frames; t++) {
			fprintf(f, "   <Grid Name=\"%s\" GridType=\"Uniform\">\n"
				   "    <Time Value=\"%.9g\"/>\n"
				   "    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"%d %d %d\"/>\n"
				   "    <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
				   "     <DataItem Dimensions=\"3\" Format=\"XML\">%.9g %.9g %.9g</DataItem>\n"
				   "     <DataItem Dimensions=\"3\" Format=\"XML\">%.9g %.9g %.9g</DataItem>\n"
				   "    </Geometry>\n"
				   "    <Attribute Name=\"pressure\" Center=\"Node\" "
				   "AttributeType=\"Scalar\">\n"
				   "     <DataItem ItemType=\"Function\" Function=\"$0\" "
				   "Dimensions=\"%d %d %d\">\n"
				   "      <DataItem ItemType=\"HyperSlab\" Dimensions=\"1 %d %d\">\n"
				   "       <DataItem Dimensions=\"3 3\" Format=\"XML\">%llu 0 0 1 1 1 1 %d %d"
				   "</DataItem>\n"
				   "       <DataItem Dimensions=\"%llu %d %d\" NumberType=\"Float\" "
				   "Precision=\"4\" Format=\"HDF\">%s:/%s</DataItem>\n"
				   "      </DataItem>\n     </DataItem>\n    </Attribute>\n   </Grid>\n",
				p->name, set->times[t], nz, ny, nx, p->origin[2], p->origin[1],
				p->origin[0], s->spacing, s->spacing, s->spacing, nz, ny, nx, p->n1,
				p->n2, (unsigned long long)t, p->n1, p->n2,
				(unsigned long long)set->frames, p->n1, p->n2, h5, p->name);
		}
		fprintf(f, "  </Grid>\n");
	}
	fprintf(f, " </Domain>\n</Xdmf>\n");
	if (fclose(f) || rename(tmp, path)) {
		remove(tmp);
		return -1;
	}
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
	}
	if (s->file >= 0)
		rc |= H5Fclose(s->file);
	if (rc >= 0 && s->file >= 0 && write_xdmf(s))
		rc = -1;
	for (int i = 0; i < s->nsets; i++)
		free(s->sets[i].times);
	free(s->sets);
	if (rc < 0)
		rs_fail(err, RS_EIO, "%s: closing the HDF5 file or writing its .xmf failed",
			s->path);
	free(s);
	return rc < 0 ? RS_EIO : 0;
}
