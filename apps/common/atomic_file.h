/* atomic_file.h - an output file that appears whole or not at all: written inside a temporary
 * directory next to its destination, then renamed into place; removed on failure or Ctrl-C. */
#ifndef MADFILTER_ATOMIC_FILE_H
#define MADFILTER_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>

struct atomic_file {
    char dest[4096];     /* where the file goes */
    char tmp_dir[4096];  /* madfilter.tmp-XXXXXX beside dest: rename() stays on one file system */
    char tmp_path[8192]; /* tmp_dir/basename(dest): the file to write */
    char scratch_path[4200]; /* tmp_dir/scratch: room for one more file (a .gz output's FITS) */
    bool active;
};

/* Creates the temporary directory. Returns 0, or -1 with a reason in err. The first call installs
 * handlers for SIGINT, SIGTERM and SIGHUP that remove the temporaries of every output in progress;
 * a signal the process inherited as ignored (nohup) stays ignored. */
int atomic_begin(struct atomic_file *af, const char *dest, char *err, size_t errlen);

/* Moves the finished file to its destination. Without overwrite an existing destination is an
 * error (checked atomically with link() where the file system allows); with it, only a regular
 * file is replaced (atomic_check_destination). Cleans up either way. */
int atomic_commit(struct atomic_file *af, bool overwrite, char *err, size_t errlen);

/* Whether dest may be written: absent, or a regular file. A directory, symbolic link, FIFO, device
 * or socket there is refused (renaming onto it would replace the node itself). Returns 0, or -1
 * with a reason in err. */
int atomic_check_destination(const char *dest, char *err, size_t errlen);

/* Removes the temporary file and directory; harmless when not begun or already committed. */
void atomic_abort(struct atomic_file *af);

/* Installs the clean-up handlers again where they were installed, after something put the
 * signal dispositions back as they were before (program_context_finish). */
void atomic_signals_reset(void);

#endif
