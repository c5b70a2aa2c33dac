/*
 * test_parallel - a run decomposed over MPI ranks (solver/part.h, docs/parallel.md) computes
 * the same bits as one process: the CPU engine under `mpirun -np N` against one process, the
 * WAVs byte for byte and rirs.h5's responses value for value, in a box with receivers on
 * both sides of and across the cuts, and in a room of shapes (carved walls) with the 7-point
 * scheme, a stencil of reach 2 (leggy order 4: its legs folded at the walls), one that is not
 * axial (compact, 27 points: fallback and touch cells near the walls) and the fcc scheme;
 * snapshot planes across and along the cuts and receiver grids, gathered on rank 0, equal
 * too; a room from a mesh, each rank voxelising its own window, and its bad input refused as
 * one process refuses it. An interrupted run stops every rank at the same step and leaves
 * valid files; what a decomposed run cannot do yet is refused before it starts. Skipped when
 * the build has no MPI or mpirun is missing. The binary is $ROOMSIM (default build/roomsim).
 */
#include "helper.h"

#include <hdf5.h>
#include <signal.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/roomsim-test-parallel-XXXXXX";
static const char *roomsim;
/* Open MPI unloads its components before LeakSanitizer reports what they keep, so their
 * leaks cannot be suppressed by library name (tests/lsan.supp): under `make sanitize` the
 * ranks run without the leak check, with ASan's other checks and UBSan on. */
static const char *mpirun = "env ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
			    "mpirun --allow-run-as-root --oversubscribe";

/* A box whose 24 z layers three ranks split at about 8 and 16 (slab_axis z; auto would cut
 * it across x): receivers in a column across them (R3 at layer 7.5 and R5 at 15.5 straddle
 * the cuts), the source beside one. */
static const char box_room[] =
	"name: box\ngrid: {spacing: 0.05, slab_axis: z}\nduration: 0.12\n"
	"geometry: {box: [1.4, 1.1, 1.2]}\n"
	"materials: {w: {absorption: 0.2}, f: {admittance: 0.05}}\n"
	"surfaces: {default: w, floor: f}\n"
	"sources: [{name: S, position: [0.42, 0.51, 0.41], signal: ricker, fc: 400}]\n"
	"receivers: [{name: R1, position: [0.9, 0.6, 0.11]}, {name: R2, position: [0.9, 0.6, 0.3]},\n"
	"  {name: R3, position: [0.9, 0.6, 0.4]}, {name: R4, position: [0.9, 0.6, 0.6]},\n"
	"  {name: R5, position: [0.9, 0.6, 0.8]}, {name: R6, position: [0.9, 0.6, 1.07]}]\n";

/* An L-shaped room of shapes with a dome: carved walls cross every cut (across x, the
 * smallest cut, which auto picks). */
static const char shapes_room[] =
	"name: shapes\ngrid: {spacing: 0.05}\nduration: 0.08\n"
	"geometry: {shapes: [{add: box, min: [0, 0, 0], max: [1.4, 1.1, 1.2]},\n"
	"  {add: sphere, center: [0.7, 0.55, 1.2], radius: 0.45},\n"
	"  {remove: box, min: [0.9, 0, 0], max: [1.4, 0.4, 0.7]}]}\n"
	"materials: {w: {absorption: 0.2}}\nsurfaces: {default: w}\n"
	"sources: [{name: S, position: [0.42, 0.61, 0.51]}]\n"
	"receivers: [{name: R1, position: [1.1, 0.8, 0.3]}, {name: R2, position: [0.7, 0.55, 1.45]},\n"
	"  {name: R3, position: [0.3, 0.3, 0.8]}]\n";

static void write_room(const char *name, const char *text, const char *scheme)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.yaml", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "%s%s", text, scheme);
	fclose(f);
}

/* Run room `name` as one process and as `ranks` ranks; 0 when the WAVs are the same bytes
 * and rirs.h5's /rir and /rir_air, the walls' areas and the air's volume the same values. */
