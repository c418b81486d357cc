/*
 * The floor of the DCMI probe benchmark (docs/benchmarks.md): the same calls as the Java DcmiProbe
 * (dcmi_init once, then per probe cycle dcmi_get_card_num_list, dcmi_get_device_num_in_card per card and
 * dcmi_get_device_health per device) on the same libdcmi.so shim, from C, without JNA.
 * Usage: dcmi_floor <libdcmi.so> <warm-up cycles> <measured cycles>
 * Prints: cpu_ns_per_cycle=<n> wall_ns_per_cycle=<n> chips=<n>
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*init_fn)(void);
typedef int (*cards_fn)(int *, int *, int);
typedef int (*devs_fn)(int, int *);
typedef int (*health_fn)(int, int, unsigned int *);

static long long ns(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cycle(cards_fn cards, devs_fn devs, health_fn health) {
    int n = 0, list[64], chips = 0;
    if (cards(&n, list, 64) != 0) return -1;
    for (int i = 0; i < n; i++) {
        int d = 0;
        if (devs(list[i], &d) != 0) continue;
        for (int j = 0; j < d; j++) {
            unsigned int h = 0;
            if (health(list[i], j, &h) == 0 && h == 0) chips++;
        }
    }
    return chips;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <libdcmi.so> <warm-up cycles> <measured cycles>\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    init_fn init = (init_fn) dlsym(h, "dcmi_init");
    cards_fn cards = (cards_fn) dlsym(h, "dcmi_get_card_num_list");
    devs_fn devs = (devs_fn) dlsym(h, "dcmi_get_device_num_in_card");
    health_fn health = (health_fn) dlsym(h, "dcmi_get_device_health");
    if (!init || !cards || !devs || !health) {
        fprintf(stderr, "%s lacks a DCMI function\n", argv[1]);
        return 1;
    }
    if (init() != 0) {
        fprintf(stderr, "dcmi_init failed\n");
        return 1;
    }
    long warm = atol(argv[2]), n = atol(argv[3]);
    int chips = 0;
    for (long i = 0; i < warm; i++) chips = cycle(cards, devs, health);
    long long c0 = ns(CLOCK_PROCESS_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
    for (long i = 0; i < n; i++) chips = cycle(cards, devs, health);
    long long c1 = ns(CLOCK_PROCESS_CPUTIME_ID), w1 = ns(CLOCK_MONOTONIC);
    printf("cpu_ns_per_cycle=%lld wall_ns_per_cycle=%lld chips=%d\n", (c1 - c0) / n, (w1 - w0) / n, chips);
    return 0;
}
