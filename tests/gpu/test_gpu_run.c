/*
 * test_gpu_run.c - test_gpu's `roomsim run` cases on the GPU: diamond end to end, two ranks
 * against one GPU, checkpoints and --resume (gpu.h).
 */
#include "gpu.h"

#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../solver/cuda/fdtd_cuda.h"
#include "../../solver/kernels.h"
#include "../../solver/signal.h"

/* Dataset name of HDF5 file path as doubles (malloc'd), its element count in *n. */
static double *h5_read(const char *path, const char *name, size_t *n)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d, sp;
	double *v;

	if (f < 0)
		fail_msg("%s: cannot open", path);
	if ((d = H5Dopen2(f, name, H5P_DEFAULT)) < 0)
		fail_msg("%s: no dataset %s", path, name);
	sp = H5Dget_space(d);
	*n = (size_t)H5Sget_simple_extent_npoints(sp);
	v = malloc(*n * sizeof(double) + 1);
	assert_non_null(v);
	assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(f);
	return v;
}

/* Whether files a and b hold the same bytes. */
static int same_bytes(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb, ca, cb;

	while (same && ((ca = getc(fa)) != EOF) | ((cb = getc(fb)) != EOF))
		same = ca == cb;
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/*
 * Two runs' outputs in directories da and db: fails when a WAV of wavs is not the same bytes;
 * returns the largest relative difference (rel_diff, db's over da's) of rirs.h5's responses
 * and of the snapshot planes named.
 */
static double outputs_differ(const char *da, const char *db, const char *const *wavs,
			     int nwavs, const char *const *planes, int nplanes)
{
	char a[600], b[600];
	double worst = 0;

	for (int w = 0; w < nwavs; w++) {
		snprintf(a, sizeof(a), "%s/%s", da, wavs[w]);
		snprintf(b, sizeof(b), "%s/%s", db, wavs[w]);
		if (!same_bytes(a, b))
			fail_msg("%s differs from %s", b, a);
	}
	for (int p = 0; p <= nplanes; p++) {	/* the planes, then the responses */
		const int rir = p == nplanes;
		size_t n, m;
		double *x, *y;

		snprintf(a, sizeof(a), "%s/%s", da, rir ? "rirs.h5" : "S_snapshots.h5");
		snprintf(b, sizeof(b), "%s/%s", db, rir ? "rirs.h5" : "S_snapshots.h5");
		x = h5_read(a, rir ? "rir" : planes[p], &n);
		y = h5_read(b, rir ? "rir" : planes[p], &m);
		assert_int_equal(n, m);
		worst = fmax(worst, rel_diff(y, x, n));
		free(x);
		free(y);
	}
	return worst;
}

/*
 * `roomsim run` end to end with the diamond kernel against the CPU engine, in float32: an
 * L-shaped room (a third of its plan padding), 595 steps (no multiple of a tower), two
 * receivers and snapshots on three planes; once with the default tower height and a frame
 * every 45 steps, and once with nt 100 and a frame every 200 steps, which `roomsim run`
 * advances in whole towers. The kernel rounds as the CPU engine does, so the WAVs must be
 * the same bytes, and the raw responses (rirs.h5) and every frame of every plane equal.
 * Not in the quick runs (compute-sanitizer): diamond_kernel covers the kernel there.
 */
void diamond_run(void **state)
{
	static const char *const wavs[] = { "S_A.wav", "S_B.wav" };
	static const char *const planes[] = { "z_0.600", "y_0.700", "x_1.100" };
	static const struct {
		const char *nt;
		int every;
	} cases[] = { { "", 45 }, { ", nt: 100", 200 } };
	char dir[] = "/tmp/roomsim-gpu-run-XXXXXX", a[512], b[512];

	(void)state;
	if (quick || (only_kernels && strncmp("diamond", only_kernels, strlen(only_kernels))))
		skip();
	assert_non_null(mkdtemp(dir));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		double worst = 0;

		for (int gpu = 0; gpu < 2; gpu++) {
			FILE *f;

			snprintf(a, sizeof(a), "%s/%zu%d.yaml", dir, c, gpu);
			assert_non_null(f = fopen(a, "w"));
			fprintf(f, "name: L\ngrid: {spacing: 0.05, courant: 0.999}\n"
				   "scheme: {precision: float32, kernel: diamond%s}\n"
				   "duration: 0.05\n"
				   "geometry:\n  shapes:\n"
				   "    - {add: box, min: [0, 0, 0], max: [3.1, 2.2, 1.4]}\n"
				   "    - {remove: box, min: [1.7, 1.2, 0], max: [3.1, 2.2, 1.4], "
				   "material: f}\n"
				   "materials: {w: {absorption: 0.2}, f: {admittance: 0.02}}\n"
				   "surfaces: {default: w}\n"
				   "sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
				   "receivers: [{name: A, position: [2.41, 0.43, 0.37]},\n"
				   "  {name: B, position: [0.3, 1.9, 1.1]}]\n"
				   "output:\n  dir: %s/%zu%d\n"
				   "  wav: {samplerate: 48000, format: float32}\n"
				   "  snapshots: {every: %d, band: full, planes: [{axis: z, at: 0.6}, "
				   "{axis: y, at: 0.7}, {axis: x, at: 1.1}]}\n",
				cases[c].nt, dir, c, gpu, cases[c].every);
			fclose(f);
			assert_int_equal(sh("%s run %s/%zu%d.yaml -q --backend %s > %s/%zu%d.log 2>&1",
					    roomsim, dir, c, gpu, gpu ? "cuda" : "cpu", dir, c, gpu),
					 0);
		}
		snprintf(a, sizeof(a), "%s/%zu0", dir, c);
		snprintf(b, sizeof(b), "%s/%zu1", dir, c);
		worst = outputs_differ(a, b, wavs, 2, planes, 3);
		print_message("# roomsim run, diamond%s, a frame every %d steps: WAVs the same "
			      "bytes, responses and 3 snapshot planes %.2e%s\n", cases[c].nt,
			      cases[c].every, worst, worst == 0 ? " (bitwise equal)" : "");
		assert_true(worst == 0);
	}
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

/*
 * A run over two ranks (solver/part.h, docs/parallel.md) against one GPU: `mpirun -np 2`
 * with the GPUs' halos through NCCL (through host memory where the ranks share one GPU),
 * the WAVs the same bytes and rirs.h5's responses and the snapshot planes the same values;
 * a box on slice-vec with planes across and along the cut, the carved L with band walls on
 * shell-shared (leggy order 4: fallback and touch cells), and with fcc-vec (float64) and
 * fcc-split (float32).
 * Skipped without mpirun.
 */
void ranks_on_gpus(void **state)
{
	static const struct {
		const char *scheme, *kernel, *geometry;
	} cases[] = {
		{ "precision: float32", "slice-vec", "{box: [3.1, 2.2, 1.4]}" },
		{ "precision: float32, stencil: leggy, order: 4", "shell-shared",
		  "{shapes: [{add: box, min: [0, 0, 0], max: [3.1, 2.2, 1.4]}, {remove: box, "
		  "min: [1.7, 1.2, 0], max: [3.1, 2.2, 1.4]}]}" },
		{ "precision: float64, stencil: fcc", "fcc-vec",
		  "{shapes: [{add: box, min: [0, 0, 0], max: [3.1, 2.2, 1.4]}, {remove: box, "
		  "min: [1.7, 1.2, 0], max: [3.1, 2.2, 1.4]}]}" },
		{ "precision: float32, stencil: fcc", "fcc-split",
		  "{shapes: [{add: box, min: [0, 0, 0], max: [3.1, 2.2, 1.4]}, {remove: box, "
		  "min: [1.7, 1.2, 0], max: [3.1, 2.2, 1.4]}]}" },
	};
	static const char *const planes[] = { "z_0.700", "x_1.100", "y_0.600" };
	static const char *const wavs[] = { "S_A.wav", "S_B.wav", "S_C.wav" };
	char dir[] = "/tmp/roomsim-gpu-ranks-XXXXXX", a[512], b[512];

	(void)state;
	if (quick || only_kernels || sh("command -v mpirun > /dev/null"))
		skip();
	setenv("NCCL_NVLS_ENABLE", "0", 0);	/* NVLink multicast stays off */
	assert_non_null(mkdtemp(dir));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		FILE *f;

		snprintf(a, sizeof(a), "%s/%zu.yaml", dir, c);
		assert_non_null(f = fopen(a, "w"));
		fprintf(f, "name: r\ngrid: {spacing: 0.05}\nscheme: {%s}\nduration: 0.05\n"
			   "geometry: %s\n"
			   "materials: {w: {absorption: {125: 0.1, 250: 0.15, 500: 0.25, 1000: 0.3}}}\n"
			   "surfaces: {default: w}\n"
			   "sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
			   "receivers: [{name: A, position: [2.41, 0.43, 0.37]},\n"
			   "  {name: B, position: [0.3, 1.9, 0.71]}, {name: C, position: [1.2, 1.0, 1.3]}]\n"
			   "output:\n  wav: {samplerate: 48000, format: float32}\n"
			   "  snapshots: {every: 40, planes: [{axis: z, at: 0.7}, {axis: x, at: 1.1}, "
			   "{axis: y, at: 0.6}]}\n", cases[c].scheme, cases[c].geometry);
		fclose(f);
		assert_int_equal(sh("cd %s && %s run %zu.yaml -q --backend cuda --kernel %s --out "
				    "%zu-1 > %zu-1.log 2>&1 && mpirun -np 2 --allow-run-as-root "
				    "--oversubscribe %s run %zu.yaml --backend cuda --kernel %s --out "
				    "%zu-2 > %zu-2.log 2>&1", dir, roomsim, c, cases[c].kernel, c, c,
				    roomsim, c, cases[c].kernel, c, c), 0);
		assert_int_equal(sh("grep 'roomsim: 2 ranks' %s/%zu-2.log", dir, c), 0);
		snprintf(a, sizeof(a), "%s/%zu-1", dir, c);
		snprintf(b, sizeof(b), "%s/%zu-2", dir, c);
		if (outputs_differ(a, b, wavs, 3, planes, 3) != 0)
			fail_msg("%s on 2 ranks: rirs.h5 or a plane differs from one GPU's",
				 cases[c].kernel);
		print_message("# 2 ranks, %s (%s): WAVs, rirs.h5 and 3 planes equal to one GPU's\n",
			      cases[c].kernel, cases[c].scheme);
	}
	sh("rm -rf %s", dir);
}

