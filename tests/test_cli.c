/*
 * test_cli - the roomsim command end to end: outputs of `run` (WAV lengths and rates,
 * rirs.h5, snapshots readable by h5dump), `info`, `--version`, `kernels` against the table of
 * docs/kernels.md, `materials`, and an interrupted run that leaves valid files and exits 1.
 * The binary is $ROOMSIM (default build/roomsim).
 */
#include "helper.h"

#include <cairo.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/roomsim-test-cli-XXXXXX";
static const char *roomsim;

static sf_count_t wav_frames(const char *path, int *rate)
{
	SF_INFO info = { 0 };
	SNDFILE *sf = sf_open(path, SFM_READ, &info);

	if (!sf)
		fail_msg("%s: %s", path, sf_strerror(NULL));
	sf_close(sf);
	*rate = info.samplerate;
	return info.frames;
}

/* The dimensions of dataset name in file path; returns the rank. */
static int h5_dims(const char *path, const char *name, hsize_t *dims)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d, sp;
	int rank;

	assert_true(f >= 0);
	d = H5Dopen2(f, name, H5P_DEFAULT);
	assert_true(d >= 0);
	sp = H5Dget_space(d);
	rank = H5Sget_simple_extent_dims(sp, dims, NULL);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
	return rank;
}

static void run_writes_every_output(void **state)
{
	static const char *const pairs[] = { "S1_R1", "S1_R2", "S2_R1", "S2_R2" };
	char path[512];
	hsize_t dims[3];
	int rate;

	(void)state;
	assert_int_equal(sh("%s run tests/small.yaml --out %s/small -q", roomsim, dir), 0);
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/small/%s.wav", dir, pairs[i]);
		assert_int_equal(wav_frames(path, &rate), 11025);	/* round(0.25 s x 44100) */
		assert_int_equal(rate, 44100);
	}
	snprintf(path, sizeof(path), "%s/small/rirs.h5", dir);
	assert_int_equal(h5_dims(path, "rir", dims), 3);
	assert_int_equal(dims[0], 2);
	assert_int_equal(dims[1], 2);
	assert_true(dims[2] > 1000);
	assert_int_equal(h5_dims(path, "rir_air", dims), 3);	/* air absorption by default */
	assert_true(dims[2] > 1000);
	assert_int_equal(sh("sed 's/^name: small/name: small\\nmedium: {air_absorption: false}/' "
			    "tests/small.yaml > %s/noair.yaml && %s run %s/noair.yaml --out %s/noair -q "
			    "&& ! h5dump -n %s/noair/rirs.h5 | grep -q rir_air", dir, roomsim, dir, dir,
			    dir), 0);
	snprintf(path, sizeof(path), "%s/small/S2_snapshots.h5", dir);
	assert_int_equal(h5_dims(path, "z_0.600", dims), 3);
	assert_true(dims[0] > 10);
	assert_int_equal(sh("h5dump -H %s > /dev/null", path), 0);
	/* the XDMF sidecar ParaView opens: consistent with the HDF5 file (tests/check_xmf.py) */
	assert_int_equal(sh("python3 tests/check_xmf.py %s/small/S2_snapshots.xmf > /dev/null",
			    dir), 0);
	assert_int_equal(sh("ls %s/small | grep -c tmp > /dev/null", dir), 1);	/* none left */
}

/* The small room with the fcc scheme: the same outputs, planes of the node-centred grid. */
static void fcc_room_runs(void **state)
{
	char path[512];
	hsize_t dims[3];
	int rate;

	(void)state;
	assert_int_equal(sh("sed 's#^output:#scheme: {stencil: fcc}\\noutput:#' tests/small.yaml > "
			    "%s/fcc.yaml && grep -q 'stencil: fcc' %s/fcc.yaml", dir, dir), 0);
	assert_int_equal(sh("%s info %s/fcc.yaml | grep -q '^lattice    fcc: '", roomsim, dir), 0);
	assert_int_equal(sh("%s run %s/fcc.yaml --out %s/fcc -q", roomsim, dir, dir), 0);
	snprintf(path, sizeof(path), "%s/fcc/S1_R2.wav", dir);
	assert_int_equal(wav_frames(path, &rate), 11025);
	snprintf(path, sizeof(path), "%s/fcc/S2_snapshots.h5", dir);
	assert_int_equal(h5_dims(path, "z_0.600", dims), 3);
	/* 1.6 m by 2.0 m at h = 65.3 mm: round(L / h) + 1 nodes, the walls through nodes */
	assert_int_equal(dims[1], 25);
	assert_int_equal(dims[2], 32);
}

