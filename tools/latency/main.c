// SPDX-License-Identifier: MIT
/*
 * plugvm-latency: cyclictest in a plugvm guest, as one command. Spawns plugvm with the
 * guest's `latency` words, talks QMP (tools/lib/conn.h), prints a progress line a
 * second, optionally removes and re-adds vCPUs at a rate (device_del / device_add, the path
 * every client uses), then reports in cyclictest's formats, JSON and a gnuplot PNG.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "latency.h"
#include "tools/lib/conn.h"
#include "tools/lib/json_get.h"
#include "tools/lib/print.h"
#include "vmm/version.h"

static const char usage[] =
    "usage: plugvm-latency [options]\n"
    "\n"
    "  --smp N[,maxcpus=M]   the VM's CPUs, as plugvm's --smp (default 2; with --domain,\n"
    "                        the document's)\n"
    "  --domain FILE.xml     run the VM from a libvirt domain document (plugvm --domain:\n"
    "                        <cputune> pinning and FIFO vCPUs, locked memory); its\n"
    "                        <cmdline> gives way to the measurement's words\n"
    "  --duration S          seconds of measurement (default 10; 1..86400)\n"
    "  --interval US         the period (default 1000; 100..1000000)\n"
    "  --priority P          the measurement threads' priority (default 99, the highest)\n"
    "  --cpus LIST           measured CPUs, e.g. 0,2-3 (default: those online at boot)\n"
    "  --stress LIST         load in the guest below the measurement: hogs,timers,ipi,locks\n"
    "  --churn MS            remove and re-add the measured vCPUs (but 0), one every MS ms\n"
    "  --chaos[=SPEC]        plugvm's --chaos (a loaded host)\n"
    "  --kernel FILE | --rt  the guest (default: plugvm's; --rt: rt/guest.elf beside plugvm,\n"
    "                        or the installed ../lib/plugvm/guest-rt.elf)\n"
    "  --histogram FILE      cyclictest's -h layout\n"
    "  --histogram-max US    1 us buckets up to US (default 10000, at most 10000)\n"
    "  --threshold US        outliers: samples above US are attributed (default: the max)\n"
    "  --json FILE           a JSON summary\n"
    "  --plot FILE.png       counts per latency, log scale, one line per CPU (gnuplot)\n"
    "  --compare FILE.json   draw an earlier run's summary in the same plot\n"
    "  --compare-host        run rt-tests' cyclictest on the host alongside\n"
    "  --plugvm PATH         the VMM (default: plugvm beside this program)\n"
    "  --console FILE        keep the guest's console and plugvm's stderr there\n"
    "  -h, --help, -V, --version\n";

static pid_t vm_pid = -1;
static volatile sig_atomic_t interrupted; /* SIGINT, SIGTERM: end the run early, report */
static char tmpdir[64];
static struct lat_opts opts = {
	.smp = "2", .duration_s = 10, .interval_us = 1000, .priority = 99, .hist_max_us = 10000
};

static void cleanup(void)
{
	char path[128];
	int st;

	if (vm_pid > 0) {
		kill(vm_pid, SIGTERM);
		waitpid(vm_pid, &st, 0);
		vm_pid = -1;
	}
	if (tmpdir[0]) {
		static const char *const files[] = { "qmp",	      "console.log", "host.txt",
						     "host-hist.txt", "plot.dat",    "plot.gp" };
		size_t i;

		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
			unlink(path);
		}
		rmdir(tmpdir);
		tmpdir[0] = '\0';
	}
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* For die() (tools/lib/print.h): every failure ends here, and cleanup() ends the VM. */
const char prog_name[] = "plugvm-latency";

static long num(const char *s, const char *what, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		die(LAT_EXIT_USAGE, "%s: '%s' is not a number from %ld to %ld", what, s, lo, hi);
	return v;
}

/* A word of the guest's command line may not hold spaces or quotes. */
static const char *word(const char *s, const char *what, const char *allowed)
{
	if (!*s || strspn(s, allowed) != strlen(s))
		die(LAT_EXIT_USAGE, "%s: '%s' may hold only [%s]", what, s, allowed);
	return s;
}

