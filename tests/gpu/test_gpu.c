/*
 * test_gpu - every CUDA kernel against the CPU engine, field by field (make gpu-test, on a
 * machine with a GPU). For each kernel, precision and room (rigid box, absorbing box, an
 * L-shaped room with a stepped ceiling built from the flags), the receivers and the whole
 * field after STEPS steps must match within the tolerances of docs/kernels.md (and a room of
 * shapes voxelised with its curved walls' surface-area corrections); the energy
 * of a rigid room is conserved on the GPU as on the CPU. The fcc scheme runs on its own
 * folded kernel (fcc_lattice).
 *
 * Every kernel keeps a uniform field exactly uniform, and runs LONG_STEPS float32 steps of a
 * small absorbing room and 2 s of a 10^7-cell mesh room at 2 kHz without growing
 * (docs/physics.md, "A uniform field stays uniform").
 *
 * ROOMSIM_GPU_QUICK=1 runs a few short cases, for compute-sanitizer; ROOMSIM_GPU_TESTS and
 * ROOMSIM_GPU_SKIP run only the tests whose names match a pattern (* and ?), or all others.
 */
#include "gpu.h"

#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../solver/signal.h"
#include "../../solver/wall.h"

int quick;
const char *roomsim;	/* the binary, for the run tests: $ROOMSIM or build/roomsim */
const char *only_kernels;	/* ROOMSIM_GPU_KERNELS=PREFIX: only kernels named PREFIX... */

const char *const rooms[] = {
	/* rigid box */
	"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
	"geometry: {box: [3.1, 1.7, 1.3]}\n"
	"sources: [{name: S, position: [0.73, 0.61, 0.52], highpass: 0}]\n"
	"receivers: [{name: A, position: [2.41, 1.13, 0.77]}, {name: B, position: [0.3, 1.5, 1.1]}]\n",
	/* absorbing box, floor and x1 of other materials */
	"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
	"geometry: {box: [3.1, 1.7, 1.3]}\n"
	"materials: {w: {absorption: 0.3}, f: {admittance: 0.02}, g: {reflection: 0.5}}\n"
	"surfaces: {default: w, floor: f, x1: g}\n"
	"sources: [{name: S, position: [0.73, 0.61, 0.52], signal: ricker, fc: 300}]\n"
	"receivers: [{name: A, position: [2.41, 1.13, 0.77]}, {name: B, position: [0.3, 1.5, 1.1]}]\n",
	/* the same absorbing box, carved into an L with a stepped ceiling below */
	"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
	"geometry: {box: [3.1, 1.7, 1.3]}\n"
	"materials: {w: {absorption: 0.2}}\n"
	"surfaces: {default: w}\n"
	"sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
	"receivers: [{name: A, position: [2.41, 0.43, 0.37]}, {name: B, position: [0.3, 1.5, 0.6]}]\n",
	/* a room of shapes (voxelise.c): a box with a sphere added and a pillar removed, its
	 * walls tilted and curved, so the kinds carry surface-area corrections */
	"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
	"geometry: {shapes: [{add: box, min: [0, 0, 0], max: [2.6, 1.7, 1.3]},\n"
	"  {add: sphere, center: [2.6, 0.85, 0.65], radius: 0.6, material: g},\n"
	"  {remove: cylinder, center: [1.6, 0.9, 0], radius: 0.2, height: 1.3, material: f}]}\n"
	"materials: {w: {absorption: 0.2}, f: {admittance: 0.02}, g: {reflection: 0.5}}\n"
	"surfaces: {default: w}\n"
	"sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
	"receivers: [{name: A, position: [2.81, 0.93, 0.67]}, {name: B, position: [0.3, 1.5, 1.1]}]\n",
	/* a tall absorbing shaft, 140 cells high: the diamond kernel gives rooms of 128 cells or
	 * more their floor and ceiling in one warp (diamond.cu); receivers by the source and at
	 * both ends. Not in the quick runs: receiver B is 3.1 m from the source, and the 40
	 * quick steps carry sound 1.2 m, so its reference is silent, which rel_diff refuses. */
	"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
	"geometry: {box: [1.0, 0.9, 7.0]}\n"
	"materials: {w: {absorption: 0.3}, f: {admittance: 0.02}}\n"
	"surfaces: {default: w, floor: f}\n"
	"sources: [{name: S, position: [0.42, 0.34, 3.86]}]\n"
	"receivers: [{name: A, position: [0.52, 0.4, 3.6]}, {name: B, position: [0.24, 0.6, 6.92]},\n"
	"  {name: C, position: [0.62, 0.44, 0.08]}]\n",
	/* a tower 600 cells high, more than a block of the diamond kernel holds in either
	 * precision at tile size 2 (512 and 384 threads), so its towers split in z; the source
	 * and receiver A sit either side of the split (cell 320 of 2 blocks of 320 threads) */
	"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
	"geometry: {box: [0.6, 0.5, 30.0]}\n"
	"materials: {w: {absorption: 0.3}, f: {admittance: 0.02}}\n"
	"surfaces: {default: w, floor: f}\n"
	"sources: [{name: S, position: [0.32, 0.21, 15.62]}]\n"
	"receivers: [{name: A, position: [0.27, 0.3, 16.41]}, {name: B, position: [0.4, 0.2, 15.1]}]\n",
};
const char *const room_names[] = { "rigid", "absorbing", "L-shaped", "shapes", "tall",
					  "tower" };

/* The L: no cells with x > 1.6 and y > 0.9; a lowered ceiling (z > 0.8) where x < 1.0. */
void carve(struct sim *s)
{
	sim_carve_l(s, 1.6, 0.9, 0.8, 1.0);
}

struct result {
	double *rec[2];		/* receiver signals */
	double *cur, *prev;	/* the last two levels */
};

static void result_free(struct result *r)
{
	free(r->rec[0]);
	free(r->rec[1]);
	free(r->cur);
	free(r->prev);
}

/* Run room r on an engine made from setup; keep the receivers and both last levels. */
static void run(struct sim *s, struct fdtd_setup *setup, long steps, struct result *out)
{
	struct fdtd *f;
	struct rs_error err = { 0 };
	double *sig = malloc((size_t)steps * sizeof(double));
	const size_t cells = s->grid->plan.cells;

	assert_non_null(sig);
	f = fdtd_create(setup, &err);
	if (!f)
		fail_msg("%s", err.msg);
	for (int q = 0; q < 2; q++)
		assert_int_equal(fdtd_add_receiver(f, s->room->receivers[q].pos), q);
	assert_int_equal(fdtd_reserve(f, (size_t)steps + 1), 0);
	sig_source(&s->room->sources[0], s->dt, (size_t)steps, sig);
	assert_int_equal(fdtd_add_source(f, s->room->sources[0].pos, sig, (size_t)steps), 0);
	for (long done = 0; done < steps; done += CHUNK)
		if (fdtd_advance(f, steps - done < CHUNK ? steps - done : CHUNK, NULL))
			fail_msg("advance: %s", fdtd_error(f));
	if (setup->cuda && fdtd_kernel(f) != KERNEL_DIAMOND && steps >= 2 * CHUNK) {
		const char *why;
		const long g = fdtd_graph_steps(f, &why);

		if (g < steps / 2)	/* the graphs ran most steps: this test covers them */
			fail_msg("%s: %ld of %ld steps as CUDA graphs (%s)",
				 kernel_names[fdtd_kernel(f)], g, steps, why);
	}
	for (int q = 0; q < 2; q++) {
		out->rec[q] = malloc(((size_t)steps + 1) * sizeof(double));
		assert_non_null(out->rec[q]);
		memcpy(out->rec[q], fdtd_receiver(f, q), ((size_t)steps + 1) * sizeof(double));
	}
	out->cur = malloc(cells * sizeof(double));
	out->prev = malloc(cells * sizeof(double));
	assert_non_null(out->cur);
	assert_non_null(out->prev);
	fdtd_field(f, 0, out->cur);
	fdtd_field(f, 1, out->prev);
	assert_string_equal(fdtd_error(f), "");
	fdtd_destroy(f);
	free(sig);
}

