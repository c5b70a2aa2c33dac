/*
 * test_fuzz - seeded mutations of room files and meshes through the roomsim command: every
 * mutated input ends in a result or in a clear refusal, never in a crash, a hang, a
 * sanitizer report or a refusal that does not name the file.
 *
 * YAML: the example and test rooms, mutated (bytes flipped, spans cut or doubled, lines
 * swapped, YAML punctuation and extreme numbers put in), go through `roomsim info`. Meshes:
 * a small room as OBJ, ASCII PLY and ASCII STL, mutated alike, go through `roomsim voxelize`
 * at a coarse grid. A case passes when the command exits 0, 1 or 2 within FUZZ_LIMIT seconds,
 * its output has no sanitizer report ("runtime error:", "Sanitizer"), and a refusal (2)
 * names the room file (or, for meshes, the room file or the mesh). A failing case is kept in $FUZZ_KEEP (default
 * /tmp/roomsim-fuzz-failures) with its seed to replay.
 *
 * A mesh reader that does not finish in its time is stopped, naming the file.
 *
 * FUZZ_CASES (default 150 per kind: `make test`'s short batch) and FUZZ_SEED (default 1)
 * set the batch; `make fuzz` runs a long one with a fresh seed.
 * The binary is $ROOMSIM (default build/roomsim).
 */
#include "helper.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_LIMIT 300	/* s: a slower case is a hang, however loaded the machine */
#define MAX_TEXT (1 << 20)

static char dir[] = "/tmp/roomsim-test-fuzz-XXXXXX";
static const char *roomsim;
static long cases;
static uint64_t seed;

/* xorshift64*: the same cases from the same seed on every machine. */
static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(next() % n) : 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(MAX_TEXT + 1);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, MAX_TEXT, f);
	buf[*len] = 0;
	fclose(f);
	return buf;
}

/* What mutations put in: YAML's punctuation and values that strain a reader. */
static const char *const tokens[] = {
	":", "- ", "[", "]", "{", "}", ",", "'", "\"", "\n", "  ", "\t", "#", "&a ", "*a", "!!str ",
	"!!binary ", "? ", "|\n", ">\n", "~", "null", "-1", "0", "1e308", "-1e308", "nan", "inf",
	"1e-320", "99999999999999999999", "2147483648", "-0", "0x10", "1.5e9", "true", "yes",
	"<<: *a\n", "%YAML 1.1\n", "---\n", "...\n", "\xc3\x28", "\xef\xbb\xbf", "\\u0000",
	"fmax", "spacing", "fit", "box", "mesh", "shapes", "position", "receivers", "sources", "grid",
	"materials", "absorption", "bands", "library", "duration", "scheme", "stencil", "order",
	"snapshots", "every", "planes", "checkpoint", "output", "dir", "vertex", "face", "v ",
	"f ", "element", "property", "end_header", "facet normal", "vertex 1e30 0 0", "endloop",
};

/* One mutation of text (len bytes, room for MAX_TEXT) in place; the new length. */
static size_t mutate(char *t, size_t len)
{
	const size_t at = below(len + 1), span = 1 + below(len / 8 + 1);

	switch (below(6)) {
	case 0:		/* flip a byte */
		if (len)
			t[below(len)] ^= (char)(1 << below(8));
		break;
	case 1:		/* cut a span */
		if (at + span <= len) {
			memmove(t + at, t + at + span, len - at - span);
			len -= span;
		}
		break;
	case 2:		/* double a span */
		if (at + span <= len && len + span <= MAX_TEXT) {
			memmove(t + at + span, t + at, len - at);
			len += span;
		}
		break;
	case 3: {	/* put in a token */
		const char *k = tokens[below(sizeof(tokens) / sizeof(tokens[0]))];
		const size_t n = strlen(k);

		if (len + n <= MAX_TEXT) {
			memmove(t + at + n, t + at, len - at);
			memcpy(t + at, k, n);
			len += n;
		}
		break;
	}
	case 4: {	/* a number made extreme: the digits at a place replaced */
		static const char *const big[] = { "1e300", "0", "-5", "1e-300", "123456789012",
						   "0.0000001", "4294967297" };
		size_t i = at;

		while (i < len && !(t[i] >= '0' && t[i] <= '9'))
			i++;
		if (i < len) {
			size_t j = i;
			const char *k = big[below(sizeof(big) / sizeof(big[0]))];
			const size_t n = strlen(k);

			while (j < len && ((t[j] >= '0' && t[j] <= '9') || t[j] == '.'))
				j++;
			if (len - (j - i) + n <= MAX_TEXT) {
				memmove(t + i + n, t + j, len - j);
				memcpy(t + i, k, n);
				len = len - (j - i) + n;
			}
		}
		break;
	}
	default: {	/* swap the line at `at` with another */
		char *a = memchr(t + at, '\n', len - at), *b;
		size_t la, lb;
		char tmp[4096];

		if (!a || !(b = memchr(a + 1, '\n', (size_t)(t + len - a - 1))))
			break;
		la = (size_t)(b - a);	/* "\nline" */
		b = memchr(b + 1, '\n', (size_t)(t + len - b - 1));
		if (!b)
			break;
		lb = (size_t)(b - (a + la));
		if (la > sizeof(tmp))
			break;
		memcpy(tmp, a, la);
		memmove(a, a + la, lb);
		memcpy(a + lb, tmp, la);
		break;
	}
	}
	t[len] = 0;
	return len;
}

