/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the in-guest test programs: raw ioctls, queues that
 * bail out of the TAP run when they cannot be made, string keys.
 */
#ifndef KWQ_TEST_UTIL_H
#define KWQ_TEST_UTIL_H

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "libkwq.h"

/* The ioctl's result as 0 or a negative errno. */
static inline int raw_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/* A new descriptor of /dev/kwq, or the run bails out. */
static inline int dev_open(int flags)
{
	int fd = open(KWQ_DEFAULT_DEV, flags | O_CLOEXEC);

	if (fd < 0) {
		printf("Bail out! cannot open %s: %s\n", KWQ_DEFAULT_DEV, strerror(errno));
		exit(1);
	}
	return fd;
}

/* A new named queue (mode 0600), or the run bails out. */
static inline int new_queue(const char *name)
{
	int fd = kwq_create(name, 0600, 0);

	if (fd < 0) {
		printf("Bail out! create %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

static inline void end_queue(int fd)
{
	kwq_destroy(fd);
	close(fd);
}

/* The queue's stats; all bits set if they cannot be read. */
static inline struct kwq_stats stats_of(int fd)
{
	struct kwq_stats st;

	if (kwq_stats(fd, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/*
 * Whether the queue's stats are as @before: everything a refused call must
 * leave as it was (the two running-time figures move on their own).
 */
static inline int same_stats(int fd, const struct kwq_stats *before)
{
	struct kwq_stats now = stats_of(fd);

	now.unfinished_work_ns = before->unfinished_work_ns;
	now.longest_running_ns = before->longest_running_ns;
	return !memcmp(&now, before, sizeof(now));
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Let @ns pass by the monotonic clock. Not usleep(): a 32-bit program's
 * sleeps fail at once on a kernel without COMPAT_32BIT_TIME (the debug
 * kernels), while clock_gettime() works everywhere.
 */
static inline void wait_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		sched_yield();
}

static inline int add_s(int fd, const char *key)
{
	return kwq_add(fd, key, strlen(key));
}

/* A plain KWQ_IOC_DONE. */
static inline int done_s(int fd, const char *key)
{
	return kwq_done(fd, key, strlen(key));
}

/* Non-blocking get that compares the key with @want (-EBADMSG if not). */
static inline int get_is(int fd, const char *want)
{
	char buf[KWQ_KEY_MAX + 1];
	size_t len = 0;
	int ret = kwq_get(fd, buf, KWQ_KEY_MAX, &len, 0);

	if (ret)
		return ret;
	buf[len] = '\0';
	return strcmp(buf, want) ? -EBADMSG : 0;
}

#endif /* KWQ_TEST_UTIL_H */
