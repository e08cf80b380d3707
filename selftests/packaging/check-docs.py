#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-docs.py - the documentation against the code, natively.

Run from the top of the source tree (`make check-docs`); prints TAP and a
kselftest "# Totals:" line.

  - every struct of uapi/linux/buddy.h, each of its fields, every BUDDY_IOC_*
    command and every other BUDDY_* constant is named in
    Documentation/userspace-api.rst;
  - the uapi header and libbuddy.h pass scripts/kernel-doc -Werror (when
    KERNEL_DOC names the script), and every function libbuddy.h declares has
    a kernel-doc comment and a mention in userspace-api.rst;
  - every sysfs file kmod/main.c creates (DEVICE_ATTR_RO) has its entry in
    Documentation/ABI/testing/sysfs-class-misc-buddy, and no entry names a
    file the module does not create;
  - every module parameter (module_param*) appears in
    Documentation/admin-guide/buddy.rst, its default included;
  - the example of userspace-api.rst is examples/buddy-example.c verbatim;
  - every buddyctl subcommand (tools/buddyctl/buddyctl.c's table) has a
    section in Documentation/buddyctl.rst (the man page's source), every long
    option of buddyd
    (daemon/main.c) is in Documentation/man/buddyd.rst;
  - every .rst under Documentation/ parses with docutils without a warning;
  - no "issue N" in the docs, the README or the sources.
"""
import os
import re
import subprocess
import sys

UAPI = "uapi/linux/buddy.h"
LIBH = "lib/libbuddy.h"
API = "Documentation/userspace-api.rst"
ADMIN = "Documentation/admin-guide/buddy.rst"
ABI = "Documentation/ABI/testing/sysfs-class-misc-buddy"
EXAMPLE = "examples/buddy-example.c"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
import tap as taplib  # noqa: E402


def tap(ok, desc, detail=None, skip=None):
    if skip:
        taplib.skip(desc, skip)
    else:
        taplib.check(desc, ok, str(detail or ""))


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def strip_c_comments(s):
    return re.sub(r"/\*.*?\*/", "", s, flags=re.S)


def uapi_structs(text):
    """{struct name: [field names]} of every struct definition."""
    code = strip_c_comments(text)
    out = {}
    for m in re.finditer(r"struct\s+(\w+)\s*\{(.*?)\};", code, flags=re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            f = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl)
            if f:
                fields.append(f.group(1))
        out[m.group(1)] = fields
    return out


def words(text):
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def main():
    uapi = read(UAPI)
    api = read(API)
    admin = read(ADMIN)
    abi = read(ABI)
    if uapi is None or api is None:
        print(f"Bail out! {UAPI} or {API} missing")
        return 1
    api_words = words(api)
    print("TAP version 13")

    # ---- the ABI header in userspace-api.rst -------------------------------
    structs = uapi_structs(uapi)
    for name, fields in structs.items():
        missing = [f for f in fields if f not in api_words]
        if f"struct {name}" not in api and f"``struct {name}``" not in api:
            missing.insert(0, f"struct {name}")
        tap(not missing, f"userspace-api.rst: struct {name} and its "
            f"{len(fields)} fields", "missing: " + ", ".join(missing))
    iocs = re.findall(r"#define\s+(BUDDY_IOC_\w+)\s+_IO", uapi)
    for ioc in iocs:
        sect = re.search(rf"^{ioc}\b.*\n[-=~]+\n", api, flags=re.M)
        tap(ioc in api_words, f"userspace-api.rst: {ioc}"
            + (" (own section)" if sect else ""), f"{ioc} not named")
    consts = [c for c in re.findall(r"#define\s+(BUDDY_\w+)", uapi)
              if not c.startswith("BUDDY_IOC_") or c == "BUDDY_IOC_MAGIC"]
    consts = [c for c in consts if not c.startswith("_")]
    missing = [c for c in consts if c not in api_words]
    tap(not missing, f"userspace-api.rst: all {len(consts)} other BUDDY_* "
        "constants", "missing: " + ", ".join(missing))

    # ---- kernel-doc ----------------------------------------------------------
    kdoc = os.environ.get("KERNEL_DOC")
    for hdr in (UAPI, LIBH):
        if not kdoc or not os.path.exists(kdoc):
            tap(True, f"kernel-doc -Werror {hdr}",
                skip="KERNEL_DOC (scripts/kernel-doc) not available")
            continue
        r = subprocess.run(["perl", kdoc, "-none", "-Werror", hdr],
                           capture_output=True, text=True)
        tap(r.returncode == 0 and not r.stderr.strip(),
            f"kernel-doc -Werror {hdr}", r.stderr)
    libh = read(LIBH) or ""
    decls = re.findall(r"^(?:const\s+)?(?:struct\s+)?\w+\s*\**\s*(buddy_\w+)\(",
                       libh, flags=re.M)
    undoc = [f for f in decls
             if not re.search(rf"/\*\*\n \* {f}\(\) - ", libh)]
    tap(decls and not undoc, f"libbuddy.h: all {len(decls)} functions have "
        "kernel-doc", "without: " + ", ".join(undoc))
    missing = [f for f in decls if f not in api_words]
    tap(not missing, f"userspace-api.rst: all {len(decls)} libbuddy "
        "functions", "missing: " + ", ".join(missing))

    # ---- sysfs ---------------------------------------------------------------
    main_c = read("kmod/main.c") or ""
    attrs = re.findall(r"DEVICE_ATTR_RO\((\w+)\)", main_c)
    documented = re.findall(r"^What:\s*/sys/class/misc/buddy/(\w+)\s*$",
                            abi or "", flags=re.M)
    for a in attrs:
        tap(a in documented, f"{ABI}: {a}", f"no 'What: "
            f"/sys/class/misc/buddy/{a}' entry")
    stale = [d for d in documented if d not in attrs]
    tap(not stale, f"{ABI}: no entry for a file the module lacks",
        "stale: " + ", ".join(stale))
    admin_words = words(admin or "")
    for a in attrs:
        tap(a in admin_words, f"admin-guide/buddy.rst: sysfs {a}",
            f"{a} not in {ADMIN}")

    # ---- module parameters ---------------------------------------------------
    params = []
    for m in re.finditer(r"module_param(?:_named|_cb)?\(\s*(\w+)", main_c):
        params.append(m.group(1))
    defaults = dict(re.findall(
        r'MODULE_PARM_DESC\(\s*(\w+),.*?\(default: ([^)]*)\)"', main_c,
        flags=re.S))
    for p in params:
        d = defaults.get(p, "").split(",")[0].strip()
        ok = admin is not None and p in admin_words and \
            (not d or re.search(rf"\b{re.escape(p)}\b[^\n]*\n?[^\n]*"
                                rf"{re.escape(d)}", admin) is not None)
        tap(ok, f"admin-guide/buddy.rst: parameter {p} (default {d or '?'})",
            f"{p} or its default {d!r} not found near each other in {ADMIN}")

    # ---- the example, verbatim -----------------------------------------------
    ex = read(EXAMPLE)
    m = re.search(r"^\.\. begin-example\n\n::\n\n(.*?)\n\n\.\. end-example",
                  api, flags=re.S | re.M)
    if ex is None or m is None:
        tap(False, "userspace-api.rst example is examples/buddy-example.c",
            "missing file or begin-example/end-example markers")
    else:
        block = "\n".join(l[1:] if l.startswith("\t") else l
                          for l in m.group(1).split("\n"))
        ok = block.rstrip("\n") == ex.rstrip("\n")
        detail = None
        if not ok:
            import difflib
            detail = "\n".join(list(difflib.unified_diff(
                ex.rstrip("\n").split("\n"), block.split("\n"),
                EXAMPLE, API, lineterm=""))[:30])
        tap(ok, "userspace-api.rst example is examples/buddy-example.c "
            "verbatim", detail)

    # ---- man pages against the programs --------------------------------------
    ctl = read("tools/buddyctl/buddyctl.c") or ""
    table = re.search(r"commands\[\]\s*=\s*\{(.*?)\n\};", ctl, flags=re.S)
    cmds = re.findall(r'\{\s*"([\w-]+)"', table.group(1)) if table else []
    man1 = read("Documentation/buddyctl.rst") or ""
    missing = [c for c in cmds
               if not re.search(rf"^{re.escape(c)}\b.*\n[-~^]+\n", man1,
                                flags=re.M)]
    tap(cmds and not missing, f"buddyctl.rst: a section for each of the "
        f"{len(cmds)} subcommands", "missing: " + ", ".join(missing))
    longopts = {}
    srcs = [os.path.join("tools/buddyctl", p) for p in
            sorted(os.listdir("tools/buddyctl"))] if \
        os.path.isdir("tools/buddyctl") else []
    for path in srcs + ["tools/profile/engine/options.c"]:
        if path.endswith(".c"):
            src = read(path) or ""
            # getopt's tables, and profile's and run's option tables
            for o in re.findall(
                    r'\{\s*"([\w-]+)",\s*(?:(?:no|required|optional)_argument'
                    r'|(?:\'.\'|OPT_\w+),\s*(?:true|false),)', src):
                longopts.setdefault(o, os.path.basename(path))
    missing = [f"--{o} ({p})" for o, p in sorted(longopts.items())
               if f"--{o}" not in man1 and o != "help"]
    tap(longopts and not missing, f"buddyctl.rst: all {len(longopts)} "
        "long options of the subcommands", "missing: " + ", ".join(missing))
    bd = read("daemon/main.c")
    if bd is None:
        tap(True, "man/buddyd.rst: every long option of buddyd",
            skip="daemon/main.c does not exist")
    else:
        opts = re.findall(r'\{\s*"([\w-]+)",\s*(?:no|required|optional)_argument',
                          bd)
        man8 = read("Documentation/man/buddyd.rst") or ""
        missing = [o for o in opts if f"--{o}" not in man8]
        tap(opts and not missing, f"man/buddyd.rst: all {len(opts)} long "
            "options of buddyd", "missing: " + ", ".join(missing))

    # ---- design.rst names what exists ----------------------------------------
    design = read("Documentation/design.rst") or ""
    src = ""
    for root in ("kmod", "core", "lib", "tools", "daemon"):
        for d, _dirs, files in os.walk(root):
            for f in files:
                if f.endswith((".c", ".h")) and not f.endswith(".mod.c"):
                    src += read(os.path.join(d, f)) or ""
    src_words = words(src)
    funcs = sorted(set(re.findall(r"``(\w+)\(\)``", design)))
    missing = [f for f in funcs if f not in src_words]
    tap(funcs and not missing, f"design.rst: all {len(funcs)} functions it "
        "names are in kmod/, core/, lib/, tools/ or daemon/",
        "not found: " + ", ".join(missing))
    paths = sorted(set(re.findall(r"``((?:kmod|core|lib|tools|uapi|daemon|"
                                  r"selftests)/[\w./\[\],*-]+)``", design)))
    gone = []
    for path in paths:
        alts = [path]
        m = re.match(r"(.*)\[(\w+)\](.*)", path)
        if m:   # libbuddy.[ch]
            alts = [m.group(1) + c + m.group(3) for c in m.group(2)]
        for alt in alts:
            if not os.path.exists(alt.rstrip("/")):
                gone.append(alt)
    tap(paths and not gone, f"design.rst: all {len(paths)} paths it names "
        "exist", "missing: " + ", ".join(gone))

    # ---- reStructuredText parses cleanly -------------------------------------
    try:
        import docutils.core
        import docutils.utils
    except ImportError:
        docutils = None
    rsts = []
    for root, _dirs, files in os.walk("Documentation"):
        rsts += [os.path.join(root, f) for f in files if f.endswith(".rst")]
    for path in sorted(rsts):
        if docutils is None:
            tap(True, f"{path} parses", skip="python3-docutils missing")
            continue
        try:
            docutils.core.publish_doctree(
                read(path), source_path=path,
                settings_overrides={"halt_level": 2, "report_level": 2,
                                    "warning_stream": False})
            tap(True, f"{path} parses without docutils warnings")
        except docutils.utils.SystemMessage as e:
            tap(False, f"{path} parses without docutils warnings", e)

    # ---- no issue numbers in docs and comments ------------------------------
    # A reader has no tracker: an issue number tells them nothing.  The docs,
    # the README and the sources (their comments) are searched.
    issue = re.compile(r"\bissues? #?[0-9]+\b", re.I)
    tops = ("README.md", "Documentation", "core", "kmod", "lib", "tools",
            "daemon", "python", "scripts", "selftests", "uapi", "examples",
            "packaging")
    found = []
    for top in tops:
        walk = [(".", [], [top])] if os.path.isfile(top) else os.walk(top)
        for root, dirs, files in walk:
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "build")]
            for f in files:
                path = os.path.normpath(os.path.join(root, f))
                # this check's own pattern, and data files
                if path == os.path.normpath(__file__) or not re.search(
                        r"\.(c|h|py|sh|mk|rst|md|txt|manifest|awk)$|"
                        r"^Makefile$|README", f):
                    continue
                for n, line in enumerate((read(path) or "").splitlines(), 1):
                    if issue.search(line):
                        found.append(f"{path}:{n}: {line.strip()}")
    tap(not found, "no issue numbers in the docs, the README and the "
        "sources", found)

    return taplib.totals()


if __name__ == "__main__":
    sys.exit(main())
