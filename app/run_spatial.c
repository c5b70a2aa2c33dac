/*
 * run_spatial.c - a run's spatial receivers (run.h; docs/physics.md, "Spatial receivers"):
 * the wave engine reads a ball of grid points around each, which sp_encode() turns into
 * ambisonic channels; binaural responses are those channels through a spherical-harmonic fit
 * of the HRTFs. In a hybrid run the geometric part renders each arrival through the filters
 * of its direction (ga_synth_render) and each channel is joined at the crossover as the mono
 * response is.
 */
#include <fftw3.h>
#include <math.h>
#include <mysofa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "../io/wav.h"
#include "../solver/convolve.h"
#include "../solver/signal.h"
#include "../solver/spatial.h"

#define HRTF_REG 1e-3	/* the HRTFs' fit: Tikhonov weight against the mean of its diagonal */
/* the encoder solves up to this times fmax: above it the WAVs' low-pass at fmax (or the
 * crossover's, below fmax) leaves nothing */
#define ENCODE_TOP 1.5

struct run_spatial {
	int q;			/* the receiver */
	int order;		/* the encoder's (app_spatial_order) */
	int nch;		/* its channels, (order + 1)^2 */
	int amb;		/* ambisonic channels written, (ambisonics + 1)^2, or 0 */
	int point0, row0;	/* its first engine point and its first row of signals */
	struct sp_encoder enc;
	struct MYSOFA_HRTF *set;	/* binaural, rank 0: the HRTFs at the WAV rate */
	struct MYSOFA_EASY *hrtf;	/* hybrid: the same with libmysofa's interpolation of
					 * them (set is its hrtf); else NULL and set is owned */
	int taps;		/* their length */
	double radius;		/* the mean distance of their measurements, m */
	double *hsh;		/* [2][nch][taps]: the HRIRs' spherical-harmonic fit */
	int nga;		/* the geometric part's channels: amb, then 2 when binaural */
	double *ga_ir, *geo;	/* hybrid, rank 0: [source][nga][wav_frames], the unit
				 * response and with the source's signal */
};

void run_point(const struct run *r, int i, double pos[3])
{
	const struct room *room = r->room;
	int k = 0;

	if (i < room->nreceivers) {
		memcpy(pos, room->receivers[i].pos, 3 * sizeof(double));
		return;
	}
	while (k + 1 < r->nsp && r->sp[k + 1].point0 <= i)
		k++;
	for (int a = 0; a < 3; a++)
		pos[a] = room->receivers[r->sp[k].q].pos[a] + r->sp[k].enc.off[i - r->sp[k].point0][a];
}

/* Solve the symmetric positive definite n x n system A X = B (nrhs columns, row-major) in
 * place by Cholesky's factorisation; -1 when A is not positive definite. */
static int cholesky_solve(double *A, int n, double *B, int nrhs)
{
	for (int j = 0; j < n; j++) {
		double d = A[j * n + j];

		for (int k = 0; k < j; k++)
			d -= A[j * n + k] * A[j * n + k];
		if (!(d > 0))
			return -1;
		A[j * n + j] = sqrt(d);
		for (int i = j + 1; i < n; i++) {
			double v = A[i * n + j];

			for (int k = 0; k < j; k++)
				v -= A[i * n + k] * A[j * n + k];
			A[i * n + j] = v / A[j * n + j];
		}
	}
	for (int c = 0; c < nrhs; c++) {	/* L y = b, then L^T x = y */
		for (int i = 0; i < n; i++) {
			double v = B[(size_t)i * nrhs + c];

			for (int k = 0; k < i; k++)
				v -= A[i * n + k] * B[(size_t)k * nrhs + c];
			B[(size_t)i * nrhs + c] = v / A[i * n + i];
		}
		for (int i = n - 1; i >= 0; i--) {
			double v = B[(size_t)i * nrhs + c];

			for (int k = i + 1; k < n; k++)
				v -= A[k * n + i] * B[(size_t)k * nrhs + c];
			B[(size_t)i * nrhs + c] = v / A[i * n + i];
		}
	}
	return 0;
}

/*
 * Equalise the HRIRs for the diffuse field: one minimum-phase filter for every measurement
 * and ear, so that their power averaged over the set's directions is 1 at every frequency
 * (third-octave smoothed, the boost held to EQ_MAX_BOOST): a diffuse field has the same
 * spectrum in the binaural response as in the mono one, whatever the set's measurement chain
 * was. One filter for all leaves the interaural differences as they are. The set's common
 * lead (its earliest onset less EQ_LEAD samples) is taken out, so that the binaural
 * response's arrivals are at the mono one's times.
 */
