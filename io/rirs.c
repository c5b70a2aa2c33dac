/* rirs.c - write rirs.h5 with HDF5. */
#include "rirs.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5attr.h"

#ifndef ROOMSIM_VERSION
#define ROOMSIM_VERSION "unknown"
#endif

/* A chunked, compressed dataset of doubles with the given dims. */
static herr_t put(hid_t file, const char *name, int rank, const hsize_t *dims,
		  const hsize_t *chunk, const double *v)
{
	hid_t sp = H5Screate_simple(rank, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE), d;
	herr_t rc = -1;

	if (chunk) {
		H5Pset_chunk(pl, rank, chunk);
		H5Pset_shuffle(pl);
		H5Pset_deflate(pl, 4);
	}
	d = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
	if (d >= 0) {
		rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
		H5Dclose(d);
	}
	H5Pclose(pl);
	H5Sclose(sp);
	return rc;
}

static herr_t put_meta(hid_t f, const struct rirs_run *run)
{
	const struct room *r = run->room;
	const struct vox_plan *p = run->plan;
	double n[3] = { p->n[0], p->n[1], p->n[2] };
	herr_t rc = 0;

	rc |= h5a_string(f, "roomsim_version", ROOMSIM_VERSION);
	rc |= h5a_string(f, "name", r->name);
	rc |= h5a_string(f, "engine", run->engine);
	rc |= h5a_string(f, "scheme", run->scheme);
	rc |= h5a_string(f, "precision", r->precision == 4 ? "float32" : "float64");
	rc |= h5a_double(f, "c", r->c);
	rc |= h5a_double(f, "rho", r->rho);
	rc |= h5a_double(f, "temperature", r->temperature);
	rc |= h5a_double(f, "humidity", r->humidity);
	rc |= h5a_double(f, "pressure", r->pressure);
	rc |= h5a_string(f, "air_absorption", r->air_absorption ? "rir_air" : "off");
	rc |= h5a_double(f, "fmax", r->fmax);
	rc |= h5a_double(f, "spacing", p->h);
	rc |= h5a_double(f, "time_step", run->dt);
	rc |= h5a_double(f, "sample_rate", 1 / run->dt);
	rc |= h5a_double(f, "courant", r->courant);
	rc |= h5a_double(f, "lambda", run->lambda);
	rc |= h5a_double(f, "duration", r->duration);
	rc |= h5a_doubles(f, "box", r->box, 3);
	rc |= h5a_doubles(f, "effective_box", p->size, 3);
	rc |= h5a_doubles(f, "grid_cells", n, 3);
	rc |= h5a_string(f, "units", "rir: Pa for a source of 1 Pa at 1 m in free field");
	return rc;
}

static herr_t put_points(hid_t f, const struct rirs_run *run)
{
	const struct room *r = run->room;
	int ns = r->nsources, nr = r->nreceivers, nm = r->nmaterials;
	const char **names = malloc(sizeof(char *) * (size_t)(ns + nr + nm + ROOM_NFACES));
	double *pos = malloc(sizeof(double) * 3 * (size_t)(ns + nr + 2 * nm));
	hsize_t d2[2];
	herr_t rc = -1;

	if (!names || !pos)
		goto out;
	for (int i = 0; i < ns; i++) {
		names[i] = r->sources[i].name;
		memcpy(pos + 3 * i, r->sources[i].pos, sizeof(double) * 3);
	}
	for (int i = 0; i < nr; i++) {
		names[ns + i] = r->receivers[i].name;
		memcpy(pos + 3 * (ns + i), r->receivers[i].pos, sizeof(double) * 3);
	}
	d2[1] = 3;
	d2[0] = (hsize_t)ns;
	rc = h5_names(f, "source_names", names, (hsize_t)ns);
	rc |= put(f, "source_positions", 2, d2, NULL, pos);
	d2[0] = (hsize_t)nr;
	rc |= h5_names(f, "receiver_names", names + ns, (hsize_t)nr);
	rc |= put(f, "receiver_positions", 2, d2, NULL, pos + 3 * ns);
	for (int i = 0; i < nm; i++) {
		names[ns + nr + i] = r->materials[i].name;
		pos[3 * (ns + nr) + i] = r->materials[i].beta;
		pos[3 * (ns + nr) + nm + i] = r->materials[i].absorption;
	}
	rc |= h5_names(f, "material_names", names + ns + nr, (hsize_t)nm);
	d2[0] = (hsize_t)nm;
	rc |= put(f, "material_admittance", 1, d2, NULL, pos + 3 * (ns + nr));
	rc |= put(f, "material_absorption", 1, d2, NULL, pos + 3 * (ns + nr) + nm);
	if (r->geo.has_box) {	/* the box's faces; a mesh's parts are in the voxel file */
		for (int i = 0; i < ROOM_NFACES; i++)
			names[ns + nr + nm + i] = r->materials[r->face_material[i]].name;
		rc |= h5_names(f, "surface_materials", names + ns + nr + nm, ROOM_NFACES);
		rc |= h5_names(f, "surface_faces", (const char **)room_face_names, ROOM_NFACES);
	}
out:
	free(names);
	free(pos);
	return rc;
}

int rirs_write(const char *path, const struct rirs_run *run, struct rs_error *err)
{
	const struct room *r = run->room;
	hsize_t dims[3] = { (hsize_t)r->nsources, (hsize_t)r->nreceivers, run->nsamples };
	hsize_t chunk[3] = { 1, 1, run->nsamples < 65536 ? run->nsamples : 65536 };
	hsize_t ns = (hsize_t)r->nsources;
	double *done = malloc(sizeof(double) * (size_t)r->nsources);
	char tmp[ROOM_PATH_MAX + 8];
	hid_t fapl = h5a_fapl(), f;
	herr_t rc;

	if (!done)
		return rs_fail(err, RS_ENOMEM, "out of memory writing %s", path);
	for (int i = 0; i < r->nsources; i++)
		done[i] = (double)run->completed[i];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f < 0) {
		free(done);
		return rs_fail(err, RS_EIO, "%s: cannot create the HDF5 file", tmp);
	}
	rc = put_meta(f, run);
	rc |= put(f, "rir", 3, dims, chunk, run->signals);
	if (run->air)
		rc |= put(f, "rir_air", 3, dims, chunk, run->air);
	rc |= put(f, "completed_steps", 1, &ns, NULL, done);
	rc |= put_points(f, run);
	free(done);
	if (H5Fclose(f) < 0 || rc < 0) {
		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: writing the HDF5 file failed", tmp);
	}
	if (rename(tmp, path)) {
		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: cannot rename into place: %s", path,
			       strerror(errno));
	}
	return 0;
}
