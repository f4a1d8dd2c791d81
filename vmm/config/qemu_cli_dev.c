// SPDX-License-Identifier: MIT
/*
 * plugvm-qemu's devices and backends (qemu_cli_internal.h): -device, -object, -chardev,
 * -serial, -machine, -cpu, and the resolution of what they name by id once the whole line is
 * read. A device driver plugvm does not model is refused with the domain XML element that
 * adds it; one nobody listed is refused too.
 */
#include "qemu_cli_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -device drivers by name prefix, and the element of the domain XML that makes libvirt add them. */
static const struct {
	const char *prefix;
	const char *element;
} device_elements[] = {
	{ "virtio-blk", "<disk>" },
	{ "virtio-scsi", "<controller type='scsi'> and <disk>" },
	{ "scsi-", "<disk bus='scsi'>" },
	{ "ide-", "<disk bus='ide'>" },
	{ "floppy", "<disk device='floppy'>" },
	{ "nvme", "<disk bus='nvme'>" },
	{ "usb-storage", "<disk bus='usb'>" },
	{ "lsi", "<controller type='scsi'>" },
	{ "virtio-net", "<interface>" },
	{ "e1000", "<interface>" },
	{ "rtl8139", "<interface>" },
	{ "vmxnet3", "<interface>" },
	{ "ne2k", "<interface>" },
	{ "virtio-balloon", "<memballoon> (use <memballoon model='none'/>)" },
	{ "piix3-usb", "<controller type='usb'> (use model='none')" },
	{ "piix4-usb", "<controller type='usb'> (use model='none')" },
	{ "ich9-usb", "<controller type='usb'> (use model='none')" },
	{ "qemu-xhci", "<controller type='usb'> (use model='none')" },
	{ "nec-usb-xhci", "<controller type='usb'> (use model='none')" },
	{ "usb-", "<input bus='usb'>, <hostdev>, <redirdev> or <controller type='usb'>" },
	{ "VGA", "<video> (use <model type='none'/>) and <graphics>" },
	{ "cirrus-vga", "<video> (use <model type='none'/>) and <graphics>" },
	{ "qxl", "<video> (use <model type='none'/>) and <graphics>" },
	{ "virtio-vga", "<video> (use <model type='none'/>)" },
	{ "virtio-gpu", "<video> (use <model type='none'/>)" },
	{ "bochs-display", "<video> (use <model type='none'/>)" },
	{ "ramfb", "<video> (use <model type='none'/>)" },
	{ "ich9-intel-hda", "<sound>" },
	{ "intel-hda", "<sound>" },
	{ "hda-", "<sound>" },
	{ "AC97", "<sound>" },
	{ "ES1370", "<sound>" },
	{ "sb16", "<sound>" },
	{ "tpm-", "<tpm>" },
	{ "i6300esb", "<watchdog>" },
	{ "ib700", "<watchdog>" },
	{ "virtio-rng", "<rng>" },
	{ "virtio-serial", "<channel> and <console type='virtio'>" },
	{ "virtserialport", "<channel>" },
	{ "virtconsole", "<console type='virtio'>" },
	{ "pvpanic", "<panic>" },
	{ "vhost-", "<vsock>, <filesystem> or <interface>" },
	{ "pci-bridge", "<controller type='pci'>" },
	{ "pcie-", "<controller type='pci'>" },
	{ "ioh3420", "<controller type='pci'>" },
	{ "vfio-", "<hostdev>" },
	{ "ivshmem", "<shmem>" },
	{ "pc-dimm", "<memory model='dimm'>" },
	{ "virtio-mem", "<memory model='virtio-mem'>" },
	{ "virtio-input", "<input>" },
	{ "virtio-keyboard", "<input>" },
	{ "virtio-mouse", "<input>" },
	{ "virtio-tablet", "<input>" },
	{ "virtio-iommu", "<iommu>" },
	{ "intel-iommu", "<iommu>" },
	{ "isa-parallel", "<parallel>" },
	{ "isa-debugcon", "<serial> of another kind" },
	{ "pci-serial", "<serial> with <target type='pci-serial'>" },
};

static enum config_status refuse_device(struct qcli *q, const char *drv)
{
	size_t i;