#define EQ_MAX_BOOST 10.0	/* at most +20 dB over the gain at 1 kHz */
#define EQ_LEAD 16
/* the diffuse-field power is summed in this many runs of the set's filters, each on a
 * thread, then the runs in order: the same bits on any number of threads */
#define EQ_RUNS 32
static int equalise_hrtf(struct MYSOFA_HRTF *h, double fs, struct rs_error *err)
{
	const size_t n = h->N, nir = (size_t)h->M * h->R;
	size_t L = 1, nf;
	double *x, *P, *c, *runs;
	fftw_complex *X;
	fftw_plan fwd, inv;
	long lead = (long)n;
	int rc = 0, fail = 0;

	while (L < 8 * n)
		L *= 2;
	nf = L / 2 + 1;
	x = fftw_alloc_real(L);
	X = fftw_alloc_complex(nf);
	P = calloc(nf, sizeof(double));
	c = calloc(nf, sizeof(double));
	runs = calloc(EQ_RUNS * nf, sizeof(double));
	fwd = x && X ? fftw_plan_dft_r2c_1d((int)L, x, X, FFTW_ESTIMATE) : NULL;
	inv = x && X ? fftw_plan_dft_c2r_1d((int)L, X, x, FFTW_ESTIMATE) : NULL;
	if (!P || !c || !runs || !fwd || !inv) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory equalising the HRTFs");
		goto out;
	}
	/* the diffuse-field power, and the earliest onset (a tenth of the peak) */
#pragma omp parallel for schedule(dynamic, 1) reduction(min : lead) reduction(| : fail)
	for (int g = 0; g < EQ_RUNS; g++) {
		double *xg = fftw_alloc_real(L), *Pg = runs + (size_t)g * nf;
		fftw_complex *Xg = fftw_alloc_complex(nf);

		fail |= !xg || !Xg;
		for (size_t j = nir * g / EQ_RUNS; j < nir * (g + 1) / EQ_RUNS && !fail; j++) {
			const float *ir = h->DataIR.values + j * n;
			float peak = 0;
			long t = 0;

			for (size_t i = 0; i < L; i++)
				xg[i] = i < n ? ir[i] : 0;
			fftw_execute_dft_r2c(fwd, xg, Xg);
			for (size_t k = 0; k < nf; k++)
				Pg[k] += (Xg[k][0] * Xg[k][0] + Xg[k][1] * Xg[k][1]) / (double)nir;
			for (size_t i = 0; i < n; i++)
				peak = fmaxf(peak, fabsf(ir[i]));
			while (t < (long)n && fabsf(ir[t]) < 0.1f * peak)
				t++;
			lead = t < lead ? t : lead;
		}
		fftw_free(xg);
		fftw_free(Xg);
	}
	if (fail) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory equalising the HRTFs");
		goto out;
	}
	for (int g = 0; g < EQ_RUNS; g++)
		for (size_t k = 0; k < nf; k++)
			P[k] += runs[(size_t)g * nf + k];
	lead = lead > EQ_LEAD ? lead - EQ_LEAD : 0;
	/* log of the smoothed inverse magnitude, the boost held */
	{
		const size_t k1k = (size_t)lround(1000 * (double)L / fs);
		double top;

		for (size_t k = 0; k < nf; k++) {
			const size_t a = (size_t)floor(k / pow(2, 1 / 6.0));
			const size_t b = (size_t)ceil(k * pow(2, 1 / 6.0));
			double sum = 0;

			for (size_t i = a; i <= b && i < nf; i++)
				sum += P[i];
			c[k] = sum / (double)((b < nf ? b : nf - 1) - a + 1);
		}
		top = log(EQ_MAX_BOOST / sqrt(fmax(c[k1k < nf ? k1k : nf - 1], 1e-300)));
		for (size_t k = 0; k < nf; k++)
			c[k] = fmin(-0.5 * log(fmax(c[k], 1e-300)), top);
	}
	/* the minimum-phase filter of that magnitude */
	for (size_t k = 0; k < nf; k++)
		X[k][0] = c[k];
	if (sig_min_phase(&X[0][0], L)) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory equalising the HRTFs");
		goto out;
	}
	{
		fftw_complex *E = fftw_alloc_complex(nf);

		if (!E) {
			rc = rs_fail(err, RS_ENOMEM, "out of memory equalising the HRTFs");
			goto out;
		}
		memcpy(E, X, nf * sizeof(*E));
#pragma omp parallel reduction(| : fail)
		{
			double *xt = fftw_alloc_real(L);
			fftw_complex *Xt = fftw_alloc_complex(nf);

			fail = !xt || !Xt;
#pragma omp for schedule(static)
			for (size_t j = 0; j < nir; j++) {
				float *ir = h->DataIR.values + j * n;

				if (fail)
					continue;
				for (size_t i = 0; i < L; i++)
					xt[i] = i < n ? ir[i] : 0;
				fftw_execute_dft_r2c(fwd, xt, Xt);
				for (size_t k = 0; k < nf; k++) {
					const double re = Xt[k][0] * E[k][0] - Xt[k][1] * E[k][1];
					const double im = Xt[k][0] * E[k][1] + Xt[k][1] * E[k][0];

					Xt[k][0] = re;
					Xt[k][1] = im;
				}
				fftw_execute_dft_c2r(inv, Xt, xt);
				for (size_t i = 0; i < n; i++)
					ir[i] = (float)(xt[i + (size_t)lead] / (double)L);
			}
			fftw_free(xt);
			fftw_free(Xt);
		}
		fftw_free(E);
		if (fail)
			rc = rs_fail(err, RS_ENOMEM, "out of memory equalising the HRTFs");
	}