static void info_and_version(void **state)
{
	(void)state;
	assert_int_equal(sh("%s info tests/small.yaml | grep -q '^memory .* needed'", roomsim), 0);
	assert_int_equal(sh("%s info tests/small.yaml | grep -q '^estimate'", roomsim), 0);
	/* the band-limited frames: 265 steps at fs/fmax = 18.2, 14 at a time every 20 steps */
	assert_int_equal(sh("%s info tests/small.yaml | grep -q '^snapshots  a frame every 20 "
			    "steps, low-passed at fmax over 265 steps, 14 summed at a time: "
			    "[0-9.]* KiB'", roomsim), 0);
	/* the outputs' size, and a run that cannot fit them refused before it starts */
	assert_int_equal(sh("%s info tests/small.yaml | grep -Eq '^disk +[0-9.]+ [KM]iB at most: "
			    "WAVs .*, rirs.h5 .*, snapshots '", roomsim), 0);
	assert_int_equal(sh("ROOMSIM_DISK_FREE=1000 %s run tests/small.yaml --out %s/full -q "
			    "2> %s/full.txt", roomsim, dir, dir), 1);
	assert_int_equal(sh("grep -Eq 'outputs need up to [0-9.]+ [KM]iB .* has 1000 B free' "
			    "%s/full.txt && [ ! -e %s/full ]", dir, dir), 0);
	assert_int_equal(sh("%s --version | grep -Eq '^roomsim [0-9.]+ \\(git [0-9a-f]'",
			    roomsim), 0);
	assert_int_equal(sh("%s --help > /dev/null", roomsim), 0);
	assert_int_equal(sh("%s run --help > /dev/null", roomsim), 0);
	assert_int_equal(sh("%s frobnicate 2> /dev/null", roomsim), 2);
	assert_int_equal(sh("%s run 2> /dev/null", roomsim), 2);
	assert_int_equal(sh("%s run tests/small.yaml --backend gpu 2> /dev/null", roomsim), 2);
	/* a material no surface uses is named, with its line, on stderr; one in use is not */
	assert_int_equal(sh("printf 'grid: {fmax: 200}\\nduration: 0.01\\ngeometry: {box: [2, 2, 2]}\\n"
			    "materials:\\n  walls: {absorption: 0.2}\\nsources: [{name: S, position: "
			    "[0.5, 0.5, 0.5]}]\\nreceivers: [{name: R, position: [1.5, 1.2, 1.1]}]\\n' "
			    "> %s/unused.yaml && "
			    "%s info %s/unused.yaml 2>&1 >/dev/null | grep -q 'warning: "
			    "%s/unused.yaml:5:3: materials.walls: on no surface'", dir, roomsim, dir,
			    dir), 0);
	assert_int_equal(sh("printf 'surfaces: {floor: walls}\\n' >> %s/unused.yaml && "
			    "%s info %s/unused.yaml > /dev/null 2> %s/unused.txt && "
			    "! grep -q warning %s/unused.txt", dir, roomsim, dir, dir, dir), 0);
	assert_int_equal(sh("%s info tests/small.yaml > /dev/null 2> %s/small.txt && "
			    "! grep -q warning %s/small.txt", roomsim, dir, dir), 0);
}

/* docs/kernels.md's table is the kernel table's own (roomsim kernels --markdown). */
static void kernels_command(void **state)
{
	(void)state;
	assert_int_equal(sh("%s kernels | grep -q '^diamond '", roomsim), 0);
	assert_int_equal(sh("%s kernels --frobnicate 2> /dev/null", roomsim), 2);
	assert_int_equal(sh("%s kernels --markdown > %s/kernels.md && "
			    "sed -n '/^<!-- kernels -->$/,/^<!-- \\/kernels -->$/p' docs/kernels.md | "
			    "sed '1d;$d' > %s/docs-kernels.md && test -s %s/kernels.md && "
			    "diff %s/kernels.md %s/docs-kernels.md", roomsim, dir, dir, dir, dir, dir), 0);
}

static void materials_command(void **state)
{
	(void)state;
	assert_int_equal(sh("%s materials | grep -Eq '^[0-9]+ materials'", roomsim), 0);
	assert_int_equal(sh("%s materials carpet_cotton --plot %s | grep -q '^source .*Vorl'",
			    roomsim, dir), 0);
	assert_int_equal(sh("%s materials carpet_cotton --fmax 1000 --plot %s | grep -q "
			    "'^ *2000 .*above fmax'", roomsim, dir), 0);
	assert_int_equal(sh("%s materials no_such_thing 2> /dev/null", roomsim), 2);
	/* the plot: a PNG and an SVG */
	assert_int_equal(sh("%s materials plywood_thin --plot %s > /dev/null && "
			    "head -c 8 %s/plywood_thin.png | grep -q PNG && "
			    "grep -q '<svg' %s/plywood_thin.svg", roomsim, dir, dir, dir), 0);
	assert_int_equal(sh("%s materials --fmax x 2> /dev/null", roomsim), 2);
	/* info fits a room's band materials and shows those given as branches; run runs them */
	assert_int_equal(sh("printf '%%s\\n' 'grid: {fmax: 500}' 'duration: 0.05' "
			    "'geometry: {box: [3.0, 2.0, 2.0]}' 'materials: {wall: {absorption: "
			    "{125: 0.1, 250: 0.2}}, panel: {branches: [{r: 3, m: 0.002, k: 3000}]}}' "
			    "'surfaces: {default: wall, ceiling: panel}' "
			    "'sources: [{name: S, position: [1.0, 1.0, 1.0]}]' "
			    "'receivers: [{name: R, position: [2.0, 1.0, 1.0]}]' > %s/band.yaml", dir),
			 0);
	assert_int_equal(sh("%s info %s/band.yaml | grep -q "
			    "'^material   wall: 2 octave bands, 125 to 250 Hz; 2 fitted'", roomsim, dir),
			 0);
	assert_int_equal(sh("%s info %s/band.yaml | grep -q '^material   panel: 1 branches given'",
			    roomsim, dir), 0);
	assert_int_equal(sh("%s run -q %s/band.yaml --out %s/band && test -s %s/band/S_R.wav",
			    roomsim, dir, dir, dir), 0);
}