/* max |a - b| / max |b| over n values */
double rel_diff(const double *a, const double *b, size_t n)
{
	double d = 0, peak = 0;

	for (size_t i = 0; i < n; i++) {
		if (isnan(a[i]))
			return INFINITY;
		d = fmax(d, fabs(a[i] - b[i]));
		peak = fmax(peak, fabs(b[i]));
	}
	assert_true(peak > 0);	/* never compare silence */
	return d / peak;
}

/*
 * The receivers' and the field's errors of got against ref after steps steps, printed as
 * "# LABEL: receivers E, field E" (and "bitwise equal" when both are 0); fails the test when
 * either passes tol. LABEL is a printf format and its arguments.
 */
static void judge(const struct result *got, const struct result *ref, long steps, size_t cells,
		  double tol, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void judge(const struct result *got, const struct result *ref, long steps, size_t cells,
		  double tol, const char *fmt, ...)
{
	const double e_rec = fmax(rel_diff(got->rec[0], ref->rec[0], (size_t)steps + 1),
				  rel_diff(got->rec[1], ref->rec[1], (size_t)steps + 1));
	const double e_field = fmax(rel_diff(got->cur, ref->cur, cells),
				    rel_diff(got->prev, ref->prev, cells));
	char label[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	print_message("# %s: receivers %.2e, field %.2e%s\n", label, e_rec, e_field,
		      e_rec == 0 && e_field == 0 ? " (bitwise equal)" : "");
	if (e_rec > tol || e_field > tol)
		fail_msg("%s: error %.3e / %.3e over %.0e", label, e_rec, e_field, tol);
}

/* The box of the larger-stencil cases with a scheme and a wall material. */
static void box_yaml(char *yaml, size_t len, int prec, const char *scheme, const char *wall)
{
	snprintf(yaml, len,
		 "grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
		 "scheme: {precision: %s, %s}\n"
		 "geometry: {box: [3.1, 1.7, 1.3]}\n"
		 "materials: {w: %s}\nsurfaces: {default: w}\n"
		 "sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
		 "receivers: [{name: A, position: [2.41, 1.13, 0.77]}, "
		 "{name: B, position: [0.3, 1.5, 1.1]}]\n",
		 prec == 4 ? "float32" : "float64", scheme, wall);
}

/* Compare every kernel (or only `only`) with the CPU on room r in one precision. */
static void compare_room(int r, int precision, int only, size_t tex_limit, int bx, int by,
			 int dts, int nt, int split)
{
	struct sim *s = sim_open(rooms[r]);
	struct fdtd_setup cpu = { .grid = s->grid, .lambda = s->lambda, .precision = precision };
	struct result ref;
	const long steps = quick ? 40 : STEPS;
	const double tol = precision == 4 ? TOL_F32 : TOL_F64;
	const size_t cells = s->grid->plan.cells;

	if (r == 2)
		carve(s);
	run(s, &cpu, steps, &ref);
	for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
		struct fdtd_setup gpu = cpu;
		struct result got;

		/* all: the 7-point seed kernels; diamond has its own cases */
		if (only >= 0 ? k != only : k >= KERNEL_GENERAL)
			continue;
		gpu.cuda = 1;
		gpu.dts = dts;
		gpu.nt = nt;
		gpu.split = split;
		gpu.kernel = (enum kernel_id)k;
		gpu.tex_limit = tex_limit;
		gpu.block[0] = bx;
		gpu.block[1] = by;
		run(s, &gpu, steps, &got);
		if (k == KERNEL_DIAMOND)
			judge(&got, &ref, steps, cells, tol, "%-9s %s diamond dts %d nt %-3d split %d",
			      room_names[r], precision == 4 ? "f32" : "f64", dts, nt, split);
		else
			judge(&got, &ref, steps, cells, tol, "%-9s %s %-16s block %dx%d%s",
			      room_names[r], precision == 4 ? "f32" : "f64", kernel_names[k], bx,
			      by, tex_limit ? " small textures" : "");
		result_free(&got);
	}
	result_free(&ref);
	sim_close(s);
}

#define CASE(name, r, prec)                                   \
	static void name(void **state)                        \
	{                                                     \
		(void)state;                                  \
		compare_room(r, prec, -1, 0, 32, 8, 0, 0, 0); \
	}
CASE(rigid_f32, 0, 4)
CASE(rigid_f64, 0, 8)
CASE(absorbing_f32, 1, 4)
CASE(absorbing_f64, 1, 8)
CASE(lshaped_f32, 2, 4)
CASE(lshaped_f64, 2, 8)
CASE(shapes_f32, 3, 4)
CASE(shapes_f64, 3, 8)

/*
 * Materials given by band (solver/branch.h): every kernel with branch walls, in a box
 * (a different material on three faces, so edges and corners carry two and three), in the
 * carved L, in the room of shapes (walls with surface-area corrections) and in the seminar
 * mesh, both precisions; the leggy stencil through its kernels, and the fcc kernels in the
 * box, the room of shapes and the mesh;
 * the fields and receivers against the CPU engine; diamond among them, whose towers update
 * the branches cell by cell (in float32 also with other tile sizes and other intervals at
 * which its towers publish their levels).
 */
#define BAND_MATERIALS \
	"materials: {w: {absorption: {125: 0.1, 250: 0.15, 500: 0.25, 1000: 0.3}},\n" \
	"  f: {library: carpet_6mm_open_cell_foam}, g: {library: microperforated_glass_sheets}}\n"

static void band_materials(void **state)
{
	static const char *const band_rooms[] = {
		"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
		"geometry: {box: [3.1, 1.7, 1.3]}\n" BAND_MATERIALS
		"surfaces: {default: w, floor: f, x1: g}\n"
		"sources: [{name: S, position: [0.73, 0.61, 0.52], signal: ricker, fc: 300}]\n"
		"receivers: [{name: A, position: [2.41, 1.13, 0.77]}, "
		"{name: B, position: [0.3, 1.5, 1.1]}]\n",
		"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
		"geometry: {box: [3.1, 1.7, 1.3]}\n" BAND_MATERIALS
		"surfaces: {default: w, floor: f}\n"
		"sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
		"receivers: [{name: A, position: [2.41, 0.43, 0.37]}, "
		"{name: B, position: [0.3, 1.5, 0.6]}]\n",
		"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"
		"geometry: {shapes: [{add: box, min: [0, 0, 0], max: [2.6, 1.7, 1.3]},\n"
		"  {add: sphere, center: [2.6, 0.85, 0.65], radius: 0.6, material: g},\n"
		"  {remove: cylinder, center: [1.6, 0.9, 0], radius: 0.2, height: 1.3, "
		"material: f}]}\n" BAND_MATERIALS
		"surfaces: {default: w}\n"
		"sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
		"receivers: [{name: A, position: [2.81, 0.93, 0.67]}, "
		"{name: B, position: [0.3, 1.5, 1.1]}]\n",
		/* the mesh room of mesh_room_on_gpu, at 500 Hz */
		"grid: {fmax: 500}\nduration: 1\n"
		"geometry: {mesh: tests/gpu/rooms/seminar.obj}\n" BAND_MATERIALS
		"surfaces: {default: w}\n"
		"sources: [{name: S, position: [1.1, 0.9, 1.5]}]\n"
		"receivers: [{name: A, position: [2.9, 1.2, 1.2]}, "
		"{name: B, position: [1.0, 2.6, 1.4]}]\n",
	};
	static const char *const names[] = { "box", "L-shaped", "shapes", "seminar mesh",
					     "box leggy 4", "box fcc", "shapes fcc", "seminar fcc" };
	/* the room of each case: fcc in the box, the room of shapes and the mesh */
	static const int room_of[] = { 0, 1, 2, 3, 0, 0, 2, 3 };
	const long steps = quick ? 40 : STEPS;

	(void)state;
	for (int r = 0; r < 8; r++)
		for (int prec = 4; prec <= 8; prec += 4) {
			char yaml[2048];
			struct sim *s;
			struct fdtd_setup cpu;
			struct result ref;
			const double tol = prec == 4 ? TOL_F32 : TOL_F64;
			/* leggy order 4: reach 2, whole shells */
			const struct kernel_need need = { r >= 5, r == 4, r == 4, r == 4 ? 2 : 0, 0 };

			snprintf(yaml, sizeof(yaml), "%sscheme: {precision: %s%s}\n",
				 band_rooms[room_of[r]], prec == 4 ? "float32" : "float64",
				 r == 4 ? ", stencil: leggy, order: 4" : r >= 5 ? ", stencil: fcc" : "");
			s = sim_open(yaml);
			if (r == 1)
				carve(s);
			cpu = (struct fdtd_setup){ .grid = s->grid, .stencil = &s->stencil,
						   .lambda = s->lambda, .precision = prec,
						   .banks = s->banks->bank,
						   .nbanks = s->room->nmaterials, .dt = s->dt };
			run(s, &cpu, steps, &ref);
			for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
				struct fdtd_setup gpu = cpu;
				struct result got;
				char why[256];

				gpu.cuda = 1;
				gpu.kernel = (enum kernel_id)k;
				if (kernel_why((enum kernel_id)k, &need, why, sizeof(why)))
					continue;
				run(s, &gpu, steps, &got);
				judge(&got, &ref, steps, s->grid->plan.cells, tol,
				      "bands %-11s %s %-16s", names[r], prec == 4 ? "f32" : "f64",
				      kernel_names[k]);
				result_free(&got);
				if (k != KERNEL_DIAMOND || prec != 4 || r >= 4)
					continue;
				/* k_dt7's towers publishing their levels at every level (the closest
				 * interleaving of successive stages) and only at their ends (whole
				 * towers awaited), on tile sizes 1 to 3 (the node cache's places
				 * a power of 2 or not) */
				for (int pub = 0; pub <= 1; pub++)
					for (int dts = 1; dts <= 3; dts++) {
						setenv("ROOMSIM_DT_PUBLISH", pub ? "1" : "0", 1);
						gpu.dts = dts;
						run(s, &gpu, steps, &got);
						unsetenv("ROOMSIM_DT_PUBLISH");
						judge(&got, &ref, steps, s->grid->plan.cells, tol,
						      "bands %-11s f32 diamond dts %d, published %s",
						      names[r], dts, pub ? "every level" : "at the end");
						result_free(&got);
					}
				if (r == 3) {	/* the mesh room's towers split over two blocks */
					gpu.dts = 1;
					gpu.split = 2;
					run(s, &gpu, steps, &got);
					judge(&got, &ref, steps, s->grid->plan.cells, tol,
					      "bands %-11s f32 diamond dts 1, split 2", names[r]);
					result_free(&got);
					gpu.split = 0;
				}
				gpu.dts = 0;
			}
			result_free(&ref);
			sim_close(s);
		}
}

