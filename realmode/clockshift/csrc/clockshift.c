/*
 * clockshift: an LD_PRELOAD library of locksim's own that shifts a process's
 * wall clock (CLOCK_REALTIME, CLOCK_REALTIME_COARSE, gettimeofday, time) by
 * an offset and a rate read from a memory-mapped control file written by
 * locksim (realmode/clockshift/control.go describes the layout).
 *
 * NB: everything here must work while the C library and the allocator are
 * still starting up. Debian's redis-server links jemalloc, whose
 * initialisation reads the clock; libfaketime 0.9.10 resolves the real
 * clock_gettime with dlsym, which allocates, which re-enters jemalloc, and
 * the process never starts. So this library never allocates, never calls
 * dlsym and never takes a lock: the real clocks are read with the raw
 * clock_gettime system call, and the control file is read under a seqlock
 * that a reader can only spin on, never deadlock on.
 *
 * CLOCK_MONOTONIC and the other clocks pass through untouched: a wall-clock
 * step does not move a real machine's monotonic clock either.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CS_MAGIC 0x31304b4c43534b4cULL /* "LKSCLK01" little-endian */
#define CS_SIZE 4096
#define CS_ENV "LOCKSIM_CLOCKSHIFT_CONTROL"

/* The control file's layout: eight-byte little-endian words. */
struct cs_control {
	uint64_t magic;
	uint64_t seq;        /* seqlock: odd while the writer is updating */
	int64_t frozen;      /* 1: the wall clock reads frozen_ns */
	int64_t frozen_ns;
	int64_t anchor_real; /* real CLOCK_REALTIME at the last change */
	int64_t anchor_shift;/* shifted time at that instant */
	int64_t rate_ppb;    /* shifted clock runs at 1 + rate_ppb/1e9 */
};

static struct cs_control *volatile cs_ctl;
static int cs_state; /* 0 unset, 1 initialising, 2 done */

static void cs_die(const char *what)
{
	static const char pre[] = "clockshift: cannot use the control file named by " CS_ENV ": ";
	ssize_t r = write(2, pre, sizeof pre - 1);
	r = write(2, what, strlen(what));
	r = write(2, "\n", 1);
	(void)r;
	abort();
}

static void cs_init(void)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&cs_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* another thread initialises; until then the clock is real */
	const char *path = getenv(CS_ENV);
	if (path != NULL && path[0] != '\0') {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			cs_die("open failed");
		void *p = (void *)syscall(SYS_mmap, NULL, CS_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		syscall(SYS_close, fd);
		if (p == MAP_FAILED || (unsigned long)p > -4096UL)
			cs_die("mmap failed");
		struct cs_control *c = p;
		if (__atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) != CS_MAGIC)
			cs_die("bad magic (not a locksim clock control file)");
		__atomic_store_n(&cs_ctl, c, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&cs_state, 2, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void cs_ctor(void) { cs_init(); }

static int raw_clock(clockid_t id, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, id, ts);
}

/* scaled returns elapsed*rate/1e9 split so that no product overflows
 * (|rate| <= 1e9 is enforced by the writer); control.go computes the same. */
static int64_t scaled(int64_t elapsed, int64_t rate)
{
	int64_t q = elapsed / 1000000000LL, r = elapsed % 1000000000LL;
	return q * rate + (r * rate) / 1000000000LL;
}

/* shift maps a real wall-clock reading in nanoseconds to the shifted one. */
static int64_t shift(int64_t real)
{
	if (__atomic_load_n(&cs_state, __ATOMIC_ACQUIRE) != 2)
		cs_init();
	struct cs_control *c = __atomic_load_n(&cs_ctl, __ATOMIC_ACQUIRE);
	if (c == NULL)
		return real;
	for (long spins = 0;; spins++) {
		uint64_t s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			/* A writer that died mid-update would leave seq odd for
			 * ever; give up loudly instead of hanging the server. */
			if (spins > 100000000L)
				cs_die("seqlock stuck (the writer died mid-update)");
			continue;
		}
		int64_t frozen = __atomic_load_n(&c->frozen, __ATOMIC_RELAXED);
		int64_t frozen_ns = __atomic_load_n(&c->frozen_ns, __ATOMIC_RELAXED);
		int64_t ar = __atomic_load_n(&c->anchor_real, __ATOMIC_RELAXED);
		int64_t as = __atomic_load_n(&c->anchor_shift, __ATOMIC_RELAXED);
		int64_t rate = __atomic_load_n(&c->rate_ppb, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) != s1)
			continue;
		if (frozen)
			return frozen_ns;
		int64_t el = real - ar;
		return as + el + scaled(el, rate);
	}
}

static int shifted_clock(clockid_t id, struct timespec *ts)
{
	struct timespec r;
	int rc = raw_clock(id, &r);
	if (rc != 0)
		return rc;
	int64_t ns = shift((int64_t)r.tv_sec * 1000000000LL + r.tv_nsec);
	int64_t sec = ns / 1000000000LL, nsec = ns % 1000000000LL;
	if (nsec < 0) {
		nsec += 1000000000LL;
		sec--;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)nsec;
	return 0;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)
		return shifted_clock(id, ts);
	return raw_clock(id, ts);
}

#pragma GCC diagnostic ignored "-Wnonnull-compare"
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	if (tz != NULL)
		memset(tz, 0, 2 * sizeof(int)); /* struct timezone is obsolete */
	if (tv == NULL)
		return 0;
	struct timespec ts;
	int rc = shifted_clock(CLOCK_REALTIME, &ts);
	if (rc != 0)
		return rc;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;
	if (shifted_clock(CLOCK_REALTIME, &ts) != 0)
		return (time_t)-1;
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
