/*
 * mesh.c - read triangle meshes through Assimp's C interface.
 *
 * Assimp is asked to triangulate polygons and to split meshes by primitive type, so every
 * face with three indices is a triangle; identical vertices are joined within each mesh.
 * Coordinates are taken as the file stores them (roomsim's z is up): COLLADA's up_axis is
 * not applied, so SketchUp's z-up exports arrive z-up. The node graph is walked here, rather than flattened by aiProcess_PreTransformVertices,
 * because that step merges meshes of one material and so loses the group and object names
 * a room file gives materials by.
 */
#include "mesh.h"

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MESH_NODES (MESH_PART_NAMES - 2)	/* node names kept per part: the rest of it is
						 * the mesh's and the material's name */
#define MESH_DEPTH_MAX 256	/* deeper node graphs are refused rather than recursed into */

struct walk {
	const struct aiScene *scene;
	struct mesh *m;
	int counting;		/* first pass: count vertices, triangles, parts only */
	size_t nv, ntri;
	size_t broken;		/* faces naming a vertex their mesh does not have */
	int nparts;
	const double (*xf)[4];
};

/* A triangle whose three vertices its mesh has (a damaged file may name others). */
static int triangle_ok(const struct aiMesh *am, const struct aiFace *face)
{
	if (face->mNumIndices != 3)
		return 0;
	for (int c = 0; c < 3; c++)
		if (face->mIndices[c] >= am->mNumVertices)
			return 0;
	return 1;
}

static int intern(struct mesh *m, const char *s)
{
	int i = mesh_name(m, s);

	if (i >= 0 || !*s)
		return i;
	snprintf(m->names[m->nnames], MESH_NAME_MAX, "%.*s", MESH_NAME_MAX - 1, s);
	return m->nnames++;
}

/* Apply the node's accumulated transform t (row-major, a1..d4), then the caller's map. */
static void place(const struct aiMatrix4x4 *t, const double (*xf)[4], struct aiVector3D p,
		  double out[3])
{
	const double x[3] = {
		t->a1 * p.x + t->a2 * p.y + t->a3 * p.z + t->a4,
		t->b1 * p.x + t->b2 * p.y + t->b3 * p.z + t->b4,
		t->c1 * p.x + t->c2 * p.y + t->c3 * p.z + t->c4,
	};

	for (int r = 0; r < 3; r++)
		out[r] = xf[r][0] * x[0] + xf[r][1] * x[1] + xf[r][2] * x[2] + xf[r][3];
}

/* One mesh placed by one node: its vertices, triangles and part. */
static void add_part(struct walk *w, const struct aiMesh *am, const struct aiMatrix4x4 *t,
		     const int *chain, int depth)
{
	struct mesh *m = w->m;
	size_t base = w->nv;
	int triangles = 0;

	for (unsigned f = 0; f < am->mNumFaces; f++) {
		triangles += triangle_ok(am, &am->mFaces[f]);
		w->broken += w->counting && am->mFaces[f].mNumIndices == 3 &&
			     !triangle_ok(am, &am->mFaces[f]);
	}
	if (!triangles)
		return;
	if (!w->counting) {
		struct mesh_part *p = &m->parts[w->nparts];
		struct aiString mat;
		int n;

		p->nnames = 0;
		p->material = -1;
		if ((n = intern(m, am->mName.data)) >= 0)
			p->names[p->nnames++] = n;
		for (int d = depth - 1; d >= 0 && p->nnames < 1 + MESH_NODES; d--)
			if (chain[d] >= 0)
				p->names[p->nnames++] = chain[d];
		if (aiGetMaterialString(w->scene->mMaterials[am->mMaterialIndex], AI_MATKEY_NAME,
					&mat) == aiReturn_SUCCESS && (n = intern(m, mat.data)) >= 0)
			p->names[p->nnames++] = n;
		for (unsigned i = 0; i < am->mNumVertices; i++)
			place(t, w->xf, am->mVertices[i], m->v[base + i]);
		for (unsigned f = 0; f < am->mNumFaces; f++) {
			const struct aiFace *face = &am->mFaces[f];

			if (!triangle_ok(am, face))
				continue;
			for (int c = 0; c < 3; c++)
				m->tri[w->ntri][c] = (uint32_t)(base + face->mIndices[c]);
			m->part[w->ntri++] = w->nparts;
		}
	} else {
		w->ntri += (size_t)triangles;
	}
	w->nv += am->mNumVertices;
	w->nparts++;
}