/*
 * grid.walls: fitted (docs/physics.md, "Fitted walls"): every per-step kernel of the 7-point
 * scheme with the cut cells' passes (solver/cuda/cut.cu), against the CPU engine, in a room of
 * shapes whose walls lie on no cell face (scalar walls, then band materials, whose branch
 * walls update the cut groups) and in the seminar mesh with band materials, both precisions;
 * then both fcc kernels with the lattice's cut cells in the room of shapes (scalar walls) and
 * in the seminar mesh (band materials). diamond is refused with the reason.
 */
static void fitted_walls_on_gpu(void **state)
{
	static const char *const fit_rooms[] = {
		"grid: {spacing: 0.045, walls: fitted}\nduration: 1\n"
		"geometry: {shapes: [{add: box, min: [0, 0, 0], max: [2.63, 1.71, 1.33]},\n"
		"  {add: sphere, center: [2.6, 0.85, 0.65], radius: 0.6, material: g},\n"
		"  {remove: cylinder, center: [1.6, 0.9, 0], radius: 0.2, height: 1.3, "
		"material: f}]}\n"
		"materials: {w: {absorption: 0.1}, f: {absorption: 0.4}, g: {absorption: 0.2}}\n"
		"surfaces: {default: w}\n"
		"sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
		"receivers: [{name: A, position: [2.81, 0.93, 0.67]}, "
		"{name: B, position: [0.3, 1.5, 1.1]}]\n",
		"grid: {spacing: 0.045, walls: fitted}\nduration: 1\n"
		"geometry: {shapes: [{add: box, min: [0, 0, 0], max: [2.63, 1.71, 1.33]},\n"
		"  {add: sphere, center: [2.6, 0.85, 0.65], radius: 0.6, material: g},\n"
		"  {remove: cylinder, center: [1.6, 0.9, 0], radius: 0.2, height: 1.3, "
		"material: f}]}\n" BAND_MATERIALS
		"surfaces: {default: w}\n"
		"sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
		"receivers: [{name: A, position: [2.81, 0.93, 0.67]}, "
		"{name: B, position: [0.3, 1.5, 1.1]}]\n",
		"grid: {fmax: 500, walls: fitted}\nduration: 1\n"
		"geometry: {mesh: tests/gpu/rooms/seminar.obj}\n" BAND_MATERIALS
		"surfaces: {default: w}\n"
		"sources: [{name: S, position: [1.1, 0.9, 1.5]}]\n"
		"receivers: [{name: A, position: [2.9, 1.2, 1.2]}, "
		"{name: B, position: [1.0, 2.6, 1.4]}]\n",
	};
	static const char *const names[] = { "shapes", "shapes bands", "seminar bands",
					     "fcc shapes", "fcc seminar bands" };
	static const int room_of[] = { 0, 1, 2, 0, 2 };
	const long steps = quick ? 40 : STEPS;

	(void)state;
	for (int r = 0; r < 5; r++)
		for (int prec = 4; prec <= 8; prec += 4) {
			const int fcc = r >= 3, bands = room_of[r] > 0;
			const struct kernel_need need = { fcc, 0, 0, 0, 0 };
			char yaml[2048];
			struct sim *s;
			struct fdtd_setup cpu;
			struct result ref;
			const double tol = prec == 4 ? TOL_F32 : TOL_F64;

			snprintf(yaml, sizeof(yaml), "%sscheme: {precision: %s%s}\n",
				 fit_rooms[room_of[r]], prec == 4 ? "float32" : "float64",
				 fcc ? ", stencil: fcc" : "");
			s = sim_open(yaml);
			assert_non_null(s->grid->cut);
			assert_int_equal(s->grid->cut->faces, fcc ? 12 : 6);
			cpu = (struct fdtd_setup){ .grid = s->grid, .stencil = fcc ? &s->stencil : NULL,
						   .lambda = s->lambda, .precision = prec,
						   .banks = bands ? s->banks->bank : NULL,
						   .nbanks = bands ? s->room->nmaterials : 0,
						   .dt = s->dt };
			run(s, &cpu, steps, &ref);
			for (int k = KERNEL_AUTO + 1; k < NKERNELS; k++) {
				struct fdtd_setup gpu = cpu;
				struct result got;
				struct rs_error err = { 0 };
				char why[256];
				struct fdtd *f;

				gpu.cuda = 1;
				gpu.kernel = (enum kernel_id)k;
				if (kernel_why((enum kernel_id)k, &need, why, sizeof(why)))
					continue;
				if (k == KERNEL_DIAMOND) {
					f = fdtd_create(&gpu, &err);
					print_message("# fitted %s: diamond: %s\n", names[r],
						      f ? "ran" : err.msg);
					assert_null(f);
					assert_non_null(strstr(err.msg, "fitted walls"));
					continue;
				}
				run(s, &gpu, steps, &got);
				judge(&got, &ref, steps, s->grid->plan.cells, tol,
				      "fitted %-13s %s %-16s", names[r], prec == 4 ? "f32" : "f64",
				      kernel_names[k]);
				result_free(&got);
			}
			result_free(&ref);
			sim_close(s);
		}
}

/*
 * Stencils that reach further (docs/stencils.md) through the general kernel (seed 000
 * KernelA), the leggy ones (KernelB and the tiles of seeds 001/004) for leggy stencils and the
 * shell tiles for stencils of reach 1 to 3, against the CPU engine.
 */
