/*
 * voxfile.c - write and read voxel grids in HDF5 (voxfile.h; docs/output.md, "Voxel files").
 *
 * The per-cell arrays are written and read one z-slab at a time, so a grid of 10^9 cells
 * needs no second copy in memory.
 */
#include "voxfile.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5attr.h"

#define FLAG_SOLID 0
#define FLAG_AIR 1
#define FLAG_BOUNDARY 2
#define NO_MATERIAL 255

struct voxf_walls {
	uint64_t *cell;		/* room-cell index i + nx (j + ny k), ascending */
	uint8_t (*material)[6];	/* the file's material indices */
	float (*area)[6];
	size_t n;
	int nx, ny;
	const int *map;		/* the file's material index to the room's */
	int fallback;		/* the room's default material */
};

static void voxf_walls_free(struct voxf_walls *w);

/* A chunked, compressed dataset of rank 3 or 1 and type t. */
static hid_t create(hid_t f, const char *name, hid_t t, int rank, const hsize_t *dims,
		    const hsize_t *chunk)
{
	hid_t sp = H5Screate_simple(rank, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE), d;

	if (chunk) {
		H5Pset_chunk(pl, rank, chunk);
		H5Pset_deflate(pl, 1);	/* flags compress well at any level; 1 is fastest */
	}
	d = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
	H5Pclose(pl);
	H5Sclose(sp);
	return d;
}

/* Write (or read) z-slab k (count[0] = 1) of a rank-3 dataset from (into) buf. */
static herr_t slab_io(hid_t d, hid_t t, int k, const hsize_t *dims, void *buf, int write)
{
	hsize_t start[3] = { (hsize_t)k, 0, 0 }, count[3] = { 1, dims[1], dims[2] };
	hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, count, NULL);
	herr_t rc;

	H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
	rc = write ? H5Dwrite(d, t, ms, fs, H5P_DEFAULT, buf)
		   : H5Dread(d, t, ms, fs, H5P_DEFAULT, buf);
	H5Sclose(ms);
	H5Sclose(fs);
	return rc;
}

/* flags, material, kstart/kstop of the room cells, slab by slab. */
static herr_t write_cells(hid_t f, const struct vox_grid *g)
{
	const struct vox_plan *p = &g->plan;
	const int nx = p->room[0], ny = p->room[1], nz = p->room[2], h = p->halo;
	hsize_t dims[3] = { (hsize_t)nz, (hsize_t)ny, (hsize_t)nx }, chunk[3] = { 1, dims[1], dims[2] };
	uint8_t *flags = malloc((size_t)nx * ny), *mat = malloc((size_t)nx * ny);
	int32_t *col = malloc(2 * sizeof(int32_t) * (size_t)nx * ny);
	hid_t df = create(f, "flags", H5T_NATIVE_UINT8, 3, dims, chunk);
	hid_t dm = create(f, "material", H5T_NATIVE_UINT8, 3, dims, chunk);
	herr_t rc = flags && mat && col && df >= 0 && dm >= 0 ? 0 : -1;
	size_t w = 0;

	for (int k = 0; k < nz && !rc; k++) {
		for (int j = 0; j < ny; j++)
			for (int i = 0; i < nx; i++) {
				const size_t n = vox_index(p, i + h, j + h, k + h), at = i + (size_t)nx * j;

				flags[at] = g->cls[n] == VOX_PAD ? FLAG_SOLID : FLAG_AIR;
				mat[at] = NO_MATERIAL;
				while (w < g->nwalls && g->walls[w].cell < n)
					w++;
				if (w == g->nwalls || g->walls[w].cell != n)
					continue;
				flags[at] = FLAG_BOUNDARY;
				for (int q = 0; q < 6 && mat[at] == NO_MATERIAL; q++)
					if (g->walls[w].material[q] != VOX_NO_WALL)
						mat[at] = g->walls[w].material[q];
			}
		rc = slab_io(df, H5T_NATIVE_UINT8, k, dims, flags, 1) < 0 ||
		     slab_io(dm, H5T_NATIVE_UINT8, k, dims, mat, 1) < 0;
	}
	if (!rc) {	/* per-column start/stop heights in room cells: stop < start when empty */
		hsize_t d2[2] = { (hsize_t)ny, (hsize_t)nx };
		hid_t ds, dt;

		for (int j = 0; j < ny; j++)
			for (int i = 0; i < nx; i++) {
				const size_t c = (size_t)(i + h) + (size_t)p->n[0] * (size_t)(j + h);

				col[i + (size_t)nx * j] = g->kstart[c] - h;
				col[(size_t)nx * ny + i + (size_t)nx * j] = g->kstop[c] - h;
			}
		ds = create(f, "kstart", H5T_NATIVE_INT32, 2, d2, NULL);
		dt = create(f, "kstop", H5T_NATIVE_INT32, 2, d2, NULL);
		rc = ds < 0 || dt < 0 ||
		     H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, col) < 0 ||
		     H5Dwrite(dt, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT,
			      col + (size_t)nx * ny) < 0;
		H5Dclose(ds);
		H5Dclose(dt);
	}
	H5Dclose(df);
	H5Dclose(dm);
	free(flags);
	free(mat);
	free(col);
	return rc ? -1 : 0;
}

