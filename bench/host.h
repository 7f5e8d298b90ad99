/*
 * The host's CPU as the benchmarks print it beside their figures: the
 * ratios against llvmpipe depend on which SIMD kernels run, and so on the
 * CPU (kiln's AVX-512 level, for one, exists only where the CPU has it),
 * so a table means little without it.
 */
#ifndef KILN_BENCH_HOST_H
#define KILN_BENCH_HOST_H

#include <stdio.h>
#include <string.h>

/* Value of the first line of /proc/cpuinfo whose key is `key`, or "". */
static inline void bench_cpuinfo_field(const char *key, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, key, k) != 0 || !colon ||
            strspn(line + k, " \t") != (size_t)(colon - line) - k)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        snprintf(buf, n, "%.*s", (int)strcspn(colon, "\n"), colon);
        break;
    }
    fclose(f);
}

/* "model name (family F, model M)" from /proc/cpuinfo (Linux; a
 * hypervisor may shorten the name, the numbers still tell the
 * generation), else "unknown", into buf; returns buf. */
static inline const char *bench_cpu_model(char *buf, size_t n)
{
    char name[96], fam[16], model[16];
    bench_cpuinfo_field("model name", name, sizeof name);
    bench_cpuinfo_field("cpu family", fam, sizeof fam);
    bench_cpuinfo_field("model", model, sizeof model);
    if (!name[0])
        snprintf(buf, n, "unknown");
    else if (fam[0] && model[0])
        snprintf(buf, n, "%s (family %s, model %s)", name, fam, model);
    else
        snprintf(buf, n, "%s", name);
    return buf;
}

#endif
