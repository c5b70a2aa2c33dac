/*
 * ga_synth.c - a pressure impulse response from the geometric engine's arrivals and energy
 * histograms (ga.h; docs/physics.md, "Synthesis"), and the crossover that joins it to the
 * wave engine's response. FFTW does the filtering, in the frequency domain, zero phase.
 */
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ga_impl.h"

#define SINC_HALF 16		/* taps each side of an arrival's fractional-delay sinc */
#define DIRAC_MAX 0.5		/* the Dirac sequence's density, at most this times fs */

double ga_band_weight(int b, double f)
{
	const double x = log2(fmax(f, 1e-9) / 1000);
	/* exact octave centres 1000 2^k: 62.5 Hz ... 16 kHz */
	const double xb = b - 4;

	if ((b == 0 && x <= xb) || (b == GA_BANDS - 1 && x >= xb))
		return 1;
	if (x <= xb - 1 || x >= xb + 1)
		return 0;
	return pow(cos(0.5 * M_PI * (x - xb)), 2);
}

/* Where f lies in the crossover's transition: 0 below it, 1 above, raised in log frequency. */
static double transition(double f, double fc)
{
	const double x = log2(fmax(f, 1e-9) / fc);

	return x <= -0.25 ? 0 : x >= 0.25 ? 1 : 2 * (x + 0.25);
}

double ga_crossover_gain(double f, double fc, int coherent)
{
	const double c = cos(0.5 * M_PI * transition(f, fc));

	return coherent ? c * c : c;
}

/* The FFT length for n samples at fs with room for the filters' tails: a power of two. */
static size_t fft_len(size_t n, double fs)
{
	size_t m = 1;

	while (m < n + (size_t)(0.25 * fs) + 2 * SINC_HALF)
		m *= 2;
	return m;
}

/* Add an impulse of amplitude a at time t (s) to x (rate fs, m samples), as a Hann-windowed
 * sinc: its fractional delay exact in the band. */
static void add_impulse(double *x, size_t m, double fs, double t, double a)
{
	const double at = t * fs;
	const long i0 = (long)floor(at);

	for (long i = i0 - SINC_HALF + 1; i <= i0 + SINC_HALF; i++) {
		const double u = (double)i - at;
		const double w = 0.5 + 0.5 * cos(M_PI * u / SINC_HALF);
		const double s = fabs(u) < 1e-12 ? 1 : sin(M_PI * u) / (M_PI * u);

		if (i >= 0 && (size_t)i < m)
			x[i] += a * w * s;
	}
}

/* A Poisson count of mean lambda. */
static long poisson(uint64_t *s, double lambda)
{
	if (lambda > 50) {	/* normal approximation */
		const double u1 = fmax(ga_rand(s), 1e-300), u2 = ga_rand(s);
		const double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

		return (long)fmax(0, lround(lambda + sqrt(lambda) * z));
	} else {
		const double l = exp(-lambda);
		double p = 1;
		long k = -1;

		do {
			k++;
			p *= ga_rand(s);
		} while (p > l);
		return k;
	}
}

/* The Dirac sequence of receiver q's rays: pulse j at sample at[j] with sign sg[j], in bin
 * bin[j], its band b's amplitude gain[j * GA_BANDS + b]. */
struct pulses {
	long n;
	long *at;
	size_t *bin;
	int *sg;
	double *gain;
};

static void pulses_free(struct pulses *p)
{
	free(p->at);
	free(p->bin);
	free(p->sg);
	free(p->gain);
	memset(p, 0, sizeof(*p));
}

