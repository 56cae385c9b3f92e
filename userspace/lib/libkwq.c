// SPDX-License-Identifier: LGPL-2.1-or-later
/* libkwq: see libkwq.h. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "libkwq.h"

static const char *kwq_dev_path(void)
{
	const char *p = getenv("KWQ_DEV");

	return p && *p ? p : KWQ_DEFAULT_DEV;
}

/* ioctl returning 0 or -errno. */
static int kwq_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static int kwq_open_dev(int oflags)
{
	int fd = open(kwq_dev_path(), oflags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int kwq_copy_name(uint8_t *dst, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n >= KWQ_NAME_MAX)
		return -EINVAL;
	memcpy(dst, name, n + 1);
	return 0;
}

/* Run an attach ioctl on a fresh fd; close it on failure. */
static int kwq_attach(int oflags, unsigned long cmd, void *arg)
{
	int fd = kwq_open_dev(oflags);
	int ret;

	if (fd < 0)
		return fd;
	ret = kwq_ioctl(fd, cmd, arg);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int kwq_create_ex(const struct kwq_ioc_create *c)
{
	struct kwq_ioc_create copy = *c;

	return kwq_attach(O_RDWR, KWQ_IOC_CREATE, &copy);
}

/* A create of @name with @mode and @max_items and the rest 0: 0 or -errno. */
static int kwq_create_args(struct kwq_ioc_create *c, const char *name, unsigned int mode,
			   unsigned int max_items)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->max_items = max_items;
	return kwq_copy_name(c->name, name);
}

int kwq_create(const char *name, unsigned int mode, unsigned int max_items)
{
	struct kwq_ioc_create c;
	int ret = kwq_create_args(&c, name, mode, max_items);

	if (ret)
		return ret;
	return kwq_create_ex(&c);
}

int kwq_create_priority(const char *name, unsigned int mode, unsigned int max_items,
			uint64_t aging_ns)
{
	struct kwq_ioc_create c;
	int ret = kwq_create_args(&c, name, mode, max_items);

	if (ret)
		return ret;
	c.flags = KWQ_CREATE_PRIORITY;
	c.aging_ns = aging_ns;
	return kwq_create_ex(&c);
}

int kwq_create_tenant(const char *name, unsigned int mode, unsigned int max_items,
		      unsigned int tenant_depth)
{
	struct kwq_ioc_create c;
	int ret = kwq_create_args(&c, name, mode, max_items);

	if (ret)
		return ret;
	if (tenant_depth > 255)
		return -EINVAL;
	c.flags = KWQ_CREATE_TENANT;
	c.tenant_depth = tenant_depth;
	return kwq_create_ex(&c);
}

int kwq_clock_step(int fd, int64_t step_ns, uint64_t *now_ns)
{
	struct kwq_ioc_clock_step c;
	int ret;

	do {
		memset(&c, 0, sizeof(c));
		c.step_ns = step_ns;
		ret = kwq_ioctl(fd, KWQ_IOC_CLOCK_STEP, &c);
		step_ns = 0;
	} while (!ret && c.pending);
	if (!ret && now_ns)
		*now_ns = c.now_ns;
	return ret;
}

static int kwq_open_flags(const char *name, int oflags, unsigned int flags)
{
	struct kwq_ioc_open o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.flags = flags;
	ret = kwq_copy_name(o.name, name);
	if (ret)
		return ret;
	return kwq_attach(oflags, KWQ_IOC_OPEN, &o);
}

int kwq_open(const char *name, int oflags)
{
	return kwq_open_flags(name, oflags, 0);
}

int kwq_open_kernel(const char *name, int oflags)
{
	return kwq_open_flags(name, oflags, KWQ_SCOPE_KERNEL);
}

int kwq_close(int fd)
{
	return close(fd) < 0 ? -errno : 0;
}

int kwq_destroy(int fd)
{
	return kwq_ioctl(fd, KWQ_IOC_DESTROY, NULL);
}

uint64_t kwq_deadline(int64_t timeout_ns)
{
	struct timespec ts;
	uint64_t now;

	if (timeout_ns < 0)
		return KWQ_DEADLINE_FOREVER;
	if (timeout_ns == 0)
		return KWQ_DEADLINE_NOWAIT;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return now + (uint64_t)timeout_ns;
}

/* Add, done and cancel share the struct and report a result. */
static int kwq_key_op_ticket(int fd, unsigned long cmd, const void *key, size_t len,
			     unsigned int flags, uint64_t ticket)
{
	struct kwq_ioc_key k;
	int ret;

	if (len > KWQ_KEY_MAX)
		return -EINVAL;
	memset(&k, 0, sizeof(k));
	k.key_ptr = (uintptr_t)key;
	k.key_len = (uint32_t)len;
	k.flags = flags;
	k.ticket = ticket;
	ret = kwq_ioctl(fd, cmd, &k);
	return ret ? ret : (int)k.result;
}

static int kwq_key_op(int fd, unsigned long cmd, const void *key, size_t len,
		      unsigned int flags)
{
	return kwq_key_op_ticket(fd, cmd, key, len, flags, 0);
}

int kwq_add(int fd, const void *key, size_t len)
{
	return kwq_key_op(fd, KWQ_IOC_ADD, key, len, 0);
}

int kwq_add_policy(int fd, const void *key, size_t len, unsigned int policy)
{
	return kwq_key_op(fd, KWQ_IOC_ADD, key, len, policy);
}

int kwq_done(int fd, const void *key, size_t len)
{
	return kwq_key_op(fd, KWQ_IOC_DONE, key, len, 0);
}

int kwq_done_ticket(int fd, const void *key, size_t len, uint64_t ticket)
{
	return kwq_key_op_ticket(fd, KWQ_IOC_DONE, key, len, 0, ticket);
}

/* Set once the module said it has no KWQ_IOC_DONE_GET (read and written
 * without ordering: at worst a few more calls probe again). */
static int kwq_no_done_get;

/* After -ENOTTY: whether the module lacks KWQ_IOC_DONE_GET, as opposed to
 * @fd not being a /dev/kwq descriptor. */
static int kwq_lacks_done_get(void)
{
	struct kwq_ioc_version v;

	return !kwq_version(&v) && !(v.features & KWQ_FEATURE_DONE_GET);
}

int kwq_done_get(int fd, const void *done_key, size_t done_len, int *done_result,
		 void *buf, size_t cap, size_t *len, int64_t timeout_ns)
{
	struct kwq_ioc_done_get d;
	int ret;

	*done_result = -1;
	if (done_len > KWQ_KEY_MAX)
		return -EINVAL;
	if (!__atomic_load_n(&kwq_no_done_get, __ATOMIC_RELAXED)) {
		memset(&d, 0, sizeof(d));
		d.done_ptr = (uintptr_t)done_key;
		d.done_len = (uint32_t)done_len;
		d.key_ptr = (uintptr_t)buf;
		d.key_cap = cap > KWQ_KEY_MAX ? KWQ_KEY_MAX : (uint32_t)cap;
		d.deadline_ns = kwq_deadline(timeout_ns);
		d.done_result = KWQ_DONE_NOT_RUN;
		ret = kwq_ioctl(fd, KWQ_IOC_DONE_GET, &d);
		if (ret != -ENOTTY || !kwq_lacks_done_get()) {
			if (d.done_result != KWQ_DONE_NOT_RUN)
				*done_result = (int)d.done_result;
			if ((!ret || ret == -EMSGSIZE) && len)
				*len = d.key_len;
			return ret;
		}
		__atomic_store_n(&kwq_no_done_get, 1, __ATOMIC_RELAXED);
	}
	ret = kwq_done(fd, done_key, done_len);
	if (ret < 0)
		return ret;
	*done_result = ret;
	return kwq_get(fd, buf, cap, len, timeout_ns);
}

int kwq_cancel(int fd, const void *key, size_t len)
{
	return kwq_key_op(fd, KWQ_IOC_CANCEL, key, len, 0);
}

int kwq_add_rate_limited(int fd, const void *key, size_t len)
{
	return kwq_key_op(fd, KWQ_IOC_ADD_RATE_LIMITED, key, len, 0);
}

int kwq_forget(int fd, const void *key, size_t len)
{
	return kwq_key_op(fd, KWQ_IOC_FORGET, key, len, 0);
}

int kwq_num_requeues(int fd, const void *key, size_t len)
{
	return kwq_key_op(fd, KWQ_IOC_NUM_REQUEUES, key, len, 0);
}

/* KWQ_IOC_ADD_AFTER; @max_wait_ns is only for KWQ_AFTER_DEBOUNCE. */
static int kwq_after_op(int fd, const void *key, size_t len, int64_t delay_ns,
			unsigned int flags, uint64_t max_wait_ns)
{
	struct kwq_ioc_add_after a;
	int ret;

	if (len > KWQ_KEY_MAX)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.key_ptr = (uintptr_t)key;
	a.key_len = (uint32_t)len;
	a.flags = flags;
	a.delay_ns = delay_ns;
	a.max_wait_ns = max_wait_ns;
	ret = kwq_ioctl(fd, KWQ_IOC_ADD_AFTER, &a);
	return ret ? ret : (int)a.result;
}

int kwq_add_after(int fd, const void *key, size_t len, int64_t delay_ns, unsigned int flags)
{
	return kwq_after_op(fd, key, len, delay_ns, flags, 0);
}

int kwq_add_debounced(int fd, const void *key, size_t len, int64_t delay_ns,
		      uint64_t max_wait_ns)
{
	return kwq_after_op(fd, key, len, delay_ns, KWQ_AFTER_DEBOUNCE, max_wait_ns);
}

int kwq_add_ex(int fd, const void *key, size_t len, const struct kwq_ioc_add *opts)
{
	struct kwq_ioc_add a;
	int ret;

	if (len > KWQ_KEY_MAX)
		return -EINVAL;
	if (opts)
		a = *opts;
	else
		memset(&a, 0, sizeof(a));
	a.key_ptr = (uintptr_t)key;
	a.key_len = (uint32_t)len;
	a.result = 0;
	ret = kwq_ioctl(fd, KWQ_IOC_ADD_EX, &a);
	return ret ? ret : (int)a.result;
}

int kwq_add_priority(int fd, const void *key, size_t len, int priority)
{
	struct kwq_ioc_add a;

	memset(&a, 0, sizeof(a));
	a.priority = priority;
	return kwq_add_ex(fd, key, len, &a);
}

int kwq_add_payload(int fd, const void *key, size_t len, const void *payload, size_t plen)
{
	struct kwq_ioc_add a;

	if (plen > UINT32_MAX)
		return -E2BIG;
	memset(&a, 0, sizeof(a));
	a.payload_ptr = plen ? (uintptr_t)payload : 0;
	a.payload_len = (uint32_t)plen;
	return kwq_add_ex(fd, key, len, &a);
}

int kwq_get_payload(int fd, void *buf, size_t cap, size_t *len, void *pbuf, size_t pcap,
		    size_t *plen, int64_t timeout_ns, unsigned int flags, uint64_t *ticket)
{
	struct kwq_ioc_get g;
	int ret;

	memset(&g, 0, sizeof(g));
	g.flags = flags;
	g.key_ptr = (uintptr_t)buf;
	g.key_cap = cap > KWQ_KEY_MAX ? KWQ_KEY_MAX : (uint32_t)cap;
	g.deadline_ns = kwq_deadline(timeout_ns);
	if (pbuf) {
		g.payload_ptr = (uintptr_t)pbuf;
		g.payload_len = pcap > UINT32_MAX ? UINT32_MAX : (uint32_t)pcap;
	}
	ret = kwq_ioctl(fd, KWQ_IOC_GET, &g);
	if (!ret || ret == -EMSGSIZE) {
		if (len)
			*len = g.key_len;
		if (plen)
			*plen = g.payload_len;
	}
	if (!ret && ticket)
		*ticket = g.ticket;
	return ret;
}

int kwq_get(int fd, void *buf, size_t cap, size_t *len, int64_t timeout_ns)
{
	return kwq_get_flags(fd, buf, cap, len, timeout_ns, 0);
}

int kwq_get_flags(int fd, void *buf, size_t cap, size_t *len, int64_t timeout_ns,
		  unsigned int flags)
{
	return kwq_get_ticket(fd, buf, cap, len, timeout_ns, flags, NULL);
}

int kwq_get_ticket(int fd, void *buf, size_t cap, size_t *len, int64_t timeout_ns,
		   unsigned int flags, uint64_t *ticket)
{
	struct kwq_ioc_get g;
	int ret;

	memset(&g, 0, sizeof(g));
	g.flags = flags;
	g.key_ptr = (uintptr_t)buf;
	g.key_cap = cap > KWQ_KEY_MAX ? KWQ_KEY_MAX : (uint32_t)cap;
	g.deadline_ns = kwq_deadline(timeout_ns);
	ret = kwq_ioctl(fd, KWQ_IOC_GET, &g);
	if ((!ret || ret == -EMSGSIZE) && len)
		*len = g.key_len;
	if (!ret && ticket)
		*ticket = g.ticket;
	return ret;
}

static int kwq_batch(int fd, unsigned long cmd, struct kwq_batch_entry *e, unsigned int n,
		     uint64_t deadline, unsigned int flags)
{
	struct kwq_ioc_batch b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.entries_ptr = (uintptr_t)e;
	b.count = n;
	b.flags = flags;
	b.deadline_ns = deadline;
	ret = kwq_ioctl(fd, cmd, &b);
	return ret ? ret : (int)b.completed;
}

int kwq_add_batch(int fd, struct kwq_batch_entry *e, unsigned int n, unsigned int policy)
{
	return kwq_batch(fd, KWQ_IOC_ADD_BATCH, e, n, 0, policy);
}

int kwq_get_batch(int fd, struct kwq_batch_entry *e, unsigned int n, int64_t timeout_ns,
		  unsigned int flags)
{
	return kwq_batch(fd, KWQ_IOC_GET_BATCH, e, n, kwq_deadline(timeout_ns), flags);
}

int kwq_done_batch(int fd, struct kwq_batch_entry *e, unsigned int n)
{
	return kwq_batch(fd, KWQ_IOC_DONE_BATCH, e, n, 0, 0);
}

static int kwq_list_flags(char (*names)[KWQ_NAME_MAX], unsigned int cap, unsigned int flags)
{
	struct kwq_ioc_list l;
	int fd = kwq_open_dev(O_RDONLY);
	int ret;

	if (fd < 0)
		return fd;
	memset(&l, 0, sizeof(l));
	l.flags = flags;
	l.names_ptr = (uintptr_t)names;
	l.capacity = cap;
	ret = kwq_ioctl(fd, KWQ_IOC_LIST, &l);
	close(fd);
	return ret ? ret : (int)l.count;
}

int kwq_list(char (*names)[KWQ_NAME_MAX], unsigned int cap)
{
	return kwq_list_flags(names, cap, 0);
}

int kwq_list_kernel(char (*names)[KWQ_NAME_MAX], unsigned int cap)
{
	return kwq_list_flags(names, cap, KWQ_SCOPE_KERNEL);
}

int kwq_stats(int fd, struct kwq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return kwq_ioctl(fd, KWQ_IOC_STATS, st);
}

int64_t kwq_len(int fd)
{
	struct kwq_stats st;
	int ret = kwq_stats(fd, &st);

	return ret ? ret : (int64_t)st.queued;
}

int kwq_shutdown(int fd)
{
	return kwq_ioctl(fd, KWQ_IOC_SHUTDOWN, NULL);
}

int kwq_shutdown_drain(int fd, int64_t timeout_ns, unsigned int flags)
{
	struct kwq_ioc_drain d;

	memset(&d, 0, sizeof(d));
	d.deadline_ns = kwq_deadline(timeout_ns);
	d.flags = flags;
	return kwq_ioctl(fd, KWQ_IOC_DRAIN, &d);
}

int kwq_shutting_down(int fd)
{
	struct kwq_stats st;
	int ret = kwq_stats(fd, &st);

	return ret ? ret : !!(st.state & KWQ_STATE_SHUTTING_DOWN);
}

int kwq_version(struct kwq_ioc_version *v)
{
	int fd = kwq_open_dev(O_RDONLY);
	int ret;

	if (fd < 0)
		return fd;
	memset(v, 0, sizeof(*v));
	ret = kwq_ioctl(fd, KWQ_IOC_VERSION, v);
	close(fd);
	return ret;
}

const char *kwq_add_result_name(int result)
{
	switch (result) {
	case KWQ_ADD_QUEUED:
		return "queued";
	case KWQ_ADD_DUPLICATE:
		return "duplicate";
	case KWQ_ADD_DEFERRED:
		return "deferred";
	case KWQ_ADD_WAITING:
		return "waiting";
	case KWQ_ADD_WAIT_KEPT:
		return "waiting (earlier deadline kept)";
	case KWQ_ADD_WAIT_MOVED:
		return "waiting (deadline moved)";
	case KWQ_ADD_ABSORBED:
		return "absorbed (runs at its waiting deadline)";
	}
	return "unknown";
}
