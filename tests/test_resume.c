/*
 * test_resume - nothing a run computed is lost: checkpoints and `run --resume` give the same
 * bytes as a run that never stopped (after SIGKILL, after SIGTERM, with band walls, receiver
 * grids and snapshots, over two MPI ranks), a checkpoint of another room is refused, and a
 * disk that snapshots fill keeps the WAVs and rirs.h5 whole with no side files left.
 * The binary is $ROOMSIM (default build/roomsim).
 */
#include "helper.h"

#include <signal.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* as in test_parallel.c: ranks under `make sanitize` run without the leak check, since Open
 * MPI unloads its components before LeakSanitizer could name them */
static const char *mpirun = "env ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
			    "mpirun --allow-run-as-root --oversubscribe";
static char dir[] = "/tmp/roomsim-test-resume-XXXXXX";
static const char *roomsim;

/* The room of these tests: tests/small.yaml for 0.5 s (two sources, two receivers, two
 * snapshot planes; 4547 steps a source, held and stopped at a step well before its end),
 * with `extra` sed commands applied. */
static void room(const char *name, const char *extra)
{
	assert_int_equal(sh("sed -e 's/^duration: .*/duration: 0.5/' %s tests/small.yaml > %s/%s.yaml",
			    extra, dir, name), 0);
}

/* Every output of a and b is the same: the WAVs byte for byte, the HDF5 files by h5diff
 * (every dataset and attribute, but rirs.h5's root attributes where ranks differ: its
 * `engine` names them). */
static void same_outputs(const char *a, const char *b, int ranks)
{
	assert_int_equal(sh("cd %s/%s && for f in *; do x=; [ %d = 1 ] && [ $f = rirs.h5 ] && "
			    "x='--exclude-attribute /'; case $f in *.wav|*.xmf) cmp -s $f %s/%s/$f "
			    "|| { echo \"# $f differs\"; exit 1; };; *.h5) h5diff -q $x $f %s/%s/$f || "
			    "{ echo \"# $f differs\"; exit 1; };; esac; done && [ $(ls | wc -l) = "
			    "$(ls %s/%s | grep -v '^checkpoint' | wc -l) ]", dir, a, ranks, dir, b, dir,
			    b, dir, b), 0);
}

/* Start `roomsim run ARGS` in the background, to hold at step `at` (ROOMSIM_HOLD_AT; stderr
 * to DIR/NAME.err); its pid, once it holds there. */
static pid_t start(const char *name, const char *args, long at)
{
	char err[512];

	snprintf(err, sizeof(err), "%s/%s.err", dir, name);
	return start_held(err, at, "exec %s run %s 2> %s", roomsim, args, err);
}

/* The same, held at step `at` of source `source`. */
static pid_t start_held_at(const char *name, const char *args, const char *source, long at)
{
	char err[512];

	snprintf(err, sizeof(err), "%s/%s.err", dir, name);
	return start_held(err, at, "exec env ROOMSIM_HOLD_AT=%s:%ld %s run %s 2> %s", source, at,
			  roomsim, args, err);
}

/* The hybrid run of resume_hybrid, held at step 650 of its second source. */
static pid_t start_held_hybrid(const char *args)
{
	char err[512];

	snprintf(err, sizeof(err), "%s/h.err", dir);
	return start_held(err, 650, "exec env ROOMSIM_HOLD_AT=S2:650 %s run %s 2> %s", roomsim,
			  args, err);
}

/* Killed (SIGKILL, as a crash or a lost node) after its second checkpoint (at steps 300 and
 * 600, held at 650): --resume goes on from the newest and writes what an uninterrupted run
 * writes; the finished run removes its checkpoints. */
