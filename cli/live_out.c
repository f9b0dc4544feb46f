/* live_out.c - live.json, the live runs' verdicts, the mocks' counted messages; see live_out.h. */
#include "cli/live_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "reports/verdict.h"

const sim_summary *cli_live_find(const cli_live_runs *rs, const char *name) {
    for (size_t i = 0; rs != NULL && i < rs->n; i++)
        if (strcmp(rs->sums[i]->variant, name) == 0) return rs->sums[i];
    return NULL;
}

/* The variant simulated, quietly: only its summary is wanted. NULL when it cannot run. */
static sim_summary *simulate(const sim_scenario *sc, uint32_t v) {
    sim_summary *s = malloc(sizeof *s);
    sim_run_opts opts;
    memset(&opts, 0, sizeof opts);
    sim_error err;
    if (s != NULL && sim_run(sc, v, &opts, s, &err) != FB_OK) {
        free(s);
        s = NULL;
    }
    return s;
}

void cli_live_judge(const sim_scenario *sc, double scale, cli_live_runs *rs,
                    const cli_live_runs *sim) {
    for (size_t i = 0; i < rs->n; i++) {
        const sim_summary *l = rs->sums[i];
        int v = scn_variant(sc, l->variant);
        if (v < 0) continue;
        /* a run cut by a signal made fewer attempts than the whole simulation for that reason
           alone: judged on its timekeeping only, never "short of work" */
        bool cut = rs->interrupted && !l->complete;
        const sim_summary *simulated = cut ? NULL : cli_live_find(sim, l->variant);
        live_fidelity *f = &rs->fid[i];
        live_fidelity_judge(sc, (uint32_t)v, scale, &rs->stats[i], l, simulated, f);
        if (f->ok || simulated != NULL || cut) continue;
        /* how much work the scenario asks for: the cause, and the time scale that would work */
        sim_summary *s = simulate(sc, (uint32_t)v);
        if (s != NULL) live_fidelity_judge(sc, (uint32_t)v, scale, &rs->stats[i], l, s, f);
        free(s);
    }
}

bool cli_live_inconclusive(const cli_live_runs *rs) {
    for (size_t i = 0; i < rs->n; i++)
        if (!rs->fid[i].ok) return true;
    return false;
}

char *cli_live_warning(const cli_live_runs *rs) {
    if (!cli_live_inconclusive(rs)) return NULL;
    static const char title[] =
        "Inconclusive: this live run could not keep the scenario's timing, so its numbers are "
        "for diagnosis, not a result (docs/live.md, \"Inconclusive runs\").\n";
    size_t len = sizeof title;
    for (size_t i = 0; i < rs->n; i++)
        if (!rs->fid[i].ok) len += strlen(rs->sums[i]->variant) + strlen(rs->fid[i].reason) + 3;
    char *w = malloc(len);
    if (w == NULL) return NULL;
    size_t at = (size_t)snprintf(w, len, "%s", title);
    for (size_t i = 0; i < rs->n && at < len; i++)
        if (!rs->fid[i].ok)
            at += (size_t)snprintf(w + at, len - at, "%s: %s\n", rs->sums[i]->variant,
                                   rs->fid[i].reason);
    return w;
}

static cJSON *verdict_json(const live_fidelity *f) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "verdict", f->ok ? "ok" : "inconclusive");
    cJSON_AddStringToObject(o, "cause", live_cause_name(f->cause));
    cJSON_AddStringToObject(o, "reason", f->reason);
    if (!f->ok) cJSON_AddNumberToObject(o, "time_scale_ok", f->time_scale_ok);
    return o;
}

size_t cli_live_extras(const cli_live_runs *rs, rep_extra extra[2], char *text[2]) {
    text[0] = strdup("false");
    cJSON *live = cJSON_CreateObject();
    cJSON_AddStringToObject(live, "verdict", cli_live_inconclusive(rs) ? "inconclusive" : "ok");
    cJSON *vars = cJSON_AddObjectToObject(live, "variants");
    for (size_t i = 0; i < rs->n; i++)
        cJSON_AddItemToObject(vars, rs->sums[i]->variant, verdict_json(&rs->fid[i]));
    text[1] = cJSON_PrintUnformatted(live);
    cJSON_Delete(live);
    if (text[0] == NULL || text[1] == NULL) return 0;
    if (rs->interrupted) {
        extra[0] = (rep_extra){"live", text[1]};
        return 1;
    }
    extra[0] = (rep_extra){"interrupted", text[0]};
    extra[1] = (rep_extra){"live", text[1]};
    return 2;
}

void cli_live_extras_free(char *text[2]) {
    free(text[0]);
    cJSON_free(text[1]);
    text[0] = text[1] = NULL;
}