static int same_on_ranks(const char *name, int ranks)
{
	return sh("cd %s && %s run %s.yaml --backend cpu --out %s-1 -q && "
		  "%s -np %d %s run %s.yaml --backend cpu --out %s-%d -q && "
		  "for w in %s-1/*.wav; do cmp $w %s-%d/${w#*/} || exit 1; done && "
		  "for d in /rir /rir_air /material_area; do "
		  "h5diff %s-1/rirs.h5 %s-%d/rirs.h5 $d || exit 1; done && "
		  "[ \"$(h5dump -a air_volume %s-1/rirs.h5 | tail -n +2)\" = "
		  "\"$(h5dump -a air_volume %s-%d/rirs.h5 | tail -n +2)\" ] && "
		  "h5dump -a engine %s-%d/rirs.h5 | grep -q '%d ranks'",
		  dir, roomsim, name, name, mpirun, ranks, roomsim, name, name, ranks, name, name,
		  ranks, name, name, ranks, name, name, ranks, name, ranks, ranks);
}

static void box_on_two_and_three_ranks(void **state)
{
	(void)state;
	write_room("box", box_room, "scheme: {precision: float32}\n");
	assert_int_equal(same_on_ranks("box", 2), 0);
	assert_int_equal(same_on_ranks("box", 3), 0);
	write_room("box64", box_room, "scheme: {precision: float64}\n");
	assert_int_equal(same_on_ranks("box64", 3), 0);
}

static void carved_room_and_larger_stencils(void **state)
{
	char text[1024];

	(void)state;
	write_room("seven", shapes_room, "");
	assert_int_equal(same_on_ranks("seven", 3), 0);
	write_room("leggy4", shapes_room, "scheme: {stencil: leggy, order: 4}\n");
	assert_int_equal(same_on_ranks("leggy4", 2), 0);
	/* its fallback cells' 7-point rule holds to a Courant number of 1/sqrt(3) */
	snprintf(text, sizeof(text), "name: compact\ngrid: {spacing: 0.05, courant: 0.69}\n%s",
		 strstr(shapes_room, "duration:"));
	write_room("compact", text, "scheme: {stencil: compact, radius2: 3}\n");
	assert_int_equal(same_on_ranks("compact", 3), 0);
	write_room("fcc", shapes_room, "scheme: {stencil: fcc}\n");
	assert_int_equal(same_on_ranks("fcc", 3), 0);
}

/*
 * A room from a mesh (the concert hall, coarse): each rank voxelises its own window alone,
 * with the leak check's flood passed between the slabs, and the run is one process's bits;
 * its slabs hold equal work (run_grid.c balance), no more layers than info says;
 * a receiver in a wall is refused with one process's message. The sketch's layers around the
 * points fall in two groups (R3's is 20 layers above the others'), which ranks 0 and 1 build
 * and share.
 */