/* The pulses of the rays' energies of receiver q, for n samples at fs; -1: out of memory. */
static int make_pulses(const struct ga *g, const struct ga_hist *h, int q, double fs, size_t n,
		       uint64_t seed, struct pulses *p)
{
	const double k4 = 4 * M_PI * g->c * g->c * g->c / (3 * fmax(g->volume, 1e-9));
	const double bin = GA_BIN * fs;	/* samples per bin */
	const long most = (long)(DIRAC_MAX * ((double)n + bin + 1)) + (long)h->nbins + 2;
	uint64_t s = seed;
	double wh[GA_BANDS];

	memset(p, 0, sizeof(*p));
	p->at = malloc((size_t)most * sizeof(long));
	p->bin = malloc((size_t)most * sizeof(size_t));
	p->sg = malloc((size_t)most * sizeof(int));
	p->gain = malloc((size_t)most * GA_BANDS * sizeof(double));
	if (!p->at || !p->bin || !p->sg || !p->gain) {
		pulses_free(p);
		return -1;
	}
	/* The diffuse field's energy near the walls (Waterhouse's interference zone, a
	 * quarter wavelength deep) is not in the room's interior, where receivers are: the
	 * interior holds V / (V + S lambda / 8) of it (ISO 3741's correction). */
	for (int b = 0; b < GA_BANDS; b++)
		wh[b] = 1 / (1 + g->area * g->c / ga_band_f[b] / (8 * fmax(g->volume, 1e-9)));
	for (size_t k = 0; k < h->nbins; k++) {
		const double *e = h->e + ((size_t)q * h->nbins + k) * GA_BANDS;
		const double t0 = k * GA_BIN, t1 = (k + 1) * GA_BIN;
		const size_t i0 = (size_t)ceil(k * bin), i1 = (size_t)ceil((k + 1) * bin);
		const double cap = DIRAC_MAX * (double)(i1 - i0);
		double lambda = fmin(cap, k4 * (t1 * t1 * t1 - t0 * t0 * t0)), etot = 0;
		long cnt;

		for (int b = 0; b < GA_BANDS; b++)
			etot += e[b];
		cnt = poisson(&s, lambda);
		if (!(etot > 0) || i0 >= n || i1 <= i0)
			continue;
		cnt = cnt < 1 ? 1 : cnt > (long)cap + 1 ? (long)cap + 1 : cnt;
		for (long j = 0; j < cnt && p->n < most; j++, p->n++) {
			p->at[p->n] = (long)(i0 + (size_t)(ga_rand(&s) * (double)(i1 - i0)));
			p->sg[p->n] = ga_rand(&s) < 0.5 ? -1 : 1;
			p->bin[p->n] = k;
			for (int b = 0; b < GA_BANDS; b++)
				p->gain[p->n * GA_BANDS + b] = sqrt(wh[b] * e[b] / (double)cnt);
		}
	}
	return 0;
}

/* The rays' seed of receiver q. */
static uint64_t rays_seed(unsigned long seed, int q)
{
	return 0x9d2c5680ull ^ ((uint64_t)seed << 20) ^ (uint64_t)q;
}

int ga_synth(const struct ga *g, const struct ga_image *im, size_t nim, const struct ga_hist *h,
	     int q, double fs, size_t n, unsigned long seed, double *out, struct rs_error *err)
{
	const size_t m = fft_len(n, fs), nf = m / 2 + 1;
	double *x[GA_BANDS] = { 0 }, *y = fftw_alloc_real(m);
	fftw_complex *X = fftw_alloc_complex(nf), *Y = fftw_alloc_complex(nf);
	fftw_plan fwd = NULL, inv = NULL;
	int rc = 0;

	for (int b = 0; b < GA_BANDS; b++)
		if (!(x[b] = calloc(m, sizeof(double))))
			rc = -1;
	if (rc || !y || !X || !Y) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the geometric response");
		goto out;
	}
	for (size_t i = 0; i < nim; i++)
		for (int b = 0; b < GA_BANDS; b++)
			add_impulse(x[b], m, fs, im[i].t, im[i].amp[b]);
	if (h && h->e) {
		struct pulses p;

		if (make_pulses(g, h, q, fs, n, rays_seed(seed, q), &p)) {
			rc = rs_fail(err, RS_ENOMEM, "out of memory for the geometric response");
			goto out;
		}
		for (long j = 0; j < p.n; j++)
			for (int b = 0; b < GA_BANDS; b++)
				if ((size_t)p.at[j] < m)
					x[b][p.at[j]] += p.sg[j] * p.gain[j * GA_BANDS + b];
		pulses_free(&p);
	}
	fwd = fftw_plan_dft_r2c_1d((int)m, y, X, FFTW_ESTIMATE);
	inv = fftw_plan_dft_c2r_1d((int)m, Y, y, FFTW_ESTIMATE);
	if (!fwd || !inv) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
	memset(Y, 0, nf * sizeof(*Y));
	for (int b = 0; b < GA_BANDS; b++) {
		memcpy(y, x[b], m * sizeof(double));
		fftw_execute(fwd);
		for (size_t k = 0; k < nf; k++) {
			const double w = ga_band_weight(b, (double)k * fs / (double)m);

			Y[k][0] += w * X[k][0];
			Y[k][1] += w * X[k][1];
		}
	}
	fftw_execute(inv);
	for (size_t i = 0; i < n; i++)
		out[i] = y[i] / (double)m;
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	for (int b = 0; b < GA_BANDS; b++)
		free(x[b]);
	fftw_free(y);
	fftw_free(X);
	fftw_free(Y);
	return rc;
}

