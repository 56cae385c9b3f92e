// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: drive kwq queues from the shell.
 *
 * Exit status: 0 success, 1 the operation failed, 2 usage error,
 * 3 nothing to get (empty, timed out or shut down).
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kwqctl.h"
#include "libkwq.h"

#define EXIT_USAGE	2
#define EXIT_NOTHING	3

static const char usage_text[] =
"usage: kwqctl [--json] [--kernel] COMMAND [ARGS]\n"
"\n"
"  --json (before the command, or among its options): list, stats and\n"
"  metrics print one JSON document instead of text\n"
"  --kernel (before the command): work on the queues kernel modules made\n"
"  (their own scope) instead of those of this IPC namespace\n"
"\n"
"  version                      ABI version and limits of the loaded module\n"
"  create NAME [--mode M] [--max-items N] [--policy P] [--processing-timeout MS]\n"
"              [--priorities [--aging MS]] [--payload-max BYTES]\n"
"              [--tenant-depth N] [--manual-clock]\n"
"                               make a named queue (mode default 0600,\n"
"                               policy for adds of waiting keys: promote;\n"
"                               keys not done within MS go back to the queue;\n"
"                               --priorities: a priority queue whose ready\n"
"                               keys rise one priority per --aging MS,\n"
"                               default 1000; keys carry payloads of up to\n"
"                               BYTES; --tenant-depth: gets take turns across\n"
"                               tenants, a key's bytes before its N-th '/',\n"
"                               N 1 or 2; --manual-clock: the queue's time\n"
"                               moves only by kwqctl clock)\n"
"  destroy NAME                 remove a queue (owner only)\n"
"  add NAME KEY... [--policy P] [--priority N] [--payload DATA]\n"
"                               add keys (one system call per 1024), print\n"
"                               what happened to each\n"
"                               (P: keep, promote, strict; N: -8 to 7, on a\n"
"                               queue made with --priorities; DATA: each key's\n"
"                               payload, replacing the one it has; with N or\n"
"                               DATA one call each)\n"
"  add-after NAME MS KEY... [--replace | --debounce MAX_MS] [--priority N]\n"
"                           [--payload DATA]\n"
"                               add keys once MS milliseconds have passed\n"
"                               (--debounce: once a key has had no debounced\n"
"                               add for MS ms, at most MAX_MS ms after the\n"
"                               first)\n"
"  clock NAME [NS]              step the manual clock of a queue made with\n"
"                               --manual-clock by NS nanoseconds (default 0)\n"
"                               and print its time since creation, in ns\n"
"                               (owner only)\n"
"  cancel NAME KEY...           remove the keys' waiting entries\n"
"  retry NAME KEY...            add-rate-limited: add after the key's backoff\n"
"  forget NAME KEY...           clear the keys' failure counts\n"
"  requeues NAME KEY...         print the keys' failure counts\n"
"  get NAME [--timeout MS] [--done | --hold S]\n"
"                               take one key and print it, and a tab and\n"
"                               its payload if it has one (timeout: wait\n"
"                               up to MS ms, -1 forever; default 0).\n"
"                               --done: and finish it; --hold: keep it\n"
"                               leased for S seconds, then exit without\n"
"                               done (it goes back to the queue); neither:\n"
"                               leave it processing for a later done\n"
"  list [--json]                names of all queues of the scope\n"
"  list --all-scopes [--json]   every named queue of every scope, with its\n"
"                               scope (kernel, or ipc:INUM: the inode of its\n"
"                               /proc/PID/ns/ipc), owner uid, gid and mode\n"
"                               (root in the initial namespaces only)\n"
"  destroy-in SCOPE NAME        destroy a queue of any scope, SCOPE as list\n"
"                               --all-scopes prints it (the same privilege)\n"
"  ns-limit [N]                 the queue limit of this IPC namespace: print\n"
"                               its queues, limit and the module's ceiling;\n"
"                               with N, set the limit first (root of the\n"
"                               user namespace that owns it)\n"
"  metrics [--json] [NAME...]   statistics in the Prometheus text format\n"
"                               (client-go's workqueue_* names, kwq_* extras)\n"
"  top [--interval MS] [--count N]\n"
"                               a refreshing table of all queues\n"
"                               (every MS ms, N times; each at least 1)\n"
"  done NAME KEY                end the processing of KEY\n"
"  len NAME                     print the number of keys ready\n"
"  stats NAME [--json]          print the queue's counters\n"
"  shutdown NAME                refuse further adds\n"
"  drain NAME [--timeout MS] [--flush]\n"
"                               shut down and wait until all work is done\n"
"                               (up to MS ms, -1 forever, 0 not at all;\n"
"                               default forever; fails if work is left;\n"
"                               --flush: run waiting keys, not drop them)\n"
"\n"
"Exit status: 0 ok, 1 failed, 2 usage, 3 nothing to get.\n";

