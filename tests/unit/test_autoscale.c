// SPDX-License-Identifier: MIT
/*
 * vCPUs on demand: the policy's decisions (vmm/autoscale_policy.c) sample by sample, with
 * load at a threshold, cooldowns, bounds, a guest that refuses or holds its CPUs, an
 * operator mid-way; --autoscale's spec (config_autoscale.c); and the load port
 * (devices/load.c) as a hostile guest drives it.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdlib.h>

#include "plugvm_load.h"
#include "vmm/autoscale_policy.h"
#include "vmm/bus.h"
#include "vmm/devices/load.h"
#include "vmm/vm.h"

#define SLOTS 4

static struct autoscale_cpu_in cpu[SLOTS];

static struct autoscale_params params(unsigned min, unsigned max)
{
	struct autoscale_params p;

	assert_int_equal(config_parse_autoscale(&p, "on", NULL, 0), 0);
	p.min = min;
	p.max = max;
	return p;
}

/* `n` vCPUs present (slots 0..n-1), each `busy` and waiting `wait` of the time. */
static void load(unsigned n, double busy, double wait)
{
	unsigned i;

	memset(cpu, 0, sizeof(cpu));
	for (i = 0; i < n; i++)
		cpu[i] = (struct autoscale_cpu_in){
			.present = true, .guest = true, .busy = busy, .wait = wait
		};
}

static struct autoscale_decision step(struct autoscale_policy *pol, uint64_t now)
{
	struct autoscale_input in = { .now_ms = now, .nr_slots = SLOTS, .cpu = cpu };

	return autoscale_policy_step(pol, &in);
}

/* Samples every 100 ms from *now for `ms`: the first decision that is not NONE, or HELD. */
static struct autoscale_decision run(struct autoscale_policy *pol, uint64_t *now, unsigned ms)
{
	struct autoscale_decision d = { .op = AUTOSCALE_NONE };
	uint64_t end = *now + ms;

	for (; *now < end; *now += 100) {
		d = step(pol, *now);
		if (d.op != AUTOSCALE_NONE || d.reason == AUTOSCALE_R_HELD)
			return d;
	}
	return d;
}

static void test_pressure_adds_after_its_time_and_not_before(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 4);
	struct autoscale_decision d;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(1, 1.0, 0.9);
	d = step(&pol, now); /* the condition starts */
	assert_int_equal(d.op, AUTOSCALE_NONE);
	d = step(&pol, now + 100);
	assert_int_equal(d.op, AUTOSCALE_NONE); /* 100 of 200 ms */
	d = step(&pol, now + 200);
	assert_int_equal(d.op, AUTOSCALE_ADD);
	assert_int_equal(d.slot, 1);
	assert_int_equal(d.reason, AUTOSCALE_R_PRESSURE);
	assert_int_equal(d.fig.online, 1);
	assert_true(d.fig.guest);
	/* In flight: nothing else, however loud the load. */
	now += 300;
	d = run(&pol, &now, 5000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	assert_int_equal(pol.inflight, AUTOSCALE_ADD);
	autoscale_policy_free(&pol);
}

static void test_pressure_interrupted_starts_over(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 4);
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(1, 1.0, 0.9);
	assert_int_equal(step(&pol, now).op, AUTOSCALE_NONE);
	assert_int_equal(step(&pol, now + 100).op, AUTOSCALE_NONE);
	load(1, 1.0, 0.0); /* one sample without waiting threads */
	assert_int_equal(step(&pol, now + 200).op, AUTOSCALE_NONE);
	load(1, 1.0, 0.9);
	assert_int_equal(step(&pol, now + 300).op, AUTOSCALE_NONE);
	assert_int_equal(step(&pol, now + 400).op, AUTOSCALE_NONE);
	assert_int_equal(step(&pol, now + 500).op, AUTOSCALE_ADD);
	autoscale_policy_free(&pol);
}

/*
 * Load at the add threshold on 1 vCPU moves to 2, where it is half the capacity: that must
 * not remove the vCPU back, however long it lasts (no flapping).
 */