/* Add amplitude a times the filter f (taps taps) delayed by t seconds to x (m samples): the
 * filter's taps are impulses; with one tap a fractional-delay sinc, else the filter through
 * the sinc's taps (conv, taps + 2 SINC_HALF values, the sum's first at sample *i0). */
static void frac_filter(const double *f, int taps, double fs, double t, double *conv, long *i0)
{
	const double at = t * fs;
	const long k0 = (long)floor(at);

	*i0 = k0 - SINC_HALF + 1;
	memset(conv, 0, (size_t)(taps + 2 * SINC_HALF) * sizeof(double));
	for (long i = k0 - SINC_HALF + 1; i <= k0 + SINC_HALF; i++) {
		const double u = (double)i - at;
		const double w = 0.5 + 0.5 * cos(M_PI * u / SINC_HALF);
		const double sn = (fabs(u) < 1e-12 ? 1 : sin(M_PI * u) / (M_PI * u)) * w;

		for (int j = 0; j < taps; j++)
			conv[i - *i0 + j] += sn * f[j];
	}
}

/* The direction of band b of pulse j: a cell drawn from the band's energy per cell in the
 * pulse's direction bin (uniformly when it holds none), and a point drawn in it. */
static void pulse_dir(const struct ga_hist *h, int qd, size_t bin, int b, uint64_t s,
		      double d[3])
{
	const size_t kd = (size_t)((double)bin * GA_BIN / GA_DIR_BIN + 1e-9);
	const double *e = h->d + (((size_t)qd * h->ndbins + (kd < h->ndbins ? kd : h->ndbins - 1)) *
				  GA_DIR_CELLS) * GA_BANDS + b;
	double tot = 0, u, pick, cum = 0, c[3], len;
	int cell = GA_DIR_CELLS - 1, face, ax, ua, va;

	for (int k = 0; k < GA_DIR_CELLS; k++)
		tot += e[(size_t)k * GA_BANDS];
	pick = ga_rand(&s) * (tot > 0 ? tot : GA_DIR_CELLS);
	for (int k = 0; k < GA_DIR_CELLS; k++) {
		cum += tot > 0 ? e[(size_t)k * GA_BANDS] : 1;
		if (pick < cum) {
			cell = k;
			break;
		}
	}
	/* a point of the cell's square on the cube's face */
	face = cell / 9;
	ax = face / 2;
	ua = (ax + 1) % 3;
	va = (ax + 2) % 3;
	u = -1 + (2.0 / 3) * (cell % 9 / 3 + ga_rand(&s));
	c[ax] = face % 2 ? -1 : 1;
	c[ua] = u;
	c[va] = -1 + (2.0 / 3) * (cell % 3 + ga_rand(&s));
	len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
	for (int a = 0; a < 3; a++)
		d[a] = c[a] / len;
}