static void mesh_room_on_three_ranks(void **state)
{
	char hall[1024];

	(void)state;
	snprintf(hall, sizeof(hall), "%s/rooms/concert-hall/hall.obj",
		 getenv("PWD") ? getenv("PWD") : ".");
	assert_int_equal(sh("cd %s && printf 'name: mesh\\ngrid: {spacing: 0.25}\\nduration: 0.15\\n"
			    "geometry: {mesh: %s}\\nmaterials: {w: {absorption: 0.1}, "
			    "a: {absorption: 0.6}}\\nsurfaces: {default: w, Seats: a}\\n"
			    "sources: [{name: S, position: [4.0, 11.0, 2.7]}]\\n"
			    "receivers: [{name: R1, position: [16.0, 8.0, 1.2]}, "
			    "{name: R2, position: [33.0, 11.0, 2.7]}, "
			    "{name: R3, position: [20.0, 1.5, 9.2]}]\\n' > mesh.yaml", dir, hall), 0);
	assert_int_equal(same_on_ranks("mesh", 3), 0);
	/* its slabs hold equal work, not equal layers, within what info says */
	assert_int_equal(sh("cd %s && %s -np 3 %s run mesh.yaml --backend cpu --out mesh-b "
			    "--set duration=0.005 2> mesh-b.err && grep -o 'slabs of [0-9]* to "
			    "[0-9]* layers (of equal work)' mesh-b.err > slabs && "
			    "[ \"$(cut -d' ' -f3 slabs)\" -lt \"$(cut -d' ' -f5 slabs)\" ] && "
			    "%s info mesh.yaml --ranks 3 | grep -o 'slabs of equal work, each at most "
			    "[0-9]*' > most && [ \"$(cut -d' ' -f5 slabs)\" -le "
			    "\"$(cut -d' ' -f8 most)\" ]", dir, mpirun, roomsim, roomsim), 0);
	/* R2 below the floor: refused with the nearest position that works, on every rank count */
	assert_int_equal(sh("cd %s && sed 's/33.0, 11.0, 2.7/33.0, 11.0, -0.9/' mesh.yaml > "
			    "wall.yaml && ! %s run wall.yaml --backend cpu --out wall-1 -q 2> "
			    "wall-1.err && ! %s -np 3 %s run wall.yaml --backend cpu --out wall-3 -q "
			    "2> wall-3.err && grep -q 'receivers\\[1\\].position.*nearest position' "
			    "wall-1.err && grep -F -f wall-1.err wall-3.err && [ ! -e wall-3 ]",
			    dir, roomsim, mpirun, roomsim), 0);
}

/* A hybrid run of the carved room: rank 0 traces the geometric part beside its slab, and
 * the full-band WAVs and rirs.h5 (rir_full, rir_geometric) are one process's bits. */
static void hybrid_on_three_ranks(void **state)
{
	static const char hybrid_room[] =
		"name: hybrid\ngrid: {fmax: 600}\nduration: 0.08\n"
		"geometry: {shapes: [{add: box, min: [0, 0, 0], max: [1.4, 1.1, 1.2]},\n"
		"  {add: sphere, center: [0.7, 0.55, 1.2], radius: 0.45},\n"
		"  {remove: box, min: [0.9, 0, 0], max: [1.4, 0.4, 0.7]}]}\n"
		"materials: {w: {absorption: 0.2, scattering: 0.3}}\nsurfaces: {default: w}\n"
		"sources: [{name: S, position: [0.42, 0.61, 0.51]}]\n"
		"receivers: [{name: R1, position: [1.1, 0.8, 0.3]}, "
		"{name: R2, position: [0.7, 0.55, 1.45]}]\n"
		"hybrid: {rays: 5000}\n";

	(void)state;
	write_room("hybrid", hybrid_room, "");
	assert_int_equal(same_on_ranks("hybrid", 3), 0);
	assert_int_equal(sh("cd %s && h5diff hybrid-1/rirs.h5 hybrid-3/rirs.h5 /rir_full && "
			    "h5diff hybrid-1/rirs.h5 hybrid-3/rirs.h5 /rir_geometric", dir), 0);
}

/* Spatial receivers whose balls of points cross the slabs, one ambisonic, one binaural, a
 * cardioid source, and a talker whose block of nodes crosses a cut between slabs: rank 0
 * gathers the points, and every WAV is one process's bytes. */
static void spatial_on_three_ranks(void **state)
{
	static const char spatial_room[] =
		"name: spatial\ngrid: {spacing: 0.05}\nduration: 0.12\n"
		"geometry: {box: [1.4, 1.1, 1.2]}\n"
		"materials: {w: {absorption: 0.2}}\nsurfaces: {default: w}\n"
		"sources: [{name: S, position: [0.42, 0.51, 0.41], directivity: cardioid,\n"
		"  orientation: {azimuth: 30, elevation: 20}},\n"
		"  {name: T, position: [0.35, 0.3, 0.79], directivity: talker,\n"
		"  orientation: {azimuth: -60, elevation: 10}}]\n"
		"receivers: [{name: R1, position: [0.9, 0.6, 0.5], ambisonics: 1},\n"
		"  {name: R2, position: [0.7, 0.55, 0.6], ambisonics: 2, binaural: true}]\n";

	(void)state;
	write_room("spatial", spatial_room, "");
	assert_int_equal(same_on_ranks("spatial", 3), 0);
	assert_int_equal(sh("ls %s/spatial-3 | grep -c 'ambix.wav$\\|binaural.wav$' | grep -qx 6",
			    dir), 0);
}