static void test_load_at_a_threshold_does_not_flap(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 2);
	struct autoscale_decision d;
	uint64_t now = 1000;
	unsigned ops = 0, i;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	for (i = 0; i < 600; i++, now += 100) {
		/* Two threads of 50% each: on one vCPU they wait for each other 20% of the time,
		 * on two they never wait and the pair is 100% of one vCPU. */
		unsigned n = cpu[1].present ? 2 : 1;

		if (n == 1)
			load(1, 1.0, 0.2);
		else
			load(2, 0.5, 0.0);
		d = step(&pol, now);
		if (d.op == AUTOSCALE_NONE)
			continue;
		ops++;
		if (d.op == AUTOSCALE_ADD)
			cpu[d.slot].present = true;
		assert_true(autoscale_policy_done(&pol, now, d.op, d.slot, 0));
	}
	assert_int_equal(ops, 1); /* the one add */
	assert_int_equal(pol.adds, 1);
	assert_int_equal(pol.removes, 0);
	autoscale_policy_free(&pol);
}

static void test_idle_removes_the_highest_after_cooldown(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 4);
	struct autoscale_decision d;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(3, 1.0, 0.0);
	/* An operation just ended: the cooldown (500 ms) holds everything back. */
	pol.inflight = AUTOSCALE_ADD;
	pol.inflight_slot = 2;
	assert_true(autoscale_policy_done(&pol, now, AUTOSCALE_ADD, 2, 0));
	load(3, 0.05, 0.0);
	d = step(&pol, now + 400);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	/* From the end of the cooldown, idle_ms (1 s) of idleness. */
	now += 500;
	d = run(&pol, &now, 900);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	d = run(&pol, &now, 300);
	assert_int_equal(d.op, AUTOSCALE_REMOVE);
	assert_int_equal(d.slot, 2);
	assert_int_equal(d.reason, AUTOSCALE_R_IDLE);
	assert_true(autoscale_policy_done(&pol, now, AUTOSCALE_REMOVE, 2, 0));
	assert_int_equal(pol.removes, 1);
	autoscale_policy_free(&pol);
}

