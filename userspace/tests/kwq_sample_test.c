// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_sample_test: the user side of the tests and demo with kwq_sample.ko.
 *
 *   kwq_sample_test produce QUEUE PREFIX FIRST COUNT [--delay-us U] [--progress FILE]
 *	add PREFIX/FIRST .. PREFIX/FIRST+COUNT-1, one system call per key;
 *	with --progress, FILE holds the number added so far after each add
 *	(for a test that kills the producer half-way).
 *   kwq_sample_test consume QUEUE PREFIX FIRST COUNT [--timeout-ms T]
 *			[--done N --hold K [--ready FILE]] [-v]
 *	take keys (leased to this process) and finish each with done. Without
 *	--hold: succeed if exactly PREFIX/FIRST .. PREFIX/FIRST+COUNT-1 came,
 *	each once, and nothing else is left to get. With --hold: finish N
 *	keys, take K more without finishing them, create FILE and wait to be
 *	killed (the K keys must come back to the queue).
 *
 *   kwq_sample_test charge QUEUE PREFIX FIRST COUNT
 *	in a memory cgroup of its own, add the keys as produce does and print
 *	how many bytes that cgroup's memory.current grew by per key.
 *
 * --kernel: QUEUE is one a kernel module made (kwq_open_kernel()).
 *
 * Exit status: 0 ok, 1 check failed or error, 2 usage.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_memcg.h"

static const char usage_text[] =
"usage: kwq_sample_test produce QUEUE PREFIX FIRST COUNT [--delay-us U] [--progress FILE]\n"
"       kwq_sample_test consume QUEUE PREFIX FIRST COUNT [--timeout-ms T]\n"
"                       [--done N --hold K [--ready FILE]] [-v]\n"
"       kwq_sample_test charge QUEUE PREFIX FIRST COUNT\n"
"       --kernel: QUEUE is a queue a kernel module made\n";

struct opts {
	long delay_us;
	const char *progress;
	long timeout_ms;
	long done;
	long hold;
	const char *ready;
	int verbose;
	int kernel;
};

/* The queue a kernel module made (--kernel), or one of this namespace. */
static int open_queue(const char *name, int oflags, const struct opts *o)
{
	return o->kernel ? kwq_open_kernel(name, oflags) : kwq_open(name, oflags);
}

static int usage(void)
{
	fputs(usage_text, stderr);
	return 2;
}

static int parse_num(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 0);
	return errno || !*s || *end || *out < 0 ? -EINVAL : 0;
}

static int err(const char *what, int e)
{
	fprintf(stderr, "kwq_sample_test: %s: %s\n", what, strerror(-e));
	return 1;
}

static int write_progress(const char *path, long n)
{
	char buf[32];
	int fd, len, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -errno;
	/* Fixed width, so a rewrite never leaves a longer old number. */
	len = snprintf(buf, sizeof(buf), "%012ld\n", n);
	if (pwrite(fd, buf, (size_t)len, 0) != len)
		ret = -EIO;
	close(fd);
	return ret;
}

/* Add PREFIX/FIRST .. PREFIX/FIRST+COUNT-1 to @fd, with --progress and --delay-us. */
static int add_keys(int fd, const char *prefix, long first, long count, const struct opts *o)
{
	char key[KWQ_KEY_MAX + 1];
	long i;
	int len, ret;

	if (o->progress && write_progress(o->progress, 0))
		return err("progress file", -EIO);
	for (i = 0; i < count; i++) {
		len = snprintf(key, sizeof(key), "%s/%ld", prefix, first + i);
		ret = kwq_add(fd, key, (size_t)len);
		if (ret < 0)
			return err("add", ret);
		if (o->progress && write_progress(o->progress, i + 1))
			return err("progress file", -EIO);
		if (o->delay_us)
			usleep((useconds_t)o->delay_us);
	}
	return 0;
}

static int produce(const char *name, const char *prefix, long first, long count,
		   const struct opts *o)
{
	int fd = open_queue(name, O_WRONLY, o);

	if (fd < 0)
		return err("open", fd);
	if (add_keys(fd, prefix, first, count, o))
		return 1;
	printf("produced %ld\n", count);
	close(fd);
	return 0;
}

/* What the adds cost the adder's own memory cgroup, per key. */
static int charge(const char *name, const char *prefix, long first, long count,
		  const struct opts *o)
{
	char cg[128];
	long long before, after;
	int fd, ret;

	ret = memcg_setup(cg, sizeof(cg), "charge");
	if (!ret)
		ret = memcg_join(cg);
	if (ret)
		return err("memory cgroup", ret);
	fd = open_queue(name, O_WRONLY, o);
	if (fd < 0)
		return err("open", fd);
	before = memcg_current(cg);
	if (add_keys(fd, prefix, first, count, o))
		return 1;
	after = memcg_current(cg);
	close(fd);
	/* Out again, so that the cgroup can go; what it was charged stays charged. */
	write_file(CGROOT "/cgroup.procs", "0");
	rmdir(cg);
	if (before < 0 || after < 0 || !count)
		return err("memory.current", -EIO);
	printf("%lld\n", (after - before) / count);
	return 0;
}