/* walls/cell, walls/material, walls/area. */
static herr_t write_walls(hid_t f, const struct vox_grid *g)
{
	const struct vox_plan *p = &g->plan;
	const size_t n = g->nwalls;
	hsize_t d1 = n, d2[2] = { n, 6 }, c1 = n < 65536 ? (n ? n : 1) : 65536, c2[2] = { c1, 6 };
	uint64_t *cell = malloc((n + 1) * sizeof(*cell));
	uint8_t *mat = malloc((n + 1) * 6);
	float *area = malloc((n + 1) * 6 * sizeof(float));
	hid_t grp = H5Gcreate2(f, "walls", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), dc, dm, da;
	herr_t rc = -1;

	if (!cell || !mat || !area || grp < 0)
		goto out;
	for (size_t w = 0; w < n; w++) {
		size_t c = g->walls[w].cell;
		const int i = (int)(c % (size_t)p->n[0]) - p->halo;
		const int j = (int)(c / (size_t)p->n[0] % (size_t)p->n[1]) - p->halo;
		const int k = (int)(c / ((size_t)p->n[0] * (size_t)p->n[1])) - p->halo;

		cell[w] = (uint64_t)i + (uint64_t)p->room[0] * ((uint64_t)j + (uint64_t)p->room[1] * k);
		memcpy(mat + 6 * w, g->walls[w].material, 6);
		memcpy(area + 6 * w, g->walls[w].area, 6 * sizeof(float));
	}
	dc = create(grp, "cell", H5T_NATIVE_UINT64, 1, &d1, n ? &c1 : NULL);
	dm = create(grp, "material", H5T_NATIVE_UINT8, 2, d2, n ? c2 : NULL);
	da = create(grp, "area", H5T_NATIVE_FLOAT, 2, d2, n ? c2 : NULL);
	rc = dc < 0 || dm < 0 || da < 0 ||
	     (n && (H5Dwrite(dc, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, cell) < 0 ||
		    H5Dwrite(dm, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, mat) < 0 ||
		    H5Dwrite(da, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, area) < 0)) ? -1 : 0;
	H5Dclose(dc);
	H5Dclose(dm);
	H5Dclose(da);
out:
	if (grp >= 0)
		H5Gclose(grp);
	free(cell);
	free(mat);
	free(area);
	return rc;
}

int voxf_write(const char *path, const struct vox_grid *g, const struct room *room,
	       struct rs_error *err)
{
	const struct vox_plan *p = &g->plan;
	const char *names[ROOM_MAX_MATERIALS];
	double cells[3] = { p->room[0], p->room[1], p->room[2] };
	char tmp[ROOM_PATH_MAX + 8];
	hid_t fapl = h5a_fapl(), f;
	herr_t rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);	/* failures are reported as our errors */
	f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (f < 0)
		return rs_fail(err, RS_EIO, "%s: cannot create the voxel file", tmp);
	for (int i = 0; i < room->nmaterials; i++)
		names[i] = room->materials[i].name;
	rc |= h5a_string(f, "format", VOXF_FORMAT);
	rc |= h5a_long(f, "version", VOXF_VERSION);
	rc |= h5a_string(f, "roomsim_version", ROOMSIM_VERSION);
	rc |= h5a_string(f, "room_file", room->file);
	rc |= h5a_string(f, "mesh", room->geo.mesh_path);
	rc |= h5a_double(f, "spacing", p->h);
	rc |= h5a_doubles(f, "origin", room->origin, 3);
	rc |= h5a_doubles(f, "cells", cells, 3);
	rc |= h5_names(f, "material_names", names, (hsize_t)room->nmaterials);
	if (!rc)
		rc = write_cells(f, g);
	if (!rc)
		rc = write_walls(f, g);
	if (H5Fclose(f) < 0)
		rc = -1;
	if (rc || rename(tmp, path)) {
		remove(tmp);
		return rs_fail(err, RS_EIO, "%s: writing the voxel file failed", path);
	}
	return 0;
}

