/* rirs.c - write rirs.h5 with HDF5, and read it back. */
#include "rirs.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5attr.h"

#ifndef ROOMSIM_VERSION
#define ROOMSIM_VERSION "unknown"
#endif

static herr_t put_meta(hid_t f, const struct rirs_run *run)
{
	const struct room *r = run->room;
	const struct vox_plan *p = run->plan;
	const char axis[2] = { (char)('x' + p->slab), 0 };
	double n[3] = { p->n[0], p->n[1], p->n[2] }, size[3];
	herr_t rc = 0;

	vox_to_room(p, n, n);	/* in the room's axes */
	vox_to_room(p, p->size, size);
	rc |= h5a_string(f, "roomsim_version", ROOMSIM_VERSION);
	rc |= h5a_string(f, "name", r->name);
	rc |= h5a_string(f, "engine", run->engine);
	rc |= h5a_string(f, "scheme", run->scheme);
	rc |= h5a_string(f, "walls", r->fitted ? "fitted" : "staircase");
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
	rc |= h5a_doubles(f, "effective_box", size, 3);
	rc |= h5a_doubles(f, "grid_cells", n, 3);
	rc |= h5a_string(f, "slab_axis", axis);
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
	rc |= h5_put_doubles(f, "source_positions", 2, d2, NULL, pos);
	d2[0] = (hsize_t)nr;
	rc |= h5_names(f, "receiver_names", names + ns, (hsize_t)nr);
	rc |= h5_put_doubles(f, "receiver_positions", 2, d2, NULL, pos + 3 * ns);
	for (int i = 0; i < nm; i++) {
		names[ns + nr + i] = r->materials[i].name;
		pos[3 * (ns + nr) + i] = r->materials[i].beta;
		pos[3 * (ns + nr) + nm + i] = r->materials[i].absorption;
	}
	rc |= h5_names(f, "material_names", names + ns + nr, (hsize_t)nm);
	d2[0] = (hsize_t)nm;
	rc |= h5_put_doubles(f, "material_admittance", 1, d2, NULL, pos + 3 * (ns + nr));
	rc |= h5_put_doubles(f, "material_absorption", 1, d2, NULL, pos + 3 * (ns + nr) + nm);
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
	errno = 0;	/* h5_finish names a failed write's reason */
	f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f < 0) {
		free(done);
		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: cannot create the HDF5 file: %s", path,
			       strerror(errno));
	}
	rc = put_meta(f, run);
	rc |= h5_put_doubles(f, "rir", 3, dims, chunk, run->signals);
	if (run->air)
		rc |= h5_put_doubles(f, "rir_air", 3, dims, chunk, run->air);
	if (run->source) {
		const hsize_t d2[2] = { dims[0], dims[2] }, c2[2] = { 1, chunk[2] };

		rc |= h5_put_doubles(f, "source_signal", 2, d2, c2, run->source);
	}
	if (run->volume > 0 && run->area && run->band_alpha) {
		const hsize_t nm = (hsize_t)r->nmaterials, d2[2] = { nm, RIRS_BANDS };
		const hsize_t nb = RIRS_BANDS;
		double fm[RIRS_BANDS];

		for (int k = 0; k < RIRS_BANDS; k++)
			fm[k] = 1000 * pow(10, 0.1 * (k - 13));
		rc |= h5a_double(f, "air_volume", run->volume);
		rc |= h5_put_doubles(f, "material_area", 1, &nm, NULL, run->area);
		rc |= h5_put_doubles(f, "absorption_bands", 1, &nb, NULL, fm);
		rc |= h5_put_doubles(f, "material_band_absorption", 2, d2, NULL, run->band_alpha);
	}
	if (run->geo) {
		const struct room_hybrid *hy = &r->hybrid;
		const hsize_t df[3] = { dims[0], dims[1], run->nfull }, d2[2] = { dims[0], dims[1] };
		const hsize_t cf[3] = { 1, 1, run->nfull < 65536 ? run->nfull : 65536 };
		const hsize_t ds[2] = { dims[0], run->nfull }, cs[2] = { 1, cf[2] };
		double *cnt = malloc(sizeof(double) * (size_t)(ns * dims[1] + ns + 1));

		rc |= h5_put_doubles(f, "rir_geometric", 3, df, cf, run->geo);
		rc |= h5_put_doubles(f, "rir_full", 3, df, cf, run->full);
		rc |= h5_put_doubles(f, "source_signal_full", 2, ds, cs, run->source_full);
		rc |= h5a_double(f, "full_sample_rate", r->wav_rate);
		rc |= h5a_double(f, "hybrid_crossover", hy->crossover);
		rc |= h5a_double(f, "ga_rays", (double)hy->rays);
		rc |= h5a_double(f, "ga_image_order", hy->image_order);
		rc |= h5a_double(f, "ga_seed", (double)hy->seed);
		rc |= h5a_double(f, "ga_receiver_radius", hy->receiver_radius);
		if (!cnt) {
			rc = -1;
		} else {
			for (size_t i = 0; i < ns * dims[1]; i++)
				cnt[i] = (double)run->images[i];
			rc |= h5_put_doubles(f, "ga_images", 2, d2, NULL, cnt);
			for (hsize_t i = 0; i < ns; i++)
				cnt[i] = (double)run->escaped[i];
			rc |= h5_put_doubles(f, "ga_escaped_rays", 1, &ns, NULL, cnt);
			rc |= h5_put_doubles(f, "ga_reflections_per_ray", 1, &ns, NULL, run->reflections);
		}
		free(cnt);
	}
	rc |= h5_put_doubles(f, "completed_steps", 1, &ns, NULL, done);
	rc |= put_points(f, run);
	if (run->ngrids) {
		const char *src[ROOM_MAX_POINTS];
		int n = 0;

		for (int i = 0; i < r->nsources; i++)
			if (run->completed[i] > 0)
				src[n++] = r->sources[i].name;
		rc |= gridf_describe(f, run->grids, run->ngrids, src, n);
	}
	free(done);
	return h5_finish(f, rc, tmp, path, err);
}