/* Index of @key (PREFIX/n with FIRST <= n < FIRST+COUNT) from FIRST, or -1. */
static long key_index(const char *key, const char *prefix, long first, long count)
{
	size_t plen = strlen(prefix);
	long n;

	if (strncmp(key, prefix, plen) || key[plen] != '/' || parse_num(key + plen + 1, &n))
		return -1;
	return n >= first && n - first < count ? n - first : -1;
}

static int consume(const char *name, const char *prefix, long first, long count,
		   const struct opts *o)
{
	int64_t timeout_ns = o->timeout_ms * 1000000LL;
	long got = 0, dups = 0, foreign = 0, missing = 0, i, idx;
	char key[KWQ_KEY_MAX + 1];
	unsigned char *seen;
	size_t len;
	int fd, ret;

	fd = open_queue(name, O_RDWR, o);
	if (fd < 0)
		return err("open", fd);
	seen = calloc((size_t)count + 1, 1);
	if (!seen)
		return err("calloc", -ENOMEM);

	if (o->hold) {
		for (i = 0; i < o->done + o->hold; i++) {
			ret = kwq_get(fd, key, KWQ_KEY_MAX, &len, timeout_ns);
			if (ret)
				return err("get", ret);
			key[len] = '\0';
			if (o->verbose)
				printf("%s %s\n", i < o->done ? "done" : "holding", key);
			if (i < o->done && (ret = kwq_done(fd, key, len)) < 0)
				return err("done", ret);
		}
		fflush(stdout);
		if (o->ready)
			close(open(o->ready, O_WRONLY | O_CREAT, 0644));
		for (;;)
			pause();
	}

	while (got < count) {
		ret = kwq_get(fd, key, KWQ_KEY_MAX, &len, timeout_ns);
		if (ret == -ETIMEDOUT || ret == -EAGAIN || ret == -ESHUTDOWN)
			break;
		if (ret)
			return err("get", ret);
		key[len] = '\0';
		ret = kwq_done(fd, key, len);
		if (ret < 0)
			return err("done", ret);
		if (o->verbose)
			printf("%s\n", key);
		idx = key_index(key, prefix, first, count);
		if (idx < 0) {
			foreign++;
			fprintf(stderr, "kwq_sample_test: unexpected key %s\n", key);
		} else if (seen[idx]++) {
			dups++;
			fprintf(stderr, "kwq_sample_test: %s came twice\n", key);
		}
		got++;
	}
	for (i = 0; i < count; i++)
		missing += !seen[i];
	/* Nothing more may be waiting: no duplicate, no stray key. */
	ret = kwq_get(fd, key, KWQ_KEY_MAX, &len, 0);
	if (!ret) {
		key[len] = '\0';
		fprintf(stderr, "kwq_sample_test: one more key left: %s\n", key);
		foreign++;
	}
	printf("consumed %ld, duplicates %ld, missing %ld, unexpected %ld\n",
	       got, dups, missing, foreign);
	free(seen);
	close(fd);
	return dups || missing || foreign ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "delay-us", required_argument, NULL, 'd' },
		{ "progress", required_argument, NULL, 'p' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "done", required_argument, NULL, 'D' },
		{ "hold", required_argument, NULL, 'H' },
		{ "ready", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "kernel", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .timeout_ms = 10000 };
	long first, count;
	int c;

	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_num(optarg, &o.delay_us))
				return usage();
			break;
		case 'p':
			o.progress = optarg;
			break;
		case 't':
			if (parse_num(optarg, &o.timeout_ms))
				return usage();
			break;
		case 'D':
			if (parse_num(optarg, &o.done))
				return usage();
			break;
		case 'H':
			if (parse_num(optarg, &o.hold))
				return usage();
			break;
		case 'r':
			o.ready = optarg;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'k':
			o.kernel = 1;
			break;
		default:
			return usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 5 || parse_num(argv[3], &first) || parse_num(argv[4], &count))
		return usage();
	if (!strcmp(argv[0], "produce"))
		return produce(argv[1], argv[2], first, count, &o);
	if (!strcmp(argv[0], "consume"))
		return consume(argv[1], argv[2], first, count, &o);
	if (!strcmp(argv[0], "charge"))
		return charge(argv[1], argv[2], first, count, &o);
	return usage();
}
