// SPDX-License-Identifier: GPL-2.0
/*
 * Tenant queues (KWQ_CREATE_TENANT, kwq_ioc_create.tenant_depth) through
 * /dev/kwq, built 64-bit and -m32 (compat_ioctl): the feature bit, refused
 * creates (changing nothing), the exact rotation order at depths 1 and 2,
 * FIFO within a tenant, dedup, keys given back by a closed file, tenants
 * within priorities, and the fairness bound with one tenant flooding:
 * tenant a queues 100,000 keys (batch adds; --flood N for another count),
 * tenant b one, and b's key is handed out within k * T = 1 * 2 gets.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "tap.h"

#define PARAM_MAX_ITEMS	"/sys/module/kwq/parameters/max_items_per_queue"

static void create_args(struct kwq_ioc_create *c, const char *name)
{
	memset(c, 0, sizeof(*c));
	snprintf((char *)c->name, sizeof(c->name), "%s", name);
	c->mode = 0600;
}

static int ten_queue(const char *name, unsigned int depth)
{
	int fd = kwq_create_tenant(name, 0600, 0, depth);

	if (fd < 0) {
		printf("Bail out! create %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

/* Take every queued key; each must be the next of @want. */
static int drain_is(int fd, const char *const *want, unsigned int n)
{
	char buf[KWQ_KEY_MAX + 1];
	unsigned int i;
	size_t len;

	for (i = 0; i < n; i++) {
		if (kwq_get(fd, buf, KWQ_KEY_MAX, &len, 0))
			return 0;
		buf[len] = '\0';
		if (strcmp(buf, want[i])) {
			printf("#   get %u: %s, want %s\n", i + 1, buf, want[i]);
			return 0;
		}
		kwq_done(fd, buf, len);
	}
	return kwq_get(fd, buf, KWQ_KEY_MAX, &len, 0) == -EAGAIN;
}

static void test_feature(void)
{
	struct kwq_ioc_version v;
	int fd = dev_open(O_RDWR);

	memset(&v, 0, sizeof(v));
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), 0, "version");
	ok(v.features & KWQ_FEATURE_TENANT, "KWQ_FEATURE_TENANT is reported (bit 12)");
	is(KWQ_FEATURE_TENANT, 1ULL << 12, "KWQ_FEATURE_TENANT is bit 12");
	close(fd);
}

static void test_refused(void)
{
	static const struct { uint32_t flags; uint8_t depth, pad3; const char *what; } bad[] = {
		{ KWQ_CREATE_TENANT, 3, 0, "depth 3" },
		{ KWQ_CREATE_TENANT, 255, 0, "depth 255" },
		{ 0, 1, 0, "a depth without KWQ_CREATE_TENANT" },
		{ KWQ_CREATE_TENANT, 1, 1, "nonzero pad3" },
		{ KWQ_CREATE_MANUAL_CLOCK << 1, 0, 0, "the next unknown create flag" },
	};
	struct kwq_ioc_create c;
	unsigned int i;
	int fd;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = dev_open(O_RDWR);
		create_args(&c, "ten-bad");
		c.flags = bad[i].flags;
		c.tenant_depth = bad[i].depth;
		c.pad3[1] = bad[i].pad3;
		is(raw_ioctl(fd, KWQ_IOC_CREATE, &c), -EINVAL, "create with %s: -EINVAL",
		   bad[i].what);
		close(fd);
	}
	/* Nothing was made: the name is free. */
	fd = ten_queue("ten-bad", 2);
	ok(fd >= 0, "the refused creates made no queue: the name is free");
	end_queue(fd);
	/* The old name: pad2 = 0 is a queue without tenants. */
	fd = dev_open(O_RDWR);
	create_args(&c, "ten-old");
	c.pad2 = 0;
	is(raw_ioctl(fd, KWQ_IOC_CREATE, &c), 0, "pad2 = 0 (the old name): a plain queue");
	add_s(fd, "a/1");
	add_s(fd, "a/2");
	add_s(fd, "b/1");
	{
		static const char *const fifo[] = { "a/1", "a/2", "b/1" };

		ok(drain_is(fd, fifo, 3), "a plain queue stays FIFO across prefixes");
	}
	end_queue(fd);
}