/* Snapshot planes, z ones in one rank's slab and on a cut, x and y ones across every slab:
 * rank 0 gathers them, and the files compare equal to one process's. */
static void snapshots_gathered(void **state)
{
	(void)state;
	write_room("snap", box_room, "output: {snapshots: {every: 25, planes: [{axis: z, at: 0.2}, "
		   "{axis: z, at: 0.425}, {axis: x, at: 0.7}, {axis: y, at: 0.3}]}}\n");
	assert_int_equal(same_on_ranks("snap", 3), 0);
	assert_int_equal(sh("cd %s && h5diff snap-1/S_snapshots.h5 snap-3/S_snapshots.h5 && "
			    "cmp snap-1/S_snapshots.xmf snap-3/S_snapshots.xmf && "
			    "h5dump -H snap-3/S_snapshots.h5 | grep -c DATASET | grep -qx '[4-9]'",
			    dir), 0);
	write_room("snapfcc", shapes_room, "scheme: {stencil: fcc}\n"
		   "output: {snapshots: {every: 20, planes: [{axis: z, at: 0.6}, {axis: y, at: 0.5}]}}\n");
	assert_int_equal(same_on_ranks("snapfcc", 2), 0);
	assert_int_equal(sh("cd %s && h5diff snapfcc-1/S_snapshots.h5 snapfcc-2/S_snapshots.h5",
			    dir), 0);
}

/* Receiver grids, a horizontal plane in one slab, a vertical one across all, and points over
 * the floor with their WAVs: each point read where its lowest node lies, gathered on rank 0;
 * the grid files equal to one process's. */
static void receiver_grids_gathered(void **state)
{
	(void)state;
	write_room("grid", box_room, "");
	assert_int_equal(sh("cd %s && sed -i 's#^receivers: \\[#receivers: [{name: h, grid: {at: "
			    "0.5, spacing: 0.2}}, {name: v, grid: {plane: x, at: 0.7, spacing: 0.1}}, "
			    "{name: f, grid: {over: floor, height: 0.3, spacing: 0.4}, wavs: true}, #' "
			    "grid.yaml", dir), 0);
	assert_int_equal(same_on_ranks("grid", 3), 0);
	assert_int_equal(sh("cd %s && h5diff grid-1/S_grids.h5 grid-3/S_grids.h5 && "
			    "ls grid-3 | grep -q '^S_f_0.wav$'", dir), 0);
}

/*
 * The slab axis (grid.slab_axis, docs/parallel.md): the grid stored with x or y slowest and
 * cut across it gives three ranks one process's bits, with everything the grid's frame
 * turns: a cardioid and a talker (whose block of nodes crosses a cut), ambisonic and binaural
 * receivers, snapshot planes on the three axes, receiver grids in a plane and over the floor,
 * and carved walls with the fcc scheme and leggy order 4. One process's answer does not
 * depend on the axis beyond float64's rounding: x and y against z.
 */
static const char turned_room[] =
	"name: %s\ngrid: {spacing: 0.05, slab_axis: %s}\nduration: 0.1\n"
	"geometry: {box: [1.4, 1.1, 1.2]}\n"
	"materials: {w: {absorption: 0.2}, f: {absorption: 0.5}, g: {absorption: 0.05}}\n"
	"surfaces: {default: w, floor: f, x1: g}\n"
	"sources: [{name: S, position: [0.42, 0.51, 0.41], directivity: cardioid,\n"
	"  orientation: {azimuth: 30, elevation: 20}},\n"
	"  {name: T, position: [0.48, 0.36, 0.79], directivity: talker,\n"
	"  orientation: {azimuth: -60, elevation: 10}}]\n"
	"receivers: [{name: R1, position: [0.9, 0.6, 0.5], ambisonics: 1},\n"
	"  {name: R2, position: [0.7, 0.55, 0.6], ambisonics: 2, binaural: true},\n"
	"  {name: p, grid: {plane: y, at: 0.5, spacing: 0.2}},\n"
	"  {name: f, grid: {over: floor, height: 0.3, spacing: 0.3}, wavs: true}]\n"
	"output: {snapshots: {every: 25, planes: [{axis: z, at: 0.45}, {axis: x, at: 0.7},\n"
	"  {axis: y, at: 0.3}]}}\n%s";

