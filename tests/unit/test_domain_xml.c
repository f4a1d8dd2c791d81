// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/config/domain_xml*.c: what a libvirt domain document sets in struct
 * vm_config, the refusals (malformed XML, wrong root, missing kernel, current > max, an
 * unsupported element, bad <vcpus>), sizes with units, <os><type machine=> (pc or q35), and
 * rt_tune.c's cpuset syntax.
 * Negative tests check the status and that the message names the problem.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdlib.h>

#include "vmm/config/config.h"
#include "vmm/config/domain_xml.h"

struct loaded {
	struct vm_config cfg;
	int ret;
	char err[512];
};

/* Write `xml` to a temporary file and load it. */
static void load(struct loaded *l, const char *xml)
{
	char path[] = "/tmp/plugvm-test-domain-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, xml, strlen(xml)), (ssize_t)strlen(xml));
	close(fd);
	config_defaults(&l->cfg);
	memset(l->err, 0, sizeof(l->err));
	l->ret = domain_xml_load(&l->cfg, path, l->err, sizeof(l->err));
	unlink(path);
}

#define HEAD "<domain type='kvm'><name>t</name><memory unit='MiB'>128</memory>"
#define OS   "<os><type arch='x86_64' machine='pc'>hvm</type><kernel>/k.elf</kernel></os>"

static void test_full_document(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, "<domain type='kvm'><name>demo</name><uuid>6f1c2a52-3d0e-4c7a-9a55-2f1b0b7d8e01"
		 "</uuid><memory unit='GiB'>1</memory><currentMemory unit='GiB'>1</currentMemory>"
		 "<vcpu placement='static' current='3'>4</vcpu><vcpus>"
		 "<vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>"
		 "<vcpu id='1' enabled='no' hotpluggable='yes'/>"
		 "<vcpu id='2' enabled='yes' hotpluggable='yes' order='3'/>"
		 "<vcpu id='3' enabled='yes' hotpluggable='yes' order='2'/></vcpus>"
		 "<cpu><topology sockets='2' dies='1' cores='2' threads='1'/></cpu>"
		 "<os><type arch='x86_64'>hvm</type><kernel>/g.elf</kernel>"
		 "<cmdline>hz=100 verbose</cmdline></os><features><acpi/><apic/></features>"
		 "<on_poweroff>destroy</on_poweroff><on_crash>destroy</on_crash>"
		 "<devices><serial type='stdio'/></devices>"
		 "<metadata><other xmlns='urn:x'/><plugvm:plugvm "
		 "xmlns:plugvm='" DOMAIN_XML_PLUGVM_NS "'><plugvm:qmp path='unix:/tmp/q.sock'/>"
		 "<plugvm:chaos spec='seed=7'/></plugvm:plugvm></metadata>"
		 "<cputune><vcpupin vcpu='0' cpuset='1'/><vcpupin vcpu='2' cpuset='0-3,^1'/>"
		 "<emulatorpin cpuset='0'/><vcpusched vcpus='0,2' scheduler='fifo' "
		 "priority='5'/></cputune><memoryBacking><locked/></memoryBacking></domain>");
	assert_int_equal(l.ret, 0);
	assert_string_equal(l.cfg.name, "demo");
	assert_string_equal(l.cfg.uuid, "6f1c2a52-3d0e-4c7a-9a55-2f1b0b7d8e01");
	assert_true(l.cfg.mem_bytes == 1ull << 30);
	assert_int_equal(l.cfg.nr_cpus, 1); /* vCPU 0 boots, 3 then 2 are hot-added */
	assert_int_equal(l.cfg.max_cpus, 4);
	assert_int_equal(l.cfg.nr_start_hotplug, 2);
	assert_int_equal(l.cfg.start_hotplug[0], 3);
	assert_int_equal(l.cfg.start_hotplug[1], 2);
	assert_int_equal(l.cfg.topo.sockets, 2);
	assert_int_equal(l.cfg.topo.cores, 2);
	assert_string_equal(l.cfg.kernel_path, "/g.elf");
	assert_string_equal(l.cfg.cmdline, "hz=100 verbose");
	assert_string_equal(l.cfg.qmp_path, "/tmp/q.sock");
	assert_true(l.cfg.chaos.enabled && l.cfg.chaos.seed == 7);
	assert_true(l.cfg.rt.mlock);
	assert_true(l.cfg.rt.emulator_pinned && CPU_ISSET(0, &l.cfg.rt.emulator_cpus));
	assert_true(l.cfg.rt.vcpus[0].pinned && CPU_COUNT(&l.cfg.rt.vcpus[0].cpus) == 1 &&
		    CPU_ISSET(1, &l.cfg.rt.vcpus[0].cpus));
	assert_true(CPU_COUNT(&l.cfg.rt.vcpus[2].cpus) == 3 &&
		    !CPU_ISSET(1, &l.cfg.rt.vcpus[2].cpus));
	assert_false(l.cfg.rt.vcpus[1].pinned);
	assert_int_equal(l.cfg.rt.vcpus[2].policy, SCHED_FIFO);
	assert_int_equal(l.cfg.rt.vcpus[2].priority, 5);
	assert_int_equal(l.cfg.rt.vcpus[1].policy, SCHED_OTHER);
	config_free(&l.cfg);
}

