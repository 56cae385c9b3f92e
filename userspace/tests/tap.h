/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal TAP output for the in-guest tests. */
#ifndef KWQ_TAP_H
#define KWQ_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

static inline void tap_result(int ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok) {
		tap_failed++;
		printf("# failed at %s:%d\n", file, line);
	}
	fflush(stdout);
}

/* ok(cond, "description", ...) */
#define ok(cond, ...) tap_result(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* is(got, want, "description"): integers, with both values on failure. */
#define is(got, want, ...) do {						\
	long long _g = (long long)(got), _w = (long long)(want);	\
	tap_result(_g == _w, __FILE__, __LINE__, __VA_ARGS__);		\
	if (_g != _w)							\
		printf("#   got %lld (%s), want %lld (%s)\n", _g,		\
		       _g < 0 ? strerror((int)-_g) : "", _w,		\
		       _w < 0 ? strerror((int)-_w) : "");		\
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif /* KWQ_TAP_H */
