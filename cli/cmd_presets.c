/* cmd_presets.c - 'fusebox presets': the library presets, their parameters and rules. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "scenario/preset.h"

static void usage(FILE *f) {
    cli_help_puts("usage: fusebox presets [NAME] [--markdown]\n"
                  "\n"
                  "List the library presets a scenario layer can name (\"preset\": NAME), with\n"
                  "the library version each follows and how it was verified (recorded from the\n"
                  "library's own code and replayed by the tests, or rules read from its\n"
                  "source); with NAME, print its parameters (the library's own names, units\n"
                  "and defaults), its rules and what it does not model. --markdown prints\n"
                  "every preset as docs/presets.md has it.\n"
                  "\n"
                  "Exit codes: 0 ok, 2 unknown preset or usage.\n",
                  f);
}

static const char *unit_of(const sim_param *pa) {
    switch (pa->notation) {
    case SIM_PK_COUNT:
        return "integer";
    case SIM_PK_NUMBER:
        return "number";
    case SIM_PK_PERCENT:
        return "percent";
    case SIM_PK_FRACTION:
        return "fraction";
    case SIM_PK_SECONDS:
        return "seconds";
    case SIM_PK_MILLIS:
        return "milliseconds";
    case SIM_PK_DURATION:
        return "duration";
    case SIM_PK_BOOL:
        return "boolean";
    case SIM_PK_WORD:
        return "one of";
    case SIM_PK_STATUSES:
        return "HTTP statuses";
    case SIM_PK_WORDS:
        return "names";
    case SIM_PK_JSON:
        return "JSON";
    case SIM_PK_TIMESPAN:
        return "TimeSpan";
    case SIM_PK_GO_DURATION:
        return "Go duration";
    case SIM_PK_OBJECT:
        return "object";
    case SIM_PK_CSV:
        return "comma-separated";
    case SIM_PK_PROTO_DURATION:
        return "Duration";
    case SIM_PK_PROTO_PERCENT:
        return "Percent";
    }
    return "";
}

static void choices(FILE *f, const sim_param *pa) {
    for (int i = 0; pa->names && pa->names[i]; i++)
        fprintf(f, "%s%s", i ? ", " : ": ", pa->names[i]);
}

/* The parameters of one side (breaker or retry) that the report names, each once; how many. */
static int vocab_names(FILE *f, const sim_vocab *v, bool breaker, const char *q) {
    int n = 0;
    for (const sim_vocab_param *vp = v->params; vp->name; vp++) {
        if ((vp->field >= SIM_VF_FIRST_RETRY) == breaker) continue;
        bool again = false;
        for (const sim_vocab_param *e = v->params; e != vp && !again; e++)
            again = strcmp(e->name, vp->name) == 0;
        if (f && !again) fprintf(f, "%s%s%s%s", n ? ", " : "", q, vp->name, q);
        n += !again;
    }
    return n;
}

/* What report.html, report.json and events.jsonl say of a layer of this preset (sim_vocab). */
static void print_vocab(FILE *f, const sim_preset *p, bool md) {
    const sim_vocab *v = p->vocab;
    const char *q = md ? "`" : "";
    if (v == NULL) {
        fputs(md ? "In the report: fusebox's own words (the preset has no vocabulary).\n\n"
                 : "\nin the report: fusebox's own words (no vocabulary)\n",
              f);
        return;
    }
    fputs(md ? "In the report (settings in effect; events.jsonl's `library` fields): "
             : "\nin the report (settings in effect; events.jsonl's library fields):\n",
          f);
    if (v->breaker) {
        fprintf(f, md ? "the breaker is \"%s\", states " : "  breaker: %s; states ", v->breaker);
        for (int s = 0; s < 3; s++)
            fprintf(f, "%s%s%s%s", s ? ", " : "", v->states[s] ? q : "",
                    v->states[s] ? v->states[s] : "(none)", v->states[s] ? q : "");
        fputs(md ? "; its settings: " : "\n  its settings: ", f);
        vocab_names(f, v, true, q);
    }
    if (vocab_names(NULL, v, false, q) > 0) {
        const char *lead = v->breaker ? (md ? "; the retry is" : "\n  retry:")
                                      : (md ? "the retry is" : "  retry:");
        fprintf(f, md ? "%s \"%s\": " : "%s %s: ", lead, v->retry ? v->retry : v->breaker);
        vocab_names(f, v, false, q);
    }
    fputs(md ? ".\n\n" : "\n", f);
}

