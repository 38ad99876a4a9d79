/* replay.c - runs the fuzz target (fuzz_input.c) once over each file named on the command line,
 * or over each file of a named folder in name order, without libFuzzer: the seed corpus and
 * every input that once crashed the target become an ordinary test (fuzz/meson.build), and
 * under tools/sanitize.sh an ASan and UBSan one. */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    int rc = data && fread(data, 1, (size_t)size, f) == (size_t)size ? 0 : -1;
    fclose(f);
    if (rc == 0) LLVMFuzzerTestOneInput(data, (size_t)size);
    free(data);
    return rc;
}

static int only_files(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            struct dirent **names;
            int m = scandir(argv[i], &names, only_files, alphasort);
            for (int k = 0; k < m; k++) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
                if (replay_file(path) != 0) return 1;
                n++;
                free(names[k]);
            }
            free(names);
        } else {
            if (replay_file(argv[i]) != 0) return 1;
            n++;
        }
    }
    printf("replay: %d inputs, no crash\n", n);
    return 0;
}
