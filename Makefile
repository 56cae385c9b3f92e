# SPDX-License-Identifier: GPL-2.0
# kwq: build the modules (Kbuild against KDIR) and the userspace part.
#
#   make            kwq.ko (and the KUnit module if KDIR has KUnit), libkwq,
#                   kwqctl
#   make demo       install only what it needs, boot Debian's kernel in QEMU
#                   and show kwq at work
#   make check      every test on seven kernels (stock 6.1, 6.12, 6.12-rt,
#                   sid's 7.x and 7.x-rt, the two debug kernels; KWQ_KERNELS
#                   picks a subset)
#   make lint       checkpatch, kernel-doc, W=1, sparse
#   make bench      every benchmark in one QEMU boot (not part of check)
#   make install    modules_install + libkwq, kwqctl, man pages, bash
#                   completion under PREFIX
#   make deb        Debian packages in build/deb (kwq-dkms, libkwq0,
#                   libkwq-dev, kwq-tools)
#   make package-check  build, lint, install, upgrade and purge the
#                   packages in a throwaway root; DKMS-built kwq.ko in QEMU
#   make dkms-install   the module through DKMS without the packages

# The running kernel's build tree if it has one, else the newest Debian
# linux-headers-*-amd64 installed; KDIR=... overrides.
KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; \
	if [ -d $$d ]; then echo $$d; \
	else ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1; fi)
PREFIX ?= /usr/local
# The one version: the top entry of debian/changelog.
VERSION := $(shell awk -F'[()]' 'NR == 1 { sub(/-.*/, "", $$2); print $$2 }' debian/changelog)

all: modules userspace

check-kdir:
	@if [ -z "$(KDIR)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "No kernel build tree found: install linux-headers-$$(uname -r)" \
		     "(or run scripts/deps.sh) or pass KDIR=/path/to/kernel/build"; \
		exit 1; fi

modules: check-kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# What a user builds and installs; the tests (some -m32, which needs
# gcc-multilib) are built by make check (scripts/build.sh).
userspace:
	$(MAKE) -C userspace O=$(CURDIR)/build/user lib tools

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

deb:
	scripts/deb.sh

package-check:
	scripts/package-check.sh

# By hand, what kwq-dkms does: the module's source in /usr/src/kwq-VERSION,
# then dkms add, build and install for the running kernel (KVER=... for
# another one with headers).
DKMS_SRC := /usr/src/kwq-$(VERSION)
dkms-install:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)/module $(DKMS_SRC)/uapi/linux
	cp module/Kbuild module/*.c module/*.h $(DKMS_SRC)/module/
	cp uapi/linux/kwq.h $(DKMS_SRC)/uapi/linux/
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf > $(DKMS_SRC)/dkms.conf
	dkms add -m kwq -v $(VERSION)
	dkms build -m kwq -v $(VERSION) $(if $(KVER),-k $(KVER))
	dkms install -m kwq -v $(VERSION) $(if $(KVER),-k $(KVER))

dkms-remove:
	dkms remove -m kwq -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

clean:
	-[ -d "$(KDIR)" ] && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf --one-file-system build

.PHONY: all check-kdir modules userspace install demo check lint bench clean \
	deb package-check dkms-install dkms-remove