static void larger_stencils(void **state)
{
	static const struct {
		const char *yaml;
		int leggy, shells, reach;	/* which kernel families run it; its reach */
	} schemes[] = {
		{ "stencil: leggy, order: 4", 1, 1, 2 },
		{ "stencil: leggy, order: 8", 1, 0, 4 },
		{ "stencil: compact, radius2: 3", 0, 1, 1 },
		{ "stencil: box, q: [2, 2, 2]", 0, 1, 2 },
		{ "stencil: interpolated, variant: IWB", 0, 1, 1 },
		{ "stencil: compact, radius2: 9", 0, 1, 3 },
	};
	/* the last passes: the tile kernels with blocks shallower than the reach */
	static const struct {
		enum kernel_id k;
		int bx, by;
	} passes[] = {
		{ KERNEL_GENERAL, 32, 8 },	     { KERNEL_LEGGY, 32, 8 },
		{ KERNEL_LEGGY_SHARED, 32, 8 },  { KERNEL_LEGGY_SHARED2, 32, 8 },
		{ KERNEL_SHELL_SHARED, 32, 8 },  { KERNEL_LEGGY_SHARED, 64, 4 },
		{ KERNEL_LEGGY_SHARED2, 64, 4 }, { KERNEL_SHELL_SHARED, 64, 2 },
		{ KERNEL_SHELL_VEC, 32, 8 },     { KERNEL_SHELL_VEC, 64, 2 },
	};
	static const char *const walls[] = { "{admittance: 0}", "{absorption: 0.3}" };
	const int nschemes = (int)(sizeof(schemes) / sizeof(schemes[0]));
	char yaml[1024];

	(void)state;
	for (int sc = 0; sc < nschemes; sc++)
		for (int wl = 0; wl < 2; wl++)
			for (int prec = 4; prec <= 8; prec += 4) {
				struct sim *s;
				struct fdtd_setup cpu;
				struct result ref;
				const long steps = quick ? 100 : STEPS;	/* the sound reaches A */
				const double tol = prec == 4 ? TOL_F32 : TOL_F64;

				/* quick (sanitizers): rigid float32 only, reach 1, 2 and 3 (racecheck
				 * is slow) */
				if (quick && (wl || prec == 8 || sc == 1 || sc == 3 || sc == 4))
					continue;
				box_yaml(yaml, sizeof(yaml), prec, schemes[sc].yaml, walls[wl]);
				s = sim_open(yaml);
				cpu = (struct fdtd_setup){ .grid = s->grid, .stencil = &s->stencil,
							   .lambda = s->lambda, .precision = prec };
				run(s, &cpu, steps, &ref);
				for (size_t v = 0; v < sizeof(passes) / sizeof(passes[0]); v++) {
					const enum kernel_id k = passes[v].k;
					const int leggy = k == KERNEL_LEGGY ||
							  k == KERNEL_LEGGY_SHARED ||
							  k == KERNEL_LEGGY_SHARED2;
					const int shells = k == KERNEL_SHELL_SHARED;
					const int vec = k == KERNEL_SHELL_VEC;
					struct fdtd_setup gpu = cpu;
					struct result got;
					const size_t cells = s->grid->plan.cells;

					if ((leggy && !schemes[sc].leggy) || (shells && !schemes[sc].shells) ||
					    (vec && schemes[sc].reach != 1) ||
					    (only_kernels &&
					     strncmp(kernel_names[k], only_kernels, strlen(only_kernels))))
						continue;
					gpu.cuda = 1;
					gpu.kernel = k;
					gpu.block[0] = passes[v].bx;
					gpu.block[1] = passes[v].by;
					run(s, &gpu, steps, &got);
					judge(&got, &ref, steps, cells, tol,
					      "%-30s %s %s %-13s block %dx%d", s->stencil.name,
					      wl ? "absorbing" : "rigid    ", prec == 4 ? "f32" : "f64",
					      kernel_names[k], gpu.block[0], gpu.block[1]);
					result_free(&got);
				}
				result_free(&ref);
				sim_close(s);
			}
}

/*
 * A row of five one-cell cubes removed from s's room at 5 cm, two cells apart along x from
 * the node at (0.325, 0.325, 0.325) m: runs of room cells shorter than a leggy stencil's
 * reach between them.
 */
static void pits(struct sim *s)
{
	struct rs_error err = { 0 };

	for (int m = 0; m < 5; m++) {
		const double lo[3] = { 0.31 + 0.15 * m, 0.31, 0.31 },
			     hi[3] = { 0.34 + 0.15 * m, 0.34, 0.34 };

		assert_int_equal(vox_carve(s->grid, s->room, lo, hi, 0, &err), 0);
	}
}

/*
 * Larger stencils in the carved L-shaped room with a row of pits (above): the leggy stencils'
 * legs folded along their lines (fdtd.c, set_lines), the others' fallback cells near the
 * carved walls (set_fallback), through the general kernel, through the shell kernels (which
 * leave those cells, and the fallback cells' touch cells, to general's list kernel), and
 * auto. The Courant numbers keep lambda at most 1/sqrt(3), the fallback cells' limit; the
 * leggy stencils run at their own.
 */
static void carved_larger_stencils(void **state)
{
	static const struct {
		const char *scheme, *courant;
		int reach;
	} schemes[] = {
		{ "stencil: leggy, order: 4", "0.999", 2 },
		{ "stencil: leggy, order: 8", "0.999", 4 },
		{ "stencil: compact, radius2: 3", "0.69", 1 },
		{ "stencil: box, q: [2, 2, 2]", "0.43", 2 },
		{ "stencil: interpolated, variant: IWB", "0.577", 1 },
	};
	/* the shell kernels first: their list kernel must bring general.cu's constants to its
	 * own engine, not find them left there by a general run of the same room */
	static const enum kernel_id kerns[] = { KERNEL_SHELL_SHARED, KERNEL_SHELL_VEC,
						KERNEL_GENERAL, KERNEL_AUTO };
	char yaml[1024];

	(void)state;
	if (only_kernels && strncmp("general", only_kernels, strlen(only_kernels)) &&
	    strncmp("shell", only_kernels, strlen(only_kernels)))
		skip();
	for (size_t sc = 0; sc < sizeof(schemes) / sizeof(schemes[0]); sc++)
		for (int prec = 4; prec <= 8; prec += 4)
			for (int kern = 0; kern < 4; kern++) {
				struct sim *s;
				struct fdtd_setup cpu, gpu;
				struct result ref, got;
				const long steps = quick ? 100 : STEPS;
				const double tol = prec == 4 ? TOL_F32 : TOL_F64;

				if (quick && (prec == 8 || kerns[kern] == KERNEL_AUTO || sc > 2))
					continue;
				if ((kerns[kern] == KERNEL_SHELL_VEC && schemes[sc].reach > 1) ||
				    (kerns[kern] == KERNEL_SHELL_SHARED && schemes[sc].reach > 3))
					continue;	/* shell-vec runs reach 1, shell-shared 1 to 3 */
				snprintf(yaml, sizeof(yaml),
					 "grid: {spacing: 0.05, courant: %s}\nduration: 1\n"
					 "scheme: {precision: %s, %s}\n"
					 "geometry: {box: [3.1, 1.7, 1.3]}\n"
					 "materials: {w: {absorption: 0.2}}\nsurfaces: {default: w}\n"
					 "sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"
					 "receivers: [{name: A, position: [2.41, 0.43, 0.37]}, "
					 "{name: B, position: [0.3, 1.5, 0.6]}]\n",
					 schemes[sc].courant, prec == 4 ? "float32" : "float64",
					 schemes[sc].scheme);
				s = sim_open(yaml);
				carve(s);
				pits(s);
				cpu = (struct fdtd_setup){ .grid = s->grid, .stencil = &s->stencil,
							   .lambda = s->lambda, .precision = prec };
				gpu = cpu;
				gpu.cuda = 1;
				gpu.kernel = kerns[kern];
				run(s, &cpu, steps, &ref);
				run(s, &gpu, steps, &got);
				judge(&got, &ref, steps, s->grid->plan.cells, tol, "%-30s L-shaped %s %-12s",
				      s->stencil.name, prec == 4 ? "f32" : "f64", kernel_names[kerns[kern]]);
				result_free(&ref);
				result_free(&got);
				sim_close(s);
			}
}

/* Every room-cell value of the three mid planes of f's newest level, fdtd_plane's layout. */
static float *mid_planes(struct fdtd *f, const struct vox_plan *p, size_t *n)
{
	size_t at = 0;
	float *out;

	*n = (size_t)p->room[1] * p->room[2] + (size_t)p->room[0] * p->room[2] +
	     (size_t)p->room[0] * p->room[1];
	out = malloc(*n * sizeof(float));
	assert_non_null(out);
	for (int a = 0; a < 3; a++) {
		fdtd_plane(f, a, p->halo + p->room[a] / 2, out + at);
		at += (size_t)p->room[a == 2 ? 1 : 2] * p->room[a == 0 ? 1 : 0];
	}
	return out;
}