static void resume_after_kill(void **state)
{
	char args[512];
	pid_t pid;

	(void)state;
	room("k", "");
	assert_int_equal(sh("%s run %s/k.yaml --out %s/k-ref -q", roomsim, dir, dir), 0);
	snprintf(args, sizeof(args), "%s/k.yaml --out %s/k --checkpoint '300 steps'", dir, dir);
	pid = start("k", args, 650);
	assert_int_equal(sh("[ -f %s/k/checkpoint.prev.h5 ] && [ -f %s/k/checkpoint.h5 ]", dir,
			    dir), 0);
	kill(pid, SIGKILL);
	assert_int_equal(exit_status(pid), 128 + SIGKILL);
	assert_int_equal(sh("%s run %s/k.yaml --out %s/k --resume -q", roomsim, dir, dir), 0);
	same_outputs("k-ref", "k", 0);
	assert_int_equal(sh("cd %s/k && ! ls -a | grep -e checkpoint -e tmp -e reserve", dir), 0);
}

/* SIGTERM (a scheduler's) to a run without checkpoints writes one and says so; --resume
 * gives the same outputs; a second --resume after the end finds nothing and says why. */
static void sigterm_writes_a_checkpoint(void **state)
{
	char args[512];
	pid_t pid;

	(void)state;
	room("t", "");
	assert_int_equal(sh("%s run %s/t.yaml --out %s/t-ref -q", roomsim, dir, dir), 0);
	snprintf(args, sizeof(args), "%s/t.yaml --out %s/t", dir, dir);
	pid = start("t", args, 1500);
	kill(pid, SIGTERM);
	assert_int_equal(exit_status(pid), 1);
	assert_int_equal(sh("grep -q 'roomsim run --resume goes on from the checkpoint' %s/t.err && "
			    "[ -f %s/t/checkpoint.h5 ]", dir, dir), 0);
	assert_int_equal(sh("%s run %s/t.yaml --out %s/t --resume 2> %s/t2.err", roomsim, dir,
			    dir, dir), 0);
	assert_int_equal(sh("grep -q 'resuming from %s/t/checkpoint.h5: source S1 at step 1500 of' "
			    "%s/t2.err", dir, dir), 0);
	same_outputs("t-ref", "t", 0);
	assert_int_equal(sh("%s run %s/t.yaml --out %s/t --resume -q 2> %s/t3.err; [ $? = 2 ] && "
			    "grep -q 'no usable checkpoint in %s/t' %s/t3.err", roomsim, dir, dir,
			    dir, dir, dir), 0);
}

/* Band walls (branch states), receiver grids (their files opened again) and float64. */
static void resume_bands_grids(void **state)
{
	char args[512];
	pid_t pid;

	(void)state;
	room("b", "-e 's#^materials: .*#materials: {wall: {library: plasterboard}}#' "
		  "-e '$ a scheme: {precision: float64}' "
		  "-e 's#^receivers:#receivers:\\n  - {name: plane, grid: {at: 0.8, spacing: 0.2}}#'");
	assert_int_equal(sh("grep -q plasterboard %s/b.yaml && grep -q float64 %s/b.yaml", dir,
			    dir), 0);
	assert_int_equal(sh("%s run %s/b.yaml --out %s/b-ref -q", roomsim, dir, dir), 0);
	snprintf(args, sizeof(args), "%s/b.yaml --out %s/b --checkpoint '700 steps'", dir, dir);
	pid = start("b", args, 900);
	kill(pid, SIGKILL);
	exit_status(pid);
	assert_int_equal(sh("%s run %s/b.yaml --out %s/b --resume -q", roomsim, dir, dir), 0);
	same_outputs("b-ref", "b", 0);
}

/* A hybrid run killed in its second source: --resume traces both sources again (the same
 * bits for the same seed) and writes the first source's full-band WAVs as well as the
 * second's, as an uninterrupted run does. */