static void write_file(const char *path, const char *t, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(t, 1, len, f), len);
	fclose(f);
}

/* Run cmd on the case's files; 0 when it ended as a case should, else the failure is kept. */
static int check(const char *cmd, const char *named, const char *what, long n)
{
	char out[512], keep[512];
	int rc;

	snprintf(out, sizeof(out), "%s/out.txt", dir);
	rc = sh("timeout -k 5 %d %s > %s 2>&1", FUZZ_LIMIT, cmd, out);
	if (rc == 0 || rc == 1 ||
	    (rc == 2 && !sh("grep -q -F '%s' %s", named, out))) {
		if (!sh("grep -q -e 'runtime error:' -e 'Sanitizer' -e 'LeakSanitizer' %s", out))
			goto bad;
		return 0;
	}
bad:
	snprintf(keep, sizeof(keep), "%s", getenv("FUZZ_KEEP") ? getenv("FUZZ_KEEP")
							       : "/tmp/roomsim-fuzz-failures");
	sh("mkdir -p %s && cp -r %s %s/%s-seed%llu-case%ld", keep, dir, keep, what,
	   (unsigned long long)seed, n);
	print_message("# %s case %ld (FUZZ_SEED=%llu): exit %d%s; kept in %s\n", what, n,
		      (unsigned long long)seed, rc, rc >= 124 ? " (a hang or a crash)" : "",
		      keep);
	sh("head -c 600 %s | sed 's/^/#   /'", out);
	return 1;
}

/* Room files: the examples and test rooms, one mutated copy per case through `info`. */
static void yaml_mutations(void **state)
{
	static const char *const corpus[] = {
		"examples/shoebox.yaml", "rooms/studio.yaml", "rooms/l-shaped.yaml",
		"rooms/fan.yaml", "rooms/corridor.yaml", "rooms/hall.yaml", "tests/small.yaml",
	};
	const int ncorpus = (int)(sizeof(corpus) / sizeof(corpus[0]));
	char path[512], cmd[1200];
	long failed = 0;

	(void)state;
	rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	snprintf(path, sizeof(path), "%s/room.yaml", dir);
	for (long n = 0; n < cases; n++) {
		size_t len;
		char *t = slurp(corpus[n % ncorpus], &len);
		const int k = 1 + (int)below(4);

		for (int m = 0; m < k; m++)
			len = mutate(t, len);
		write_file(path, t, len);
		free(t);
		snprintf(cmd, sizeof(cmd), "%s info %s", roomsim, path);
		failed += check(cmd, path, "yaml", n);
	}
	print_message("# %ld mutated rooms, %ld failed (FUZZ_SEED=%llu)\n", cases, failed,
		      (unsigned long long)seed);
	assert_int_equal(failed, 0);
}

/* A room of 4 x 3 x 2.5 m in the three text formats. */
static const char obj_room[] =
	"v 0 0 0\nv 4 0 0\nv 4 3 0\nv 0 3 0\nv 0 0 2.5\nv 4 0 2.5\nv 4 3 2.5\nv 0 3 2.5\n"
	"g floor\nf 1 3 2\nf 1 4 3\ng walls\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\n"
	"f 3 8 7\nf 4 1 5\nf 4 5 8\ng ceiling\nf 5 6 7\nf 5 7 8\n";
static const char ply_room[] =
	"ply\nformat ascii 1.0\nelement vertex 8\nproperty float x\nproperty float y\n"
	"property float z\nelement face 6\nproperty list uchar int vertex_indices\nend_header\n"
	"0 0 0\n4 0 0\n4 3 0\n0 3 0\n0 0 2.5\n4 0 2.5\n4 3 2.5\n0 3 2.5\n4 0 3 2 1\n"
	"4 0 1 5 4\n4 1 2 6 5\n4 2 3 7 6\n4 3 0 4 7\n4 4 5 6 7\n";

