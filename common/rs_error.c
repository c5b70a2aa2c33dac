/* rs_error.c - the message table for enum rs_code. */
#include "rs_error.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const rs_messages[RS_NCODES] = {
	[RS_OK] = "success",
	[RS_EINPUT] = "bad input",
	[RS_ENOMEM] = "out of memory",
	[RS_EIO] = "input/output error",
	[RS_ENODEV] = "no usable compute device",
	[RS_EDEVICE] = "device error",
	[RS_EINTR] = "interrupted",
	[RS_EINTERNAL] = "internal error",
};

const char *rs_strerror(int code)
{
	if (code < 0 || code >= RS_NCODES)
		return "unknown error";
	return rs_messages[code];
}

int rs_fail(struct rs_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}
