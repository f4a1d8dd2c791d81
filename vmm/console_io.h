/* SPDX-License-Identifier: MIT */
/*
 * Where the guest's serial console goes (cfg->console): stdio, a file, an inherited fd
 * (-add-fd), a new pseudo-terminal, or nowhere. Opened by main.c before the machine is built;
 * the console's writer writes to out_fd and the main loop reads in_fd into the UART. Tests:
 * test_qemu_cli.py (the pty and fd consoles).
 */
#ifndef PLUGVM_VMM_CONSOLE_IO_H
#define PLUGVM_VMM_CONSOLE_IO_H

#include "config/config.h"

/*
 * Open cfg->console's descriptors into cfg->console_fd (output) and cfg->console_in_fd
 * (input, or -1). A pty: raw mode as QEMU's, a slave descriptor held open so the master
 * never reads EIO while nobody is attached, its name into the "pty" chardev entry
 * ("pty:/dev/pts/N") and QEMU's "char device redirected to" line on stderr. 0 or -errno
 * (logged).
 */
int console_io_open(struct vm_config *cfg);

/* Close what console_io_open() opened (not stdio, not an inherited fd). */
void console_io_close(struct vm_config *cfg);

#endif
