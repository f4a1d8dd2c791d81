// SPDX-License-Identifier: MIT
/*
 * Writes the fuzzers' seed corpora under tests/fuzz/corpus/ (run by `make fuzz-seeds`; the
 * output is committed): minimal PVH kernels for fuzz_elf, tables from the VMM's own ACPI
 * builder for fuzz_acpi, command lines and argument vectors for the other two.
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acpi_tables.h"
#include "plugvm_agent.h"
#include "plugvm_latency.h"
#include "pvh.h"
#include "tests/unit/vmm_shim/agent_states.h"
#include "tests/unit/vmm_shim/elf_header.h"
#include "vmm/x86/acpi.h"

static const char *dir = "tests/fuzz/corpus";

static void put(const char *target, const char *name, const void *p, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A kernel like the linker makes one: a PT_NOTE, an R+X text and an RW data+bss segment. */
static size_t make_elf(uint8_t *buf, uint32_t descsz, uint64_t note_align, int nr_segs)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	size_t note_off = sizeof(*eh) + 3 * sizeof(*ph), off, pad;
	Elf64_Nhdr nh = { 4, descsz, PLUGVM_PVH_NOTE_PHYS32_ENTRY };
	uint64_t entry = 0x100000;

	memset(buf, 0, 0x400);
	elf_header_init(eh, entry, (uint16_t)nr_segs);

	pad = (4 + note_align - 1) & ~(note_align - 1);
	memcpy(buf + note_off, &nh, sizeof(nh));
	memcpy(buf + note_off + sizeof(nh), "Xen", 4);
	memcpy(buf + note_off + sizeof(nh) + pad, &entry, descsz);
	off = note_off + sizeof(nh) + pad + ((descsz + note_align - 1) & ~(note_align - 1));
	ph[0] = (Elf64_Phdr){ PT_NOTE, PF_R,	       note_off,       0,
			      0,       off - note_off, off - note_off, note_align };
	/* hlt; jmp . */
	buf[0x200] = 0xf4;
	buf[0x201] = 0xeb;
	buf[0x202] = 0xfd;
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0x200, 0x100000, 0x100000, 0x10, 0x10, 0x1000 };
	if (nr_segs > 2) {
		memset(buf + 0x300, 0x5a, 0x20);
		ph[2] = (Elf64_Phdr){ PT_LOAD,	PF_R | PF_W, 0x300,  0x101000,
				      0x101000, 0x20,	     0x3000, 0x1000 };
		return 0x320;
	}
	return 0x210;
}

static void acpi_seed(unsigned nr, unsigned max, int search)
{
	struct acpi_config cfg = { nr, max, acpi_layout_of(MACHINE_PC) };
	static uint8_t buf[1 + 0x20000];
	char name[64];
	size_t len;

	memset(buf, 0, sizeof(buf));
	buf[0] = (uint8_t)search;
	if (!acpi_build(buf + 1, sizeof(buf) - 1, 0xe0000, &cfg))
		exit(1);
	/* The tables end with the last one the XSDT lists (the builder writes the MADT last). */
	{
		const struct plugvm_acpi_rsdp *r = (const void *)(buf + 1);
		const struct plugvm_acpi_header *x =
		    (const void *)(buf + 1 + r->xsdt_address - 0xe0000);
		unsigned i, n = (x->length - sizeof(*x)) / 8;

		len = 0;
		for (i = 0; i < n; i++) {
			uint64_t pa;
			const struct plugvm_acpi_header *h;

			memcpy(&pa, (const uint8_t *)(x + 1) + 8 * i, 8);
			h = (const void *)(buf + 1 + pa - 0xe0000);
			if (1 + pa - 0xe0000 + h->length > len)
				len = 1 + pa - 0xe0000 + h->length;
		}
	}
	snprintf(name, sizeof(name), "tables-%u-%u%s", nr, max, search ? "-search" : "");
	put("fuzz_acpi", name, buf, len);
}

