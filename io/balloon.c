/*
 * balloon.c - a source's balloon table (docs/input.md, "Directional sources"), CSV:
 *
 *   # comments and blank lines are skipped
 *   azimuth, elevation, 125, 250, 500, 1000      <- degrees, degrees, band centres in Hz
 *   0, 0, 0, 0, 0, 0                             <- levels in dB, one row per direction
 *   ...
 *
 * on a regular grid: every azimuth a multiple of 360 / naz, every elevation of 180 / (nel - 1)
 * from -90 to 90, each pair once. Levels become relative to the front's (azimuth 0,
 * elevation 0) in each band.
 */
#include "balloon.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_CHARS 8192
#define ROWS_MAX 1000000	/* a 0.25-degree grid has 1.04e6 directions; 1 degree 65 000 */

struct row {
	double az, el;
	int line;
};

static int fail(char *msg, size_t cap, const char *path, int line, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(msg, cap, "%s:%d: %s", path, line, what);
	else
		snprintf(msg, cap, "%s: %s", path, what);
	return -1;
}

/* Split line into at most max numbers; the count, or -1 (column in *bad, 1-based) when a
 * field is not a number. */
static int numbers(char *line, double *v, int max, int *bad)
{
	int n = 0;

	for (char *tok = strtok(line, ",\t\r\n"); tok; tok = strtok(NULL, ",\t\r\n")) {
		char *end;

		while (*tok == ' ')
			tok++;
		if (n == max)
			return max + 1;
		errno = 0;
		v[n] = strtod(tok, &end);
		while (*end == ' ')
			end++;
		if (end == tok || *end || errno || !isfinite(v[n])) {
			*bad = n + 1;
			return -1;
		}
		n++;
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int cfg_balloon_read(const char *path, struct room_balloon *b, char *msg, size_t cap)
{
	FILE *f = fopen(path, "r");
	char *line = malloc(LINE_MAX_CHARS), *base;
	double v[ROOM_BALLOON_BANDS + 3], *lev = NULL, *az = NULL;
	struct row *rows = NULL;
	int lineno = 0, nrows = 0, header = 0, bad, rc = -1, naz, nel, *seen = NULL;
	size_t cap_rows = 0;

	memset(b, 0, sizeof(*b));
	base = strrchr(path, '/');
	snprintf(b->name, sizeof(b->name), "%s", base ? base + 1 : path);
	if (!f || !line) {
		fail(msg, cap, path, 0, "cannot read it: %s", f ? "out of memory" : strerror(errno));
		goto out;
	}
	while (fgets(line, LINE_MAX_CHARS, f)) {
		char *s = line;
		int n;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			fail(msg, cap, path, lineno, "line longer than %d characters", LINE_MAX_CHARS);
			goto out;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\r' || !*s)
			continue;
		if (!header) {	/* azimuth, elevation, then the bands */
			char *tok = strtok(s, ",\t\r\n");
			const char *want[2] = { "azimuth", "elevation" };

			for (int k = 0; k < 2; k++, tok = strtok(NULL, ",\t\r\n")) {
				while (tok && *tok == ' ')
					tok++;
				if (!tok || strncmp(tok, want[k], strlen(want[k]))) {
					fail(msg, cap, path, lineno, "the first row names the columns: "
					     "azimuth, elevation, then each band's centre in Hz (e.g. "
					     "azimuth,elevation,125,250,500,1000)");
					goto out;
				}
			}
			for (; tok; tok = strtok(NULL, ",\t\r\n")) {
				char *end;

				if (b->nbands == ROOM_BALLOON_BANDS) {
					fail(msg, cap, path, lineno, "more than %d bands",
					     ROOM_BALLOON_BANDS);
					goto out;
				}
				b->f[b->nbands] = strtod(tok, &end);
				while (*end == ' ')
					end++;
				if (end == tok || *end || !(b->f[b->nbands] > 0) ||
				    (b->nbands && !(b->f[b->nbands] > b->f[b->nbands - 1]))) {
					fail(msg, cap, path, lineno, "column %d: '%s' is not a band "
					     "centre (valid: frequencies in Hz, rising)", b->nbands + 3,
					     tok);
					goto out;
				}
				b->nbands++;
			}
			if (!b->nbands) {
				fail(msg, cap, path, lineno, "no bands: give each band's centre in Hz "
				     "after azimuth and elevation");
				goto out;
			}
			header = 1;
			continue;
		}
		n = numbers(s, v, b->nbands + 2, &bad);
		if (n < 0 || n != b->nbands + 2) {
			if (n < 0)
				fail(msg, cap, path, lineno, "column %d is not a number", bad);
			else
				fail(msg, cap, path, lineno, "%d values where the header has %d "
				     "(azimuth, elevation and %d bands)", n, b->nbands + 2, b->nbands);
			goto out;
		}
		if (v[1] < -90 || v[1] > 90) {
			fail(msg, cap, path, lineno, "elevation %g is outside [-90, 90]", v[1]);
			goto out;
		}
		if ((size_t)nrows == cap_rows) {
			struct row *r2;
			double *l2;

			cap_rows = cap_rows ? 2 * cap_rows : 1024;
			if (cap_rows > ROWS_MAX) {
				fail(msg, cap, path, lineno, "more than %d directions", ROWS_MAX);
				goto out;
			}
			r2 = realloc(rows, cap_rows * sizeof(*rows));
			if (r2)
				rows = r2;
			l2 = realloc(lev, cap_rows * b->nbands * sizeof(*lev));
			if (l2)
				lev = l2;
			if (!r2 || !l2) {
				fail(msg, cap, path, lineno, "out of memory");
				goto out;
			}
		}
		rows[nrows].az = fmod(fmod(v[0], 360) + 360, 360);
		rows[nrows].el = v[1];
		rows[nrows].line = lineno;
		memcpy(lev + (size_t)nrows * b->nbands, v + 2, b->nbands * sizeof(*v));
		nrows++;
	}
	if (!header || nrows == 0) {
		fail(msg, cap, path, 0, "no %s", header ? "directions" : "header row");
		goto out;
	}
	/* the grid: distinct azimuths and elevations */
	az = malloc(2 * (size_t)nrows * sizeof(*az));
	if (!az) {
		fail(msg, cap, path, 0, "out of memory");
		goto out;
	}
	for (int i = 0; i < nrows; i++) {
		az[i] = rows[i].az;
		az[nrows + i] = rows[i].el;
	}
	qsort(az, nrows, sizeof(*az), cmp_double);
	qsort(az + nrows, nrows, sizeof(*az), cmp_double);
	naz = nel = 0;
	for (int i = 0; i < nrows; i++) {
		if (!i || az[i] - az[naz - 1] > 1e-6)
			az[naz++] = az[i];
	}
	for (int i = 0; i < nrows; i++) {
		const double e = az[nrows + i];

		if (!i || e - az[nrows + nel - 1] > 1e-6)
			az[nrows + nel++] = e;
	}
	b->naz = naz;
	b->nel = nel;
	b->daz = 360.0 / naz;
	b->del = nel > 1 ? 180.0 / (nel - 1) : 0;
	for (int i = 0; i < naz; i++)
		if (fabs(az[i] - i * b->daz) > 1e-6) {
			fail(msg, cap, path, 0, "the azimuths are not a regular grid: %d distinct ones "
			     "need a step of %g degrees from 0, and %g is not on it (valid: every "
			     "azimuth a multiple of one step that divides 360)", naz, b->daz, az[i]);
			goto out;
		}
	for (int i = 0; i < nel; i++)
		if (nel < 3 || fabs(az[nrows + i] - (-90 + i * b->del)) > 1e-6) {
			fail(msg, cap, path, 0, "the elevations are not a regular grid from -90 to 90 "
			     "(valid: -90, -90 + s, ..., 90 for one step s, at least 3 of them)");
			goto out;
		}
	if ((size_t)naz * nel != (size_t)nrows) {
		fail(msg, cap, path, 0, "%d rows for a grid of %d azimuths and %d elevations (%d): "
		     "give each direction once", nrows, naz, nel, naz * nel);
		goto out;
	}
	b->db = malloc((size_t)nrows * b->nbands * sizeof(*b->db));
	seen = calloc((size_t)nrows, sizeof(*seen));
	if (!b->db || !seen) {
		fail(msg, cap, path, 0, "out of memory");
		goto out;
	}
	for (int i = 0; i < nrows; i++) {
		const int a = (int)lround(rows[i].az / b->daz) % naz;
		const int e = (int)lround((rows[i].el + 90) / b->del);
		const size_t d = (size_t)e * naz + a;

		if (seen[d]) {
			fail(msg, cap, path, rows[i].line, "azimuth %g, elevation %g again (first at "
			     "line %d)", rows[i].az, rows[i].el, seen[d]);
			goto out;
		}
		seen[d] = rows[i].line;
		for (int k = 0; k < b->nbands; k++)
			b->db[d * b->nbands + k] = (float)lev[(size_t)i * b->nbands + k];
	}
	{	/* relative to the front */
		const size_t front = (size_t)(nel / 2) * naz;
		float ref[ROOM_BALLOON_BANDS];

		if (nel % 2 == 0) {
			fail(msg, cap, path, 0, "no elevation 0: the grid needs the front direction");
			goto out;
		}
		memcpy(ref, b->db + front * b->nbands, b->nbands * sizeof(*ref));
		for (size_t d = 0; d < (size_t)nrows; d++)
			for (int k = 0; k < b->nbands; k++)
				b->db[d * b->nbands + k] -= ref[k];
	}
	rc = 0;
out:
	if (rc) {
		free(b->db);
		b->db = NULL;
	}
	if (f)
		fclose(f);
	free(line);
	free(rows);
	free(lev);
	free(az);
	free(seen);
	return rc;
}
