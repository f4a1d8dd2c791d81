// SPDX-License-Identifier: MIT
/*
 * Unit tests for plugvm-qemu's command line (vmm/config/qemu_cli*.c, qemu_opts.c): libvirt's
 * probe and start lines as they are, each accepted form, key=value against JSON, fd sets,
 * and each refusal: status CONFIG_ERROR and a message naming the option and the domain XML
 * element to remove.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdlib.h>

#include "vmm/config/qemu_cli.h"

#define ERRLEN 512

struct parsed {
	struct vm_config cfg;
	enum config_status st;
	char err[ERRLEN];
};

static void parse_argv(struct parsed *p, int argc, char **argv)
{
	memset(p->err, 0, sizeof(p->err));
	p->st = qemu_cli_parse(&p->cfg, argc, argv, p->err, sizeof(p->err));
}

/* Parse a NULL-terminated list (argv[0] is supplied). */
static void parse(struct parsed *p, ...)
{
	char *argv[64];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "/usr/bin/plugvm-qemu";
	va_start(ap, p);
	while ((a = va_arg(ap, char *)) != NULL) {
		assert_true(argc < 63);
		argv[argc++] = a;
	}
	va_end(ap);
	argv[argc] = NULL;
	parse_argv(p, argc, argv);
}

#define KERNEL "-kernel", "/k.elf"

/* Expect CONFIG_ERROR with each needle in the message; frees the config. */
#define fails(n1, n2, ...)                             \
	do {                                           \
		struct parsed _p;                      \
		parse(&_p, __VA_ARGS__, NULL);         \
		assert_int_equal(_p.st, CONFIG_ERROR); \
		assert_contains(_p.err, n1);           \
		assert_contains(_p.err, n2);           \
		config_free(&_p.cfg);                  \
	} while (0)

#define accepts(...)                                     \
	do {                                             \
		struct parsed _p;                        \
		parse(&_p, __VA_ARGS__, NULL);           \
		if (_p.st != CONFIG_RUN)                 \
			fail_msg("refused: %s", _p.err); \
		config_free(&_p.cfg);                    \
	} while (0)

static void test_invoked_by_name(void **state)
{
	(void)state;
	assert_true(qemu_cli_invoked("plugvm-qemu"));
	assert_true(qemu_cli_invoked("/x/build/plugvm-qemu"));
	assert_false(qemu_cli_invoked("/x/build/plugvm"));
	assert_false(qemu_cli_invoked("plugvm-qemu2"));
	assert_false(qemu_cli_invoked(NULL));
}

/* §9.2's probe, word for word. */
static void test_libvirt_probe_line(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
	      "none,accel=kvm:tcg", "-qmp",
	      "unix:/var/lib/libvirt/qemu/qmp-AbC123/qmp.monitor,server=on,wait=off", "-pidfile",
	      "/var/lib/libvirt/qemu/qmp-AbC123/qmp.pid", "-daemonize", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.machine_none);
	assert_true(p.cfg.start_paused);
	assert_true(p.cfg.daemonize);
	assert_string_equal(p.cfg.pidfile, "/var/lib/libvirt/qemu/qmp-AbC123/qmp.pid");
	assert_string_equal(p.cfg.qmp_path, "/var/lib/libvirt/qemu/qmp-AbC123/qmp.monitor");
	assert_int_equal(p.cfg.qmp_fd, -1);
	assert_false(p.cfg.qmp_disabled);
	assert_int_equal(p.cfg.console, CONSOLE_NONE);
	assert_int_equal(p.cfg.nr_chardevs, 1);
	assert_string_equal(p.cfg.chardevs[0].label, "compat_monitor0");
	config_free(&p.cfg);
}

