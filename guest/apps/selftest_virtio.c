// SPDX-License-Identifier: MIT
/* placeholder: being written */
typedef int plugvm_placeholder_selftest_virtio;