static void test_vcpu_current_without_vcpus(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, HEAD "<vcpu current='2'>6</vcpu>" OS "</domain>");
	assert_int_equal(l.ret, 0);
	assert_int_equal(l.cfg.nr_cpus, 2);
	assert_int_equal(l.cfg.max_cpus, 6);
	assert_int_equal(l.cfg.nr_start_hotplug, 0);
	assert_true(l.cfg.mem_bytes == 128ull << 20);
	config_free(&l.cfg);
	/* libvirt's usual pair: <serial> and <console> on the same file. */
	load(&l, HEAD "<vcpu>1</vcpu>" OS "<devices><serial type='file'><source path='/tmp/s.log'/>"
		      "</serial><console type='file'><source path='/tmp/s.log'/></console>"
		      "</devices></domain>");
	assert_int_equal(l.ret, 0);
	assert_string_equal(l.cfg.console_path, "/tmp/s.log");
	config_free(&l.cfg);
}

static void test_refusals(void **state)
{
	static const struct {
		const char *xml, *want;
	} cases[] = {
		{ "<domain type='kvm'><name>x</name", "malformed XML" },
		{ "<network><name>x</name></network>", "root element is <network>" },
		{ "<domain type='xen'></domain>", "type='xen'" },
		{ HEAD "<vcpu>2</vcpu><os><type>hvm</type></os></domain>", "no <os><kernel>" },
		{ HEAD "<vcpu current='5'>4</vcpu>" OS "</domain>", "current is more than" },
		{ HEAD "<vcpu>0</vcpu>" OS "</domain>", "<vcpu>0</vcpu>" },
		{ HEAD "<vcpu>2</vcpu>" OS "<devices><disk type='file'/></devices></domain>",
		  "<devices><disk>" },
		{ HEAD "<vcpu>2</vcpu>" OS
		       "<devices><interface type='network'/></devices></domain>",
		  "<devices><interface>" },
		{ HEAD "<vcpu>2</vcpu>" OS "<devices><serial type='tcp'/></devices></domain>",
		  "<serial type='tcp'>" },
		{ HEAD "<vcpu>2</vcpu>" OS "<iothreads>2</iothreads></domain>", "<iothreads>" },
		{ HEAD "<vcpu>2</vcpu>" OS "<devices><serial type='file'/></devices></domain>",
		  "needs <source path=" },
		{ HEAD "<vcpu>2</vcpu>" OS
		       "<devices><serial type='file'><source path='/a'/></serial>"
		       "<console type='file'><source path='/b'/></console></devices></domain>",
		  "plugvm has one console" },
		{ "<domain type='kvm'><memory unit='parsec'>1</memory><vcpu>1</vcpu>" OS
		  "</domain>",
		  "unit='parsec'" },
		{ "<domain type='kvm'><memory unit='KiB'>1</memory><vcpu>1</vcpu>" OS "</domain>",
		  "outside" },
		{ "<domain type='kvm'><vcpu>1</vcpu>" OS "</domain>", "no <memory>" },
		{ HEAD OS "</domain>", "no <vcpu>" },
		{ HEAD "<vcpu current='1'>2</vcpu><vcpus><vcpu id='0' enabled='yes' "
		       "hotpluggable='no'/></vcpus>" OS "</domain>",
		  "lists 1 vCPUs" },
		{ HEAD "<vcpu current='1'>2</vcpu><vcpus><vcpu id='0' enabled='no'/><vcpu id='1' "
		       "enabled='yes' hotpluggable='no'/></vcpus>" OS "</domain>",
		  "vCPU 1 is enabled and not hotpluggable" },
		{ HEAD
		  "<vcpu current='1'>2</vcpu><vcpus><vcpu id='0' enabled='yes' hotpluggable='no'/>"
		  "<vcpu id='0' enabled='no'/></vcpus>" OS "</domain>",
		  "listed twice" },
		{ HEAD "<vcpu>4</vcpu><cpu><topology sockets='1' cores='3' threads='1'/></cpu>" OS
		       "</domain>",
		  "not the 4 vCPUs" },
		{ HEAD "<vcpu>2</vcpu>" OS
		       "<cputune><vcpupin vcpu='2' cpuset='0'/></cputune></domain>",
		  "<vcpupin vcpu='2'>" },
		{ HEAD "<vcpu>2</vcpu>" OS
		       "<cputune><vcpupin vcpu='0' cpuset='1-'/></cputune></domain>",
		  "cpuset='1-'" },
		{ HEAD "<vcpu>2</vcpu>" OS
		       "<cputune><vcpusched vcpus='0' scheduler='fifo'/></cputune>"
		       "</domain>",
		  "priority in 1..99" },
		{ HEAD "<vcpu>2</vcpu>" OS "<on_reboot>rename-restart</on_reboot></domain>",
		  "<on_reboot>rename-restart" },
		{ HEAD
		  "<vcpu>2</vcpu><os><type>hvm</type><kernel>/k</kernel><initrd>/i</initrd></os>"
		  "</domain>",
		  "<os><initrd>" },
		{ HEAD "<vcpu>2</vcpu>" OS "<metadata><p:plugvm xmlns:p='" DOMAIN_XML_PLUGVM_NS "'>"
		       "<p:qmp/></p:plugvm></metadata></domain>",
		  "needs path=" },
	};
	struct loaded l;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		load(&l, cases[i].xml);
		if (l.ret != -EINVAL || !strstr(l.err, cases[i].want))
			fail_msg("case %zu: ret %d, err '%s', want '%s'", i, l.ret, l.err,
				 cases[i].want);
		config_free(&l.cfg);
	}
}

