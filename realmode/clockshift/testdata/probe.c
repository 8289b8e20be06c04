/* probe: for each line read on stdin, prints one sample of the clocks as
 * the process sees them, bracketed by raw system-call readings of the real
 * clocks, so the test can check the shifted reading exactly:
 * raw1 shifted gettimeofday_us time coarse raw2 mono rawmono */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long ns(struct timespec t) { return (long long)t.tv_sec * 1000000000LL + t.tv_nsec; }

int main(void)
{
	char line[64];
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin) != NULL) {
		struct timespec r1, s, c, r2, m, rm;
		struct timeval tv;
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &r1);
		clock_gettime(CLOCK_REALTIME, &s);
		gettimeofday(&tv, NULL);
		time_t tt = time(NULL);
		clock_gettime(CLOCK_REALTIME_COARSE, &c);
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &r2);
		clock_gettime(CLOCK_MONOTONIC, &m);
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &rm);
		printf("%lld %lld %lld %lld %lld %lld %lld %lld\n", ns(r1), ns(s),
		       (long long)tv.tv_sec * 1000000LL + tv.tv_usec, (long long)tt, ns(c), ns(r2), ns(m), ns(rm));
	}
	return 0;
}