static void write_turned(const char *name, const char *axis, const char *scheme)
{
	char text[2048];

	snprintf(text, sizeof(text), turned_room, name, axis, scheme);
	write_room(name, text, "");
}

static void slab_axes(void **state)
{
	static const char *const axes[] = { "x", "y" };

	(void)state;
	write_turned("tz", "z", "scheme: {precision: float64}\n");
	for (int a = 0; a < 2; a++) {
		char name[16];

		snprintf(name, sizeof(name), "t%s", axes[a]);
		write_turned(name, axes[a], "scheme: {precision: float64}\n");
		assert_int_equal(same_on_ranks(name, 3), 0);
		assert_int_equal(sh("cd %s && h5diff %s-1/S_snapshots.h5 %s-3/S_snapshots.h5 && "
				    "h5diff %s-1/T_grids.h5 %s-3/T_grids.h5 && "
				    "h5dump -a slab_axis %s-3/rirs.h5 | grep -q '\"%s\"'", dir, name,
				    name, name, name, name, axes[a]), 0);
		/* against the grid in the room's own frame, one process each */
		assert_int_equal(sh("cd %s && %s run tz.yaml --backend cpu --out tz-1 -q && "
				    "for d in /rir /rir_air /material_area; do "
				    "h5diff -d 1e-9 tz-1/rirs.h5 %s-1/rirs.h5 $d || exit 1; done && "
				    "h5diff -d 1e-6 tz-1/T_snapshots.h5 %s-1/T_snapshots.h5 && "
				    "h5diff -d 1e-6 tz-1/S_grids.h5 %s-1/S_grids.h5",
				    dir, roomsim, name, name, name), 0);
	}
	for (int a = 0; a < 2; a++) {	/* carved walls across the cuts */
		char name[16], text[1024];
		const char *shape = strstr(shapes_room, "geometry:");

		snprintf(name, sizeof(name), "fcc%s", axes[a]);
		snprintf(text, sizeof(text), "name: %s\ngrid: {spacing: 0.05, slab_axis: %s}\n"
			 "duration: 0.08\n%s", name, axes[a], shape);
		write_room(name, text, a ? "scheme: {stencil: leggy, order: 4}\n"
					 : "scheme: {stencil: fcc}\n");
		assert_int_equal(same_on_ranks(name, a ? 2 : 3), 0);
	}
	assert_int_equal(sh("%s info %s/tx.yaml --ranks 3 | grep -q '^ranks      3, slabs of 9 "
			    "or 10 of the 28 layers across x' && %s info %s/box.yaml | grep -q "
			    "'^layers     across z (grid.slab_axis)' && sed 's/, slab_axis: z//' %s/box.yaml "
			    "> %s/auto.yaml && %s info %s/auto.yaml | grep -q '^layers     across x "
			    "(the smallest cut): the grid.s x, y, z are the room.s y, z, x$'",
			    roomsim, dir, roomsim, dir, dir, dir, roomsim, dir), 0);
}

/* What a decomposed run cannot do is refused before anything is written: too many ranks for
 * the room's layers. */