out:
	if (fwd)
		fftw_destroy_plan(fwd);
	if (inv)
		fftw_destroy_plan(inv);
	fftw_free(x);
	fftw_free(X);
	free(P);
	free(c);
	free(runs);
	return rc;
}

/* The HRIRs of sp's SOFA set fitted with spherical harmonics of its order in room
 * directions (the listener facing yaw): hsh[ear][ch][tap] such that the sum over channels of
 * hsh Y(d) is the HRIR of d, least squares over the set's directions. */
static int fit_hrtf(struct run_spatial *sp, double yaw, struct rs_error *err)
{
	const struct MYSOFA_HRTF *h = sp->set;
	const int M = (int)h->M, N = (int)h->N, nch = sp->nch, taps = sp->taps;
	double *A = calloc((size_t)nch * nch, sizeof(double));
	double *B = calloc((size_t)nch * 2 * taps, sizeof(double)), *y = malloc(nch * sizeof(double));
	double tr = 0;
	int rc = 0;

	sp->hsh = calloc((size_t)2 * nch * taps, sizeof(double));
	if (!A || !B || !y || !sp->hsh) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory fitting the HRTFs");
		goto out;
	}
	for (int j = 0; j < M; j++) {
		const float *p = h->SourcePosition.values + 3 * j;
		const double len = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
		const double c = cos(yaw * M_PI / 180), s = sin(yaw * M_PI / 180);
		double d[3];

		if (!(len > 0))
			continue;
		/* the head's direction turned to the room's */
		d[0] = (c * p[0] - s * p[1]) / len;
		d[1] = (s * p[0] + c * p[1]) / len;
		d[2] = p[2] / len;
		sp_sh(sp->order, d, y);
		for (int a = 0; a < nch; a++)
			for (int b = 0; b < nch; b++)
				A[a * nch + b] += y[a] * y[b];
		for (int e = 0; e < 2; e++) {
			const float *ir = h->DataIR.values + ((size_t)j * 2 + e) * N;
			const float *dl = h->DataDelay.values;
			/* a delay in samples per measurement and ear, or one per ear */
			const long shift = h->DataDelay.elements >= (unsigned)(2 * M) ?
						   lround(dl[2 * j + e]) :
					   h->DataDelay.elements >= 2 ? lround(dl[e]) : 0;

			for (int t = 0; t < N && t + shift < taps; t++)
				for (int a = 0; a < nch; a++)
					B[((size_t)a * 2 + e) * taps + t + shift] += y[a] * ir[t];
		}
	}
	for (int a = 0; a < nch; a++)
		tr += A[a * nch + a];
	for (int a = 0; a < nch; a++)
		A[a * nch + a] += HRTF_REG * tr / nch;
	if (cholesky_solve(A, nch, B, 2 * taps)) {
		rc = rs_fail(err, RS_EINTERNAL, "the HRTFs' fit failed");
		goto out;
	}
	for (int a = 0; a < nch; a++)
		for (int e = 0; e < 2; e++)
			memcpy(sp->hsh + ((size_t)e * nch + a) * taps, B + ((size_t)a * 2 + e) * taps,
			       taps * sizeof(double));
out:
	free(A);
	free(B);
	free(y);
	return rc;
}