static void scheme_command(void **state)
{
	(void)state;
	assert_int_equal(sh("%s scheme | grep -q 'limit 0.577350'", roomsim), 0);
	assert_int_equal(sh("%s scheme --stencil leggy --order 4 | grep -q 'limit 0.500000'",
			    roomsim), 0);
	assert_int_equal(sh("%s scheme --stencil box --q 2,2,2 --csv %s/box.csv > /dev/null",
			    roomsim, dir), 0);
	assert_int_equal(sh("test $(wc -l < %s/box.csv) -eq 12 && head -n 1 %s/box.csv | "
			    "grep -q '^ppw,f_h_over_c,axial,side_diagonal,diagonal,worst,mean$'", dir, dir), 0);
	assert_int_equal(sh("%s scheme --stencil leggy --order 4 | grep -q '^matching .*10.52 points "
			    "per wavelength): 10.1[0-9] points'", roomsim), 0);
	assert_int_equal(sh("%s scheme --stencil compact --radius2 7 2> /dev/null", roomsim), 2);
	assert_int_equal(sh("%s scheme --stencil compact --radius2 2 --weights 0.5,0.7 "
			    "2> /dev/null", roomsim), 2);
	/* a named scheme is analysed at its published Courant number */
	assert_int_equal(sh("%s scheme --stencil interpolated --variant IDWM | grep -q "
			    "'analysed at 0.577350 .*published 0.577350'", roomsim), 0);
	assert_int_equal(sh("%s scheme --stencil interpolated --variant XYZ 2> /dev/null", roomsim),
			 2);
	/* a room file's scheme at its grid.courant */
	assert_int_equal(sh("printf 'grid: {fmax: 500, courant: 0.5}\\nscheme: {stencil: leggy, "
			    "order: 4}\\nduration: 0.1\\ngeometry: {box: [2, 2, 2]}\\nsources: [{name: "
			    "S, position: [1, 1, 1]}]\\nreceivers: [{name: R, position: [1.5, 1, 1]}]\\n' "
			    "> %s/leggy.yaml", dir), 0);
	assert_int_equal(sh("%s scheme %s/leggy.yaml | grep -q 'leggy order 4 .*' && %s scheme "
			    "%s/leggy.yaml | grep -q 'analysed at 0.250000'", roomsim, dir, roomsim, dir),
			 0);
	assert_int_equal(sh("%s scheme %s/none.yaml 2> /dev/null", roomsim, dir), 2);
	assert_int_equal(sh("%s scheme --stencil fcc | grep -q 'limit 1.000000' && %s scheme "
			    "--stencil fcc | grep -q '^nodes  .* 224.17 nodes'", roomsim, roomsim), 0);
}

/*
 * roomsim voxelize: every room of rooms/ voxelises, with its voxel file and three slices; the
 * hall's volume line compares with the mesh's own. The file read back through geometry.voxels
 * runs, and info shows a shaped room's bounds.
 */
static void voxelize_rooms(void **state)
{
	static const char *const rooms[] = { "rooms/concert-hall/concert-hall.yaml",
					     "rooms/l-shaped.yaml", "rooms/fan.yaml",
					     "rooms/auditorium/auditorium.yaml" };

	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sh("%s voxelize %s --out %s/v%d/grid.h5 > %s/v%d.txt", roomsim,
				    rooms[i], dir, i, dir, i), 0);
		assert_int_equal(sh("h5dump -H %s/v%d/grid.h5 | grep -q 'DATASET \"flags\"'", dir,
				    i), 0);
		for (int a = 0; a < 3; a++)
			assert_int_equal(sh("head -c 4 %s/v%d/grid_%c.png | grep -q PNG", dir, i,
					    "xyz"[a]), 0);
		assert_int_equal(sh("grep -q '^volume .* m^3 of air' %s/v%d.txt", dir, i), 0);
		assert_int_equal(sh("%s info %s | grep -q '^bounds '", roomsim, rooms[i]), 0);
	}
	assert_int_equal(sh("grep -q \"the mesh's own 11917.2000 m^3\" %s/v0.txt", dir), 0);
	assert_int_equal(sh("grep -q \"the mesh's own 3151.3810 m^3\" %s/v3.txt", dir), 0);
	/* a mesh of 6·10^12 m: refused at once by info and voxelize, units suggested (it wrapped
	 * round to an 8 x 4 x 4 grid, and voxelize ran on for minutes) */
	for (int i = 0; i < 2; i++)
		assert_int_equal(sh("timeout 300 %s %s tests/bad/mesh_huge_coordinates.yaml > "
				    "%s/huge.txt 2>&1; [ $? = 2 ] && grep -q 'set geometry.units' "
				    "%s/huge.txt", roomsim, i ? "voxelize" : "info", dir, dir), 0);
	/* the L-shaped room again from its voxel file: 40 ms of it (wave-only: a voxel file has
	 * no surfaces for the hybrid's geometric engine) */
	assert_int_equal(sh("sed -e 's#^  shapes:#  voxels: %s/v1/grid.h5#' -e '/^    - /d' "
			    "-e '/^hybrid:/d' "
			    "-e 's/^duration: .*/duration: 0.04/' -e 's/fmax: 500/spacing: "
			    "0.0653333333333333/' rooms/l-shaped.yaml > %s/lv.yaml", dir, dir), 0);
	assert_int_equal(sh("%s run %s/lv.yaml --out %s/lv -q", roomsim, dir, dir), 0);
	assert_int_equal(sh("test -s %s/lv/S1_corner.wav", dir), 0);
	/* a voxel file is read in z slabs: its grid is cut across z, and another axis refused */
	assert_int_equal(sh("%s info %s/lv.yaml | grep -q '^layers     across z'", roomsim, dir), 0);
	assert_int_equal(sh("%s run %s/lv.yaml --out %s/lvx -q --set grid.slab_axis=x 2> %s/lvx.err;"
			    " [ $? = 2 ] && grep -q 'grid.slab_axis.*: a room from a voxel file is "
			    "read in z slabs.*valid: z or auto' %s/lvx.err && [ ! -e %s/lvx ]", roomsim, dir,
			    dir, dir, dir, dir), 0);
	/* and keeps the file's cells: grid.fit refused */
	assert_int_equal(sh("sed 's/spacing: 0.0653333333333333/fmax: 500, ppw: 10.5, "
			    "fit: true/' %s/lv.yaml > %s/lvf.yaml && %s run %s/lvf.yaml --out %s/lvf -q "
			    "2> %s/lvf.err; [ $? = 2 ] && grep -q 'grid.fit: a voxel file' %s/lvf.err && "
			    "[ ! -e %s/lvf ]", dir, dir, roomsim, dir, dir, dir, dir, dir), 0);
}

