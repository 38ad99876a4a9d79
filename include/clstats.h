/* clstats.h - the whole public API of libclstats: exact robust image statistics on OpenCL devices.
 * One header per module under clstats/ (core: statuses, devices, contexts; filter: sliding-window
 * median and MAD; select: order statistics of whole arrays); this one includes them all. */
#ifndef CLSTATS_H
#define CLSTATS_H

#include "clstats/background.h"
#include "clstats/core.h"
#include "clstats/filter.h"
#include "clstats/select.h"

#endif
