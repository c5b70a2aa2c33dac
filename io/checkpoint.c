/* checkpoint.c - checkpoints in HDF5 (checkpoint.h). */
#include "checkpoint.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5attr.h"

void ckpt_path(char *buf, size_t len, const char *dir, int rank, int prev)
{
	char r[32] = "";

	if (rank > 0)
		snprintf(r, sizeof(r), ".rank%d", rank);
	snprintf(buf, len, "%s/checkpoint%s%s.h5", dir, r, prev ? ".prev" : "");
}

/* The long long attributes of the meta, in one table for writing and reading. */
#define META_LONGS(X)                                                                  \
	X(n[0]) X(n[1]) X(n[2]) X(precision) X(steps) X(nsamples) X(nsources) X(nreceivers) \
	X(nrec) X(rank) X(ranks) X(source) X(step) X(values) X(bstates) X(bW)

static herr_t put_meta(hid_t f, const struct ckpt_meta *m)
{
	herr_t rc = h5a_string(f, "format", CKPT_FORMAT);
	char hash[32], points[32];

	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)m->grid_hash);
	snprintf(points, sizeof(points), "%016llx", (unsigned long long)m->points_hash);
	rc |= h5a_string(f, "room", m->room);
	rc |= h5a_string(f, "scheme", m->scheme);
	rc |= h5a_string(f, "engine", m->engine);
	rc |= h5a_string(f, "grid_hash", hash);
	rc |= h5a_string(f, "points_hash", points);
	rc |= h5a_double(f, "h", m->h);
	rc |= h5a_double(f, "dt", m->dt);
#define PUT(x) rc |= h5a_long(f, #x, (long long)m->x);
	META_LONGS(PUT)
	if (m->frames)
		PUT(frames)
#undef PUT
	return rc;
}

static hid_t level_type(int precision)
{
	return precision == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

/* A 1-D or 2-D dataset of n0 (x n1) values; nothing when there are none. */
static herr_t put(hid_t f, const char *name, hid_t type, hsize_t n0, hsize_t n1, const void *v)
{
	const hsize_t dims[2] = { n0, n1 };

	return n0 && n1 && v ? h5_put(f, name, type, n1 > 1 ? 2 : 1, dims, NULL, v) : 0;
}

int ckpt_write_tmp(const char *path, const struct ckpt_meta *m, const struct ckpt_data *d,
		   struct rs_error *err)
{
	char tmp[4200];
	const hid_t lt = level_type(m->precision);
	hid_t fapl = h5a_fapl(), f;
	herr_t rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	errno = 0;
	f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f < 0) {
		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: cannot create the checkpoint: %s", tmp,
			       strerror(errno ? errno : EIO));
	}
	rc = put_meta(f, m);
	rc |= put(f, "completed", H5T_NATIVE_LLONG, d->completed ? (hsize_t)m->nsources : 0, 1,
		  d->completed);
	rc |= put(f, "signals", H5T_NATIVE_DOUBLE,
		  d->signals ? (hsize_t)m->nsources * m->nreceivers : 0, (hsize_t)m->nsamples,
		  d->signals);
	rc |= put(f, "receivers", H5T_NATIVE_DOUBLE, (hsize_t)m->nrec, (hsize_t)m->step + 1,
		  d->rec);
	rc |= put(f, "field_cur", lt, (hsize_t)m->values, 1, d->cur);
	rc |= put(f, "field_prev", lt, (hsize_t)m->values, 1, d->prev);
	rc |= put(f, "branch_state", lt, (hsize_t)m->bstates, 1, d->bstate);
	rc |= put(f, "branch_W", lt, (hsize_t)m->bW, 1, d->bW);
	rc |= put(f, "snapshot_frames", H5T_NATIVE_FLOAT, (hsize_t)m->frames, 1, d->frames);
	if (H5Fclose(f) < 0 || rc < 0) {
		const int e = errno;

		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: writing the checkpoint failed%s%s", path,
			       e ? ": " : "", e ? strerror(e) : "");
	}
	return 0;
}

int ckpt_commit(const char *path, struct rs_error *err)
{
	char tmp[4200], prev[4200];
	const size_t n = strlen(path);

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	/* name.h5 -> name.prev.h5 */
	snprintf(prev, sizeof(prev), "%.*s.prev.h5", (int)(n > 3 ? n - 3 : n), path);
	if (access(path, F_OK) == 0 && rename(path, prev))
		return rs_fail(err, RS_EIO, "%s: cannot keep it as %s: %s", path, prev,
			       strerror(errno));
	if (rename(tmp, path)) {
		const int e = errno;

		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: cannot rename into place: %s", path, strerror(e));
	}
	return 0;
}