/* §9.3's start, with the JSON -object/-device libvirt writes for QEMU 7.2's schema. */
static void test_libvirt_start_line_json(void **state)
{
	struct parsed p;

	(void)state;
	parse(
	    &p, "-name", "guest=g1,debug-threads=on", "-S", "-object",
	    "{\"qom-type\":\"secret\",\"id\":\"masterKey0\",\"format\":\"raw\",\"file\":\"/var/"
	    "lib/libvirt/qemu/domain-1-g1/master-key.aes\"}",
	    "-machine", "pc-i440fx-7.2,usb=off,dump-guest-core=off,memory-backend=pc.ram", "-accel",
	    "kvm", "-cpu", "host,migratable=on,arch-capabilities=off", "-m", "96", "-object",
	    "{\"qom-type\":\"memory-backend-ram\",\"id\":\"pc.ram\",\"size\":100663296}",
	    "-overcommit", "mem-lock=off", "-smp", "1,maxcpus=4,sockets=4,cores=1,threads=1",
	    "-uuid", "c7a5fdbd-cdaf-9455-926a-d65c16db1809", "-display", "none", "-no-user-config",
	    "-nodefaults", "-chardev", "socket,id=charmonitor,fd=29,server=on,wait=off", "-mon",
	    "chardev=charmonitor,id=monitor,mode=control", "-rtc", "base=utc", "-no-shutdown",
	    "-boot", "strict=on", "-kernel", "/boot/guest.elf", "-append", "selftest=all",
	    "-add-fd", "set=0,fd=30,opaque=serial0-source", "-chardev",
	    "file,id=charserial0,path=/dev/fdset/0,append=on", "-device",
	    "{\"driver\":\"isa-serial\",\"chardev\":\"charserial0\",\"id\":\"serial0\","
	    "\"index\":0}",
	    "-audiodev", "{\"id\":\"audio1\",\"driver\":\"none\"}", "-sandbox",
	    "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny", "-msg",
	    "timestamp=on", NULL);
	if (p.st != CONFIG_RUN)
		fail_msg("%s", p.err);
	assert_string_equal(p.cfg.name, "g1");
	assert_true(p.cfg.start_paused);
	assert_false(p.cfg.machine_none);
	/* Under libvirt the jail is off: libvirt's own confinement applies. */
	assert_null(p.cfg.jail_dir);
	assert_true(p.cfg.cpu_no_arch_caps);
	assert_int_equal(p.cfg.mem_bytes, 96ull << 20);
	assert_int_equal(p.cfg.nr_cpus, 1);
	assert_int_equal(p.cfg.max_cpus, 4);
	assert_int_equal(p.cfg.topo.sockets, 4);
	assert_string_equal(p.cfg.uuid, "c7a5fdbd-cdaf-9455-926a-d65c16db1809");
	assert_int_equal(p.cfg.qmp_fd, 29);
	assert_null(p.cfg.qmp_path);
	assert_int_equal(p.cfg.on_poweroff, ACTION_PAUSE);
	assert_int_equal(p.cfg.on_reset, ACTION_RESET);
	assert_string_equal(p.cfg.kernel_path, "/boot/guest.elf");
	assert_string_equal(p.cfg.cmdline, "selftest=all");
	assert_int_equal(p.cfg.console, CONSOLE_FD);
	assert_int_equal(p.cfg.console_fd, 30);
	assert_int_equal(p.cfg.nr_keep_fds, 2);
	assert_int_equal(p.cfg.keep_fds[0], 29);
	assert_int_equal(p.cfg.keep_fds[1], 30);
	assert_false(p.cfg.sandbox_disabled);
	assert_true(p.cfg.log_timestamps);
	assert_false(p.cfg.rt.mlock);
	assert_int_equal(p.cfg.nr_chardevs, 2);
	assert_string_equal(p.cfg.chardevs[0].label, "charmonitor");
	assert_string_equal(p.cfg.chardevs[1].label, "charserial0");
	assert_string_equal(p.cfg.chardevs[1].filename, "file");
	config_free(&p.cfg);
}