static void resume_hybrid(void **state)
{
	char args[512];
	pid_t pid;

	(void)state;
	room("h", "-e 's#^materials: .*#materials: {wall: {absorption: 0.2, scattering: 0.3}}#' "
		  "-e '$ a hybrid: {crossover: 300, rays: 5000}'");
	assert_int_equal(sh("%s run %s/h.yaml --out %s/h-ref -q", roomsim, dir, dir), 0);
	snprintf(args, sizeof(args), "%s/h.yaml --out %s/h --checkpoint '300 steps'", dir, dir);
	/* ROOMSIM_HOLD_AT=S2:650 in the command's own environment wins over the helper's */
	pid = start_held_hybrid(args);
	kill(pid, SIGKILL);
	assert_int_equal(exit_status(pid), 128 + SIGKILL);
	assert_int_equal(sh("%s run %s/h.yaml --out %s/h --resume 2> %s/h2.err", roomsim, dir, dir,
			    dir), 0);
	assert_int_equal(sh("grep -q 'resuming from .*: source S2 at step' %s/h2.err", dir), 0);
	same_outputs("h-ref", "h", 0);
}

/* A spatial receiver (its encoded rows of the finished source are in the checkpoint) and a
 * cardioid source: killed in the second source, resumed to the same bytes. */
static void resume_spatial(void **state)
{
	char args[512];
	pid_t pid;

	(void)state;
	room("sp", "-e 's#\\(R1, position: \\[1.4, 1.0, 0.8\\]\\)#\\1, ambisonics: 2#' "
		   "-e 's#\\(fc: 200\\)#\\1, directivity: cardioid#'");
	assert_int_equal(sh("grep -q 'ambisonics: 2' %s/sp.yaml && grep -q cardioid %s/sp.yaml", dir,
			    dir), 0);
	assert_int_equal(sh("%s run %s/sp.yaml --out %s/sp-ref -q", roomsim, dir, dir), 0);
	snprintf(args, sizeof(args), "%s/sp.yaml --out %s/sp --checkpoint '300 steps'", dir, dir);
	pid = start_held_at("sp", args, "S2", 650);
	kill(pid, SIGKILL);
	assert_int_equal(exit_status(pid), 128 + SIGKILL);
	assert_int_equal(sh("%s run %s/sp.yaml --out %s/sp --resume -q", roomsim, dir, dir), 0);
	same_outputs("sp-ref", "sp", 0);
	assert_int_equal(sh("[ -f %s/sp/S2_R1.ambix.wav ]", dir), 0);
}

/* A checkpoint is refused for another room, naming what differs; nothing is overwritten. */
static void resume_refuses_another_room(void **state)
{
	char args[512];
	pid_t pid;

	(void)state;
	room("o", "");
	snprintf(args, sizeof(args), "%s/o.yaml --out %s/o2", dir, dir);
	pid = start("o", args, 100);
	kill(pid, SIGTERM);
	assert_int_equal(exit_status(pid), 1);
	assert_int_equal(sh("sed 's/^duration: .*/duration: 2.1/' %s/o.yaml > %s/o-long.yaml && "
			    "%s run %s/o-long.yaml --out %s/o2 --resume -q 2> %s/o.err; [ $? = 2 ] && "
			    "grep -q 'does not fit this run: it runs [0-9]* steps per source, this room "
			    "[0-9]* (duration)' %s/o.err", dir, dir, roomsim, dir, dir, dir, dir), 0);
	assert_int_equal(sh("sed 's/absorption: 0.2/absorption: 0.3/' %s/o.yaml > %s/o-abs.yaml && "
			    "%s run %s/o-abs.yaml --out %s/o2 --resume -q 2> %s/o.err; [ $? = 2 ] && "
			    "grep -q 'geometry or materials changed' %s/o.err && "
			    "[ -f %s/o2/checkpoint.h5 ]", dir, dir, roomsim, dir, dir, dir, dir, dir),
			 0);
}

/* Two MPI ranks: SIGUSR2 to mpirun (which passes it on; SIGTERM it would turn into a kill,
 * docs/parallel.md) reaches both as SIGTERM does a single process, each writes its
 * checkpoint; two ranks go on from them to the bytes of one process that never stopped. */