static int walk_node(struct walk *w, const struct aiNode *n, const struct aiMatrix4x4 *parent,
		     int *chain, int depth)
{
	struct aiMatrix4x4 t = *parent;

	if (depth >= MESH_DEPTH_MAX)
		return -1;
	aiMultiplyMatrix4(&t, &n->mTransformation);	/* t = parent * local */
	chain[depth] = w->counting ? -1 : intern(w->m, n->mName.data);
	for (unsigned i = 0; i < n->mNumMeshes; i++)
		add_part(w, w->scene->mMeshes[n->mMeshes[i]], &t, chain, depth + 1);
	for (unsigned i = 0; i < n->mNumChildren; i++)
		if (walk_node(w, n->mChildren[i], &t, chain, depth + 1))
			return -1;
	return 0;
}

/* Upper bound of the distinct names: meshes, nodes, materials. */
static int count_nodes(const struct aiNode *n)
{
	int c = 1;

	for (unsigned i = 0; i < n->mNumChildren; i++)
		c += count_nodes(n->mChildren[i]);
	return c;
}

/* Bytes of a PLY scalar type, 0 for an unknown one. */
static int ply_size(const char *t)
{
	static const struct {
		const char *name;
		int size;
	} types[] = { { "char", 1 },  { "uchar", 1 }, { "int8", 1 },	{ "uint8", 1 },
		      { "short", 2 }, { "ushort", 2 }, { "int16", 2 },	{ "uint16", 2 },
		      { "int", 4 },   { "uint", 4 },   { "int32", 4 },	{ "uint32", 4 },
		      { "float", 4 }, { "float32", 4 }, { "double", 8 }, { "float64", 8 } };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i].name))
			return types[i].size;
	return 0;
}

/*
 * A PLY file's header against its size: the elements it declares need at least so many
 * bytes (binary: their scalars and list counts; ASCII: two characters a value), and a file
 * shorter than that is refused before Assimp, which would otherwise allocate and parse for
 * minutes (a header declaring 10^8 vertices over one line of data). Other files pass.
 */
static int ply_check(const char *path, struct rs_error *err)
{
	FILE *f = fopen(path, "rb");
	char line[256], most[64] = "", fmt[32] = "";
	double need = 0, count = 0, per = 0, have, largest = 0;
	char element[64] = "";
	long header;
	int ascii = 1, ok = 1, xyz = 0, vertices = 0;

	if (!f)
		return 0;	/* Assimp says why */
	if (!fgets(line, sizeof(line), f) || strncmp(line, "ply", 3) || (line[3] != '\n' &&
									 line[3] != '\r')) {
		fclose(f);
		return 0;
	}
	while (ok && fgets(line, sizeof(line), f) && strncmp(line, "end_header", 10)) {
		char a[64], b[64], c[64], d[64];
		double n;

		if (sscanf(line, "format %31s", fmt) == 1) {
			ascii = !strcmp(fmt, "ascii");
		} else if (sscanf(line, "element %63s %lf", a, &n) == 2) {
			snprintf(element, sizeof(element), "%s", a);
			vertices |= !strcmp(a, "vertex");
			need += count * per;
			count = n;
			per = 0;
			if (n > largest) {
				largest = n;
				snprintf(most, sizeof(most), "%s", a);
			}
		} else if (sscanf(line, "property list %63s %63s %63s", a, b, c) == 3) {
			per += ascii ? 2 : ply_size(a);	/* an empty list: its count alone */
		} else if (sscanf(line, "property %63s %63s", d, a) == 2) {
			per += ascii ? 2 : ply_size(d);
			if (!strcmp(element, "vertex") && a[0] >= 'x' && a[0] <= 'z' && !a[1])
				xyz |= 1 << (a[0] - 'x');
		}
		if (!(count >= 0) || count > 1e15)
			ok = 0;
	}
	need += count * per;
	header = ftell(f);
	fseek(f, 0, SEEK_END);
	have = (double)(ftell(f) - header);
	fclose(f);
	if (vertices && xyz != 7)	/* Assimp would go on with vertices it never filled */
		return rs_fail(err, RS_EINPUT, "its PLY header gives the vertex element no %s "
			       "property (it needs x, y and z)",
			       !(xyz & 1) ? "x" : !(xyz & 2) ? "y" : "z");
	if (ok && need <= have + 1)
		return 0;
	return rs_fail(err, RS_EINPUT, "its PLY header declares %.0f %s elements and more, at "
		       "least %.0f bytes of %s data, but the file holds %.0f bytes after its header "
		       "(a truncated or damaged file)", largest, most, need, fmt, have);
}