/* The CPU engine gives the same bytes on any number of threads (tests/run.sh runs the
 * programs with one each): a box and the carved L-shaped room with band walls, on 1 and 3. */
static void threads_give_the_same_bytes(void **state)
{
	(void)state;
	assert_int_equal(sh("sed -e 's/^duration: .*/duration: 0.05/' rooms/l-shaped.yaml > "
			    "%s/lt.yaml", dir), 0);
	for (int room = 0; room < 2; room++)
		for (int t = 1; t <= 3; t += 2)
			assert_int_equal(sh("%s run %s%s --out %s/threads-%d-%d --backend cpu "
					    "--threads %d -q", roomsim, room ? "" : dir,
					    room ? "tests/small.yaml" : "/lt.yaml", dir, room, t, t), 0);
	assert_int_equal(sh("cd %s && for r in 0 1; do for f in threads-$r-1/*; do g=threads-$r-3/"
			    "${f#*/}; case $f in *.wav) cmp $f $g;; *.h5) h5diff $f $g;; esac || "
			    "exit 1; done; done", dir), 0);
	assert_int_equal(sh("ls %s/threads-0-1/*.wav %s/threads-1-1/*.wav | wc -l | grep -qv '^0$'",
			    dir, dir), 0);
}

static void interrupted_run_keeps_its_work(void **state)
{
	char out[300], path[400];
	pid_t pid;
	int rate;
	hsize_t dims[3];
	double done;
	hid_t f, d;

	(void)state;
	snprintf(out, sizeof(out), "%s/long", dir);
	/* stderr kept for the summary: its rate counts the steps run, not those planned */
	snprintf(path, sizeof(path), "%s/long.err", dir);
	pid = start_held(path, 2000, "exec %s run tests/long.yaml --out %s 2> %s", roomsim, out,
			 path);
	kill(pid, SIGINT);
	assert_int_equal(exit_status(pid), 1);
	assert_int_equal(sh("grep -q '^roomsim: long: 1 source(s) x 1 receiver(s), 72747 steps "
			    "(2000 of them run)' %s/long.err && grep -q '^roomsim: interrupted at "
			    "step 2000 of 72747' %s/long.err", dir, dir), 0);
	snprintf(path, sizeof(path), "%s/S_R.wav", out);
	print_message("# interrupted WAV holds %lld frames of 192000\n",
		      (long long)wav_frames(path, &rate));
	/* the 2000 steps' share of 4 s, to the step's rounding */
	assert_true(llabs(wav_frames(path, &rate) - 192000LL * 2000 / 72747) <= 3);
	snprintf(path, sizeof(path), "%s/rirs.h5", out);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	assert_true(f >= 0);
	d = H5Dopen2(f, "completed_steps", H5P_DEFAULT);
	assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &done) >= 0);
	H5Dclose(d);
	H5Fclose(f);
	assert_true(done == 2000);
	snprintf(path, sizeof(path), "%s/S_snapshots.h5", out);
	assert_true(h5_dims(path, "z_1.000", dims) == 3 && dims[0] >= 1);
	assert_int_equal(sh("h5dump -A %s > /dev/null", path), 0);
}

/*
 * roomsim analyze on a run's output (tests/small.yaml at fmax 500: the 63 to 250 Hz octaves)
 * and on one of its WAVs: the table, analysis.csv with a row per pair and band, JSON that
 * python reads, G and Sabine's and Eyring's times only from rirs.h5 (Sabine's against the
 * box's own), a figure per response; a missing path is refused with status 2.
 */