/* The options: each sets one field of `opts`, a number in [lo, hi], a string or a flag. */
static const struct lat_option {
	const char *name;
	int has_arg; /* getopt_long's */
	long *num;
	long lo, hi;
	const char **str;
	bool *flag;
} options[] = {
	{ "smp", required_argument, .str = &opts.smp },
	{ "duration", required_argument, &opts.duration_s, 1, 86400 },
	{ "interval", required_argument, &opts.interval_us, 100, 1000000 },
	{ "priority", required_argument, &opts.priority, 1, 99 },
	{ "cpus", required_argument, .str = &opts.cpus },
	{ "stress", required_argument, .str = &opts.stress },
	{ "churn", required_argument, &opts.churn_ms, 1, 3600000 },
	{ "chaos", optional_argument, .str = &opts.chaos },
	{ "kernel", required_argument, .str = &opts.kernel },
	{ "domain", required_argument, .str = &opts.domain },
	{ "rt", no_argument, .flag = &opts.rt },
	{ "histogram", required_argument, .str = &opts.hist_file },
	{ "histogram-max", required_argument, &opts.hist_max_us, 1, 10000 },
	{ "threshold", required_argument, &opts.threshold_us, 1, 10000000 },
	{ "json", required_argument, .str = &opts.json_file },
	{ "plot", required_argument, .str = &opts.plot_file },
	{ "compare", required_argument, .str = &opts.compare_file },
	{ "compare-host", no_argument, .flag = &opts.compare_host },
	{ "plugvm", required_argument, .str = &opts.plugvm },
	{ "console", required_argument, .str = &opts.console },
};
#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

static void parse_args(int argc, char **argv, struct lat_opts *o)
{
	struct option longopts[NR_OPTIONS + 3] = { 0 };
	size_t i;
	int opt, idx;

	for (i = 0; i < NR_OPTIONS; i++)
		longopts[i] = (struct option){ options[i].name, options[i].has_arg, NULL, 256 };
	longopts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[i] = (struct option){ "version", no_argument, NULL, 'V' };
	while ((opt = getopt_long(argc, argv, "hV", longopts, &idx)) != -1) {
		const struct lat_option *e = &options[idx];
		char what[32];

		if (opt == 'h') {
			fputs(usage, stdout);
			exit(0);
		} else if (opt == 'V') {
			printf("plugvm-latency %s\n", PLUGVM_VERSION);
			exit(0);
		} else if (opt != 256) {
			fputs(usage, stderr);
			exit(LAT_EXIT_USAGE);
		}
		snprintf(what, sizeof(what), "--%s", e->name);
		if (e->num)
			*e->num = num(optarg, what, e->lo, e->hi);
		else if (e->str)
			*e->str = optarg ? optarg : ""; /* --chaos alone: plugvm's defaults */
		else
			*e->flag = true;
		if (e->str == &o->smp)
			o->smp_given = true;
	}
	word(o->smp, "--smp", "0123456789,=abcdefghijklmnopqrstuvwxyz");
	if (o->cpus)
		word(o->cpus, "--cpus", "0123456789,-");
	if (optind < argc)
		die(LAT_EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[optind]);
	if (o->rt && o->kernel)
		die(LAT_EXIT_USAGE, "--rt and --kernel: give one (--rt picks rt/guest.elf)");
	if (o->domain && access(o->domain, R_OK))
		die(LAT_EXIT_USAGE, "--domain: %s: %s", o->domain, strerror(errno));
	if (o->stress) {
		char *copy = strdup(o->stress), *save = NULL, *t;

		if (!copy)
			die(LAT_EXIT_FAIL, "out of memory");
		for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (strcmp(t, "hogs") && strcmp(t, "timers") && strcmp(t, "ipi") &&
			    strcmp(t, "locks"))
				die(LAT_EXIT_USAGE,
				    "--stress: '%s' is not one of hogs, timers, ipi, locks", t);
		free(copy);
		word(o->stress, "--stress", "abcdefghijklmnopqrstuvwxyz,");
	}
	if (!o->threshold_us)
		o->threshold_us = o->hist_max_us;
	if (o->plot_file &&
	    (strlen(o->plot_file) < 5 || strcmp(o->plot_file + strlen(o->plot_file) - 4, ".png")))
		die(LAT_EXIT_USAGE, "--plot: '%s' must end in .png", o->plot_file);
	if (o->compare_file && !o->plot_file)
		die(LAT_EXIT_USAGE, "--compare needs --plot FILE.png (it draws both runs)");
}

