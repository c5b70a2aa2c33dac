/*
 * kernels.c - the kernel table's C side (solver/kernels.h): names, what each runs, and the
 * check of a grid's needs against a row.
 */
#include "kernels.h"

#include <stdio.h>
#include <string.h>

#define KERNEL_INFO_(id, name, family, runs, line) [KERNEL_##id] = { name, #family, runs, line },
const struct kernel_info kernel_info[NKERNELS] = {
	[KERNEL_AUTO] = { "auto", "", 0, "times every kernel that can run the grid on the grid "
				       "itself and keeps the fastest" },
	KERNEL_TABLE(KERNEL_INFO_)
};
#undef KERNEL_INFO_

#define KERNEL_NAME_(id, name, family, runs, line) [KERNEL_##id] = name,
const char *const kernel_names[NKERNELS + 1] = {
	[KERNEL_AUTO] = "auto",
	KERNEL_TABLE(KERNEL_NAME_)
	[NKERNELS] = NULL,
};
#undef KERNEL_NAME_

int kernel_of(const char *s)
{
	for (int k = 0; k < NKERNELS; k++)
		if (!strcmp(s, kernel_names[k]))
			return k;
	return -1;
}

const char *kernel_list(int with_auto, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int k = with_auto ? KERNEL_AUTO : KERNEL_AUTO + 1; k < NKERNELS && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", kernel_names[k]);
	return buf;
}

const char *kernel_runs_text(unsigned runs, char *buf, size_t len)
{
	static const struct {
		unsigned flag;
		const char *text;
	} parts[] = {
		{ KR_SEVEN, "the 7-point scheme" },
		{ KR_STENCIL, "every larger stencil" },
		{ KR_LEGGY, "leggy stencils" },
		{ KR_SHELL, "whole shells of reach 1 to 3" },
		{ KR_SHELL1, "whole shells of reach 1" },
		{ KR_FCC, "the fcc scheme" },
	};
	size_t n = 0;
	int first = 1;

	buf[0] = 0;
	for (size_t p = 0; p < sizeof(parts) / sizeof(parts[0]) && n < len; p++)
		if (runs & parts[p].flag) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s", first ? "" : ", ",
					      parts[p].text);
			first = 0;
		}
	if (n < len && (runs & (KR_STENCIL | KR_LEGGY | KR_SHELL | KR_SHELL1)))
		snprintf(buf + n, len - n, (runs & KR_CARVED) ? " in any room" :
			 (runs & KR_SEVEN) ? " (larger stencils in box rooms)" : " in box rooms");
	return buf;
}

int kernel_why(enum kernel_id k, const struct kernel_need *n, char *why, size_t len)
{
	const unsigned r = k > KERNEL_AUTO && k < NKERNELS ? kernel_info[k].runs : 0;
	char text[160];
	int ok;

	if (n->fcc)
		ok = r & KR_FCC;
	else if (!n->stencil)
		ok = r & KR_SEVEN;
	else
		ok = ((r & KR_STENCIL) || ((r & KR_LEGGY) && n->leggy) ||
		      ((r & KR_SHELL) && n->shell_r >= 1 && n->shell_r <= 3) ||
		      ((r & KR_SHELL1) && n->shell_r == 1)) &&
		     (!n->carved || (r & KR_CARVED));
	if (ok)
		return 0;
	snprintf(why, len, "it runs %s", kernel_runs_text(r, text, sizeof(text)));
	return 1;
}