/* A double attribute array of n values, -1 when missing or of another size. */
static int get_doubles(hid_t f, const char *name, double *v, int n)
{
	hid_t a, sp;
	int ok;

	if (H5Aexists(f, name) <= 0 || (a = H5Aopen(f, name, H5P_DEFAULT)) < 0)
		return -1;
	sp = H5Aget_space(a);
	ok = H5Sget_simple_extent_npoints(sp) == n &&
	     H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
	H5Sclose(sp);
	H5Aclose(a);
	return ok ? 0 : -1;
}

static int read_names(hid_t f, struct voxf_info *info)
{
	hid_t d = H5Dopen2(f, "material_names", H5P_DEFAULT), t, sp;
	char *s[ROOM_MAX_MATERIALS];
	hssize_t n;
	int rc = -1;

	if (d < 0)
		return -1;
	sp = H5Dget_space(d);
	n = H5Sget_simple_extent_npoints(sp);
	t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	if (n >= 0 && n <= ROOM_MAX_MATERIALS &&
	    H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0) {
		info->nnames = (int)n;
		for (int i = 0; i < (int)n; i++)
			snprintf(info->names[i], ROOM_NAME_MAX, "%s", s[i]);
		H5Dvlen_reclaim(t, sp, H5P_DEFAULT, s);
		rc = 0;
	}
	H5Tclose(t);
	H5Sclose(sp);
	H5Dclose(d);
	return rc;
}