static void analyze_command(void **state)
{
	(void)state;
	assert_int_equal(sh("[ -f %s/small/rirs.h5 ] || %s run tests/small.yaml --out %s/small -q",
			    dir, roomsim, dir), 0);
	assert_int_equal(sh("%s analyze %s/small > %s/analyze.txt", roomsim, dir, dir), 0);
	assert_int_equal(sh("grep -q '^S2_R1 ' %s/analyze.txt && grep -Eq '^band Hz +63 +125 +250$' "
			    "%s/analyze.txt && grep -Eq '^T30 s +[0-9]' %s/analyze.txt", dir, dir,
			    dir), 0);
	assert_int_equal(sh("head -1 %s/small/analysis.csv | grep -q '^pair,band,fm_hz,EDT_s,T20_s,"
			    "T30_s,C50_dB,C80_dB,D50_percent,Ts_ms,G_dB,decay_range_db,sabine_s,eyring_s,"
			    "LF,LFC$'",
			    dir), 0);
	assert_int_equal(sh("[ $(grep -c '^\"S[12]_R[12]\",' %s/small/analysis.csv) = 12 ]", dir),
			 0);
	/* Sabine for the 2 x 1.6 x 1.2 m box at absorption 0.2: 24 ln 10 V / (c S 0.2), 0.206 s */
	assert_int_equal(sh("python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); "
			    "b = d[\"pairs\"][0][\"bands\"][1]; "
			    "assert len(d[\"pairs\"]) == 4 and b[\"G\"] is not None; "
			    "assert abs(b[\"Sabine\"] / 0.2057 - 1) < 0.03, b; "
			    "assert b[\"Eyring\"] < b[\"Sabine\"]' %s/small/analysis.json", dir), 0);
	assert_int_equal(sh("%s analyze %s/small/S1_R1.wav --out %s/wav -q --no-plots && "
			    "grep -q '^\"S1_R1.wav\",125,' %s/wav/analysis.csv && "
			    "grep '^\"S1_R1.wav\",125,' %s/wav/analysis.csv | grep -q ',,[0-9.]*,,,,$'",
			    roomsim, dir, dir, dir, dir), 0);
	/* a figure per response, PNG and SVG; none with --no-plots */
	assert_int_equal(sh("head -c 8 %s/small/analysis_S2_R1.png | grep -q PNG && "
			    "grep -q '<svg' %s/small/analysis_S2_R1.svg && "
			    "[ ! -e %s/wav/analysis_S1_R1_wav.png ]", dir, dir, dir), 0);
	/* G does not depend on when the pulse starts: an impulse at t = 0 keeps the low-pass's
	 * ringing before it in its reference */
	assert_int_equal(sh("sed -e 's/position: \\[0.5, 0.5, 0.5\\]}/position: [0.5, 0.5, 0.5], "
			    "delay: 0.02}/' -e 's/^duration: .*/duration: 0.27/' -e '/snapshots:/d' "
			    "tests/small.yaml > %s/delayed.yaml && %s run %s/delayed.yaml --out "
			    "%s/delayed -q && %s analyze %s/delayed --no-plots -q", dir, roomsim, dir,
			    dir, roomsim, dir), 0);
	assert_int_equal(sh("python3 -c 'import json, sys; a, b = (json.load(open(p)) for p in "
			    "sys.argv[1:3]); ga = [x[\"G\"] for x in a[\"pairs\"][0][\"bands\"]]; "
			    "gb = [x[\"G\"] for x in b[\"pairs\"][0][\"bands\"]]; "
			    "assert a[\"pairs\"][0][\"name\"] == \"S1_R1\"; "
			    "assert all(abs(x - y) < 0.2 for x, y in zip(ga, gb)), (ga, gb)' "
			    "%s/small/analysis.json %s/delayed/analysis.json", dir, dir), 0);
	{	/* an impulse and a reflection 20 dB down 100 ms later: C80 20 dB, D50 99 % in
		 * every band (reverse-time filtering puts the direct sound's band energy before
		 * the onset; it counts at t = 0) */
		char path[512];
		SF_INFO info = { .samplerate = 48000, .channels = 1,
				 .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT };
		static float x[48000];
		SNDFILE *sf;

		x[480] = 1;
		x[480 + 4800] = 0.1f;
		snprintf(path, sizeof(path), "%s/two.wav", dir);
		assert_non_null(sf = sf_open(path, SFM_WRITE, &info));
		assert_int_equal(sf_writef_float(sf, x, 48000), 48000);
		sf_close(sf);
		assert_int_equal(sh("%s analyze %s --out %s/two --no-plots -q", roomsim, path, dir), 0);
		assert_int_equal(sh("python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); "
				    "b = d[\"pairs\"][0][\"bands\"]; assert len(b) == 8; "
				    "assert all(abs(x[\"C80\"] - 20) < 0.3 and x[\"D50\"] > 98.9 "
				    "for x in b[1:]), b' %s/two/analysis.json", dir), 0);
	}
	{	/* a first-order ambisonic WAV (ACN, SN3D): one response with LF and LFC, those of
		 * tests/test_analysis.c's lateral_fractions */
		char path[512];
		SF_INFO info = { .samplerate = 48000, .channels = 4,
				 .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT };
		static float x[9600 * 4];
		SNDFILE *sf;

		x[480 * 4] = 1;
		x[1440 * 4] = x[1440 * 4 + 1] = 0.5f;
		x[2400 * 4] = 0.4f;
		x[2400 * 4 + 1] = 0.2f;
		x[5280 * 4] = x[5280 * 4 + 1] = 0.3f;
		snprintf(path, sizeof(path), "%s/room.ambix.wav", dir);
		assert_non_null(sf = sf_open(path, SFM_WRITE, &info));
		assert_int_equal(sf_writef_float(sf, x, 9600), 9600);
		sf_close(sf);
		assert_int_equal(sh("%s analyze %s --out %s/amb --no-plots > %s/amb.txt && grep -q "
				    "'^LFC ' %s/amb.txt", roomsim, path, dir, dir, dir), 0);
		assert_int_equal(sh("python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); "
				    "assert len(d[\"pairs\"]) == 1; b = [x for x in "
				    "d[\"pairs\"][0][\"bands\"] if x[\"band\"] == \"1k\"][0]; "
				    "assert abs(b[\"LF\"] - 0.29 / 1.41) < 0.01, b; "
				    "assert abs(b[\"LFC\"] - 0.33 / 1.41) < 0.01, b' %s/amb/analysis.json",
				    dir), 0);
	}
	assert_int_equal(sh("%s analyze %s/nothing-here 2> /dev/null", roomsim, dir), 2);
	assert_int_equal(sh("%s analyze 2> /dev/null", roomsim), 2);
	assert_int_equal(sh("%s analyze --help | grep -q 'ISO 3382-1'", roomsim), 0);
}

/* Every value of dataset name in path as doubles (malloc'd into *v); dims filled, the count
 * returned. */
static size_t read_all(const char *path, const char *name, hsize_t *dims, double **v)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d, sp;
	size_t n = 1;
	int rank;

	assert_true(f >= 0);
	d = H5Dopen2(f, name, H5P_DEFAULT);
	assert_true(d >= 0);
	sp = H5Dget_space(d);
	rank = H5Sget_simple_extent_dims(sp, dims, NULL);
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	*v = malloc(n * sizeof(double));
	assert_non_null(*v);
	assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *v) >= 0);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
	return n;
}

