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
	{	/* which elements are room cells: solid ones hold no pressure */
		hid_t g = H5Gcreate2(s->file, "rooms", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		herr_t rc = g < 0 ? -1 : 0;

		for (int i = 0; i < nplanes && rc >= 0; i++) {
			const hsize_t d2[2] = { (hsize_t)planes[i].n1, (hsize_t)planes[i].n2 };
			const size_t n = (size_t)planes[i].n1 * planes[i].n2;
			unsigned char *all = planes[i].room ? NULL : malloc(n);
			hid_t sp = H5Screate_simple(2, d2, NULL), d;

			if (all)
				memset(all, 1, n);
			d = H5Dcreate2(g, planes[i].name, H5T_NATIVE_UCHAR, sp, H5P_DEFAULT,
				       H5P_DEFAULT, H5P_DEFAULT);
			rc = d < 0 || (!planes[i].room && !all)
				? -1 : H5Dwrite(d, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT,
						planes[i].room ? planes[i].room : all);
			if (d >= 0)
				H5Dclose(d);
			H5Sclose(sp);
			free(all);
		}
		if (g >= 0)
			H5Gclose(g);
		if (rc < 0) {
			rs_fail(err, RS_EIO, "%s: cannot write the planes' room cells", path);
			snap_close(s, NULL);
			return NULL;
		}
	}
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

struct snap_file *snap_reopen(const char *path, const struct snap_plane *planes, int nplanes,
			      double spacing, long every, double dt, long frames,
			      struct rs_error *err)
{
	struct snap_file *s = calloc(1, sizeof(*s));

	if (!s || !(s->sets = calloc((size_t)nplanes, sizeof(*s->sets)))) {
		free(s);
		rs_fail(err, RS_ENOMEM, "out of memory opening %s", path);
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->spacing = spacing;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if ((s->file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0) {
		rs_fail(err, RS_EIO, "%s: cannot open the snapshots to go on with them", path);
		free(s->sets);
		free(s);
		return NULL;
	}
	for (int i = 0; i < nplanes; i++) {
		struct snap_set *set = &s->sets[i];
		hsize_t dims[3] = { 0 };
		hid_t sp;

		set->n1 = planes[i].n1;
		set->n2 = planes[i].n2;
		set->plane = planes[i];
		set->dset = H5Dopen2(s->file, planes[i].name, H5P_DEFAULT);
		s->nsets = i + 1;
		if (set->dset >= 0) {
			sp = H5Dget_space(set->dset);
			H5Sget_simple_extent_dims(sp, dims, NULL);
			H5Sclose(sp);
		}
		/* frames past the checkpoint are dropped; fewer than it holds cannot be made up */
		set->cap = (hsize_t)frames + 64;
		set->times = malloc(set->cap * sizeof(double));
		if (set->dset < 0 || dims[0] < (hsize_t)frames || dims[1] != (hsize_t)set->n1 ||
		    dims[2] != (hsize_t)set->n2 || !set->times) {
			rs_fail(err, RS_EIO, "%s: plane %s does not hold the %ld frames the checkpoint "
				"counts (it holds %llu)", path, planes[i].name, frames,
				(unsigned long long)dims[0]);
			snap_close(s, NULL);
			return NULL;
		}
		dims[0] = (hsize_t)frames;
		H5Dset_extent(set->dset, dims);
		set->frames = (hsize_t)frames;
		for (long f = 0; f < frames; f++)
			set->times[f] = (double)(f * every) * dt;	/* as the run took it */
	}
	return s;
}

int snap_band(struct snap_file *s, double fmax, int taps, struct rs_error *err)
{
	char text[256];

	if (fmax > 0)
		snprintf(text, sizeof(text), "fmax: low-passed in time at %.6g Hz (a zero-phase FIR "
			 "of %d steps: flat to %.6g Hz, -60 dB from %.6g Hz; docs/output.md)", fmax,
			 taps, 0.75 * fmax, fmax);
	else
		snprintf(text, sizeof(text), "full: the grid's whole band");
	if (H5Aexists(s->file, "band") > 0)
		H5Adelete(s->file, "band");
	return h5a_string(s->file, "band", text) < 0
		       ? rs_fail(err, RS_EIO, "%s: cannot write its band attribute", s->path) : 0;
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
			if (H5Aexists(set->dset, "times") > 0)	/* a resumed run's file */
				rc |= H5Adelete(set->dset, "times");
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

/* ---- reading ------------------------------------------------------------------------- */

struct snap_reader {
	hid_t file;
	struct snap_info *info;
	hid_t *dset;
	int n;
	char path[1024];
};

/* Dataset d as a plane: its shape and attributes into p. */
static int describe(hid_t file, hid_t d, const char *name, struct snap_info *p)
{
	hsize_t dims[3];
	hid_t sp = H5Dget_space(d), a;
	char room[48];
	int ok = H5Sget_simple_extent_ndims(sp) == 3 && H5Sget_simple_extent_dims(sp, dims, NULL) >= 0;

	H5Sclose(sp);
	if (!ok || h5a_get(d, "spacing", H5T_NATIVE_DOUBLE, &p->spacing) ||
	    h5a_get(d, "origin", H5T_NATIVE_DOUBLE, p->origin) ||
	    h5a_get(d, "at", H5T_NATIVE_DOUBLE, &p->at))
		return -1;
	snprintf(p->name, sizeof(p->name), "%.31s", name);
	p->axis = name[0] - 'x';
	p->frames = (long)dims[0];
	p->n1 = (int)dims[1];
	p->n2 = (int)dims[2];
	p->times = calloc((size_t)p->frames + 1, sizeof(double));
	p->room = malloc((size_t)p->n1 * p->n2);
	if (!p->times || !p->room || p->axis < 0 || p->axis > 2)
		return -1;
	if ((a = H5Aopen(d, "times", H5P_DEFAULT)) >= 0) {
		H5Aread(a, H5T_NATIVE_DOUBLE, p->times);
		H5Aclose(a);
	}
	snprintf(room, sizeof(room), "rooms/%.31s", name);
	memset(p->room, 1, (size_t)p->n1 * p->n2);
	if (H5Lexists(file, "rooms", H5P_DEFAULT) > 0 && H5Lexists(file, room, H5P_DEFAULT) > 0) {
		hid_t m = H5Dopen2(file, room, H5P_DEFAULT);

		if (m >= 0) {
			H5Dread(m, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, p->room);
			H5Dclose(m);
		}
	}
	return 0;
}

struct snap_reader *snap_ropen(const char *path, struct rs_error *err)
{
	struct snap_reader *r = calloc(1, sizeof(*r));
	H5G_info_t gi;

	if (!r) {
		rs_fail(err, RS_ENOMEM, "out of memory reading %s", path);
		return NULL;
	}
	snprintf(r->path, sizeof(r->path), "%s", path);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if ((r->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 ||
	    H5Gget_info(r->file, &gi) < 0) {
		rs_fail(err, RS_EINPUT, "%s: cannot open it as HDF5 (valid: a <source>_snapshots.h5 "
			"that roomsim run wrote)", path);
		snap_rclose(r);
		return NULL;
	}
	r->info = calloc(gi.nlinks + 1, sizeof(*r->info));
	r->dset = calloc(gi.nlinks + 1, sizeof(*r->dset));
	for (hsize_t i = 0; r->info && r->dset && i < gi.nlinks; i++) {
		char name[32];
		hid_t d;

		/* the planes' datasets; rooms/ is a group, which H5Dopen2 does not open */
		if (H5Lget_name_by_idx(r->file, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof(name),
				       H5P_DEFAULT) < 0 ||
		    (d = H5Dopen2(r->file, name, H5P_DEFAULT)) < 0)
			continue;
		if (describe(r->file, d, name, &r->info[r->n])) {
			H5Dclose(d);
			free(r->info[r->n].times);
			free(r->info[r->n].room);
			memset(&r->info[r->n], 0, sizeof(r->info[r->n]));
			continue;
		}
		r->dset[r->n++] = d;
	}
	if (!r->n) {
		rs_fail(err, RS_EINPUT, "%s: no snapshot planes in it (valid: a <source>_snapshots.h5 "
			"that roomsim run wrote)", path);
		snap_rclose(r);
		return NULL;
	}
	return r;
}

int snap_rcount(const struct snap_reader *r)
{
	return r->n;
}

const struct snap_info *snap_rinfo(const struct snap_reader *r, int i)
{
	return &r->info[i];
}

int snap_rframe(struct snap_reader *r, int i, long f, float *out, struct rs_error *err)
{
	const struct snap_info *p = &r->info[i];
	const hsize_t start[3] = { (hsize_t)f, 0, 0 }, cnt[3] = { 1, (hsize_t)p->n1, (hsize_t)p->n2 };
	hid_t fs = H5Dget_space(r->dset[i]), ms = H5Screate_simple(3, cnt, NULL);
	herr_t rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);

	if (rc >= 0)
		rc = H5Dread(r->dset[i], H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, out);
	H5Sclose(ms);
	H5Sclose(fs);
	return rc < 0 ? rs_fail(err, RS_EIO, "%s: cannot read frame %ld of %s", r->path, f,
				p->name) : 0;
}

void snap_rclose(struct snap_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++) {
		H5Dclose(r->dset[i]);
		free(r->info[i].times);
		free(r->info[i].room);
	}
	if (r->file >= 0)
		H5Fclose(r->file);
	free(r->info);
	free(r->dset);
	free(r);
}