static char *stl_room(size_t *len)
{
	static const int tri[12][3] = { { 0, 2, 1 }, { 0, 3, 2 }, { 0, 1, 5 }, { 0, 5, 4 },
					{ 1, 2, 6 }, { 1, 6, 5 }, { 2, 3, 7 }, { 2, 7, 6 },
					{ 3, 0, 4 }, { 3, 4, 7 }, { 4, 5, 6 }, { 4, 6, 7 } };
	static const double v[8][3] = { { 0, 0, 0 }, { 4, 0, 0 }, { 4, 3, 0 }, { 0, 3, 0 },
					{ 0, 0, 2.5 }, { 4, 0, 2.5 }, { 4, 3, 2.5 }, { 0, 3, 2.5 } };
	char *t = malloc(MAX_TEXT + 1);
	size_t n = 0;

	assert_non_null(t);
	n += (size_t)sprintf(t + n, "solid room\n");
	for (int f = 0; f < 12; f++) {
		n += (size_t)sprintf(t + n, "facet normal 0 0 0\nouter loop\n");
		for (int c = 0; c < 3; c++)
			n += (size_t)sprintf(t + n, "vertex %g %g %g\n", v[tri[f][c]][0],
					     v[tri[f][c]][1], v[tri[f][c]][2]);
		n += (size_t)sprintf(t + n, "endloop\nendfacet\n");
	}
	n += (size_t)sprintf(t + n, "endsolid room\n");
	*len = n;
	return t;
}

/* Meshes: the room as OBJ, PLY and STL, mutated, voxelised at fmax 300 Hz. */
static void mesh_mutations(void **state)
{
	static const char *const ext[] = { "obj", "ply", "stl" };
	char yaml[512], mesh[512], cmd[1600];
	long failed = 0;

	(void)state;
	rng = seed * 0xD1B54A32D192ED03ULL + 7;
	for (long n = 0; n < cases; n++) {
		const int e = (int)(n % 3);
		const int k = 1 + (int)below(3);
		char *t;
		size_t len;

		if (e == 2) {
			t = stl_room(&len);
		} else {
			t = malloc(MAX_TEXT + 1);
			assert_non_null(t);
			len = strlen(e ? ply_room : obj_room);
			memcpy(t, e ? ply_room : obj_room, len + 1);
		}
		for (int m = 0; m < k; m++)
			len = mutate(t, len);
		snprintf(mesh, sizeof(mesh), "%s/room.%s", dir, ext[e]);
		write_file(mesh, t, len);
		free(t);
		snprintf(yaml, sizeof(yaml), "%s/mesh.yaml", dir);
		snprintf(cmd, sizeof(cmd), "printf '%%s\\n' 'name: fuzz' 'grid: {fmax: 300}' "
			 "'duration: 0.05' 'geometry: {mesh: room.%s}' "
			 "'materials: {wall: {absorption: 0.1}}' 'surfaces: {default: wall}' "
			 "'sources: [{name: S, position: [1, 1, 1]}]' "
			 "'receivers: [{name: R, position: [3, 2, 1.5]}]' > %s", ext[e], yaml);
		assert_int_equal(sh("%s", cmd), 0);
		snprintf(cmd, sizeof(cmd), "%s voxelize %s --out %s/grid.h5 -q", roomsim, yaml, dir);
		failed += check(cmd, dir, "mesh", n);	/* the room file or the mesh */
		sh("rm -f %s/grid*", dir);
	}
	print_message("# %ld mutated meshes, %ld failed (FUZZ_SEED=%llu)\n", cases, failed,
		      (unsigned long long)seed);
	assert_int_equal(failed, 0);
}

/* A mesh reader past its time (ROOMSIM_MESH_SECONDS=-1 makes any read late) is stopped:
 * exit status 2, one line naming the mesh file, no output directory. */
static void late_mesh_reader_is_stopped(void **state)
{
	(void)state;
	assert_int_equal(sh("ROOMSIM_MESH_SECONDS=-1 %s run rooms/concert-hall/concert-hall.yaml "
			    "--out %s/late -q > %s/late.txt 2>&1", roomsim, dir, dir), 2);
	assert_int_equal(sh("grep -q '^roomsim: rooms/concert-hall/hall.obj: the mesh reader did "
			    "not finish within 0 s for a file of 0.1 MB, and was stopped' %s/late.txt "
			    "&& [ $(wc -l < %s/late.txt) = 1 ] && [ ! -e %s/late ]", dir, dir, dir), 0);
}

static int setup(void **state)
{
	(void)state;
	roomsim = getenv("ROOMSIM") ? getenv("ROOMSIM") : "build/roomsim";
	cases = getenv("FUZZ_CASES") ? strtol(getenv("FUZZ_CASES"), NULL, 10) : 150;
	seed = getenv("FUZZ_SEED") ? strtoull(getenv("FUZZ_SEED"), NULL, 10) : 1;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(yaml_mutations),
		cmocka_unit_test(mesh_mutations),
		cmocka_unit_test(late_mesh_reader_is_stopped),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
