/*
 * kernels.c - `roomsim kernels`: the kernel table of solver/kernels.h, as text or as the
 * Markdown table of docs/kernels.md (which a test keeps equal to this output).
 */
#include <stdio.h>
#include <string.h>

#include "../solver/kernels.h"
#include "app.h"

static const char usage_kernels[] =
	"usage: roomsim kernels [--markdown]\n"
	"\n"
	"The CUDA kernels: the name scheme.kernel and --kernel take, what each runs, its file in\n"
	"solver/cuda/, and what it is. `auto` times those that can run the grid and keeps the\n"
	"fastest. --markdown prints the table of docs/kernels.md.\n";

int cmd_kernels(int argc, char **argv)
{
	int markdown = 0;
	char runs[160];

	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			fputs(usage_kernels, stdout);
			return EXIT_OK;
		}
		if (strcmp(argv[a], "--markdown")) {
			fprintf(stderr, "roomsim kernels: '%s' is not an option (valid: --markdown)\n",
				argv[a]);
			return EXIT_USAGE;
		}
		markdown = 1;
	}
	if (markdown)
		printf("| kernel | runs | file | what it is |\n| --- | --- | --- | --- |\n");
	for (int k = 0; k < NKERNELS; k++) {
		const struct kernel_info *i = &kernel_info[k];
		const char *r = k == KERNEL_AUTO ? "whatever the grid needs"
				: kernel_runs_text(i->runs, runs, sizeof(runs));
		char file[64] = "";

		if (*i->family)
			snprintf(file, sizeof(file), markdown ? "`%s.cu`" : "solver/cuda/%s.cu",
				 i->family);
		if (markdown)
			printf("| `%s` | %s | %s | %s |\n", i->name, r, file, i->line);
		else
			printf("%-17s %s\n%-17s runs %s%s%s\n", i->name, i->line, "", r,
			       *file ? "; " : "", file);
	}
	return EXIT_OK;
}
