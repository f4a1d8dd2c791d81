// SPDX-License-Identifier: MIT
/* The ACPI CPU hotplug driver (see acpi_hotplug.h). */
#include "drivers/acpi_hotplug.h"

#include "arch.h"
#include "drivers/acpi_cpu_hotplug.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/errno.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/watchdog.h"
#include "plugvm_abi.h"
#include "plugvm_hotplug.h"

CMDLINE_PARAM(remove, .name = "acpi_hotplug.remove", .kind = CMDLINE_ENUM,
	      .choices = "allow|refuse|ignore");
/* acpi_hotplug.pv=0: the ACPI block even where plugvm offers its paravirt port. */
CMDLINE_PARAM(pv, .name = "acpi_hotplug.pv", .kind = CMDLINE_UINT, .max = 1);

#define GPE_CPU_HOTPLUG 0x04 /* GPE0 bit 2 */

/* _OST source events and status codes (ACPI 6.x, 6.3.5). */
#define OST_EV_DEVICE_CHECK  0x01
#define OST_EV_EJECT_REQUEST 0x03
#define OST_SUCCESS	     0x00
#define OST_FAILURE	     0x01

#define HOTPLUG_THREAD_PRIO 60

static struct thread *hp_thread_ptr;
/* The watchdog's view: an SCI not yet taken by the thread, a request not yet finished. */
static struct watchdog_op sci_op, request_op;
static volatile int sci_pending;
static uint32_t gpe_sts_port, gpe_en_port;
static unsigned long nr_sci;
static unsigned long nr_events;

unsigned long acpi_hotplug_events(void)
{
	return __atomic_load_n(&nr_events, __ATOMIC_ACQUIRE);
}

#define PM1_PWRBTN   0x0100 /* PM1 status / enable bit 8 */
#define GED_PWR_DOWN 0x02 /* QEMU's GED event bit for the power button (ACPI_GED_PWR_DOWN_EVT) */

static bool have_block; /* a CPU hotplug block answered the probe */
static bool have_pv; /* plugvm's paravirt port listens for us instead (plugvm_hotplug.h) */
static uint32_t pm1_sts_port, pm1_en_port;
static volatile uint32_t *ged_sel; /* GED event selector (read clears), hardware-reduced */
static volatile int powerdown_pending;

static void ged_irq(unsigned vector, void *arg)
{
	(void)vector;
	(void)arg;
	nr_sci++;
	/* Reading the selector clears it: only the power button is ours (no CPU hotplug here). */
	if (*ged_sel & GED_PWR_DOWN) {
		__atomic_store_n(&powerdown_pending, 1, __ATOMIC_RELEASE);
		thread_wake(hp_thread_ptr);
	}
}

static void sci_irq(unsigned vector, void *arg)
{
	(void)vector;
	(void)arg;
	nr_sci++;
	/* The power button (QMP system_powerdown): the thread powers off. */
	if (pm1_sts_port && (inw((uint16_t)pm1_sts_port) & PM1_PWRBTN)) {
		outw((uint16_t)pm1_sts_port, PM1_PWRBTN);
		__atomic_store_n(&powerdown_pending, 1, __ATOMIC_RELEASE);
		thread_wake(hp_thread_ptr);
	}
	/* Write-1-to-clear drops the level SCI; anything else pending is not ours. */
	if (gpe_sts_port && (inb((uint16_t)gpe_sts_port) & GPE_CPU_HOTPLUG)) {
		outb((uint16_t)gpe_sts_port, GPE_CPU_HOTPLUG);
		watchdog_op_begin(&sci_op, 0, "acpi-hotplug: a CPU hotplug SCI (thread not woken)",
				  0, 0);
		__atomic_store_n(&sci_pending, 1, __ATOMIC_RELEASE);
		thread_wake(hp_thread_ptr);
	}
	/* Spurious (nothing latched): tolerated, nothing to do. */
}

/* plugvm's hotplug report (plugvm_abi.h), when its CPUID leaf offers it. */
static bool have_report;
static struct plugvm_hotplug_report report __attribute__((aligned(8)));

/* Only the hotplug thread reports: one buffer is enough. The kernel is identity-mapped. */
static void send_report(int cpu, uint32_t op, int result, uint64_t ns)
{
	if (!have_report || cpu < 0)
		return;
	report.apic_id = cpu_apic_ids[cpu];
	report.op = op;
	report.result = result;
	report.reserved = 0;
	report.guest_ns = ns;
	outl(PLUGVM_PORT_HOTPLUG_REPORT, (uint32_t)(uintptr_t)&report);
}