/* The fit's filters from the set's rate fs to the WAV rate wav (libsoxr, io/wav.h). */
static int resample_fit(struct run_spatial *sp, double fs, double wav, struct rs_error *err)
{
	const int taps = (int)ceil(sp->taps * wav / fs) + 1;
	double *out = calloc((size_t)2 * sp->nch * taps, sizeof(double));

	if (!out)
		return rs_fail(err, RS_ENOMEM, "out of memory resampling the HRTFs");
	for (int f = 0; f < 2 * sp->nch; f++)
		if (wav_resample(sp->hsh + (size_t)f * sp->taps, (size_t)sp->taps, fs, wav,
				 out + (size_t)f * taps, (size_t)taps, err)) {
			free(out);
			return err->code;
		}
	free(sp->hsh);
	sp->hsh = out;
	sp->taps = taps;
	return 0;
}

/*
 * Receiver sp's HRTFs (binaural, rank 0): a hybrid run's geometric part looks filters up by
 * direction at the WAV rate (mysofa_open's resampling and interpolation); the wave part
 * needs only the set's fit, made at the set's own rate and then resampled.
 */
static int open_hrtf(const struct run *r, struct run_spatial *sp, struct rs_error *err)
{
	const struct room *room = r->room;
	const struct room_receiver *c = &room->receivers[sp->q];
	double fs = room->wav_rate;
	int len = 0, e = 0;

	if (room->hybrid.on) {
		sp->hrtf = mysofa_open_no_norm(c->sofa, (float)room->wav_rate, &len, &e);
		sp->set = sp->hrtf ? sp->hrtf->hrtf : NULL;
	} else if ((sp->set = mysofa_load(c->sofa, &e))) {
		mysofa_tocartesian(sp->set);
		len = (int)sp->set->N;
		fs = sp->set->DataSamplingRate.elements ? sp->set->DataSamplingRate.values[0] : 0;
		e = fs > 0 ? MYSOFA_OK : MYSOFA_INVALID_FORMAT;
	}
	if (!sp->set || e != MYSOFA_OK) {
		char key[64];

		snprintf(key, sizeof(key), "receivers[%d].binaural", sp->q);
		return room_at(err, room, c->spatial_at, key, "libmysofa cannot open %s at %d Hz "
			       "(its error %d)", c->sofa, room->wav_rate, e);
	}
	if (c->equalise && equalise_hrtf(sp->set, fs, err))
		return err->code;
	sp->taps = len;
	for (unsigned j = 0; j < sp->set->M; j++) {
		const float *p = sp->set->SourcePosition.values + 3 * j;

		sp->radius += sqrt((double)p[0] * p[0] + (double)p[1] * p[1] +
				   (double)p[2] * p[2]) / sp->set->M;
	}
	/* the fit's filters hold the set's delays as well */
	for (unsigned j = 0; j < sp->set->DataDelay.elements; j++)
		sp->taps = (int)fmax(sp->taps, len + ceil(sp->set->DataDelay.values[j]) + 1);
	if (fit_hrtf(sp, c->yaw, err) ||
	    (fs != room->wav_rate && resample_fit(sp, fs, room->wav_rate, err)))
		return err->code;
	return 0;
}

/* The HRTFs of every binaural receiver, on a thread of their own beside the first source's
 * stepping (run_spatial_hrtfs waits for it). */
static void *open_hrtfs(void *arg)
{
	struct run *r = arg;
	const double t0 = app_now();

	for (int k = 0; k < r->nsp && !r->sp_hrtf_rc; k++)
		if (r->room->receivers[r->sp[k].q].binaural)
			r->sp_hrtf_rc = open_hrtf(r, &r->sp[k], &r->sp_hrtf_err);
	r->sp_seconds[0] = app_now() - t0;
	return NULL;
}

int run_spatial_hrtfs(struct run *r, struct rs_error *err)
{
	if (!r->sp)
		return 0;
	pthread_mutex_lock(&r->sp_mu);
	if (r->sp_opening) {
		pthread_join(r->sp_thread, NULL);
		r->sp_opening = 0;
	}
	pthread_mutex_unlock(&r->sp_mu);
	if (r->sp_hrtf_rc && err)
		*err = r->sp_hrtf_err;
	return r->sp_hrtf_rc;
}