int ga_synth_render(const struct ga *g, const struct ga_image *im, size_t nim,
		    const struct ga_hist *h, int q, const struct ga_render *rd, double fs,
		    size_t n, unsigned long seed, double **out, struct rs_error *err)
{
	const size_t m = fft_len(n, fs), nf = m / 2 + 1;
	const int nch = rd->nch, taps = rd->taps, qd = h && h->dir_of ? h->dir_of[q] : -1;
	/* one band at a time with one tap (ambisonics: many channels); all at once with
	 * filters, so that each arrival's filter goes through its sinc once */
	const int group = taps > 1 ? GA_BANDS : 1;
	const size_t nx = (size_t)group * nch;
	double **x = calloc(nx, sizeof(*x)), *y = fftw_alloc_real(m);
	double *f = malloc((size_t)nch * taps * sizeof(double)), delay[64];
	/* with filters, the pulses take their cell's centre: its filters and delays, once */
	double *cf = taps > 1 ? malloc((size_t)GA_DIR_CELLS * nch * taps * sizeof(double)) : NULL;
	double (*cd)[64] = taps > 1 ? malloc(GA_DIR_CELLS * sizeof(*cd)) : NULL;
	double *conv = malloc((size_t)(taps + 2 * SINC_HALF) * nch * sizeof(double));
	fftw_complex *X = fftw_alloc_complex(nf), **Y = calloc((size_t)nch, sizeof(*Y));
	fftw_plan fwd = NULL, inv = NULL;
	struct pulses p = { 0 };
	int rc = 0;

	if (nch > 64) {
		rc = rs_fail(err, RS_EINTERNAL, "%d channels (at most 64)", nch);
		goto out;
	}
	for (size_t i = 0; x && i < nx; i++)
		if (!(x[i] = malloc(m * sizeof(double))))
			rc = -1;
	for (int c = 0; Y && c < nch; c++)
		if (!(Y[c] = fftw_alloc_complex(nf)))
			rc = -1;
	if (rc || !x || !y || !f || !conv || !X || !Y || (taps > 1 && (!cf || !cd)) ||
	    (h && h->e && make_pulses(g, h, q, fs, n, rays_seed(seed, q), &p))) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the spatial geometric response");
		goto out;
	}
	if (!(fwd = fftw_plan_dft_r2c_1d((int)m, y, X, FFTW_ESTIMATE))) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
	for (int c = 0; c < nch; c++)
		memset(Y[c], 0, nf * sizeof(*Y[c]));
	for (int k = 0; taps > 1 && k < GA_DIR_CELLS; k++) {
		double d[3];

		ga_dir_centre(k, d);
		rd->filter(rd->ctx, d, cf + (size_t)k * nch * taps, cd[k]);
	}
	for (int b0 = 0; b0 < GA_BANDS; b0 += group) {
		for (size_t i = 0; i < nx; i++)
			memset(x[i], 0, m * sizeof(double));
		/* x[(b - b0) * nch + c]: band b of channel c */
		for (size_t i = 0; i < nim; i++) {
			rd->filter(rd->ctx, im[i].dir, f, delay);
			for (int c = 0; c < nch; c++) {
				long i0;

				if (taps == 1) {
					for (int b = b0; b < b0 + group; b++)
						add_impulse(x[(b - b0) * nch + c], m, fs,
							    im[i].t + delay[c], im[i].amp[b] * f[c]);
					continue;
				}
				frac_filter(f + (size_t)c * taps, taps, fs, im[i].t + delay[c], conv, &i0);
				for (int b = b0; b < b0 + group; b++)
					for (int k = 0; k < taps + 2 * SINC_HALF; k++)
						if (i0 + k >= 0 && (size_t)(i0 + k) < m)
							x[(b - b0) * nch + c][i0 + k] +=
								im[i].amp[b] * conv[k];
			}
		}
		/* with filters (the table's), a channel per thread; with one tap, the filter of
		 * each pulse's own direction, computed once for all channels */
#pragma omp parallel for schedule(static, 1) if (taps > 1)
		for (int c0 = 0; c0 < (taps > 1 ? nch : 1); c0++)
			for (long j = 0; j < p.n; j++)
				for (int b = b0; b < b0 + group; b++) {
					double d[3];
					const double a = p.sg[j] * p.gain[j * GA_BANDS + b];
					const double *ff = f, *dd = delay;

					if (a == 0)
						continue;
					if (qd >= 0) {
						pulse_dir(h, qd, p.bin[j], b, rays_seed(seed, q) ^
							  (0xd1b54a32d192ed03ull *
							   (uint64_t)(j * GA_BANDS + b + 1)), d);
					} else {
						d[0] = 1;
						d[1] = d[2] = 0;
					}
					if (taps > 1) {	/* the filters of the cell's centre */
						const int k = ga_dir_cell(d);

						ff = cf + (size_t)k * nch * taps;
						dd = cd[k];
					} else {
						rd->filter(rd->ctx, d, f, delay);
					}
					for (int c = taps > 1 ? c0 : 0; c < (taps > 1 ? c0 + 1 : nch); c++) {
						const long at = p.at[j] + lround(dd[c] * fs);

						for (int k = 0; k < taps; k++)
							if (at + k >= 0 && (size_t)(at + k) < m)
								x[(b - b0) * nch + c][at + k] +=
									a * ff[(size_t)c * taps + k];
					}
				}
		/* each channel's bands into its spectrum, in order, a channel per thread */
#pragma omp parallel
		{
			double *yy = fftw_alloc_real(m);
			fftw_complex *XX = fftw_alloc_complex(nf);

#pragma omp for schedule(dynamic, 1)
			for (int c = 0; c < nch; c++)
				for (int b = b0; b < b0 + group && yy && XX; b++) {
					memcpy(yy, x[(b - b0) * nch + c], m * sizeof(double));
					fftw_execute_dft_r2c(fwd, yy, XX);
					for (size_t k = 0; k < nf; k++) {
						const double w = ga_band_weight(b, (double)k * fs /
										   (double)m);

						Y[c][k][0] += w * XX[k][0];
						Y[c][k][1] += w * XX[k][1];
					}
				}
			if (!yy || !XX)
#pragma omp atomic write
				rc = -1;
			fftw_free(yy);
			fftw_free(XX);
		}
		if (rc) {
			rc = rs_fail(err, RS_ENOMEM, "out of memory for the spatial geometric response");
			goto out;
		}
	}
	if (!(inv = fftw_plan_dft_c2r_1d((int)m, Y[0], y, FFTW_ESTIMATE))) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