/* ---- reading ------------------------------------------------------------------------- */

/* Dataset name's values as doubles into a new array of *n (its element count). */
static double *read_doubles(hid_t f, const char *name, hsize_t *dims, int rank)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp;
	double *v = NULL;
	size_t n = 1;

	if (d < 0)
		return NULL;
	sp = H5Dget_space(d);
	if (H5Sget_simple_extent_ndims(sp) == rank && H5Sget_simple_extent_dims(sp, dims, NULL) >= 0) {
		for (int i = 0; i < rank; i++)
			n *= dims[i];
		v = malloc((n ? n : 1) * sizeof(double));
		if (v && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
			free(v);
			v = NULL;
		}
	}
	H5Sclose(sp);
	H5Dclose(d);
	return v;
}

/* A dataset of n variable-length strings into out (64 bytes each, cut). */
static int read_names(hid_t f, const char *name, char (*out)[64], int n)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT), t, sp;
	char **s = calloc((size_t)(n ? n : 1), sizeof(char *));
	int rc = -1;

	if (d < 0 || !s) {
		if (d >= 0)
			H5Dclose(d);
		free(s);
		return -1;
	}
	t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	sp = H5Dget_space(d);
	if (H5Sget_simple_extent_npoints(sp) == n &&
	    H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0) {
		for (int i = 0; i < n; i++)
			snprintf(out[i], 64, "%s", s[i] ? s[i] : "");
		H5Dvlen_reclaim(t, sp, H5P_DEFAULT, s);
		rc = 0;
	}
	H5Sclose(sp);
	H5Tclose(t);
	H5Dclose(d);
	free(s);
	return rc;
}

int rirs_read(const char *path, struct rirs_data *d, struct rs_error *err)
{
	return rirs_read_part(path, RIRS_JOINED, d, err);
}

int rirs_read_part(const char *path, enum rirs_part part, struct rirs_data *d,
		   struct rs_error *err)
{
	const char *full_name;
	hsize_t dims[3], sd[2], cd[1];
	double *done, full_fs = 0, sim_fs;
	hid_t f;