/*
 * How many values of a uniform field in s's room (two levels, at two values, on the nodes of an
 * fcc lattice) kernel k changes in 3 steps on the GPU in precision prec; *in_room gets how many
 * it held, which must not be 0.
 */
static size_t uniform_changed(struct sim *s, enum kernel_id k, int prec, size_t *in_room)
{
	static const double values[] = { 0.7315920591354370, -1234.5678910111213 };
	const struct vox_plan *p = &s->grid->plan;
	const struct fdtd_setup g = { .grid = s->grid, .stencil = &s->stencil, .lambda = s->lambda,
				      .precision = prec, .cuda = 1, .kernel = k };
	struct rs_error err = { 0 };
	struct fdtd *f = fdtd_create(&g, &err);
	double *u = malloc(p->cells * sizeof(double)), *got = malloc(p->cells * sizeof(double));
	size_t bad = 0;

	if (!f)
		fail_msg("%s", err.msg);
	assert_non_null(u);
	assert_non_null(got);
	*in_room = 0;
	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		const double c = prec == 4 ? (double)(float)values[v] : values[v];

		for (int kk = 0; kk < p->n[2]; kk++)
			for (int j = 0; j < p->n[1]; j++)
				for (int i = 0; i < p->n[0]; i++) {
					const size_t n = vox_index(p, i, j, kk);

					u[n] = s->grid->cls[n] != VOX_PAD &&
						       (!p->fcc || (i + j + kk) % 2 == 0) ? c : 0;
				}
		assert_int_equal(fdtd_set_field(f, u, u), 0);
		assert_int_equal(fdtd_advance(f, 3, NULL), 0);
		for (int older = 0; older < 2; older++) {
			fdtd_field(f, older, got);
			for (size_t n = 0; n < p->cells; n++) {
				*in_room += u[n] != 0;
				bad += got[n] != u[n];
			}
		}
	}
	assert_true(*in_room > 0);
	free(u);
	free(got);
	fdtd_destroy(f);
	return bad;
}

/* A rigid room of shapes: the box and sphere of rooms[3], with no materials. */
#define RIGID_SHAPES                                                                      \
	"grid: {spacing: 0.05, courant: 0.999}\nduration: 1\n"                             \
	"geometry: {shapes: [{add: box, min: [0, 0, 0], max: [2.6, 1.7, 1.3]},\n"          \
	"  {add: sphere, center: [2.6, 0.85, 0.65], radius: 0.6},\n"                       \
	"  {remove: cylinder, center: [1.6, 0.9, 0], radius: 0.2, height: 1.3}]}\n"        \
	"sources: [{name: S, position: [0.73, 0.61, 0.52]}]\n"                              \
	"receivers: [{name: A, position: [2.81, 0.93, 0.67]}, {name: B, position: [0.3, 1.5, 1.1]}]\n"

/*
 * The fcc scheme's folded kernels against the CPU engine: rigid and absorbing boxes (walls
 * through the nodes), the room of shapes, the seminar mesh and the auditorium's (walls on the
 * links, physics.md "FCC walls in carved rooms"), both precisions, two block shapes and auto;
 * then in the rigid box and the rigid room of shapes the snapshot planes (the cells between
 * the nodes are interpolated on the device), the energy over 5000 steps and a uniform field,
 * which stays.
 */
static void fcc_lattice(void **state)
{
	static const struct {
		enum kernel_id k;
		int bx, by;
	} passes[] = { { KERNEL_FCC, 32, 8 }, { KERNEL_FCC, 64, 2 },
		       { KERNEL_FCC_VEC, 32, 8 }, { KERNEL_FCC_VEC, 64, 2 },
		       { KERNEL_FCC_SPLIT, 32, 8 }, { KERNEL_FCC_SPLIT, 64, 2 },
		       { KERNEL_AUTO, 32, 8 } };
	static const char *const mesh_room =
		"grid: {fmax: 500}\nduration: 1\n"
		"geometry: {mesh: tests/gpu/rooms/seminar.obj}\n"
		"materials: {w: {absorption: 0.2}}\nsurfaces: {default: w}\n"
		"sources: [{name: S, position: [1.1, 0.9, 1.5]}]\n"
		"receivers: [{name: A, position: [2.9, 1.2, 1.2]}, {name: B, position: [1.0, 2.6, 1.4]}]\n";
	/* a fan's plan: many of fcc-split's blocks step a part of their slabs, some none */
	static const char *const fan_room =
		"grid: {fmax: 200}\nduration: 1\n"
		"geometry: {mesh: rooms/auditorium/auditorium.obj}\n"
		"materials: {w: {absorption: 0.2}}\nsurfaces: {default: w}\n"
		"sources: [{name: S, position: [3.0, 11.0, 2.5]}]\n"
		"receivers: [{name: A, position: [16.0, 13.0, 2.8]}, "
		"{name: B, position: [18.0, 2.0, 3.2]}]\n";
	const char *const lattice_rooms[] = { rooms[0], rooms[1], rooms[3], mesh_room, fan_room };
	static const char *const names[] = { "rigid", "absorbing", "shapes", "seminar mesh",
					     "auditorium mesh" };
	static const char *const rigid[] = { rooms[0], RIGID_SHAPES };
	char yaml[2048];

	(void)state;
	if (only_kernels && strncmp("fcc", only_kernels, strlen(only_kernels)))
		skip();
	for (int r = 0; r < 5; r++)
		for (int prec = 4; prec <= 8; prec += 4) {
			struct sim *s;
			struct fdtd_setup cpu;
			struct result ref;
			const long steps = quick ? 100 : STEPS;
			const double tol = prec == 4 ? TOL_F32 : TOL_F64;

			if (quick && (r == 1 || prec == 8))
				continue;
			snprintf(yaml, sizeof(yaml), "%sscheme: {stencil: fcc, precision: %s}\n",
				 lattice_rooms[r], prec == 4 ? "float32" : "float64");
			s = sim_open(yaml);
			assert_int_equal(s->grid->carved, r >= 2);
			cpu = (struct fdtd_setup){ .grid = s->grid, .stencil = &s->stencil,
						   .lambda = s->lambda, .precision = prec };
			run(s, &cpu, steps, &ref);
			for (size_t v = 0; v < sizeof(passes) / sizeof(passes[0]); v++) {
				struct fdtd_setup gpu = cpu;
				struct result got;

				gpu.cuda = 1;
				gpu.kernel = passes[v].k;
				gpu.block[0] = passes[v].bx;
				gpu.block[1] = passes[v].by;
				run(s, &gpu, steps, &got);
				judge(&got, &ref, steps, s->grid->plan.cells, tol,
				      "fcc %-12s %s %-7s block %dx%d", names[r],
				      prec == 4 ? "f32" : "f64", kernel_names[gpu.kernel],
				      gpu.block[0], gpu.block[1]);
				result_free(&got);
			}
			result_free(&ref);
			sim_close(s);
		}
	/* planes, energy and a uniform field: the rigid box and room of shapes */
	for (int r = 0; r < 2; r++) {
		struct sim *s;
		struct fdtd *f[2];
		float *pl[2];
		size_t n;
		double sig[1] = { 1 }, e0 = 0, worst = 0, diff = 0, peak = 0;
		struct rs_error err = { 0 };

		snprintf(yaml, sizeof(yaml), "%sscheme: {stencil: fcc, precision: float64}\n",
			 rigid[r]);
		s = sim_open(yaml);
		for (int g = 0; g < 2; g++) {
			struct fdtd_setup st = { .grid = s->grid, .stencil = &s->stencil,
						 .lambda = s->lambda, .precision = 8, .cuda = g,
						 .kernel = KERNEL_FCC };

			if (!(f[g] = fdtd_create(&st, &err)))
				fail_msg("%s", err.msg);
			assert_int_equal(fdtd_add_source(f[g], s->room->sources[0].pos, sig, 1), 0);
			assert_int_equal(fdtd_advance(f[g], 300, NULL), 0);
			pl[g] = mid_planes(f[g], &s->grid->plan, &n);
		}
		for (size_t i = 0; i < n; i++) {
			diff = fmax(diff, fabs(pl[1][i] - pl[0][i]));
			peak = fmax(peak, fabs(pl[0][i]));
		}
		print_message("# fcc planes, %s: GPU against CPU, max difference %.2e of the peak\n",
			      r ? "shapes" : "box", diff / peak);
		assert_true(peak > 0 && diff <= TOL_F64 * peak);
		e0 = fdtd_energy(f[1]);
		for (int step = 0; step < (quick ? 100 : ENERGY_STEPS); step += 100) {
			assert_int_equal(fdtd_advance(f[1], 100, NULL), 0);
			worst = fmax(worst, fabs(fdtd_energy(f[1]) - e0) / e0);
		}
		print_message("# fcc energy drift on the GPU, rigid %s, over %d steps: %.2e\n",
			      r ? "shapes" : "box", quick ? 100 : ENERGY_STEPS, worst);
		assert_true(e0 > 0 && worst < ENERGY_TOL);
		for (int g = 0; g < 2; g++) {
			free(pl[g]);
			fdtd_destroy(f[g]);
		}
		sim_close(s);
		for (int prec = 4; prec <= 8 && r; prec += 4)	/* the box's: uniform_field */
			for (int k = KERNEL_FCC; k <= KERNEL_FCC_SPLIT; k++) {
				size_t in_room;

				snprintf(yaml, sizeof(yaml), "%sscheme: {stencil: fcc, precision: %s}\n",
					 rooms[3], prec == 4 ? "float32" : "float64");
				s = sim_open(yaml);
				assert_int_equal(uniform_changed(s, (enum kernel_id)k, prec, &in_room),
						 0);
				print_message("# uniform field, %s shapes %s: %zu values stay\n",
					      kernel_names[k], prec == 4 ? "f32" : "f64", in_room);
				sim_close(s);
			}
	}
}