/* fuzz_latency: a registration and an area with one measured CPU, one state, one outlier. */
static void latency_seed(void)
{
	static struct {
		struct plugvm_latency_register reg;
		struct plugvm_latency_area area;
	} s;
	struct plugvm_latency_cpu *c = &s.area.cpus[1].copy[0];
	size_t len = sizeof(s.reg) + offsetof(struct plugvm_latency_area, cpus[2]);

	s.reg = (struct plugvm_latency_register){ PLUGVM_LATENCY_MAGIC, PLUGVM_LATENCY_VERSION,
						  0x10000, sizeof(s.area), 0 };
	s.area.magic = PLUGVM_LATENCY_MAGIC;
	s.area.version = PLUGVM_LATENCY_VERSION;
	s.area.interval_us = 1000;
	s.area.hist_us = 100;
	s.area.nr_states = 1;
	strcpy(s.area.states[0].name, "sched:active");
	s.area.states[0].count = 1;
	s.area.outlier_seq = 1;
	s.area.outliers[0].cpu = 1;
	s.area.outliers[0].hp[0] = 1 | PLUGVM_LATENCY_HP_DOWN;
	c->flags = PLUGVM_LATENCY_CPU_USED;
	c->count = 2;
	c->min_ns = 3000;
	c->max_ns = 150000;
	c->sum_ns = 153000;
	c->hist[3] = 1;
	c->overflows = 1;
	s.area.cpus[1].copy[1] = *c;
	put("fuzz_latency", "one-cpu", &s, len);
}

/* fuzz_virtio: a driver bringing the agent device up and sending one message. */
static void virtio_seed(void)
{
	static const uint16_t prog[][3] = {
		/* reg, value low, value high */
		{ 0x070, 0, 0 },     { 0x070, 1, 0 },	  { 0x070, 3, 0 },     { 0x024, 1, 0 },
		{ 0x020, 1, 0 },     { 0x070, 0xb, 0 },	  { 0x030, 1, 0 },     { 0x038, 8, 0 },
		{ 0x080, 0x000, 0 }, { 0x090, 0x200, 0 }, { 0x0a0, 0x300, 0 }, { 0x044, 1, 0 },
		{ 0x070, 0xf, 0 },   { 0x050, 1, 0 },	  { 0x8070, 0, 0 },    { 0x8060, 0, 0 },
		{ 0x064, 1, 0 },
	};
	uint8_t buf[2 + 0x400 + 512 + sizeof(prog) / 3 * 6];
	uint8_t *ram = buf + 2;
	uint16_t ram_len = 0x400 + 512, v16;
	uint64_t addr = 0x400;
	uint32_t v32;
	size_t i, off;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &ram_len, 2);
	/* One descriptor: 512 bytes at 0x400, device-readable. */
	memcpy(ram, &addr, 8);
	v32 = 512;
	memcpy(ram + 8, &v32, 4);
	/* avail: flags 0, idx 1, ring[0] = 0 */
	v16 = 1;
	memcpy(ram + 0x202, &v16, 2);
	/* The message: magic, version, a HELLO event. */
	v32 = 0x544e4741u;
	memcpy(ram + 0x400, &v32, 4);
	v16 = 1;
	memcpy(ram + 0x404, &v16, 2);
	memcpy(ram + 0x406, &v16, 2);
	v32 = 2;
	memcpy(ram + 0x414, &v32, 4);
	off = 2 + ram_len;
	for (i = 0; i < sizeof(prog) / sizeof(prog[0]); i++) {
		memcpy(buf + off, &prog[i][0], 2);
		v32 = prog[i][1] | (uint32_t)prog[i][2] << 16;
		memcpy(buf + off + 2, &v32, 4);
		off += 6;
	}
	put("fuzz_virtio", "agent-hello", buf, off);
}

/* fuzz_hotplug: an 8-byte step (op, arg, value, offset); see its file comment. */
static size_t hp_step(uint8_t *p, uint8_t op, uint8_t arg, uint32_t value, uint16_t offset)
{
	p[0] = op;
	p[1] = arg;
	memcpy(p + 2, &value, 4);
	memcpy(p + 6, &offset, 2);
	return 8;
}

static void hotplug_seeds(void)
{
	uint8_t buf[512];
	size_t n;

	/* 4 slots, 1 present, APIC IDs 0-1 running: the guest driver's hot-add dialogue. */
	n = 0;
	buf[n++] = 0x03;
	buf[n++] = 0x03;
	n += hp_step(buf + n, 6, 1, 0, 0); /* host: plug slot 1 */
	n += hp_step(buf + n, 0, 0, 0, 0); /* legacy -> modern */
	n += hp_step(buf + n, 0 | 2 << 3, 0, 0, 0); /* selector 0 (32-bit) */
	n += hp_step(buf + n, 0, 5, 0, 0); /* command: next event */
	n += hp_step(buf + n, 1 | 2 << 3, 8, 0, 0); /* read: the slot */
	n += hp_step(buf + n, 0 | 2 << 3, 0, 1, 0); /* selector 1 */
	n += hp_step(buf + n, 1, 4, 0, 0); /* flags */
	n += hp_step(buf + n, 0, 4, 2, 0); /* clear insert */
	n += hp_step(buf + n, 0, 5, 1, 0); /* OST event */
	n += hp_step(buf + n, 0 | 2 << 3, 8, 1, 0);
	n += hp_step(buf + n, 0, 5, 2, 0); /* OST status */
	n += hp_step(buf + n, 0 | 2 << 3, 8, 0, 0);
	n += hp_step(buf + n, 7, 1, 0, 0); /* host: unplug request */
	n += hp_step(buf + n, 0, 4, 8, 0); /* eject */
	put("fuzz_hotplug", "add-remove", buf, n);

	/* A start context at 0x1000 for APIC ID 1 (entry 0x2000, stack 0x3000, CR3 0x4000),
	 * then a report at 0x1100, each announced on its port. */
	n = 0;
	buf[n++] = 0x03;
	buf[n++] = 0x03;
	n += hp_step(buf + n, 4, 0, 1, 0x1000); /* apic_id */
	n += hp_step(buf + n, 4, 0, 0x2000, 0x1008); /* entry */
	n += hp_step(buf + n, 4, 0, 0x3000, 0x1010); /* stack */
	n += hp_step(buf + n, 4, 0, 0x4000, 0x1018); /* cr3 */
	n += hp_step(buf + n, 3 | 2 << 3, 0, 0x1000, 0);
	n += hp_step(buf + n, 4, 0, 1, 0x1100); /* apic_id */
	n += hp_step(buf + n, 4, 0, 1, 0x1104); /* op: online */
	n += hp_step(buf + n, 4, 0, 12345, 0x1110); /* guest_ns */
	n += hp_step(buf + n, 2 | 2 << 3, 0, 0x1100, 0);
	n += hp_step(buf + n, 2 | 2 << 3, 3, 0x1100, 0); /* string OUT, 4 times */
	put("fuzz_hotplug", "start-report", buf, n);
}

/* fuzz_agent: a whole message step (op 1) with `len` payload bytes from `payload`. */
static size_t agent_msg(uint8_t *p, uint8_t type, uint8_t flags, int32_t status,
			const void *payload, uint16_t len)
{
	p[0] = 1;
	p[1] = type;
	p[2] = flags;
	memcpy(p + 3, &status, 4);
	memcpy(p + 7, &len, 2);
	memcpy(p + 9, payload, len);
	return 9 + (size_t)len;
}

static void agent_seeds(void)
{
	static uint8_t buf[8192];
	struct plugvm_agent_hello h = { .version = 1, .nr_cpus = 4, .nr_states = 3 };
	struct plugvm_agent_states st;
	static const char *const names[] = { "offline", "work:prepare", "online" };
	size_t n = 0;
	unsigned i;

	agent_states_fill(&st, names);
	/* HELLO event, the LIST_STATES reply to the request it causes, then QMP commands,
	 * each answered with an empty reply to the host's last request. */
	n += agent_msg(buf + n, PLUGVM_AGENT_HELLO, PLUGVM_AGENT_F_EVENT, 0, &h, sizeof(h));
	n += agent_msg(buf + n, PLUGVM_AGENT_LIST_STATES, 0x40 | PLUGVM_AGENT_F_REPLY, 0, &st,
		       sizeof(st));
	for (i = 0; i < 11; i++) {
		buf[n++] = 2;
		buf[n++] = (uint8_t)i;
		buf[n++] = 2;
		n +=
		    agent_msg(buf + n, (uint8_t)(i % 8 + 1), 0x40 | PLUGVM_AGENT_F_REPLY, 0, "", 0);
	}
	put("fuzz_agent", "hello-states-commands", buf, n);
	/* Raw bytes: half a message, then a whole HELLO split across two steps. */
	n = 0;
	buf[n++] = 0;
	buf[n++] = 4;
	memcpy(buf + n, "AGNT", 4);
	n += 4;
	put("fuzz_agent", "raw-partial", buf, n);
}

/* plugvm-qemu: spec §9.2's probe and §9.3's start (JSON and key=value), NUL-separated. */
static void qemu_cli_seeds(void)
{
	static const char probe[] =
	    "-S\0-no-user-config\0-nodefaults\0-nographic\0-machine\0"
	    "none,accel=kvm:tcg\0-qmp\0"
	    "unix:/var/lib/libvirt/qemu/qmp-x/qmp.monitor,server=on,wait=off\0"
	    "-pidfile\0/var/lib/libvirt/qemu/qmp-x/qmp.pid\0-daemonize";
	static const char start_json[] =
	    "-name\0guest=g,debug-threads=on\0-S\0-object\0"
	    "{\"qom-type\":\"secret\",\"id\":\"masterKey0\",\"format\":\"raw\",\"file\":\"/k\"}\0"
	    "-machine\0pc-i440fx-7.2,usb=off,dump-guest-core=off,memory-backend=pc.ram\0-accel\0kvm"
	    "\0-cpu\0host,migratable=on,arch-capabilities=off\0-m\096\0-object\0"
	    "{\"qom-type\":\"memory-backend-ram\",\"id\":\"pc.ram\",\"size\":100663296}\0"
	    "-overcommit\0mem-lock=off\0-smp\0"
	    "1,maxcpus=4,sockets=4,cores=1,threads=1\0-uuid\0"
	    "c7a5fdbd-cdaf-9455-926a-d65c16db1809\0-display\0none\0-no-user-config\0-nodefaults"
	    "\0-chardev\0socket,id=charmonitor,fd=29,server=on,wait=off\0-mon\0"
	    "chardev=charmonitor,id=monitor,mode=control\0-rtc\0base=utc\0-no-shutdown\0-boot\0"
	    "strict=on\0-kernel\0/g.elf\0-add-fd\0set=0,fd=30,opaque=serial0-source\0-chardev\0"
	    "file,id=charserial0,path=/dev/fdset/0,append=on\0-device\0"
	    "{\"driver\":\"isa-serial\",\"chardev\":\"charserial0\",\"id\":\"serial0\",\"index\":0}"
	    "\0-audiodev\0{\"id\":\"audio1\",\"driver\":\"none\"}\0-sandbox\0"
	    "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny\0-msg\0"
	    "timestamp=on";
	static const char start_kv[] =
	    "-name\0g\0-machine\0pc,usb=off\0-m\0size=98304k\0-chardev\0pty,id=charserial0\0"
	    "-device\0isa-serial,chardev=charserial0,id=serial0\0-audiodev\0none,id=a\0"
	    "-no-reboot\0-kernel\0/g.elf\0-append\0a,,b\0-serial\0none";

	put("fuzz_qemu_cli", "probe", probe, sizeof(probe) - 1);
	put("fuzz_qemu_cli", "start-json", start_json, sizeof(start_json) - 1);
	put("fuzz_qemu_cli", "start-keyval", start_kv, sizeof(start_kv) - 1);
}

int main(void)
{
	static const char *const lines[] = {
		"hz=1000 rt=1 selftest=cpuhp halt",
		"console=ttyS0,115200 msg=\"a b c\" verbose=0 x=0x1f",
		"selftest=all hz=0xffffffffffffffff halt=off",
	};
	static const char argv1[] = "--smp\0"
				    "2,maxcpus=8\0"
				    "-m\0"
				    "128M\0"
				    "--kernel\0"
				    "build/guest.elf\0"
				    "--append\0"
				    "hz=100 halt";
	static const char argv2[] = "-smp\0"
				    "4,sockets=2,cores=2,threads=1\0"
				    "--memory=1G\0"
				    "-v\0"
				    "-v\0"
				    "-q";
	static const char argv3[] = "--smp=cpus=1,maxcpus=1024,dies=2,sockets=2,cores=16,threads=16"
				    "\0"
				    "-m\0"
				    "65536K\0"
				    "--help";
	static const char argv4[] = "--chaos=seed=42,stall=5%:2ms,irq=12.25%:1s,start=off\0"
				    "--chaos\0"
				    "--append\0"
				    "halt";
	/* Step 64 (first byte), then what libvirt sends, and what it never would. */
	static const char libvirt_start[] =
	    "\x3f{\"execute\": \"query-migrate-capabilities\"}\r\n"
	    "{\"execute\": \"migrate-set-capabilities\", \"arguments\": {\"capabilities\": "
	    "[{\"capability\": \"events\", \"state\": true}]}}\r\n"
	    "{\"execute\": \"query-chardev\"}\r\n"
	    "{\"execute\": \"qom-list\", \"arguments\": {\"path\": \"/machine/peripheral\"}}\r\n"
	    "{\"execute\": \"query-named-block-nodes\", \"arguments\": {\"flat\": true}}\r\n"
	    "{\"execute\": \"query-block\"}\r\n{\"execute\": \"query-jobs\"}\r\n"
	    "{\"execute\": \"set-action\", \"arguments\": {\"shutdown\": \"pause\", "
	    "\"reboot\": \"shutdown\", \"panic\": \"shutdown\"}}\r\n";
	static const char libvirt_errors[] =
	    "\x07{\"execute\": \"migrate-set-capabilities\", \"arguments\": {\"capabilities\": "
	    "[{\"capability\": \"xbzrle\", \"state\": 1}, 7, {}]}}\r\n"
	    "{\"execute\": \"qom-list\", \"arguments\": {\"path\": \"/machine/unattached/"
	    "device[0]\"}}\r\n"
	    "{\"execute\": \"set-action\", \"arguments\": {\"watchdog\": \"none\", "
	    "\"panic\": \"pause\", \"reboot\": \"halt\"}}\r\n";
	uint8_t elf[0x400];
	size_t i;

	put("fuzz_elf", "pvh-note4-align4", elf, make_elf(elf, 4, 4, 3));
	put("fuzz_elf", "pvh-note8-align8", elf, make_elf(elf, 8, 8, 3));
	put("fuzz_elf", "pvh-note8-align4-text-only", elf, make_elf(elf, 8, 4, 2));

	acpi_seed(1, 1, 0);
	acpi_seed(4, 8, 0);
	acpi_seed(255, 300, 0);
	acpi_seed(2, 4, 1);

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char name[16];

		snprintf(name, sizeof(name), "line%zu", i + 1);
		put("fuzz_cmdline", name, lines[i], strlen(lines[i]));
	}
	put("fuzz_config", "argv1", argv1, sizeof(argv1) - 1);
	put("fuzz_config", "argv2", argv2, sizeof(argv2) - 1);
	put("fuzz_config", "argv3", argv3, sizeof(argv3) - 1);
	put("fuzz_config", "argv4-chaos", argv4, sizeof(argv4) - 1);
	qemu_cli_seeds();
	put("fuzz_qmp_libvirt", "libvirt-start", libvirt_start, sizeof(libvirt_start) - 1);
	put("fuzz_qmp_libvirt", "libvirt-errors", libvirt_errors, sizeof(libvirt_errors) - 1);
	virtio_seed();
	hotplug_seeds();
	agent_seeds();
	latency_seed();
	return 0;
}