/*
 * The paravirt port's command (plugvm_hotplug.h) and events area: only the hotplug thread
 * (and the boot thread before it exists) uses them. The kernel is identity-mapped below
 * 4 GiB, so their addresses are guest-physical.
 */
static struct plugvm_hotplug_cmd pv_cmd __attribute__((aligned(8)));
static struct plugvm_hotplug_events pv_events __attribute__((aligned(8)));

/* One OUT: `c` to the paravirt port; plugvm's status. */
static uint32_t pv_command(const struct plugvm_hotplug_cmd *c)
{
	pv_cmd = *c;
	outl(PLUGVM_PORT_HOTPLUG_PV, (uint32_t)(uintptr_t)&pv_cmd);
	return __atomic_load_n(&pv_cmd.status, __ATOMIC_ACQUIRE);
}

/*
 * The event for `slot` is handled: through the paravirt port one command is _OST, eject
 * (a removal done) and report; through the ACPI block, _OST, then the eject, then the
 * report. What the host waits for comes first either way.
 */
static void done(uint32_t slot, int cpu, uint32_t op, int err, uint64_t ns)
{
	if (have_pv) {
		struct plugvm_hotplug_cmd c = { .cmd = PLUGVM_HOTPLUG_CMD_DONE,
						.apic_id = slot,
						.op = op,
						.result = err,
						.guest_ns = ns };

		if (pv_command(&c) != PLUGVM_HOTPLUG_OK)
			pr_warn("acpi-hotplug: slot %u: plugvm refused the report (status %u)\n",
				slot, pv_cmd.status);
		return;
	}
	if (op == PLUGVM_HOTPLUG_OP_ONLINE) {
		acpi_cpu_hotplug_ost(slot, OST_EV_DEVICE_CHECK, err ? OST_FAILURE : OST_SUCCESS);
	} else if (!err) {
		acpi_cpu_hotplug_ost(slot, OST_EV_EJECT_REQUEST, OST_SUCCESS);
		acpi_cpu_hotplug_eject(slot); /* the hypervisor may stop the vCPU now */
	} else {
		acpi_cpu_hotplug_ost(slot, OST_EV_EJECT_REQUEST, OST_FAILURE);
	}
	send_report(cpu, op, err, ns);
}

static void insert(uint32_t slot, int cpu)
{
	uint64_t t0 = arch_now_ns();
	int err = -ENODEV; /* an APIC ID the MADT does not list */

	if (!have_pv)
		acpi_cpu_hotplug_clear_insert(slot);
	watchdog_op_begin(&request_op, 0, "acpi-hotplug: bring-up of cpu %ld (slot %ld)", cpu,
			  slot);
	if (cpu >= 0) {
		cpumask_set(&cpu_present_mask, (unsigned)cpu);
		err = cpu_up((unsigned)cpu);
		if (err)
			cpumask_clear(&cpu_present_mask, (unsigned)cpu);
	}
	t0 = arch_now_ns() - t0;
	/* What the host waits for first; the console line comes after it. */
	done(slot, cpu, PLUGVM_HOTPLUG_OP_ONLINE, err, t0);
	printk("acpi-hotplug: slot %u: cpu %d %s (%d)\n", slot, cpu,
	       err ? "failed to come up" : "online", err);
	watchdog_op_end(&request_op);
}

/*
 * `acpi_hotplug.remove=`: allow (default), refuse (answer every request with a failure),
 * ignore (acknowledge and do nothing: the hypervisor's timeout is what answers).
 */
enum remove_policy { REMOVE_ALLOW, REMOVE_REFUSE, REMOVE_IGNORE };
static enum remove_policy remove_policy;