static void resume_two_ranks(void **state)
{
	char args[512];
	pid_t pid;

	(void)state;
	if (sh("command -v mpirun > /dev/null && %s --version | grep -q 'MPI'", roomsim)) {
		print_message("# skipped: no MPI in this build\n");
		return;
	}
	room("m", "");
	assert_int_equal(sh("%s run %s/m.yaml --out %s/m-ref -q --backend cpu", roomsim, dir,
			    dir), 0);
	snprintf(args, sizeof(args), "%s/m.err", dir);
	pid = start_held(args, 1200, "exec %s -np 2 -x ROOMSIM_HOLD_AT %s run %s/m.yaml --out %s/m "
			 "--backend cpu --threads 1 2> %s", mpirun, roomsim, dir, dir, args);
	kill(pid, SIGUSR2);
	exit_status(pid);
	assert_int_equal(sh("[ -f %s/m/checkpoint.h5 ] && [ -f %s/m/checkpoint.rank1.h5 ]", dir,
			    dir), 0);
	assert_int_equal(sh("%s -np 2 %s run %s/m.yaml --out %s/m --backend cpu --threads 1 "
			    "--resume -q", mpirun, roomsim, dir, dir), 0);
	same_outputs("m-ref", "m", 1);
}

/*
 * A file system that the snapshots fill (tmpfs of 1.5 MB; ROOMSIM_DISK_FREE passes the
 * start's check, as a disk others fill would): the run ends with one line naming the
 * snapshot file, which stays readable with the frames written; the WAVs and rirs.h5 hold
 * the steps computed, in the space kept for them; no .tmp or reserve file is left.
 */
static void disk_full_keeps_the_responses(void **state)
{
	char mnt[300], path[400];
	SF_INFO info = { 0 };
	SNDFILE *sf;

	(void)state;
	snprintf(mnt, sizeof(mnt), "%s/full", dir);
	if (sh("mkdir -p %s && mount -t tmpfs -o size=1500k tmpfs %s 2>/dev/null", mnt, mnt)) {
		print_message("# skipped: cannot mount a small tmpfs here (not root?)\n");
		return;
	}
	assert_int_equal(sh("sed -e 's/^duration: .*/duration: 0.3/' -e 's/every: 200/every: 20/' "
			    "examples/shoebox.yaml > %s/full.yaml", dir), 0);
	assert_int_equal(sh("ROOMSIM_DISK_FREE=1e12 %s run %s/full.yaml --out %s/o --backend cpu "
			    "-q 2> %s/full.err", roomsim, dir, mnt, dir), 1);
	assert_int_equal(sh("[ $(wc -l < %s/full.err) = 1 ] && grep -q '^roomsim: %s/o/"
			    "S1_snapshots.h5: no space left on the device for the next snapshot "
			    "frame .* the file keeps the [0-9]* frames written so far' %s/full.err",
			    dir, mnt, dir), 0);
	assert_int_equal(sh("cd %s/o && h5dump -H S1_snapshots.h5 > /dev/null && h5dump -d "
			    "completed_steps rirs.h5 | grep -q '(0): [1-9]' && [ -s S1_R1.wav ] && "
			    "[ -s S1_R2.wav ] && ! ls -a | grep -q -e tmp -e reserve", mnt), 0);
	snprintf(path, sizeof(path), "%s/o/S1_R1.wav", mnt);
	sf = sf_open(path, SFM_READ, &info);
	assert_non_null(sf);
	sf_close(sf);
	print_message("# the WAV holds %lld frames of 14400\n", (long long)info.frames);
	assert_true(info.frames > 0 && info.frames < 14400);
	sh("umount %s", mnt);
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
	sh("umount %s/full 2>/dev/null; rm -rf %s", dir, dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resume_after_kill),
		cmocka_unit_test(sigterm_writes_a_checkpoint),
		cmocka_unit_test(resume_bands_grids),
		cmocka_unit_test(resume_hybrid),
		cmocka_unit_test(resume_spatial),
		cmocka_unit_test(resume_refuses_another_room),
		cmocka_unit_test(resume_two_ranks),
		cmocka_unit_test(disk_full_keeps_the_responses),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
