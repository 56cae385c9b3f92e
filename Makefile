# SPDX-License-Identifier: GPL-2.0
# kwq: build the modules (Kbuild against KDIR) and the userspace part.
#
#   make            kwq.ko (and the KUnit module if KDIR has KUnit), libkwq,
#                   kwqctl, tests
#   make demo       boot Debian's kernel in QEMU and show kwq at work
#   make check      every test on five kernels (stock 6.1, 6.12, 6.12-rt and
#                   the two debug kernels; KWQ_KERNELS picks a subset)
#   make lint       checkpatch, kernel-doc, W=1, sparse
#   make bench      every benchmark in one QEMU boot (not part of check)
#   make install    modules_install + libkwq, kwqctl under PREFIX

# The running kernel's build tree if it has one, else the newest Debian
# linux-headers-*-amd64 installed; KDIR=... overrides.
KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; \
	if [ -d $$d ]; then echo $$d; \
	else ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1; fi)
PREFIX ?= /usr/local

all: modules userspace

check-kdir:
	@if [ -z "$(KDIR)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "No kernel build tree found: install linux-headers-$$(uname -r)" \
		     "(or run scripts/deps.sh) or pass KDIR=/path/to/kernel/build"; \
		exit 1; fi

modules: check-kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userspace:
	$(MAKE) -C userspace O=$(CURDIR)/build/user

install: modules userspace
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra modules_install
	$(MAKE) -C userspace O=$(CURDIR)/build/user PREFIX=$(PREFIX) install

demo:
	scripts/demo.sh

check:
	scripts/check.sh

lint:
	scripts/lint.sh $(KDIR)

bench:
	scripts/bench.sh

clean:
	-[ -d "$(KDIR)" ] && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf build

.PHONY: all check-kdir modules userspace install demo check lint bench clean
