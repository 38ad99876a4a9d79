/* atomic_file.c - write-then-rename outputs, so an interrupted or failed run never leaves a
 * truncated FITS file under the name the user asked for. A signal handler removes the temporary
 * files of outputs still in progress when the user presses Ctrl-C. */
#include "atomic_file.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ACTIVE 4

/* Outputs in progress, for the signal handler: it may only call async-signal-safe functions. */
static struct atomic_file *volatile in_progress[MAX_ACTIVE];
static bool handlers_installed;

static void remove_temporaries(struct atomic_file *af)
{
    unlink(af->tmp_path);
    rmdir(af->tmp_dir);
}

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_ACTIVE; i++)
        if (in_progress[i]) remove_temporaries(in_progress[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track(struct atomic_file *af, bool on)
{
    for (int i = 0; i < MAX_ACTIVE; i++) {
        if (on && !in_progress[i]) {
            in_progress[i] = af;
            break;
        }
        if (!on && in_progress[i] == af) in_progress[i] = NULL;
    }
    if (on && !handlers_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        handlers_installed = true;
    }
}

int atomic_begin(struct atomic_file *af, const char *dest, char *err, size_t errlen)
{
    memset(af, 0, sizeof *af);
    const char *slash = strrchr(dest, '/');
    const char *base = slash ? slash + 1 : dest;
    if (*base == '\0') {
        snprintf(err, errlen, "output \"%s\" names a directory, not a file", dest);
        return -1;
    }
    /* The directory's name must not contain the output's own name: cfitsio looks for ".gz"
     * anywhere in a path to decide whether to compress ("out.fits.gz.tmp/out.fits.gz" would
     * come out uncompressed). */
    if (snprintf(af->dest, sizeof af->dest, "%s", dest) >= (int)sizeof af->dest ||
        snprintf(af->tmp_dir, sizeof af->tmp_dir, "%.*smadfilter.tmp-XXXXXX", (int)(base - dest),
                 dest) >= (int)sizeof af->tmp_dir) {
        snprintf(err, errlen, "output name \"%s\" is too long", dest);
        return -1;
    }
    if (!mkdtemp(af->tmp_dir)) {
        snprintf(err, errlen, "cannot create a temporary directory next to %s: %s", dest,
                 strerror(errno));
        return -1;
    }
    snprintf(af->tmp_path, sizeof af->tmp_path, "%s/%s", af->tmp_dir, base);
    af->active = true;
    track(af, true);
    return 0;
}

int atomic_commit(struct atomic_file *af, bool overwrite, char *err, size_t errlen)
{
    int rc = 0;
    if (!overwrite) {
        /* link() refuses an existing name, so no other process can slip a file in between a
         * check and the rename. Some file systems have no hard links: check, then rename. */
        if (link(af->tmp_path, af->dest) == 0) goto done;
        if (errno == EEXIST) {
            snprintf(err, errlen, "%s exists (use --overwrite to replace it)", af->dest);
            rc = -1;
            goto done;
        }
        struct stat st;
        if (stat(af->dest, &st) == 0) {
            snprintf(err, errlen, "%s exists (use --overwrite to replace it)", af->dest);
            rc = -1;
            goto done;
        }
    }
    if (rename(af->tmp_path, af->dest) != 0) {
        snprintf(err, errlen, "cannot move the finished output to %s: %s", af->dest,
                 strerror(errno));
        rc = -1;
    }
done:
    atomic_abort(af);
    return rc;
}

void atomic_abort(struct atomic_file *af)
{
    if (!af->active) return;
    track(af, false);
    remove_temporaries(af);
    af->active = false;
}