static int usage(void)
{
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

static int fail(const char *what, const char *name, int err)
{
	const char *why = strerror(-err);

	/* The errnos whose generic text would mislead here. */
	if (err == -ESHUTDOWN)
		why = "the queue is shut down";
	else if (err == -EIDRM)
		why = "the queue was destroyed";
	else if (err == -ENOENT && !strcmp(what, "done on"))
		why = "that key is not being processed";
	else if (err == -ENOENT)
		why = "no such queue";
	else if (err == -ETIMEDOUT)
		why = "work is left after the timeout";
	fprintf(stderr, "kwqctl: %s %s: %s\n", what, name, why);
	return 1;
}

int parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 0);
	return errno || !*s || *end ? -EINVAL : 0;
}

/* Options shared by the commands; each command uses a subset. */
struct opts {
	long mode;
	long max_items;
	long timeout_ms;
	int has_timeout;	/* --timeout given: drain's default is forever */
	int done;
	unsigned int policy;
	int replace;
	long debounce_ms;
	int flush;
	long hold_s;
	long processing_timeout_ms;
	int json;
	int priorities;		/* create: KWQ_CREATE_PRIORITY */
	long aging_ms;		/* create: aging_ns / 1e6, 0 for the default */
	int has_priority;	/* add, add-after: --priority given */
	long priority;
	long payload_max;
	const char *payload;
	long tenant_depth;	/* create: KWQ_CREATE_TENANT's depth, 0 for none */
	int manual_clock;	/* create: KWQ_CREATE_MANUAL_CLOCK */
};

/* Set by a --json before the command. */
static int json_global;
/* Set by a --kernel before the command. */
int kernel_scope;