/* HEAD..OS with `extra` in place of <name>t</name>, malloc'd. */
static char *with(const char *extra)
{
	static const char doc[] = HEAD "<vcpu>1</vcpu>" OS "</domain>";
	const char *name = strstr(doc, "<name>t</name>");
	char *out;

	assert_true(asprintf(&out, "%.*s%s%s", (int)(name - doc), doc, extra,
			     name + strlen("<name>t</name>")) > 0);
	return out;
}

/* `n` copies of `unit`, malloc'd. */
static char *repeat(const char *unit, size_t n)
{
	size_t len = strlen(unit);
	char *out = malloc(len * n + 1);

	assert_non_null(out);
	for (size_t i = 0; i < n; i++)
		memcpy(out + i * len, unit, len);
	out[len * n] = '\0';
	return out;
}

/* " a0='' a1='' ..." with `n` distinct attributes, malloc'd. */
static char *attrs(unsigned n)
{
	char *out = malloc(16 * n + 1), *p = out;

	assert_non_null(out);
	*p = '\0';
	for (unsigned i = 0; i < n; i++)
		p += sprintf(p, " a%u=''", i);
	return out;
}

/* `extra` (taken) in the document: accepted, or refused naming `want`. */
static void check(char *extra, const char *want)
{
	char *xml = with(extra);
	struct loaded l;

	load(&l, xml);
	if (want ? l.ret != -EINVAL || !strstr(l.err, want) : l.ret != 0)
		fail_msg("%.60s...: ret %d, err '%s', want '%s'", extra, l.ret, l.err,
			 want ? want : "accepted");
	config_free(&l.cfg);
	free(xml);
	free(extra);
}