	if (strstr(drv, "-x86_64-cpu"))
		return qcli_fail(q,
				 "-device %s: vCPUs present at start come from -smp: give the "
				 "domain's <vcpus> hotpluggable='yes' entries enabled='no' and "
				 "add them with virsh setvcpus",
				 drv);
	for (i = 0; i < sizeof(device_elements) / sizeof(device_elements[0]); i++)
		if (!strncmp(drv, device_elements[i].prefix, strlen(device_elements[i].prefix)))
			return qcli_fail(q,
					 "-device %s: plugvm has no such device: remove %s "
					 "from the domain XML",
					 drv, device_elements[i].element);
	return qcli_fail(q,
			 "-device %s: unknown device driver: plugvm models only isa-serial "
			 "(remove the domain XML element that adds it)",
			 drv);
}

static enum config_status serial_on(struct qcli *q, const char *chardev)
{
	char *id;

	if (q->have_serial)
		return qcli_fail(q, "-device isa-serial: plugvm has one serial port: keep one "
				    "<serial> in the domain XML");
	id = strdup(chardev);
	if (!id)
		return qcli_fail(q, "out of memory");
	q->serial_chardev = id;
	q->have_serial = true;
	return CONFIG_RUN;
}

enum config_status qcli_device(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *drv, *chr, *index;

	if (qcli_opts(q, &o, val, "driver", "-device"))
		return CONFIG_ERROR;
	drv = qopts_take(&o, "driver");
	if (!drv) {
		qopts_free(&o);
		return qcli_fail(q, "-device %s: no driver", val);
	}
	if (strcmp(drv, "isa-serial")) {
		enum config_status st = refuse_device(q, drv);

		qopts_free(&o);
		return st;
	}
	chr = qopts_take(&o, "chardev");
	index = qopts_take(&o, "index");
	qopts_take(&o, "id");
	/* plugvm's one 16550 is COM1 (0x3f8, IRQ 4): index 0, where QEMU puts the first. */
	if (!chr || (index && strcmp(index, "0"))) {
		qopts_free(&o);
		return qcli_fail(q, "-device isa-serial: needs chardev=ID and index 0 (COM1: "
				    "<serial> with <target port='0'/>)");
	}
	if (serial_on(q, chr)) {
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	return qcli_done(q, &o, "-device isa-serial", NULL);
}

static enum config_status object_secret(struct qcli *q, struct qopts *o)
{
	const char *id = qopts_take(o, "id"), *file = qopts_take(o, "file");
	const char *data = qopts_take(o, "data"), *format = qopts_take(o, "format");

	/* libvirt's master key: plugvm decrypts nothing, so the key is never read. */
	qopts_take(o, "keyid");
	qopts_take(o, "iv");
	if (!id || !*id || !file == !data)
		return qcli_fail(q, "-object secret: needs id= and one of file= or data=");
	if (format && strcmp(format, "raw") && strcmp(format, "base64"))
		return qcli_fail(q, "-object secret: format=%s is not raw or base64", format);
	return CONFIG_RUN;
}

/* QEMU's size: plain bytes (as libvirt writes it) or a K/M/G/T suffix. 0 or -EINVAL. */
static int parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long n;
	size_t len = strlen(s);

	if (len && strspn(s, "0123456789") == len) {
		if (config_parse_uint(s, len, CONFIG_MAX_MEM_BYTES, &n))
			return -EINVAL;
		*out = n;
		return 0;
	}
	return config_parse_mem(s, out);
}

static enum config_status object_ram(struct qcli *q, struct qopts *o)
{
	const char *id = qopts_take(o, "id"), *size = qopts_take(o, "size");
	uint64_t bytes;
	char *copy;

	if (!id || !*id || !size)
		return qcli_fail(q, "-object memory-backend-ram: needs id= and size=");
	if (q->backend_id)
		return qcli_fail(q, "-object memory-backend-ram: plugvm has one RAM backend (no "
				    "<numa> cells, no <memory> devices)");
	if (parse_bytes(size, &bytes))
		return qcli_fail(q, "-object memory-backend-ram: bad size '%s'", size);
	copy = strdup(id);
	if (!copy)
		return qcli_fail(q, "out of memory");
	q->backend_id = copy;
	q->backend_bytes = bytes;
	return CONFIG_RUN;
}

enum config_status qcli_object(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *type;
	enum config_status st;

	if (qcli_opts(q, &o, val, "qom-type", "-object"))
		return CONFIG_ERROR;
	type = qopts_take(&o, "qom-type");
	if (type && !strcmp(type, "secret")) {
		st = object_secret(q, &o);
	} else if (type && !strcmp(type, "memory-backend-ram")) {
		st = object_ram(q, &o);
	} else {
		st = qcli_fail(q,
			       "-object %s: plugvm has no such object (only secret and "
			       "memory-backend-ram: remove <memoryBacking> sources, <rng>, "
			       "<iothreads>, TLS and the like)",
			       type ? type : val);
	}
	if (st) {
		qopts_free(&o);
		return st;
	}
	return qcli_done(q, &o, "-object", NULL);
}