	memset(d, 0, sizeof(*d));
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return rs_fail(err, RS_EIO, "%s: cannot open it as HDF5 (valid: a rirs.h5 that "
			       "roomsim run wrote)", path);
	d->air = H5Lexists(f, "rir_air", H5P_DEFAULT) > 0;
	full_name = part == RIRS_GEOMETRIC ? "rir_geometric" : "rir_full";
	d->full = part != RIRS_WAVE && H5Lexists(f, full_name, H5P_DEFAULT) > 0;
	if (part == RIRS_GEOMETRIC && !d->full) {
		H5Fclose(f);
		return rs_fail(err, RS_EINPUT, "%s: no geometric part (valid: the rirs.h5 of a "
			       "hybrid run, whose room has a hybrid section)", path);
	}
	d->signals = read_doubles(f, d->full ? full_name : d->air ? "rir_air" : "rir", dims, 3);
	if (!d->signals || h5a_get(f, "sample_rate", H5T_NATIVE_DOUBLE, &d->fs) ||
	    h5a_get(f, "fmax", H5T_NATIVE_DOUBLE, &d->fmax) ||
	    (d->full && h5a_get(f, "full_sample_rate", H5T_NATIVE_DOUBLE, &full_fs))) {
		H5Fclose(f);
		rirs_free(d);
		return rs_fail(err, RS_EINPUT, "%s: no rir dataset with its sample_rate and fmax "
			       "(valid: a rirs.h5 that roomsim run wrote)", path);
	}
	d->nsources = (int)dims[0];
	d->nreceivers = (int)dims[1];
	d->nsamples = (size_t)dims[2];
	sim_fs = d->fs;
	if (d->full) {	/* the whole band: the WAV rate's, up to the analysis's margin */
		d->fs = full_fs;
		d->fmax = 0.45 * full_fs;
	}
	d->source_names = calloc((size_t)d->nsources + 1, 64);
	d->receiver_names = calloc((size_t)d->nreceivers + 1, 64);
	d->completed = calloc((size_t)d->nsources + 1, sizeof(long));
	if (!d->source_names || !d->receiver_names || !d->completed ||
	    read_names(f, "source_names", d->source_names, d->nsources) ||
	    read_names(f, "receiver_names", d->receiver_names, d->nreceivers)) {
		H5Fclose(f);
		rirs_free(d);
		return rs_fail(err, RS_EINPUT, "%s: its source and receiver names cannot be read",
			       path);
	}
	if ((done = read_doubles(f, "completed_steps", cd, 1)) && cd[0] == (hsize_t)d->nsources)
		for (int s = 0; s < d->nsources; s++)	/* steps, as samples at fs */
			d->completed[s] = d->full ? (long)floor(done[s] * d->fs / sim_fs) :
				(long)done[s];
	else
		for (int s = 0; s < d->nsources; s++)
			d->completed[s] = (long)d->nsamples - 1;
	free(done);
	h5a_get(f, "c", H5T_NATIVE_DOUBLE, &d->c);
	h5a_get(f, "temperature", H5T_NATIVE_DOUBLE, &d->medium[0]);
	h5a_get(f, "humidity", H5T_NATIVE_DOUBLE, &d->medium[1]);
	h5a_get(f, "pressure", H5T_NATIVE_DOUBLE, &d->medium[2]);
	if (!h5a_get(f, "air_volume", H5T_NATIVE_DOUBLE, &d->volume)) {
		hsize_t na[1], nb[2];

		d->area = read_doubles(f, "material_area", na, 1);
		d->band_alpha = read_doubles(f, "material_band_absorption", nb, 2);
		d->nmaterials = d->area ? (int)na[0] : 0;
		if (!d->area || !d->band_alpha || nb[0] != na[0] || nb[1] != RIRS_BANDS)
			d->volume = 0;
	}
	d->source_pos = read_doubles(f, "source_positions", sd, 2);
	if (d->source_pos && (sd[0] != dims[0] || sd[1] != 3)) {
		free(d->source_pos);
		d->source_pos = NULL;
	}
	d->receiver_pos = read_doubles(f, "receiver_positions", sd, 2);
	if (d->receiver_pos && (sd[0] != dims[1] || sd[1] != 3)) {
		free(d->receiver_pos);
		d->receiver_pos = NULL;
	}
	if (H5Lexists(f, d->full ? "source_signal_full" : "source_signal", H5P_DEFAULT) > 0) {
		d->source = read_doubles(f, d->full ? "source_signal_full" : "source_signal", sd, 2);
		if (d->source && (sd[0] != dims[0] || sd[1] != dims[2])) {
			free(d->source);
			d->source = NULL;
		}
	}
	H5Fclose(f);
	return 0;
}

void rirs_free(struct rirs_data *d)
{
	free(d->source_names);
	free(d->receiver_names);
	free(d->source_pos);
	free(d->receiver_pos);
	free(d->signals);
	free(d->source);
	free(d->completed);
	free(d->area);
	free(d->band_alpha);
	memset(d, 0, sizeof(*d));
}