static int parse_policy(const char *s, unsigned int *policy)
{
	static const char *const names[] = { "default", "keep", "promote", "strict" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*policy = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "max-items", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "done", no_argument, NULL, 'd' },
		{ "policy", required_argument, NULL, 'p' },
		{ "replace", no_argument, NULL, 'r' },
		{ "debounce", required_argument, NULL, 'D' },
		{ "flush", no_argument, NULL, 'f' },
		{ "hold", required_argument, NULL, 'H' },
		{ "processing-timeout", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "priorities", no_argument, NULL, 'Q' },
		{ "aging", required_argument, NULL, 'A' },
		{ "priority", required_argument, NULL, 'R' },
		{ "payload-max", required_argument, NULL, 'P' },
		{ "payload", required_argument, NULL, 'L' },
		{ "tenant-depth", required_argument, NULL, 'N' },
		{ "manual-clock", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->mode = 0600;
	o->max_items = 0;
	o->timeout_ms = 0;
	o->has_timeout = 0;
	o->done = 0;
	o->policy = 0;
	o->replace = 0;
	o->debounce_ms = -1;
	o->flush = 0;
	o->hold_s = -1;
	o->processing_timeout_ms = 0;
	o->json = json_global;
	o->priorities = 0;
	o->aging_ms = 0;
	o->has_priority = 0;
	o->priority = 0;
	o->payload_max = 0;
	o->payload = NULL;
	o->tenant_depth = 0;
	o->manual_clock = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "m:n:t:dp:rD:fH:T:jQA:R:P:L:N:Ch", longopts, NULL)) != -1) {
		switch (c) {
		case 'N':
			if (parse_long(optarg, &o->tenant_depth) || o->tenant_depth < 1 ||
			    o->tenant_depth > KWQ_TENANT_DEPTH_MAX)
				return -EINVAL;
			break;
		case 'Q':
			o->priorities = 1;
			break;
		case 'C':
			o->manual_clock = 1;
			break;
		case 'A':
			if (parse_long(optarg, &o->aging_ms) || o->aging_ms < 1 ||
			    (uint64_t)o->aging_ms > KWQ_AGING_MAX_NS / 1000000)
				return -EINVAL;
			break;
		case 'R':
			if (parse_long(optarg, &o->priority) || o->priority < KWQ_PRIORITY_MIN ||
			    o->priority > KWQ_PRIORITY_MAX)
				return -EINVAL;
			o->has_priority = 1;
			break;
		case 'm':
			if (parse_long(optarg, &o->mode) || o->mode < 0 || o->mode > 0777)
				return -EINVAL;
			break;
		case 'n':
			if (parse_long(optarg, &o->max_items) || o->max_items < 0)
				return -EINVAL;
			break;
		case 't':
			if (parse_long(optarg, &o->timeout_ms) || o->timeout_ms < -1)
				return -EINVAL;
			o->has_timeout = 1;
			break;
		case 'd':
			o->done = 1;
			break;
		case 'p':
			if (parse_policy(optarg, &o->policy))
				return -EINVAL;
			break;
		case 'r':
			o->replace = 1;
			break;
		case 'D':
			if (parse_long(optarg, &o->debounce_ms) || o->debounce_ms < 0)
				return -EINVAL;
			break;
		case 'f':
			o->flush = 1;
			break;
		case 'H':
			if (parse_long(optarg, &o->hold_s) || o->hold_s < 0)
				return -EINVAL;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'T':
			if (parse_long(optarg, &o->processing_timeout_ms) ||
			    o->processing_timeout_ms < 0)
				return -EINVAL;
			break;
		case 'P':
			if (parse_long(optarg, &o->payload_max) || o->payload_max < 0 ||
			    o->payload_max > UINT32_MAX)
				return -EINVAL;
			break;
		case 'L':
			o->payload = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

static int64_t timeout_ns(long ms)
{
	return ms < 0 ? -1 : (int64_t)ms * 1000000;
}

static int cmd_version(void)
{
	struct kwq_ioc_version v;
	int ret = kwq_version(&v);

	if (ret)
		return fail("version", "", ret);
	printf("abi %u, key_max %u bytes, name_max %u, features 0x%llx\n",
	       v.abi_version, v.key_max, v.name_max, (unsigned long long)v.features);
	return 0;
}

/* Add now (@delay_ms < 0) or after @delay_ms. */
/* Add many keys now, KWQ_BATCH_MAX per system call. */
static int cmd_add_batch(int fd, const char *name, int nkeys, char **keys,
			 const struct opts *o)
{
	static struct kwq_batch_entry e[KWQ_BATCH_MAX];
	int i, n, done = 0, ret;

	while (done < nkeys) {
		n = nkeys - done < KWQ_BATCH_MAX ? nkeys - done : KWQ_BATCH_MAX;
		for (i = 0; i < n; i++) {
			e[i].key_ptr = (uintptr_t)keys[done + i];
			e[i].key_len = (uint32_t)strlen(keys[done + i]);
			e[i].result = 0;
		}
		ret = kwq_add_batch(fd, e, (unsigned int)n, o->policy);
		if (ret < 0)
			return fail("add to", name, ret);
		for (i = 0; i < ret; i++)
			printf("%s: %s\n", keys[done + i], kwq_add_result_name((int)e[i].result));
		done += ret;
		if (ret < n) {
			/* Resubmit the entry that stopped the batch to show why. */
			ret = kwq_add_policy(fd, keys[done], strlen(keys[done]), o->policy);
			if (ret < 0)
				return fail("add to", name, ret);
		}
	}
	return 0;
}

/* retry, forget, requeues: one line per key. */
static int cmd_backoff(int fd, const char *name, const char *cmd, int nkeys, char **keys)
{
	int i, r, status = 0;

	for (i = 0; i < nkeys; i++) {
		size_t len = strlen(keys[i]);

		if (!strcmp(cmd, "retry")) {
			r = kwq_add_rate_limited(fd, keys[i], len);
			if (r >= 0)
				printf("%s: %s (failures %d)\n", keys[i], kwq_add_result_name(r),
				       kwq_num_requeues(fd, keys[i], len));
		} else if (!strcmp(cmd, "forget")) {
			r = kwq_forget(fd, keys[i], len);
			if (r >= 0)
				printf("%s: %s\n", keys[i], r ? "forgotten" : "had no failures");
		} else {
			r = kwq_num_requeues(fd, keys[i], len);
			if (r >= 0)
				printf("%s: %d\n", keys[i], r);
		}
		if (r < 0)
			status = fail(cmd, name, r);
	}
	return status;
}

char (*kwqctl_list_all(int *n))[KWQ_NAME_MAX]
{
	char (*names)[KWQ_NAME_MAX] = NULL;
	int cap = 0;

	/* The count may grow between two calls: again, with room to spare. */
	for (;;) {
		*n = kernel_scope ? kwq_list_kernel(names, cap) : kwq_list(names, cap);
		if (*n < 0 || (*n <= cap && names))
			break;
		free(names);
		cap = *n + 16;
		names = calloc(cap, KWQ_NAME_MAX);
		if (!names) {
			*n = -ENOMEM;
			break;
		}
	}
	if (*n < 0) {
		free(names);
		return NULL;
	}
	return names;
}

static int cmd_list(int json)
{
	int i, n;
	char (*names)[KWQ_NAME_MAX] = kwqctl_list_all(&n);

	if (!names)
		return fail("list", "queues", n);
	if (json)
		printf("{\"queues\":[");
	for (i = 0; i < n; i++) {
		if (!json) {
			printf("%s\n", names[i]);
			continue;
		}
		if (i)
			putchar(',');
		json_string(names[i]);
	}
	if (json)
		printf("]}\n");
	free(names);
	return 0;
}

/* A descriptor of /dev/kwq for commands on no queue, or -errno. */
static int dev_fd(void)
{
	int fd = open(KWQ_DEFAULT_DEV, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* kwqctl list --all-scopes: KWQ_IOC_LIST_ALL, with room to spare if the count grows. */
static int cmd_list_all_scopes(int json)
{
	struct kwq_ioc_list_all l;
	struct kwq_queue_info *info = NULL;
	unsigned int cap = 0, i, n;
	char scope[32];
	int fd = dev_fd(), ret = 0;

	if (fd < 0)
		return fail("list", "every scope", fd);
	for (;;) {
		memset(&l, 0, sizeof(l));
		l.info_ptr = (uintptr_t)info;
		l.capacity = cap;
		if (ioctl(fd, KWQ_IOC_LIST_ALL, &l)) {
			ret = fail("list", "every scope", -errno);
			goto out;
		}
		if (l.count <= cap && (info || !l.count))
			break;
		free(info);
		cap = l.count + 16;
		info = calloc(cap, sizeof(*info));
		if (!info) {
			ret = fail("list", "every scope", -ENOMEM);
			goto out;
		}
	}
	n = l.count;
	if (json)
		printf("{\"queues\":[");
	for (i = 0; i < n; i++) {
		if (info[i].ipc_inum)
			snprintf(scope, sizeof(scope), "ipc:%u", info[i].ipc_inum);
		else
			snprintf(scope, sizeof(scope), "kernel");
		if (!json) {
			printf("%s\t%s\t%u\t%u\t%04o\n", scope, (char *)info[i].name,
			       info[i].uid, info[i].gid, info[i].mode);
			continue;
		}
		printf("%s{\"scope\":\"%s\",\"name\":", i ? "," : "", scope);
		json_string((char *)info[i].name);
		printf(",\"uid\":%u,\"gid\":%u,\"mode\":%u}", info[i].uid, info[i].gid,
		       info[i].mode);
	}
	if (json)
		printf("]}\n");
out:
	free(info);
	close(fd);
	return ret;
}

/* kwqctl destroy-in SCOPE NAME: SCOPE is kernel or ipc:INUM. */
static int cmd_destroy_in(const char *scope, const char *name)
{
	struct kwq_ioc_destroy_in d;
	long inum;
	int fd, ret;

	memset(&d, 0, sizeof(d));
	if (!strcmp(scope, "kernel"))
		d.flags = KWQ_SCOPE_KERNEL;
	else if (strncmp(scope, "ipc:", 4) || parse_long(scope + 4, &inum) || inum <= 0 ||
		 inum > UINT32_MAX)
		return usage();
	else
		d.ipc_inum = (uint32_t)inum;
	if (strlen(name) >= KWQ_NAME_MAX)
		return fail("destroy", name, -EINVAL);
	strcpy((char *)d.name, name);
	fd = dev_fd();
	if (fd < 0)
		return fail("destroy", name, fd);
	ret = ioctl(fd, KWQ_IOC_DESTROY_IN, &d) ? -errno : 0;
	close(fd);
	return ret ? fail("destroy", name, ret) : 0;
}

/* kwqctl ns-limit [N] */
static int cmd_ns_limit(const char *set)
{
	struct kwq_ioc_scope_limits l;
	long n;
	int fd, ret;

	memset(&l, 0, sizeof(l));
	if (set) {
		if (parse_long(set, &n) || n < 0 || n > UINT32_MAX)
			return usage();
		l.flags = KWQ_SCOPE_LIMITS_SET;
		l.queues_max = (uint32_t)n;
	}
	fd = dev_fd();
	if (fd < 0)
		return fail("ns-limit", "this IPC namespace", fd);
	ret = ioctl(fd, KWQ_IOC_SCOPE_LIMITS, &l) ? -errno : 0;
	close(fd);
	if (ret)
		return fail("ns-limit", "this IPC namespace", ret);
	printf("queues %u\nlimit %u\nceiling %u\n", l.queues, l.queues_max, l.ceiling);
	return 0;
}

/*
 * One KWQ_IOC_ADD_EX: the add (now for @delay_ms < 0, or after a delay)
 * at o->priority, with o->payload if given.
 */
static int add_ex_one(int fd, const char *key, long delay_ms, const struct opts *o)
{
	struct kwq_ioc_add a;

	memset(&a, 0, sizeof(a));
	a.priority = (int32_t)o->priority;
	if (o->payload && *o->payload) {
		a.payload_ptr = (uintptr_t)o->payload;
		a.payload_len = (uint32_t)strlen(o->payload);
	}
	if (delay_ms < 0) {
		a.flags = o->policy;
	} else {
		a.delay_ns = delay_ms * 1000000LL;
		if (o->debounce_ms >= 0) {
			a.flags = KWQ_AFTER_DEBOUNCE;
			a.max_wait_ns = (uint64_t)o->debounce_ms * 1000000ULL;
		} else if (o->replace) {
			a.flags = KWQ_AFTER_REPLACE;
		}
	}
	return kwq_add_ex(fd, key, strlen(key), &a);
}

/* A payload as text: printable bytes as they are, the others (and \\) as \\xNN. */
static void print_payload(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			putchar(p[i]);
		else
			printf("\\x%02x", p[i]);
	}
}

static int cmd_add(int fd, const char *name, int nkeys, char **keys, long delay_ms,
		   const struct opts *o)
{
	int i, ret, status = 0;

	if (delay_ms < 0 && nkeys > 1 && !o->has_priority && !o->payload)
		return cmd_add_batch(fd, name, nkeys, keys, o);

	for (i = 0; i < nkeys; i++) {
		if (o->has_priority || o->payload)
			ret = add_ex_one(fd, keys[i], delay_ms, o);
		else if (delay_ms < 0)
			ret = kwq_add_policy(fd, keys[i], strlen(keys[i]), o->policy);
		else if (o->debounce_ms >= 0)
			ret = kwq_add_debounced(fd, keys[i], strlen(keys[i]), delay_ms * 1000000LL,
						(uint64_t)o->debounce_ms * 1000000ULL);
		else
			ret = kwq_add_after(fd, keys[i], strlen(keys[i]), delay_ms * 1000000LL,
					    o->replace ? KWQ_AFTER_REPLACE : 0);
		if (ret < 0) {
			status = fail("add to", name, ret);
			continue;
		}
		printf("%s: %s\n", keys[i], kwq_add_result_name(ret));
	}
	return status;
}

static int cmd_get(int fd, const char *name, const struct opts *o)
{
	static unsigned char payload[65536];
	char key[KWQ_KEY_MAX + 1];
	size_t len = 0, plen = 0;
	/* A key kept past exit must not be leased to this short-lived fd. */
	unsigned int flags = o->done || o->hold_s >= 0 ? 0 : KWQ_GET_UNLEASED;
	int ret = kwq_get_payload(fd, key, KWQ_KEY_MAX, &len, payload, sizeof(payload), &plen,
				  timeout_ns(o->timeout_ms), flags, NULL);

	if (ret == -EAGAIN || ret == -ETIMEDOUT || ret == -ESHUTDOWN) {
		fprintf(stderr, "kwqctl: get from %s: %s\n", name,
			ret == -ESHUTDOWN ? "queue is shut down" : "nothing ready");
		return EXIT_NOTHING;
	}
	if (ret)
		return fail("get from", name, ret);
	key[len] = '\0';
	printf("%s", key);
	if (plen) {
		putchar('\t');
		print_payload(payload, plen);
	}
	putchar('\n');
	fflush(stdout);
	if (o->hold_s >= 0) {
		sleep((unsigned int)o->hold_s);
		return 0;
	}
	if (o->done) {
		ret = kwq_done(fd, key, len);
		if (ret < 0)
			return fail("done on", name, ret);
	}
	return 0;
}

static void print_stats(const char *name, const struct kwq_stats *st)
{
	printf("queue %s%s%s%s\n", name,
	       st->state & KWQ_STATE_SHUTTING_DOWN ? " shutting-down" : "",
	       st->state & KWQ_STATE_DRAINING ? " draining" : "",
	       st->state & KWQ_STATE_DESTROYED ? " destroyed" : "");
	printf("  queued %llu  processing %llu  dirty-processing %llu  waiting %llu  items %llu/%llu\n",
	       (unsigned long long)st->queued, (unsigned long long)st->processing,
	       (unsigned long long)st->dirty_processing, (unsigned long long)st->waiting,
	       (unsigned long long)st->items, (unsigned long long)st->max_items);
	printf("  adds %llu  dedups %llu  gets %llu  dones %llu  requeues %llu  refused %llu\n",
	       (unsigned long long)st->adds, (unsigned long long)st->dedups,
	       (unsigned long long)st->gets, (unsigned long long)st->dones,
	       (unsigned long long)st->requeues, (unsigned long long)st->refused);
	printf("  fired %llu  cancels %llu  absorbed %llu  waits-dropped %llu  lease-requeues %llu\n",
	       (unsigned long long)st->fired, (unsigned long long)st->cancels,
	       (unsigned long long)st->absorbed, (unsigned long long)st->waits_dropped,
	       (unsigned long long)st->lease_requeues);
	printf("  rate-limited %llu  tokens-returned %llu  backoff-keys %llu  backoff-evictions %llu\n",
	       (unsigned long long)st->rate_limited, (unsigned long long)st->tokens_returned,
	       (unsigned long long)st->backoff_keys, (unsigned long long)st->backoff_evictions);
	printf("  retries %llu  forgets %llu\n", (unsigned long long)st->retries,
	       (unsigned long long)st->forgets);
	printf("  processing-expiries %llu  unfinished-work %.3f s  longest-running %.3f s\n",
	       (unsigned long long)st->processing_expiries, st->unfinished_work_ns / 1e9,
	       st->longest_running_ns / 1e9);
	printf("  debounced %llu  debounce-capped %llu\n", (unsigned long long)st->debounced,
	       (unsigned long long)st->debounce_capped);
	printf("  payloads-replaced %llu  payload-bytes %llu\n",
	       (unsigned long long)st->payloads_replaced, (unsigned long long)st->payload_bytes);
}

/* An open mode that stands for: either right, read first (see below). */
#define OPEN_OWNER	(-1)

/*
 * The commands that work on an existing queue, and the rights their
 * ioctls need (Documentation/kwq-security.rst), which are all the queue
 * is opened with: a user the queue's mode grants only one right can still
 * run the commands that need only that one. retry needs both, as it prints
 * the failure count. The owner's commands do not depend on the open mode,
 * but attaching needs one right: read, or write if the mode denies read.
 */
static const struct {
	const char *cmd;
	int oflags;
} queue_cmds[] = {
	{ "add", O_WRONLY },
	{ "add-after", O_WRONLY },
	{ "cancel", O_WRONLY },
	{ "clock", O_WRONLY },
	{ "get", O_RDONLY },
	{ "done", O_RDONLY },
	{ "len", O_RDONLY },
	{ "stats", O_RDONLY },
	{ "requeues", O_RDONLY },
	{ "retry", O_RDWR },
	{ "forget", O_RDWR },
	{ "shutdown", OPEN_OWNER },
	{ "drain", OPEN_OWNER },
	{ "destroy", OPEN_OWNER },
	{ NULL, 0 },
};

static int open_queue(const char *name, int oflags)
{
	return kernel_scope ? kwq_open_kernel(name, oflags) : kwq_open(name, oflags);
}

/* Commands that work on an existing queue. */
static int run_on_queue(const char *cmd, const char *name, int argc, char **argv,
			const struct opts *o)
{
	struct kwq_stats st;
	size_t i;
	int fd, ret;

	for (i = 0; queue_cmds[i].cmd && strcmp(cmd, queue_cmds[i].cmd); i++)
		;
	if (!queue_cmds[i].cmd)
		return usage();
	if (queue_cmds[i].oflags == OPEN_OWNER) {
		fd = open_queue(name, O_RDONLY);
		if (fd == -EACCES)
			fd = open_queue(name, O_WRONLY);
	} else {
		fd = open_queue(name, queue_cmds[i].oflags);
	}
	if (fd < 0)
		return fail("open", name, fd);
	long delay;

	if (!strcmp(cmd, "add")) {
		ret = argc > 0 ? cmd_add(fd, name, argc, argv, -1, o) : usage();
	} else if (!strcmp(cmd, "add-after")) {
		if (argc < 2 || parse_long(argv[0], &delay) || delay < 0 ||
		    (o->replace && o->debounce_ms >= 0))
			ret = usage();
		else
			ret = cmd_add(fd, name, argc - 1, argv + 1, delay, o);
	} else if (!strcmp(cmd, "retry") || !strcmp(cmd, "forget") || !strcmp(cmd, "requeues")) {
		ret = argc > 0 ? cmd_backoff(fd, name, cmd, argc, argv) : usage();
	} else if (!strcmp(cmd, "cancel")) {
		int i, r;

		ret = argc > 0 ? 0 : usage();
		for (i = 0; i < argc; i++) {
			r = kwq_cancel(fd, argv[i], strlen(argv[i]));
			if (r < 0)
				ret = fail("cancel on", name, r);
			else
				printf("%s: %s\n", argv[i], r ? "cancelled" : "was not waiting");
		}
	} else if (!strcmp(cmd, "clock")) {
		long long step = 0;
		uint64_t now = 0;
		char *end = NULL;

		if (argc == 1) {
			errno = 0;
			step = strtoll(argv[0], &end, 0);
		}
		if (argc > 1 || (argc == 1 && (errno || !*argv[0] || *end || step < 0))) {
			ret = usage();
		} else {
			ret = kwq_clock_step(fd, step, &now);
			if (!ret)
				printf("%llu\n", (unsigned long long)now);
			ret = ret ? fail("clock step of", name, ret) : 0;
		}
	} else if (!strcmp(cmd, "get")) {
		ret = cmd_get(fd, name, o);
	} else if (!strcmp(cmd, "done")) {
		if (argc != 1) {
			ret = usage();
		} else {
			ret = kwq_done(fd, argv[0], strlen(argv[0]));
			if (ret >= 0)
				printf("%s: %s\n", argv[0], ret == KWQ_DONE_REQUEUED ?
				       "requeued (it was added while processing)" : "finished");
			ret = ret < 0 ? fail("done on", name, ret) : 0;
		}
	} else if (!strcmp(cmd, "len")) {
		int64_t n = kwq_len(fd);

		ret = n < 0 ? fail("len of", name, (int)n) : 0;
		if (n >= 0)
			printf("%lld\n", (long long)n);
	} else if (!strcmp(cmd, "stats")) {
		ret = kwq_stats(fd, &st);
		if (ret) {
			ret = fail("stats of", name, ret);
		} else if (o->json) {
			json_stats(name, &st);
			putchar('\n');
		} else {
			print_stats(name, &st);
		}
	} else if (!strcmp(cmd, "shutdown")) {
		ret = kwq_shutdown(fd);
		ret = ret ? fail("shutdown", name, ret) : 0;
	} else if (!strcmp(cmd, "drain")) {
		/* No --timeout waits forever; --timeout 0 does not wait at all. */
		ret = kwq_shutdown_drain(fd, timeout_ns(o->has_timeout ? o->timeout_ms : -1),
					 o->flush ? KWQ_DRAIN_FLUSH_WAITING : 0);
		ret = ret ? fail("drain", name, ret) : 0;
	} else if (!strcmp(cmd, "destroy")) {
		ret = kwq_destroy(fd);
		ret = ret ? fail("destroy", name, ret) : 0;
	} else {
		ret = usage();
	}
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmd, *name;
	struct opts o;
	int fd;

	while (argc >= 2 && (!strcmp(argv[1], "--json") || !strcmp(argv[1], "--kernel"))) {
		if (!strcmp(argv[1], "--json"))
			json_global = 1;
		else
			kernel_scope = 1;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return argc < 2 ? usage() : (fputs(usage_text, stdout), 0);
	cmd = argv[1];
	if (!strcmp(cmd, "version"))
		return cmd_version();
	if (!strcmp(cmd, "list")) {
		int all = 0, json = json_global, i;

		for (i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--json"))
				json = 1;
			else if (!strcmp(argv[i], "--all-scopes") && !kernel_scope)
				all = 1;
			else
				return usage();
		}
		return all ? cmd_list_all_scopes(json) : cmd_list(json);
	}
	if (!strcmp(cmd, "destroy-in"))
		return argc == 4 && !kernel_scope ? cmd_destroy_in(argv[2], argv[3]) : usage();
	if (!strcmp(cmd, "ns-limit"))
		return argc <= 3 && !kernel_scope ? cmd_ns_limit(argc == 3 ? argv[2] : NULL) : usage();
	if (!strcmp(cmd, "metrics")) {
		int r = kwqctl_metrics(argc - 2, argv + 2, json_global);

		return r == 2 ? usage() : r;
	}
	if (!strcmp(cmd, "top")) {
		int r = kwqctl_top(argc - 2, argv + 2);

		return r == 2 ? usage() : r;
	}
	if (argc < 3)
		return usage();
	name = argv[2];
	/* Options follow the queue name; the rest are keys. */
	if (parse_opts(argc - 2, argv + 2, &o))
		return usage();
	if (!strcmp(cmd, "create")) {
		struct kwq_ioc_create c;

		/* Only kernel modules make queues in the kernel scope. */
		if (kernel_scope)
			return usage();

		memset(&c, 0, sizeof(c));
		if (strlen(name) >= KWQ_NAME_MAX)
			return fail("create", name, -EINVAL);
		strcpy((char *)c.name, name);
		c.mode = (unsigned int)o.mode;
		c.max_items = (unsigned int)o.max_items;
		c.policy = o.policy;
		c.processing_timeout_ns = (uint64_t)o.processing_timeout_ms * 1000000;
		if (o.aging_ms && !o.priorities)
			return usage();
		if (o.priorities)
			c.flags |= KWQ_CREATE_PRIORITY;
		c.aging_ns = (uint64_t)o.aging_ms * 1000000;
		c.payload_max = (uint32_t)o.payload_max;
		if (o.tenant_depth) {
			c.flags |= KWQ_CREATE_TENANT;
			c.tenant_depth = (uint8_t)o.tenant_depth;
		}
		if (o.manual_clock)
			c.flags |= KWQ_CREATE_MANUAL_CLOCK;
		fd = kwq_create_ex(&c);
		if (fd < 0)
			return fail("create", name, fd);
		close(fd);
		return 0;
	}
	return run_on_queue(cmd, name, argc - 2 - optind, argv + 2 + optind, &o);
}
