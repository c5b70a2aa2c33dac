/*
 * test_spatial_run.c - spatial receivers end to end (`roomsim run`): the ambisonic response
 * of the wave engine's field, against the directions and harmonics of a far source and of a
 * shoebox's image sources; the binaural response's interaural differences against the SOFA
 * set's own filters; in a hybrid run, the geometric part's channels.
 */
#include <mysofa.h>	/* before complex.h, whose I it names a field */
#include <fftw3.h>	/* before complex.h: fftw_complex is double[2] */
#include <complex.h>
#include <math.h>
#include <sndfile.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"
#include "../io/balloon.h"
#include "../solver/directivity.h"
#include "../solver/spatial.h"

#define C 343.0
#define ROOMSIM (getenv("ROOMSIM") ? getenv("ROOMSIM") : "build/roomsim")

/* Make the folder dir, write the room (fmt, with dir as its argument) to dir/room.yaml, whose
 * path goes to path, and run it. */
static void run_room(char *dir, char *path, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void run_room(char *dir, char *path, size_t len, const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, len, "%s/room.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	assert_int_equal(sh("%s run %s -q", ROOMSIM, path), 0);
}

/* Channel ch of an interleaved WAV (frames x channels), n samples from `from`, tapered by a
 * Hann window, zero-padded to m, into its spectrum X (m / 2 + 1 bins). */
static void spectrum(const double *x, int channels, int ch, size_t from, size_t n, size_t m,
		     fftw_complex *X)
{
	double *y = fftw_alloc_real(m);
	fftw_plan p = fftw_plan_dft_r2c_1d((int)m, y, X, FFTW_ESTIMATE);

	memset(y, 0, m * sizeof(double));
	for (size_t i = 0; i < n; i++)
		y[i] = x[(from + i) * (size_t)channels + (size_t)ch] *
		       (0.5 - 0.5 * cos(2 * M_PI * ((double)i + 0.5) / (double)n));
	fftw_execute(p);
	fftw_destroy_plan(p);
	fftw_free(y);
}

/*
 * A source 3 m from three third-order receivers in a large box, each in another direction:
 * the direct sound, windowed before the first reflection, per frequency from 100 Hz to
 * the top of the band roomsim info states: the first order's intensity points to the source
 * within 3 degrees; in that band every channel is its spherical
 * harmonic times W within 0.5 dB (those near zero within 0.06 of W). The third receiver
 * is binaural, the source 90 degrees to its left: the interaural level and phase
 * differences of its direct sound are those of its pressure (W) through the SOFA set's own
 * filters at 90 degrees: per octave band up to fmax within 1 dB, per frequency within 50
 * microseconds.
 */
static void far_source(void **state)
{
	char dir[] = "/tmp/roomsim-spatial-XXXXXX", path[256], wav[320];
	static const double src[3] = { 4.0, 3.5, 2.5 };
	static const double rec[3][3] = { { 4.0, 0.5, 2.5 }, { 5.837, 5.337, 4.0 },
					  { 7.0, 3.5, 2.5 } };
	double worst_doa = 0, worst_db = 0, worst_abs = 0, lo_band = 0, f_top = 0;

	(void)state;
	run_room(dir, path, sizeof(path),
		 "grid: {fmax: 1000}\nduration: 0.014\ngeometry: {box: [8.0, 7.0, 5.0]}\n"
		 "materials: {w: {absorption: 0.3}}\nsurfaces: {default: w}\n"
		 "sources: [{name: S, position: [4.0, 3.5, 2.5], signal: impulse}]\n"
		 "receivers: [{name: A, position: [4.0, 0.5, 2.5], ambisonics: 3},\n"
		 "  {name: B, position: [5.837, 5.337, 4.0], ambisonics: 3},\n"
		 "  {name: L, position: [7.0, 3.5, 2.5], ambisonics: 3,"
		 " binaural: {yaw: 90, equalise: false}}]\n"
		 "output: {dir: %s/out, wav: {samplerate: 48000, format: float32}}\n", dir);
	{	/* the band where roomsim info says the third order is exact */
		char cmd[400], line[512];
		FILE *p;

		snprintf(cmd, sizeof(cmd), "%s info %s", ROOMSIM, path);
		p = popen(cmd, "r");
		assert_non_null(p);
		while (fgets(line, sizeof(line), p))
			if (strstr(line, "spatial    A: order 3"))
				assert_int_equal(sscanf(strstr(line, "exact from"), "exact from %lf to %lf",
							&lo_band, &f_top), 2);
		pclose(p);
		print_message("third order exact from %.0f to %.0f Hz\n", lo_band, f_top);
		assert_true(lo_band > 100 && lo_band < 0.6 * f_top && f_top <= 1000);
	}
	for (int q = 0; q < 3; q++) {
		const char *name = q == 0 ? "A" : q == 1 ? "B" : "L";
		double u[3], dist = 0, y[16], *x, *w0 = NULL;
		size_t frames, from, n, m = 8192;
		int channels, rate;
		fftw_complex *X[16];

		for (int a = 0; a < 3; a++)
			dist += (src[a] - rec[q][a]) * (src[a] - rec[q][a]);
		dist = sqrt(dist);
		for (int a = 0; a < 3; a++)
			u[a] = (src[a] - rec[q][a]) / dist;
		sp_sh(3, u, y);
		snprintf(wav, sizeof(wav), "%s/out/S_%s.ambix.wav", dir, name);
		x = wav_read(wav, &frames, &channels, &rate);
		assert_int_equal(channels, 16);
		w0 = calloc(frames + 1, sizeof(double));
		assert_non_null(w0);
		/* 3 ms either side of the direct sound (the first reflection is 4 ms later) */
		from = (size_t)((dist / C - 3e-3) * rate);
		n = (size_t)(6e-3 * rate);
		assert_true(from + n <= frames);
		for (int a = 0; a < 16; a++) {
			X[a] = fftw_alloc_complex(m / 2 + 1);
			spectrum(x, channels, a, from, n, m, X[a]);
		}
		for (size_t k = 1; k <= m / 2; k++) {
			const double f = (double)k * rate / (double)m;
			const double complex w = X[0][k][0] + I * X[0][k][1];
			double v[3], doa;

			if (f < 100 || f > f_top)
				continue;
			for (int a = 0; a < 3; a++) {	/* X, Y, Z: ACN 3, 1, 2 */
				const int ch = a == 0 ? 3 : a;

				v[a] = creal(conj(w) * (X[ch][k][0] + I * X[ch][k][1]));
			}
			doa = acos(fmin(1, (v[0] * u[0] + v[1] * u[1] + v[2] * u[2]) /
					    sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))) * 180 / M_PI;
			worst_doa = fmax(worst_doa, doa);
			if (f < lo_band)
				continue;
			for (int a = 1; a < 16; a++) {
				const double complex g = (X[a][k][0] + I * X[a][k][1]) / w;

				if (fabs(y[a]) > 0.25 && fabs(20 * log10(cabs(g) / fabs(y[a]))) > 0.5)
					print_message("receiver %s, %.0f Hz, channel %d: %+.2f dB\n", name, f,
						      a, 20 * log10(cabs(g) / fabs(y[a])));
				if (fabs(y[a]) > 0.25)
					worst_db = fmax(worst_db, fabs(20 * log10(cabs(g) / fabs(y[a]))));
				else
					worst_abs = fmax(worst_abs, cabs(g - y[a]));
			}
		}
		for (int a = 0; a < 16; a++)
			fftw_free(X[a]);
		for (size_t i = 0; i < frames && q == 2; i++)	/* W */
			w0[i] = x[i * 16];
		free(x);
		if (q == 2) {	/* the binaural receiver: against the set's filters at 90 degrees */
			struct MYSOFA_EASY *e;
			int len, err = 0;
			float *hl, *hr, dl, dr;
			double *b, *ref, worst_ild = 0, worst_itd = 0;
			fftw_complex *B[2], *R[2];
			size_t bf;
			int bch, brate;

			snprintf(wav, sizeof(wav), "%s/out/S_L.binaural.wav", dir);
			b = wav_read(wav, &bf, &bch, &brate);
			assert_int_equal(bch, 2);
			e = mysofa_open_no_norm("/usr/share/libmysofa/default.sofa", (float)brate, &len,
						&err);
			assert_non_null(e);
			hl = calloc((size_t)len, sizeof(float));
			hr = calloc((size_t)len, sizeof(float));
			mysofa_getfilter_float(e, 0, 1.4f, 0, hl, hr, &dl, &dr);
			/* the reference: the same direct sound (W, the pressure) through the set's
			 * filters, in the same window */
			ref = calloc(2 * bf, sizeof(double));
			for (size_t i = 0; i < bf; i++)
				for (int j = 0; j < len && (size_t)j <= i; j++) {
					ref[2 * i] += hl[j] * w0[(i - (size_t)j)];
					ref[2 * i + 1] += hr[j] * w0[(i - (size_t)j)];
				}
			for (int ear = 0; ear < 2; ear++) {
				B[ear] = fftw_alloc_complex(m / 2 + 1);
				R[ear] = fftw_alloc_complex(m / 2 + 1);
				spectrum(b, 2, ear, from, n, m, B[ear]);
				spectrum(ref, 2, ear, from, n, m, R[ear]);
			}
			/* per octave band (the top one ends at fmax): the level difference of the
			 * bands' energies; the delay difference of every bin */
			for (double f0 = 177; f0 < f_top; f0 *= 2) {
				double en[4] = { 0, 0, 0, 0 };

				for (size_t k = 1; k <= m / 2; k++) {
					const double f = (double)k * brate / (double)m;
					double complex ours, theirs;

					if (f < f0 / sqrt(2) || f >= fmin(f0 * sqrt(2), f_top))
						continue;
					en[0] += B[0][k][0] * B[0][k][0] + B[0][k][1] * B[0][k][1];
					en[1] += B[1][k][0] * B[1][k][0] + B[1][k][1] * B[1][k][1];
					en[2] += R[0][k][0] * R[0][k][0] + R[0][k][1] * R[0][k][1];
					en[3] += R[1][k][0] * R[1][k][0] + R[1][k][1] * R[1][k][1];
					ours = (B[0][k][0] + I * B[0][k][1]) / (B[1][k][0] + I * B[1][k][1]);
					theirs = (R[0][k][0] + I * R[0][k][1]) / (R[1][k][0] + I * R[1][k][1]);
					worst_itd = fmax(worst_itd, fabs(carg(ours / theirs)) / (2 * M_PI * f));
				}
				print_message("octave at %.0f Hz: ILD %.2f dB, the set's %.2f dB\n", f0,
					      10 * log10(en[0] / en[1]), 10 * log10(en[2] / en[3]));
				worst_ild = fmax(worst_ild, fabs(10 * log10(en[0] / en[1] * en[3] / en[2])));
			}
			print_message("binaural at 90 degrees: worst ILD difference %.2f dB, worst "
				      "interaural delay difference %.1f us\n", worst_ild, 1e6 * worst_itd);
			assert_true(worst_ild < 1);
			assert_true(worst_itd < 50e-6);
			for (int ear = 0; ear < 2; ear++) {
				fftw_free(B[ear]);
				fftw_free(R[ear]);
			}
			assert_int_equal(bf, frames);
			free(b);
			free(ref);
			free(hl);
			free(hr);
			mysofa_close(e);
		}
		free(w0);
	}
	print_message("far source: worst direction error %.2f degrees; channel gains within %.2f "
		      "dB, small ones within %.3f of W\n", worst_doa, worst_db, worst_abs);
	assert_true(worst_doa < 3);
	assert_true(worst_db < 0.5);
	assert_true(worst_abs < 0.06);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

/* x (frames x channels) band-passed from lo to hi Hz, zero phase (raised-cosine edges of an
 * octave), channel by channel, in place. */
static void bandpass(double *x, size_t frames, int channels, double fs, double lo, double hi)
{
	size_t m = 1;

	while (m < 2 * frames)
		m *= 2;
	{
		double *y = fftw_alloc_real(m);
		fftw_complex *Y = fftw_alloc_complex(m / 2 + 1);
		fftw_plan f = fftw_plan_dft_r2c_1d((int)m, y, Y, FFTW_ESTIMATE);
		fftw_plan b = fftw_plan_dft_c2r_1d((int)m, Y, y, FFTW_ESTIMATE);

		for (int ch = 0; ch < channels; ch++) {
			memset(y, 0, m * sizeof(double));
			for (size_t i = 0; i < frames; i++)
				y[i] = x[i * (size_t)channels + (size_t)ch];
			fftw_execute(f);
			for (size_t k = 0; k <= m / 2; k++) {
				const double fr = (double)k * fs / (double)m;
				const double a = log2(fmax(fr, 1e-9) / lo), c = log2(fr / hi + 1e-300);
				double g = 1;

				g *= a <= -0.5 ? 0 : a >= 0.5 ? 1 : 0.5 + 0.5 * sin(M_PI * a);
				g *= c >= 0.5 ? 0 : c <= -0.5 ? 1 : 0.5 - 0.5 * sin(M_PI * c);
				Y[k][0] *= g / (double)m;
				Y[k][1] *= g / (double)m;
			}
			fftw_execute(b);
			for (size_t i = 0; i < frames; i++)
				x[i * (size_t)channels + (size_t)ch] = y[i];
		}
		fftw_destroy_plan(f);
		fftw_destroy_plan(b);
		fftw_free(y);
		fftw_free(Y);
	}
}

/*
 * A shoebox: the first six reflections (of the image sources up to order 3, the first six
 * after the direct sound, each at least 1 ms from its neighbours), each direction from the
 * first-order response's intensity in 0.5 ms either side of its arrival (250 Hz to fmax),
 * within 5 degrees of its image source's.
 */
static void shoebox_reflections(void **state)
{
	char dir[] = "/tmp/roomsim-spatial-XXXXXX", path[256], wav[320];
	static const double src[3] = { 2.36, 2.97, 1.46 }, rec[3] = { 2.12, 3.11, 1.03 };
	static const double box[3] = { 5, 4, 3 };
	double t[400], d[400][3], worst = 0, *x;
	int order[400], nim = 0, channels, rate;
	size_t frames;

	(void)state;
	run_room(dir, path, sizeof(path),
		 "grid: {fmax: 2000}\nduration: 0.016\ngeometry: {box: [5.0, 4.0, 3.0]}\n"
		 "materials: {w: {absorption: 0.1}}\nsurfaces: {default: w}\n"
		 "sources: [{name: S, position: [2.36, 2.97, 1.46], signal: impulse}]\n"
		 "receivers: [{name: R, position: [2.12, 3.11, 1.03], ambisonics: 1}]\n"
		 "output: {dir: %s/out, wav: {samplerate: 48000, format: float32}}\n", dir);
	/* the image sources to order 3: (1 - 2 p) src + 2 n box on each axis */
	for (int nx = -2; nx <= 2; nx++)
		for (int ny = -2; ny <= 2; ny++)
			for (int nz = -2; nz <= 2; nz++)
				for (int p = 0; p < 8; p++) {
					const int n3[3] = { nx, ny, nz };
					double v[3], len = 0;
					int o = 0;

					for (int a = 0; a < 3; a++) {
						const int pa = p >> a & 1;

						v[a] = (1 - 2 * pa) * src[a] + 2 * n3[a] * box[a] - rec[a];
						o += abs(2 * n3[a] - pa);
						len += v[a] * v[a];
					}
					if (o > 3)
						continue;
					len = sqrt(len);
					assert_true(nim < 400);
					t[nim] = len / C;
					order[nim] = o;
					for (int a = 0; a < 3; a++)
						d[nim][a] = v[a] / len;
					nim++;
				}
	for (int i = 1; i < nim; i++)	/* by time */
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double tt = t[j], dd[3];
			int oo = order[j];

			memcpy(dd, d[j], sizeof(dd));
			t[j] = t[j - 1];
			order[j] = order[j - 1];
			memcpy(d[j], d[j - 1], sizeof(dd));
			t[j - 1] = tt;
			order[j - 1] = oo;
			memcpy(d[j - 1], dd, sizeof(dd));
		}
	for (int i = 1; i <= 7; i++)	/* the test's premise: separate arrivals */
		assert_true(t[i] - t[i - 1] > 1e-3);
	snprintf(wav, sizeof(wav), "%s/out/S_R.ambix.wav", dir);
	x = wav_read(wav, &frames, &channels, &rate);
	assert_int_equal(channels, 4);
	bandpass(x, frames, channels, rate, 250, 2000);
	for (int i = 1; i <= 6; i++) {
		const long c0 = lround(t[i] * rate), w = lround(0.5e-3 * rate);
		double v[3] = { 0, 0, 0 }, ang;

		assert_true(c0 + w < (long)frames);
		for (long k = c0 - w; k <= c0 + w; k++) {
			const double *s = x + k * channels;

			v[0] += s[0] * s[3];
			v[1] += s[0] * s[1];
			v[2] += s[0] * s[2];
		}
		ang = acos(fmin(1, (v[0] * d[i][0] + v[1] * d[i][1] + v[2] * d[i][2]) /
				    sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))) * 180 / M_PI;
		print_message("reflection %d (order %d) at %.2f ms: %.2f degrees off\n", i, order[i],
			      1e3 * t[i], ang);
		worst = fmax(worst, ang);
	}
	assert_true(worst < 5);
	free(x);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

