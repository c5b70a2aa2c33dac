/*
 * test_auralize - convolution by overlap-add (solver/convolve.h) against direct convolution,
 * and `roomsim auralize` (docs/cli.md): channels, resampling, level, clipping, bad input.
 * The binary is $ROOMSIM (default build/roomsim).
 */
#include "helper.h"

#include <math.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/convolve.h"

static const char *roomsim;
static char dir[] = "/tmp/roomsim-auralize-XXXXXX";

static double noise(unsigned long long *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return ((double)(*s >> 11) / 9007199254740992.0 - 0.5) * 2;
}

static void direct(const double *x, size_t nx, const double *h, size_t nh, double *y)
{
	for (size_t i = 0; i < nx + nh - 1; i++) {
		double s = 0;

		for (size_t j = i < nx ? 0 : i - nx + 1; j < nh && j <= i; j++)
			s += h[j] * x[i - j];
		y[i] = s;
	}
}

/* The largest difference from direct convolution, over the latter's peak. */
static double ola_error(size_t nx, size_t nh, unsigned long long seed)
{
	double *x = malloc(nx * sizeof(double)), *h = malloc(nh * sizeof(double));
	double *a = malloc((nx + nh) * sizeof(double)), *b = malloc((nx + nh) * sizeof(double));
	double worst = 0, peak = 0;

	assert_non_null(x);
	assert_non_null(h);
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < nx; i++)
		x[i] = noise(&seed);
	for (size_t i = 0; i < nh; i++)
		h[i] = noise(&seed) * exp(-(double)i / (nh / 4.0 + 1));
	assert_int_equal(conv_ola(x, nx, h, nh, a), 0);
	direct(x, nx, h, nh, b);
	for (size_t i = 0; i < nx + nh - 1; i++) {
		worst = fmax(worst, fabs(a[i] - b[i]));
		peak = fmax(peak, fabs(b[i]));
	}
	free(x);
	free(h);
	free(a);
	free(b);
	return worst / peak;
}

/* Long and short signals, IRs longer and shorter than a block, one-sample IRs. */
static void overlap_add(void **state)
{
	static const size_t cases[][2] = { { 50000, 7000 }, { 3000, 9000 }, { 20000, 1 },
					   { 1, 5000 }, { 12289, 4096 } };

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const double e = ola_error(cases[c][0], cases[c][1], 7 + c);

		print_message("# x %zu, h %zu: within %.1e of the peak of direct convolution\n",
			      cases[c][0], cases[c][1], e);
		assert_true(e < 1e-10);
	}
}

static void write_wav(const char *path, const double *x, size_t frames, int channels,
		      int rate)
{
	SF_INFO info = { .samplerate = rate, .channels = channels,
			 .format = SF_FORMAT_WAV | SF_FORMAT_DOUBLE };
	SNDFILE *sf = sf_open(path, SFM_WRITE, &info);

	assert_non_null(sf);
	assert_int_equal(sf_writef_double(sf, x, (sf_count_t)frames), (sf_count_t)frames);
	sf_close(sf);
}

/*
 * A mono IR and a stereo dry signal at 48 kHz: two channels, each the direct convolution
 * within 1e-6 of its peak (float32's rounding is 6e-8); --normalize -1 puts the peak at
 * -1 dBFS; a dry signal at 44.1 kHz is resampled to the IR's rate first; a loud result in
 * pcm16 is reported clipped; bad input is refused with status 2.
 */