int run_spatial_open(struct run *r, struct rs_error *err)
{
	const struct room *room = r->room;
	const double h = r->plan.grid.h;
	int point = room->nreceivers, row = room->nreceivers;

	r->npoints = r->nrows = room->nreceivers;
	for (int q = 0; q < room->nreceivers; q++)
		r->nsp += app_spatial_order(&room->receivers[q]) > 0;
	if (!r->nsp)
		return 0;
	fftw_make_planner_thread_safe();	/* the outputs plan on several threads */
	if (!(r->sp = calloc((size_t)r->nsp, sizeof(*r->sp))))
		return rs_fail(err, RS_ENOMEM, "out of memory for the spatial receivers");
	pthread_mutex_init(&r->sp_mu, NULL);
	for (int q = 0, k = 0; q < room->nreceivers; q++) {
		const struct room_receiver *c = &room->receivers[q];
		struct run_spatial *sp = &r->sp[k];
		const int order = app_spatial_order(c);
		const int cells = order ? app_spatial_cells(room, h, order) : 0;
		char key[64];

		if (!order)
			continue;
		k++;
		sp->q = q;
		sp->order = order;
		sp->nch = (order + 1) * (order + 1);
		sp->amb = c->ambisonics ? (c->ambisonics + 1) * (c->ambisonics + 1) : 0;
		sp->nga = sp->amb + 2 * c->binaural;
		sp->point0 = point;
		sp->row0 = row;
		if (sp_encoder_ball(&sp->enc, order, order + 2, h, cells * h, APP_SPATIAL_GAIN, err))
			return err->code;
		point += sp->enc.npoints;
		row += sp->nch;
		snprintf(key, sizeof(key), "receivers[%d].%s", q,
			 c->ambisonics ? "ambisonics" : "binaural");
		for (int i = 0; i < sp->enc.npoints; i++) {
			double pos[3], w[8], d;
			int node[8][3];

			for (int a = 0; a < 3; a++)
				pos[a] = c->pos[a] + sp->enc.off[i][a];
			if (vox_point(r->grid, pos, node, w, &d))
				return room_at(err, room, c->spatial_at, key, "receiver %s samples the "
					       "field in a ball of radius %.3g m (%d points) for its "
					       "spatial response, and [%.3f, %.3f, %.3f] of it is not in "
					       "the air (valid: a position at least %.3g m from every wall)",
					       c->name, cells * h, sp->enc.npoints, pos[0], pos[1],
					       pos[2], (cells + 1.5) * h);
		}
		if (room->hybrid.on && r->part.rank == 0) {
			const size_t n = (size_t)room->nsources * sp->nga * r->plan.wav_frames + 1;

			sp->ga_ir = calloc(n, sizeof(double));
			sp->geo = calloc(n, sizeof(double));
			if (!sp->ga_ir || !sp->geo)
				return rs_fail(err, RS_ENOMEM, "out of memory for the spatial "
					       "geometric responses");
		}
	}
	r->npoints = point;
	r->nrows = row;
	for (int k = 0; k < r->nsp && r->part.rank == 0 && !r->sp_opening; k++)
		if (room->receivers[r->sp[k].q].binaural) {
			if (pthread_create(&r->sp_thread, NULL, open_hrtfs, r))
				return rs_fail(err, RS_ENOMEM, "cannot start a thread for the HRTFs");
			r->sp_opening = 1;
		}
	for (int k = 0; k < r->nsp && !r->quiet && r->part.rank == 0; k++) {
		const struct run_spatial *sp = &r->sp[k];
		const struct room_receiver *c = &room->receivers[sp->q];
		double lo, hi;

		sp_band(&sp->enc, room->c, &lo, &hi);
		fprintf(stderr, "roomsim: receiver %s: order %d from %d points within %.3g m, "
			"exact from %.0f Hz to %.0f Hz%s%s\n", c->name, sp->order, sp->enc.npoints,
			sp->enc.r[sp->enc.nshells - 1], lo, fmin(hi, APP_SPATIAL_TOP * room->fmax),
			c->ambisonics ? "; ambisonic" : "", c->binaural ? "; binaural" : "");
	}
	return 0;
}

void run_spatial_close(struct run *r)
{
	run_spatial_hrtfs(r, NULL);
	if (r->sp)
		pthread_mutex_destroy(&r->sp_mu);
	for (int k = 0; k < r->nsp; k++) {
		sp_encoder_free(&r->sp[k].enc);
		if (r->sp[k].hrtf)
			mysofa_close(r->sp[k].hrtf);
		else if (r->sp[k].set)
			mysofa_free(r->sp[k].set);
		free(r->sp[k].hsh);
		free(r->sp[k].ga_ir);
		free(r->sp[k].geo);
	}
	free(r->sp);
	r->sp = NULL;
	r->nsp = 0;
}