#pragma omp parallel
	{
		double *yy = fftw_alloc_real(m);

#pragma omp for schedule(dynamic, 1)
		for (int c = 0; c < nch; c++) {
			if (!yy)
				continue;
			fftw_execute_dft_c2r(inv, Y[c], yy);	/* Y[c] is spent */
			for (size_t i = 0; i < n; i++)
				out[c][i] = yy[i] / (double)m;
		}
		if (!yy)
#pragma omp atomic write
			rc = -1;
		fftw_free(yy);
	}
	if (rc)
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the spatial geometric response");
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	for (size_t i = 0; x && i < nx; i++)
		free(x[i]);
	for (int c = 0; Y && c < nch; c++)
		fftw_free(Y[c]);
	free(x);
	free(Y);
	fftw_free(y);
	fftw_free(X);
	free(f);
	free(cf);
	free(cd);
	free(conv);
	pulses_free(&p);
	return rc;
}

#define MIX_FADE 0.005	/* s: the crossfade from the early to the late part */

int ga_crossover(double *low, const double *high, size_t n, double fs, double fc, double t_mix,
		 struct rs_error *err)
{
	const size_t m = fft_len(n, fs), nf = m / 2 + 1;
	double *y = fftw_alloc_real(m);
	fftw_complex *F[4] = { fftw_alloc_complex(nf), fftw_alloc_complex(nf),
			       fftw_alloc_complex(nf), fftw_alloc_complex(nf) };
	fftw_plan fwd[4] = { NULL }, inv = NULL;
	int rc = 0;

	for (int k = 0; k < 4; k++)
		if (!F[k])
			rc = -1;
	if (rc || !y) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory for the crossover");
		goto out;
	}
	for (int k = 0; k < 4 && !rc; k++)
		if (!(fwd[k] = fftw_plan_dft_r2c_1d((int)m, y, F[k], FFTW_ESTIMATE)))
			rc = -1;
	if (rc || !(inv = fftw_plan_dft_c2r_1d((int)m, F[0], y, FFTW_ESTIMATE))) {
		rc = rs_fail(err, RS_ENOMEM, "FFTW: no plan for %zu samples", m);
		goto out;
	}
	/* F: the low part early and late, the high part early and late */
	for (int k = 0; k < 4; k++) {
		const double *x = k < 2 ? low : high;

		memset(y, 0, m * sizeof(double));
		for (size_t i = 0; i < n; i++) {
			const double u = ((double)i / fs - t_mix) / MIX_FADE + 0.5;
			const double early = u <= 0 ? 1 : u >= 1 ? 0 : 0.5 + 0.5 * cos(M_PI * u);

			y[i] = x[i] * (k % 2 ? 1 - early : early);
		}
		fftw_execute(fwd[k]);
	}
	for (size_t k = 0; k < nf; k++) {
		const double f = (double)k * fs / (double)m;
		const double la = ga_crossover_gain(f, fc, 1), lp = ga_crossover_gain(f, fc, 0);
		const double hp = sqrt(fmax(0, 1 - lp * lp));

		for (int c = 0; c < 2; c++)
			F[0][k][c] = la * F[0][k][c] + lp * F[1][k][c] + (1 - la) * F[2][k][c] +
				     hp * F[3][k][c];
	}
	fftw_execute(inv);
	for (size_t i = 0; i < n; i++)
		low[i] = y[i] / (double)m;
out:
	for (int k = 0; k < 4; k++) {
		if (fwd[k])
			fftw_destroy_plan(fwd[k]);
		fftw_free(F[k]);
	}
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(y);
	return rc;
}
