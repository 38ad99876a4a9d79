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

/* The child: the opening under test, then out without cleanup (the parent owns every buffer
 * and file this process shares). */
static void attempt_and_exit(void (*attempt)(void *arg), void *arg)
{
    /* Die of the signal itself, not through a handler the parent installed (a fuzzer's). */
    const int deadly[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++)
        signal(deadly[i], SIG_DFL);
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
    if (WIFSIGNALED(how))
        snprintf(cause, sizeof cause, "%s", strsignal(WTERMSIG(how)));
    else
        snprintf(cause, sizeof cause, "exit status %d", WEXITSTATUS(how));
    snprintf(err, errlen,
             "%s: cfitsio crashed reading its headers (%s), so the file is damaged or not "
             "what it claims; it is refused",
             path, cause);
    return -1;
}
