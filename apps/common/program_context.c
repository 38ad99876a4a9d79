/* program_context.c - the library's context as madfilter and imstats need it: made with the
 * signal dispositions the programs rely on kept as they were. Intel's OpenCL CPU runtime installs
 * handlers of its own when a context is made (a crash reporter that also takes SIGXFSZ), which
 * replaced an inherited SIG_IGN: a file-size limit then printed Intel's bug-report banner before
 * madfilter's own error line. */
#include "program_context.h"

#include <signal.h>
#include <stddef.h>

int program_context_create(clstats_ctx **ctx, const char *device)
{
    /* Interrupts and hangups: madfilter's clean-up of temporaries, or an inherited SIG_IGN
     * (nohup). SIGPIPE and SIGXFSZ: a write that fails must fail as a write, with its reason. */
    static const int kept[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
    enum { N = sizeof kept / sizeof kept[0] };
    struct sigaction before[N];
    for (size_t i = 0; i < N; i++)
        sigaction(kept[i], NULL, &before[i]);
    const int status = clstats_ctx_create(ctx, device);
    for (size_t i = 0; i < N; i++)
        sigaction(kept[i], &before[i], NULL);
    return status;
}
