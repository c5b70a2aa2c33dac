/* hash.h - FNV-1a, 64 bits: a fingerprint of bytes (checkpoints tell rooms apart by it). */
#ifndef COMMON_HASH_H
#define COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define RS_HASH_START 1469598103934665603ULL	/* FNV-1a 64's offset basis */

/* h (RS_HASH_START at first) carried on over n bytes. */
static inline uint64_t rs_hash(uint64_t h, const void *bytes, size_t n)
{
	const unsigned char *b = bytes;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;	/* FNV-1a 64's prime */
	return h;
}

#endif