/*
 * Checkpoints on the GPU: a run stopped part way (SIGTERM after a checkpoint, or SIGKILL after
 * two) and resumed with --resume ends with the outputs of one that never stopped: the WAVs
 * the same bytes, rirs.h5 and the snapshots equal. The checkpoint holds the fields in the
 * grid's order whatever the kernel's layout, so diamond's (z fastest) goes on under slice-vec
 * and slice-vec's under diamond; band walls (branch states) and a receiver grid (its file
 * opened again) go on under slice-vec, and the grid file compares equal too; band walls go
 * from diamond, which updates them in its towers, to slice-vec and back.
 */
void resume_on_gpu(void **state)
{
	static const char *const wavs[] = { "S_A.wav", "S_B.wav" };
	static const char *const planes[] = { "z_0.700", "x_1.100" };
	static const struct {
		const char *first, *then, *walls, *grid;
		int sig;
	} cases[] = {
		{ "diamond", "slice-vec", "{absorption: 0.1}", "", SIGTERM },
		{ "slice-vec", "diamond", "{absorption: 0.1}", "", SIGKILL },
		{ "slice-vec", "slice-vec", "{absorption: {125: 0.1, 250: 0.15, 500: 0.25, 1000: 0.3}}",
		  "  - {name: G, grid: {at: 0.9, spacing: 0.1}}\n", SIGKILL },
		/* band walls updated in diamond's towers, then by k_branch_one, and back */
		{ "diamond", "slice-vec", "{absorption: {125: 0.1, 250: 0.15, 500: 0.25, 1000: 0.3}}",
		  "", SIGTERM },
		{ "slice-vec", "diamond", "{absorption: {125: 0.1, 250: 0.15, 500: 0.25, 1000: 0.3}}",
		  "", SIGKILL },
	};
	char dir[] = "/tmp/roomsim-gpu-resume-XXXXXX", a[600], b[600];

	(void)state;
	if (quick || only_kernels)
		skip();
	assert_non_null(mkdtemp(dir));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		FILE *f;
		pid_t pid;

		snprintf(a, sizeof(a), "%s/%zu.yaml", dir, c);
		assert_non_null(f = fopen(a, "w"));
		fprintf(f, "name: r\ngrid: {spacing: 0.015}\nscheme: {precision: float32}\n"
			   "duration: 1.0\ngeometry: {box: [3.1, 2.2, 1.4]}\nmaterials: {w: %s}\n"
			   "surfaces: {default: w}\nsources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
			   "receivers:\n  - {name: A, position: [2.41, 0.43, 0.37]}\n"
			   "  - {name: B, position: [0.3, 1.9, 0.71]}\n%s"
			   "output:\n  wav: {samplerate: 48000, format: float32}\n"
			   "  snapshots: {every: 2000, band: full, planes: [{axis: z, at: 0.7}, "
			   "{axis: x, at: 1.1}]}\n",
			cases[c].walls, cases[c].grid);
		fclose(f);
		assert_int_equal(sh("cd %s && %s run %zu.yaml -q --backend cuda --kernel %s --out "
				    "%zu-ref", dir, roomsim, c, cases[c].then, c), 0);
		snprintf(a, sizeof(a), "%zu.yaml --backend cuda --kernel %s --out %zu-ck --checkpoint "
			 "'4000 steps'", c, cases[c].first, c);
		/* SIGTERM after the checkpoint at 4000 (it writes another), SIGKILL after the
		 * two at 4000 and 8000 */
		snprintf(b, sizeof(b), "%s/bg%zu.log", dir, c);
		pid = start_held(b, cases[c].sig == SIGTERM ? 4500 : 8500, "cd %s && exec %s run %s "
				 "-q 2> %s", dir, roomsim, a, b);
		assert_int_equal(sh("cd %s && [ -f %zu-ck/checkpoint.h5 ] && { [ %d = %d ] || "
				    "[ -f %zu-ck/checkpoint.prev.h5 ]; }", dir, c, cases[c].sig,
				    SIGTERM, c), 0);
		kill(pid, cases[c].sig);
		exit_status(pid);
		assert_int_equal(sh("cd %s && %s run %zu.yaml --backend cuda --kernel %s --out %zu-ck "
				    "--resume 2> %zu-resume.log && grep -q 'resuming from' %zu-resume.log",
				    dir, roomsim, c, cases[c].then, c, c, c), 0);
		snprintf(a, sizeof(a), "%s/%zu-ref", dir, c);
		snprintf(b, sizeof(b), "%s/%zu-ck", dir, c);
		if (outputs_differ(a, b, wavs, 2, planes, 2) != 0)
			fail_msg("%s then %s: rirs.h5 or a plane differs from the run that never "
				 "stopped", cases[c].first, cases[c].then);
		if (*cases[c].grid) {	/* the grid file, opened again by the resumed run */
			char fa[700], fb[700];
			size_t n, m;
			double *x, *y;

			snprintf(fa, sizeof(fa), "%s/S_grids.h5", a);
			snprintf(fb, sizeof(fb), "%s/S_grids.h5", b);
			x = h5_read(fa, "G/rir", &n);
			y = h5_read(fb, "G/rir", &m);
			assert_int_equal(n, m);
			assert_memory_equal(x, y, n * sizeof(double));
			free(x);
			free(y);
		}
		assert_int_equal(sh("! ls %s | grep -q -e checkpoint -e tmp", b), 0);
		print_message("# %s stopped by %s, resumed on %s: the same outputs\n", cases[c].first,
			      cases[c].sig == SIGTERM ? "SIGTERM" : "SIGKILL", cases[c].then);
	}
	if (!sh("command -v mpirun > /dev/null")) {	/* two ranks: SIGUSR2 to mpirun */
		pid_t pid;

		setenv("NCCL_NVLS_ENABLE", "0", 0);
		snprintf(a, sizeof(a), "%s/2r.log", dir);
		pid = start_held(a, 3000, "cd %s && exec mpirun -np 2 --allow-run-as-root "
				 "--oversubscribe -x ROOMSIM_HOLD_AT -x NCCL_NVLS_ENABLE %s run 0.yaml "
				 "--backend cuda --kernel slice-vec --out 2r -q 2> %s", dir, roomsim, a);
		kill(pid, SIGUSR2);
		exit_status(pid);
		assert_int_equal(sh("cd %s && [ -f 2r/checkpoint.h5 ] && [ -f 2r/checkpoint.rank1.h5 ] "
				    "&& mpirun -np 2 --allow-run-as-root --oversubscribe %s run 0.yaml "
				    "--backend cuda --kernel slice-vec --out 2r --resume -q", dir,
				    roomsim), 0);
		snprintf(a, sizeof(a), "%s/0-ref", dir);
		snprintf(b, sizeof(b), "%s/2r", dir);
		if (outputs_differ(a, b, wavs, 2, planes, 2) != 0)
			fail_msg("two ranks stopped and resumed: rirs.h5 or a plane differs");
		print_message("# two ranks on slice-vec stopped by SIGTERM and resumed: the outputs "
			      "of one GPU that never stopped\n");
	}
	sh("rm -rf %s", dir);
}

/*
 * Band-limited snapshot frames (output.snapshots.band: fmax, docs/output.md) on the GPU: the
 * carved L with a frame every 30 steps (each summed over a window of 265 steps on the cubic
 * grid, nine at a time) and three planes, on slice-vec (CUDA graphs), slice-vec step by step
 * (ROOMSIM_NO_GRAPHS), naive3d, general (leggy order 4, with the carved room's fallback
 * cells), fcc-vec and fcc-split (their own plane kernel), each against the CPU engine: the
 * same WAV bytes and every frame of every plane the same bits; a run held inside the frames'
 * windows, stopped by SIGTERM and resumed, the same as one that never stopped; diamond is
 * refused for them, naming the key.
 */
void band_frames_on_gpu(void **state)
{
	static const char *const wavs[] = { "S_A.wav", "S_B.wav" };
	static const char *const planes[] = { "z_0.600", "y_0.700", "x_1.100" };
	static const struct {
		const char *kernel, *scheme, *env;
	} cases[] = {
		{ "slice-vec", "leggy, order: 2", "" },
		{ "slice-vec", "leggy, order: 2", "ROOMSIM_NO_GRAPHS=1 " },
		{ "naive3d", "leggy, order: 2", "" },
		{ "general", "leggy, order: 4", "" },
		{ "fcc-vec", "fcc", "" },
		{ "fcc-split", "fcc", "" },
	};
	char dir[] = "/tmp/roomsim-gpu-frames-XXXXXX", a[600], b[600];
	pid_t pid;

	(void)state;
	if (quick || only_kernels)
		skip();
	assert_non_null(mkdtemp(dir));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		FILE *f;
		double worst;

		snprintf(a, sizeof(a), "%s/%zu.yaml", dir, c);
		assert_non_null(f = fopen(a, "w"));
		fprintf(f, "name: L\ngrid: {fmax: 700}\nscheme: {stencil: %s}\nduration: 0.08\n"
			   "geometry:\n  shapes:\n"
			   "    - {add: box, min: [0, 0, 0], max: [3.1, 2.2, 1.4]}\n"
			   "    - {remove: box, min: [1.7, 1.2, 0], max: [3.1, 2.2, 1.4], material: f}\n"
			   "materials: {w: {absorption: 0.2}, f: {admittance: 0.02}}\n"
			   "surfaces: {default: w}\n"
			   "sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
			   "receivers: [{name: A, position: [2.41, 0.43, 0.37]},\n"
			   "  {name: B, position: [0.3, 1.9, 1.1]}]\n"
			   "output:\n  wav: {samplerate: 48000, format: float32}\n"
			   "  snapshots: {every: 30, planes: [{axis: z, at: 0.6}, {axis: y, at: 0.7}, "
			   "{axis: x, at: 1.1}]}\n", cases[c].scheme);
		fclose(f);
		assert_int_equal(sh("cd %s && %s run %zu.yaml -q --backend cpu --out %zu-cpu && "
				    "%s%s run %zu.yaml -q --backend cuda --kernel %s --out %zu-gpu",
				    dir, roomsim, c, c, cases[c].env, roomsim, c, cases[c].kernel, c),
				 0);
		snprintf(a, sizeof(a), "%s/%zu-cpu", dir, c);
		snprintf(b, sizeof(b), "%s/%zu-gpu", dir, c);
		worst = outputs_differ(a, b, wavs, 2, planes, 3);
		print_message("# band-limited frames, %s%s (%s): WAVs the same bytes, every frame "
			      "of 3 planes the same bits, responses %.2e\n", cases[c].env,
			      cases[c].kernel, cases[c].scheme, worst);
		assert_true(worst == 0);
	}
	/* SIGTERM inside the frames' windows on slice-vec, resumed */
	snprintf(a, sizeof(a), "%s/0-ck.log", dir);
	pid = start_held(a, 777, "cd %s && exec %s run 0.yaml --backend cuda --kernel slice-vec --out "
			 "0-ck 2> %s", dir, roomsim, a);
	kill(pid, SIGTERM);
	assert_int_equal(exit_status(pid), 1);
	assert_int_equal(sh("cd %s && %s run 0.yaml --backend cuda --kernel slice-vec --out 0-ck "
			    "--resume -q", dir, roomsim), 0);
	snprintf(a, sizeof(a), "%s/0-cpu", dir);
	snprintf(b, sizeof(b), "%s/0-ck", dir);
	assert_true(outputs_differ(a, b, wavs, 2, planes, 3) == 0);
	print_message("# stopped at step 777 inside the windows and resumed: the same frames\n");
	assert_int_equal(sh("cd %s && %s run 0.yaml --backend cuda --kernel diamond --out 0-d -q "
			    "2> d.err; [ $? = 2 ] && grep -q 'output.snapshots.band: full' d.err",
			    dir, roomsim), 0);
	sh("rm -rf %s", dir);
}