int run_spatial_encode(struct run *r, int s, struct rs_error *err)
{
	const size_t ns = r->plan.nsamples, n = (size_t)r->completed[s] + 1;
	int rc = 0;

	for (int k = 0; k < r->nsp && !rc; k++) {
		struct run_spatial *sp = &r->sp[k];
		const int np = sp->enc.npoints;
		/* undecomposed: the engine's own samples; else gathered on rank 0 */
		double *buf = r->part.size > 1 ? malloc((size_t)np * ns * sizeof(double)) : NULL;
		const double **p = malloc((size_t)np * sizeof(*p));
		double **out = malloc((size_t)sp->nch * sizeof(*out));

		if (!p || !out || (r->part.size > 1 && !buf)) {
			rc = rs_fail(err, RS_ENOMEM, "out of memory for the spatial receivers");
		} else {
			for (int i = 0; i < np; i++) {
				const int e = sp->point0 + i;
				double *to = buf ? buf + (size_t)i * ns : NULL;

				if (!buf) {
					p[i] = fdtd_receiver(r->engine, r->rec_index[e]);
					continue;
				}
				if (r->rec_index[e] >= 0)
					memcpy(to, fdtd_receiver(r->engine, r->rec_index[e]),
					       ns * sizeof(double));
				part_send0(&r->part, r->rec_rank[e], to, to, ns * sizeof(double));
				p[i] = to;
			}
			for (int c = 0; c < sp->nch; c++) {
				out[c] = r->signals + ((size_t)s * r->nrows + sp->row0 + c) * ns;
				memset(out[c], 0, ns * sizeof(double));
			}
			if (r->part.rank == 0)
				rc = sp_encode(&sp->enc, p, n, r->plan.fs, r->room->c,
					       ENCODE_TOP * r->room->fmax, out, err);
		}
		free(buf);
		free(p);
		free(out);
	}
	return rc;
}

/*
 * The channels w (nch of them, stride nw, n frames at fs) with each order n >= 1 high-passed
 * (zero phase, a raised cosine over the octave below) at the frequency above which the
 * encoder makes that order usable (its weight ten times the gain limit's): below it the
 * order is held down by the limit and its residue would colour the binaural response.
 * Into *out (malloc'd).
 */
static int order_band(const struct run_spatial *sp, const double *w, size_t nw, size_t n,
		      double c, double fs, double **out)
{
	size_t m = 1;
	double *y, lo[SP_MAX_ORDER + 1] = { 0 }, hi;
	fftw_complex *Y;
	fftw_plan f, b;
	const int order = sp->enc.order;

	while (m < n + (size_t)(0.05 * fs))
		m *= 2;
	*out = calloc((size_t)sp->nch * nw + 1, sizeof(double));
	y = fftw_alloc_real(m);
	Y = fftw_alloc_complex(m / 2 + 1);
	if (!*out || !y || !Y) {
		fftw_free(y);
		fftw_free(Y);
		return -1;
	}
	for (int k = 1; k <= order; k++)
		sp_band_clear(&sp->enc, k, c, 10, &lo[k], &hi);
	f = fftw_plan_dft_r2c_1d((int)m, y, Y, FFTW_ESTIMATE);
	b = fftw_plan_dft_c2r_1d((int)m, Y, y, FFTW_ESTIMATE);
	for (int ch = 0; ch < sp->nch; ch++) {
		const int k = (int)floor(sqrt(ch + 0.5));

		memset(y, 0, m * sizeof(double));
		memcpy(y, w + (size_t)ch * nw, n * sizeof(double));
		if (k > 0 && f && b) {
			fftw_execute(f);
			for (size_t i = 0; i <= m / 2; i++) {
				const double x = log2(fmax((double)i * fs / (double)m, 1e-9) / lo[k]) + 1;
				const double g = x <= 0 ? 0 : x >= 1 ? 1 : 0.5 - 0.5 * cos(M_PI * x);

				Y[i][0] *= g / (double)m;
				Y[i][1] *= g / (double)m;
			}
			fftw_execute(b);
		}
		memcpy(*out + (size_t)ch * nw, y, n * sizeof(double));
	}
	if (f)
		fftw_destroy_plan(f);
	if (b)
		fftw_destroy_plan(b);
	fftw_free(y);
	fftw_free(Y);
	return 0;
}

int run_spatial_wavs(struct run *r, int s, int q, int write, double gain, double *peak,
		     struct rs_error *err)
{
	const struct room *room = r->room;
	const struct room_receiver *c = &room->receivers[q];
	const size_t ns = r->plan.nsamples, nw = r->plan.wav_frames;
	const int joined = s < r->ga_joinable;
	struct run_spatial *sp = NULL;
	double *raw = NULL, *w = NULL, *tmp = NULL, *bin = NULL, *bw = NULL;
	size_t frames = 0, clipped;
	int rc = 0;