/* The same start with libvirt's key=value forms (an empty QMP schema). */
static void test_libvirt_start_line_keyval(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "-name", "g2", "-object",
	      "secret,id=masterKey0,format=raw,file=/run/master-key.aes", "-machine",
	      "pc,usb=off,memory-backend=pc.ram", "-m", "size=98304k", "-object",
	      "memory-backend-ram,id=pc.ram,size=100663296", "-chardev", "pty,id=charserial0",
	      "-device", "isa-serial,chardev=charserial0,id=serial0,index=0", "-audiodev",
	      "none,id=audio1", "-no-reboot", "-overcommit", "mem-lock=on", KERNEL, NULL);
	if (p.st != CONFIG_RUN)
		fail_msg("%s", p.err);
	assert_string_equal(p.cfg.name, "g2");
	assert_int_equal(p.cfg.mem_bytes, 96ull << 20);
	assert_int_equal(p.cfg.console, CONSOLE_PTY);
	assert_int_equal(p.cfg.on_reset, ACTION_EXIT);
	assert_int_equal(p.cfg.on_poweroff, ACTION_EXIT);
	assert_true(p.cfg.rt.mlock);
	assert_true(p.cfg.qmp_disabled); /* no -qmp, no -mon: no monitor, as QEMU */
	assert_string_equal(p.cfg.chardevs[0].filename, "pty");
	config_free(&p.cfg);
}

static void test_serial_forms(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, KERNEL, "-chardev", "file,id=c,path=/tmp/log", "-device", "isa-serial,chardev=c",
	      NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.console, CONSOLE_FILE);
	assert_true(p.cfg.console_truncate); /* QEMU's file chardev without append=on */
	assert_string_equal(p.cfg.console_path, "/tmp/log");
	config_free(&p.cfg);

	parse(&p, KERNEL, "-serial", "file:/tmp/a,,b", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.console_path, "/tmp/a,,b"); /* -serial is not key=value */
	config_free(&p.cfg);

	parse(&p, KERNEL, "-serial", "stdio", NULL);
	assert_int_equal(p.cfg.console, CONSOLE_STDIO);
	config_free(&p.cfg);
	parse(&p, KERNEL, "-serial", "pty", NULL);
	assert_int_equal(p.cfg.console, CONSOLE_PTY);
	config_free(&p.cfg);
	parse(&p, KERNEL, "-serial", "none", NULL);
	assert_int_equal(p.cfg.console, CONSOLE_NONE);
	config_free(&p.cfg);
	parse(&p, KERNEL, "-chardev", "null,id=n", "-serial", "chardev:n", NULL);
	assert_int_equal(p.cfg.console, CONSOLE_NONE);
	config_free(&p.cfg);
	parse(&p, KERNEL, NULL); /* QEMU's default serial port: plugvm's stdio */
	assert_int_equal(p.cfg.console, CONSOLE_STDIO);
	config_free(&p.cfg);
	parse(&p, KERNEL, "-nodefaults", NULL);
	assert_int_equal(p.cfg.console, CONSOLE_NONE);
	config_free(&p.cfg);

	fails("-serial tcp:1:2", "file:PATH", KERNEL, "-serial", "tcp:1:2");
	fails("one serial port", "<serial>", KERNEL, "-serial", "stdio", "-serial", "pty");
	fails("chardev 'x' is not defined", "isa-serial", KERNEL, "-device",
	      "isa-serial,chardev=x");
	fails("index 0", "<target port='0'/>", KERNEL, "-chardev", "null,id=n", "-device",
	      "isa-serial,chardev=n,index=1");
	fails("change <serial type='unix'>", "chardev=s", KERNEL, "-chardev",
	      "socket,id=s,path=/tmp/s,server=on,wait=off", "-device", "isa-serial,chardev=s");
}