/* A run with receiver grids: their files, rirs.h5's links to them, WAVs only where asked, the
 * grid sample at a named receiver's position equal to its signal, and analyze's maps. */
static void grids_end_to_end(void **state)
{
	char path[512];
	hsize_t dims[3], d3[3];
	double *pos, *g, *r, peak = 0;
	size_t np;
	long at = -1;

	(void)state;
	assert_int_equal(sh("sed 's#^receivers:#receivers:\\n  - {name: plane, grid: {at: 0.8, "
			    "spacing: 0.2}}\\n  - {name: low, grid: {over: floor, height: 0.5, "
			    "spacing: 0.4}, wavs: true}#' tests/small.yaml > %s/grids.yaml && "
			    "%s info %s/grids.yaml | grep -q '^grids      2 receiver grid(s), at most "
			    "[0-9]* points' && %s run %s/grids.yaml --out %s/grids -q", dir, roomsim,
			    dir, roomsim, dir, dir), 0);
	assert_int_equal(sh("cd %s/grids && [ -f S1_grids.h5 ] && [ -f S2_grids.h5 ] && "
			    "[ -f S1_low_0.wav ] && ! ls | grep -q '_plane_.*wav' && ! ls | grep -q tmp",
			    dir), 0);
	/* R1 sits at (1.4, 1.0, 0.8): on the plane grid's lattice; through rirs.h5's links */
	snprintf(path, sizeof(path), "%s/grids/rirs.h5", dir);
	np = read_all(path, "grids/plane/positions", dims, &pos);
	assert_int_equal(dims[1], 3);
	for (size_t q = 0; q < dims[0]; q++)
		if (fabs(pos[3 * q] - 1.4) + fabs(pos[3 * q + 1] - 1.0) + fabs(pos[3 * q + 2] - 0.8) <
		    1e-9)
			at = (long)q;
	assert_true(at >= 0);
	read_all(path, "grids/plane/rir/S2", dims, &g);
	assert_int_equal(dims[0], np / 3);
	read_all(path, "rir", d3, &r);
	assert_int_equal(dims[1], d3[2]);
	for (size_t t = 0; t < d3[2]; t++) {	/* [S2][R1] */
		peak = fmax(peak, fabs(r[d3[1] * d3[2] + t]));
		assert_true(g[(size_t)at * dims[1] + t] == (double)(float)r[d3[1] * d3[2] + t]);
	}
	assert_true(peak > 0);
	free(pos);
	free(g);
	free(r);
	assert_int_equal(sh("%s analyze %s/grids --out %s/grids/an > %s/grids.txt && "
			    "grep -q '^grid plane (plane z = 0.8 m, [0-9]* points), source S1' "
			    "%s/grids.txt && head -c 8 %s/grids/an/map_plane_S2_T30.png | grep -q PNG "
			    "&& grep -q '<svg' %s/grids/an/map_low_S1_G.svg", roomsim, dir, dir, dir,
			    dir, dir, dir), 0);
	snprintf(path, sizeof(path), "%s/grids/an/maps.h5", dir);
	read_all(path, "plane/positions", dims, &pos);
	np = dims[0];
	read_all(path, "plane/S1/T30", dims, &g);
	assert_int_equal(dims[0], 3);	/* the octaves 63 to 250 Hz */
	assert_int_equal(dims[1], np);
	for (size_t i = 0; i < dims[0] * dims[1]; i++)	/* the room's T30, about 0.26 s (at */
		assert_true(isfinite(g[i]) &&		/* 63 Hz a mode's node may stretch it) */
			    (i < dims[1] || (g[i] > 0.15 && g[i] < 0.35)));
	free(pos);
	free(g);
}

/* The solid (grey) and strongly positive (red) pixels of the PNG at path. */
static void count_pixels(const char *path, int *grey, int *red)
{
	cairo_surface_t *img = cairo_image_surface_create_from_png(path);
	const unsigned char *px;
	int w, h, stride;

	assert_int_equal(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
	px = cairo_image_surface_get_data(img);
	w = cairo_image_surface_get_width(img);
	h = cairo_image_surface_get_height(img);
	stride = cairo_image_surface_get_stride(img);
	assert_true(w % 2 == 0 && h % 2 == 0);	/* for H.264 */
	*grey = *red = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const uint32_t c = ((const uint32_t *)(px + (size_t)y * stride))[x] & 0xffffff;
			const int r = c >> 16 & 255, g = c >> 8 & 255, b = c & 255;

			*grey += r == g && g == b && r == 107;	/* solid: 0.42 */
			*red += r > 200 && g < 150 && b < 150;
		}
	cairo_surface_destroy(img);
}

/* roomsim render: a frame per snapshot, the pillar's solid cells grey, in each colour scale;
 * a missing plane refused with the planes there are, a scale that is not one refused. */