/* Textures of 6 slabs force the stacked sub-volumes of seed 003 section 4.2.2. */
static void texture_subvolumes(void **state)
{
	const size_t slab = 64 * 36;	/* cells of one z-slab of these rooms (with halo) */

	(void)state;
	for (int prec = 4; prec <= 8; prec += 4) {
		compare_room(2, prec, KERNEL_SLICE_TEXTURE, 6 * slab + 1024, 32, 8, 0, 0, 0);
		compare_room(2, prec, KERNEL_SLICE_SHARED_TEX, 6 * slab + 1024, 32, 8, 0, 0, 0);
	}
}

/* Another block shape: every kernel honours scheme.block. */
static void other_block_shape(void **state)
{
	(void)state;
	compare_room(2, 4, -1, 0, 64, 2, 0, 0, 0);
}

/* Kernel auto picks one of the kernels and gives the same result. */
static void auto_kernel(void **state)
{
	struct sim *s = sim_open(rooms[1]);
	struct fdtd_setup g = { .grid = s->grid, .lambda = s->lambda, .precision = 4, .cuda = 1,
				.kernel = KERNEL_AUTO };
	struct rs_error err = { 0 };
	struct fdtd *f;

	(void)state;
	f = fdtd_create(&g, &err);
	if (!f)
		fail_msg("%s", err.msg);
	print_message("# auto chose %s\n", kernel_names[fdtd_kernel(f)]);
	assert_true(fdtd_kernel(f) > KERNEL_AUTO && fdtd_kernel(f) < NKERNELS);
	fdtd_destroy(f);
	sim_close(s);
	compare_room(1, 4, -1, 0, 32, 8, 0, 0, 0);
}

/*
 * The DiamondTorre kernel (diamond.cu) on the five rooms in both precisions, with the default
 * tile and tower and with others whose height divides neither the 64-step chunks nor the 600
 * steps; towers split in z over clusters of blocks, in the shaft (140 cells) and the
 * 600-cell tower, which no block holds (its default split); a split that would leave a block
 * without cells refused; then the leggy stencils of order 4, 6 and 8 in rigid and absorbing
 * boxes.
 */
static void diamond_kernel(void **state)
{
	static const int shapes[][2] = { { 0, 0 }, { 1, 7 }, { 3, 16 }, { 4, 5 }, { 2, 1 } };
	/* room, dts, nt, split */
	static const int splits[][4] = { { 4, 2, 0, 2 }, { 4, 1, 7, 3 }, { 4, 2, 16, 5 },
					 { 5, 0, 0, 0 }, { 5, 2, 9, 3 }, { 5, 1, 32, 2 } };
	static const struct {
		const char *yaml;
		int dts;
	} leggy[] = {
		{ "stencil: leggy, order: 4", 1 }, { "stencil: leggy, order: 4", 2 },
		{ "stencil: leggy, order: 6", 1 }, { "stencil: leggy, order: 8", 1 },
	};
	static const char *const walls[] = { "{admittance: 0}", "{absorption: 0.3}" };
	char yaml[1024];

	(void)state;
	if (only_kernels && strncmp("diamond", only_kernels, strlen(only_kernels)))
		return;
	for (int r = 0; r < 5; r++)
		for (int prec = 4; prec <= 8; prec += 4)
			for (size_t v = 0; v < sizeof(shapes) / sizeof(shapes[0]); v++) {
				if (quick && (prec == 8 || v > 1 || r != 2))
					continue;
				compare_room(r, prec, KERNEL_DIAMOND, 0, 32, 8, shapes[v][0],
					     shapes[v][1], 0);
			}
	for (size_t v = 0; v < sizeof(splits) / sizeof(splits[0]); v++)
		for (int prec = 4; prec <= 8; prec += 4) {
			if (quick && (prec == 8 || splits[v][0] != 5))
				continue;	/* the shaft's far receiver is silent in 40 steps */
			compare_room(splits[v][0], prec, KERNEL_DIAMOND, 0, 32, 8, splits[v][1],
				     splits[v][2], splits[v][3]);
		}
	{
		struct sim *s = sim_open(rooms[4]);
		struct fdtd_setup gpu = { .grid = s->grid, .lambda = s->lambda, .precision = 4,
					  .cuda = 1, .kernel = KERNEL_DIAMOND, .split = 4 };
		struct rs_error err = { 0 };
		struct fdtd *f = fdtd_create(&gpu, &err);

		if (f)
			fail_msg("split 4 of a 140-cell room (blocks of 64: the last without cells) "
				 "ran");
		print_message("# diamond split 4 in the shaft refused: %s\n", err.msg);
		assert_non_null(strstr(err.msg, "valid here: 1, 2, 3, 5 blocks"));
		sim_close(s);
	}
	for (size_t sc = 0; sc < sizeof(leggy) / sizeof(leggy[0]); sc++)
		for (int wl = 0; wl < 2; wl++)
			for (int prec = 4; prec <= 8; prec += 4) {
				struct sim *s;
				struct fdtd_setup cpu, gpu;
				struct result ref, got;
				const long steps = quick ? 100 : STEPS;
				const double tol = prec == 4 ? TOL_F32 : TOL_F64;

				if (quick && (wl || prec == 8 || sc == 1))
					continue;
				box_yaml(yaml, sizeof(yaml), prec, leggy[sc].yaml, walls[wl]);
				s = sim_open(yaml);
				cpu = (struct fdtd_setup){ .grid = s->grid, .stencil = &s->stencil,
							   .lambda = s->lambda, .precision = prec };
				run(s, &cpu, steps, &ref);
				gpu = cpu;
				gpu.cuda = 1;
				gpu.kernel = KERNEL_DIAMOND;
				gpu.dts = leggy[sc].dts;
				gpu.nt = 9;	/* divides neither the chunks nor the steps */
				run(s, &gpu, steps, &got);
				judge(&got, &ref, steps, s->grid->plan.cells, tol,
				      "%-24s %s %s diamond dts %d nt 9", s->stencil.name,
				      wl ? "absorbing" : "rigid    ", prec == 4 ? "f32" : "f64", gpu.dts);
				result_free(&got);
				result_free(&ref);
				sim_close(s);
			}
}

/*
 * The kernels and schemes of the uniform-field and long-run cases: every kernel once, on
 * the scheme it runs (dts and nt for diamond: 0, the defaults).
 */