/* 1 when the file at log holds text (no quotes in it). */
static int in_log(const char *log, const char *text)
{
	return sh("grep -qF -- '%s' %s", text, log) == 0;
}

/* A cube of 1 cm cells, side cbrt(cells) cells, kernel auto, a few steps, into dir/NAME. */
static void write_cube(const char *dir, const char *name, double cells)
{
	char path[512];
	const double side = 0.01 * floor(cbrt(cells));
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.yaml", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "name: %s\ngrid: {spacing: 0.01}\nscheme: {precision: float32}\n"
		   "duration: 0.0002\ngeometry: {box: [%.2f, %.2f, %.2f]}\n"
		   "materials: {w: {absorption: 0.2}}\nsurfaces: {default: w}\n"
		   "sources: [{name: S, position: [1.1, 1.2, 1.3]}]\n"
		   "receivers: [{name: R, position: [2.1, 2.2, 2.3]}]\n"
		   "output:\n  dir: %s/%s\n", name, side, side, side, dir, name);
	fclose(f);
}

/*
 * Device memory (app_check_device, cuda_create): a room whose fields need more than the GPU
 * has is refused before its grid is built, naming the grid key and the device, with no
 * outputs; one whose fields fit but not diamond's tables beside them runs, kernel auto
 * leaving diamond out and saying why. Each cube sized from the device's memory (the fields,
 * class bytes and bits 9.1 bytes a cell, diamond's tables 1 more); skipped where the host's
 * memory is what refuses first.
 */
