/* SPDX-License-Identifier: MIT */
/*
 * The NMI report (Linux's NMI backtrace): every CPU that takes an NMI which is not a panic's
 * stop prints what it was doing and why it might take no interrupt: the interrupted RIP and
 * interrupt flag, its LAPIC's in-service / requested vectors and clock event, its hrtimer
 * base and its run queue. The lines go through the consoles' polled lock-free path
 * (console_write_nmi()), one CPU's lines after another's. NMIs come from the host (QMP
 * inject-nmi) or from nmi_report_all() (the watchdog's reports). A hang that blocks every
 * interrupt still answers an NMI.
 */
#ifndef PLUGVM_KERNEL_NMI_H
#define PLUGVM_KERNEL_NMI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Print this CPU's report: `rip` and `irqs_on` describe the interrupted context. NMI
 * context only (the arch's NMI handler): it takes no lock another context could hold, and
 * waits at most NMI_REPORT_WAIT_NS for any one other CPU's report to finish.
 */
#define NMI_FRAMES 8 /* return addresses of the interrupted code the report shows */
void nmi_report(uint64_t rip, bool irqs_on, const uint64_t *frames, unsigned nr_frames);

/*
 * An NMI to every CPU, this one included, then wait until the CPUs online at the call
 * have reported, at most NMI_REPORT_WAIT_NS without a new report (a CPU whose vCPU the
 * host does not run reports late, below the caller's output). Any context. Returns the number of reports
 * seen in that time.
 */
unsigned nmi_report_all(void);

/* How long a CPU waits for one other CPU's report, and nmi_report_all() for the reports. */
#define NMI_REPORT_WAIT_NS 2000000000ull

#endif
