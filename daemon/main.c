// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd - the Buddy Compression profiler as a daemon: main.c is its
 * command line, configuration, signals and loop; manager.c its work on
 * the device.
 *
 * The kernel measures, userspace decides (DAMON's split): on an interval
 * buddyd lists every live allocation of /dev/buddy (BUDDY_IOC_LIST, whose
 * size-code histograms the module keeps current on every write), keeps the
 * last Window snapshots per (uid, label), and decides a target compression
 * ratio per unit with the Buddy Threshold heuristic of the paper (section
 * III-B; tools/policy/heuristic.h).  Then, by Mode:
 *
 *   dry-run   log the decisions, change nothing;
 *   profiles  install them in the module's profile table (PROFILE_SET), so
 *             that later BUDDY_TARGET_AUTO allocations of that user and label
 *             get them, and keep them in the state file (the default);
 *   live      as profiles, and re-stripe the live allocations whose target
 *             differs (SET_TARGET); ENOSPC is logged and the allocation left
 *             as it was.
 *
 * A systemd new-style daemon: no forking, Type=notify (READY=1 once
 * /dev/buddy is open and the profiles are installed), SIGHUP reloads the
 * configuration and the state file (RELOADING=1, MONOTONIC_USEC=, then
 * READY=1), SIGTERM exits cleanly, every message goes to stderr with a
 * "<N>" priority prefix when it is the journal, else "buddyd: error: ".
 * --once takes one window of snapshots, decides,
 * acts, optionally prints the report, and exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "buddyd.h"
#include "log.h"
#include "notify.h"
#include "report.h"
#include "state.h"

#define EXIT_USAGE	2

static void usage(FILE *f)
{
	fprintf(f,
"usage: buddyd [OPTIONS]\n"
"\n"
"Profile the allocations of /dev/buddy and decide their target compression\n"
"ratios with the Buddy Threshold heuristic.\n"
"\n"
"  -c, --config=FILE       configuration (default " BD_CONF_PATH "),\n"
"                          then its drop-ins FILE.d/*.conf in name order\n"
"  -t, --threshold=PCT     Buddy Threshold (Threshold=, default 30%%)\n"
"  -z, --mostly-zero=PCT   zero share for 16x (MostlyZero=, default 90%%)\n"
"  -i, --interval=TIME     between snapshots (Interval=, default 10s;\n"
"                          100ms with --once); e.g. 50ms, 2s, 1min\n"
"  -w, --window=N          snapshots per decision (Window=, default 10)\n"
"  -a, --apply=MODE        dry-run, profiles (default) or live (Mode=)\n"
"  -n, --dry-run           decide and log only (--apply=dry-run)\n"
"      --codec=WHICH       profile (default): each label gets the codec its\n"
"                          profile names (buddyctl profile -p picks it),\n"
"                          re-encoded live with --apply=live; keep: every\n"
"                          allocation keeps its codec (Codec=)\n"
"      --state-file=PATH   profiles (StateFile=, default " BD_STATE_PATH ")\n"
"      --device=PATH       control device (Device=, default " BD_DEVICE_PATH ")\n"
"      --once              take one window of snapshots, decide, act, exit\n"
"      --report            with --once: print the report (decisions, Fig. 7\n"
"                          ablation, Fig. 10 threshold sweep, Fig. 9 series)\n"
"      --json              with --once: the report as one JSON object\n"
"                          (implies --report)\n"
"      --check-config      read the configuration, print the settings in\n"
"                          force and every problem (an unknown key is an\n"
"                          error here), and exit: 0 good, 1 problems; no\n"
"                          device needed\n"
"  -v, --verbose           debug messages too\n"
"  -h, --help              this text\n"
"  -V, --version           version\n"
"\n"
"Command-line options override the configuration files.  Signals: SIGHUP\n"
"reloads the configuration and the state file, SIGTERM exits (status 0; 1\n"
"for an unfinished --once).\n"
"Exit status: 0 success, 1 runtime or configuration error, 2 usage error.\n");
}

static int add_override(struct buddyd *b, const char *key, const char *value,
			const char *opt)
{
	struct bd_conf scratch;

	if (b->nov == MAX_OVERRIDES) {
		bd_err("%s: too many options", opt);
		return -E2BIG;
	}
	bd_conf_defaults(&scratch);
	if (bd_conf_set(&scratch, key, value, opt))
		return -EINVAL;
	b->ov[b->nov++] = (struct override){ key, value, opt };
	return 0;
}

static int parse_args(struct buddyd *b, int argc, char **argv)
{
	enum { OPT_STATE = 256, OPT_DEVICE, OPT_ONCE, OPT_REPORT, OPT_JSON,
	       OPT_CHECK, OPT_CODEC };
	static const struct option opts[] = {
		{ "config",	 required_argument, NULL, 'c' },
		{ "threshold",	 required_argument, NULL, 't' },
		{ "mostly-zero", required_argument, NULL, 'z' },
		{ "interval",	 required_argument, NULL, 'i' },
		{ "window",	 required_argument, NULL, 'w' },
		{ "apply",	 required_argument, NULL, 'a' },
		{ "dry-run",	 no_argument,	    NULL, 'n' },
		{ "codec",	 required_argument, NULL, OPT_CODEC },
		{ "state-file",	 required_argument, NULL, OPT_STATE },
		{ "device",	 required_argument, NULL, OPT_DEVICE },
		{ "once",	 no_argument,	    NULL, OPT_ONCE },
		{ "report",	 no_argument,	    NULL, OPT_REPORT },
		{ "json",	 no_argument,	    NULL, OPT_JSON },
		{ "check-config", no_argument,	    NULL, OPT_CHECK },
		{ "verbose",	 no_argument,	    NULL, 'v' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ "version",	 no_argument,	    NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int o, err = 0;

	b->config_path = BD_CONF_PATH;
	while ((o = getopt_long(argc, argv, "c:t:z:i:w:a:nvhV", opts,
				NULL)) != -1) {
		switch (o) {
		case 'c':
			b->config_path = optarg;
			b->config_given = true;
			break;
		case 't':
			err = add_override(b, "Threshold", optarg, "--threshold");
			break;
		case 'z':
			err = add_override(b, "MostlyZero", optarg,
					   "--mostly-zero");
			break;
		case 'i':
			err = add_override(b, "Interval", optarg, "--interval");
			b->interval_given = true;
			break;
		case 'w':
			err = add_override(b, "Window", optarg, "--window");
			break;
		case 'a':
			/* Mode='s words: one spelling in file and command line */
			err = add_override(b, "Mode", optarg, "--apply");
			break;
		case 'n':
			err = add_override(b, "Mode", "dry-run", "--dry-run");
			break;
		case OPT_CODEC:
			err = add_override(b, "Codec", optarg, "--codec");
			break;
		case OPT_STATE:
			err = add_override(b, "StateFile", optarg,
					   "--state-file");
			break;
		case OPT_DEVICE:
			err = add_override(b, "Device", optarg, "--device");
			break;
		case OPT_ONCE:
			b->once = true;
			break;
		case OPT_REPORT:
			b->report = true;
			break;
		case OPT_JSON:
			b->json = true;
			break;
		case OPT_CHECK:
			b->check = true;
			break;
		case 'v':
			bd_log_max = LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("buddyd %s (ABI %d)\n", BUDDYD_VERSION,
			       BUDDY_ABI_VERSION);
			exit(0);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
		if (err)
			return EXIT_USAGE;
	}
	if (optind < argc) {
		bd_err("unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (b->check && (b->once || b->report || b->json)) {
		bd_err("--check-config runs nothing: not with --once, --report or --json");
		return EXIT_USAGE;
	}
	/* the report as JSON: --json says which report it wants */
	if (b->json)
		b->report = true;
	if (b->report && !b->once) {
		bd_err("%s needs --once", b->json ? "--json" : "--report");
		return EXIT_USAGE;
	}
	return 0;
}

/* Defaults, the file and its drop-ins, then the command line. */
static int load_conf(struct buddyd *b, struct bd_conf *c)
{
	int err;

	bd_conf_defaults(c);
	err = bd_conf_load(c, b->config_path, b->config_given);
	for (int i = 0; i < b->nov; i++)
		bd_conf_set(c, b->ov[i].key, b->ov[i].value, b->ov[i].opt);
	return err;
}

static void set_interval(struct buddyd *b)
{
	b->interval_us = b->once && !b->interval_given ? BD_ONCE_INTERVAL_US :
			 b->conf.interval_us;
}

/* ---- reload and the main loop ---------------------------------------- */

static void log_config(struct buddyd *b, const char *what)
{
	char thr[16], mz[16], iv[32];

	bd_info("%s: threshold %s, mostly-zero %s, interval %s, window %u, mode %s, state %s, device %s",
		what, bd_format_percent(b->conf.threshold_ppm, thr, sizeof(thr)),
		bd_format_percent(b->conf.zero_ppm, mz, sizeof(mz)),
		bd_format_timespan(b->interval_us, iv, sizeof(iv)),
		b->conf.window, bd_mode_name(b->conf.mode),
		b->conf.state_file, b->conf.device);
}

/* Can StateFile be written?  Not in dry-run, which never writes it. */
static int check_state_file(const struct bd_conf *c)
{
	int r;

	if (c->mode == BD_MODE_DRY_RUN)
		return 0;
	r = bd_state_check(c->state_file);
	if (r)
		bd_err("StateFile=%s: cannot be written: %s (run with --dry-run, or give --state-file=PATH)",
		       c->state_file, strerror(-r));
	return r;
}

static void reload(struct buddyd *b)
{
	struct bd_conf c;

	bd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=Reloading",
		   (unsigned long long)bd_now_usec());
	bd_info("SIGHUP: reloading %s and its drop-ins", b->config_path);
	if (load_conf(b, &c)) {
		bd_err("reload: the configuration has errors; keeping the one in force");
	} else if (check_state_file(&c)) {
		bd_err("reload: keeping the configuration in force");
	} else {
		if (strcmp(c.device, b->conf.device)) {
			struct buddy_info info;
			int fd;

			if (manager_open_device(b, c.device, &fd, &info)) {
				bd_err("reload: keeping %s", b->conf.device);
				strcpy(c.device, b->conf.device);
			} else {
				close(b->devfd);
				b->devfd = fd;
				b->info = info;
				bd_window_free(&b->win);
				b->win.w = 0;
			}
		}
		if (c.window != b->conf.window || !b->win.w) {
			bd_window_free(&b->win);
			if (bd_window_init(&b->win, c.window))
				bd_err("out of memory");
			bd_info("window of %u snapshots: starting over", c.window);
		}
		b->conf = c;
		set_interval(b);
	}
	manager_load_profiles(b);
	log_config(b, "reloaded");
	bd_notify("READY=1\nSTATUS=Profiling");
}

/*
 * Wait until @deadline (CLOCK_MONOTONIC us), serving signals.
 * Return: 0 at the deadline, the signal number of SIGTERM or SIGINT.
 */
static int wait_until(struct buddyd *b, uint64_t deadline)
{
	for (;;) {
		uint64_t now = bd_now_usec(), left;
		struct pollfd pfd = { .fd = b->sigfd, .events = POLLIN };
		struct signalfd_siginfo si;
		struct timespec ts;
		int r;

		if (now >= deadline)
			return 0;
		left = deadline - now;
		ts.tv_sec = left / 1000000;
		ts.tv_nsec = left % 1000000 * 1000;
		r = ppoll(&pfd, 1, &ts, NULL);
		if (r < 0 && errno != EINTR) {
			bd_err("ppoll: %s", strerror(errno));
			return SIGTERM;
		}
		if (r <= 0)
			continue;
		if (read(b->sigfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP)
			reload(b);
		else
			return si.ssi_signo;
	}
}

static int setup_signals(struct buddyd *b)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	b->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return b->sigfd < 0 ? -errno : 0;
}

static int run(struct buddyd *b)
{
	uint64_t next = bd_now_usec();
	struct bd_decision d = { 0 };
	int sig, ret = 0;

	for (;;) {
		int r = manager_snapshot(b);

		if (r && b->once) {
			bd_err("--once: a snapshot failed: %s", strerror(-r));
			return 1;
		}
		if (!r && b->win.seq >= b->win.w) {
			if (b->once)
				break;
			manager_decide(b, &d);
			bd_decision_free(&d);
		}
		next += b->interval_us;
		if (next < bd_now_usec())
			next = bd_now_usec();
		sig = wait_until(b, next);
		if (sig) {
			bd_notify("STOPPING=1");
			if (b->once) {
				bd_warn("%s: exiting before the window was complete; nothing decided",
					strsignal(sig));
				return 1;
			}
			bd_info("%s: exiting", strsignal(sig));
			return 0;
		}
	}
	/* --once: one window was taken */
	if (manager_decide(b, &d))
		ret = 1;
	if (b->report && !ret) {
		struct bd_report rep = {
			.conf = &b->conf, .info = &b->info, .win = &b->win,
			.d = &d, .interval_us = b->interval_us,
		};

		if (b->json ? bd_report_json(stdout, &rep) :
			      bd_report_text(stdout, &rep))
			ret = 1;
		fflush(stdout);
	}
	bd_decision_free(&d);
	return ret;
}

/*
 * --check-config: the files, the drop-ins and the command line, strictly
 * (an unknown key is an error); the settings in force on stdout, every
 * problem on stderr.  No device.
 */
static int check_config(struct buddyd *b)
{
	int err;

	bd_log_words = true;
	bd_conf_strict = true;
	err = load_conf(b, &b->conf);
	if (check_state_file(&b->conf))
		err = err ?: -EINVAL;
	printf("# buddyd %s: %s, then %s.d/*.conf, then the command line\n",
	       BUDDYD_VERSION, b->config_path, b->config_path);
	bd_conf_print(stdout, &b->conf);
	if (fflush(stdout) || ferror(stdout))
		return 1;
	if (err) {
		bd_err("%s: the configuration has problems (above)",
		       b->config_path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct buddyd b = { .devfd = -1, .sigfd = -1 };
	int ret;

	bd_log_words = !bd_log_stderr_is_journal();
	ret = parse_args(&b, argc, argv);
	if (ret)
		return ret;
	if (b.check)
		return check_config(&b);
	if (load_conf(&b, &b.conf))
		return 1;
	/* now, not at the first decision minutes later */
	if (check_state_file(&b.conf))
		return 1;
	set_interval(&b);
	if (setup_signals(&b)) {
		bd_err("signals: %s", strerror(errno));
		return 1;
	}
	if (manager_open_device(&b, b.conf.device, &b.devfd, &b.info))
		return 1;
	log_config(&b, b.once ? "version " BUDDYD_VERSION " (once)" :
		       "version " BUDDYD_VERSION);
	bd_info("%s: ABI %u, device pool %.2f MiB, carve-out %.2f MiB, %u allocations",
		b.conf.device, b.info.abi_version, b.info.device_bytes / MIB,
		b.info.buddy_bytes / MIB, b.info.nr_allocs);
	if (manager_load_profiles(&b))
		return 1;
	if (bd_window_init(&b.win, b.conf.window)) {
		bd_err("out of memory");
		return 1;
	}
	if (!b.once)
		bd_notify("READY=1\nSTATUS=Profiling");
	ret = run(&b);
	bd_window_free(&b.win);
	buddy_profile_free(&b.profiles);
	free(b.st);
	free(b.failed);
	close(b.devfd);
	close(b.sigfd);
	return ret;
}