/* Each bound of domain_xml.h is reached and accepted, and one past it refused. */
static void test_bounds(void **state)
{
	char *s, *t;

	(void)state;
	s = repeat("n", DOMAIN_XML_MAX_NAME);
	assert_true(asprintf(&t, "<name>%s</name>", s) > 0);
	check(t, NULL);
	assert_true(asprintf(&t, "<name>%sn</name>", s) > 0);
	check(t, "<name>: 252 bytes: not a domain name");
	free(s);
	check(strdup("<name>a&#10;b</name>"), "with a newline");
	check(strdup("<name></name>"), "<name>: 0 bytes");
	check(strdup("<uuid>c7a5fdbd-edaf-9455-926a-d65c16db1809</uuid>"), NULL);
	check(strdup("<uuid>c7a5fdbdedaf9455926ad65c16db1809</uuid>"), NULL);
	check(strdup("<uuid>c7a5fdbd-edaf-9455-926a-d65c16db180</uuid>"), "<uuid>: not a UUID");
	check(strdup("<uuid>c7a5fdbd-edaf-9455-926a-d65c16db1809-</uuid>"), "<uuid>: not a UUID");
	check(strdup("<uuid>c7a5fdbd-edaf-9455-926a-d65c16db180g</uuid>"), "<uuid>: not a UUID");

	s = attrs(DOMAIN_XML_MAX_ATTRS - 1);
	assert_true(asprintf(&t, "<name x=''%s>t</name>", s) > 0);
	check(t, NULL);
	assert_true(asprintf(&t, "<name x='' y=''%s>t</name>", s) > 0);
	check(t, "a tag with more than 32 attributes");
	free(s);
	/* Text after a tag's '>' is not counted (a <cmdline> of many key=value words). */
	s = repeat(" a=b", 2 * DOMAIN_XML_MAX_ATTRS);
	assert_true(asprintf(&t, "<name>t</name><description>%s</description>", s) > 0);
	free(s);
	check(t, NULL);

	s = repeat("<!---->", DOMAIN_XML_MAX_MARKUP);
	check(s, "more than 16384 tags");
	s = repeat("<a b='' c=''/>", DOMAIN_XML_MAX_ATTRS_TOTAL / 2 + 1);
	assert_true(asprintf(&t, "<name>t</name><metadata><o:x xmlns:o='urn:o'>%s</o:x></metadata>",
			     s) > 0);
	free(s);
	check(t, "more than 16384 attributes");

	/* No DTD of any kind, so no entity; a reference to an undeclared one is malformed. */
	check(strdup("<name>&e;</name>"), "malformed XML");
	s = with("<name>t</name>");
	assert_true(asprintf(&t, "<!DOCTYPE domain [<!ENTITY e 'x'>]>%s", s) > 0);
	free(s);
	{
		struct loaded l;

		load(&l, t);
		assert_int_equal(l.ret, -EINVAL);
		assert_contains(l.err, "<!DOCTYPE>: refused (plugvm reads no DTD and expands no "
				       "entities)");
		config_free(&l.cfg);
		free(t);
	}
}

/* A document of DOMAIN_XML_MAX_BYTES is read; one byte more is refused before parsing. */
static void test_document_size(void **state)
{
	char *doc = with("<name>t</name>"), *pad, *xml;
	size_t len = strlen(doc);
	struct loaded l;

	(void)state;
	pad = repeat(" ", DOMAIN_XML_MAX_BYTES - len);
	assert_true(asprintf(&xml, "%s%s", doc, pad) > 0);
	load(&l, xml);
	assert_int_equal(l.ret, 0);
	config_free(&l.cfg);
	free(xml);
	assert_true(asprintf(&xml, "%s%s ", doc, pad) > 0);
	load(&l, xml);
	assert_int_equal(l.ret, -EINVAL);
	assert_contains(l.err, "larger than the 1024 KiB a domain document may be");
	config_free(&l.cfg);
	free(xml);
	free(pad);
	free(doc);
}