int voxf_info(const char *path, struct voxf_info *info, struct rs_error *err)
{
	double cells[3];
	hid_t f;
	int rc = 0;

	memset(info, 0, sizeof(*info));
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);	/* a bad file is our error, not HDF5's dump */
	if (H5Fis_hdf5(path) <= 0 ||
	    (f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
		return rs_fail(err, RS_EINPUT, "cannot open it as HDF5");
	if (get_doubles(f, "spacing", &info->h, 1) || get_doubles(f, "origin", info->origin, 3) ||
	    get_doubles(f, "cells", cells, 3) || read_names(f, info) ||
	    H5Lexists(f, "flags", H5P_DEFAULT) <= 0 || H5Lexists(f, "walls", H5P_DEFAULT) <= 0)
		rc = rs_fail(err, RS_EINPUT, "it is not a voxel file of `roomsim voxelize` "
			     "(missing spacing, origin, cells, material_names, flags or walls)");
	for (int d = 0; d < 3 && !rc; d++) {
		info->cells[d] = (int)cells[d];
		if (info->cells[d] < 2 || info->h <= 0)
			rc = rs_fail(err, RS_EINPUT, "its grid is empty or has no spacing");
	}
	H5Fclose(f);
	return rc;
}

/* Read dataset name of n rows of `bytes` bytes (values of type t) into a new buffer. */
static void *read_all(hid_t g, const char *name, hid_t t, size_t n, size_t bytes)
{
	hid_t d = H5Dopen2(g, name, H5P_DEFAULT), sp;
	void *buf = malloc(n * bytes + 1);
	size_t size = (size_t)H5Tget_size(t);
	hssize_t points;

	if (d < 0 || !buf)
		goto fail;
	sp = H5Dget_space(d);
	points = H5Sget_simple_extent_npoints(sp);
	H5Sclose(sp);
	if (points < 0 || (size_t)points * size != n * bytes)
		goto fail;	/* not the shape the walls group has */
	if (n && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
		goto fail;
	H5Dclose(d);
	return buf;
fail:
	if (d >= 0)
		H5Dclose(d);
	free(buf);
	return NULL;
}

/* The walls group: its size from walls/cell. */
static struct voxf_walls *read_walls(hid_t f, const struct room *room, const int *cells)
{
	struct voxf_walls *w = calloc(1, sizeof(*w));
	hid_t g = H5Gopen2(f, "walls", H5P_DEFAULT), d, sp;

	if (!w || g < 0)
		goto fail;
	d = H5Dopen2(g, "cell", H5P_DEFAULT);
	sp = d >= 0 ? H5Dget_space(d) : -1;
	w->n = sp >= 0 ? (size_t)H5Sget_simple_extent_npoints(sp) : 0;
	if (sp >= 0)
		H5Sclose(sp);
	if (d >= 0)
		H5Dclose(d);
	w->cell = read_all(g, "cell", H5T_NATIVE_UINT64, w->n, sizeof(uint64_t));
	w->material = read_all(g, "material", H5T_NATIVE_UINT8, w->n, 6);
	w->area = read_all(g, "area", H5T_NATIVE_FLOAT, w->n, 6 * sizeof(float));
	if (!w->cell || !w->material || !w->area)
		goto fail;
	w->nx = cells[0];
	w->ny = cells[1];
	w->map = room->geo.voxel_material;
	w->fallback = room->geo.default_material;
	H5Gclose(g);
	return w;
fail:
	if (g >= 0)
		H5Gclose(g);
	voxf_walls_free(w);
	return NULL;
}

/* An open voxel file as geometry reads it (struct room_voxel_file). */
struct voxf_file {
	hid_t f, flags;
	hsize_t dims[3];	/* the flags' z, y, x */
	struct voxf_walls *walls;
};

static void file_close(void *file)
{
	struct voxf_file *vf = file;

	if (!vf)
		return;
	if (vf->flags >= 0)
		H5Dclose(vf->flags);
	if (vf->f >= 0)
		H5Fclose(vf->f);
	voxf_walls_free(vf->walls);
	free(vf);
}

static void *file_open(const struct room *room, struct rs_error *err)
{
	struct voxf_file *vf = calloc(1, sizeof(*vf));
	struct voxf_info info;

	if (!vf) {
		rs_fail(err, RS_ENOMEM, "out of memory");
		return NULL;
	}
	vf->f = vf->flags = -1;
	if (voxf_info(room->geo.voxels_path, &info, err))
		goto fail;
	for (int d = 0; d < 3; d++)
		vf->dims[2 - d] = (hsize_t)info.cells[d];
	vf->f = H5Fopen(room->geo.voxels_path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (vf->f < 0 || (vf->flags = H5Dopen2(vf->f, "flags", H5P_DEFAULT)) < 0 ||
	    !(vf->walls = read_walls(vf->f, room, info.cells))) {
		rs_fail(err, RS_EIO, "%s: reading the voxel file failed", room->geo.voxels_path);
		goto fail;
	}
	return vf;
fail:
	file_close(vf);
	return NULL;
}

static int file_slab(void *file, int k, uint8_t *air)
{
	struct voxf_file *vf = file;
	const size_t n = (size_t)vf->dims[1] * vf->dims[2];

	if (slab_io(vf->flags, H5T_NATIVE_UINT8, k, vf->dims, air, 0) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		air[i] = air[i] != FLAG_SOLID;
	return 0;
}

static void file_wall_of(const void *file, const int c[3], int f, uint8_t *material, float *area)
{
	const struct voxf_walls *w = ((const struct voxf_file *)file)->walls;
	const uint64_t key = (uint64_t)c[0] + (uint64_t)w->nx * ((uint64_t)c[1] +
				(uint64_t)w->ny * (uint64_t)c[2]);
	size_t lo = 0, hi = w->n;

	*material = (uint8_t)w->fallback;
	*area = 1;
	while (lo < hi) {	/* the first wall at or after key */
		size_t mid = lo + (hi - lo) / 2;

		if (w->cell[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == w->n || w->cell[lo] != key || w->material[lo][f] == NO_MATERIAL)
		return;
	*material = (uint8_t)w->map[w->material[lo][f]];
	*area = w->area[lo][f];
}


static void voxf_walls_free(struct voxf_walls *w)
{
	if (!w)
		return;
	free(w->cell);
	free(w->material);
	free(w->area);
	free(w);
}

const struct room_voxel_file voxf_reader = {
	.open = file_open, .slab = file_slab, .wall_of = file_wall_of, .close = file_close,
};
