/*
 * kernels.h - the CUDA kernels, one row each (docs/kernels.md): the name the YAML and --kernel
 * take, the family file of solver/cuda/ that holds its body and launcher, what it can run, and
 * one line about it. The YAML reader, `run --kernel`, `bench`, `auto`, `roomsim kernels` and
 * the kernel table of docs/kernels.md all read this table; the CUDA engine adds each family's
 * launcher and resource query (solver/cuda/engine.h, struct cuda_kernel). Plain C: CPU-only
 * builds know the names too.
 *
 * Adding a kernel: its body and its case in the family's launcher, and one row here.
 */
#ifndef SOLVER_KERNELS_H
#define SOLVER_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel can run (the row's `runs`). Only `general` runs a larger stencil's cells by
 * the walls of a room that is not a box (fdtd.c: the 7-point rule's fallback cells, or an
 * axial stencil's folded lines); the shell kernels leave those cells to it. */
enum {
	KR_SEVEN = 1 << 0,	/* the 7-point scheme, in any room */
	KR_STENCIL = 1 << 1,	/* every other cubic-grid stencil */
	KR_LEGGY = 1 << 2,	/* leggy stencils (points on the axes only) */
	KR_SHELL = 1 << 3,	/* stencils of whole shells of reach 1 to 3 */
	KR_SHELL1 = 1 << 4,	/* stencils of whole shells of reach 1 */
	KR_FCC = 1 << 5,	/* the fcc scheme on its folded lattice */
	KR_CARVED = 1 << 6,	/* larger stencils in rooms that are not boxes */
};

/*
 * K(ID, name, family, runs, line): KERNEL_ID in enum kernel_id, `family` the file
 * solver/cuda/<family>.cu, `runs` KR_* flags; finer limits (orders, reach, block sizes, room
 * height, shared memory) are the family's check (cuda_kernel_why()).
 */
#define KERNEL_TABLE(K)                                                                           \
	K(NAIVE3D, "naive3d", seed, KR_SEVEN,                                                     \
	  "3-D blocks, one thread per cell, reads through __ldg (seed 000, KernelA)")              \
	K(TILED_GLOBAL, "tiled-global", seed, KR_SEVEN,                                           \
	  "the volume tiled as one plane, every read global (seed 003, 4.1)")                     \
	K(TILED_SHARED, "tiled-shared", seed, KR_SEVEN,                                           \
	  "the same with the block's tile in shared memory (seed 003, 4.1)")                      \
	K(SLICE_NAIVE, "slice-naive", seed, KR_SEVEN,                                             \
	  "a 2-D front marching z, register shifting, global reads (seed 003, 4.2.1)")            \
	K(SLICE_TEXTURE, "slice-texture", seed, KR_SEVEN,                                         \
	  "the same, every read a texture fetch, stacked sub-volumes (seed 003, 4.2.2)")          \
	K(SLICE_LDG, "slice-ldg", seed, KR_SEVEN,                                                 \
	  "the same, reads through __ldg (seed 000, 3.3)")                                        \
	K(SLICE_SHARED, "slice-shared", seed, KR_SEVEN,                                           \
	  "the front's slab in shared memory, edges from global (seed 003, 4.2.3)")               \
	K(SLICE_SHARED_TEX, "slice-shared-tex", seed, KR_SEVEN,                                   \
	  "the same, edges from textures (seed 003, 4.2.3)")                                      \
	K(SLICE_VEC, "slice-vec", slice_vec, KR_SEVEN,                                            \
	  "the slicing front with 16-byte loads, x neighbours by warp shuffles")                  \
	K(GENERAL, "general", general, KR_STENCIL | KR_CARVED,                                    \
	  "any stencil, offsets and weights from constant memory (seed 000, KernelA)")            \
	K(LEGGY, "leggy", general, KR_LEGGY,                                                      \
	  "leggy stencils of order 4 to 16, offsets computed (seed 000, KernelB)")                \
	K(LEGGY_SHARED, "leggy-shared", general, KR_LEGGY,                                        \
	  "leggy stencils, x-y tile in shared memory, z in registers (seeds 001, 004)")           \
	K(LEGGY_SHARED2, "leggy-shared2", general, KR_LEGGY,                                      \
	  "the same with two cells per thread")                                                   \
	K(SHELL_SHARED, "shell-shared", shell, KR_SHELL | KR_CARVED,                              \
	  "whole shells of reach 1 to 3: a shared slab read as plane sums")                       \
	K(SHELL_VEC, "shell-vec", shell, KR_SHELL1 | KR_CARVED,                                   \
	  "whole shells of reach 1: slice-vec's front with plane sums")                           \
	K(FCC, "fcc", fcc, KR_FCC,                                                                \
	  "the fcc scheme on its folded lattice, one node per thread")                            \
	K(FCC_VEC, "fcc-vec", fcc, KR_FCC,                                                        \
	  "the fcc scheme, an aligned pair of nodes per thread")                                  \
	K(FCC_SPLIT, "fcc-split", fcc, KR_FCC,                                                    \
	  "the fcc scheme: air pairs from shared-memory tiles, wall nodes from a list")            \
	K(DIAMOND, "diamond", diamond, KR_SEVEN | KR_LEGGY,                                       \
	  "DiamondTorre temporal blocking, many levels per load (seed 002)")

#define KERNEL_ENUM_(id, name, family, runs, line) KERNEL_##id,
enum kernel_id {
	KERNEL_AUTO,	/* time every kernel that can run the grid, keep the fastest */
	KERNEL_TABLE(KERNEL_ENUM_)
	NKERNELS
};
#undef KERNEL_ENUM_

struct kernel_info {
	const char *name;
	const char *family;	/* solver/cuda/<family>.cu */
	unsigned runs;		/* KR_* */
	const char *line;
};

/* The rows, by enum kernel_id; row KERNEL_AUTO describes `auto`. */
extern const struct kernel_info kernel_info[NKERNELS];

/* Names of enum kernel_id as the YAML and --kernel spell them; NULL-terminated. */
extern const char *const kernel_names[NKERNELS + 1];

/* The kernel named s, or -1. */
int kernel_of(const char *s);

/* Every name, "auto, naive3d, ..." (without auto unless with_auto), into buf. */
const char *kernel_list(int with_auto, char *buf, size_t len);

/* What a grid asks of a kernel. */
struct kernel_need {
	int fcc;	/* the fcc scheme */
	int stencil;	/* a cubic-grid stencil other than the 7-point one */
	int leggy;	/* it is leggy */
	int shell_r;	/* it is made of whole shells of this reach (1 to 3), else 0 */
	int carved;	/* a larger stencil in a room that is not a box (fallback or line cells) */
};

/* 0 when kernel k's row can run what n asks; else 1 and, in why, what the kernel runs. */
int kernel_why(enum kernel_id k, const struct kernel_need *n, char *why, size_t len);

/* What `runs` covers, in words ("the 7-point scheme", ...), into buf. */
const char *kernel_runs_text(unsigned runs, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
