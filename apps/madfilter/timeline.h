/* timeline.h - where a madfilter run spends its time, for profiling it: with CLSTATS_LOG set (as
 * for the library's own log lines), each step's end is printed on stderr in milliseconds since
 * main began. Silent otherwise. */
#ifndef MADFILTER_TIMELINE_H
#define MADFILTER_TIMELINE_H

/* Starts the clock (main's first call) and reads CLSTATS_LOG. */
void timeline_start(void);

/* "madfilter: 123.4 ms: what" when the timeline is on. Safe from any thread. */
void timeline_mark(const char *what);

/* Whether the timeline is on: the library's log lines are then printed too. */
int timeline_on(void);

#endif