static void remove(uint32_t slot, int cpu)
{
	uint64_t t0;
	int err;

	if (remove_policy == REMOVE_IGNORE) {
		if (!have_pv)
			acpi_cpu_hotplug_clear_remove(slot);
		printk("acpi-hotplug: slot %u: removal request ignored (policy)\n", slot);
		return;
	}
	t0 = arch_now_ns();
	watchdog_op_begin(&request_op, 0, "acpi-hotplug: removal of cpu %ld (slot %ld) to eject",
			  cpu, slot);
	/* Never the boot CPU (or an unknown one); -EPERM is the -1 the host has always seen. */
	err = cpu <= 0 || remove_policy == REMOVE_REFUSE ? -EPERM : cpu_down((unsigned)cpu);
	if (!have_pv)
		acpi_cpu_hotplug_clear_remove(slot);
	t0 = arch_now_ns() - t0;
	if (!err)
		cpumask_clear(&cpu_present_mask, (unsigned)cpu);
	/* What the host waits for first; the console line comes after it. */
	done(slot, cpu, PLUGVM_HOTPLUG_OP_OFFLINE, err, t0);
	printk("acpi-hotplug: slot %u: cpu %d %s (%d)\n", slot, cpu,
	       err ? "refused to go" : "offline, ejecting", err);
	watchdog_op_end(&request_op);
}

/* Every slot with an event, until none is left (events that arrive meanwhile included). */
static void handle_events(void)
{
	int slot;

	while ((slot = acpi_cpu_hotplug_next_event(0)) >= 0) {
		uint8_t f = acpi_cpu_hotplug_slot_flags((uint32_t)slot);
		int cpu = cpu_from_apic_id(acpi_cpu_hotplug_slot_apic_id((uint32_t)slot));

		/*
		 * Taken: an SCI that came for this event is answered now, not when the pass ends.
		 * A client sending requests back to back keeps us in this loop; the watch stayed
		 * on and reported a false "stuck" once the stream outlasted its bound. A slow
		 * event is request_op's to report.
		 */
		watchdog_op_end(&sci_op);

		if (f & ACPI_CPU_HOTPLUG_INSERT)
			insert((uint32_t)slot, cpu);
		else if (f & ACPI_CPU_HOTPLUG_REMOVE)
			remove((uint32_t)slot, cpu);
		__atomic_add_fetch(&nr_events, 1, __ATOMIC_RELEASE);
	}
}

/*
 * The paravirt port: one claim reads every pending event (and every present slot) into
 * pv_events; inserts are handled before removals. `reconcile_present`: also bring up present
 * slots the kernel does not have (inserted before the driver listened), as reconcile() does
 * for the ACPI block.
 */
static void handle_pv_events(bool reconcile_present)
{
	unsigned w;

	if (inl(PLUGVM_PORT_HOTPLUG_PV) == ~0u) {
		pr_warn("acpi-hotplug: plugvm's paravirt port answered no claim\n");
		return;
	}
	watchdog_op_end(&sci_op); /* taken: see handle_events() */
	for (w = 0; w < PLUGVM_HOTPLUG_WORDS; w++) {
		uint64_t ins = pv_events.insert[w], rem = pv_events.remove[w];
		uint64_t found = reconcile_present ? pv_events.present[w] & ~ins : 0;

		/* Set bits only: a claim costs the words, not the slots. */
		while (found | ins) {
			unsigned b = (unsigned)__builtin_ctzll(found | ins);
			uint32_t slot = w * 64 + b;
			int cpu = cpu_from_apic_id(slot);

			if (ins >> b & 1) {
				insert(slot, cpu);
				__atomic_add_fetch(&nr_events, 1, __ATOMIC_RELEASE);
			} else if (cpu >= 0 && !cpumask_test(&cpu_present_mask, (unsigned)cpu)) {
				printk("acpi-hotplug: slot %u: cpu %d inserted before the driver "
				       "started\n",
				       slot, cpu);
				insert(slot, cpu);
				__atomic_add_fetch(&nr_events, 1, __ATOMIC_RELEASE);
			}
			found &= ~(1ull << b);
			ins &= ~(1ull << b);
		}
		while (rem) {
			unsigned b = (unsigned)__builtin_ctzll(rem);

			remove(w * 64 + b, cpu_from_apic_id(w * 64 + b));
			__atomic_add_fetch(&nr_events, 1, __ATOMIC_RELEASE);
			rem &= ~(1ull << b);
		}
	}
}

/*
 * plugvm's notification (an MSI, VEC_PV_HOTPLUG): the thread claims. The flag is what counts:
 * the thread tests it before it first sleeps, so one set before acpi_hotplug_start() made
 * the thread (or when none could be made) is not lost and no wake-up is owed.
 */
static void pv_irq(unsigned vector, void *arg)
{
	(void)vector;
	(void)arg;
	nr_sci++;
	watchdog_op_begin(&sci_op, 0, "acpi-hotplug: a paravirt notification (thread not woken)", 0,
			  0);
	__atomic_store_n(&sci_pending, 1, __ATOMIC_RELEASE);
	if (hp_thread_ptr)
		thread_wake(hp_thread_ptr);
}

