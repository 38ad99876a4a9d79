/* clstats.h - the whole public API of libclstats: exact robust image statistics on OpenCL devices.
 * One header per module under clstats/ (core: statuses, devices, contexts; filter: sliding-window
 * median and MAD; select: order statistics of whole arrays and columns; linalg: dense linear
 * algebra on device data; regress: LTS and LMS regression; cluster: k-means; gp: Gaussian
 * processes); this one includes them all. */
#ifndef CLSTATS_H
#define CLSTATS_H

#include "clstats/background.h"
#include "clstats/core.h"
#include "clstats/cluster.h"
#include "clstats/filter.h"
#include "clstats/gp.h"
#include "clstats/linalg.h"
#include "clstats/regress.h"
#include "clstats/select.h"
#include "clstats/varsel.h"

#endif