static void command(void **state)
{
	const size_t nh = 4800, nd = 24000;
	double *h = malloc(nh * sizeof(double)), *d = malloc(2 * nd * sizeof(double));
	double *ch = malloc(nd * sizeof(double)), *ref = malloc((nd + nh) * sizeof(double));
	unsigned long long seed = 3;
	char path[256];
	size_t frames;
	int channels, rate;
	double *y, peak = 0, worst = 0;

	(void)state;
	assert_non_null(h);
	assert_non_null(d);
	assert_non_null(ch);
	assert_non_null(ref);
	for (size_t i = 0; i < nh; i++)
		h[i] = 0.05 * noise(&seed) * exp(-(double)i / 800);
	for (size_t i = 0; i < 2 * nd; i++)
		d[i] = 0.5 * sin(0.01 * (double)i) * noise(&seed);
	snprintf(path, sizeof(path), "%s/ir.wav", dir);
	write_wav(path, h, nh, 1, 48000);
	snprintf(path, sizeof(path), "%s/dry.wav", dir);
	write_wav(path, d, nd, 2, 48000);
	assert_int_equal(sh("%s auralize %s/ir.wav %s/dry.wav -o %s/wet.wav -q", roomsim, dir,
			    dir, dir), 0);
	snprintf(path, sizeof(path), "%s/wet.wav", dir);
	y = wav_read(path, &frames, &channels, &rate);
	assert_int_equal(frames, nd + nh - 1);
	assert_int_equal(channels, 2);
	assert_int_equal(rate, 48000);
	for (int c = 0; c < 2; c++) {
		for (size_t i = 0; i < nd; i++)
			ch[i] = d[2 * i + (size_t)c];
		direct(ch, nd, h, nh, ref);
		for (size_t i = 0; i < frames; i++) {
			worst = fmax(worst, fabs(y[2 * i + (size_t)c] - ref[i]));
			peak = fmax(peak, fabs(ref[i]));
		}
	}
	print_message("# stereo through a mono IR: within %.1e of the peak of direct convolution\n",
		      worst / peak);
	assert_true(worst / peak < 1e-6);
	free(y);
	/* normalised: the peak at -1 dBFS */
	assert_int_equal(sh("%s auralize %s/ir.wav %s/dry.wav -o %s/norm.wav --normalize -1 -q",
			    roomsim, dir, dir, dir), 0);
	snprintf(path, sizeof(path), "%s/norm.wav", dir);
	y = wav_read(path, &frames, &channels, &rate);
	peak = 0;
	for (size_t i = 0; i < frames * (size_t)channels; i++)
		peak = fmax(peak, fabs(y[i]));
	assert_true(fabs(20 * log10(peak) + 1) < 0.01);
	free(y);
	/* a dry signal at 44.1 kHz: resampled to 48 kHz first */
	snprintf(path, sizeof(path), "%s/dry441.wav", dir);
	write_wav(path, d, 22050, 1, 44100);
	assert_int_equal(sh("%s auralize %s/ir.wav %s/dry441.wav -o %s/wet441.wav -q", roomsim,
			    dir, dir, dir), 0);
	snprintf(path, sizeof(path), "%s/wet441.wav", dir);
	y = wav_read(path, &frames, &channels, &rate);
	assert_int_equal(rate, 48000);
	assert_int_equal(channels, 1);
	assert_int_equal(frames, 24000 + nh - 1);	/* 0.5 s at 48 kHz, then the IR's tail */
	free(y);
	/* loud: reported, and clipped in pcm16 */
	for (size_t i = 0; i < nh; i++)
		h[i] *= 100;
	snprintf(path, sizeof(path), "%s/loud.wav", dir);
	write_wav(path, h, nh, 1, 48000);
	assert_int_equal(sh("%s auralize %s/loud.wav %s/dry.wav -o %s/clip.wav --format pcm16 -q "
			    "2> %s/clip.txt && grep -q 'beyond full scale (clipped' %s/clip.txt",
			    roomsim, dir, dir, dir, dir, dir), 0);
	/* bad input */
	assert_int_equal(sh("%s auralize %s/ir.wav %s/dry.wav 2> /dev/null", roomsim, dir, dir), 2);
	assert_int_equal(sh("%s auralize %s/ir.wav %s/none.wav -o %s/x.wav 2> /dev/null", roomsim,
			    dir, dir, dir), 2);
	assert_int_equal(sh("%s auralize %s/ir.wav %s/dry.wav -o %s/x.wav --format mp3 "
			    "2> /dev/null", roomsim, dir, dir, dir), 2);
	assert_int_equal(sh("%s auralize --help | grep -q 'overlap-add'", roomsim), 0);
	free(h);
	free(d);
	free(ch);
	free(ref);
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
		cmocka_unit_test(overlap_add),
		cmocka_unit_test(command),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
