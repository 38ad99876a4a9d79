/* fits_probe.c - opens an input's headers with cfitsio in a child process first. cfitsio 4.2
 * has more ways to crash on a damaged header than fits_preflight.c's screens name: the fuzzer
 * keeps finding divisions by header values (a tile size, a Rice block size) and fortified
 * copies that abort. A crash in the child costs only the child, and the file is refused with
 * one line; the parent then opens the file itself only after the child came through. */
#include "fits_io.h"

#include <errno.h>
#include <fitsio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* What fits_io_open asks of cfitsio before it reads pixels, in the same order. */
static void open_headers(const char *name)
{
    /* Die of the signal itself, not through a handler the parent installed (a fuzzer's). */
    const int deadly[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++)
        signal(deadly[i], SIG_DFL);
    fitsfile *f = NULL;
    int status = 0, bitpix = 0, naxis = 0, nkeys = 0;
    LONGLONG naxes[9];
    char *header = NULL;
    if (fits_open_image(&f, name, READONLY, &status) == 0) {
        fits_get_img_paramll(f, 9, &bitpix, &naxis, naxes, &status);
        fits_convert_hdr2str(f, 0, NULL, 0, &header, &nkeys, &status);
        fits_is_compressed_image(f, &status);
    }
    _exit(0); /* no cleanup: the parent owns every buffer and file this process shares */
}

int fits_probe_headers(const char *name, const char *path, char *err, size_t errlen)
{
    fflush(NULL); /* so the child cannot repeat buffered output (it never writes any) */
    const pid_t pid = fork();
    if (pid < 0) return 0; /* no probe: cfitsio opens the file unguarded, as before */
    if (pid == 0) open_headers(name);
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