/* LISTEN on the paravirt port (plugvm_hotplug.h): 0, or -EIO when plugvm refused. */
static int pv_listen(void)
{
	struct plugvm_hotplug_cmd c = { .cmd = PLUGVM_HOTPLUG_CMD_LISTEN,
					.area = (uint64_t)(uintptr_t)&pv_events,
					.vector = VEC_PV_HOTPLUG,
					.dest_apic_id = cpu_apic_ids[0] };
	uint32_t status;

	if (cpu_apic_ids[0] > 255 || arch_set_irq_handler(VEC_PV_HOTPLUG, pv_irq, NULL))
		return -EINVAL;
	status = pv_command(&c);
	if (status != PLUGVM_HOTPLUG_OK) {
		pr_warn("acpi-hotplug: plugvm refused LISTEN (status %u): ACPI block instead\n",
			status);
		return -EIO;
	}
	return 0;
}

/*
 * CPUs inserted before the driver listened (a paused start with device_add, a device_add
 * during boot, or one made while QEMU's block was still in legacy mode, which leaves no
 * insert event: specs §1.3): present in the block, absent from the kernel's present mask.
 * Each is brought up as if its insert event had just arrived. Boot thread, at driver start.
 */
static void reconcile(void)
{
	const struct acpi_info *ai = acpi_get_info();
	unsigned slot;

	for (slot = 0; slot < ai->nr_cpus; slot++) {
		int cpu;

		if (!(acpi_cpu_hotplug_slot_flags(slot) & ACPI_CPU_HOTPLUG_ENABLED))
			continue;
		cpu = cpu_from_apic_id(acpi_cpu_hotplug_slot_apic_id(slot));
		if (cpu < 0 || cpumask_test(&cpu_present_mask, (unsigned)cpu))
			continue;
		printk("acpi-hotplug: slot %u: cpu %d inserted before the driver started\n", slot,
		       cpu);
		insert(slot, cpu);
		__atomic_add_fetch(&nr_events, 1, __ATOMIC_RELEASE);
	}
}

static int hotplug_thread(void *arg)
{
	(void)arg;
	for (;;) {
		thread_prepare_sleep();
		if (!__atomic_exchange_n(&sci_pending, 0, __ATOMIC_ACQ_REL) &&
		    !__atomic_load_n(&powerdown_pending, __ATOMIC_ACQUIRE)) {
			thread_sleep();
			continue;
		}
		thread_cancel_sleep();
		watchdog_op_end(&sci_op);
		if (__atomic_load_n(&powerdown_pending, __ATOMIC_ACQUIRE)) {
			printk("acpi: power button: powering off\n");
			arch_poweroff(0);
		}
		if (have_pv)
			handle_pv_events(false);
		else if (have_block)
			handle_events();
	}
	return 0;
}

static void parse_remove_policy(void)
{
	size_t len;
	const char *p = cmdline_value("acpi_hotplug.remove", &len);

	if (p && len == 6 && !memcmp(p, "refuse", 6))
		remove_policy = REMOVE_REFUSE;
	else if (p && len == 6 && !memcmp(p, "ignore", 6))
		remove_policy = REMOVE_IGNORE;
	else if (p && !(len == 5 && !memcmp(p, "allow", 5)))
		pr_warn("acpi-hotplug: acpi_hotplug.remove=%.*s: not allow/refuse/ignore\n",
			(int)len, p);
}

/* The power button's source: PM1 (fixed hardware), the GED (hardware-reduced), or none. */
static const char *arm_power_button(const struct acpi_info *ai)
{
	if (ai->fadt_flags & PLUGVM_ACPI_FADT_HW_REDUCED) {
		if (!ai->have_ged || !ai->ged_evt_sel || ai->ged_evt_sel >= (1ull << 32))
			return NULL;
		ged_sel = (volatile uint32_t *)(uintptr_t)ai->ged_evt_sel; /* identity-mapped */
		arch_request_irq(ai->ged_gsi, ai->ged_level, ai->ged_active_low, ged_irq, NULL);
		/* An edge sent before we listened is gone; its selector bit is not. */
		ged_irq(0, NULL);
		return "GED";
	}
	if (!ai->pm1a_evt_blk || ai->pm1_evt_len < 4)
		return NULL;
	pm1_sts_port = ai->pm1a_evt_blk;
	pm1_en_port = ai->pm1a_evt_blk + ai->pm1_evt_len / 2u;
	/*
	 * A press latched before we listened (`virsh shutdown` during boot) stays latched: the
	 * level SCI fires as soon as it is enabled, and the guest powers off then.
	 */
	outw((uint16_t)pm1_en_port, inw((uint16_t)pm1_en_port) | PM1_PWRBTN);
	return "PM1";
}

