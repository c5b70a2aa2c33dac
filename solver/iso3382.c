/*
 * iso3382.c - room acoustic parameters of an impulse response (iso3382.h).
 */
#include "iso3382.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ISO_G 1.9952623149688795	/* 10^(3/10): IEC 61260-1's octave ratio, base ten */
#define BP_ORDER 4			/* the low-pass prototype's order */

int iso_bands(int third, double fmax, double fs, struct iso_band *out)
{
	static const char *const oct[] = { "63", "125", "250", "500", "1k", "2k", "4k", "8k",
					   "16k" };
	static const char *const thirds[] = { "50", "63", "80", "100", "125", "160", "200",
					      "250", "315", "400", "500", "630", "800", "1k",
					      "1.25k", "1.6k", "2k", "2.5k", "3.15k", "4k", "5k",
					      "6.3k", "8k", "10k", "12.5k", "16k", "20k" };
	const int nb = third ? 27 : 9, first = third ? -13 : -4;
	const double b = third ? 3 : 1;
	int n = 0;

	for (int i = 0; i < nb && n < ISO_MAX_BANDS; i++) {
		const double fm = 1000 * pow(ISO_G, (first + i) / b);
		const double f2 = fm * pow(ISO_G, 0.5 / b);

		if (f2 > fmax || f2 >= 0.5 * fs)
			break;
		out[n].fm = fm;
		out[n].f1 = fm * pow(ISO_G, -0.5 / b);
		out[n].f2 = f2;
		snprintf(out[n].name, sizeof(out[n].name), "%s", third ? thirds[i] : oct[i]);
		n++;
	}
	return n;
}

/* The magnitude of section s at angular frequency w (radians per sample). */
static double section_gain(const struct sig_biquad *s, double w)
{
	const double complex z1 = cexp(-I * w), z2 = z1 * z1;

	return cabs((s->b0 + s->b1 * z1 + s->b2 * z2) / (1 + s->a1 * z1 + s->a2 * z2));
}

void iso_band_filter(const struct iso_band *b, double fs, struct sig_filter *f)
{
	const double w1 = 2 * fs * tan(M_PI * b->f1 / fs), w2 = 2 * fs * tan(M_PI * b->f2 / fs);
	const double w0 = sqrt(w1 * w2), bw = w2 - w1;
	const double wc = 2 * atan(w0 / (2 * fs));	/* the centre, digital */

	f->nsections = 0;
	for (int k = 0; k < BP_ORDER; k++) {
		/* prototype pole k; the band-pass maps it to the roots of s^2 - p bw s + w0^2 */
		const double complex p = cexp(I * M_PI * (2 * k + BP_ORDER + 1) / (2 * BP_ORDER));
		const double complex r = csqrt(p * p * bw * bw - 4 * w0 * w0);

		for (int sign = -1; sign <= 1; sign += 2) {
			const double complex s = 0.5 * (p * bw + sign * r);
			double complex z;
			struct sig_biquad *q;

			if (cimag(s) <= 0)	/* one of each conjugate pair */
				continue;
			z = (1 + s / (2 * fs)) / (1 - s / (2 * fs));
			q = &f->s[f->nsections++];
			q->a1 = -2 * creal(z);
			q->a2 = creal(z) * creal(z) + cimag(z) * cimag(z);
			/* a zero at z = 1 and one at z = -1 (s = 0 and infinity) */
			q->b0 = 1;
			q->b1 = 0;
			q->b2 = -1;
		}
	}
	for (int i = 0; i < f->nsections; i++) {	/* each section unit gain at the centre */
		const double g = section_gain(&f->s[i], wc);

		f->s[i].b0 /= g;
		f->s[i].b2 /= g;
	}
}

size_t iso_onset(const double *h, size_t n)
{
	double peak = 0;

	for (size_t i = 0; i < n; i++)
		peak = fmax(peak, h[i] * h[i]);
	for (size_t i = 0; i < n && peak > 0; i++)
		if (h[i] * h[i] >= 0.01 * peak)
			return i;
	return 0;
}

double iso_decay(const double *edc, size_t n, double fs, double hi, double lo, double *a,
		 double *s)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, slope;
	size_t i0 = n, i1 = n, m;

	for (size_t i = 0; i < n; i++) {	/* from the first at or below hi ... */
		if (i0 == n && edc[i] <= hi)
			i0 = i;
		if (edc[i] < lo) {		/* ... to the last above lo */
			i1 = i;
			break;
		}
	}
	if (i0 == n || i1 == n || i1 < i0 + 2)
		return NAN;
	m = i1 - i0;
	for (size_t i = i0; i < i1; i++) {
		const double t = (double)i / fs;

		sx += t;
		sy += edc[i];
		sxx += t * t;
		sxy += t * edc[i];
	}
	slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
	if (a)
		*a = (sy - slope * sx) / m;
	if (s)
		*s = slope;
	return slope < 0 ? -60 / slope : NAN;
}

