// SPDX-License-Identifier: GPL-2.0
/*
 * Batches across the kernel's chunks: /dev/kwq handles a batch in chunks
 * of at most 64 entries and a few KiB of key bytes, each under one lock.
 * These tests put every kind of stop (bad length, bad pointer, small
 * buffer, key not processing, unreadable entries, read-only reports) on
 * both sides of a chunk boundary and check that entries are carried out
 * in order, exactly the reported ones, and that no key is lost. Run in
 * the guest as root, 64- and 32-bit.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "tap.h"

#define CHUNK	64	/* entries per kernel chunk (module/kwq_dev_batch.c) */
#define N	200
#define LONG	500	/* a few of these fill a chunk's key bytes */

static char keys[N][KWQ_KEY_MAX];
static char bufs[N][KWQ_KEY_MAX];
static struct kwq_batch_entry e[KWQ_BATCH_MAX];

/* Keys "k000".."k199", or 500-byte keys with that prefix. */
static void make_keys(size_t len)
{
	int i;

	for (i = 0; i < N; i++) {
		memset(keys[i], 'x', len);
		keys[i][0] = 'k';
		keys[i][1] = '0' + i / 100;
		keys[i][2] = '0' + i / 10 % 10;
		keys[i][3] = '0' + i % 10;
	}
}

static void point_at_keys(int from, int n, size_t len)
{
	int i;

	for (i = 0; i < n; i++) {
		e[i].key_ptr = (uintptr_t)keys[from + i];
		e[i].key_len = len;
		e[i].result = 99;
	}
}

static void point_at_bufs(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		e[i].key_ptr = (uintptr_t)bufs[i];
		e[i].key_len = KWQ_KEY_MAX;
		e[i].result = 99;
	}
}

/* How many of the first @n gotten keys differ from keys[from...]. */
static int misordered(int from, int n, size_t len)
{
	int i, bad = 0;

	for (i = 0; i < n; i++)
		bad += e[i].key_len != len || memcmp(bufs[i], keys[from + i], len);
	return bad;
}

static int count_results(int n, unsigned int want)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += e[i].result == want;
	return c;
}

/* Long keys: the chunks are cut by key bytes, not by entries. */
static void test_long_keys(void)
{
	int fd = new_queue("bt-long");
	struct kwq_stats st;

	make_keys(LONG);
	point_at_keys(0, N, LONG);
	is(kwq_add_batch(fd, e, N, 0), N, "add batch of %d %d-byte keys", N, LONG);
	is(count_results(N, KWQ_ADD_QUEUED), N, "every result is queued");
	point_at_bufs(N);
	is(kwq_get_batch(fd, e, N, 0, 0), N, "get batch takes them all");
	is(misordered(0, N, LONG), 0, "in FIFO order, every byte");
	point_at_keys(0, N, LONG);
	is(kwq_done_batch(fd, e, N), N, "done batch of all");
	is(count_results(N, KWQ_DONE_FINISHED), N, "every result is finished");
	st = stats_of(fd);
	ok(st.items == 0 && st.gets == N && st.dones == N, "nothing left, each counted once");
	end_queue(fd);
}

/* The largest batch, with each key twice: the second add is a duplicate. */
static void test_max_batch_with_duplicates(void)
{
	static char many[KWQ_BATCH_MAX / 2][8];
	int fd = new_queue("bt-max");
	int i, half = KWQ_BATCH_MAX / 2;
	struct kwq_stats st;

	for (i = 0; i < KWQ_BATCH_MAX; i++) {
		snprintf(many[i % half], sizeof(many[0]), "m%d", i % half);
		e[i].key_ptr = (uintptr_t)many[i % half];
		e[i].key_len = strlen(many[i % half]);
		e[i].result = 99;
	}
	is(kwq_add_batch(fd, e, KWQ_BATCH_MAX, 0), KWQ_BATCH_MAX, "add batch of %d",
	   KWQ_BATCH_MAX);
	st = stats_of(fd);
	ok(st.adds == (unsigned int)half && st.dedups == (unsigned int)half &&
	   st.queued == (unsigned int)half, "half queued, half duplicates");
	is(count_results(half, KWQ_ADD_QUEUED), half, "the first half's results are queued");
	for (i = half; i < KWQ_BATCH_MAX && e[i].result == KWQ_ADD_DUPLICATE; i++)
		;
	is(i, KWQ_BATCH_MAX, "the second half's results are duplicates");
	end_queue(fd);
}