/* plugvm's path: --plugvm, else beside this program. */
static void default_paths(struct lat_opts *o, const char *argv0, char *vmm, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (o->plugvm)
		return;
	if (n <= 0)
		die(LAT_EXIT_FAIL, "cannot find my own path (%s); give --plugvm", argv0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	if ((size_t)(slash - self) + sizeof("/plugvm") > len)
		die(LAT_EXIT_FAIL, "%s: path too long; give --plugvm", self);
	memcpy(slash, "/plugvm", sizeof("/plugvm"));
	memcpy(vmm, self, strlen(self) + 1);
	o->plugvm = vmm;
}

/* Where the guest's console goes: --console, else a file in the run's directory. */
static const char *console_path(const struct lat_opts *o)
{
	static char tmp[96];

	if (o->console)
		return o->console;
	snprintf(tmp, sizeof(tmp), "%s/console.log", tmpdir);
	return tmp;
}

static void spawn_vm(const struct lat_opts *o, const char *cmdline)
{
	char qmp[96], log[PATH_MAX], kernel[PATH_MAX], *argv[16];
	int n = 0, fd;

	snprintf(qmp, sizeof(qmp), "unix:%s/qmp", tmpdir);
	snprintf(log, sizeof(log), "%s", console_path(o));
	argv[n++] = (char *)o->plugvm;
	if (o->domain) {
		argv[n++] = "--domain";
		argv[n++] = (char *)o->domain;
	}
	if (!o->domain || o->smp_given) {
		argv[n++] = "--smp";
		argv[n++] = (char *)o->smp;
	}
	argv[n++] = "--qmp";
	argv[n++] = qmp;
	argv[n++] = "--append";
	argv[n++] = (char *)cmdline;
	if (o->kernel || o->rt) {
		if (o->kernel) {
			snprintf(kernel, sizeof(kernel), "%s", o->kernel);
		} else {
			const char *slash = strrchr(o->plugvm, '/');
			int dir = slash ? (int)(slash - o->plugvm + 1) : 0;

			/* rt/guest.elf beside plugvm (build/), else the installed guest-rt.elf. */
			snprintf(kernel, sizeof(kernel), "%.*srt/guest.elf", dir, o->plugvm);
			if (access(kernel, R_OK)) {
				char installed[PATH_MAX];

				snprintf(installed, sizeof(installed),
					 "%.*s../lib/plugvm/guest-rt.elf", dir, o->plugvm);
				if (!access(installed, R_OK))
					memcpy(kernel, installed, sizeof(kernel));
			}
		}
		if (access(kernel, R_OK))
			die(LAT_EXIT_USAGE, "%s: %s", kernel, strerror(errno));
		argv[n++] = "--kernel";
		argv[n++] = kernel;
	}
	if (o->chaos) {
		static char chaos[256];

		snprintf(chaos, sizeof(chaos), "--chaos%s%s", *o->chaos ? "=" : "", o->chaos);
		argv[n++] = chaos;
	}
	argv[n] = NULL;
	if (access(o->plugvm, X_OK))
		die(LAT_EXIT_USAGE, "%s: %s (give --plugvm)", o->plugvm, strerror(errno));
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(LAT_EXIT_FAIL, "%s: %s", log, strerror(errno));
	pid_t parent = getpid();

	vm_pid = fork();
	if (vm_pid < 0)
		die(LAT_EXIT_FAIL, "fork: %s", strerror(errno));
	if (vm_pid == 0) {
		setpgid(0, 0); /* a terminal's ^C is ours: we end the VM with quit */
		/*
		 * The VM never outlives this tool, however it ends (SIGKILL included): its
		 * death sends the VM SIGTERM (test_latency.py::test_vm_ends_with_a_killed_tool).
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(127);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(o->plugvm, argv);
		_exit(127);
	}
	close(fd);
}

/* The last lines of the guest's console (and plugvm's stderr), for a failure report. */
static void console_tail(void)
{
	const char *log = console_path(&opts);
	char line[512];
	long lines = 0;
	FILE *f = fopen(log, "r");

	if (!f)
		return;
	fprintf(stderr, "plugvm-latency: the last lines of %s:\n", log);
	while (fgets(line, sizeof(line), f))
		lines++;
	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (lines-- <= 15)
			/* The guest ends its lines in CR LF (a serial terminal's): print them bare. */
			fprintf(stderr, "  %.*s\n", (int)strcspn(line, "\r\n"), line);
	fclose(f);
}

/* The VM ended early: say how, with the end of its console. Never returns. */
static void vm_died(int st)
{
	vm_pid = -1;
	fprintf(stderr, "plugvm-latency: plugvm ended early (%s %d)\n",
		WIFEXITED(st) ? "exit status" : "signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	console_tail();
	die(LAT_EXIT_FAIL, "the run failed");
}

static void check_vm(void)
{
	int st;

	if (vm_pid > 0 && waitpid(vm_pid, &st, WNOHANG) == vm_pid)
		vm_died(st);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Connect once plugvm listens (it creates the socket before any vCPU runs). */
static void connect_vm(struct conn *c)
{
	char path[96];
	int64_t deadline = now_ms() + 60000;

	snprintf(path, sizeof(path), "%s/qmp", tmpdir);
	while (!conn_listening(path)) {
		check_vm();
		if (now_ms() > deadline)
			die(LAT_EXIT_FAIL, "plugvm did not open its QMP socket within 60 s");
		sleep_ms(20);
	}
	conn_open(c, path);
}

/*
 * The guest keeps only its last PLUGVM_LATENCY_OUTLIERS outliers: collect those of every
 * reply, once each (keyed by CPU and intended wake-up), so the report ranks all it saw.
 */
static void collect_outliers(struct json_object *q, struct json_object *seen,
			     struct json_object *all)
{
	struct json_object *outs = json_object_object_get(q, "outliers");
	size_t i;

	for (i = 0; i < json_object_array_length(outs); i++) {
		struct json_object *e = json_object_array_get_idx(outs, i);
		char key[48];

		snprintf(key, sizeof(key), "%lld:%lld", (long long)get_i64(e, "cpu"),
			 (long long)get_i64(e, "when-ns"));
		if (json_object_object_get_ex(seen, key, NULL))
			continue;
		json_object_object_add(seen, key, NULL);
		json_object_array_add(all, json_object_get(e));
	}
}

/* The running max over every CPU, for the progress line. */
static void progress(struct json_object *q, long s, long total, long cycles)
{
	struct json_object *cpus, *e;
	long long n = 0, max = 0;
	int max_cpu = -1;
	size_t i;

	json_object_object_get_ex(q, "cpus", &cpus);
	for (i = 0; i < json_object_array_length(cpus); i++) {
		e = json_object_array_get_idx(cpus, i);
		n += get_i64(e, "count");
		if (get_i64(e, "max-ns") > max) {
			max = get_i64(e, "max-ns");
			max_cpu = (int)get_i64(e, "cpu");
		}
	}
	fprintf(stderr, "plugvm-latency: %3ld/%ld s: %lld samples, max %lld us (CPU %d)", s, total,
		n, max / 1000, max_cpu);
	if (cycles >= 0)
		fprintf(stderr, ", %ld hotplug cycles", cycles);
	fputc('\n', stderr);
}

/* Wait until the guest registered its area and started every thread (and its stress). */
static struct json_object *wait_active(struct conn *c)
{
	int64_t deadline = now_ms() + 120000;

	for (;;) {
		struct json_object *q = conn_cmd(c, "query-latency", NULL), *cpus;

		if (get_bool(q, "active") && get_bool(q, "started") &&
		    json_object_object_get_ex(q, "cpus", &cpus) &&
		    json_object_array_length(cpus) > 0)
			return q;
		json_object_put(q);
		check_vm();
		if (now_ms() > deadline) {
			console_tail();
			die(LAT_EXIT_FAIL, "the guest did not start measuring within 120 s");
		}
		sleep_ms(100);
	}
}

/* The host threads of the vCPUs, by slot (query-cpus-fast). */
static unsigned vcpu_tids(struct conn *c, int *tids, unsigned max)
{
	struct json_object *r = conn_cmd(c, "query-cpus-fast", NULL);
	unsigned n = 0;
	size_t i;

	memset(tids, 0, sizeof(*tids) * max);
	for (i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i);
		int idx = get_int(e, "cpu-index", NULL);

		if (idx >= 0 && (unsigned)idx < max) {
			tids[idx] = get_int(e, "thread-id", NULL);
			n = (unsigned)idx + 1 > n ? (unsigned)idx + 1 : n;
		}
	}
	json_object_put(r);
	return n;
}

static void end_vm(struct conn *c)
{
	int64_t deadline = now_ms() + 30000;
	int st;

	json_object_put(conn_cmd(c, "quit", NULL));
	conn_close(c);
	while (waitpid(vm_pid, &st, WNOHANG) != vm_pid) {
		if (now_ms() > deadline)
			die(LAT_EXIT_FAIL, "plugvm did not end within 30 s of quit");
		sleep_ms(20);
	}
	vm_pid = -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		vm_died(st);
}

static void write_json(const char *path, struct json_object *o)
{
	if (json_object_to_file_ext(path, o,
				    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE))
		die(LAT_EXIT_FAIL, "%s: cannot write: %s", path, strerror(errno));
}

/* Say which CPUs' final figures are an earlier read's (plugvm could not copy them whole). */
static void warn_stale(struct json_object *q)
{
	struct json_object *cpus = json_object_object_get(q, "cpus");
	size_t i;

	for (i = 0; i < json_object_array_length(cpus); i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);

		if (json_object_get_boolean(json_object_object_get(e, "stale")))
			fprintf(stderr,
				"plugvm-latency: CPU %d: the guest kept rewriting its record while "
				"plugvm copied it: its figures are from an earlier read\n",
				get_int(e, "cpu", NULL));
	}
}

/* The guest's command-line words for the measurement `o` asks for. */
static void guest_words(const struct lat_opts *o, char *cmdline, size_t len)
{
	snprintf(cmdline, len,
		 "latency latency.interval_us=%ld latency.prio=%ld latency.hist_us=%ld "
		 "latency.threshold_us=%ld%s%s%s%s",
		 o->interval_us, o->priority, o->hist_max_us, o->threshold_us,
		 o->cpus ? " latency.cpus=" : "", o->cpus ? o->cpus : "",
		 o->stress ? " latency.stress=" : "", o->stress ? o->stress : "");
}

/* --compare's earlier summary, NULL without --compare; dies if it is not one. */
static struct json_object *load_compare(const struct lat_opts *o)
{
	struct json_object *other;

	if (!o->compare_file)
		return NULL;
	other = json_object_from_file(o->compare_file);
	if (!other || !json_object_object_get_ex(other, "cpus", NULL))
		die(LAT_EXIT_USAGE, "--compare: %s is not a plugvm-latency JSON summary",
		    o->compare_file);
	return other;
}

/*
 * The measurement: a progress line a second (outliers collected from each), and with
 * --churn a hotplug cycle every o->churn_ms, until o->duration_s pass or a signal. A cycle
 * in flight at the end is finished, so that every removal counted is answered. On a
 * signal, o->duration_s becomes the seconds measured.
 */
static void measure(struct conn *c, struct lat_opts *o, struct churn *ch, struct json_object *seen,
		    struct json_object *all)
{
	int64_t t0 = now_ms(), next_progress = t0 + 1000, next_churn = t0 + o->churn_ms;
	struct json_object *q;
	long s = 0;

	while (now_ms() < t0 + o->duration_s * 1000 && !interrupted) {
		int64_t now = now_ms(), wake = next_progress;

		check_vm();
		/* Progress first: a hotplug cycle may take longer than --churn here. */
		if (now >= next_progress) {
			q = conn_cmd(c, "query-latency", NULL);
			progress(q, ++s, o->duration_s, o->churn_ms ? ch->cycles : -1);
			collect_outliers(q, seen, all);
			json_object_put(q);
			next_progress += 1000;
			continue;
		}
		if (t0 + o->duration_s * 1000 < wake)
			wake = t0 + o->duration_s * 1000;
		if (!o->churn_ms) {
			sleep_ms(wake > now ? (long)(wake - now) : 1);
			continue;
		}
		/* The next cycle starts MS after the last one began, or at once if it ran over. */
		if (ch->phase == CHURN_IDLE && now < next_churn) {
			sleep_ms((next_churn < wake ? next_churn : wake) - now);
			continue;
		}
		if (ch->phase == CHURN_IDLE) {
			next_churn += o->churn_ms;
			if (next_churn < now)
				next_churn = now;
		}
		churn_step(c, ch, true, wake);
	}
	if (o->churn_ms && ch->phase != CHURN_IDLE)
		churn_step(c, ch, false, INT64_MAX);
	if (interrupted) {
		o->duration_s = (now_ms() - t0 + 500) / 1000;
		fprintf(stderr, "plugvm-latency: interrupted: reporting %ld s\n", o->duration_s);
	}
}

/* The final reply, with histograms, carrying every outlier seen (`all`, taken over). */
static struct json_object *final_query(struct conn *c, struct json_object *seen,
				       struct json_object *all)
{
	struct json_object *args = json_object_new_object(), *q;

	json_object_object_add(args, "histogram", json_object_new_boolean(true));
	q = conn_cmd(c, "query-latency", args);
	warn_stale(q);
	collect_outliers(q, seen, all);
	json_object_object_add(q, "outliers", all); /* every one seen, for the report */
	json_object_put(seen);
	return q;
}

/*
 * Print the reports of `q` (and of `host`, may be NULL) and write the files the options
 * name. Returns the exit status.
 */
static int report(const struct lat_opts *o, struct json_object *q, const int *tids,
		  const struct churn *ch, struct json_object *host, struct json_object *other)
{
	struct json_object *summary;

	report_tlines(stdout, q, tids, 16);
	summary = report_json(o, q, o->churn_ms ? ch->cycles : -1, host);
	json_object_object_add(summary, "churn-failures",
			       json_object_new_int64(o->churn_ms ? ch->failures : -1));
	report_outliers(stdout, q, 5);
	if (o->churn_ms)
		printf("# churn: %ld hotplug cycles (remove and re-add) in %ld s, %ld removals "
		       "refused or late\n",
		       ch->cycles, o->duration_s, ch->failures);
	report_guest_time(stdout, q, o->duration_s);
	report_pct_line(stdout, "guest", q);
	if (host) {
		printf("# host: rt-tests cyclictest, the same interval, priority and duration, run "
		       "alongside:\n");
		report_tlines(stdout, host, NULL, 0);
		report_pct_line(stdout, "host", host);
	}
	if (o->hist_file && report_histogram(o->hist_file, q))
		return LAT_EXIT_FAIL;
	if (o->json_file)
		write_json(o->json_file, summary);
	if (o->plot_file && plot_png(o, summary, other, tmpdir))
		return LAT_EXIT_FAIL;
	json_object_put(summary);
	return 0;
}

int main(int argc, char **argv)
{
	struct lat_opts o;
	struct conn c = { .fd = -1, .timeout_ms = 60000 };
	struct churn ch = { 0 };
	struct json_object *q, *host = NULL, *other;
	struct json_object *seen = json_object_new_object(), *all = json_object_new_array();
	char vmm[PATH_MAX], cmdline[512];
	int tids[16], host_pid = -1, ret;

	parse_args(argc, argv, &opts);
	o = opts;
	default_paths(&o, argv[0], vmm, sizeof(vmm));
	other = load_compare(&o);
	guest_words(&o, cmdline, sizeof(cmdline));
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/plugvm-latency-XXXXXX");
	if (!mkdtemp(tmpdir))
		die(LAT_EXIT_FAIL, "mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	spawn_vm(&o, cmdline);
	connect_vm(&c);
	json_object_put(wait_active(&c));
	if (o.churn_ms)
		churn_init(&c, &ch);
	if (o.compare_host)
		host_pid = host_start(&o, (unsigned)vcpu_tids(&c, tids, 16), tmpdir);
	measure(&c, &o, &ch, seen, all);
	q = final_query(&c, seen, all);
	vcpu_tids(&c, tids, 16);
	end_vm(&c);
	if (host_pid > 0 && interrupted)
		kill(host_pid, SIGINT); /* cyclictest writes what it has and ends */
	if (host_pid > 0)
		host = host_finish(&o, host_pid, tmpdir);
	ret = report(&o, q, tids, &ch, host, other);
	if (ret)
		return ret;
	json_object_put(q);
	json_object_put(host);
	json_object_put(other);
	json_object_put(ch.hp);
	return 0;
}
