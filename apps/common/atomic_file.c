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
    unlink(af->scratch_path);
    rmdir(af->tmp_dir);
}

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_ACTIVE; i++)
        if (in_progress[i]) remove_temporaries(in_progress[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A signal the parent set to be ignored (nohup, a shell's background job) must stay
     * ignored: the user asked for the run to survive it. */
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        if (sigaction(signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(signals[i], &sa, NULL);
    handlers_installed = true;
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
    if (on && !handlers_installed) install_handlers();
}

void atomic_signals_reset(void)
{
    if (handlers_installed) install_handlers();
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
    snprintf(af->scratch_path, sizeof af->scratch_path, "%s/scratch", af->tmp_dir);
    af->active = true;
    track(af, true);
    return 0;
}

static const char *node_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

int atomic_check_destination(const char *dest, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dest, &st) != 0 || S_ISREG(st.st_mode)) return 0;
    snprintf(err, errlen,
             "output %s is %s; madfilter writes regular files only, and would replace the %s "
             "itself: give the name of a file",
             dest, node_kind(st.st_mode), S_ISLNK(st.st_mode) ? "link" : "node");
    return -1;
}

int atomic_commit(struct atomic_file *af, bool overwrite, char *err, size_t errlen)
{
    int rc = 0;
    if (overwrite && atomic_check_destination(af->dest, err, errlen) != 0) {
        rc = -1;
        goto done;
    }
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