/* Adds "k000".."k099" and takes none. */
static int queue_of_100(const char *name)
{
	int fd = new_queue(name);

	make_keys(4);
	point_at_keys(0, 100, 4);
	if (kwq_add_batch(fd, e, 100, 0) != 100)
		printf("# setup: add batch failed\n");
	return fd;
}

static void test_get_stops(void)
{
	int fd = queue_of_100("bt-get");
	struct kwq_stats st;

	/* A buffer too small in the second chunk: the key stays queued. */
	point_at_bufs(100);
	e[70].key_len = 2;
	is(kwq_get_batch(fd, e, 100, 0, 0), 70, "get batch stops at a small buffer (entry 70)");
	is(misordered(0, 70, 4), 0, "the 70 before it, in order");
	is(e[70].key_len, 4, "the small entry reports the key's length");
	e[70].key_len = 2;
	is(kwq_get_batch(fd, e + 70, 30, 0, 0), -EMSGSIZE, "resubmitting it shows -EMSGSIZE");
	st = stats_of(fd);
	ok(st.queued == 30 && st.processing == 70, "30 queued, 70 processing");

	/* A bad buffer at entry 0: nothing is taken, nothing counted. */
	point_at_bufs(1);
	e[0].key_ptr = 8;
	is(kwq_get_batch(fd, e, 1, 0, 0), -EFAULT, "get batch into a bad first buffer -> EFAULT");
	st = stats_of(fd);
	ok(st.queued == 30 && st.processing == 70 && st.gets == 70,
	   "and nothing taken or counted (gets %llu)", (unsigned long long)st.gets);

	/* A bad buffer at entry 20 of 30: the 10 after it stay queued, in order. */
	point_at_bufs(30);
	e[20].key_ptr = 8;
	is(kwq_get_batch(fd, e, 30, 0, 0), 20, "get batch stops at a bad buffer");
	is(misordered(70, 20, 4), 0, "the 20 before it, in order");
	st = stats_of(fd);
	ok(st.queued == 10 && st.processing == 90, "the 10 after it are still queued");
	is(st.gets, 90, "only the 20 delivered counted as gets");
	point_at_bufs(10);
	is(kwq_get_batch(fd, e, 10, 0, 0), 10, "and come out next");
	is(misordered(90, 10, 4), 0, "in their order");
	end_queue(fd);
}

static void test_done_stops(void)
{
	int fd = queue_of_100("bt-done");
	struct kwq_stats st;

	point_at_bufs(100);
	is(kwq_get_batch(fd, e, 100, 0, 0), 100, "take all 100");
	point_at_keys(0, 100, 4);
	e[80].key_ptr = (uintptr_t)"zzzz";
	is(kwq_done_batch(fd, e, 100), 80, "done batch stops at a key not processing");
	is(kwq_done_batch(fd, e + 80, 20), -ENOENT, "resubmitting it shows -ENOENT");
	e[80].key_ptr = (uintptr_t)keys[80];
	/* Too long for any chunk: refused as the first of the next one. */
	e[85].key_len = UINT32_MAX;
	is(kwq_done_batch(fd, e + 80, 20), 5, "then stops at a length larger than a chunk");
	is(kwq_done_batch(fd, e + 85, 15), -EINVAL, "resubmitting it shows -EINVAL");
	e[85].key_len = 0;
	is(kwq_done_batch(fd, e + 85, 15), -EINVAL, "a zero length too");
	e[85].key_len = KWQ_KEY_MAX + 1;
	is(kwq_done_batch(fd, e + 85, 15), -EINVAL, "an over-long key too");
	e[85].key_len = 4;
	is(kwq_done_batch(fd, e + 85, 15), 15, "the rest once fixed");
	st = stats_of(fd);
	ok(st.dones == 100 && st.items == 0, "every key done exactly once");
	end_queue(fd);
}