	for (int k = 0; k < r->nsp; k++)
		if (r->sp[k].q == q)
			sp = &r->sp[k];
	if (!sp)
		return 0;
	if (c->binaural && run_spatial_hrtfs(r, err))
		return err->code;
	raw = malloc((size_t)sp->nch * ns * sizeof(double));
	w = calloc((size_t)sp->nch * nw + 1, sizeof(double));
	/* each channel through each ear's filter, summed in order after */
	tmp = calloc(2 * (size_t)sp->nch * (nw + (size_t)sp->taps + 1), sizeof(double));
	bin = calloc(2 * nw + 1, sizeof(double));
	if (!raw || !w || !tmp || !bin) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory rendering spatial WAVs");
		goto out;
	}
	/* the wave part of each channel at the WAV rate, a channel per thread */
#pragma omp parallel for schedule(dynamic, 1) reduction(max : frames)
	for (int ch = 0; ch < sp->nch; ch++) {
		struct rs_error e = { 0 };
		double *x = raw + (size_t)ch * ns;
		size_t fr = 0;

		memcpy(x, (r->air ? r->air : r->signals) + ((size_t)s * r->nrows + sp->row0 + ch) * ns,
		       ns * sizeof(double));
		if (run_wave_wav(r, s, x, w + (size_t)ch * nw, joined, &fr, &e))
#pragma omp critical
			*err = e;
		frames = fr > frames ? fr : frames;
	}
	if (err->code) {
		rc = err->code;
		goto out;
	}
	/* binaural: the channels through the HRIRs' fit, each order from where the encoder
	 * makes it usable (order_band), then the ears joined */
	if (c->binaural && order_band(sp, w, nw, frames, room->c, room->wav_rate, &bw)) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory rendering spatial WAVs");
		goto out;
	}
#pragma omp parallel for schedule(dynamic, 1) reduction(| : rc)
	for (int k = 0; k < (c->binaural ? 2 * sp->nch : 0); k++) {
		const int e = k / sp->nch, ch = k % sp->nch;

		rc |= conv_ola(bw + (size_t)ch * nw, frames, sp->hsh + ((size_t)e * sp->nch + ch) *
			       sp->taps, (size_t)sp->taps, tmp + (size_t)k * (nw + sp->taps + 1)) != 0;
	}
	if (rc) {
		rc = rs_fail(err, RS_ENOMEM, "out of memory rendering spatial WAVs");
		goto out;
	}
	for (int k = 0; k < (c->binaural ? 2 * sp->nch : 0); k++)
		for (size_t i = 0; i < frames; i++)
			bin[(size_t)(k / sp->nch) * nw + i] += tmp[(size_t)k * (nw + sp->taps + 1) + i];
	/* each channel joined to its geometric part, a channel per thread */
#pragma omp parallel for schedule(dynamic, 1)
	for (int k = 0; k < (joined ? sp->amb + 2 * c->binaural : 0); k++) {
		struct rs_error e = { 0 };
		double *x = k < sp->amb ? w + (size_t)k * nw : bin + (size_t)(k - sp->amb) * nw;

		if (ga_crossover(x, sp->geo + ((size_t)s * sp->nga + k) * nw, frames, room->wav_rate,
				 room->hybrid.crossover, ga_mixing_time(r->ga), &e))
#pragma omp critical
			*err = e;
	}
	rc = err->code;
	/* interleaved, scaled, written */
	for (int kind = 0; kind < 2 && !rc; kind++) {
		const int nch = kind ? 2 * c->binaural : sp->amb;
		const double *x = kind ? bin : w;
		char path[ROOM_PATH_MAX * 2];

		if (!nch)
			continue;
		free(raw);
		if (!(raw = malloc(frames * (size_t)nch * sizeof(double) + 1))) {
			rc = rs_fail(err, RS_ENOMEM, "out of memory rendering spatial WAVs");
			break;
		}
		for (size_t i = 0; i < frames; i++)
			for (int ch = 0; ch < nch; ch++) {
				raw[i * nch + ch] = gain * x[(size_t)ch * nw + i];
				*peak = fmax(*peak, fabs(raw[i * nch + ch]));
			}
		if (!write)
			continue;
		snprintf(path, sizeof(path), "%s/%s_%s.%s.wav", r->out, room->sources[s].name, c->name,
			 kind ? "binaural" : "ambix");
		rc = wav_write_frames(path, raw, frames, nch, room->wav_rate, room->wav_format,
				      &clipped, err);
		r->wav_clipped += clipped;
	}
