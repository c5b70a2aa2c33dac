/* h5attr.h - HDF5 helpers shared by io/rirs.c, io/gridfile.c and io/snapshot.c (internal to
 * io/): attributes, datasets of doubles, and a file finished into place. */
#ifndef IO_H5ATTR_H
#define IO_H5ATTR_H

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/rs_error.h"

/* Attribute name = n doubles on obj; returns a negative value on failure. */
static inline herr_t h5a_doubles(hid_t obj, const char *name, const double *v, hsize_t n)
{
	hid_t sp = H5Screate_simple(1, &n, NULL), a;
	herr_t rc = -1;

	if (sp < 0)
		return -1;
	a = H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		rc = H5Awrite(a, H5T_NATIVE_DOUBLE, v);
		H5Aclose(a);
	}
	H5Sclose(sp);
	return rc;
}

static inline herr_t h5a_double(hid_t obj, const char *name, double v)
{
	return h5a_doubles(obj, name, &v, 1);
}

static inline herr_t h5a_long(hid_t obj, const char *name, long long v)
{
	hid_t sp = H5Screate(H5S_SCALAR), a;
	herr_t rc = -1;

	if (sp < 0)
		return -1;
	a = H5Acreate2(obj, name, H5T_NATIVE_LLONG, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		rc = H5Awrite(a, H5T_NATIVE_LLONG, &v);
		H5Aclose(a);
	}
	H5Sclose(sp);
	return rc;
}

/* Attribute name of obj read as type (a native type) into v, sized for it; 0, or -1 when
 * absent or unreadable. */
static inline int h5a_get(hid_t obj, const char *name, hid_t type, void *v)
{
	hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
	herr_t rc;

	if (a < 0)
		return -1;
	rc = H5Aread(a, type, v);
	H5Aclose(a);
	return rc < 0 ? -1 : 0;
}

/* A variable-length UTF-8 string attribute, read by h5py as str. */
static inline herr_t h5a_string(hid_t obj, const char *name, const char *s)
{
	hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a;
	herr_t rc = -1;

	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		rc = H5Awrite(a, t, &s);
		H5Aclose(a);
	}
	H5Sclose(sp);
	H5Tclose(t);
	return rc;
}

/* A dataset of n variable-length UTF-8 strings, read by h5py as a list of str. */
static inline herr_t h5_names(hid_t file, const char *name, const char **s, hsize_t n)
{
	hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate_simple(1, &n, NULL), d;
	herr_t rc = -1;

	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	d = H5Dcreate2(file, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (d >= 0) {
		rc = H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s);
		H5Dclose(d);
	}
	H5Sclose(sp);
	H5Tclose(t);
	return rc;
}

/* String attribute name of loc (fixed or variable length) into out, len bytes; 0, or -1
 * when absent or unreadable. */
static inline int h5a_get_string(hid_t loc, const char *name, char *out, size_t len)
{
	hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t;
	int rc = -1;

	if (a < 0)
		return -1;
	t = H5Aget_type(a);
	if (H5Tis_variable_str(t) > 0) {
		char *s = NULL;
		hid_t mt = H5Tcopy(H5T_C_S1);

		H5Tset_size(mt, H5T_VARIABLE);
		H5Tset_cset(mt, H5Tget_cset(t));	/* no conversion between ASCII and UTF-8 */
		if (H5Aread(a, mt, &s) >= 0 && s) {
			snprintf(out, len, "%s", s);
			H5free_memory(s);
			rc = 0;
		}
		H5Tclose(mt);
	} else {
		size_t n = H5Tget_size(t);
		char *s = calloc(n + 1, 1);

		if (s && H5Aread(a, t, s) >= 0) {
			snprintf(out, len, "%s", s);
			rc = 0;
		}
		free(s);
	}
	H5Tclose(t);
	H5Aclose(a);
	return rc;
}

/* A file access list whose attributes may exceed 64 KiB (dense attribute storage). */
static inline hid_t h5a_fapl(void)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
	return fapl;
}

/* Dataset name of native type `type` with the given dims under loc, chunked and compressed
 * when chunk is not NULL; a negative value on failure. */
static inline herr_t h5_put(hid_t file, const char *name, hid_t type, int rank,
			    const hsize_t *dims, const hsize_t *chunk, const void *v)
{
	hid_t sp = H5Screate_simple(rank, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE), d;
	herr_t rc = -1;

	if (chunk) {
		H5Pset_chunk(pl, rank, chunk);
		H5Pset_shuffle(pl);
		H5Pset_deflate(pl, 4);
	}
	d = H5Dcreate2(file, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
	if (d >= 0) {
		rc = H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
		H5Dclose(d);
	}
	H5Pclose(pl);
	H5Sclose(sp);
	return rc;
}

static inline herr_t h5_put_doubles(hid_t file, const char *name, int rank, const hsize_t *dims,
				    const hsize_t *chunk, const double *v)
{
	return h5_put(file, name, H5T_NATIVE_DOUBLE, rank, dims, chunk, v);
}

/* Close f, written as tmp with rc the writes' result, and rename it onto path; tmp is removed
 * on failure. 0, or RS_EIO naming the file. */
static inline int h5_finish(hid_t f, herr_t rc, const char *tmp, const char *path,
			    struct rs_error *err)
{
	if (H5Fclose(f) < 0 || rc < 0) {
		/* HDF5 keeps errno from the write(2) that failed, the reason a user can act on */
		const int e = errno == ENOSPC || errno == EDQUOT || errno == EIO || errno == EFBIG
				      ? errno : 0;

		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: writing the HDF5 file failed%s%s", path,
			       e ? ": " : "", e ? strerror(e) : "");
	}
	if (rename(tmp, path)) {
		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: cannot rename into place: %s", path,
			       strerror(errno));
	}
	return 0;
}

#endif