static void test_missing_file(void **state)
{
	struct vm_config cfg;
	char err[256];

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(domain_xml_load(&cfg, "/nonexistent/d.xml", err, sizeof(err)), -ENOENT);
	assert_contains(err, "/nonexistent/d.xml");
	config_free(&cfg);
}

static void test_sizes(void **state)
{
	unsigned long long b;

	(void)state;
	assert_int_equal(domain_xml_parse_size("4", NULL, &b), 0);
	assert_true(b == 4096);
	assert_int_equal(domain_xml_parse_size("2", "MB", &b), 0);
	assert_true(b == 2000000);
	assert_int_equal(domain_xml_parse_size("3", "G", &b), 0);
	assert_true(b == 3ull << 30);
	assert_int_equal(domain_xml_parse_size("100", "bytes", &b), 0);
	assert_true(b == 100);
	assert_int_equal(domain_xml_parse_size("", "KiB", &b), -EINVAL);
	assert_int_equal(domain_xml_parse_size("1x", "KiB", &b), -EINVAL);
	assert_int_equal(domain_xml_parse_size("99999999999", "TiB", &b), -EINVAL);
}

static void test_cpuset(void **state)
{
	cpu_set_t s;

	(void)state;
	assert_int_equal(rt_parse_cpuset("0-3,^2,7", &s), 0);
	assert_int_equal(CPU_COUNT(&s), 4);
	assert_false(CPU_ISSET(2, &s));
	assert_true(CPU_ISSET(7, &s));
	assert_int_equal(rt_parse_cpuset("1", &s), 0);
	assert_int_equal(rt_parse_cpuset("^1", &s), -EINVAL); /* empty */
	assert_int_equal(rt_parse_cpuset("3-1", &s), -EINVAL);
	assert_int_equal(rt_parse_cpuset("1,", &s), -EINVAL);
	assert_int_equal(rt_parse_cpuset("a", &s), -EINVAL);
	assert_int_equal(rt_parse_cpuset("1024", &s), -EINVAL);
	assert_int_equal(rt_parse_cpuset("", &s), -EINVAL);
}

#define OS_MACHINE(m)                                       \
	"<vcpu>1</vcpu><os><type arch='x86_64' machine='" m \
	"'>hvm</type><kernel>/k.elf</kernel></os>"

/* Load a document whose <os><type> says `machine` (NULL: no attribute); its cfg.machine. */
static enum config_machine machine_of(const char *xml)
{
	struct loaded l;
	enum config_machine m;

	load(&l, xml);
	if (l.ret)
		fail_msg("%s", l.err);
	m = l.cfg.machine;
	config_free(&l.cfg);
	return m;
}

static void load_microvm(void *arg)
{
	struct loaded l;

	(void)arg;
	load(&l, HEAD OS_MACHINE("microvm") "</domain>");
	exit(l.ret == 0 && l.cfg.machine == MACHINE_PC ? 0 : 1);
}

/* QEMU's names select the layout; another is taken as pc, with a warning that says so. */
static void test_machine_types(void **state)
{
	char out[1024];

	(void)state;
	assert_int_equal(machine_of(HEAD "<vcpu>1</vcpu>" OS "</domain>"), MACHINE_PC);
	assert_int_equal(machine_of(HEAD OS_MACHINE("pc-i440fx-7.2") "</domain>"), MACHINE_PC);
	assert_int_equal(machine_of(HEAD OS_MACHINE("q35") "</domain>"), MACHINE_Q35);
	assert_int_equal(machine_of(HEAD OS_MACHINE("pc-q35-7.2") "</domain>"), MACHINE_Q35);
	assert_int_equal(machine_of(HEAD "<vcpu>1</vcpu><os><type arch='x86_64'>hvm</type>"
					 "<kernel>/k.elf</kernel></os></domain>"),
			 MACHINE_PC);
	assert_int_equal(unit_run_child(load_microvm, NULL, out, sizeof(out)), 0);
	assert_contains(out, "<os><type machine='microvm'>: plugvm presents QEMU's pc "
			     "(pc-i440fx-*) or q35 (pc-q35-*): taken as pc");
}