struct qrefusal {
	const char *name;
	const char *why; /* what plugvm lacks and the XML element to remove */
};

/* Options plugvm cannot honour: refused before the guest starts. */
static const struct qrefusal refusals[] = {
	{ "drive", "plugvm has no block devices: remove <disk> from the domain XML" },
	{ "blockdev", "plugvm has no block devices: remove <disk> from the domain XML" },
	{ "cdrom", "plugvm has no block devices: remove <disk device='cdrom'>" },
	{ "hda", "plugvm has no block devices: remove <disk> from the domain XML" },
	{ "fda", "plugvm has no block devices: remove <disk device='floppy'>" },
	{ "netdev", "plugvm has no network devices: remove <interface> from the domain XML" },
	{ "net", "plugvm has no network devices: remove <interface> from the domain XML" },
	{ "nic", "plugvm has no network devices: remove <interface> from the domain XML" },
	{ "usb", "plugvm has no USB: add <controller type='usb' model='none'/> and remove "
		 "<input type='tablet' bus='usb'>" },
	{ "usbdevice", "plugvm has no USB: remove <input bus='usb'> and <hostdev>" },
	{ "vnc", "plugvm has no display: remove <graphics> from the domain XML" },
	{ "spice", "plugvm has no display: remove <graphics> from the domain XML" },
	{ "initrd", "plugvm boots a kernel without an initial RAM disk: remove <initrd>" },
	{ "no-acpi", "plugvm needs ACPI for CPU hotplug: add <features><acpi/></features>" },
	{ "bios", "plugvm boots -kernel directly: remove <loader>" },
	{ "incoming", "plugvm cannot migrate" },
	{ "loadvm", "plugvm has no snapshots" },
	{ "numa", "plugvm has no NUMA: remove <numa> from <cpu>" },
	{ "mem-path", "plugvm has anonymous RAM only: remove <hugepages> from <memoryBacking>" },
	{ "mem-prealloc", "plugvm has no preallocation: remove <allocation mode='immediate'/>" },
	{ "fsdev", "plugvm has no file sharing: remove <filesystem>" },
	{ "virtfs", "plugvm has no file sharing: remove <filesystem>" },
	{ "watchdog", "plugvm has no watchdog device: remove <watchdog>" },
	{ "tpmdev", "plugvm has no TPM: remove <tpm>" },
	{ "soundhw", "plugvm has no sound: remove <sound>" },
	{ "parallel", "plugvm has no parallel port: remove <parallel>" },
	{ "iscsi", "plugvm has no block devices: remove <disk>" },
	{ "semihosting", "not an x86 option" },
	{ "enable-fips", "plugvm has no FIPS mode" },
	{ "runas", "plugvm-qemu has no -runas: libvirt's <seclabel> drops privileges itself" },
	{ "chroot", "plugvm-qemu has no -chroot" },
};

const char *qcli_refusal(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (!strcmp(name, refusals[i].name))
			return refusals[i].why;
	return NULL;
}

struct qchardev *qcli_find_chardev(struct qcli *q, const char *id)
{
	unsigned i;

	for (i = 0; i < q->nr_chardevs; i++)
		if (!strcmp(q->chardevs[i].id, id))
			return &q->chardevs[i];
	return NULL;
}

static enum config_status add_chardev(struct qcli *q, const char *id, enum qchardev_kind kind,
				      const char *path, int fd, bool append)
{
	struct qchardev *c;
	char *id_copy, *path_copy;

	if (!id || !*id)
		return qcli_fail(q, "-chardev: needs id=");
	if (qcli_find_chardev(q, id))
		return qcli_fail(q, "-chardev: id '%s' given twice", id);
	if (q->nr_chardevs == QCLI_MAX_CHARDEVS)
		return qcli_fail(q, "-chardev: more than %d", QCLI_MAX_CHARDEVS);
	id_copy = strdup(id);
	path_copy = path ? strdup(path) : NULL;
	if (!id_copy || (path && !path_copy)) {
		free(id_copy);
		free(path_copy);
		return qcli_fail(q, "out of memory");
	}
	c = &q->chardevs[q->nr_chardevs];
	c->id = id_copy;
	c->path = path_copy;
	c->kind = kind;
	c->fd = fd;
	c->append = append;
	q->nr_chardevs++;
	return CONFIG_RUN;
}