static void test_order(void)
{
	static const char *const adds[] = { "a/1", "a/2", "a/3", "b/1", "c/1", "x", "c/2", "/y" };
	static const char *const want[] = { "a/1", "b/1", "c/1", "x", "a/2", "c/2", "/y", "a/3" };
	static const char *const adds2[] = { "c1/n1/a", "c1/n1/b", "c1/n2/a", "c1/x", "c1/y",
					     "c2/n1/a", "y" };
	static const char *const want2[] = { "c1/n1/a", "c1/n2/a", "c1/x", "c2/n1/a", "y",
					     "c1/n1/b", "c1/y" };
	unsigned int i;
	int fd = ten_queue("ten-order", 0), bad = 0;

	for (i = 0; i < 8; i++)
		bad |= add_s(fd, adds[i]) != KWQ_ADD_QUEUED;
	ok(!bad, "depth 0 (meaning 1): 8 adds queued");
	is(add_s(fd, "a/1"), KWQ_ADD_DUPLICATE, "a queued key is not queued twice");
	is(add_s(fd, "c/2"), KWQ_ADD_DUPLICATE, "nor in another tenant");
	is(stats_of(fd).queued, 8, "8 keys queued");
	ok(drain_is(fd, want, 8), "tenants take turns in the order they joined, FIFO each; "
	   "\"x\" and \"/y\" are the empty tenant");
	end_queue(fd);

	fd = ten_queue("ten-depth2", 2);
	for (i = 0; i < 7; i++)
		add_s(fd, adds2[i]);
	ok(drain_is(fd, want2, 7), "depth 2: cluster/namespace tenants, \"c1/x\" is tenant "
	   "\"c1\", \"y\" the empty one");
	end_queue(fd);
}

/* A closed file's keys go back; the hand-outs repeat in their order. */
static void test_give_back(void)
{
	static const char *const want[] = { "a/1", "b/1", "a/2", "b/2", "a/3" };
	char buf[16];
	size_t len;
	int fd = ten_queue("ten-lease", 1), fd2, i, bad = 0;

	add_s(fd, "a/1");
	add_s(fd, "a/2");
	add_s(fd, "a/3");
	add_s(fd, "b/1");
	add_s(fd, "b/2");
	fd2 = kwq_open("ten-lease", O_RDWR);
	ok(fd2 >= 0, "open");
	for (i = 0; i < 3; i++) {
		bad |= kwq_get(fd2, buf, sizeof(buf) - 1, &len, 0);
		buf[len] = '\0';
		bad |= strcmp(buf, want[i]) != 0;
	}
	ok(!bad, "a second file takes a/1, b/1, a/2");
	close(fd2);
	is(stats_of(fd).queued, 5, "closing it gives the 3 keys back");
	ok(drain_is(fd, want, 5), "and they come out in the order they were handed out");
	end_queue(fd);
}

static void test_priority(void)
{
	static const char *const want[] = { "a/1", "b/1", "a/2", "b/2", "a/3", "c/1", "a/4" };
	struct kwq_ioc_create c;
	int fd = dev_open(O_RDWR);

	create_args(&c, "ten-prio");
	c.flags = KWQ_CREATE_TENANT | KWQ_CREATE_PRIORITY;
	c.tenant_depth = 1;
	c.aging_ns = 3600ULL * 1000000000ULL;
	is(raw_ioctl(fd, KWQ_IOC_CREATE, &c), 0, "create with tenants and priorities");
	kwq_add_priority(fd, "a/1", 3, 7);
	kwq_add_priority(fd, "a/2", 3, 7);
	kwq_add_priority(fd, "a/3", 3, 0);
	kwq_add_priority(fd, "a/4", 3, 0);
	kwq_add_priority(fd, "b/1", 3, 7);
	kwq_add_priority(fd, "c/1", 3, 0);
	kwq_add_priority(fd, "b/2", 3, 0);
	is(kwq_add_priority(fd, "b/2", 3, 7), KWQ_ADD_DUPLICATE, "raise b/2");
	ok(drain_is(fd, want, 7), "tenants rotate within each priority, the higher first");
	end_queue(fd);
}