static void render_command(void **state)
{
	static const char *const scales[] = { "frame", "fixed", "db" };
	char path[600];
	hsize_t dims[3];
	int grey = 0, red = 0;

	(void)state;
	assert_int_equal(sh("cat > %s/pillar.yaml <<'EOF'\n"
			    "grid: {fmax: 500}\nduration: 0.02\n"
			    "geometry:\n  box: [4.0, 3.0, 2.0]\n"
			    "  shapes: [{remove: box, min: [2.0, 1.0, 0], max: [2.5, 2.0, 2.0]}]\n"
			    "sources: [{name: S, position: [1.0, 1.5, 1.0], signal: ricker, fc: 250}]\n"
			    "receivers: [{name: R, position: [3.5, 1.5, 1.0]}]\n"
			    "output: {snapshots: {every: 25, planes: [{axis: z, at: 1.0}]}}\nEOF\n"
			    "%s run %s/pillar.yaml --out %s/pillar -q && "
			    "%s render %s/pillar/S_snapshots.h5 -o %s/frames --no-movie -q",
			    dir, roomsim, dir, dir, roomsim, dir, dir), 0);
	snprintf(path, sizeof(path), "%s/pillar/S_snapshots.h5", dir);
	assert_int_equal(h5_dims(path, "z_1.000", dims), 3);
	assert_int_equal(sh("[ $(ls %s/frames | grep -c '^z_1.000_[0-9]*.png$') = %d ]", dir,
			    (int)dims[0]), 0);
	/* the pillar: 0.5 x 1 m of a 4 x 3 m plane, at least 4 % of the field's pixels; the
	 * wave in the last frame, in every scale */
	for (int sc = 0; sc < 3; sc++) {
		assert_int_equal(sh("%s render %s/pillar/S_snapshots.h5 -o %s/frames-%s --scale %s "
				    "--no-movie -q", roomsim, dir, dir, scales[sc], scales[sc]), 0);
		snprintf(path, sizeof(path), "%s/frames-%s/z_1.000_%05d.png", dir, scales[sc],
			 (int)dims[0] - 1);
		count_pixels(path, &grey, &red);
		print_message("# last frame, scale %s: %d solid pixels, %d strongly positive\n",
			      scales[sc], grey, red);
		assert_true(grey > 20000);
		assert_true(red > 100);
	}
	assert_int_equal(sh("cmp %s/frames/z_1.000_00001.png %s/frames-frame/z_1.000_00001.png",
			    dir, dir), 0);	/* frame is the default */
	assert_int_equal(sh("%s render %s/pillar/S_snapshots.h5 --scale loud -q 2>&1 | grep -q "
			    "'valid: frame, fixed, db'", roomsim, dir), 0);
	assert_int_equal(sh("%s render %s/pillar/S_snapshots.h5 --scale db --range 1 -q "
			    "2> /dev/null", roomsim, dir), 2);
	/* the movie, where ffmpeg is installed (make deps installs it for the tests) */
	if (!sh("command -v ffmpeg > /dev/null"))
		assert_int_equal(sh("%s render %s/pillar/S_snapshots.h5 -o %s/movie -q && "
				    "[ $(ffprobe -v error -count_frames -show_entries "
				    "stream=nb_read_frames -of csv=p=0 %s/movie/z_1.000.mp4) = %d ]",
				    roomsim, dir, dir, dir, (int)dims[0]), 0);
	else
		print_message("# no ffmpeg here: the movie is not checked\n");
	assert_int_equal(sh("%s render %s/pillar/S_snapshots.h5 --plane z_9 -o %s/f2 -q 2>&1 | "
			    "grep -q 'valid: z_1.000'", roomsim, dir, dir), 0);
	assert_int_equal(sh("%s render %s/pillar/rirs.h5 -q 2> /dev/null", roomsim, dir), 2);
	assert_int_equal(sh("%s render --help | grep -q 'symmetric\\|blue'", roomsim), 0);
}

/* scheme.stencil: auto by open-space dispersion alone (ROOMSIM_AUTO_ACCURACY=dispersion) and
 * however short the run (ROOMSIM_AUTO_WEIGH=0): info weighs every candidate and marks one, fcc
 * only in a box; run takes it and rirs.h5 names it. By the accuracy roomsim converge measured,
 * in a run this short, and in a room of shapes, where every larger stencil keeps to the
 * 7-point spacing, auto runs the 7-point scheme and times nothing; so it does with fitted
 * walls, which it runs. */