/* load(), with what it logged on stderr (its warnings) in `log`, NUL-terminated. */
static void load_logged(struct loaded *l, const char *xml, char *log, size_t size)
{
	char path[] = "/tmp/plugvm-test-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	fflush(stderr);
	assert_int_equal(dup2(fd, 2), 2);
	load(l, xml);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	n = pread(fd, log, size - 1, 0);
	close(fd);
	log[n > 0 ? n : 0] = '\0';
}

/*
 * What libvirt 9.0's `virsh dumpxml` writes for a running plugvm-able domain on pc (the
 * shapes of libvirt's tests/qemuxml2xmloutdata and of a live domain: ids, aliases,
 * addresses, the label libvirt applied, its implicit devices).
 */
#define DUMPXML_PC                                                                           \
	"<domain type='kvm' id='3'><name>dumped</name>"                                      \
	"<uuid>c7a5fdbd-edaf-9455-926a-d65c16db1809</uuid>"                                  \
	"<memory unit='KiB'>131072</memory><currentMemory unit='KiB'>131072</currentMemory>" \
	"<vcpu placement='static' current='1'>4</vcpu>"                                      \
	"<resource><partition>/machine</partition></resource>"                               \
	"<os><type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type>"                         \
	"<kernel>/usr/local/lib/plugvm/guest.elf</kernel><cmdline>hz=1000</cmdline>"         \
	"<boot dev='hd'/></os><features><acpi/><apic/></features>"                           \
	"<cpu mode='host-passthrough' check='none' migratable='on'/>"                        \
	"<clock offset='utc'/><on_poweroff>destroy</on_poweroff>"                            \
	"<on_reboot>restart</on_reboot><on_crash>destroy</on_crash>"                         \
	"<pm><suspend-to-mem enabled='no'/><suspend-to-disk enabled='no'/></pm>"             \
	"<devices><emulator>/usr/local/bin/plugvm-qemu</emulator>"                           \
	"<controller type='usb' index='0' model='none'><alias name='usb'/></controller>"     \
	"<controller type='pci' index='0' model='pci-root'><alias name='pci.0'/>"            \
	"</controller><serial type='pty'><source path='/dev/pts/3'/>"                        \
	"<target type='isa-serial' port='0'><model name='isa-serial'/></target>"             \
	"<alias name='serial0'/></serial><console type='pty' tty='/dev/pts/3'>"              \
	"<source path='/dev/pts/3'/><target type='serial' port='0'/>"                        \
	"<alias name='serial0'/></console>"                                                  \
	"<input type='mouse' bus='ps2'><alias name='input0'/></input>"                       \
	"<input type='keyboard' bus='ps2'><alias name='input1'/></input>"                    \
	"<audio id='1' type='none'/><memballoon model='none'><alias name='balloon0'/>"       \
	"</memballoon></devices>"                                                            \
	"<seclabel type='dynamic' model='dac' relabel='yes'><label>+64055:+64055</label>"    \
	"<imagelabel>+64055:+64055</imagelabel></seclabel></domain>"

