/*
 * run_ranks.c - `roomsim run --gpus N`: the same run again as N ranks of mpirun (run.h;
 * docs/parallel.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

static volatile sig_atomic_t ranks_pid;

/* --gpus: Ctrl-C and SIGTERM reach mpirun as the signals it passes on unchanged. */
static void pass_signal(int sig)
{
	if (ranks_pid > 0)
		kill((pid_t)ranks_pid, sig == SIGINT ? SIGUSR1 : SIGUSR2);
}

/*
 * --gpus N outside mpirun: run again as N ranks of mpirun, one per GPU of this node, with the
 * same arguments less --gpus, and exit with its status. mpirun runs in a process group of its
 * own, so that a Ctrl-C at the terminal reaches only this process, which passes it on as
 * SIGUSR1 (SIGTERM as SIGUSR2). Returns only when mpirun cannot be started.
 */
int run_start_ranks(int gpus, int argc, char **argv, struct rs_error *err)
{
	char **av = calloc((size_t)argc + 14, sizeof(char *)), np[16], self[4096], omp[48];
	const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int n = 0;

	if (!av)
		return rs_fail(err, RS_ENOMEM, "out of memory");
	if (len <= 0 || len >= (ssize_t)sizeof(self) - 1)
		return rs_fail(err, RS_ENODEV, "--gpus: cannot find this program's path");
	self[len] = 0;	/* this binary, not mpirun's own /proc/self/exe */
	if (!part_available())
		return rs_fail(err, RS_EINPUT, "--gpus %d: this build has no MPI (install "
			       "libopenmpi-dev and openmpi-bin, and rebuild)", gpus);
	snprintf(np, sizeof(np), "%d", gpus);
	av[n++] = "mpirun";
	av[n++] = "-np";
	av[n++] = np;
	if (geteuid() == 0)	/* Open MPI refuses root unless told */
		av[n++] = "--allow-run-as-root";
	av[n++] = "--bind-to";	/* each rank's OpenMP threads on any core */
	av[n++] = "none";
	av[n++] = "--stdin";	/* from a background process group it would stop on a read */
	av[n++] = "none";
	if (!getenv("OMP_NUM_THREADS")) {	/* the node's cores shared out, not each all */
		const long cores = sysconf(_SC_NPROCESSORS_ONLN);

		snprintf(omp, sizeof(omp), "OMP_NUM_THREADS=%ld", cores / gpus > 1 ? cores / gpus : 1);
		av[n++] = "-x";
		av[n++] = omp;
	}
	av[n++] = self;
	av[n++] = "run";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gpus") || !strcmp(argv[i], "-g")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--gpus=", 7))
			continue;
		av[n++] = argv[i];
	}
	av[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	{
		int fd[2], status = 0, e = 0;
		pid_t pid;
		struct sigaction sa = { 0 };

		if (pipe(fd) || (pid = fork()) < 0) {
			free(av);
			return rs_fail(err, RS_ENODEV, "--gpus %d: cannot start mpirun: %s", gpus,
				       strerror(errno));
		}
		if (pid == 0) {	/* mpirun, or errno back through the pipe */
			close(fd[0]);
			setpgid(0, 0);
			fcntl(fd[1], F_SETFD, FD_CLOEXEC);
			execvp(av[0], av);
			e = errno;
			(void)!write(fd[1], &e, sizeof(e));
			_exit(127);
		}
		close(fd[1]);
		ranks_pid = pid;
		sa.sa_handler = pass_signal;	/* no SA_RESTART: waitpid sees each one */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (read(fd[0], &e, sizeof(e)) == (ssize_t)sizeof(e)) {
			waitpid(pid, &status, 0);
			rs_fail(err, RS_ENODEV, "--gpus %d: cannot start mpirun: %s (valid: install "
				"openmpi-bin, or start the ranks yourself with mpirun -np %d roomsim "
				"run ...)", gpus, strerror(e), gpus);
			free(av);
			return err->code;
		}
		close(fd[0]);
		rs_phase("mpirun started");
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		rs_phase("mpirun ended");
		exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
}
