/*
 * fuzz_capture_replay: runs the capture fuzzer's entry point
 * (fuzz_capture.c) on files, without libFuzzer: the regression inputs and
 * the seed corpus under ctest with any compiler, and a crashing input by
 * hand. Usage: fuzz_capture_replay FILE|DIR...
 *
 * Each input gets a watchdog: one that runs longer than WATCHDOG_S seconds
 * is a hang, reported with its name, and the program exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCHDOG_S 60

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current = "";

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "fuzz_capture_replay: HANG (watchdog) in ";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    ignored = write(2, current, strlen(current));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(1);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_capture_replay: cannot open %s\n", path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got);
    fclose(f);
    current = path;
    alarm(WATCHDOG_S);
    LLVMFuzzerTestOneInput(buf, n);
    alarm(0);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    signal(SIGALRM, on_alarm);
    unsigned inputs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz_capture_replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]))
                return 1;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            return 1;
        char **names = NULL;
        size_t count = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char **nn = realloc(names, (count + 1) * sizeof *names);
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            char *p = malloc(len);
            if (!nn || !p)
                return 1;
            names = nn;
            snprintf(p, len, "%s/%s", argv[i], e->d_name);
            names[count++] = p;
        }
        closedir(d);
        qsort(names, count, sizeof *names, by_name);
        for (size_t k = 0; k < count; k++) {
            if (stat(names[k], &st) == 0 && S_ISREG(st.st_mode)) {
                if (run_file(names[k]))
                    return 1;
                inputs++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("fuzz_capture_replay: %u inputs, no crash, no hang\n", inputs);
    return 0;
}