/*
 * The energy past the end of e (h^2 from onset, n values): the envelope's level in 10 ms
 * windows, its straight line over the last 20 dB it falls (at least the last third of the
 * response), continued past the end. 0 when the line falls less than TAIL_MIN_FALL dB over
 * its span.
 */
#define TAIL_MIN_FALL 10.0
static double tail_energy(const double *e, size_t n, double fs)
{
	const size_t w = (size_t)fmax(1, round(0.01 * fs)), nw = n / w;
	double *lv = malloc((nw ? nw : 1) * sizeof(double)), top = -INFINITY, sx = 0, sy = 0;
	double sxx = 0, sxy = 0, slope, at;
	size_t from, m;

	if (!lv || nw < 6) {
		free(lv);
		return 0;
	}
	for (size_t k = 0; k < nw; k++) {
		double s = 0;

		for (size_t i = k * w; i < (k + 1) * w; i++)
			s += e[i];
		lv[k] = 10 * log10(s / (double)w + 1e-300);
		top = fmax(top, lv[k]);
	}
	from = nw - 1;	/* back from the end while within 20 dB of the last window */
	while (from > 0 && lv[from - 1] < lv[nw - 1] + 20 && lv[from - 1] < top)
		from--;
	from = from < 2 * nw / 3 ? from : 2 * nw / 3;
	m = nw - from;
	for (size_t k = from; k < nw; k++) {
		const double t = ((double)k + 0.5) * (double)w / fs;

		sx += t;
		sy += lv[k];
		sxx += t * t;
		sxy += t * lv[k];
	}
	slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);	/* dB/s */
	at = (sy - slope * sx) / m + slope * (double)n / fs;	/* the line at the end */
	free(lv);
	/* a line that falls less than TAIL_MIN_FALL over its span gives no rate to continue
	 * (a band whose last third does not decay: a mode, or the end of a truncated response) */
	if (!(slope < 0) || -slope * (double)(m * w) / fs < TAIL_MIN_FALL)
		return 0;
	/* the integral of 10^((at + slope t) / 10) per sample from the end on */
	return pow(10, at / 10) * fs / (-slope * log(10) / 10);
}

void iso_analyse(const double *h, size_t n, double fs, size_t onset, double ref10,
		 struct iso_params *p, double *edc)
{
	const size_t m = onset < n ? n - onset : 0;
	const size_t n50 = (size_t)llround(0.05 * fs), n80 = (size_t)llround(0.08 * fs);
	double *e = malloc((m ? m : 1) * sizeof(double)), *c = edc;
	double total, tail, e50 = 0, e80 = 0, ts = 0;

	p->edt = p->t20 = p->t30 = p->c50 = p->c80 = p->d50 = p->ts = p->g = NAN;
	p->tail = p->range = 0;
	if (!e || m < 2) {
		free(e);
		return;
	}
	if (!c && !(c = malloc(m * sizeof(double)))) {
		free(e);
		return;
	}
	for (size_t i = 0; i < m; i++)
		e[i] = h[onset + i] * h[onset + i];
	tail = tail_energy(e, m, fs);
	c[m - 1] = e[m - 1] + tail;	/* backward integral, then in dB of its start */
	for (size_t i = m - 1; i-- > 0;)
		c[i] = c[i + 1] + e[i];
	total = c[0];
	if (total > 0) {
		for (size_t i = 0; i < m; i++) {
			if (i < n50)
				e50 += e[i];
			if (i < n80)
				e80 += e[i];
			ts += e[i] * (double)i / fs;
			c[i] = 10 * log10(c[i] / total);
		}
		p->tail = tail / total;
		p->range = -c[m - 1];
		p->edt = iso_decay(c, m, fs, 0, -10, NULL, NULL);
		p->t20 = iso_decay(c, m, fs, -5, -25, NULL, NULL);
		p->t30 = iso_decay(c, m, fs, -5, -35, NULL, NULL);
		p->c50 = 10 * log10(e50 / (total - e50));
		p->c80 = 10 * log10(e80 / (total - e80));
		p->d50 = e50 / total;
		p->ts = ts / total;
		if (ref10 > 0)
			p->g = 10 * log10(total / ref10);
	}
	if (c != edc)
		free(c);
	free(e);
}

void iso_lateral(const double *w, const double *y, size_t n, double fs, size_t onset, double *lf,
		 double *lfc)
{
	const size_t i5 = onset + (size_t)llround(0.005 * fs), i80 = onset + (size_t)llround(0.080 * fs);
	double ew = 0, ey = 0, ec = 0;

	*lf = *lfc = NAN;
	if (i80 > n)
		return;
	for (size_t i = onset; i < i80; i++) {
		ew += w[i] * w[i];
		if (i >= i5) {
			ey += y[i] * y[i];
			ec += fabs(y[i] * w[i]);
		}
	}
	if (ew > 0) {
		*lf = ey / ew;
		*lfc = ec / ew;
	}
}