static void test_dumpxml_output_boots_with_warnings_only(void **state)
{
	char log[4096];
	struct loaded l;

	(void)state;
	load_logged(&l, DUMPXML_PC, log, sizeof(log));
	assert_int_equal(l.ret, 0);
	assert_string_equal(l.cfg.name, "dumped");
	assert_int_equal(l.cfg.nr_cpus, 1);
	assert_int_equal(l.cfg.max_cpus, 4);
	assert_true(l.cfg.mem_bytes == 128ull << 20);
	assert_string_equal(l.cfg.kernel_path, "/usr/local/lib/plugvm/guest.elf");
	config_free(&l.cfg);
	/* What plugvm does not do but the guest does not need: one warning each. */
	assert_non_null(strstr(log, "<input>: ignored"));
	assert_non_null(strstr(log, "<seclabel>: ignored"));
	assert_non_null(strstr(log, "<serial type='pty'>"));
	assert_non_null(strstr(log, "<resource>: ignored"));
	/* What says there is none, as plugvm has none, and host-passthrough: no warning. */
	assert_null(strstr(log, "audio"));
	assert_null(strstr(log, "memballoon"));
	assert_null(strstr(log, "controller"));
	assert_null(strstr(log, "emulator"));
	assert_null(strstr(log, "<cpu"));

	/* q35's dumpxml: pcie-root is as silent as pci-root; its machine selects q35, silently. */
	load_logged(&l,
		    HEAD "<vcpu>1</vcpu><os><type arch='x86_64' machine='pc-q35-7.2'>hvm</type>"
			 "<kernel>/k.elf</kernel></os><devices><controller type='pci' index='0' "
			 "model='pcie-root'/><controller type='usb' index='0' model='none'/>"
			 "<audio id='1' type='none'/><memballoon model='none'/></devices></domain>",
		    log, sizeof(log));
	assert_int_equal(l.ret, 0);
	assert_int_equal(l.cfg.machine, MACHINE_Q35);
	config_free(&l.cfg);
	assert_null(strstr(log, "machine="));
	assert_null(strstr(log, "controller"));

	/* Real devices of the kinds plugvm need not act on: warned about, by name. */
	load_logged(&l,
		    HEAD "<vcpu cpuset='0-1'>1</vcpu>" OS "<cpu mode='custom' match='exact'>"
			 "<model fallback='forbid'>qemu64</model></cpu><devices>"
			 "<controller type='usb' index='0' model='piix3-uhci'/>"
			 "<controller type='ide' index='0'/><audio id='1' type='pulseaudio'/>"
			 "<memballoon model='virtio'/><video><model type='vga'/></video>"
			 "<watchdog model='itco' action='reset'/></devices></domain>",
		    log, sizeof(log));
	assert_int_equal(l.ret, 0);
	config_free(&l.cfg);
	assert_non_null(strstr(log, "<controller model='piix3-uhci'>: ignored"));
	assert_non_null(strstr(log, "<controller>: ignored"));
	assert_non_null(strstr(log, "<audio type='pulseaudio'>: ignored"));
	assert_non_null(strstr(log, "<memballoon model='virtio'>: ignored"));
	assert_non_null(strstr(log, "<video>: ignored"));
	assert_non_null(strstr(log, "<watchdog>: ignored"));
	assert_non_null(strstr(log, "<cpu mode='custom'>"));
	assert_non_null(strstr(log, "<vcpu cpuset='0-1'>: ignored"));
}

static void test_devices_plugvm_cannot_have_stay_errors(void **state)
{
	static const char *const devices[] = {
		"<disk type='file' device='disk'><source file='/x.img'/><target dev='vda'/></disk>",
		"<interface type='network'><source network='default'/></interface>",
		"<graphics type='vnc' port='-1' autoport='yes'/>",
		"<hostdev mode='subsystem' type='pci'/>",
		"<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>",
	};
	char xml[1024];
	struct loaded l;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		const char *name = devices[i] + 1;
		size_t len = strcspn(name, " >");

		snprintf(xml, sizeof(xml),
			 HEAD "<vcpu>1</vcpu>" OS "<devices>%s</devices></domain>", devices[i]);
		load(&l, xml);
		assert_int_equal(l.ret, -EINVAL);
		if (!strstr(l.err, "not supported by plugvm") || !strstr(l.err, "<devices><") ||
		    strncmp(strstr(l.err, "<devices><") + 10, name, len))
			fail_msg("%s: err '%s'", devices[i], l.err);
		config_free(&l.cfg);
	}
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_full_document), cmocka_unit_test(test_machine_types),
	  cmocka_unit_test(test_dumpxml_output_boots_with_warnings_only),
	  cmocka_unit_test(test_devices_plugvm_cannot_have_stay_errors),
	  cmocka_unit_test(test_vcpu_current_without_vcpus), cmocka_unit_test(test_refusals),
	  cmocka_unit_test(test_bounds), cmocka_unit_test(test_document_size),
	  cmocka_unit_test(test_missing_file), cmocka_unit_test(test_sizes),
	  cmocka_unit_test(test_cpuset))