/*
 * The time Assimp may take over a file: MESH_SECONDS plus MESH_SECONDS_PER_MB for each MB,
 * ten times what the slowest format here reads at (OBJ, about 1 MB/s in Assimp 5). It is
 * counted in the reading thread's processor time, which a loaded machine does not stretch,
 * and, for a reader that waits instead of computing, in MESH_WALL_FACTOR times as much
 * elapsed time. A reader past it is stopped with the whole process, the only way to stop a
 * library call that does not return: the message names the file, and nothing has been
 * written yet. A read that returns past it is refused the same way, so that the limit does
 * not depend on when the watchdog thread gets to run. ROOMSIM_MESH_SECONDS, when set, stands
 * in for MESH_SECONDS (the tests' late reader).
 */
#define MESH_SECONDS 30.0
#define MESH_SECONDS_PER_MB 10.0
#define MESH_WALL_FACTOR 10.0

struct watchdog {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	double seconds, mb;
	clockid_t cpu;		/* the reading thread's processor-time clock */
	double cpu0, wall0;	/* that clock and CLOCK_MONOTONIC at the start */
	const char *path;
};

static double clock_seconds(clockid_t c)
{
	struct timespec t;

	return clock_gettime(c, &t) ? 0 : (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Past its time? Called with w->mu held; when it is, says so and ends the process. */
static void check_late(const struct watchdog *w)
{
	const double t = fmax(w->seconds, 0);

	if (clock_seconds(w->cpu) - w->cpu0 <= t &&
	    clock_seconds(CLOCK_MONOTONIC) - w->wall0 <= MESH_WALL_FACTOR * t)
		return;
	fprintf(stderr, "roomsim: %s: the mesh reader did not finish within %.0f s for a file of "
		"%.1f MB, and was stopped (a damaged file? valid: a mesh Assimp reads, such as OBJ, "
		"STL, PLY, glTF, COLLADA)\n", w->path, t, w->mb);
	_exit(2);	/* RS_EINPUT's status: the input is at fault */
}

static void *watch(void *arg)
{
	struct watchdog *w = arg;
	struct timespec until;

	pthread_mutex_lock(&w->mu);
	while (!w->done) {
		check_late(w);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100000000L;	/* a look every 0.1 s */
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cv, &w->mu, &until);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static const struct aiScene *import_bounded(const char *path, unsigned flags,
					     const struct aiPropertyStore *props)
{
	struct watchdog w = { .path = path, .cpu = CLOCK_THREAD_CPUTIME_ID };
	const char *base = getenv("ROOMSIM_MESH_SECONDS");
	struct stat st;
	pthread_t t;
	const struct aiScene *s;
	int started;

	w.mb = stat(path, &st) ? 0 : (double)st.st_size / 1e6;
	w.seconds = (base && *base ? strtod(base, NULL) : MESH_SECONDS) + MESH_SECONDS_PER_MB * w.mb;
	pthread_getcpuclockid(pthread_self(), &w.cpu);
	w.cpu0 = clock_seconds(w.cpu);
	w.wall0 = clock_seconds(CLOCK_MONOTONIC);
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	started = !pthread_create(&t, NULL, watch, &w);
	s = aiImportFileExWithProperties(path, flags, NULL, props);
	pthread_mutex_lock(&w.mu);
	check_late(&w);
	w.done = 1;
	pthread_cond_signal(&w.cv);
	pthread_mutex_unlock(&w.mu);
	if (started)
		pthread_join(t, NULL);
	pthread_mutex_destroy(&w.mu);
	pthread_cond_destroy(&w.cv);
	return s;
}

int mesh_read(const char *path, const double xf[3][4], struct mesh *out, struct rs_error *err)
{
	/* ValidateDataStructure first: it refuses a scene whose faces name vertices that are
	 * not there, on which the other steps read out of bounds (a damaged PLY) */
	const unsigned flags = aiProcess_ValidateDataStructure | aiProcess_Triangulate |
			       aiProcess_SortByPType | aiProcess_JoinIdenticalVertices;
	const struct aiScene *s;
	struct aiPropertyStore *props;
	struct walk w = { .xf = xf, .m = out, .counting = 1 };
	struct aiMatrix4x4 identity;
	int chain[MESH_DEPTH_MAX], rc = 0, maxnames;

	memset(out, 0, sizeof(*out));
	if (ply_check(path, err))
		return err->code;
	/* coordinates as the file stores them: COLLADA's up axis is not turned into y */
	props = aiCreatePropertyStore();
	aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
	s = import_bounded(path, flags, props);
	aiReleasePropertyStore(props);
	if (!s)
		return rs_fail(err, RS_EINPUT, "%s", aiGetErrorString());
	if (!s->mRootNode || !s->mNumMeshes) {
		rc = rs_fail(err, RS_EINPUT, "the file holds no meshes");
		goto out;
	}
	w.scene = s;
	aiIdentityMatrix4(&identity);
	if (walk_node(&w, s->mRootNode, &identity, chain, 0)) {
		rc = rs_fail(err, RS_EINPUT, "its node graph is more than %d deep", MESH_DEPTH_MAX);
		goto out;
	}
	if (w.broken) {
		rc = rs_fail(err, RS_EINPUT, "%zu of its triangles name vertices it does not have "
			     "(a damaged file)", w.broken);
		goto out;
	}
	if (!w.ntri) {
		rc = rs_fail(err, RS_EINPUT, "the file holds no triangles (only points or lines)");
		goto out;
	}
	maxnames = count_nodes(s->mRootNode) + (int)s->mNumMeshes + (int)s->mNumMaterials;
	out->v = malloc(w.nv * sizeof(*out->v));
	out->tri = malloc(w.ntri * sizeof(*out->tri));
	out->part = malloc(w.ntri * sizeof(*out->part));
	out->parts = malloc((size_t)w.nparts * sizeof(*out->parts));
	out->names = malloc((size_t)maxnames * sizeof(*out->names));
	if (!out->v || !out->tri || !out->part || !out->parts || !out->names) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for %zu triangles", w.ntri);
		goto out;
	}
	w = (struct walk){ .scene = s, .xf = xf, .m = out };
	walk_node(&w, s->mRootNode, &identity, chain, 0);
	out->nv = w.nv;
	out->ntri = w.ntri;
	out->nparts = w.nparts;
	for (size_t i = 0; i < out->nv && !rc; i++)
		if (!isfinite(out->v[i][0]) || !isfinite(out->v[i][1]) || !isfinite(out->v[i][2]))
			rc = rs_fail(err, RS_EINPUT, "vertex %zu is not a finite point (%g, %g, %g)",
				     i + 1, out->v[i][0], out->v[i][1], out->v[i][2]);
out:
	if (rc)
		mesh_free(out);
	aiReleaseImport(s);
	return rc;
}

const char *mesh_formats(void)
{
	static char list[1024];
	struct aiString ext;

	if (!list[0]) {
		aiGetExtensionList(&ext);
		snprintf(list, sizeof(list), "%s", ext.data);
	}
	return list;
}