static void scheme_auto(void **state)
{
	(void)state;
	assert_int_equal(sh("sed -e 's/^grid: .*/grid: {fmax: 500, dispersion: 0.02}\\nscheme: "
			    "{stencil: auto}/' -e '/snapshots/d' tests/small.yaml > %s/auto.yaml && "
			    "ROOMSIM_AUTO_ACCURACY=dispersion ROOMSIM_AUTO_WEIGH=0 %s info %s/auto.yaml "
			    "> %s/auto.txt && "
			    "[ $(grep -c ' Gvox/s ' %s/auto.txt) "
			    "= 8 ] && [ $(grep -c '^  -> ' %s/auto.txt) = 1 ]", dir, roomsim, dir, dir,
			    dir, dir), 0);
	assert_int_equal(sh("chosen=$(sed -n 's/^  -> \\(.*)\\) *ppw.*/\\1/p' %s/auto.txt) && "
			    "ROOMSIM_AUTO_ACCURACY=dispersion ROOMSIM_AUTO_WEIGH=0 %s run %s/auto.yaml "
			    "--out %s/auto 2> %s/auto.err && "
			    "grep -q \"scheme auto: $chosen\" %s/auto.err && "
			    "h5dump -a /scheme %s/auto/rirs.h5 | grep -qF \"$chosen\"", dir, roomsim, dir,
			    dir, dir, dir, dir), 0);
	assert_int_equal(sh("%s info %s/auto.yaml > %s/auto1.txt && grep -q '^  -> leggy order 2 "
			    "(7 points) .*not timed: the only contender' %s/auto1.txt && "
			    "[ $(grep -c 'too short to pay for timing it' %s/auto1.txt) = 2 ] && "
			    "[ $(grep -c 'has not seen it reach' %s/auto1.txt) = 5 ] && "
			    "grep -q 'fitted walls *runs rooms of a mesh or shapes' %s/auto1.txt && "
			    "ROOMSIM_AUTO_WEIGH=0 %s info %s/auto.yaml | grep -q '^  -> leggy order 2 "
			    "(7 points) .*not timed'", roomsim, dir, dir, dir, dir, dir, dir, roomsim, dir),
			 0);
	/* a room of shapes: no fcc staircase, and its fitted walls not weighed in a short run */
	assert_int_equal(sh("sed -e 's/^geometry: .*/geometry: {box: [2.0, 1.6, 1.2], shapes: "
			    "[{remove: box, min: [0, 0, 0], max: [0.3, 0.3, 1.2]}]}/' %s/auto.yaml > "
			    "%s/auto2.yaml && %s info %s/auto2.yaml > %s/auto2.txt && "
			    "grep -q 'fcc .*points on the FCC lattice) *its staircase measured less "
			    "accurate than the 7-point' %s/auto2.txt && "
			    "grep -q '^  -> leggy order 2 (7 points) .*not timed: the only contender' "
			    "%s/auto2.txt && [ $(grep -c 'its walls are the 7-point update' "
			    "%s/auto2.txt) = 6 ] && grep -q 'fitted walls not weighed: .*too short' "
			    "%s/auto2.txt && ! grep -q ' Gvox/s ' %s/auto2.txt", dir, dir, roomsim, dir,
			    dir, dir, dir, dir, dir, dir), 0);
	/* there fcc's fitted walls are weighed with the others, unless grid.walls is given or
	 * the run has ranks; the run fits its walls when auto chose them, and says so */
	assert_int_equal(sh("ROOMSIM_AUTO_WEIGH=0 %s info %s/auto2.yaml > %s/auto2w.txt && "
			    "grep -q '^  ...fcc .*, fitted walls ppw .* Gvox/s .* s (.* s of it fitting "
			    "walls)$' %s/auto2w.txt && ROOMSIM_AUTO_WEIGH=0 %s info %s/auto2.yaml "
			    "--ranks 2 | grep -q 'fitted walls *fitted walls run in one process, not in "
			    "2 ranks' && sed -e 's/^grid: {/grid: {walls: staircase, /' %s/auto2.yaml > "
			    "%s/auto2s.yaml && ROOMSIM_AUTO_WEIGH=0 %s info %s/auto2s.yaml | grep -q "
			    "'fitted walls *grid.walls: staircase is given'", roomsim, dir, dir, dir,
			    roomsim, dir, dir, dir, roomsim, dir), 0);
	assert_int_equal(sh("sed -e 's/fmax: 500/fmax: 1000/' -e 's/^duration: .*/duration: 0.5/' "
			    "%s/auto2.yaml > %s/auto2l.yaml && ROOMSIM_AUTO_WEIGH=0 %s info "
			    "%s/auto2l.yaml > %s/auto2l.txt && ROOMSIM_AUTO_WEIGH=0 %s run %s/auto2l.yaml "
			    "--out %s/auto2l 2> %s/auto2l.err && "
			    "if grep -q '^  -> fcc .*, fitted walls' %s/auto2l.txt; then "
			    "w=fitted; grep -q 'scheme auto: fcc .*, fitted walls, .* of stepping and "
			    "fitting walls predicted' %s/auto2l.err; else w=staircase; grep -q "
			    "'scheme auto: leggy order 2' %s/auto2l.err; fi && "
			    "h5dump -a /walls %s/auto2l/rirs.h5 | grep -q \"(0): .$w.$\"",
			    dir, dir, roomsim, dir, dir, roomsim, dir, dir, dir, dir, dir, dir, dir), 0);
	/* with grid.walls: fitted: the 7-point scheme's, at their Courant number, and it runs */
	assert_int_equal(sh("sed -e 's/^grid: {/grid: {walls: fitted, /' %s/auto2.yaml > "
			    "%s/auto3.yaml && %s info %s/auto3.yaml > %s/auto3.txt && "
			    "grep -q '^  -> leggy order 2 (7 points) .*not timed: the only contender' "
			    "%s/auto3.txt && [ $(grep -c 'runs no fitted walls' %s/auto3.txt) = 6 ] && "
			    "[ $(grep -c 'fcc .*its fitted walls measured less accurate' %s/auto3.txt) "
			    "= 2 ] && "
			    "grep -q '^scheme .*Courant number 0.46188.*(0.8 of the limit' %s/auto3.txt && "
			    "grep -q '^walls *fitted' %s/auto3.txt && %s run %s/auto3.yaml --out %s/auto3 "
			    "2> %s/auto3.err && grep -q 'scheme auto: leggy order 2' %s/auto3.err",
			    dir, dir, roomsim, dir, dir, dir, dir, dir, dir, dir, roomsim, dir, dir, dir,
			    dir), 0);
}

static int setup(void **state)
{
	(void)state;
	roomsim = getenv("ROOMSIM") ? getenv("ROOMSIM") : "build/roomsim";
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return sh("rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_writes_every_output),
		cmocka_unit_test(info_and_version),
		cmocka_unit_test(kernels_command),
		cmocka_unit_test(materials_command),
		cmocka_unit_test(analyze_command),
		cmocka_unit_test(grids_end_to_end),
		cmocka_unit_test(render_command),
		cmocka_unit_test(scheme_auto),
		cmocka_unit_test(scheme_command),
		cmocka_unit_test(fcc_room_runs),
		cmocka_unit_test(voxelize_rooms),
		cmocka_unit_test(threads_give_the_same_bytes),
		cmocka_unit_test(interrupted_run_keeps_its_work),
	};

	return cmocka_run_group_tests_name("cli", tests, setup, teardown);
}
