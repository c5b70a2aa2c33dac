/*
 * rs_error.h - the one error enum and message table that every roomsim module shares.
 *
 * Actions return an int error code (RS_OK = 0). Constructors return NULL and fill a
 * struct rs_error. Only app/ prints messages and chooses the exit status.
 */
#ifndef RS_ERROR_H
#define RS_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum rs_code {
	RS_OK = 0,
	RS_EINPUT,	/* bad input: the message names file:line:col and key */
	RS_ENOMEM,	/* an allocation failed */
	RS_EIO,		/* reading or writing a file failed */
	RS_ENODEV,	/* no usable compute device for the requested backend */
	RS_EDEVICE,	/* a device (CUDA) call failed */
	RS_EINTR,	/* the run was interrupted by a signal */
	RS_EINTERNAL,	/* a bug: an invariant did not hold */
	RS_NCODES
};

/* Room for a full "file:line:col: key.path: what is wrong (what would be valid)". */
#define RS_MSG_MAX 1024

struct rs_error {
	int code;		/* one of enum rs_code */
	char msg[RS_MSG_MAX];	/* the full human-readable message, "" when code is RS_OK */
};

/* The generic text for a code, e.g. "bad input". */
const char *rs_strerror(int code);

/* Fill err (may be NULL) with code and a printf-style message; returns code. */
int rs_fail(struct rs_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif
