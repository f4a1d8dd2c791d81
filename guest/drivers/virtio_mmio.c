// SPDX-License-Identifier: MIT
/* placeholder: being written */
typedef int plugvm_placeholder_virtio_mmio;