int acpi_hotplug_start(void)
{
	const struct acpi_info *ai = acpi_get_info();
	const char *machine, *button;
	uint16_t layout;

	if (!ai->have_fadt) {
		pr_warn("acpi-hotplug: no FADT: no power button, no CPU hotplug\n");
		return -ENODEV;
	}
	parse_remove_policy();
	have_report = arch_plugvm_feature(PLUGVM_FEATURE_HOTPLUG_REPORT);
	layout = acpi_cpu_hotplug_layout(ai, &machine);
	if (ai->fadt_flags & PLUGVM_ACPI_FADT_HW_REDUCED) /* said once, here */
		printk("acpi-hotplug: hardware-reduced ACPI: no CPU hotplug on this machine\n");
	else if (!layout || !ai->have_madt)
		pr_warn("acpi-hotplug: GPE0 %#x (%u bytes): no known CPU hotplug layout: CPU "
			"hotplug off\n",
			ai->gpe0_blk, ai->gpe0_blk_len);
	else if (arch_plugvm_feature(PLUGVM_FEATURE_HOTPLUG_PV) &&
		 cmdline_uint("acpi_hotplug.pv", 1) && !pv_listen())
		have_pv = true;
	else if (acpi_cpu_hotplug_probe())
		pr_warn("acpi-hotplug: no CPU hotplug block at %#x (%s): CPU hotplug off\n", layout,
			machine);
	else
		have_block = true;
	/*
	 * Before the thread and the SCI exist, on this (boot) thread: whatever runs after the
	 * driver's start (self-tests, `halt`) sees these CPUs online. Events that arrive
	 * meanwhile stay latched for the thread.
	 */
	if (have_pv)
		handle_pv_events(true);
	else if (have_block)
		reconcile();
	hp_thread_ptr = thread_run("acpi-hotplug", hotplug_thread, NULL, HOTPLUG_THREAD_PRIO, 0);
	if (!hp_thread_ptr)
		return -ENOMEM;
	if (!(ai->fadt_flags & PLUGVM_ACPI_FADT_HW_REDUCED))
		arch_request_irq(ai->sci_gsi, ai->sci_level, ai->sci_active_low, sci_irq, NULL);
	button = arm_power_button(ai);
	if (!button)
		pr_warn("acpi-hotplug: no power button found (%s)\n",
			ai->fadt_flags & PLUGVM_ACPI_FADT_HW_REDUCED ? "no GED in the DSDT"
								     : "no PM1 event block");
	if (have_pv) {
		/*
		 * No GPE, and no wake-up of the thread now: the claim above took every event
		 * from before LISTEN, and each one since came with an MSI, which sets the flag
		 * the thread tests before it sleeps (pv_irq()).
		 */
		printk(
		    "acpi-hotplug: ready (%s block at %#x, %u slots, SCI on GSI %u, power button "
		    "%s; CPU hotplug through plugvm's paravirt port)\n",
		    machine, layout, ai->nr_cpus, ai->sci_gsi, button ? button : "none");
	} else if (have_block) {
		gpe_sts_port = ai->gpe0_blk;
		gpe_en_port = ai->gpe0_blk + ai->gpe0_blk_len / 2u;
		/* Events latched before we listened (e.g. a CPU added during boot) are handled now. */
		outb((uint16_t)gpe_en_port, inb((uint16_t)gpe_en_port) | GPE_CPU_HOTPLUG);
		__atomic_store_n(&sci_pending, 1, __ATOMIC_RELEASE);
		thread_wake(hp_thread_ptr);
		printk(
		    "acpi-hotplug: ready (%s block at %#x, %u slots, SCI on GSI %u, power button "
		    "%s)\n",
		    machine, acpi_cpu_hotplug_base(), ai->nr_cpus, ai->sci_gsi,
		    button ? button : "none");
	} else {
		printk("acpi-hotplug: ready (no CPU hotplug, power button %s)\n",
		       button ? button : "none");
	}
	return 0;
}
