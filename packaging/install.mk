# SPDX-License-Identifier: GPL-2.0
# Installation, man pages and the packaging tests.
#
#   make man              $(B)/man/buddyctl.1 from Documentation/buddyctl.rst
#                         (the one source of the reference and the man
#                         page) and buddyd.8 from Documentation/man/buddyd.rst
#                         (rst2man, python3-docutils)
#   make install          everything below under $(DESTDIR)$(PREFIX)
#   make uninstall        removes exactly the files install put there
#   make check-install    install into a temporary DESTDIR, compare the tree
#                         with the expected file list, build and run the
#                         documentation's example against the installed
#                         pkg-config file, uninstall, check nothing is left;
#                         TAP in $(B)/results/native-install.log
#   make check-docs       the documentation against the code
#                         (selftests/packaging/check-docs.py): every uapi
#                         struct, field, BUDDY_IOC_* and constant named in
#                         Documentation/userspace-api.rst, kernel-doc of the
#                         uapi header and libbuddy.h, every sysfs file in
#                         the ABI file and the admin guide, every module
#                         parameter and its default in the admin guide, the
#                         example verbatim, every buddyctl subcommand and
#                         option and buddyd option in the man pages, every
#                         function and path design.rst names, every .rst
#                         parsing cleanly; TAP in $(B)/results/native-docs.log
#
# Layout (PREFIX defaults to /usr/local; every directory can be overridden):
#
#   $(BINDIR)/buddyctl                     $(SBINDIR)/buddyd
#   $(LIBDIR)/libbuddy.a, libbuddy.so.1.0.0, libbuddy.so.1, libbuddy.so
#   $(LIBDIR)/libbuddycodec.so.1           (the sizing library, glibc only:
#                                          buddy.cuda's hook loads it)
#   $(PKGCONFIGDIR)/libbuddy.pc
#   $(INCLUDEDIR)/buddy/libbuddy.h         $(INCLUDEDIR)/linux/buddy.h (uapi)
#   $(MANDIR)/man1/buddyctl.1              $(MANDIR)/man8/buddyd.8
#   $(SYSTEMDUNITDIR)/buddyd.service       (when daemon/buddyd.service exists)
#   $(UDEVRULESDIR)/60-buddy.rules         $(SYSUSERSDIR)/buddy.conf
#   $(PREFIX)/lib/buddy/libbuddyprof.so   (buddyctl profile's interposer:
#                                          buddyctl looks for it in
#                                          ../lib/buddy/ next to itself)
#   $(PREFIX)/lib/buddy/libbuddycudaprof.so
#                                         (--cuda=driver's interposer of
#                                          the CUDA driver API, likewise)
#   $(PYTHONDIR)/buddy/*.py, cuda/*.py, cuda/site/sitecustomize.py,
#   torch/*.py
#                                         (the Python package, python/buddy/;
#                                          PYTHONDIR is
#                                          lib/python3.X/dist-packages, or
#                                          lib/python3/dist-packages for
#                                          PREFIX=/usr, Debian's layouts)
#   $(DOCDIR)/: README.md, admin-guide.rst, userspace-api.rst, design.rst,
#               dnn.rst, profiler.rst, buddy-example.c
#   $(SYSCONFDIR)/buddy/buddyd.conf        (when daemon/buddyd.conf exists;
#                                          never overwritten, removed by
#                                          uninstall only while unchanged)
#   $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/updates/buddy.ko
#
# The module goes where modprobe looks, outside PREFIX: /lib/modules under
# INSTALL_MOD_PATH, which defaults to DESTDIR (kbuild's name for the same
# idea).  KVER is the release of KDIR, the tree the module is built against.
# INSTALL_MODULE=no leaves the module out (for DKMS, see dkms.conf).  With an
# empty DESTDIR, install also runs depmod and ldconfig.
#
# SYSCONFDIR is /etc whatever PREFIX is: buddyd reads /etc/buddy/buddyd.conf.
#
# udev reads rules only from /etc, /run and /usr/lib (/lib): with the
# default PREFIX the rule is installed but inert; packagers use PREFIX=/usr,
# a local install may pass UDEVRULESDIR=/etc/udev/rules.d.  systemd reads
# units and sysusers.d from /usr/local/lib too.

