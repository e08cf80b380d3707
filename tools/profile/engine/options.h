/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.h - the command lines of `buddyctl profile` and `buddyctl run`:
 * each command is a table of struct eng_option (tools/buddyctl/profile.c,
 * run.c), the options both take are defined once (eng_common_options[]),
 * and one parser reads them all.
 */
#ifndef BUDDY_ENGINE_OPTIONS_H
#define BUDDY_ENGINE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The options both commands take, first in both option structs. */
#define ENGINE_COMMON_MEMBERS						\
	uint64_t min_size;	/* tracked (buddy) from this size */	\
	unsigned int depth;	/* call-stack frames per label */	\
	bool unwind;							\
	uint32_t uid;		/* whose profiles */			\
	const char *out;	/* the report, NULL: stdout */		\
	const char *json_out;	/* "-": stdout */			\
	bool json;		/* the report as JSON */		\
	unsigned int show_labels; /* rows of the label table, 0: all */	\
	const char *lib;	/* the interposer, NULL: found */	\
	bool quiet;							\
	char **argv		/* the program */

struct engine_opts {
	ENGINE_COMMON_MEMBERS;
};

/* The common options' fields, reached directly (o->min_size) or whole. */
#define ENGINE_OPTS(name)						\
	union {								\
		struct { ENGINE_COMMON_MEMBERS; };			\
		struct engine_opts name;				\
	}

/*
 * struct eng_option - one option.
 * @name:	its long name, without "--".
 * @key:	its short letter, or a number from 256 up.
 * @arg:	whether it takes an argument: false, true, or
 *		ENG_ARG_OPTIONAL (--name alone, or --name=ARG: @set gets NULL
 *		without one).
 * @set:	stores it into the command's option struct @o (whose first
 *		member is ENGINE_OPTS()); 0, or -1 when @arg is not @valid.
 * @valid:	what a valid argument is, for the message.
 */
struct eng_option {
	const char *name;
	int key;
	unsigned char arg;
	int (*set)(void *o, const char *arg);
	const char *valid;
};

#define ENG_ARG_OPTIONAL	2

/*
 * struct eng_command - a command line.
 * @name:	"profile", "run": messages are "buddyctl: NAME: ...".
 * @options:	its own options (name NULL ends them); eng_common_options[]
 *		come after.
 * @usage:	prints --help's text.
 * @no_command:	the message when no COMMAND follows the options.
 * @command_optional: when not NULL and true for the options read, no
 *		COMMAND is fine.
 */
struct eng_command {
	const char *name;
	const struct eng_option *options;
	void (*usage)(FILE *f);
	const char *no_command;
	bool (*command_optional)(const void *o);
};

/* -m --depth --no-unwind -U -o -j --json-out --labels --lib -q */
extern const struct eng_option eng_common_options[];

/*
 * eng_json_on_stdout() - the JSON report goes to stdout (-j without -o,
 * or --json-out -): stdout then carries nothing else, the program's own
 * stdout goes to stderr (eng_exec()) and so does a text report without
 * -o.
 */
bool eng_json_on_stdout(const struct engine_opts *o);

/*
 * eng_parse() - @argv of @cmd into @o, whose defaults are set; the
 * program's argv goes to @o's argv.  Returns -1 to go on, else the exit
 * status: 0 after --help, 2 after a usage error (message printed:
 * "buddyctl: NAME: --OPTION: ARG is not VALID").
 */
int eng_parse(const struct eng_command *cmd, void *o, int argc, char **argv);

#endif /* BUDDY_ENGINE_OPTIONS_H */