/*
 * Entries at the end of a readable page: the batch stops where they turn
 * unreadable (or, for a read-only page, unwritable), and only the entries
 * before carried out.
 */
static void test_entry_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t fit = 100;	/* entries before the boundary */
	char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	struct kwq_batch_entry *pe;
	struct kwq_stats st;
	int fd = new_queue("bt-pages");
	size_t i;

	if (map == MAP_FAILED) {
		ok(0, "mmap: %s", strerror(errno));
		return;
	}
	make_keys(4);
	pe = (struct kwq_batch_entry *)(map + page) - fit;
	for (i = 0; i < fit + 20; i++) {
		pe[i].key_ptr = (uintptr_t)keys[i];
		pe[i].key_len = 4;
		pe[i].result = 99;
	}
	mprotect(map + page, page, PROT_NONE);
	is(kwq_add_batch(fd, pe, fit + 20, 0), fit, "entries running into an unmapped page");
	st = stats_of(fd);
	ok(st.queued == fit && st.adds == fit, "exactly the %zu readable ones were added", fit);
	is(kwq_add_batch(fd, pe + fit, 20, 0), -EFAULT, "the unreadable ones -> EFAULT");

	/* Readable but not writable: no report can be written, nothing done. */
	mprotect(map + page, page, PROT_READ);
	is(kwq_add_batch(fd, pe + fit, 20, 0), -EFAULT, "entries on a read-only page -> EFAULT");
	st = stats_of(fd);
	ok(st.queued == fit && st.adds == fit && st.dedups == 0, "and nothing added");
	is(kwq_get_batch(fd, pe + fit, 20, 0, 0), -EFAULT, "a get batch into them -> EFAULT");
	st = stats_of(fd);
	ok(st.queued == fit && st.gets == 0 && st.processing == 0, "and nothing taken");
	munmap(map, 2 * page);
	end_queue(fd);
}

/*
 * Entries readable throughout but writable only up to a page boundary
 * (past the first chunk): every kind of batch carries out and reports
 * exactly the writable ones and stops there, though the queue could do
 * more.
 */
