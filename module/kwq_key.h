/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hashing, comparing and copying keys: the work every add and done does
 * on the key bytes, so it is done in 64-bit words.
 *
 * The hash follows the multiply-and-fold construction of wyhash (also
 * the fallback of Go's runtime map hash): 16 bytes at a time, each half
 * XORed with a secret and the two multiplied into 128 bits whose halves
 * are XORed together. With secrets drawn for each queue when it is made,
 * inputs that collide cannot be chosen without knowing them, and what
 * one queue's collisions reveal says nothing about another's. For a 32-byte key it
 * costs about a quarter of jhash(), which the benchmarks measured at 142
 * instructions, a tenth of a whole add. Without 128-bit multiplication
 * jhash() is used instead.
 *
 * Compares and copies read the last, partial word as an overlapping whole
 * word (keys of 8 bytes or more), so a key takes len / 8 + 1 loads
 * rather than a byte loop or a call; memcpy() of a run-time length is
 * also "rep movsb", which the emulated guests count per byte.
 */
#ifndef _KWQ_KEY_H
#define _KWQ_KEY_H

#include <linux/jhash.h>
#include <linux/string.h>
#include <linux/types.h>
#include "kwq_compat.h"

/**
 * struct kwq_hash_secret - the per-queue secrets of kwq_key_hash()
 * @s: three random odd words.
 */
struct kwq_hash_secret {
	u64 s[3];
};

static __always_inline u64 kwq_key_word(const u8 *p)
{
	return get_unaligned((const u64 *)p);
}

#ifdef CONFIG_ARCH_SUPPORTS_INT128
/* The 128-bit product of @a and @b, folded to 64 bits. */
static __always_inline u64 kwq_mix(u64 a, u64 b)
{
	unsigned __int128 r = (unsigned __int128)a * b;

	return (u64)r ^ (u64)(r >> 64);
}

/* Up to 8 bytes as one word: bytes 0, len/2 and len-1 for 1-3 bytes. */
static __always_inline u64 kwq_key_short(const u8 *p, u32 len)
{
	if (len >= 4)
		return (u64)get_unaligned((const u32 *)p) << 32 |
		       get_unaligned((const u32 *)(p + len - 4));
	return (u64)p[0] << 16 | (u64)p[len >> 1] << 8 | p[len - 1];
}

/**
 * kwq_key_hash() - hash a key
 * @key: the key bytes.
 * @len: their number, at least 1.
 * @sec: the secrets.
 *
 * Return: a 32-bit hash; equal keys hash equal.
 */
static inline u32 kwq_key_hash(const u8 *key, u32 len, const struct kwq_hash_secret *sec)
{
	u64 seed = sec->s[0], a, b;
	u32 left = len;

	if (len <= 16) {
		a = kwq_key_short(key, min_t(u32, len, 8));
		b = len > 8 ? kwq_key_short(key + 8, len - 8) : 0;
	} else {
		for (; left > 16; left -= 16, key += 16)
			seed = kwq_mix(kwq_key_word(key) ^ sec->s[1],
				       kwq_key_word(key + 8) ^ seed);
		/* The last 16 bytes, overlapping bytes already mixed in. */
		a = kwq_key_word(key + left - 16);
		b = kwq_key_word(key + left - 8);
	}
	seed = kwq_mix(a ^ sec->s[1], b ^ seed);
	seed = kwq_mix(seed ^ sec->s[2] ^ len, sec->s[1]);
	return (u32)seed ^ (u32)(seed >> 32);
}
#else
static inline u32 kwq_key_hash(const u8 *key, u32 len, const struct kwq_hash_secret *sec)
{
	return jhash(key, len, (u32)sec->s[0]);
}
#endif

/* Whether @a and @b, both @len bytes, are equal. */
static inline bool kwq_key_equal(const u8 *a, const u8 *b, u32 len)
{
	u32 i;

	if (len < sizeof(u64))
		return !memcmp(a, b, len);
	for (i = 0; i + sizeof(u64) < len; i += sizeof(u64))
		if (kwq_key_word(a + i) != kwq_key_word(b + i))
			return false;
	return kwq_key_word(a + len - 8) == kwq_key_word(b + len - 8);
}

/* Copy @len bytes of key from @src to @dst (no overlap). */
static inline void kwq_key_copy(u8 *dst, const u8 *src, u32 len)
{
	u32 i;

	if (len < sizeof(u64)) {
		memcpy(dst, src, len);
		return;
	}
	for (i = 0; i + sizeof(u64) < len; i += sizeof(u64))
		put_unaligned(kwq_key_word(src + i), (u64 *)(dst + i));
	put_unaligned(kwq_key_word(src + len - 8), (u64 *)(dst + len - 8));
}

#endif /* _KWQ_KEY_H */