static void test_monitor_forms(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, KERNEL, "-chardev", "socket,id=m,path=/tmp/m.sock,server=on,wait=off", "-mon",
	      "chardev=m,id=monitor,mode=control", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.qmp_path, "/tmp/m.sock");
	assert_string_equal(p.cfg.chardevs[0].filename, "unix:/tmp/m.sock,server=on");
	config_free(&p.cfg);
	accepts(KERNEL, "-qmp", "unix:/tmp/q,server,nowait");
	accepts(KERNEL, "-chardev", "socket,id=m,path=/tmp/m,server,nowait", "-mon",
		"m,mode=control");
	accepts(KERNEL, "-monitor", "none");

	fails("-mon", "mode=control", KERNEL, "-chardev", "socket,id=m,fd=3,server=on,wait=off",
	      "-mon", "chardev=m,mode=readline");
	fails("-monitor stdio", "HMP", KERNEL, "-monitor", "stdio");
	fails("-qmp tcp:localhost:4444", "Unix socket", KERNEL, "-qmp", "tcp:localhost:4444");
	fails("one QMP monitor", "-mon", KERNEL, "-qmp", "unix:/tmp/a", "-chardev",
	      "socket,id=m,path=/tmp/m,server=on,wait=off", "-mon", "chardev=m,mode=control");
	fails("-mon chardev=m", "-chardev socket", KERNEL, "-chardev", "null,id=m", "-mon",
	      "chardev=m,mode=control");
	fails("never waits", "server=on,wait=off", KERNEL, "-chardev",
	      "socket,id=m,fd=3,server=on,wait=on");
	fails("never waits", "server=on", KERNEL, "-chardev", "socket,id=m,fd=3");
	fails("one of fd= or path=", "socket", KERNEL, "-chardev",
	      "socket,id=m,fd=3,path=/x,server=on,wait=off");
	fails("fd=2", "inherited descriptor", KERNEL, "-chardev",
	      "socket,id=m,fd=2,server=on,wait=off");
	fails("fd=x", "inherited descriptor", KERNEL, "-chardev",
	      "socket,id=m,fd=x,server=on,wait=off");
	fails("given twice", "'m'", KERNEL, "-chardev", "null,id=m", "-chardev", "pty,id=m");
	fails("logfile=", "remove <log>", KERNEL, "-chardev",
	      "pty,id=c,logfile=/dev/fdset/1,logappend=on");
	fails("-chardev spicevmc", "<serial>", KERNEL, "-chardev", "spicevmc,id=x");
	fails("-S with --qmp none", "cont", KERNEL, "-S");
}

static void test_fdsets(void **state)
{
	struct parsed p;

	(void)state;
	/* -add-fd may come after the chardev that names its set: resolved at the end. */
	parse(&p, KERNEL, "-chardev", "file,id=c,path=/dev/fdset/7", "-device",
	      "isa-serial,chardev=c", "-add-fd", "set=7,fd=12", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.console, CONSOLE_FD);
	assert_int_equal(p.cfg.console_fd, 12);
	assert_int_equal(p.cfg.keep_fds[0], 12);
	config_free(&p.cfg);

	fails("/dev/fdset/1", "-add-fd set=1", KERNEL, "-add-fd", "set=0,fd=5", "-chardev",
	      "file,id=c,path=/dev/fdset/1", "-device", "isa-serial,chardev=c");
	fails("/dev/fdset/x", "not /dev/fdset/N", KERNEL, "-chardev", "file,id=c,path=/dev/fdset/x",
	      "-device", "isa-serial,chardev=c");
	fails("set 0", "one per set", KERNEL, "-add-fd", "set=0,fd=5", "-add-fd", "set=0,fd=6");
	fails("-add-fd", "set=", KERNEL, "-add-fd", "fd=5");
	fails("-add-fd", "fd=", KERNEL, "-add-fd", "set=0");
	fails("-add-fd", "'bogus=1'", KERNEL, "-add-fd", "set=0,fd=5,bogus=1");
}

