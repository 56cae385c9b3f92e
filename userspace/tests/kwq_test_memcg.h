/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A memory cgroup of a test's own, for the tests that check what kwq
 * charges to the adder's cgroup (kwq_limits_test, kwq_payload_test).
 */
#ifndef KWQ_TEST_MEMCG_H
#define KWQ_TEST_MEMCG_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define CGROOT		"/sys/fs/cgroup"

/* Write @val to the file at @path: 0 or -errno. */
static inline int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The number the file at @path holds, or -1. */
static inline long long read_num(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

/*
 * Make the cgroup CGROOT/kwq-@tag-<pid> with the memory controller, its
 * path in @cg (@size bytes): 0, -EOPNOTSUPP without a memory controller,
 * or -errno.
 */
static inline int memcg_setup(char *cg, size_t size, const char *tag)
{
	char line[256] = "";
	FILE *f;

	mkdir(CGROOT, 0755);
	if (access(CGROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CGROOT, "cgroup2", 0, NULL))
		return -errno;
	f = fopen(CGROOT "/cgroup.controllers", "r");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	if (!strstr(line, "memory"))
		return -EOPNOTSUPP;
	write_file(CGROOT "/cgroup.subtree_control", "+memory");
	snprintf(cg, size, CGROOT "/kwq-%s-%d", tag, getpid());
	if (mkdir(cg, 0755))
		return -errno;
	return 0;
}

/* The cgroup's memory.current, or -1. */
static inline long long memcg_current(const char *cg)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	return read_num(path);
}

/* Move the calling process into the cgroup: 0 or -errno. */
static inline int memcg_join(const char *cg)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	return write_file(path, "0");
}

#endif /* KWQ_TEST_MEMCG_H */