/* One variant's wire counters and timekeeping (real time) into o. */
static void add_wire(cJSON *o, const live_stats *st) {
    const live_client_stats *w = &st->wire;
    cJSON_AddNumberToObject(o, "wall_s", st->wall_s);
    cJSON_AddNumberToObject(o, "transfers", (double)w->transfers);
    cJSON_AddNumberToObject(o, "cancelled", (double)w->cancelled);
    cJSON_AddNumberToObject(o, "transport_errors", (double)w->transport_errors);
    cJSON_AddNumberToObject(o, "oversized", (double)w->oversized);
    cJSON_AddNumberToObject(o, "in_flight_peak", w->in_flight_peak);
    cJSON_AddNumberToObject(o, "bytes_sent", (double)w->bytes_sent);
    cJSON_AddNumberToObject(o, "bytes_received", (double)w->bytes_received);
    cJSON *t = cJSON_AddObjectToObject(o, "timekeeping");
    cJSON_AddNumberToObject(t, "due_times", (double)w->lag_samples);
    cJSON_AddNumberToObject(t, "lag_p50_ms", (double)w->lag_p50_us / 1e3);
    cJSON_AddNumberToObject(t, "lag_p99_ms", (double)w->lag_p99_us / 1e3);
    cJSON_AddNumberToObject(t, "lag_p999_ms", (double)w->lag_p999_us / 1e3);
    cJSON_AddNumberToObject(t, "lag_max_ms", (double)w->lag_max_us / 1e3);
    cJSON_AddNumberToObject(t, "gap_p99_ms", (double)w->gap_p99_us / 1e3);
    cJSON_AddNumberToObject(t, "gap_p999_ms", (double)w->gap_p999_us / 1e3);
    cJSON_AddNumberToObject(t, "gap_max_ms", (double)w->gap_max_us / 1e3);
    cJSON_AddNumberToObject(t, "planned_answers", (double)w->late_samples);
    if (w->late_samples > 0) {
        cJSON_AddNumberToObject(t, "answer_late_p50_ms", (double)w->late_p50_us / 1e3);
        cJSON_AddNumberToObject(t, "answer_late_p99_ms", (double)w->late_p99_us / 1e3);
        cJSON_AddNumberToObject(t, "answer_late_p999_ms", (double)w->late_p999_us / 1e3);
        cJSON_AddNumberToObject(t, "answer_late_max_ms", (double)w->late_max_us / 1e3);
    }
    cJSON_AddNumberToObject(t, "cpu_s", w->cpu_s);
    if (w->sched.known) {
        cJSON_AddNumberToObject(t, "process_cpu_s", (double)w->sched.run_ns / 1e9);
        cJSON_AddNumberToObject(t, "process_cpu_wait_s", (double)w->sched.wait_ns / 1e9);
    }
}

/* The verdict with the numbers behind it (simulated milliseconds unless said). */
static void add_fidelity(cJSON *o, const live_fidelity *f) {
    cJSON *v = verdict_json(f);
    cJSON_AddNumberToObject(v, "lag_ms", f->lag_us / 1e3);
    cJSON_AddNumberToObject(v, "lag_real_ms", f->lag_real_us / 1e3);
    if (f->answers > 0) {
        cJSON_AddNumberToObject(v, "answer_late_real_ms", f->answer_late_real_us / 1e3);
        cJSON_AddNumberToObject(v, "answer_excess_ms", f->answer_excess_us / 1e3);
    }
    cJSON_AddNumberToObject(v, "budget_ms", f->budget_us / 1e3);
    cJSON_AddNumberToObject(v, "tail_ms", f->tail_us / 1e3);
    cJSON_AddNumberToObject(v, "tail_budget_ms", f->tail_budget_us / 1e3);
    cJSON_AddNumberToObject(v, "shortest_ms", (double)f->shortest_us / 1e3);
    cJSON_AddStringToObject(v, "shortest", f->shortest);
    cJSON_AddNumberToObject(v, "driver_cpu_share", f->cpu_share);
    if (f->wait_ratio >= 0) cJSON_AddNumberToObject(v, "cpu_wait_ratio", f->wait_ratio);
    cJSON_AddNumberToObject(v, "cancelled_share", f->cancelled_share);
    cJSON_AddItemToObject(o, "fidelity", v);
}

static void add_mocks(cJSON *o, const sim_scenario *sc, const cli_mock_log *log) {
    cJSON *arr = cJSON_AddArrayToObject(o, "mock_messages");
    for (size_t k = 0; k < log->n; k++) {
        const cli_mock_note *n = &log->notes[k];
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "provider", sc->providers[n->provider].name);
        cJSON_AddStringToObject(m, "level", n->level == MOCK_LOG_ERROR ? "error" : "warning");
        cJSON_AddStringToObject(m, "message", n->msg);
        cJSON_AddNumberToObject(m, "count", (double)n->count);
        cJSON_AddItemToArray(arr, m);
    }
    if (log->other > 0) cJSON_AddNumberToObject(o, "mock_messages_other", (double)log->other);
}