static void test_machine_accel_cpu(void **state)
{
	struct parsed p;

	(void)state;
	accepts(KERNEL, "-machine", "pc");
	accepts(KERNEL, "-machine", "q35,accel=kvm");
	parse(&p, KERNEL, "-machine", "pc-q35-7.2", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.machine, MACHINE_Q35);
	config_free(&p.cfg);
	parse(&p, KERNEL, "-machine", "pc-i440fx-7.2", NULL);
	assert_int_equal(p.cfg.machine, MACHINE_PC);
	config_free(&p.cfg);
	fails("-machine pc-q35-x", "<type machine='pc'>", KERNEL, "-machine", "pc-q35-x");
	accepts(KERNEL, "-M", "type=pc-i440fx-7.2,vmport=off,hpet=off");
	accepts(KERNEL, "-enable-kvm", "-accel", "accel=kvm");
	accepts(KERNEL, "-cpu", "host");
	/* The last -machine's backend wins (and the first is not leaked: ASan, fuzz_qemu_cli). */
	accepts(KERNEL, "-machine", "pc,memory-backend=a", "-machine", "pc,memory-backend=r",
		"-object", "memory-backend-ram,id=r,size=67108864");
	parse(&p, "-machine", "none", NULL); /* no -kernel needed */
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.machine_none);
	config_free(&p.cfg);

	fails("-machine isapc", "<type machine='pc'>", KERNEL, "-machine", "isapc");
	fails("usb=on", "<controller type='usb' model='none'/>", KERNEL, "-machine", "pc,usb=on");
	fails("accel=tcg", "<domain type='kvm'>", KERNEL, "-machine", "pc,accel=tcg");
	fails("-accel tcg", "<domain type='kvm'>", KERNEL, "-accel", "tcg");
	accepts(KERNEL, "-machine", "pc,acpi=on");
	fails("acpi=off", "<features><acpi/></features>", KERNEL, "-machine", "pc,acpi=off");
	fails("-cpu qemu64", "host-passthrough", KERNEL, "-cpu", "qemu64");
	fails("'+vmx=on'", "<feature>", KERNEL, "-cpu", "host,+vmx");
	fails("arch-capabilities", "off only", KERNEL, "-cpu", "host,arch-capabilities=on");
	fails("'kernel_irqchip=split'", "-machine", KERNEL, "-machine", "pc,kernel_irqchip=split");
	fails("memory-backend=pc.ram", "no -object", KERNEL, "-machine",
	      "pc,memory-backend=pc.ram");
	fails("differs from -m", "pc.ram", KERNEL, "-m", "64", "-machine",
	      "pc,memory-backend=pc.ram", "-object", "memory-backend-ram,id=pc.ram,size=1024");
	fails("not the -machine memory-backend", "x", KERNEL, "-object",
	      "memory-backend-ram,id=x,size=67108864");
	fails("-kernel is required", "<kernel>", "-machine", "pc");
}

static void test_memory_and_smp(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, KERNEL, "-m", "1G", "-smp", "2,maxcpus=8", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, 1ull << 30);
	assert_int_equal(p.cfg.max_cpus, 8);
	config_free(&p.cfg);
	/* The backend alone sets the size (no -m). */
	parse(&p, KERNEL, "-machine", "pc,memory-backend=r", "-object",
	      "{\"qom-type\":\"memory-backend-ram\",\"id\":\"r\",\"size\":134217728}", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, 128ull << 20);
	config_free(&p.cfg);

	fails("-m", "bad memory size", KERNEL, "-m", "lots");
	fails("-m", "<memory>", KERNEL, "-m", "1");
	fails("maxmem", "<maxMemory>", KERNEL, "-m", "size=64M,slots=4,maxmem=1G");
	fails("-smp", "maxcpus", KERNEL, "-smp", "4,maxcpus=2");
	fails("mem-lock=sometimes", "-overcommit", KERNEL, "-overcommit", "mem-lock=sometimes");
	fails("cpu-pm=on", "-overcommit", KERNEL, "-overcommit", "cpu-pm=on");
}

