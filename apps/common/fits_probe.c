/* fits_probe.c - runs an input's opening in a child process first. cfitsio 4.2 has more ways
 * to crash on a damaged header than fits_preflight.c's screens name: the fuzzer keeps finding
 * divisions by header values (a tile size, a Rice block size) and fortified copies that abort.
 * A crash in the child costs only the child, and the file is refused with one line; the parent
 * then opens the file itself only after the child came through. */
#include "fits_io.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

void fits_child_defaults(void)
{
    /* Die of a crash's signal itself, not through a handler the parent installed (a fuzzer's,
     * or madfilter's clean-up of outputs, which are the parent's to remove). */
    const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        signal(signals[i], SIG_DFL);
}

void fits_child_cause(int how, char *cause, size_t len)
{
    if (WIFSIGNALED(how))
        snprintf(cause, len, "%s", strsignal(WTERMSIG(how)));
    else
        snprintf(cause, len, "exit status %d", WEXITSTATUS(how));
}

/* The child: the opening under test, then out without cleanup (the parent owns every buffer
 * and file this process shares). */
static void attempt_and_exit(void (*attempt)(void *arg), void *arg)
{
    fits_child_defaults();
    attempt(arg);
    _exit(0);
}

int fits_probe(const char *path, void (*attempt)(void *arg), void *arg, char *err, size_t errlen)
{
    fflush(NULL); /* so the child cannot repeat buffered output (it never writes any) */
    const pid_t pid = fork();
    if (pid < 0) return 0; /* no probe: cfitsio opens the file unguarded, as before */
    if (pid == 0) attempt_and_exit(attempt, arg);
    int how = 0;
    while (waitpid(pid, &how, 0) < 0)
        if (errno != EINTR) return 0;
    if (WIFEXITED(how) && WEXITSTATUS(how) == 0) return 0;
    char cause[64];
    fits_child_cause(how, cause, sizeof cause);
    snprintf(err, errlen,
             "%s: cfitsio crashed reading its headers (%s), so the file is damaged or not "
             "what it claims; it is refused",
             path, cause);
    return -1;
}