int cli_live_json(const cli_outdir *out, const sim_scenario *sc, const cli_live_runs *rs,
                  const live_config *cfg) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "scenario", sc->name);
    cJSON_AddNumberToObject(root, "seed", (double)sc->seed);
    cJSON_AddNumberToObject(root, "time_scale", cfg->time_scale);
    cJSON_AddBoolToObject(root, "interrupted", rs->interrupted);
    cJSON_AddStringToObject(root, "verdict", cli_live_inconclusive(rs) ? "inconclusive" : "ok");
    cJSON *prov = cJSON_AddObjectToObject(root, "providers");
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        cJSON *o = cJSON_AddObjectToObject(prov, sc->providers[p].name);
        const live_target *t = &cfg->targets[p];
        cJSON_AddStringToObject(o, "target", t->url ? t->url : "mock");
        cJSON_AddStringToObject(o, "dialect", live_dialect_name(t->dialect));
        cJSON_AddStringToObject(o, "model", t->model ? t->model : sc->providers[p].name);
    }
    cJSON *vars = cJSON_AddObjectToObject(root, "variants");
    for (size_t i = 0; i < rs->n; i++) {
        const live_stats *st = &rs->stats[i];
        cJSON *o = cJSON_AddObjectToObject(vars, rs->sums[i]->variant);
        add_wire(o, st);
        add_fidelity(o, &rs->fid[i]);
        add_mocks(o, sc, &rs->mocks[i]);
        cJSON *urls = cJSON_AddObjectToObject(o, "urls");
        for (uint32_t p = 0; p < sc->provider_count; p++)
            cJSON_AddStringToObject(urls, sc->providers[p].name, st->urls[p]);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    char path[1300], shown[1300];
    cli_outdir_path(out, "live.json", path, sizeof path);
    snprintf(shown, sizeof shown, "%s/live.json", out->dir);
    int status = CLI_BAD_INPUT;
    FILE *f = text ? fopen(path, "w") : NULL;
    if (text == NULL) {
        fprintf(stderr, "fusebox live: out of memory\n");
    } else if (f == NULL) {
        cli_write_error("live", shown, errno);
    } else {
        fprintf(f, "%s\n", text);
        if (cli_close_checked(f, "live", shown) == 0) status = CLI_OK;
    }
    cJSON_free(text);
    return status;
}

void cli_live_print(FILE *f, const cli_live_runs *rs, double scale) {
    for (size_t i = 0; i < rs->n; i++) {
        const live_stats *st = &rs->stats[i];
        fprintf(f,
                "%s: live over HTTP at x%g: %.1fs wall, %llu transfers (peak %u at once), "
                "%llu transport errors, %llu cancelled; %.3g s late (p99, simulated)\n",
                rs->sums[i]->variant, scale, st->wall_s, (unsigned long long)st->wire.transfers,
                st->wire.in_flight_peak, (unsigned long long)st->wire.transport_errors,
                (unsigned long long)st->wire.cancelled, rs->fid[i].lag_us / 1e6);
    }
}

void cli_live_print_verdict(FILE *f, const sim_scenario *sc, const cli_live_runs *rs) {
    fputc('\n', f);
    for (size_t i = 0; i < rs->n; i++)
        if (!rs->fid[i].ok)
            fprintf(f, "%s: INCONCLUSIVE, %s\n", rs->sums[i]->variant, rs->fid[i].reason);
    if (cli_live_inconclusive(rs))
        fputs("The verdict below is of the run as driven, not of the scenario:\n", f);
    /* an interrupted variant says so in the verdict: "stopped early (interrupted at t=...)" */
    char verdict[REP_VERDICT_MAX];
    fputs(rep_verdict_table(verdict, sizeof verdict, sc, (sim_summary *const *)rs->sums, rs->n), f);
    fputs(rep_verdict(verdict, sizeof verdict, sc, (sim_summary *const *)rs->sums, rs->n, 78), f);
}

void cli_live_print_mocks(FILE *f, const sim_scenario *sc, const char *variant,
                          const cli_mock_log *log) {
    for (size_t k = 0; k < log->n; k++) {
        const cli_mock_note *n = &log->notes[k];
        fprintf(f, "fusebox live: variant %s: mock %s: %llu x %s%s\n", variant,
                sc->providers[n->provider].name, (unsigned long long)n->count,
                n->level == MOCK_LOG_ERROR ? "error: " : "", n->msg);
    }
    if (log->other > 0)
        fprintf(f, "fusebox live: variant %s: mocks: %llu more messages of other kinds\n", variant,
                (unsigned long long)log->other);
}