static void print_text(FILE *f, const sim_preset *p) {
    fprintf(f,
            "%s: %s, %s\n%s\nsource: %s\nverified: %s\n\nparameters (the library's names and "
            "units):\n",
            p->name, p->library, p->version, p->summary, p->source, p->verified);
    for (const sim_param *pa = p->params; pa->name; pa++) {
        fprintf(f, "  %-36s %s", pa->name, unit_of(pa));
        choices(f, pa);
        fprintf(f, ", default %s: %s\n", pa->def_doc, pa->doc);
    }
    fputs("\nrules:\n", f);
    for (const char *const *r = p->rules; *r; r++) fprintf(f, "  - %s\n", *r);
    fputs("\nnot modelled:\n", f);
    for (const char *const *r = p->not_modelled; *r; r++) fprintf(f, "  - %s\n", *r);
    print_vocab(f, p, false);
}

static void print_markdown(FILE *f, const sim_preset *p) {
    fprintf(f, "## %s\n\n%s: %s, %s. Source: %s.\n\nVerified: %s.\n\n", p->name, p->summary,
            p->library, p->version, p->source, p->verified);
    fputs("| parameter | unit | default | meaning |\n|---|---|---|---|\n", f);
    for (const sim_param *pa = p->params; pa->name; pa++) {
        fprintf(f, "| `%s` | %s", pa->name, unit_of(pa));
        choices(f, pa);
        fprintf(f, " | %s | %s |\n", pa->def_doc, pa->doc);
    }
    fputc('\n', f);
    print_vocab(f, p, true);
    fputs("Rules:\n\n", f);
    for (const char *const *r = p->rules; *r; r++) fprintf(f, "- %s\n", *r);
    fputs("\nNot modelled:\n\n", f);
    for (const char *const *r = p->not_modelled; *r; r++) fprintf(f, "- %s\n", *r);
    fputc('\n', f);
}

int cli_cmd_presets(int argc, char **argv) {
    const char *name = NULL;
    bool markdown = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return CLI_OK;
        } else if (strcmp(argv[i], "--markdown") == 0) {
            markdown = true;
        } else if (argv[i][0] == '-' || name != NULL) {
            fprintf(stderr, "fusebox presets: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return CLI_BAD_INPUT;
        } else {
            name = argv[i];
        }
    }
    const sim_preset *const *all = scn_presets();
    if (name) {
        const sim_preset *p = scn_preset_find(name);
        if (p == NULL) {
            fprintf(stderr, "fusebox presets: no preset named '%s' (fusebox presets lists them)\n",
                    name);
            return CLI_BAD_INPUT;
        }
        markdown ? print_markdown(stdout, p) : print_text(stdout, p);
        return CLI_OK;
    }
    int wn = 18, wl = 26; /* columns as wide as the longest entry */
    for (size_t i = 0; all[i]; i++) {
        if ((int)strlen(all[i]->name) > wn) wn = (int)strlen(all[i]->name);
        if ((int)strlen(all[i]->library) > wl) wl = (int)strlen(all[i]->library);
    }
    for (size_t i = 0; all[i]; i++) {
        if (markdown)
            print_markdown(stdout, all[i]);
        else
            printf("%-*s %-*s %s\n%*s verified: %s\n", wn, all[i]->name, wl, all[i]->library,
                   all[i]->version, wn, "", all[i]->verified);
    }
    return CLI_OK;
}
