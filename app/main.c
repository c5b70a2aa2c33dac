/* main.c - the roomsim command line: dispatch to one function per command. */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "../solver/part.h"

#ifndef ROOMSIM_VERSION
#define ROOMSIM_VERSION "unknown"
#endif
#ifndef ROOMSIM_GIT
#define ROOMSIM_GIT "unknown"
#endif

static const char usage[] =
	"usage: roomsim COMMAND [OPTIONS]\n"
	"\n"
	"Wave-based room acoustics: impulse responses from a YAML room by FDTD.\n"
	"\n"
	"commands:\n"
	"  run FILE.yaml     simulate; write WAV impulse responses, rirs.h5, snapshots\n"
	"  info FILE.yaml    grid, cells, time step, memory and time estimate of a run\n"
	"  bench [FILE.yaml] voxel updates per second against the memory bandwidth limit\n"
	"  scheme [OPTIONS]  a stencil's Courant limit and dispersion\n"
	"  voxelize FILE.yaml  the room's voxel grid (HDF5) and slice images (PNG)\n"
	"  kernels           the CUDA kernels and what each can run\n"
	"  materials [NAME]  the materials library, and the fit of an entry's band absorption\n"
	"  analyze PATH      ISO 3382-1 parameters per band of a run's responses or of WAVs\n"
	"  auralize IR DRY -o WET   a dry recording played in the room (convolution)\n"
	"  render SNAPSHOTS.h5      the snapshot planes as PNG frames and an MP4\n"
	"  converge FILE.yaml  each scheme at rising resolution against a converged run\n"
	"\n"
	"  roomsim COMMAND --help   options of a command\n"
	"  roomsim --version        version and git commit\n"
	"\n"
	"Exit status: 0 success, 1 run-time failure, 2 bad usage or bad input.\n"
	"Documentation: docs/ (input.md, cli.md, physics.md, output.md, performance.md).\n";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} commands[] = { { "run", cmd_run }, { "info", cmd_info }, { "bench", cmd_bench },
			 { "scheme", cmd_scheme }, { "voxelize", cmd_voxelize },
			 { "kernels", cmd_kernels }, { "materials", cmd_materials },
			 { "analyze", cmd_analyze }, { "auralize", cmd_auralize },
			 { "render", cmd_render }, { "converge", cmd_converge } };

	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("roomsim %s (git %s; %s, %s)\n", ROOMSIM_VERSION, ROOMSIM_GIT,
#ifdef ROOMSIM_CUDA
		       "CUDA",
#else
		       "no CUDA",
#endif
		       part_available() ? "MPI" : "no MPI");
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "roomsim: unknown command '%s' (valid: run, info, bench, scheme, voxelize, "
		"kernels, materials, analyze, auralize, render, converge; see roomsim --help)\n",
		argv[1]);
	return EXIT_USAGE;
}