PREFIX          ?= /usr/local
BINDIR          ?= $(PREFIX)/bin
SBINDIR         ?= $(PREFIX)/sbin
LIBDIR          ?= $(PREFIX)/lib
INCLUDEDIR      ?= $(PREFIX)/include
PKGCONFIGDIR    ?= $(LIBDIR)/pkgconfig
MANDIR          ?= $(PREFIX)/share/man
SYSTEMDUNITDIR  ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR    ?= $(PREFIX)/lib/udev/rules.d
SYSUSERSDIR     ?= $(PREFIX)/lib/sysusers.d
DOCDIR          ?= $(PREFIX)/share/doc/buddy
BUDDYPROFDIR    ?= $(PREFIX)/lib/buddy
SYSCONFDIR      ?= /etc
PYTHON3         ?= /usr/bin/python3
PYVER           := $(shell $(PYTHON3) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)
PYTHONDIR       ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)
PY_PKG_FILES    := $(notdir $(wildcard python/buddy/*.py))
PY_CUDA_FILES   := $(patsubst python/buddy/%,%,$(wildcard python/buddy/cuda/*.py \
			python/buddy/cuda/site/*.py))
PY_TORCH_FILES  := $(patsubst python/buddy/%,%,$(wildcard python/buddy/torch/*.py))
INSTALL_MOD_PATH ?= $(DESTDIR)
INSTALL_MODULE  ?= yes
KVER            ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
			$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
INSTALL         ?= install
RST2MAN         ?= $(firstword $(shell command -v rst2man rst2man.py 2>/dev/null))

BUDDYD_UNIT     := $(wildcard daemon/buddyd.service)
BUDDYD_CONF     := $(wildcard daemon/buddyd.conf)
MODULE_DEST     := $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/updates/buddy.ko

MAN_PAGES       := $(B)/man/buddyctl.1 $(B)/man/buddyd.8

.PHONY: man install install-user install-module uninstall check-install \
	check-docs

# --- man pages ---------------------------------------------------------------
define rst2man_rule
$(1): $(2)
	@mkdir -p $$(dir $$@)
	@test -n "$$(RST2MAN)" || { echo "rst2man not found (apt-get install python3-docutils)" >&2; exit 1; }
	$$(RST2MAN) --halt=warning $$< $$@
endef
$(eval $(call rst2man_rule,$(B)/man/buddyctl.1,Documentation/buddyctl.rst))
$(eval $(call rst2man_rule,$(B)/man/buddyd.8,Documentation/man/buddyd.rst))

man: $(MAN_PAGES)

# What install-user copies from the build: plain `make` builds all of it
# (check-install verifies that with make's own --trace of both goals).
INSTALL_USER_DEPS := $(BUDDYCTL) $(BUDDYD) lib man $(PROFILE_LIB) $(CODECLIB_SO) \
		     $(CUDA_PROF_LIB)
all: $(INSTALL_USER_DEPS)

# --- install -----------------------------------------------------------------
# Files installed under DESTDIR, relative to it: the single list that
# install, uninstall and check-install share.
INSTALL_FILES = \
	$(BINDIR)/buddyctl \
	$(SBINDIR)/buddyd \
	$(LIBDIR)/libbuddy.a \
	$(LIBDIR)/libbuddy.so.$(LIBBUDDY_VERSION) \
	$(LIBDIR)/$(LIBBUDDY_SONAME) \
	$(LIBDIR)/libbuddy.so \
	$(LIBDIR)/$(CODECLIB_SONAME) \
	$(PKGCONFIGDIR)/libbuddy.pc \
	$(INCLUDEDIR)/buddy/libbuddy.h \
	$(INCLUDEDIR)/linux/buddy.h \
	$(MANDIR)/man1/buddyctl.1 \
	$(MANDIR)/man8/buddyd.8 \
	$(if $(BUDDYD_UNIT),$(SYSTEMDUNITDIR)/buddyd.service) \
	$(if $(PROFILE_LIB),$(BUDDYPROFDIR)/libbuddyprof.so) \
	$(BUDDYPROFDIR)/libbuddycudaprof.so \
	$(UDEVRULESDIR)/60-buddy.rules \
	$(SYSUSERSDIR)/buddy.conf \
	$(DOCDIR)/README.md \
	$(DOCDIR)/admin-guide.rst \
	$(DOCDIR)/userspace-api.rst \
	$(DOCDIR)/design.rst \
	$(DOCDIR)/dnn.rst \
	$(DOCDIR)/profiler.rst \
	$(DOCDIR)/buddy-example.c \
	$(addprefix $(PYTHONDIR)/buddy/,$(PY_PKG_FILES) $(PY_CUDA_FILES) $(PY_TORCH_FILES))

install-user: $(INSTALL_USER_DEPS)
	$(INSTALL) -D -m 755 $(BUDDYCTL) $(DESTDIR)$(BINDIR)/buddyctl
	$(INSTALL) -D -m 755 $(BUDDYD) $(DESTDIR)$(SBINDIR)/buddyd
ifneq ($(PROFILE_LIB),)
	$(INSTALL) -D -m 755 $(PROFILE_LIB) $(DESTDIR)$(BUDDYPROFDIR)/libbuddyprof.so
endif
	$(INSTALL) -D -m 755 $(CUDA_PROF_LIB) \
	    $(DESTDIR)$(BUDDYPROFDIR)/libbuddycudaprof.so
	$(INSTALL) -D -m 644 $(LIBBUDDY_A) $(DESTDIR)$(LIBDIR)/libbuddy.a
	$(INSTALL) -D -m 755 $(LIBBUDDY_SO_REAL) \
	    $(DESTDIR)$(LIBDIR)/libbuddy.so.$(LIBBUDDY_VERSION)
	ln -sfn libbuddy.so.$(LIBBUDDY_VERSION) $(DESTDIR)$(LIBDIR)/$(LIBBUDDY_SONAME)
	ln -sfn $(LIBBUDDY_SONAME) $(DESTDIR)$(LIBDIR)/libbuddy.so
	$(INSTALL) -D -m 755 $(CODECLIB_SO) $(DESTDIR)$(LIBDIR)/$(CODECLIB_SONAME)
	$(INSTALL) -d $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	    -e 's|@VERSION@|$(LIBBUDDY_PC_VERSION)|g' \
	    packaging/libbuddy.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/libbuddy.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/libbuddy.pc
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/buddy
	sed 's|^#include "uapi/linux/buddy.h"|#include <linux/buddy.h>|' \
	    lib/libbuddy.h >$(DESTDIR)$(INCLUDEDIR)/buddy/libbuddy.h
	chmod 644 $(DESTDIR)$(INCLUDEDIR)/buddy/libbuddy.h
	$(INSTALL) -D -m 644 uapi/linux/buddy.h $(DESTDIR)$(INCLUDEDIR)/linux/buddy.h
	$(INSTALL) -D -m 644 $(B)/man/buddyctl.1 $(DESTDIR)$(MANDIR)/man1/buddyctl.1
	$(INSTALL) -D -m 644 $(B)/man/buddyd.8 $(DESTDIR)$(MANDIR)/man8/buddyd.8
ifneq ($(BUDDYD_UNIT),)
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/sbin/buddyd|$(SBINDIR)/buddyd|g' $(BUDDYD_UNIT) \
	    >$(DESTDIR)$(SYSTEMDUNITDIR)/buddyd.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/buddyd.service
endif
	$(INSTALL) -D -m 644 packaging/60-buddy.rules \
	    $(DESTDIR)$(UDEVRULESDIR)/60-buddy.rules
	$(INSTALL) -D -m 644 packaging/buddy.sysusers \
	    $(DESTDIR)$(SYSUSERSDIR)/buddy.conf
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 644 README.md Documentation/userspace-api.rst \
	    Documentation/design.rst Documentation/dnn.rst \
	    Documentation/profiler.rst examples/buddy-example.c \
	    $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 644 Documentation/admin-guide/buddy.rst \
	    $(DESTDIR)$(DOCDIR)/admin-guide.rst
	$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/buddy
	$(INSTALL) -m 644 $(addprefix python/buddy/,$(PY_PKG_FILES)) \
	    $(DESTDIR)$(PYTHONDIR)/buddy/
	$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/buddy/cuda/site \
	    $(DESTDIR)$(PYTHONDIR)/buddy/torch
	for f in $(PY_CUDA_FILES) $(PY_TORCH_FILES); do \
		$(INSTALL) -m 644 python/buddy/$$f $(DESTDIR)$(PYTHONDIR)/buddy/$$f || exit 1; \
	done
ifneq ($(BUDDYD_CONF),)
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/buddy/buddyd.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/buddy/buddyd.conf"; \
	else \
		echo "$(INSTALL) -D -m 644 $(BUDDYD_CONF) $(DESTDIR)$(SYSCONFDIR)/buddy/buddyd.conf"; \
		$(INSTALL) -D -m 644 $(BUDDYD_CONF) $(DESTDIR)$(SYSCONFDIR)/buddy/buddyd.conf; \
	fi
endif
ifeq ($(DESTDIR),)
	-ldconfig
endif

install-module: module
	@test -n "$(KVER)" || { echo "install-module: no kernel release in $(KDIR)" >&2; exit 1; }
	$(INSTALL) -D -m 644 kmod/buddy.ko $(MODULE_DEST)
ifeq ($(INSTALL_MOD_PATH),)
	-depmod -a $(KVER)
endif

install: install-user $(if $(filter yes,$(INSTALL_MODULE)),install-module)

# Exactly the files of INSTALL_FILES (the unit even when daemon/ no longer
# ships it) and the module; then the directories that only we use, if empty.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALL_FILES) $(SYSTEMDUNITDIR)/buddyd.service)
	rm -rf $(DESTDIR)$(PYTHONDIR)/buddy/__pycache__ \
	    $(DESTDIR)$(PYTHONDIR)/buddy/cuda/__pycache__ \
	    $(DESTDIR)$(PYTHONDIR)/buddy/cuda/site/__pycache__ \
	    $(DESTDIR)$(PYTHONDIR)/buddy/torch/__pycache__
	@rmdir $(DESTDIR)$(INCLUDEDIR)/buddy $(DESTDIR)$(DOCDIR) \
	    $(DESTDIR)$(BUDDYPROFDIR) $(DESTDIR)$(PYTHONDIR)/buddy/cuda/site \
	    $(DESTDIR)$(PYTHONDIR)/buddy/cuda $(DESTDIR)$(PYTHONDIR)/buddy/torch \
	    $(DESTDIR)$(PYTHONDIR)/buddy 2>/dev/null || true
	@c=$(DESTDIR)$(SYSCONFDIR)/buddy/buddyd.conf; \
	if [ -e $$c ] && cmp -s $$c daemon/buddyd.conf; then \
		echo "rm -f $$c"; rm -f $$c; rmdir $(DESTDIR)$(SYSCONFDIR)/buddy 2>/dev/null; \
	elif [ -e $$c ]; then echo "keeping $$c: changed since install"; fi; true
ifeq ($(filter yes,$(INSTALL_MODULE)),yes)
	@test -n "$(KVER)" || { echo "uninstall: no kernel release in $(KDIR)" >&2; exit 1; }
	rm -f $(MODULE_DEST)
ifeq ($(INSTALL_MOD_PATH),)
	-depmod -a $(KVER)
endif
endif
ifeq ($(DESTDIR),)
	-ldconfig
endif

# --- tests -------------------------------------------------------------------
# The expected tree is written out here, independently of INSTALL_FILES.
check-install: lib man $(BUDDYCTL) $(BUDDYD) $(PROFILE_LIB) $(CODECLIB_SO) \
		$(CUDA_PROF_LIB) module
	@B=$(B) RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name install selftests/packaging/check-install.sh \
	    "$(MAKE) -f $(firstword $(MAKEFILE_LIST))" "$(KVER)" \
	    "$(if $(BUDDYD_UNIT),unit) $(if $(BUDDYD_CONF),conf) $(if $(PROFILE_LIB),prof)"

# scripts/kernel-doc from the kernel source package, as the harness is.
$(B)/scripts/kernel-doc:
	@mkdir -p $(B)/scripts
	tar -xJf $(LINUX_SRC_TAR) -C $(B) --strip-components=1 \
	    linux-source-6.1/scripts/kernel-doc

check-docs: $(MAN_PAGES) $(B)/scripts/kernel-doc
	@KERNEL_DOC=$(B)/scripts/kernel-doc RESULTS=$${RESULTS:-$(B)/results} \
	    scripts/run-native-tests.sh --name docs \
	    python3 selftests/packaging/check-docs.py