/* socket: a listening server, on an inherited fd= or a path= plugvm binds. */
static enum config_status chardev_socket(struct qcli *q, struct qopts *o, const char *id)
{
	const char *fd = qopts_take(o, "fd"), *path = qopts_take(o, "path");
	const char *server = qopts_take(o, "server"), *wait = qopts_take(o, "wait");
	const char *nowait = qopts_take(o, "nowait");
	bool srv = false, w = false;
	int n = -1;

	if (!server || qcli_bool(server, &srv) || !srv || (wait && (qcli_bool(wait, &w) || w)) ||
	    (nowait && strcmp(nowait, "on")))
		return qcli_fail(q,
				 "-chardev socket,id=%s: plugvm listens and never waits: "
				 "server=on,wait=off",
				 id ? id : "");
	if (!fd == !path)
		return qcli_fail(q,
				 "-chardev socket,id=%s: needs one of fd= or path=", id ? id : "");
	if (path && (!*path || strlen(path) > CONFIG_MAX_QMP_PATH))
		return qcli_fail(q, "-chardev socket: path '%s' is empty or over %d bytes", path,
				 CONFIG_MAX_QMP_PATH);
	if (fd && qcli_keep_fd(q, "-chardev socket", fd, &n))
		return CONFIG_ERROR;
	return add_chardev(q, id, QCHR_SOCKET, path, n, false);
}

enum config_status qcli_chardev(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *be, *id;
	enum config_status st;
	bool b = false;

	if (qcli_opts(q, &o, val, "backend", "-chardev"))
		return CONFIG_ERROR;
	be = qopts_take(&o, "backend");
	id = qopts_take(&o, "id");
	if (qopts_take(&o, "logfile") || qopts_take(&o, "logappend")) {
		st = qcli_fail(q,
			       "-chardev %s: logfile= is not supported: remove <log> from the "
			       "<serial>/<console> element",
			       id ? id : val);
	} else if (!be) {
		st = qcli_fail(q, "-chardev %s: no backend", val);
	} else if (!strcmp(be, "socket")) {
		st = chardev_socket(q, &o, id);
	} else if (!strcmp(be, "file")) {
		const char *path = qopts_take(&o, "path"), *app = qopts_take(&o, "append");

		if (!path || !*path || (app && qcli_bool(app, &b)))
			st = qcli_fail(q, "-chardev file,id=%s: needs path= (append=on|off)",
				       id ? id : "");
		else
			st = add_chardev(q, id, QCHR_FILE, path, -1, b);
	} else if (!strcmp(be, "pty") || !strcmp(be, "null")) {
		st = add_chardev(q, id, be[0] == 'p' ? QCHR_PTY : QCHR_NULL, NULL, -1, false);
	} else if (!strcmp(be, "stdio")) {
		const char *sig = qopts_take(&o, "signal");

		st = sig && qcli_bool(sig, &b) ? qcli_fail(q, "-chardev stdio: signal=on|off")
					       : add_chardev(q, id, QCHR_STDIO, NULL, -1, false);
	} else {
		st = qcli_fail(q,
			       "-chardev %s: plugvm's chardevs are socket (server), file, pty, "
			       "stdio and null: change the <serial>/<console> type",
			       be);
	}
	if (st) {
		qopts_free(&o);
		return st;
	}
	return qcli_done(q, &o, "-chardev", NULL);
}

enum config_status qcli_serial(struct qcli *q, const char *val)
{
	static const char id[] = "serial0";
	enum config_status st;

	if (q->have_serial)
		return qcli_fail(q,
				 "-serial %s: plugvm has one serial port: keep one <serial> in "
				 "the domain XML",
				 val);
	if (!strcmp(val, "none")) {
		q->have_serial = true;
		return CONFIG_RUN;
	}
	if (!strncmp(val, "chardev:", 8))
		return serial_on(q, val + 8);
	if (!strncmp(val, "file:", 5) && val[5])
		st = add_chardev(q, id, QCHR_FILE, val + 5, -1, false);
	else if (!strcmp(val, "stdio"))
		st = add_chardev(q, id, QCHR_STDIO, NULL, -1, false);
	else if (!strcmp(val, "pty"))
		st = add_chardev(q, id, QCHR_PTY, NULL, -1, false);
	else if (!strcmp(val, "null"))
		st = add_chardev(q, id, QCHR_NULL, NULL, -1, false);
	else
		return qcli_fail(q,
				 "-serial %s: plugvm takes file:PATH, stdio, pty, null, none "
				 "or chardev:ID",
				 val);
	return st ? st : serial_on(q, id);
}

