/*
 * kernels.h - the CUDA kernels by name (docs/kernels.md), for the YAML reader, --kernel and
 * the engines. KERNEL_AUTO times every kernel that can run the grid and keeps the fastest.
 * Plain C: CPU-only builds know the names too.
 */
#ifndef SOLVER_KERNELS_H
#define SOLVER_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

enum kernel_id {
	KERNEL_AUTO,
	KERNEL_NAIVE3D,
	KERNEL_TILED_GLOBAL,
	KERNEL_TILED_SHARED,
	KERNEL_SLICE_NAIVE,
	KERNEL_SLICE_TEXTURE,
	KERNEL_SLICE_LDG,
	KERNEL_SLICE_SHARED,
	KERNEL_SLICE_SHARED_TEX,
	KERNEL_SLICE_VEC,
	KERNEL_GENERAL,
	KERNEL_LEGGY,
	KERNEL_LEGGY_SHARED,
	KERNEL_LEGGY_SHARED2,
	KERNEL_SHELL_SHARED,
	KERNEL_SHELL_VEC,
	KERNEL_FCC,
	KERNEL_FCC_VEC,
	KERNEL_DIAMOND,
	NKERNELS
};

/* Names of enum kernel_id as the YAML and --kernel spell them; NULL-terminated. */
extern const char *const kernel_names[NKERNELS + 1];

/* The kernel named s, or -1. */
int kernel_of(const char *s);

#ifdef __cplusplus
}
#endif

#endif
