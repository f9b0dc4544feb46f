/* charts.c - placeholder until the chart writer lands: reports that it is missing. */
#include "reports/charts.h"

#include <stdio.h>

int rep_charts(const char *dir, const sim_scenario *sc, sim_summary *const *sums, size_t n,
               char *msg, size_t msglen) {
    (void)dir;
    (void)sc;
    (void)sums;
    (void)n;
    snprintf(msg, msglen, "charts are not implemented yet; use --no-charts");
    return FB_ENOTFOUND;
}