static void test_entry_read_only_tail(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int fit = 70, all = 90, i, bad;
	char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	struct kwq_batch_entry *pe;
	struct kwq_stats st;
	int fd = new_queue("bt-ro-tail");

	if (map == MAP_FAILED) {
		ok(0, "mmap: %s", strerror(errno));
		return;
	}
	make_keys(4);
	pe = (struct kwq_batch_entry *)(map + page) - fit;
	is(kwq_add(fd, keys[5], 4), KWQ_ADD_QUEUED, "key 5 queued before the batch");
	for (i = 0; i < all; i++) {
		pe[i].key_ptr = (uintptr_t)keys[i];
		pe[i].key_len = 4;
		pe[i].result = 99;
	}
	ok(!mprotect(map + page, page, PROT_READ), "the second page made read-only");
	is(kwq_add_batch(fd, pe, all, 0), fit, "add batch stops where its entries turn read-only");
	for (i = 0, bad = 0; i < fit; i++)
		bad += pe[i].result != (i == 5 ? KWQ_ADD_DUPLICATE : KWQ_ADD_QUEUED);
	is(bad, 0, "each writable entry reports its own result (5 a duplicate)");
	st = stats_of(fd);
	ok(st.queued == (uint64_t)fit && st.adds == (uint64_t)fit && st.dedups == 1, "exactly those added");
	point_at_keys(fit, all - fit, 4);
	is(kwq_add_batch(fd, e, all - fit, 0), all - fit, "the rest added from writable entries");

	mprotect(map + page, page, PROT_READ | PROT_WRITE);
	for (i = 0; i < all; i++) {
		pe[i].key_ptr = (uintptr_t)bufs[i];
		pe[i].key_len = KWQ_KEY_MAX;
	}
	memset(bufs, 0, sizeof(bufs));
	mprotect(map + page, page, PROT_READ);
	is(kwq_get_batch(fd, pe, all, 0, 0), fit, "get batch takes only keys it can report");
	/* Key 5, queued first, comes first. */
	for (i = 0, bad = 0; i < fit; i++)
		bad += pe[i].key_len != 4 || memcmp(bufs[i], keys[!i ? 5 : i <= 5 ? i - 1 : i], 4);
	is(bad, 0, "each with its length, in order");
	st = stats_of(fd);
	ok(st.queued == (uint64_t)(all - fit) && st.processing == (uint64_t)fit, "the others stay queued");
	point_at_bufs(all - fit);
	is(kwq_get_batch(fd, e, all - fit, 0, 0), all - fit, "and come out next");
	is(misordered(fit, all - fit, 4), 0, "in order");

	mprotect(map + page, page, PROT_READ | PROT_WRITE);
	for (i = 0; i < all; i++) {
		pe[i].key_ptr = (uintptr_t)keys[i];
		pe[i].key_len = 4;
		pe[i].result = 99;
	}
	mprotect(map + page, page, PROT_READ);
	is(kwq_done_batch(fd, pe, all), fit, "done batch stops there too, all 90 processing");
	for (i = 0, bad = 0; i < fit; i++)
		bad += pe[i].result != KWQ_DONE_FINISHED;
	is(bad, 0, "each writable entry reports finished");
	st = stats_of(fd);
	ok(st.processing == (uint64_t)(all - fit) && st.dones == (uint64_t)fit, "exactly those done");
	point_at_keys(fit, all - fit, 4);
	is(kwq_done_batch(fd, e, all - fit), all - fit, "the rest done from writable entries");
	munmap(map, 2 * page);
	end_queue(fd);
}

/*
 * A get batch whose first entry is split across pages: its key length on
 * a read-only page, its result on the writable next one (the array only
 * 4-byte aligned, as user space may pass it). The get must fail before it
 * takes anything, and write no key into any buffer.
 */
static void test_get_split_entry(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	struct kwq_batch_entry one;
	struct kwq_stats st;
	char *at;
	int fd = queue_of_100("bt-split"), i, dirty = 0;
	size_t j;

	if (map == MAP_FAILED) {
		ok(0, "mmap: %s", strerror(errno));
		return;
	}
	/* Entry 0 starts 12 bytes before the page boundary: key_len ends there. */
	at = map + page - offsetof(struct kwq_batch_entry, result);
	memset(bufs, 0, sizeof(bufs));
	for (i = 0; i < 10; i++) {
		one.key_ptr = (uintptr_t)bufs[i];
		one.key_len = KWQ_KEY_MAX;
		one.result = 99;
		memcpy(at + i * sizeof(one), &one, sizeof(one));
	}
	ok(!mprotect(map, page, PROT_READ), "the first page made read-only");
	is(kwq_get_batch(fd, (struct kwq_batch_entry *)at, 10, 0, 0), -EFAULT,
	   "a get batch whose first key length is read-only -> EFAULT");
	st = stats_of(fd);
	ok(st.queued == 100 && st.gets == 0 && st.processing == 0, "and nothing taken or counted");
	for (i = 0; i < 10; i++)
		for (j = 0; j < sizeof(bufs[i]); j++)
			dirty += bufs[i][j] != 0;
	is(dirty, 0, "and no key written into any buffer");
	point_at_bufs(10);
	is(kwq_get_batch(fd, e, 10, 0, 0), 10, "the keys come out next");
	is(misordered(0, 10, 4), 0, "in their order");
	munmap(map, 2 * page);
	end_queue(fd);
}

int main(void)
{
	test_long_keys();
	test_max_batch_with_duplicates();
	test_get_stops();
	test_done_stops();
	test_entry_pages();
	test_entry_read_only_tail();
	test_get_split_entry();
	return tap_done();
}