static void test_simple_options(void **state)
{
	struct parsed p;

	(void)state;
	accepts(KERNEL, "-name", "guest=a,,b");
	parse(&p, KERNEL, "-name", "guest=a,,b", NULL);
	assert_string_equal(p.cfg.name, "a,b");
	config_free(&p.cfg);
	accepts(KERNEL, "-boot", "strict=on", "-boot", "order=c,menu=off");
	accepts(KERNEL, "-rtc", "base=utc,driftfix=slew", "-vga", "none", "-nodefconfig");
	accepts(KERNEL, "-global", "kvm-pit.lost_tick_policy=delay");
	accepts(KERNEL, "-msg", "timestamp=off,guest-name=off");
	parse(&p, KERNEL, "-sandbox", "off", NULL);
	assert_true(p.cfg.sandbox_disabled);
	config_free(&p.cfg);
	parse(&p, "-version", NULL);
	assert_int_equal(p.st, CONFIG_VERSION);
	config_free(&p.cfg);
	parse(&p, "--help", NULL);
	assert_int_equal(p.st, CONFIG_HELP);
	config_free(&p.cfg);

	fails("-uuid", "not a UUID", KERNEL, "-uuid", "c7a5fdbd-cdaf-9455-926a-d65c16db180");
	fails("-uuid", "not a UUID", KERNEL, "-uuid", "c7a5fdbd-cdaf-9455-926a-d65c16db18099");
	fails("-uuid", "not a UUID", KERNEL, "-uuid", "g7a5fdbd-cdaf-9455-926a-d65c16db1809");
	fails("-rtc", "<clock offset='utc'>", KERNEL, "-rtc", "base=localtime");
	fails("-display gtk", "<graphics>", KERNEL, "-display", "gtk");
	fails("-boot", "<bootmenu", KERNEL, "-boot", "menu=on");
	fails("-global", "no such property", KERNEL, "-global", "isa-fdc.driveA=x");
	fails("-msg", "guest-name=off", KERNEL, "-msg", "guest-name=on");
	fails("-sandbox", "on or off", KERNEL, "-sandbox", "maybe");
	fails("-sandbox", "spawn=forbid", KERNEL, "-sandbox", "on,spawn=forbid");
	fails("-audiodev", "<sound>", KERNEL, "-audiodev", "{\"id\":\"a\",\"driver\":\"pa\"}");
	fails("-name", "'bogus=1'", KERNEL, "-name", "guest=a,bogus=1");
	fails("-name", "debug-threads", KERNEL, "-name", "guest=a,debug-threads=perhaps");
	fails("-vga std", "<video>", KERNEL, "-vga", "std");
	{
		static char long_line[CONFIG_MAX_CMDLINE + 2];

		memset(long_line, 'x', sizeof(long_line) - 1);
		fails("-append", "<cmdline>", KERNEL, "-append", long_line);
	}
}

static void test_refusals_name_the_xml(void **state)
{
	(void)state;
	fails("-drive", "<disk>", KERNEL, "-drive", "file=/x.img,if=virtio");
	fails("-blockdev", "<disk>", KERNEL, "-blockdev", "{\"driver\":\"file\"}");
	fails("-netdev", "<interface>", KERNEL, "-netdev", "user,id=n0");
	fails("-usb", "<controller type='usb' model='none'/>", KERNEL, "-usb");
	fails("-vnc", "<graphics>", KERNEL, "-vnc", "127.0.0.1:0");
	fails("-spice", "<graphics>", KERNEL, "-spice", "port=5900");
	fails("-initrd", "<initrd>", KERNEL, "-initrd", "/i.img");
	fails("-no-acpi", "<acpi/>", KERNEL, "-no-acpi");
	fails("-device virtio-net-pci", "<interface>", KERNEL, "-device",
	      "virtio-net-pci,netdev=n0");
	fails("-device virtio-balloon-pci", "<memballoon model='none'/>", KERNEL, "-device",
	      "{\"driver\":\"virtio-balloon-pci\",\"id\":\"balloon0\"}");
	fails("-device usb-tablet", "<input bus='usb'>", KERNEL, "-device", "usb-tablet,id=i0");
	fails("-device piix3-usb-uhci", "model='none'", KERNEL, "-device", "piix3-usb-uhci");
	fails("-device cirrus-vga", "<video>", KERNEL, "-device", "cirrus-vga");
	fails("-device ich9-intel-hda", "<sound>", KERNEL, "-device", "ich9-intel-hda");
	fails("-device tpm-tis", "<tpm>", KERNEL, "-device", "tpm-tis");
	fails("-device i6300esb", "<watchdog>", KERNEL, "-device", "i6300esb");
	fails("-device virtio-rng-pci", "<rng>", KERNEL, "-device", "virtio-rng-pci");
	fails("-device virtio-blk-pci", "<disk>", KERNEL, "-device", "virtio-blk-pci");
	fails("-device host-x86_64-cpu", "<vcpus>", KERNEL, "-device",
	      "host-x86_64-cpu,id=vcpu1,socket-id=1,core-id=0,thread-id=0");
	fails("-device frobnicator", "unknown device driver", KERNEL, "-device", "frobnicator");
	fails("-object rng-random", "<rng>", KERNEL, "-object", "rng-random,id=r,filename=/x");
	fails("-object secret", "id=", KERNEL, "-object", "secret,format=raw,file=/k");
	fails("-object secret", "one of file= or data=", KERNEL, "-object", "secret,id=s");
	fails("unknown option '-frob'", "plugvm-qemu", KERNEL, "-frob");
	/* plugvm's --jail has no QEMU spelling: nothing turns it on under libvirt. */
	fails("unknown option '-jail'", "plugvm-qemu", KERNEL, "-jail", "/j");
	fails("unknown option '--jail'", "plugvm-qemu", KERNEL, "--jail", "/j");
	fails("-chroot", "plugvm-qemu has no -chroot", KERNEL, "-chroot", "/j");
	fails("unexpected argument", "stray", KERNEL, "stray");
	fails("-m", "needs a value", KERNEL, "-m");
}

