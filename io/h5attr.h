/* h5attr.h - attribute helpers shared by io/rirs.c and io/snapshot.c (internal to io/). */
#ifndef IO_H5ATTR_H
#define IO_H5ATTR_H

#include <hdf5.h>
#include <string.h>

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

/* A file access list whose attributes may exceed 64 KiB (dense attribute storage). */
static inline hid_t h5a_fapl(void)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
	return fapl;
}

#endif