/* Write a module parameter; returns the old value, or -1. */
static long set_param(const char *path, long v)
{
	char buf[32];
	long old = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			old = strtol(buf, NULL, 10);
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%ld\n", v);
	if (fclose(f))
		return -1;
	return old;
}

/*
 * Fairness bound with one tenant flooding: tenant a queues @flood keys,
 * then tenant b one (k = 1, T = 2): b's key is one of the next 2 gets.
 */
static void test_flood(unsigned int flood)
{
	static struct kwq_batch_entry e[KWQ_BATCH_MAX];
	static char keys[KWQ_BATCH_MAX][16];
	char buf[16], want[16];
	unsigned int i, j, n, added = 0, got_b = 0, fifo = 1;
	uint64_t t0 = now_ns();
	long old = set_param(PARAM_MAX_ITEMS, flood + 16);
	size_t len;
	int fd;

	ok(old > 0, "max_items_per_queue raised for the flood");
	fd = ten_queue("ten-flood", 1);
	for (i = 0; i < flood; i += n) {
		n = flood - i < KWQ_BATCH_MAX ? flood - i : KWQ_BATCH_MAX;
		for (j = 0; j < n; j++) {
			snprintf(keys[j], sizeof(keys[j]), "a/%u", i + j);
			e[j].key_ptr = (uintptr_t)keys[j];
			e[j].key_len = strlen(keys[j]);
			e[j].result = 0;
		}
		if (kwq_add_batch(fd, e, n, 0) != (int)n)
			break;
		added += n;
	}
	if (old > 0)
		set_param(PARAM_MAX_ITEMS, old);
	printf("# flood: adds took %.1f s\n", (now_ns() - t0) / 1e9);
	is(added, flood, "tenant a queued %u keys", flood);
	is(add_s(fd, "b/only"), KWQ_ADD_QUEUED, "tenant b adds one key");
	for (i = 1; i <= 2 && !got_b; i++) {
		if (kwq_get(fd, buf, sizeof(buf) - 1, &len, 0))
			break;
		buf[len] = '\0';
		if (!strcmp(buf, "b/only"))
			got_b = i;
		kwq_done(fd, buf, len);
	}
	ok(got_b >= 1 && got_b <= 2, "b's key is handed out within k * T = 2 gets behind %u "
	   "keys of a (got %u)", flood, got_b);
	/* a's keys follow, FIFO. */
	for (i = 1; i <= 1000; i++) {
		if (kwq_get(fd, buf, sizeof(buf) - 1, &len, 0)) {
			fifo = 0;
			break;
		}
		buf[len] = '\0';
		snprintf(want, sizeof(want), "a/%u", got_b == 1 ? i - 1 : i);
		fifo &= !strcmp(buf, want);
		kwq_done(fd, buf, len);
	}
	ok(fifo, "tenant a's next 1000 keys come out in the order they were added");
	is(stats_of(fd).queued, flood - 1000 - (got_b == 1 ? 0 : 1), "the rest still queued");
	end_queue(fd);
	printf("# flood: all took %.1f s (the destroy frees every record)\n",
	       (now_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
	unsigned int flood = 100000;

	if (argc == 3 && !strcmp(argv[1], "--flood"))
		flood = (unsigned int)strtoul(argv[2], NULL, 10);
	if (flood < 2000 || flood > 1000000) {
		printf("Bail out! --flood N: 2000 to 1000000\n");
		return 1;
	}
	test_feature();
	test_refused();
	test_order();
	test_give_back();
	test_priority();
	test_flood(flood);
	return tap_done();
}
