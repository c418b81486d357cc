/*
 * libdcmi.so shim of the npu-lifecycle simulator.
 *
 * Answers the DCMI calls the DCMI probe uses from a state file the simulator writes, so the production probe runs
 * unchanged on a machine without NPUs. The state file is named by the environment variable NPU_SIM_DCMI_STATE, or
 * else by the file "dcmi.state" next to this library. Its lines (written atomically by the simulator):
 *
 *   init <rc>                       return code of dcmi_init (0, or e.g. -8005 when the driver is wedged)
 *   card <card_id> <device_count> <rc>   a card, its device count and the rc of dcmi_get_device_num_in_card
 *   health <card_id> <device_id> <rc> <health>   rc and health of dcmi_get_device_health (0 normal, 1 minor,
 *                                   2 major, 3 critical; 4294967295 = absent)
 *   hang <seconds>                  every call sleeps that long first (a hanging driver)
 *
 * Signatures (Huawei DCMI API reference): int dcmi_init(void); int dcmi_get_card_num_list(int *card_num,
 * int *card_list, int list_len); int dcmi_get_device_num_in_card(int card_id, int *device_num);
 * int dcmi_get_device_health(int card_id, int device_id, unsigned int *health).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CARDS 256
#define MAX_HEALTH 4096
#define DCMI_ERR_INTERNAL (-8005)
#define DCMI_ERR_NOT_EXIST (-8008)

struct card { int id; int devices; int rc; };
struct health { int card; int device; int rc; unsigned int value; };

struct state {
    int init_rc;
    int hang;
    int ncards;
    struct card cards[MAX_CARDS];
    int nhealth;
    struct health health[MAX_HEALTH];
};

static const char *state_path(char *buf, size_t len) {
    const char *env = getenv("NPU_SIM_DCMI_STATE");
    if (env && *env) {
        return env;
    }
    Dl_info info;
    if (dladdr((void *) state_path, &info) && info.dli_fname) {
        snprintf(buf, len, "%s", info.dli_fname);
        char *slash = strrchr(buf, '/');
        if (slash) {
            snprintf(slash + 1, len - (size_t) (slash + 1 - buf), "dcmi.state");
            return buf;
        }
    }
    return "dcmi.state";
}

/* Reads the state; a missing or unreadable file means the driver does not answer. */
static int load(struct state *s) {
    char pathbuf[4096];
    memset(s, 0, sizeof *s);
    s->init_rc = DCMI_ERR_INTERNAL;
    FILE *f = fopen(state_path(pathbuf, sizeof pathbuf), "r");
    if (!f) {
        return -1;
    }
    char line[256];
    while (fgets(line, sizeof line, f)) {
        int a, b, c;
        unsigned int d;
        if (sscanf(line, "init %d", &a) == 1) {
            s->init_rc = a;
        } else if (sscanf(line, "hang %d", &a) == 1) {
            s->hang = a;
        } else if (sscanf(line, "card %d %d %d", &a, &b, &c) == 3 && s->ncards < MAX_CARDS) {
            s->cards[s->ncards].id = a;
            s->cards[s->ncards].devices = b;
            s->cards[s->ncards].rc = c;
            s->ncards++;
        } else if (sscanf(line, "health %d %d %d %u", &a, &b, &c, &d) == 4 && s->nhealth < MAX_HEALTH) {
            s->health[s->nhealth].card = a;
            s->health[s->nhealth].device = b;
            s->health[s->nhealth].rc = c;
            s->health[s->nhealth].value = d;
            s->nhealth++;
        }
    }
    fclose(f);
    if (s->hang > 0) {
        sleep((unsigned int) s->hang);
    }
    return 0;
}

int dcmi_init(void) {
    struct state s;
    load(&s);
    return s.init_rc;
}

int dcmi_get_card_num_list(int *card_num, int *card_list, int list_len) {
    struct state s;
    load(&s);
    if (s.init_rc != 0) {
        return s.init_rc;
    }
    if (!card_num || !card_list) {
        return -8001; /* invalid parameter */
    }
    int n = 0;
    for (int i = 0; i < s.ncards && n < list_len; i++) {
        card_list[n++] = s.cards[i].id;
    }
    *card_num = n;
    return 0;
}

int dcmi_get_device_num_in_card(int card_id, int *device_num) {
    struct state s;
    load(&s);
    if (s.init_rc != 0) {
        return s.init_rc;
    }
    for (int i = 0; i < s.ncards; i++) {
        if (s.cards[i].id == card_id) {
            if (s.cards[i].rc != 0) {
                return s.cards[i].rc;
            }
            *device_num = s.cards[i].devices;
            return 0;
        }
    }
    return DCMI_ERR_NOT_EXIST;
}

int dcmi_get_device_health(int card_id, int device_id, unsigned int *health) {
    struct state s;
    load(&s);
    if (s.init_rc != 0) {
        return s.init_rc;
    }
    for (int i = 0; i < s.nhealth; i++) {
        if (s.health[i].card == card_id && s.health[i].device == device_id) {
            if (s.health[i].rc != 0) {
                return s.health[i].rc;
            }
            *health = s.health[i].value;
            return 0;
        }
    }
    return DCMI_ERR_NOT_EXIST;
}
