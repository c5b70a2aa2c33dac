/*
 * kernels.c - the kernels' names (solver/kernels.h).
 */
#include "kernels.h"

#include <string.h>

const char *const kernel_names[NKERNELS + 1] = {
	[KERNEL_AUTO] = "auto",
	[KERNEL_NAIVE3D] = "naive3d",
	[KERNEL_TILED_GLOBAL] = "tiled-global",
	[KERNEL_TILED_SHARED] = "tiled-shared",
	[KERNEL_SLICE_NAIVE] = "slice-naive",
	[KERNEL_SLICE_TEXTURE] = "slice-texture",
	[KERNEL_SLICE_LDG] = "slice-ldg",
	[KERNEL_SLICE_SHARED] = "slice-shared",
	[KERNEL_SLICE_SHARED_TEX] = "slice-shared-tex",
	[KERNEL_SLICE_VEC] = "slice-vec",
	[KERNEL_GENERAL] = "general",
	[KERNEL_LEGGY] = "leggy",
	[KERNEL_LEGGY_SHARED] = "leggy-shared",
	[KERNEL_LEGGY_SHARED2] = "leggy-shared2",
	[KERNEL_SHELL_SHARED] = "shell-shared",
	[KERNEL_SHELL_VEC] = "shell-vec",
	[KERNEL_FCC] = "fcc",
	[KERNEL_FCC_VEC] = "fcc-vec",
	[KERNEL_DIAMOND] = "diamond",
	[NKERNELS] = NULL,
};

int kernel_of(const char *s)
{
	for (int k = 0; k < NKERNELS; k++)
		if (!strcmp(s, kernel_names[k]))
			return k;
	return -1;
}