void ckpt_discard(const char *path)
{
	char tmp[4200];

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	remove(tmp);
}

int ckpt_write(const char *path, const struct ckpt_meta *m, const struct ckpt_data *d,
	       struct rs_error *err)
{
	return ckpt_write_tmp(path, m, d, err) || ckpt_commit(path, err) ? err->code : 0;
}

int ckpt_read_meta(const char *path, struct ckpt_meta *m, struct rs_error *err)
{
	hid_t f;
	char format[64], hash[32], points[32];
	int bad;

	memset(m, 0, sizeof(*m));
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (access(path, R_OK))
		return rs_fail(err, RS_EIO, "%s: %s", path, strerror(errno));
	if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return rs_fail(err, RS_EIO, "%s: not an HDF5 file (cut short?)", path);
	bad = h5a_get_string(f, "format", format, sizeof(format)) || strcmp(format, CKPT_FORMAT) ||
	      h5a_get_string(f, "room", m->room, sizeof(m->room)) ||
	      h5a_get_string(f, "scheme", m->scheme, sizeof(m->scheme)) ||
	      h5a_get_string(f, "engine", m->engine, sizeof(m->engine)) ||
	      h5a_get_string(f, "grid_hash", hash, sizeof(hash)) ||
	      h5a_get_string(f, "points_hash", points, sizeof(points)) ||
	      h5a_get(f, "h", H5T_NATIVE_DOUBLE, &m->h) ||
	      h5a_get(f, "dt", H5T_NATIVE_DOUBLE, &m->dt);
#define GET(x)                                                         \
	{                                                              \
		long long v = 0;                                       \
		bad |= h5a_get(f, #x, H5T_NATIVE_LLONG, &v) != 0;      \
		m->x = v;                                              \
	}
	META_LONGS(GET)
	m->frames = 0;
	if (H5Aexists(f, "frames") > 0)
		GET(frames)
#undef GET
	H5Fclose(f);
	m->grid_hash = strtoull(hash, NULL, 16);
	m->points_hash = strtoull(points, NULL, 16);
	if (bad || (m->precision != 4 && m->precision != 8) || m->values < 0 || m->frames < 0 ||
	    m->step < 0 || m->nsamples < 1 || m->nsources < 1 || m->source < 0 ||
	    m->source >= m->nsources)
		return rs_fail(err, RS_EIO, "%s: not a checkpoint of this roomsim (%s)", path,
			       CKPT_FORMAT);
	return 0;
}

/* Dataset name into v when it has exactly n values. */
static int get(hid_t f, const char *name, hid_t type, hsize_t n, void *v)
{
	hid_t d, sp;
	hssize_t have;
	herr_t rc;

	if (!v || !n)
		return 0;
	if ((d = H5Dopen2(f, name, H5P_DEFAULT)) < 0)
		return -1;
	sp = H5Dget_space(d);
	have = H5Sget_simple_extent_npoints(sp);
	H5Sclose(sp);
	rc = have == (hssize_t)n ? H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) : -1;
	H5Dclose(d);
	return rc < 0 ? -1 : 0;
}

int ckpt_read(const char *path, const struct ckpt_meta *m, struct ckpt_data *d,
	      struct rs_error *err)
{
	const hid_t lt = level_type(m->precision);
	hid_t f;
	int bad;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return rs_fail(err, RS_EIO, "%s: cannot open the checkpoint", path);
	bad = get(f, "completed", H5T_NATIVE_LLONG, (hsize_t)m->nsources, d->completed) ||
	      get(f, "signals", H5T_NATIVE_DOUBLE,
		  (hsize_t)m->nsources * m->nreceivers * m->nsamples, d->signals) ||
	      get(f, "receivers", H5T_NATIVE_DOUBLE, (hsize_t)m->nrec * (m->step + 1), d->rec) ||
	      get(f, "field_cur", lt, (hsize_t)m->values, d->cur) ||
	      get(f, "field_prev", lt, (hsize_t)m->values, d->prev) ||
	      get(f, "branch_state", lt, (hsize_t)m->bstates, d->bstate) ||
	      get(f, "branch_W", lt, (hsize_t)m->bW, d->bW) ||
	      get(f, "snapshot_frames", H5T_NATIVE_FLOAT, (hsize_t)m->frames, d->frames);
	H5Fclose(f);
	return bad ? rs_fail(err, RS_EIO, "%s: the checkpoint is damaged (a dataset is missing "
			     "or of the wrong size)", path) : 0;
}