out:
	free(raw);
	free(w);
	free(tmp);
	free(bin);
	free(bw);
	return rc;
}

/* ---- the geometric part ---- */

void run_spatial_flags(const struct run *r, int *flags)
{
	memset(flags, 0, (size_t)r->room->nreceivers * sizeof(int));
	for (int k = 0; k < r->nsp; k++)
		flags[r->sp[k].q] = 1;
}

/* ga_render's filters: the spherical harmonics of an order (ctx) ... */
static void amb_filter(void *ctx, const double d[3], double *out, double *delay)
{
	const int order = *(const int *)ctx;

	sp_sh(order, d, out);
	memset(delay, 0, (size_t)(order + 1) * (order + 1) * sizeof(double));
}

/* ... and the HRIRs of a receiver, the listener facing its yaw */
struct binaural_ctx {
	struct run_spatial *sp;
	double yaw;
	float *l, *r;
};

static void bin_filter(void *ctx, const double d[3], double *out, double *delay)
{
	struct binaural_ctx *b = ctx;
	const double c = cos(b->yaw * M_PI / 180), s = sin(b->yaw * M_PI / 180);
	const double rad = b->sp->radius > 0 ? b->sp->radius : 1;
	float dl = 0, dr = 0;

	/* the room's direction turned to the head's */
	mysofa_getfilter_float(b->sp->hrtf, (float)(rad * (c * d[0] + s * d[1])),
			       (float)(rad * (-s * d[0] + c * d[1])), (float)(rad * d[2]), b->l, b->r,
			       &dl, &dr);
	for (int j = 0; j < b->sp->taps; j++) {
		out[j] = b->l[j];
		out[b->sp->taps + j] = b->r[j];
	}
	delay[0] = dl;
	delay[1] = dr;
}

int run_spatial_synth(struct run *r, int s, struct ga_image *const *im, const size_t *n,
		      const struct ga_hist *h, struct rs_error *err)
{
	const struct room *room = r->room;
	const size_t nw = r->plan.wav_frames;
	const unsigned long seed = room->hybrid.seed + (unsigned long)s;
	int rc = run_spatial_hrtfs(r, err);

	for (int k = 0; k < r->nsp && !rc; k++) {
		struct run_spatial *sp = &r->sp[k];
		const struct room_receiver *c = &room->receivers[sp->q];
		double *out[64];

		for (int ch = 0; ch < sp->nga; ch++)
			out[ch] = sp->ga_ir + ((size_t)s * sp->nga + ch) * nw;
		if (sp->amb) {
			const struct ga_render rd = { sp->amb, 1, amb_filter, (void *)&c->ambisonics };

			rc = ga_synth_render(r->ga, im[sp->q], n[sp->q], h, sp->q, &rd,
					     room->wav_rate, nw, seed, out, err);
		}
		if (!rc && c->binaural) {
			/* the HRIRs' length, and the set's delays as a second filter */
			struct binaural_ctx b = { sp, c->yaw, calloc((size_t)sp->taps, sizeof(float)),
						  calloc((size_t)sp->taps, sizeof(float)) };
			struct ga_render rd = { 2, sp->taps, bin_filter, &b };

			rc = !b.l || !b.r ? rs_fail(err, RS_ENOMEM, "out of memory for the HRIRs")
					  : ga_synth_render(r->ga, im[sp->q], n[sp->q], h, sp->q, &rd,
							    room->wav_rate, nw, seed, out + sp->amb,
							    err);
			free(b.l);
			free(b.r);
		}
	}
	return rc;
}

int run_spatial_signal(struct run *r, int s, const double *src, struct rs_error *err)
{
	const size_t nw = r->plan.wav_frames;
	int rc = 0;

	for (int k = 0; k < r->nsp; k++) {
#pragma omp parallel for schedule(dynamic, 1) reduction(| : rc)
		for (int ch = 0; ch < r->sp[k].nga; ch++) {	/* a channel per thread */
			const size_t at = ((size_t)s * r->sp[k].nga + ch) * nw;
			double *y = malloc(2 * nw * sizeof(double));

			rc |= !y || conv_ola(src, nw, r->sp[k].ga_ir + at, nw, y);
			if (y)
				memcpy(r->sp[k].geo + at, y, nw * sizeof(double));
			free(y);
		}
	}
	return rc ? rs_fail(err, RS_ENOMEM, "out of memory joining the responses") : 0;
}