static const struct {
	enum kernel_id k;
	const char *scheme;
} each_kernel[] = {
	{ KERNEL_NAIVE3D, "stencil: leggy, order: 2" },
	{ KERNEL_TILED_GLOBAL, "stencil: leggy, order: 2" },
	{ KERNEL_TILED_SHARED, "stencil: leggy, order: 2" },
	{ KERNEL_SLICE_NAIVE, "stencil: leggy, order: 2" },
	{ KERNEL_SLICE_TEXTURE, "stencil: leggy, order: 2" },
	{ KERNEL_SLICE_LDG, "stencil: leggy, order: 2" },
	{ KERNEL_SLICE_SHARED, "stencil: leggy, order: 2" },
	{ KERNEL_SLICE_SHARED_TEX, "stencil: leggy, order: 2" },
	{ KERNEL_SLICE_VEC, "stencil: leggy, order: 2" },
	{ KERNEL_DIAMOND, "stencil: leggy, order: 2" },
	{ KERNEL_DIAMOND, "stencil: leggy, order: 4" },
	{ KERNEL_GENERAL, "stencil: leggy, order: 4" },
	{ KERNEL_GENERAL, "stencil: compact, radius2: 3" },
	{ KERNEL_LEGGY, "stencil: leggy, order: 4" },
	{ KERNEL_LEGGY_SHARED, "stencil: leggy, order: 4" },
	{ KERNEL_LEGGY_SHARED2, "stencil: leggy, order: 8" },
	{ KERNEL_SHELL_SHARED, "stencil: box, q: [2, 2, 2]" },
	{ KERNEL_SHELL_SHARED, "stencil: interpolated, variant: IWB" },
	{ KERNEL_SHELL_VEC, "stencil: compact, radius2: 3" },
	{ KERNEL_FCC, "stencil: fcc" },
	{ KERNEL_FCC_VEC, "stencil: fcc" },
	{ KERNEL_FCC_SPLIT, "stencil: fcc" },
};
#define NEACH (int)(sizeof(each_kernel) / sizeof(each_kernel[0]))

/* The absorbing box of the long runs (1.2 x 1.0 x 0.8 m at 5 cm) with a scheme. */
static struct sim *dc_room_of(const char *scheme, int precision, const char *materials)
{
	char yaml[1024];

	snprintf(yaml, sizeof(yaml),
		 "grid: {spacing: 0.05}\nduration: 0.1\nscheme: {%s, precision: %s}\n"
		 "geometry: {box: [1.2, 1.0, 0.8]}\n"
		 "materials: %s\n"
		 "surfaces: {default: w, floor: f}\n"
		 "sources: [{name: S, position: [0.23, 0.21, 0.18], signal: ricker, fc: 250, highpass: 0}]\n"
		 "receivers: [{name: A, position: [0.81, 0.66, 0.54]}, "
		 "{name: B, position: [0.16, 0.78, 0.27]}]\n",
		 scheme, precision == 4 ? "float32" : "float64", materials);
	return sim_open(yaml);
}

static struct sim *dc_room(const char *scheme, int precision)
{
	return dc_room_of(scheme, precision, "{w: {absorption: 0.1}, f: {absorption: 0.05}}");
}

/* Every kernel: a uniform field stays exactly uniform for 3 steps, both precisions, in the
 * absorbing box (with its scheme) and, for the 7-point kernels, in the carved L (fcc in a
 * carved room: fcc_lattice). */
static void uniform_field_on_gpu(void **state)
{
	(void)state;
	for (int e = 0; e < NEACH; e++)
		for (int prec = 4; prec <= 8; prec += 4)
			for (int carved = 0; carved < 2; carved++) {
				struct sim *s;
				size_t bad, n_room;

				if (carved && (each_kernel[e].k >= KERNEL_GENERAL &&
					       each_kernel[e].k != KERNEL_DIAMOND))
					continue;
				if (carved && strcmp(each_kernel[e].scheme, "stencil: leggy, order: 2"))
					continue;
				s = dc_room(each_kernel[e].scheme, prec);
				if (carved)	/* an L with a lowered ceiling in one leg */
					sim_carve_l(s, 0.8, 0.6, 0.55, 0.4);
				bad = uniform_changed(s, each_kernel[e].k, prec, &n_room);
				print_message("# uniform field, %-16s %-30s %s %s: %zu of %zu values "
					      "changed\n", kernel_names[each_kernel[e].k],
					      s->stencil.name, prec == 4 ? "f32" : "f64",
					      carved ? "L-shaped" : "box", bad, n_room);
				assert_int_equal(bad, 0);
				sim_close(s);
			}
}

/*
 * Receivers r of f after `steps` steps, each over its peak, the largest over the receivers:
 * |mean| over the last tenth, |that mean less the second tenth's|, and the RMS of the last
 * tenth over that of the second tenth.
 */
static void late_stats(struct fdtd *f, int nrec, long steps, double *mean, double *drift,
		       double *rms)
{
	*mean = 0;
	*drift = 0;
	*rms = 0;
	for (int r = 0; r < nrec; r++) {
		const double *x = fdtd_receiver(f, r);
		const size_t late = (size_t)(steps - steps / 10), early = (size_t)(steps / 10);
		double peak = 0, m = 0, m2 = 0, a = 0, b = 0;

		for (size_t i = 0; i <= (size_t)steps; i++)
			peak = fmax(peak, fabs(x[i]));
		for (size_t i = late; i <= (size_t)steps; i++) {
			m += x[i];
			a += x[i] * x[i];
		}
		for (size_t i = early; i < 2 * early; i++) {
			m2 += x[i];
			b += x[i] * x[i];
		}
		assert_true(peak > 0 && b > 0);
		m /= (double)((size_t)steps + 1 - late);
		*mean = fmax(*mean, fabs(m) / peak);
		*drift = fmax(*drift, fabs(m - m2 / (double)early) / peak);
		*rms = fmax(*rms, sqrt(a / (double)((size_t)steps + 1 - late) / (b / (double)early)));
	}
}

/*
 * Every kernel, float32, LONG_STEPS steps of the absorbing box, the source cut after
 * SOURCE_TIME: the late mean stays below MEAN_TOL of the peak and moves less than DRIFT_TOL of
 * it from the second tenth to the last, and the energy never rises above its value at the cut.
 * With band materials (bands != 0), every kernel, fcc's included, the energy the branches'
 * included; diamond for the 7-point scheme only (its leggy towers with band walls take over
 * 8 minutes for this run; band_materials compares them with the CPU bitwise).
 */
static void long_runs(int bands)
{
	int failed = 0;

	if (quick)
		skip();
	for (int e = 0; e < NEACH; e++) {
		struct sim *s;

		if ((only_kernels && strncmp(kernel_names[each_kernel[e].k], only_kernels,
					     strlen(only_kernels))) ||
		    (bands && each_kernel[e].k == KERNEL_DIAMOND &&
		     strstr(each_kernel[e].scheme, "order: 4")))
			continue;
		s = bands ? dc_room_of(each_kernel[e].scheme, 4,
				       "{w: {library: plywood_thin}, "
				       "f: {library: carpet_6mm_open_cell_foam}}")
			  : dc_room(each_kernel[e].scheme, 4);
		const long from = (long)ceil(SOURCE_TIME / s->dt);
		struct fdtd_setup g = { .grid = s->grid, .stencil = &s->stencil, .lambda = s->lambda,
					.precision = 4, .cuda = 1, .kernel = each_kernel[e].k,
					.banks = s->banks->bank, .nbanks = s->room->nmaterials,
					.dt = s->dt };
		struct rs_error err = { 0 };
		struct fdtd *f = fdtd_create(&g, &err);
		double *sig = calloc(LONG_STEPS, sizeof(double)), e0, worst = 0, mean, drift, rms;

		if (!f)
			fail_msg("%s", err.msg);
		assert_non_null(sig);
		for (int r = 0; r < 2; r++)
			assert_int_equal(fdtd_add_receiver(f, s->room->receivers[r].pos), r);
		assert_int_equal(fdtd_reserve(f, LONG_STEPS + 1), 0);
		sig_source(&s->room->sources[0], s->dt, (size_t)from, sig);
		assert_int_equal(fdtd_add_source(f, s->room->sources[0].pos, sig, LONG_STEPS), 0);
		assert_int_equal(fdtd_advance(f, from, NULL), 0);
		e0 = fdtd_energy(f);
		for (long n = from; n < LONG_STEPS; n += LONG_CHUNK) {
			assert_int_equal(fdtd_advance(f, n + LONG_CHUNK > LONG_STEPS ? LONG_STEPS - n
										: LONG_CHUNK, NULL), 0);
			worst = fmax(worst, fdtd_energy(f) / e0);
		}
		late_stats(f, 2, LONG_STEPS, &mean, &drift, &rms);
		print_message("# %s%-16s %-30s %d steps: late mean %.2e of the peak, moved %.2e "
			      "since the second tenth, energy at most %.2e of its start%s\n",
			      bands ? "bands " : "", kernel_names[each_kernel[e].k], s->stencil.name,
			      LONG_STEPS, mean,
			      drift, worst,
			      mean < MEAN_TOL && drift < DRIFT_TOL && worst <= 1 ? "" : "  FAILED");
		failed += !(mean < MEAN_TOL && drift < DRIFT_TOL && worst <= 1);
		free(sig);
		fdtd_destroy(f);
		sim_close(s);
	}
	assert_int_equal(failed, 0);
}