static void refused_with_reasons(void **state)
{
	(void)state;
	/* a room 4 layers high: 5 ranks would leave one without a layer */
	assert_int_equal(sh("cd %s && sed 's/box: \\[1.4, 1.1, 1.2\\]/box: [1.4, 1.1, 0.2]/; "
			    "/^receivers/,$d' box.yaml > thin.yaml && echo 'receivers: [{name: R, "
			    "position: [0.9, 0.6, 0.1]}]' >> thin.yaml && sed -i 's/0.41\\]/0.1]/' "
			    "thin.yaml && %s -np 5 %s run thin.yaml --backend cpu --out many -q "
			    "2> many.err; [ $? -ne 0 ] && grep -q 'at most 4 ranks' many.err && "
			    "[ ! -e many ]", dir, mpirun, roomsim), 0);
	assert_int_equal(sh("%s info %s/box.yaml --ranks 3 | grep -q '^ranks      3, slabs of 8'",
			    roomsim, dir), 0);
}

/* Ctrl-C to a run over two ranks (--gpus 2, here on the CPU): roomsim passes it to mpirun as
 * SIGUSR1, the ranks stop at the same step, rank 0 writes what they computed. */
static void interrupted_on_two_ranks(void **state)
{
	char cmd[1024];
	pid_t pid;
	SF_INFO info = { 0 };
	SNDFILE *wav;

	(void)state;
	write_room("long", "name: long\ngrid: {fmax: 1000}\nduration: 4.0\n"
		   "geometry: {box: [4.0, 3.0, 2.5]}\n"
		   "sources: [{name: S, position: [1.0, 1.0, 1.0]}]\n"
		   "receivers: [{name: R, position: [3.0, 2.0, 1.5]}]\n", "");
	/* both ranks hold at step 3000, whatever the machine's load, until the signal */
	snprintf(cmd, sizeof(cmd), "%s/long.err", dir);
	pid = start_held(cmd, 3000, "cd %s && exec env ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
			 "%s run long.yaml --gpus 2 --backend cpu --out long-2 -q 2> long.err", dir,
			 roomsim);
	kill(pid, SIGINT);
	assert_int_equal(exit_status(pid), 1);
	assert_int_equal(sh("cd %s && [ $(grep -c '^roomsim: interrupted at step 3000 of 72747' "
			    "long.err) = 1 ] && h5dump -d completed_steps long-2/rirs.h5 > steps.txt "
			    "&& grep -q '^ *(0): 3000$' steps.txt", dir), 0);
	snprintf(cmd, sizeof(cmd), "%s/long-2/S_R.wav", dir);
	assert_non_null(wav = sf_open(cmd, SFM_READ, &info));
	print_message("# interrupted on 2 ranks: the WAV holds %lld frames of 192000\n",
		      (long long)info.frames);
	assert_true(llabs(info.frames - 192000LL * 3000 / 72747) <= 3);
	sf_close(wav);
}

static int setup(void **state)
{
	(void)state;
	roomsim = getenv("ROOMSIM") ? getenv("ROOMSIM") : "build/roomsim";
	if (!mkdtemp(dir))
		return -1;
	if (roomsim[0] != '/') {	/* the tests cd into dir */
		static char abs[1024];

		snprintf(abs, sizeof(abs), "%s/%s", getenv("PWD") ? getenv("PWD") : ".", roomsim);
		roomsim = abs;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return sh("rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(box_on_two_and_three_ranks),
		cmocka_unit_test(carved_room_and_larger_stencils),
		cmocka_unit_test(mesh_room_on_three_ranks),
		cmocka_unit_test(snapshots_gathered),
		cmocka_unit_test(hybrid_on_three_ranks),
		cmocka_unit_test(spatial_on_three_ranks),
		cmocka_unit_test(receiver_grids_gathered),
		cmocka_unit_test(slab_axes),
		cmocka_unit_test(refused_with_reasons),
		cmocka_unit_test(interrupted_on_two_ranks),
	};

	if (sh("command -v mpirun > /dev/null && %s --version | grep -q ', MPI)'",
	       getenv("ROOMSIM") ? getenv("ROOMSIM") : "build/roomsim")) {
		printf("# test_parallel: skipped, this build has no MPI or mpirun is missing\n");
		return 0;
	}
	return cmocka_run_group_tests_name("parallel", tests, setup, teardown);
}
