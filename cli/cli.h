/* cli.h - one function per fusebox subcommand; each returns the exit code. */
#ifndef FB_CLI_H
#define FB_CLI_H

/* Exit codes shared by every subcommand. */
#define CLI_OK 0
#define CLI_EXPECT_FAILED 1
#define CLI_BAD_INPUT 2
/* live: a run that could not be driven faithfully; verdict: a log that cannot be judged */
#define CLI_INCONCLUSIVE 3

int cli_cmd_run(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);
int cli_cmd_validate(int argc, char **argv);
int cli_cmd_compare(int argc, char **argv);
int cli_cmd_sweep(int argc, char **argv);
int cli_cmd_tune(int argc, char **argv);
int cli_cmd_merge(int argc, char **argv);
int cli_cmd_mock(int argc, char **argv);
int cli_cmd_live(int argc, char **argv);
int cli_cmd_presets(int argc, char **argv);
int cli_cmd_import_policy(int argc, char **argv);
int cli_cmd_export_policy(int argc, char **argv);
int cli_cmd_import(int argc, char **argv);
int cli_cmd_verdict(int argc, char **argv);

#endif