void device_memory_on_gpu(void **state)
{
	char dir[] = "/tmp/roomsim-gpu-mem-XXXXXX", log[600];
	size_t total = 0;

	(void)state;
	if (quick || only_kernels)
		skip();
	assert_true(cuda_available(NULL, 0, &total));
	assert_non_null(mkdtemp(dir));
	write_cube(dir, "over", 1.25 * (double)total / 9.1);
	snprintf(log, sizeof(log), "%s/over.log", dir);
	assert_int_equal(sh("%s run %s/over.yaml -q --backend cuda > %s 2>&1", roomsim, dir, log),
			 2);	/* bad input (docs/cli.md) */
	if (!in_log(log, "device memory")) {
		print_message("# the host's memory refused the room first: %s\n", log);
		assert_true(in_log(log, "of memory"));
		skip();
	}
	assert_true(in_log(log, "over.yaml:2:") && in_log(log, "grid:") &&
		    in_log(log, "the GPU (") && in_log(log, "valid:"));
	assert_int_not_equal(sh("test -e %s/over/S_R.wav", dir), 0);
	sh("cat %s >&2", log);
	write_cube(dir, "tight", (double)total / 9.6);
	snprintf(log, sizeof(log), "%s/tight.log", dir);
	assert_int_equal(sh("%s run %s/tight.yaml --backend cuda > %s 2>&1", roomsim, dir, log), 0);
	sh("grep -E 'kernel (diamond|auto)|took' %s >&2", log);
	assert_true(in_log(log, "do not fit beside the fields"));
	assert_int_equal(sh("test -s %s/tight/S_R.wav", dir), 0);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}