static void test_bounds_are_kept(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(2, 3);
	struct autoscale_decision d;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	/* Below min: an add at once, whatever the load. */
	load(1, 0.0, 0.0);
	d = step(&pol, now);
	assert_int_equal(d.op, AUTOSCALE_ADD);
	assert_int_equal(d.reason, AUTOSCALE_R_BELOW_MIN);
	assert_true(autoscale_policy_done(&pol, now, AUTOSCALE_ADD, 1, 0));
	/* At max, pressure adds nothing. */
	load(3, 1.0, 1.0);
	now += 1000;
	d = run(&pol, &now, 10000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	/* At min, idleness removes nothing. */
	load(2, 0.0, 0.0);
	d = run(&pol, &now, 10000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	/* Above max (after autoscale-set lowered it): a removal. */
	load(4, 1.0, 1.0);
	d = step(&pol, now);
	assert_int_equal(d.op, AUTOSCALE_REMOVE);
	assert_int_equal(d.reason, AUTOSCALE_R_ABOVE_MAX);
	assert_int_equal(d.slot, 3);
	/* Bad ranges are refused. */
	p = params(3, 2);
	assert_int_equal(autoscale_policy_set(&pol, &p), -EINVAL);
	p = params(1, SLOTS + 1);
	assert_int_equal(autoscale_policy_set(&pol, &p), -EINVAL);
	autoscale_policy_free(&pol);
}

static void test_a_refusing_guest_is_left_alone(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 4);
	struct autoscale_decision d;
	uint64_t now = 1000, refused_at;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(3, 0.0, 0.0);
	d = run(&pol, &now, 2000);
	assert_int_equal(d.op, AUTOSCALE_REMOVE);
	assert_int_equal(d.slot, 2);
	refused_at = now;
	assert_true(autoscale_policy_done(&pol, now, AUTOSCALE_REMOVE, 2, -EBUSY));
	assert_int_equal(pol.refused, 1);
	/* The next removal picks another vCPU. */
	d = run(&pol, &now, 3000);
	assert_int_equal(d.op, AUTOSCALE_REMOVE);
	assert_int_equal(d.slot, 1);
	assert_true(autoscale_policy_done(&pol, now, AUTOSCALE_REMOVE, 1, -EBUSY));
	/* Both refused lately, 0 never goes: one HELD, then silence until the back-off ends. */
	d = run(&pol, &now, 1600);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	assert_int_equal(d.reason, AUTOSCALE_R_HELD);
	now += 100;
	assert_true(now + 1000 < refused_at + AUTOSCALE_REFUSED_MIN_MS);
	d = run(&pol, &now, 1000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	assert_int_equal(d.reason, AUTOSCALE_R_NONE);
	now = refused_at + AUTOSCALE_REFUSED_MIN_MS;
	d = run(&pol, &now, 2000);
	assert_int_equal(d.op, AUTOSCALE_REMOVE);
	assert_int_equal(d.slot, 2);
	autoscale_policy_free(&pol);
}

static void test_held_cpus_are_never_picked(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 4);
	struct autoscale_decision d;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(4, 0.0, 0.0);
	cpu[3].held = true;
	d = run(&pol, &now, 2000);
	assert_int_equal(d.op, AUTOSCALE_REMOVE);
	assert_int_equal(d.slot, 2);
	assert_true(autoscale_policy_done(&pol, now, AUTOSCALE_REMOVE, 2, 0));
	cpu[2].present = false;
	cpu[1].held = true;
	d = run(&pol, &now, 3000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	assert_int_equal(d.reason, AUTOSCALE_R_HELD);
	autoscale_policy_free(&pol);
}

static void test_operator_commands_win(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 3);
	struct autoscale_decision d;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(2, 1.0, 1.0);
	assert_int_equal(step(&pol, now).op, AUTOSCALE_NONE); /* pressure starts */
	/* The operator adds two, mid-way: the count they chose is the new minimum. */
	assert_true(autoscale_policy_manual(&pol, now + 50, AUTOSCALE_ADD, 3));
	assert_int_equal(pol.p.min, 3);
	assert_int_equal(pol.p.max, 3);
	assert_true(autoscale_policy_manual(&pol, now + 60, AUTOSCALE_ADD, 4));
	assert_int_equal(pol.p.min, 4);
	assert_int_equal(pol.p.max, 4);
	/* Cooling down, then idle for long: nothing the operator added goes. */
	load(4, 0.0, 0.0);
	assert_int_equal(step(&pol, now + 300).op, AUTOSCALE_NONE);
	now += 1000;
	d = run(&pol, &now, 10000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	/* The operator removes down to 1: the count is the new maximum; load adds nothing. */
	assert_true(autoscale_policy_manual(&pol, now, AUTOSCALE_REMOVE, 1));
	assert_int_equal(pol.p.min, 1);
	assert_int_equal(pol.p.max, 1);
	load(1, 1.0, 1.0);
	d = run(&pol, &now, 10000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	assert_int_equal(pol.manual, 3);
	/* A removal within the range changes nothing but the cooldown. */
	p = params(1, 4);
	assert_int_equal(autoscale_policy_set(&pol, &p), 0);
	assert_false(autoscale_policy_manual(&pol, now, AUTOSCALE_REMOVE, 4));
	assert_int_equal(pol.p.max, 4);
	/* A late report of an operation that is not the policy's is not taken for one. */
	assert_false(autoscale_policy_done(&pol, now, AUTOSCALE_ADD, 2, 0));
	autoscale_policy_free(&pol);
}

static void test_an_operation_never_heard_of_times_out(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 4);
	struct autoscale_decision d;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(1, 1.0, 1.0);
	d = run(&pol, &now, 1000);
	assert_int_equal(d.op, AUTOSCALE_ADD);
	now += AUTOSCALE_OP_TIMEOUT_MS - 100;
	assert_int_equal(step(&pol, now).op, AUTOSCALE_NONE);
	assert_int_equal(pol.inflight, AUTOSCALE_ADD);
	now += 100;
	assert_int_equal(step(&pol, now).op, AUTOSCALE_NONE);
	assert_int_equal(pol.inflight, AUTOSCALE_NONE);
	assert_int_equal(pol.failed, 1);
	autoscale_policy_free(&pol);
}

/* Without the guest's figures, only vCPUs flat out count as pressure. */
static void test_host_figures_alone(void **state)
{
	struct autoscale_policy pol;
	struct autoscale_params p = params(1, 4);
	struct autoscale_decision d;
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(autoscale_policy_init(&pol, &p, SLOTS), 0);
	load(2, 0.85, 0.0);
	cpu[0].guest = cpu[1].guest = false;
	d = run(&pol, &now, 3000);
	assert_int_equal(d.op, AUTOSCALE_NONE);
	cpu[0].busy = cpu[1].busy = 0.97;
	d = run(&pol, &now, 1000);
	assert_int_equal(d.op, AUTOSCALE_ADD);
	assert_int_equal(d.reason, AUTOSCALE_R_SATURATED);
	assert_false(d.fig.guest);
	autoscale_policy_free(&pol);
}

static void test_spec(void **state)
{
	struct autoscale_params p;
	char err[256], buf[256];

	(void)state;
	assert_int_equal(config_parse_autoscale(&p, "on", err, sizeof(err)), 0);
	assert_true(p.enabled);
	assert_int_equal(p.period_ms, AUTOSCALE_DEFAULT_PERIOD_MS);
	assert_int_equal(config_parse_autoscale(&p, "off", err, sizeof(err)), 0);
	assert_false(p.enabled);
	assert_int_equal(config_parse_autoscale(&p,
						"min=2,max=8,period=50ms,pressure=30%,pressure-"
						"time=1s,idle=60%,idle-time=2s,cooldown=0ms",
						err, sizeof(err)),
			 0);
	assert_int_equal(p.min, 2);
	assert_int_equal(p.max, 8);
	assert_int_equal(p.period_ms, 50);
	assert_int_equal(p.pressure_pct, 30);
	assert_int_equal(p.pressure_ms, 1000);
	assert_int_equal(p.idle_pct, 60);
	assert_int_equal(p.idle_ms, 2000);
	assert_int_equal(p.cooldown_ms, 0);
	config_format_autoscale(&p, buf, sizeof(buf));
	assert_int_equal(config_parse_autoscale(&p, buf, err, sizeof(err)), 0);
	assert_int_equal(p.idle_ms, 2000);

	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "", "empty" },
		{ "yes", "not KEY=VALUE" },
		{ "min=1,,max=2", "not KEY=VALUE" },
		{ "speed=3", "unknown key 'speed'" },
		{ "min=0", "bad min" },
		{ "max=1025", "bad max" },
		{ "min=3,max=2", "min=3 exceeds max=2" },
		{ "min=1,min=2", "given twice" },
		{ "period=5ms", "bad period" },
		{ "period=100", "bad period" },
		{ "period=601s", "bad period" },
		{ "pressure=0%", "bad pressure" },
		{ "pressure=101%", "bad pressure" },
		{ "pressure=50", "bad pressure" },
		{ "idle=100%", "bad idle" },
		{ "idle-time=-1s", "bad idle-time" },
		{ "cooldown=1h", "bad cooldown" },
		{ "cooldown=99999999999999999999ms", "bad cooldown" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(config_parse_autoscale(&p, bad[i].spec, err, sizeof(err)),
				 -EINVAL);
		assert_contains(err, bad[i].msg);
	}
}

/* ---- the load port, as a hostile guest drives it ---- */

#define REG_GPA	 0x1000
#define AREA_GPA 0x10000

static struct vm vm;
static struct vm_config cfg;

static int port_setup(void **state)
{
	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_cpus = SLOTS;
	vm.cfg = &cfg;
	vm.pio.name = "pio";
	assert_int_equal(mem_init(&vm.mem, 1u << 20), 0);
	assert_int_equal(load_init(&vm), 0);
	return 0;
}

static int port_teardown(void **state)
{
	(void)state;
	load_exit(&vm);
	mem_destroy(&vm.mem);
	return 0;
}

/* The guest's registration and OUT; the status plugvm wrote back. */
static uint32_t reg(uint32_t magic, uint32_t version, uint64_t gpa, uint32_t count,
		    uint64_t reserved, uint32_t reg_gpa)
{
	struct plugvm_load_register r = { .magic = magic,
					  .version = version,
					  .area_gpa = gpa,
					  .count = count,
					  .reserved = reserved };
	uint8_t data[4];

	memcpy(mem_gpa_ptr(&vm.mem, REG_GPA, sizeof(r)), &r, sizeof(r));
	memcpy(data, &reg_gpa, 4);
	assert_true(bus_dispatch(&vm.pio, 0, PLUGVM_PORT_LOAD, data, 4, 1, true));
	memcpy(&r, mem_gpa_ptr(&vm.mem, REG_GPA, sizeof(r)), sizeof(r));
	return r.status;
}

static struct plugvm_load_latch *latch(unsigned slot)
{
	return mem_gpa_ptr(&vm.mem, AREA_GPA + slot * sizeof(struct plugvm_load_latch),
			   sizeof(struct plugvm_load_latch));
}

static void test_port_refuses_bad_registrations(void **state)
{
	struct plugvm_load_cpu r;
	const uint32_t M = PLUGVM_LOAD_MAGIC, V = PLUGVM_LOAD_VERSION;

	(void)state;
	assert_int_equal(load_read(&vm, 0, &r), -ENODATA);
	assert_int_equal(reg(M + 1, V, AREA_GPA, SLOTS, 0, REG_GPA), PLUGVM_LOAD_EINVAL);
	assert_int_equal(reg(M, V + 1, AREA_GPA, SLOTS, 0, REG_GPA), PLUGVM_LOAD_EINVAL);
	assert_int_equal(reg(M, V, AREA_GPA, SLOTS, 1, REG_GPA), PLUGVM_LOAD_EINVAL);
	assert_int_equal(reg(M, V, AREA_GPA, SLOTS - 1, 0, REG_GPA), PLUGVM_LOAD_EINVAL);
	assert_int_equal(reg(M, V, AREA_GPA, 4096, 0, REG_GPA), PLUGVM_LOAD_EINVAL);
	assert_int_equal(reg(M, V, AREA_GPA + 8, SLOTS, 0, REG_GPA), PLUGVM_LOAD_EADDR);
	assert_int_equal(reg(M, V, (1u << 20) - 64, SLOTS, 0, REG_GPA), PLUGVM_LOAD_EADDR);
	assert_int_equal(reg(M, V, 1ull << 40, SLOTS, 0, REG_GPA), PLUGVM_LOAD_EADDR);
	assert_int_equal(load_read(&vm, 0, &r), -ENODATA);
	assert_int_equal(load_generation(&vm), 0);
	/* An unaligned or out-of-RAM registration address: nothing happens at all. */
	reg(M, V, AREA_GPA, SLOTS, 0, REG_GPA + 1);
	reg(M, V, AREA_GPA, SLOTS, 0, 0xfffffff8u);
	assert_int_equal(load_read(&vm, 0, &r), -ENODATA);
	/* A good one, then a withdrawal. */
	assert_int_equal(reg(M, V, AREA_GPA, SLOTS, 0, REG_GPA), PLUGVM_LOAD_OK);
	assert_int_equal(load_read(&vm, 0, &r), 0);
	assert_int_equal(load_read(&vm, SLOTS, &r), -EINVAL);
	assert_int_equal(load_generation(&vm), 1);
	assert_int_equal(reg(M, V, 0, 0, 0, REG_GPA), PLUGVM_LOAD_OK);
	assert_int_equal(load_read(&vm, 0, &r), -ENODATA);
	assert_int_equal(load_generation(&vm), 2);
	/* A reset withdraws it. */
	assert_int_equal(reg(M, V, AREA_GPA, SLOTS, 0, REG_GPA), PLUGVM_LOAD_OK);
	load_reset(&vm);
	assert_int_equal(load_read(&vm, 0, &r), -ENODATA);
}

static void test_port_reads_the_stable_copy(void **state)
{
	struct plugvm_load_latch *l;
	struct plugvm_load_cpu r;

	(void)state;
	assert_int_equal(reg(PLUGVM_LOAD_MAGIC, PLUGVM_LOAD_VERSION, AREA_GPA, SLOTS, 0, REG_GPA),
			 PLUGVM_LOAD_OK);
	l = latch(2);
	l->copy[0] = (struct plugvm_load_cpu){ .flags = PLUGVM_LOAD_ONLINE, .busy_ns = 10 };
	l->copy[1] = (struct plugvm_load_cpu){ .flags = PLUGVM_LOAD_ONLINE, .busy_ns = 20 };
	l->seq = 4; /* even: copy[0] */
	assert_int_equal(load_read(&vm, 2, &r), 0);
	assert_int_equal(r.busy_ns, 10);
	l->seq = 5; /* odd: copy[0] is being written, copy[1] stands */
	assert_int_equal(load_read(&vm, 2, &r), 0);
	assert_int_equal(r.busy_ns, 20);
}

UNIT_MAIN(
    NULL, NULL, cmocka_unit_test(test_pressure_adds_after_its_time_and_not_before),
    cmocka_unit_test(test_pressure_interrupted_starts_over),
    cmocka_unit_test(test_load_at_a_threshold_does_not_flap),
    cmocka_unit_test(test_idle_removes_the_highest_after_cooldown),
    cmocka_unit_test(test_bounds_are_kept), cmocka_unit_test(test_a_refusing_guest_is_left_alone),
    cmocka_unit_test(test_held_cpus_are_never_picked), cmocka_unit_test(test_operator_commands_win),
    cmocka_unit_test(test_an_operation_never_heard_of_times_out),
    cmocka_unit_test(test_host_figures_alone), cmocka_unit_test(test_spec),
    cmocka_unit_test_setup_teardown(test_port_refuses_bad_registrations, port_setup, port_teardown),
    cmocka_unit_test_setup_teardown(test_port_reads_the_stable_copy, port_setup, port_teardown))