static void long_runs_on_gpu(void **state)
{
	(void)state;
	long_runs(0);
}

static void band_long_runs_on_gpu(void **state)
{
	(void)state;
	long_runs(1);
}

/*
 * Every 7-point kernel and both fcc kernels, float32: 2 s of tests/gpu/rooms/seminar.yaml (a
 * mesh room, 10^7 cells at 2 kHz; 4.2 10^6 nodes on the fcc lattice, whose walls in a carved
 * room weigh their links). Nothing grows: the late mean stays below MEAN_TOL of the peak and
 * the last tenth is quieter than the second.
 */
static void mesh_room_on_gpu(void **state)
{
	const char *path = "tests/gpu/rooms/seminar.yaml";
	FILE *fp = fopen(path, "r");
	char *text = calloc(1, 1 << 16), *at;
	int failed = 0, ran = 0;

	(void)state;
	if (quick)
		skip();
	assert_non_null(fp);
	assert_non_null(text);
	assert_true(fread(text, 1, (1 << 16) - 64, fp) > 0);
	fclose(fp);
	/* the mesh relative to the repository's root, where gpu-test runs */
	assert_non_null(at = strstr(text, "mesh: seminar.obj"));
	memmove(at + strlen("mesh: tests/gpu/rooms/"), at + strlen("mesh: "),
		strlen(at + strlen("mesh: ")) + 1);
	memcpy(at, "mesh: tests/gpu/rooms/", strlen("mesh: tests/gpu/rooms/"));
	for (int fcc = 0; fcc < 2; fcc++) {
		struct sim *s;

		if (fcc) {	/* the same room on the fcc lattice */
			assert_non_null(at = strstr(text, "scheme: {precision: float32}"));
			memmove(at + strlen("scheme: {precision: float32, stencil: fcc}"),
				at + strlen("scheme: {precision: float32}"),
				strlen(at + strlen("scheme: {precision: float32}")) + 1);
			memcpy(at, "scheme: {precision: float32, stencil: fcc}",
			       strlen("scheme: {precision: float32, stencil: fcc}"));
		}
		s = sim_open(text);
		for (int e = 0; e < NEACH; e++) {
			const enum kernel_id k = each_kernel[e].k;
			struct fdtd_setup g = { .grid = s->grid, .stencil = &s->stencil,
						.lambda = s->lambda, .precision = 4, .cuda = 1,
						.kernel = k };
			struct rs_error err = { 0 };
			struct fdtd *f;
			double *sig, mean, drift, rms;

			if (strcmp(each_kernel[e].scheme,
				   fcc ? "stencil: fcc" : "stencil: leggy, order: 2") ||
			    (!fcc && k == KERNEL_GENERAL) ||
			    (only_kernels &&
			     strncmp(kernel_names[k], only_kernels, strlen(only_kernels))))
				continue;
			if (!(f = fdtd_create(&g, &err)))
				fail_msg("%s", err.msg);
			assert_non_null(sig = malloc((size_t)s->steps * sizeof(double)));
			for (int r = 0; r < 2; r++)
				assert_int_equal(fdtd_add_receiver(f, s->room->receivers[r].pos), r);
			assert_int_equal(fdtd_reserve(f, (size_t)s->steps + 1), 0);
			sig_source(&s->room->sources[0], s->dt, (size_t)s->steps, sig);
			assert_int_equal(fdtd_add_source(f, s->room->sources[0].pos, sig,
							 (size_t)s->steps),
					 0);
			assert_int_equal(fdtd_advance(f, s->steps, NULL), 0);
			late_stats(f, 2, s->steps, &mean, &drift, &rms);
			print_message("# seminar room, %.3g M cells, %ld steps, %-16s: late mean %.2e "
				      "of the peak, late RMS %.2e of the second tenth's%s\n",
				      (double)s->grid->plan.cells / 1e6, s->steps, kernel_names[k],
				      mean, rms, mean < MEAN_TOL && rms < 1 ? "" : "  FAILED");
			failed += !(mean < MEAN_TOL && rms < 1);
			ran++;
			free(sig);
			fdtd_destroy(f);
		}
		sim_close(s);
	}
	free(text);
	if (!ran)
		skip();
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test(rigid_f32),	 cmocka_unit_test(rigid_f64),
		cmocka_unit_test(absorbing_f32), cmocka_unit_test(absorbing_f64),
		cmocka_unit_test(lshaped_f32),	 cmocka_unit_test(lshaped_f64),
		cmocka_unit_test(shapes_f32),	 cmocka_unit_test(shapes_f64),
		cmocka_unit_test(band_materials), cmocka_unit_test(fitted_walls_on_gpu),
		cmocka_unit_test(texture_subvolumes), cmocka_unit_test(other_block_shape),
		cmocka_unit_test(auto_kernel),	 cmocka_unit_test(energy_on_gpu),
		cmocka_unit_test(larger_stencils), cmocka_unit_test(carved_larger_stencils),
		cmocka_unit_test(fcc_lattice),	 cmocka_unit_test(diamond_kernel),
		cmocka_unit_test(diamond_run),	 cmocka_unit_test(uniform_field_on_gpu),
		cmocka_unit_test(long_runs_on_gpu), cmocka_unit_test(band_long_runs_on_gpu),
		cmocka_unit_test(mesh_room_on_gpu), cmocka_unit_test(receiver_grids_on_gpu),
		cmocka_unit_test(ranks_on_gpus), cmocka_unit_test(resume_on_gpu),
		cmocka_unit_test(band_frames_on_gpu), cmocka_unit_test(device_memory_on_gpu),
	};
	const struct CMUnitTest few[] = {
		cmocka_unit_test(lshaped_f32), cmocka_unit_test(texture_subvolumes),
		cmocka_unit_test(diamond_kernel),
		cmocka_unit_test(larger_stencils), cmocka_unit_test(carved_larger_stencils),
		cmocka_unit_test(fcc_lattice), cmocka_unit_test(uniform_field_on_gpu),
	};

	if (!fdtd_cuda_available(NULL, 0)) {
		fprintf(stderr, "test_gpu: no usable CUDA device\n");
		return 1;
	}
	const struct CMUnitTest some[] = { cmocka_unit_test(long_runs_on_gpu),
					   cmocka_unit_test(band_long_runs_on_gpu),
					   cmocka_unit_test(diamond_kernel),
					   cmocka_unit_test(diamond_run),
					   cmocka_unit_test(larger_stencils),
					   cmocka_unit_test(carved_larger_stencils),
					   cmocka_unit_test(fcc_lattice) };

	quick = getenv("ROOMSIM_GPU_QUICK") != NULL;
	if (getenv("ROOMSIM_GPU_TESTS"))
		cmocka_set_test_filter(getenv("ROOMSIM_GPU_TESTS"));
	if (getenv("ROOMSIM_GPU_SKIP"))
		cmocka_set_skip_filter(getenv("ROOMSIM_GPU_SKIP"));
	roomsim = getenv("ROOMSIM") ? getenv("ROOMSIM") : "build/roomsim";
	if ((only_kernels = getenv("ROOMSIM_GPU_KERNELS")))
		return cmocka_run_group_tests_name("gpu-kernels", some, NULL, NULL);
	return quick ? cmocka_run_group_tests_name("gpu-quick", few, NULL, NULL)
		     : cmocka_run_group_tests_name("gpu", all, NULL, NULL);
}
