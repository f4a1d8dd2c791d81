# SPDX-License-Identifier: MIT
# vmm/config/domain_xml*.c: libvirt domain documents into struct vm_config (libxml2), with the RT
# knobs' cpuset syntax (vmm/rt_tune.c).
UNIT_TESTS += test_domain_xml
UNIT_test_domain_xml_SRCS := $(VMM_DOMAIN_SRCS) vmm/rt_tune.c $(VMM_CONFIG_SRCS) vmm/log.c
UNIT_test_domain_xml_CFLAGS := $(shell pkg-config --cflags libxml-2.0)