/* accel=kvm, or a list naming kvm ("kvm:tcg": QEMU takes the first that works). */
static bool accel_has_kvm(const char *a)
{
	size_t n;

	for (; *a; a += n + (a[n] == ':')) {
		n = strcspn(a, ":");
		if (n == 3 && !strncmp(a, "kvm", 3))
			return true;
	}
	return false;
}

static enum config_status machine_keys(struct qcli *q, struct qopts *o)
{
	const char *usb = qopts_take(o, "usb"), *accel = qopts_take(o, "accel");
	const char *be = qopts_take(o, "memory-backend"), *acpi = qopts_take(o, "acpi");
	static const char *const bools[] = { "dump-guest-core", "mem-merge" };
	static const char *const offs[] = { "vmport", "hpet", "smm", "graphics" };
	bool b;
	size_t i;

	if (usb && (qcli_bool(usb, &b) || b))
		return qcli_fail(q,
				 "-machine usb=%s: plugvm has no USB: add <controller "
				 "type='usb' model='none'/>",
				 usb);
	if (acpi && (qcli_bool(acpi, &b) || !b))
		return qcli_fail(q,
				 "-machine acpi=%s: plugvm needs ACPI for CPU hotplug: add "
				 "<features><acpi/></features>",
				 acpi);
	if (accel && !accel_has_kvm(accel))
		return qcli_fail(q,
				 "-machine accel=%s: plugvm runs on KVM only: use <domain "
				 "type='kvm'>",
				 accel);
	for (i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		const char *v = qopts_take(o, bools[i]);

		if (v && qcli_bool(v, &b))
			return qcli_fail(q, "-machine %s=%s: not on or off", bools[i], v);
	}
	/* Devices plugvm's machine never has: asking for them off is asking for what is. */
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		const char *v = qopts_take(o, offs[i]);

		if (v && strcmp(v, "off") && strcmp(v, "auto"))
			return qcli_fail(q,
					 "-machine %s=%s: plugvm's machine has no %s: remove "
					 "it from <features>/<clock>",
					 offs[i], v, offs[i]);
	}
	if (be) {
		char *copy = strdup(be);

		if (!copy)
			return qcli_fail(q, "out of memory");
		free(q->machine_backend); /* the last -machine's, as QEMU */
		q->machine_backend = copy;
	}
	return CONFIG_RUN;
}

enum config_status qcli_machine(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *type;

	if (qcli_opts(q, &o, val, "type", "-machine"))
		return CONFIG_ERROR;
	type = qopts_take(&o, "type");
	/* pc and pc-i440fx-*: PIIX4's ACPI ports; q35 and pc-q35-*: ICH9's (acpi_layout.c). */
	if (type && strcmp(type, "none") && config_parse_machine_type(type, &q->cfg->machine)) {
		qcli_fail(q,
			  "-machine %s: plugvm builds pc (i440fx) and q35 machines only: use "
			  "<type machine='pc'>",
			  type);
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	if (type)
		q->cfg->machine_none = !strcmp(type, "none");
	if (machine_keys(q, &o)) {
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	return qcli_done(q, &o, "-machine", NULL);
}

enum config_status qcli_cpu(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *model, *mig, *ac;
	bool b;

	if (qcli_opts(q, &o, val, "model", "-cpu"))
		return CONFIG_ERROR;
	model = qopts_take(&o, "model");
	if (!model || strcmp(model, "host")) {
		qcli_fail(q,
			  "-cpu %s: plugvm passes the host CPU through: use <cpu "
			  "mode='host-passthrough'>",
			  model ? model : val);
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	mig = qopts_take(&o, "migratable");
	ac = qopts_take(&o, "arch-capabilities");
	/* plugvm never migrates; arch-capabilities=off clears CPUID.7.0:EDX[29] (cpuid.c). */
	if ((mig && qcli_bool(mig, &b)) || (ac && (qcli_bool(ac, &b) || b))) {
		qopts_free(&o);
		return qcli_fail(q, "-cpu host: migratable=on|off and arch-capabilities=off only");
	}
	if (ac)
		q->cfg->cpu_no_arch_caps = true;
	return qcli_done(q, &o, "-cpu host",
			 "plugvm's CPUID is its own: remove <feature> elements from <cpu>");
}