/*
 * A hybrid run: every spatial WAV is full band and written; the ambisonic W channel is the
 * mono response (the wave part's W is its pressure, the geometric part's W its mono
 * response); the binaural response has the mono one's level in every octave of the
 * diffuse part within 3 dB (the HRTFs equalised for the diffuse field); roomsim auralize
 * makes a mono dry signal stereo through it; on one thread the spatial WAVs are the same
 * bytes.
 */
static void hybrid(void **state)
{
	char dir[] = "/tmp/roomsim-spatial-XXXXXX", path[256], wav[320];
	double *m, *a, *b, num = 0, den = 0;
	size_t fm, fa, fb;
	int ch, rate;

	(void)state;
	run_room(dir, path, sizeof(path),
		 "grid: {fmax: 500}\nduration: 0.4\ngeometry: {box: [4.0, 3.0, 2.5]}\n"
		 "materials: {w: {absorption: 0.2, scattering: 0.2}}\nsurfaces: {default: w}\n"
		 "sources: [{name: S, position: [1.1, 0.9, 1.3], signal: impulse}]\n"
		 "receivers: [{name: R, position: [2.7, 2.05, 1.35], ambisonics: 1, binaural: true}]\n"
		 "output: {dir: %s/out, wav: {samplerate: 48000, format: float32}}\n"
		 "hybrid: {crossover: 300, rays: 20000}\n", dir);
	snprintf(wav, sizeof(wav), "%s/out/S_R.wav", dir);
	m = wav_read(wav, &fm, &ch, &rate);
	snprintf(wav, sizeof(wav), "%s/out/S_R.ambix.wav", dir);
	a = wav_read(wav, &fa, &ch, &rate);
	assert_int_equal(ch, 4);
	snprintf(wav, sizeof(wav), "%s/out/S_R.binaural.wav", dir);
	b = wav_read(wav, &fb, &ch, &rate);
	assert_int_equal(ch, 2);
	assert_int_equal(fa, fm);
	assert_int_equal(fb, fm);
	for (size_t i = 0; i < fm; i++) {
		num += (a[4 * i] - m[i]) * (a[4 * i] - m[i]);
		den += m[i] * m[i];
	}
	print_message("W against the mono response: %.2g relative\n", sqrt(num / den));
	assert_true(sqrt(num / den) < 0.01);
	{	/* octaves of the diffuse part (after 50 ms): binaural against mono */
		const size_t from = (size_t)(0.05 * rate), n = fm - from, mm = 32768;
		fftw_complex *M = fftw_alloc_complex(mm / 2 + 1), *B[2] = {
			fftw_alloc_complex(mm / 2 + 1), fftw_alloc_complex(mm / 2 + 1) };

		spectrum(m, 1, 0, from, n, mm, M);
		spectrum(b, 2, 0, from, n, mm, B[0]);
		spectrum(b, 2, 1, from, n, mm, B[1]);
		for (double f0 = 250; f0 <= 8000; f0 *= 2) {
			double em = 0, eb = 0;

			for (size_t k = 0; k <= mm / 2; k++) {
				const double f = (double)k * rate / (double)mm;

				if (f < f0 / sqrt(2) || f >= f0 * sqrt(2))
					continue;
				em += M[k][0] * M[k][0] + M[k][1] * M[k][1];
				for (int e = 0; e < 2; e++)
					eb += 0.5 * (B[e][k][0] * B[e][k][0] + B[e][k][1] * B[e][k][1]);
			}
			print_message("%5.0f Hz octave: binaural %+.2f dB against mono\n", f0,
				      10 * log10(eb / em));
			assert_true(fabs(10 * log10(eb / em)) < 3);
		}
		fftw_free(M);
		fftw_free(B[0]);
		fftw_free(B[1]);
	}
	/* a mono dry signal through the binaural response: stereo (roomsim auralize) */
	{
		double *dry = calloc(4800, sizeof(double)), *wet;
		size_t fw;
		int cw, rw;

		dry[100] = 1;
		snprintf(wav, sizeof(wav), "%s/dry.wav", dir);
		{
			SF_INFO info = { .samplerate = 48000, .channels = 1,
					 .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT };
			SNDFILE *sf = sf_open(wav, SFM_WRITE, &info);

			assert_non_null(sf);
			assert_int_equal(sf_writef_double(sf, dry, 4800), 4800);
			sf_close(sf);
		}
		assert_int_equal(sh("%s auralize %s/out/S_R.binaural.wav %s -o %s/wet.wav -q", ROOMSIM,
				    dir, wav, dir), 0);
		snprintf(wav, sizeof(wav), "%s/wet.wav", dir);
		wet = wav_read(wav, &fw, &cw, &rw);
		assert_int_equal(cw, 2);
		for (size_t i = 0; i + 100 < fw && i < fb; i++)	/* the response, delayed */
			for (int e = 0; e < 2; e++)
				assert_true(fabs(wet[(i + 100) * 2 + e] - b[i * 2 + e]) <
					    1e-6 + 1e-5 * fabs(b[i * 2 + e]));
		free(dry);
		free(wet);
	}
	/* the same bytes on one thread (the encoder, the tracer and the outputs run on several) */
	assert_int_equal(sh("OMP_NUM_THREADS=1 %s run %s -q --out %s/one", ROOMSIM, path, dir), 0);
	assert_int_equal(sh("cmp %s/out/S_R.ambix.wav %s/one/S_R.ambix.wav && cmp "
			    "%s/out/S_R.binaural.wav %s/one/S_R.binaural.wav", dir, dir, dir, dir), 0);
	free(m);
	free(a);
	free(b);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

/* The rest of a ring room's text, into text (cap bytes): twelve receivers R0..R11 every 30
 * degrees on a horizontal circle of radius rad around src, and float32 WAVs into dir/out. */
static void ring_receivers(char *text, size_t cap, const double src[3], double rad,
			   const char *dir)
{
	size_t len = (size_t)snprintf(text, cap, "receivers:\n");

	for (int j = 0; j < 12; j++)
		len += (size_t)snprintf(text + len, cap - len,
					"  - {name: R%d, position: [%.4f, %.4f, %g]}\n", j,
					src[0] + rad * cos(j * M_PI / 6), src[1] + rad * sin(j * M_PI / 6),
					src[2]);
	snprintf(text + len, cap - len,
		 "output: {dir: %s/out, wav: {samplerate: 48000, format: float32}}\n", dir);
}

/*
 * Directional sources in free field (the direct sound of a large box, before any
 * reflection): five sources at one point, one of each pattern, aimed along +x, and a ring of
 * receivers 2 m away in the horizontal plane every 30 degrees. Per octave band up to fmax,
 * each receiver's level against the one on the axis is the pattern's, within 1 dB, where the
 * pattern is above -12 dB: a + (1 - a) cos(theta) with the dipole's near field at 2 m,
 * (1 - i / kr).
 */
static void directivity(void **state)
{
	static const char *const names[5] = { "omni", "cardioid", "supercardioid",
					       "hypercardioid", "figure-of-eight" };
	static const double pa[5] = { 1, 0.5, 0.36602540378443865, 0.25, 0 };
	char dir[] = "/tmp/roomsim-spatial-XXXXXX", path[256], wav[320], text[4096];
	const double src[3] = { 4.016, 4.016, 2.516 }, rad = 2, f_top = 1000;
	double worst = 0;
	size_t len = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	len += (size_t)snprintf(text + len, sizeof(text) - len,
				"grid: {fmax: 1000}\nduration: 0.012\ngeometry: {box: [8.0, 8.0, 5.0]}\n"
				"materials: {w: {absorption: 0.3}}\nsurfaces: {default: w}\nsources:\n");
	for (int k = 0; k < 5; k++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"  - {name: S%d, position: [%g, %g, %g], signal: impulse, "
					"directivity: %s}\n", k, src[0], src[1], src[2], names[k]);
	ring_receivers(text + len, sizeof(text) - len, src, rad, dir);
	{
		FILE *f;

		snprintf(path, sizeof(path), "%s/room.yaml", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		assert_int_equal(sh("%s run %s -q", ROOMSIM, path), 0);
	}
	for (int k = 0; k < 5; k++) {
		double e[12][3];	/* per receiver, octaves at 250, 500 Hz and 707-1000 Hz */

		for (int j = 0; j < 12; j++) {
			double *x;
			size_t frames, m = 8192;
			int ch, rate;
			fftw_complex *X = fftw_alloc_complex(m / 2 + 1);

			snprintf(wav, sizeof(wav), "%s/out/S%d_R%d.wav", dir, k, j);
			x = wav_read(wav, &frames, &ch, &rate);
			/* 4 ms either side of the direct sound (5.8 ms; the first reflection at 15) */
			spectrum(x, 1, 0, (size_t)((rad / C - 4e-3) * rate), (size_t)(8e-3 * rate), m, X);
			for (int b = 0; b < 3; b++) {
				const double f0 = 250 * pow(2, b), lo = f0 / sqrt(2);
				const double hi = fmin(f0 * sqrt(2), f_top);

				e[j][b] = 0;
				for (size_t i = 0; i <= m / 2; i++) {
					const double f = (double)i * rate / (double)m;

					if (f >= lo && f < hi)
						e[j][b] += X[i][0] * X[i][0] + X[i][1] * X[i][1];
				}
			}
			fftw_free(X);
			free(x);
		}
		for (int j = 0; j < 12; j++)
			for (int b = 0; b < 3; b++) {
				const double f0 = 250 * pow(2, b), kr = 2 * M_PI * f0 / C * rad;
				const double th = j * M_PI / 6, a = pa[k];
				const double complex dj = a + (1 - a) * cos(th) * (1 - I / kr);
				const double complex d0 = a + (1 - a) * (1 - I / kr);
				const double want = 20 * log10(cabs(dj) / cabs(d0));
				const double got = 10 * log10(e[j][b] / e[0][b]);

				if (want < -12)
					continue;
				if (fabs(got - want) > 1)
					print_message("%s, %3d degrees, %4.0f Hz: %+.2f dB, %+.2f expected\n",
						      names[k], 30 * j, f0, got, want);
				worst = fmax(worst, fabs(got - want));
			}
	}
	print_message("directivity: worst level %.2f dB from the patterns\n", worst);
	assert_true(worst < 1);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

/*
 * Sources with balloons in free field, as directivity() measures patterns: the library's
 * talker aimed along +x, its loudspeaker aimed along +y, and a table file aimed along -y
 * whose levels fall as -k (1 - cos(angle from the front)) dB, k from 0.5 at 125 Hz to 4 at
 * 2 kHz, and from 500 Hz up rise by 1 dB times the sine of the azimuth (to its left). roomsim info says each one's wave part is within 1 dB up to fmax; per octave
 * band 250 Hz to fmax, each receiver's level against the on-axis one is the balloon's
 * (weighted by the on-axis spectrum over the band) within 1 dB. The direct sound comes
 * DIR_LEAD steps late, as info says.
 */
static const double balloon_k[5] = { 0.5, 1, 2, 3, 4 };	/* dB, at 125 Hz to 2 kHz */

/* The test table's level (dB) towards (cosine from the front, sine towards the left) at f:
 * k and the left term linear in log f between the octaves, held beyond. */
static double table_db(double ct, double left, double f)
{
	const double x = fmin(fmax(log2(f / 125), 0), 4);
	const int b = x >= 4 ? 3 : (int)x;
	const double w = x - b;
	const double k = (1 - w) * balloon_k[b] + w * balloon_k[b + 1];
	const double l = (1 - w) * (b > 1) + w * (b + 1 > 1);

	return 3 - k * (1 - ct) + l * left;
}

static void balloons(void **state)
{
	static const char *const names[3] = { "T", "L", "F" };
	char dir[] = "/tmp/roomsim-spatial-XXXXXX", path[256], wav[320], text[4096], line[512];
	const double src[3] = { 4.016, 4.016, 2.516 }, rad = 2, f_top = 1000;
	struct room_source rs[3] = { { .aim = { 1, 0, 0 } }, { .aim = { 0, 1, 0 } },
				     { .aim = { 0, -1, 0 } } };
	struct room_balloon b[3];
	double worst = 0, dt_us = 0;
	size_t len = 0;
	int fvalid = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/table.csv", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# a test balloon\nazimuth, elevation, 125, 250, 500, 1000, 2000\n");
	for (int e = -90; e <= 90; e += 10)
		for (int a = -180; a < 180; a += 10) {
			const double ct = cos(e * M_PI / 180) * cos(a * M_PI / 180);
			const double left = cos(e * M_PI / 180) * sin(a * M_PI / 180);

			fprintf(f, "%d, %d", a, e);
			for (int k = 0; k < 5; k++)	/* 3 dB on axis, louder to the left */
				fprintf(f, ", %.4f", table_db(ct, left, 125 * pow(2, k)));
			fprintf(f, "\n");
		}
	fclose(f);
	assert_int_equal(room_balloon_library("talker", &b[0]), 0);
	assert_int_equal(room_balloon_library("loudspeaker", &b[1]), 0);
	assert_int_equal(cfg_balloon_read(path, &b[2], text, sizeof(text)), 0);
	for (int k = 0; k < 3; k++) {
		rs[k].balloon = &b[k];
		room_source_frame(&rs[k]);
	}
	len += (size_t)snprintf(text + len, sizeof(text) - len,
				"grid: {fmax: 1000}\nduration: 0.014\ngeometry: {box: [8.0, 8.0, 5.0]}\n"
				"materials: {w: {absorption: 0.3}}\nsurfaces: {default: w}\nsources:\n"
				"  - {name: T, position: [%g, %g, %g], directivity: talker}\n"
				"  - {name: L, position: [%g, %g, %g], directivity: loudspeaker, "
				"orientation: {azimuth: 90}}\n"
				"  - {name: F, position: [%g, %g, %g], directivity: table.csv, "
				"orientation: {azimuth: -90}}\n", src[0], src[1], src[2],
				src[0], src[1], src[2], src[0], src[1], src[2]);
	ring_receivers(text + len, sizeof(text) - len, src, rad, dir);
	snprintf(path, sizeof(path), "%s/room.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	snprintf(line, sizeof(line), "%s info %s", ROOMSIM, path);
	f = popen(line, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		double v;

		if (sscanf(line, "time step %lf", &v) == 1)
			dt_us = v;
		if (sscanf(line, " within 1 dB up to %lf Hz", &v) == 1 && v >= f_top)
			fvalid++;
	}
	assert_int_equal(pclose(f), 0);
	assert_int_equal(fvalid, 3);
	assert_true(dt_us > 0);
	assert_int_equal(sh("%s run %s -q", ROOMSIM, path), 0);
	for (int k = 0; k < 3; k++) {
		const size_t m = 8192;
		fftw_complex *X[12];
		double *x, mine = 0;
		size_t frames;
		int ch, rate = 48000;

		for (int j = 0; j < 12; j++) {
			X[j] = fftw_alloc_complex(m / 2 + 1);
			snprintf(wav, sizeof(wav), "%s/out/%s_R%d.wav", dir, names[k], j);
			x = wav_read(wav, &frames, &ch, &rate);
			/* 4 ms either side of the direct sound, DIR_LEAD steps late */
			spectrum(x, 1, 0, (size_t)((rad / C + DIR_LEAD * dt_us * 1e-6 - 4e-3) * rate),
				 (size_t)(8e-3 * rate), m, X[j]);
			free(x);
		}
		for (int j = 0; j < 12; j++) {
			const double th = j * M_PI / 6, d[3] = { cos(th), sin(th), 0 };
			const double d0[3] = { rs[k].aim[0], rs[k].aim[1], 0 };
			const int j0 = k == 0 ? 0 : k == 1 ? 3 : 9;	/* the receiver on the axis */

			for (int bd = 0; bd < 3; bd++) {
				const double f0 = 250 * pow(2, bd), lo = f0 / sqrt(2);
				const double hi = fmin(f0 * sqrt(2), f_top);
				double e = 0, e0 = 0, w = 0, w0 = 0, got, want;

				for (size_t i = 1; i <= m / 2; i++) {
					const double fr = (double)i * rate / (double)m;
					const double p0 = X[j0][i][0] * X[j0][i][0] + X[j0][i][1] * X[j0][i][1];
					/* the table's own levels for F: facing -y, its left is +x */
					const double g = k < 2 ? room_source_gain(&rs[k], d, fr) /
								 room_source_gain(&rs[k], d0, fr)
							       : pow(10, (table_db(-d[1], d[0], fr) -
									  table_db(1, 0, fr)) / 20);

					if (fr < lo || fr >= hi)
						continue;
					e += X[j][i][0] * X[j][i][0] + X[j][i][1] * X[j][i][1];
					e0 += p0;
					w += p0 * g * g;
					w0 += p0;
				}
				got = 10 * log10(e / e0);
				want = 10 * log10(w / w0);
				if (fabs(got - want) > 1)
					print_message("%s, %3d degrees, %4.0f Hz: %+.2f dB, %+.2f expected\n",
						      names[k], 30 * j, f0, got, want);
				worst = fmax(worst, fabs(got - want));
				mine = fmax(mine, fabs(got - want));
			}
		}
		print_message("%s: worst level %.2f dB from its balloon\n", names[k], mine);
		for (int j = 0; j < 12; j++)
			fftw_free(X[j]);
		free(b[k].db);
	}
	print_message("balloons: worst level %.2f dB from the balloons\n", worst);
	assert_true(worst < 1);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(far_source),
		cmocka_unit_test(shoebox_reflections),
		cmocka_unit_test(hybrid),
		cmocka_unit_test(directivity),
		cmocka_unit_test(balloons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