static void test_json_and_keyval_agree(void **state)
{
	struct qopts a, b;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(qopts_parse(&a, "isa-serial,chardev=c,index=0,x", "driver", "-device", err,
				     sizeof(err)),
			 0);
	assert_int_equal(qopts_parse(&b,
				     "{\"driver\":\"isa-serial\",\"chardev\":\"c\",\"index\":0,"
				     "\"x\":true}",
				     "driver", "-device", err, sizeof(err)),
			 0);
	assert_int_equal(a.n, b.n);
	for (unsigned i = 0; i < a.n; i++) {
		assert_string_equal(a.o[i].key, b.o[i].key);
		assert_string_equal(a.o[i].val, b.o[i].val);
	}
	assert_string_equal(qopts_take(&a, "x"), "on");
	assert_int_equal(qopts_check_used(&a, "-device", NULL, err, sizeof(err)), -EINVAL);
	assert_contains(err, "unsupported key 'driver=isa-serial'");
	qopts_free(&a);
	qopts_free(&b);

	assert_int_equal(qopts_parse(&a, "{\"a\":[1]}", NULL, "-object", err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "only strings, integers and booleans");
	assert_int_equal(qopts_parse(&a, "{\"a\":", NULL, "-object", err, sizeof(err)), -EINVAL);
	assert_contains(err, "-object: not a JSON object");
	assert_int_equal(qopts_parse(&a, "", NULL, "-x", err, sizeof(err)), -EINVAL);
	assert_int_equal(qopts_parse(&a, "a,=b", NULL, "-x", err, sizeof(err)), -EINVAL);
	assert_contains(err, "empty key");
	fails("-device", "not a JSON object", KERNEL, "-device", "{\"driver\":");
}

/* plugvm's own --qmp fd=N: the inherited socket, not a file named "fd=3". */
static void test_plugvm_qmp_fd(void **state)
{
	struct vm_config cfg;
	char err[ERRLEN];
	char *argv[] = { "plugvm", "--qmp", "fd=7", NULL };

	(void)state;
	assert_int_equal(config_parse(&cfg, 3, argv, err, sizeof(err)), CONFIG_RUN);
	assert_int_equal(cfg.qmp_fd, 7);
	assert_null(cfg.qmp_path);
	assert_int_equal(cfg.nr_keep_fds, 1);
	assert_int_equal(cfg.keep_fds[0], 7);
	config_free(&cfg);
	argv[2] = "fd=1";
	assert_int_equal(config_parse(&cfg, 3, argv, err, sizeof(err)), CONFIG_ERROR);
	assert_contains(err, "inherited listening socket");
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invoked_by_name),
		cmocka_unit_test(test_libvirt_probe_line),
		cmocka_unit_test(test_libvirt_start_line_json),
		cmocka_unit_test(test_libvirt_start_line_keyval),
		cmocka_unit_test(test_serial_forms),
		cmocka_unit_test(test_monitor_forms),
		cmocka_unit_test(test_fdsets),
		cmocka_unit_test(test_machine_accel_cpu),
		cmocka_unit_test(test_memory_and_smp),
		cmocka_unit_test(test_simple_options),
		cmocka_unit_test(test_refusals_name_the_xml),
		cmocka_unit_test(test_json_and_keyval_agree),
		cmocka_unit_test(test_plugvm_qmp_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
