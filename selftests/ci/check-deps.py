#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""check-deps.py - every host program `make check` runs comes from a package
that scripts/install-deps.sh installs.

Two halves, TAP on stdout with a closing "# Totals:" line:

1. The scan: which programs do the stages run?  GNU make prints its own
   database (make -pq, nothing is built or run), so the rules, recipes and
   variables are exactly what make would use.  From the goals given (`make
   check` and each check-STAGE) the scan follows prerequisites, pattern
   rules and recursive makes, expands each recipe's make variables and
   $(call)s, and parses the shell with shfmt's syntax tree (shfmt --to-json):
   every command word of every simple command (through env, timeout, stdbuf,
   xargs, sudo, sh -c ...) is a program the stage runs.  Project scripts a
   recipe runs (scripts/*.sh, selftests/..., `python3 X.py`) are scanned the
   same way, recursively; Python scripts by their subprocess/os calls.
   Scripts that only run inside the QEMU guest are copied, never run on the
   host, and so never scanned.  Every program found must be a "command" line
   of the manifest; one that is not fails, named with where it is used.

2. The manifest (scripts/deps.manifest): each "command CMD PKG" is resolved
   as the stages resolve it (command -v, then readlink -f) and its package
   looked up with dpkg -S under both spellings of bookworm's merged /usr
   (/usr/bin/x and /bin/x).  It passes when that package is one of the
   manifest's "package" lines (what install-deps.sh installs), in their
   Depends/Pre-Depends closure, or Priority: required - and is PKG itself or
   in PKG's closure, so the manifest says the truth.  Closures and
   priorities come from dpkg's database of the installed packages (of
   "a | b", the installed ones; a virtual package, its providers).  A
   command missing from the system or not covered fails, naming the
   command and the package.

usage: check-deps.py [--root DIR] [--manifest FILE] [--make MAKE] GOAL...
       check-deps.py --list GOAL...      what the scan finds
       check-deps.py --trace STRACE_LOG  the other way round: the programs a
                                         traced run executed (make deps-trace)
"""
import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys

# Shell builtins and keywords (dash and bash): not programs.
BUILTINS = set("""
: . [ [[ alias bg break builtin cd command continue declare echo eval exec exit
export false fc fg getopts hash jobs kill let local printf pwd read readonly
return set shift source test times trap true type typeset ulimit umask unalias
unset wait mapfile readarray shopt pushd popd dirs disown enable help logout
""".split())

# Commands that run another command: how many leading words (options and
# their arguments) to skip before it.
WRAPPERS = {"env", "timeout", "stdbuf", "nice", "nohup", "setsid", "xargs",
            "exec", "sudo", "flock", "chroot", "strace", "time", "command"}
# options of the wrappers that take a separate argument
WRAPPER_OPTARG = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S"},
    "timeout": {"-k", "--kill-after", "-s", "--signal"},
    "nice": {"-n", "--adjustment"},
    "xargs": {"-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"},
    "flock": {"-w", "--timeout", "-E", "--conflict-exit-code"},
    "strace": {"-e", "-o", "-p", "-s", "-u", "-E", "-P", "-I", "-b", "-a"},
    "exec": {"-a"},
}
INTERPRETERS = {"sh", "bash", "dash", "python3", "perl"}
# Variables a script runs a program through ($SUDO apt-get ...): the next
# word is the program.
PREFIX_VARS = {"SUDO"}
MAKEFN = "__make_fn__"
REALVALS = {}   # variables whose value make computes with $(shell)


class Found:
    def __init__(self):
        self.cmds = {}            # command -> [where, ...]
        self.scanned = set()      # project files scanned
        self.goals = []           # make goals still to follow
        self.errors = []          # files that could not be parsed

    def add(self, cmd, where):
        self.cmds.setdefault(cmd, [])
        if where not in self.cmds[cmd]:
            self.cmds[cmd].append(where)


# ---- the make database ------------------------------------------------------
def make_db(make, root):
    # -r: make's built-in implicit rules (%: %.c, ...) are not the
    # project's and would only lead the walk through every source file.
    r = subprocess.run([make, "-pqr", "--no-print-directory",
                        "--eval", "__check_deps_db__:", "__check_deps_db__"],
                       cwd=root, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    lines = r.stdout.split("\n")
    variables, rules, patterns = {}, {}, []
    i, n = 0, len(lines)
    var_re = re.compile(r"^([^#\s:=][^\s:=]*) (:=|::=|=|\?=|\+=) ?(.*)$")
    rule_re = re.compile(r"^([^#\t\s][^:]*?)::? ?(.*)$")
    while i < n:
        line = lines[i]
        if line.startswith("define "):
            name = line[7:].strip()
            body = []
            i += 1
            while i < n and lines[i] != "endef":
                body.append(lines[i])
                i += 1
            variables[name] = "\n".join(body)
            i += 1
            continue
        m = var_re.match(line)
        if m and not line.startswith("\t"):
            variables[m.group(1)] = m.group(3)
            i += 1
            continue
        m = rule_re.match(line)
        if m and not line.startswith("#"):
            targets, prereqs = m.group(1).split(), m.group(2)
            recipe = []
            i += 1
            while i < n and (lines[i].startswith("#") or
                             lines[i].startswith("\t")):
                if lines[i].startswith("\t"):
                    recipe.append(lines[i][1:])
                i += 1
            pre = [p for p in prereqs.replace("|", " ").split()]
            for t in targets:
                if "%" in t:
                    patterns.append((t, pre, recipe))
                else:
                    old = rules.get(t, ([], []))
                    rules[t] = (old[0] + pre, recipe or old[1])
            continue
        i += 1
    return variables, rules, patterns


def shell_vars(make, root, variables):
    """make's own value of each recursive variable that calls $(shell):
    the program a recipe runs through it ($(RST2MAN)) is this machine's."""
    names = sorted(v for v, val in variables.items()
                   if "$(shell" in val and re.match(r"^[A-Za-z_]\w*$", v))
    if not names:
        return {}
    # a recipe of our own prints them: --eval text is read before the
    # makefiles, a recipe is expanded after; ":" is all it runs
    ev = "__check_deps_vars__:; @:$(foreach v," + " ".join(names) + \
        ",$(info __check_deps__ $(v)=$($(v))))"
    r = subprocess.run([make, "-sr", "--no-print-directory", "--eval", ev,
                        "__check_deps_vars__"],
                       cwd=root, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    out = {}
    for line in r.stdout.split("\n"):
        if line.startswith("__check_deps__ "):
            k, _, v = line[15:].partition("=")
            # /usr/bin/rst2man: the name, as the manifest spells commands
            if re.match(r"^/(usr/)?(local/)?s?bin/[^/ ]+$", v.strip()):
                v = os.path.basename(v.strip())
            out[k] = v
    return out


def make_shell_calls(root, variables):
    """The text of every $(shell ...) in the project's makefiles: programs
    make runs while it reads them (pkg-config, scripts/kdir.sh)."""
    calls = []
    for mk in variables.get("MAKEFILE_LIST", "").split():
        try:
            text = open(os.path.join(root, mk)).read()
        except OSError:
            continue
        for m in re.finditer(r"\$\(shell[ \t]", text):
            j, level = m.end(), 1
            while j < len(text) and level:
                level += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            line = text.count("\n", 0, m.start()) + 1
            calls.append((f"{mk}:{line}", text[m.end():j - 1]))
    return calls


def split_args(s):
    """Split a make function's arguments at top-level commas."""
    out, depth, cur = [], 0, ""
    for c in s:
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def expand(text, variables, args=None, depth=0):
    """Expand make references in a recipe well enough to find commands:
    variables, $(call), $(if), $(firstword) and $(shell) (which becomes a
    shell command substitution); other functions become a placeholder word."""
    if depth > 20:
        return MAKEFN
    args = args or {}
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        d = text[i + 1]
        if d == "$":
            out.append("$")
            i += 2
            continue
        if d not in "({":
            # $@ $< $^ $* $1 ...
            out.append(args.get(d, MAKEFN) if d.isdigit() else MAKEFN)
            i += 2
            continue
        close = ")" if d == "(" else "}"
        j, level = i + 2, 1
        while j < len(text) and level:
            if text[j] == d:
                level += 1
            elif text[j] == close:
                level -= 1
            j += 1
        inner = text[i + 2:j - 1]
        i = j
        out.append(expand_ref(inner, variables, args, depth))
    return "".join(out)


def expand_ref(inner, variables, args, depth):
    m = re.match(r"^([a-z-]+)[ \t]+(.*)$", inner, re.S)
    if m and m.group(1) in ("shell", "call", "if", "firstword", "strip",
                            "wildcard", "dir", "notdir", "patsubst", "subst",
                            "addprefix", "addsuffix", "abspath", "foreach",
                            "filter", "filter-out", "words", "word",
                            "basename", "sort", "realpath", "eval", "info",
                            "warning", "error", "or", "and", "value",
                            "origin", "lastword", "join"):
        fn, rest = m.group(1), m.group(2)
        if fn == "shell":
            return "$(" + expand(rest, variables, args, depth + 1) + ")"
        if fn == "call":
            a = split_args(rest)
            name = expand(a[0], variables, args, depth + 1).strip()
            cargs = {str(k): expand(v, variables, args, depth + 1)
                     for k, v in enumerate(a[1:], 1)}
            return expand(variables.get(name, ""), variables, cargs,
                          depth + 1)
        if fn == "if":
            a = split_args(rest) + ["", ""]
            cond = expand(a[0], variables, args, depth + 1).strip()
            return expand(a[1] if cond else a[2], variables, args, depth + 1)
        if fn in ("firstword", "strip"):
            w = expand(rest, variables, args, depth + 1).split()
            return (w[0] if fn == "firstword" else " ".join(w)) if w else ""
        return MAKEFN
    if inner.isdigit():
        return args.get(inner, "")
    name = inner.split(":")[0]
    if name == "MAKE":
        return "make"
    if name in REALVALS:
        return REALVALS[name]
    if name in variables:
        return expand(variables[name], variables, args, depth + 1)
    return "" if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) else MAKEFN


def recipe_shell(recipe, variables):
    """A recipe (list of lines as make prints them) as shell text."""
    text = expand("\n".join(recipe), variables)
    out = []
    for line in re.split(r"(?<!\\)\n", text):
        out.append(re.sub(r"^[\s@+-]+", "", line))
    return "\n".join(out)


def pattern_match(pattern, target):
    pre, _, post = pattern.partition("%")
    if target.startswith(pre) and target.endswith(post) and \
            len(target) >= len(pre) + len(post):
        return target[len(pre):len(target) - len(post)]
    return None


# ---- shell -------------------------------------------------------------------
def word_lit(word):
    """The literal value of a shfmt Word, or None when it has expansions."""
    s = ""
    for p in word.get("Parts", []):
        t = p.get("Type")
        if t in ("Lit", "SglQuoted"):
            s += p.get("Value", "")
        elif t == "DblQuoted":
            sub = word_lit(p)
            if sub is None:
                return None
            s += sub
        else:
            return None
    return s


def word_tail(word):
    """The literal text after the last expansion ("$here/prepare.sh")."""
    parts = word.get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "DblQuoted":
        parts = parts[0].get("Parts", [])
    tail = ""
    for p in reversed(parts):
        if p.get("Type") not in ("Lit", "SglQuoted"):
            break
        tail = p.get("Value", "") + tail
    return tail


def runs_args(func):
    """For a shfmt FuncDecl: how many leading arguments the function shifts
    away before it runs "$@" as a command, or -1 when it never does."""
    shifts, runs = [0], [False]

    def visit(n):
        if not isinstance(n, dict):
            return
        if n.get("Type") == "CallExpr" and n.get("Args"):
            w = n["Args"]
            if word_lit(w[0]) == "shift":
                shifts[0] += int(word_lit(w[1]) or 1) if len(w) > 1 else 1
            elif word_param(w[0]) == "@":
                runs[0] = True
    stack = [func.get("Body")]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            visit(x)
            stack.extend(v for v in x.values() if isinstance(v, (dict, list)))
        elif isinstance(x, list):
            stack.extend(x)
    return shifts[0] if runs[0] else -1


def assign_value(assign):
    """The literal a variable is assigned, or the literal default of
    ${OTHER:-literal}; None otherwise."""
    w = assign.get("Value")
    if not w:
        return None
    v = word_lit(w)
    if v is not None:
        return v
    parts = w.get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "DblQuoted":
        parts = parts[0].get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "ParamExp":
        exp = parts[0].get("Exp") or {}
        if exp.get("Word"):
            return word_lit(exp["Word"])
    return None


def word_param(word):
    """NAME when the word is just $NAME or "$NAME"."""
    parts = word.get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "DblQuoted":
        parts = parts[0].get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "ParamExp":
        return parts[0].get("Param", {}).get("Value")
    return None


class Scanner:
    def __init__(self, root, found, variables, rules, patterns):
        self.root = root
        self.found = found
        self.variables = variables
        self.rules = rules
        self.patterns = patterns
        self.done_goals = set()
        self.recipes_seen = set()

    # -- project files --
    def repo_file(self, path, base_dir=None):
        """A project source file (not a build product) named by path."""
        cands = []
        if path.startswith("/"):
            cands.append(path)
            if base_dir:
                cands.append(os.path.join(base_dir, path.lstrip("/")))
            cands.append(os.path.join(self.root, path.lstrip("/")))
        else:
            cands.append(os.path.join(self.root, path))
            if base_dir:
                cands.append(os.path.join(base_dir, path))
        for c in cands:
            c = os.path.normpath(c)
            if c.startswith(self.root + "/") and os.path.isfile(c) and \
                    not os.path.relpath(c, self.root).startswith("build/"):
                return c
        return None

    def scan_file(self, path):
        rel = os.path.relpath(path, self.root)
        if rel in self.found.scanned:
            return
        self.found.scanned.add(rel)
        with open(path, errors="replace") as f:
            text = f.read()
        first = text.split("\n", 1)[0]
        # the interpreter of "#!/bin/bash", "#!/usr/bin/env python3"
        m = re.match(r"^#!\s*(\S+)(?:\s+(\S+))?", first)
        if m and os.access(path, os.X_OK):
            interp = os.path.basename(m.group(1))
            if interp == "env" and m.group(2):
                interp = m.group(2)
            self.found.add(interp, f"{rel}:1")
        if path.endswith(".py") or "python" in first:
            self.scan_python(text, rel)
        elif path.endswith(".sh") or re.match(r"^#!.*\b(ba|da)?sh\b", first):
            self.scan_shell(text, rel, os.path.dirname(path))
        # anything else (a C file, data) runs nothing by itself

    def scan_python(self, text, rel):
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            self.found.errors.append(f"{rel}: {e}")
            return
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = None
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                name = f.value.id + "." + f.attr
            if name not in ("subprocess.run", "subprocess.call",
                            "subprocess.check_call", "subprocess.Popen",
                            "subprocess.check_output", "os.system",
                            "os.execvp", "os.execv", "os.spawnvp",
                            "os.popen") or not node.args:
                continue
            a = node.args[0]
            while isinstance(a, ast.BinOp) and isinstance(a.op, ast.Add):
                a = a.left        # ["dpkg", "-S"] + paths
            if name in ("os.system", "os.popen"):
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    self.scan_shell(a.value, f"{rel}:{node.lineno}", None)
                continue
            if isinstance(a, ast.List) and a.elts and \
                    isinstance(a.elts[0], ast.Constant) and \
                    isinstance(a.elts[0].value, str):
                self.command([a.elts[0].value] +
                             [e.value if isinstance(e, ast.Constant) else None
                              for e in a.elts[1:]],
                             f"{rel}:{node.lineno}", None)

    def scan_shell(self, text, where, base_dir):
        try:
            r = subprocess.run(["shfmt", "--to-json"], input=text,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        except FileNotFoundError:
            self.found.errors.append(f"{where}: shfmt not found (package "
                                     f"shfmt: scripts/install-deps.sh)")
            return
        if r.returncode != 0:
            self.found.errors.append(f"{where}: shfmt: {r.stderr.strip()}")
            return
        tree = json.loads(r.stdout)
        # NAME=word / NAME=${OTHER:-word}: "$NAME" in command position is
        # word (PY=${PYTHON:-python3} ... "$PY" x.py)
        self.defaults = getattr(self, "defaults", {})
        self.walk(tree, lambda n: n.get("Type") == "CallExpr" and
                  not n.get("Args") and [self.defaults.setdefault(
                      a["Name"]["Value"], set()).add(v)
                      for a in n.get("Assigns", [])
                      for v in [assign_value(a)] if v])
        funcs = {}
        self.walk(tree, lambda n: n.get("Type") == "FuncDecl" and
                  funcs.__setitem__(n["Name"]["Value"], runs_args(n)))
        # ". FILE" / "source FILE": FILE's functions are this script's too
        # (". "$(dirname "$0")/../lib/tap.sh"); FILE itself is scanned
        self.walk(tree, lambda n: n.get("Type") == "CallExpr" and
                  len(n.get("Args") or []) > 1 and
                  word_lit(n["Args"][0]) in (".", "source") and
                  funcs.update(self.sourced_funcs(n["Args"][1], base_dir)))
        file_rel = where.split(":")[0]

        def visit(node):
            if node.get("Type") != "CallExpr" or not node.get("Args"):
                return
            words = node["Args"]
            line = node["Pos"]["Line"]
            loc = f"{file_rel}:{line}" if ":" not in where else where
            # a function that runs its arguments ("$@", after N shifts):
            # those arguments are a command too
            skip = funcs.get(word_lit(words[0]) or "")
            if skip is not None and skip >= 0 and len(words) > skip + 1:
                self.call(words[skip + 1:], loc, base_dir, funcs)
            self.call(words, loc, base_dir, funcs)
        self.walk(tree, visit)

    def sourced_funcs(self, word, base_dir):
        """The functions a sourced project file defines, {} if unknown."""
        path = word_lit(word) or word_tail(word)
        f = self.repo_file(path, base_dir) if path and "/" in path else None
        if not f:
            return {}
        self.scan_file(f)
        with open(f, errors="replace") as fh:
            r = subprocess.run(["shfmt", "--to-json"], input=fh.read(),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            return {}
        funcs = {}
        self.walk(json.loads(r.stdout), lambda n: n.get("Type") ==
                  "FuncDecl" and funcs.__setitem__(n["Name"]["Value"],
                                                   runs_args(n)))
        return funcs

    def walk(self, node, fn):
        if isinstance(node, dict):
            fn(node)
            for v in node.values():
                if isinstance(v, (dict, list)):
                    self.walk(v, fn)
        elif isinstance(node, list):
            for v in node:
                self.walk(v, fn)

    def call(self, words, loc, base_dir, funcs):
        lits = [word_lit(w) for w in words]
        # $SUDO apt-get ...: the program is the next word
        if lits[0] is None and word_param(words[0]) in PREFIX_VARS:
            words, lits = words[1:], lits[1:]
            if not words:
                return
        # a make run through a variable ($make_cmd ... install)
        p = word_param(words[0]) if lits[0] is None else None
        if p and "make" in p.lower():
            self.make_goals(lits[1:])
            return
        if p and p in self.defaults:
            for v in sorted(self.defaults[p]):
                if v and "/" not in v and re.match(r"^[\w.+-]+$", v):
                    self.command([v] + lits[1:], loc, base_dir, funcs)
            return
        if lits[0] is None:
            tail = word_tail(words[0])
            if "/" in tail:
                f = self.repo_file(tail, base_dir)
                if f:
                    self.scan_file(f)
            return
        self.command(lits, loc, base_dir, funcs)

    def command(self, lits, loc, base_dir, funcs=()):
        cmd = lits[0]
        if cmd is None or cmd == "" or MAKEFN in cmd or cmd in funcs:
            return
        if cmd == "command":
            # command -v NAME only looks the name up
            if len(lits) > 1 and lits[1] in ("-v", "-V"):
                return
        if "/" in cmd and not cmd.startswith("/"):
            # a project script or a program built into build/
            f = self.repo_file(cmd, base_dir)
            if f:
                self.scan_file(f)
                self.scan_args(lits[1:], base_dir, loc)
            return
        if cmd.startswith("/") and self.repo_file(cmd, base_dir) and \
                not os.path.exists(cmd):
            self.scan_file(self.repo_file(cmd, base_dir))
            return
        if cmd in BUILTINS and cmd not in ("exec", "command"):
            return
        if "=" in cmd:
            return
        if cmd not in ("exec", "command"):
            self.found.add(cmd, loc)
        rest = lits[1:]
        if cmd in WRAPPERS:
            self.wrapped(cmd, rest, loc, base_dir, funcs)
        elif cmd in INTERPRETERS:
            self.interpreted(cmd, rest, loc, base_dir)
        elif cmd == "make":
            self.make_goals(rest)

    def wrapped(self, cmd, rest, loc, base_dir, funcs):
        opt_arg = WRAPPER_OPTARG.get(cmd, set())
        i = 0
        while i < len(rest):
            w = rest[i]
            if w is None:
                break
            if w == "--":
                i += 1
                break
            if w.startswith("-"):
                i += 2 if w in opt_arg else 1
                continue
            if cmd == "env" and "=" in w:
                i += 1
                continue
            break
        if cmd == "timeout":
            i += 1            # the duration
        if cmd == "flock":
            i += 1            # the lock file or descriptor
        if cmd == "chroot":
            i += 1
        if i < len(rest):
            self.command(rest[i:], loc, base_dir, funcs)

    def interpreted(self, cmd, rest, loc, base_dir):
        i = 0
        while i < len(rest):
            w = rest[i]
            if w is None:
                return
            if cmd in ("sh", "bash", "dash") and w == "-c":
                if i + 1 < len(rest) and rest[i + 1] is not None:
                    self.scan_shell(rest[i + 1], loc, base_dir)
                return
            if cmd in ("python3", "perl") and w in ("-c", "-e", "-m"):
                return
            if w.startswith("-"):
                i += 1
                continue
            f = self.repo_file(w, base_dir)
            if f:
                self.scan_file(f)
                self.scan_args(rest[i + 1:], base_dir, loc)
            return

    def scan_args(self, args, base_dir, loc):
        """Arguments of a project script that are themselves project
        scripts run by it (run-native-tests.sh --name X SCRIPT ...)."""
        for i, w in enumerate(args):
            if w in INTERPRETERS:
                self.command(args[i:], loc, base_dir)
                return
            if w and "/" in w and not w.startswith("-"):
                f = self.repo_file(w, base_dir)
                if f and (f.endswith(".sh") or f.endswith(".py")) and \
                        os.access(f, os.X_OK):
                    self.scan_file(f)

    # -- make --
    def make_goals(self, args):
        if any(a is not None and (a == "-C" or a.startswith("-C") or
                                  a == "-f" or a.startswith("--directory"))
               for a in args):
            # another tree's makefile (the module's kbuild run): its own
            # package (linux-headers-*) brings what it runs
            return
        for a in args:
            if a and not a.startswith("-") and "=" not in a:
                self.goal(a)

    def goal(self, first):
        todo = [first]
        while todo:
            target = todo.pop()
            if target in self.done_goals:
                continue
            self.done_goals.add(target)
            prereqs, recipe = self.rules.get(target, ([], []))
            if not recipe and not self.repo_file(target):
                for pat, pre, rec in self.patterns:
                    stem = pattern_match(pat, target)
                    if stem is not None and rec:
                        prereqs = prereqs + [p.replace("%", stem)
                                             for p in pre]
                        recipe = rec
                        break
            if recipe:
                text = recipe_shell(recipe, self.variables)
                if text not in self.recipes_seen:
                    self.recipes_seen.add(text)
                    self.scan_shell(text, f"make {target}", self.root)
            todo.extend(p for p in prereqs if p not in self.done_goals)


# ---- the manifest --------------------------------------------------------
def read_manifest(path):
    packages, commands, errors = [], {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if line[0] == "package" and len(line) == 2:
                packages.append(line[1])
            elif line[0] == "command" and len(line) == 3:
                commands[line[1]] = (line[2], n)
            else:
                errors.append(f"{path}:{n}: not 'package PKG' or "
                              f"'command CMD PKG': {' '.join(line)}")
    return packages, commands, errors


class Dpkg:
    """What dpkg knows of the installed packages, read once (dpkg-query):
    Depends/Pre-Depends closures, priorities, and file owners (dpkg -S)."""

    def __init__(self):
        r = subprocess.run(
            ["dpkg-query", "-W", "-f=${Package}\t${Status}\t${Priority}\t"
             "${Provides}\t${Pre-Depends}, ${Depends}\n"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.deps, self.prio, self.provider = {}, {}, {}
        for line in r.stdout.split("\n"):
            f = line.split("\t")
            if len(f) < 5 or not f[1].endswith(" installed"):
                continue
            name = f[0]
            self.prio[name] = f[2]
            self.deps[name] = [[re.split(r"[ :(]", alt.strip())[0]
                                for alt in dep.split("|") if alt.strip()]
                               for dep in f[4].split(",") if dep.strip()]
            for v in f[3].split(","):
                v = re.split(r"[ :(]", v.strip())[0]
                if v:
                    self.provider.setdefault(v, []).append(name)
        self.owners = {}

    def closure(self, pkgs):
        """pkgs and everything they Depend/Pre-Depend on, as installed:
        of "a | b" the installed ones, a virtual package's providers."""
        seen, todo = set(), list(pkgs)
        while todo:
            p = todo.pop()
            for q in [p] + self.provider.get(p, []):
                if q in seen or q not in self.deps:
                    continue
                seen.add(q)
                for alts in self.deps[q]:
                    todo.extend(alts)
        return seen

    def lookup(self, paths):
        """dpkg -S of every path, under its /usr and its / spelling, in one
        call (it reads the whole file database)."""
        want = set()
        for path in paths:
            want.update(spellings(path))
        want -= set(self.owners)
        if want:
            r = subprocess.run(["dpkg", "-S"] + sorted(want),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            for line in r.stdout.split("\n"):
                if line.startswith("diversion ") or ": " not in line:
                    continue
                pkgs, f = line.split(": ", 1)
                if f in want:
                    self.owners[f] = pkgs.split(", ")[0].split(":")[0]
            for f in want:
                self.owners.setdefault(f, None)

    def owner(self, path):
        self.lookup([path])
        for p in spellings(path):
            if self.owners.get(p):
                return self.owners[p]
        return None


def spellings(path):
    """path as dpkg may know it: bookworm's merged /usr has /bin/x and
    /usr/bin/x for one file, a package ships one of them."""
    out = [path]
    for top in ("/bin/", "/sbin/", "/lib/", "/lib64/"):
        if path.startswith(top):
            out.append("/usr" + path)
        if path.startswith("/usr" + top):
            out.append(path[4:])
    return out


def alternatives(path):
    """Every candidate when path goes through /etc/alternatives (awk, cc,
    ...): on a fresh machine the one that is installed is chosen."""
    p, names = path, []
    for _ in range(10):
        if not os.path.islink(p):
            break
        if p.startswith("/etc/alternatives/"):
            names.append(os.path.basename(p))
        p = os.path.join(os.path.dirname(p), os.readlink(p))
    cands = []
    for name in names:
        r = subprocess.run(["update-alternatives", "--list", name],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
        cands += [os.path.realpath(c) for c in r.stdout.split()]
    return cands


def resolve(cmd):
    """The file the stages run for cmd: command -v, or for a shell builtin
    that is also a program (true, kill) the first in PATH."""
    r = subprocess.run(["sh", "-c", 'command -v "$1"', "sh", cmd],
                       stdout=subprocess.PIPE, text=True)
    path = r.stdout.strip()
    if r.returncode == 0 and path.startswith("/"):
        return path
    if r.returncode == 0 and "/" not in cmd:
        return shutil.which(cmd)
    return None


def check_trace(log, manifest, root):
    """Every program a traced run executed (strace -f -e trace=execve) that
    is found in PATH's directories must be a manifest command (compared by
    readlink -f); programs elsewhere (cc1, kbuild's scripts) are helpers of
    a package and only listed.  TAP like the scan."""
    packages, commands, errors = read_manifest(manifest)
    known = {}
    for cmd in commands:
        path = resolve(cmd)
        if path:
            known[os.path.realpath(path)] = cmd
    ran = {}
    with open(log, errors="replace") as f:
        for line in f:
            m = re.match(r'^\d+\s+execve\("([^"]+)", \["([^"]*)"', line)
            if not m or not line.rstrip().endswith("= 0"):
                continue
            path = m.group(1)
            if path.startswith(root + "/") or not path.startswith("/") or \
                    path.startswith(("/tmp/", "/proc/")):
                continue
            ran.setdefault(os.path.realpath(path), path)
    dp = Dpkg()
    dp.lookup(list(ran))
    bindirs = ("/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/",
               "/usr/local/bin/", "/usr/local/sbin/")
    n = fail = 0
    print("TAP version 13")
    helpers = []
    for real in sorted(ran):
        path = ran[real]
        if real in known:
            continue
        if not path.startswith(bindirs):
            helpers.append(f"{path} ({dp.owner(real) or 'no package'})")
            continue
        n += 1
        fail += 1
        print(f"not ok {n} {path} ({dp.owner(real) or 'no package'}) ran "
              f"but is not a 'command' line of the manifest")
    n += 1
    print(f"ok {n} {len(ran)} programs ran, {len(known)} manifest commands")
    for h in helpers:
        print(f"# helper: {h}")
    print(f"1..{n}")
    print(f"# Totals: pass:{n - fail} fail:{fail} xfail:0 xpass:0 skip:0 "
          f"error:0")
    return 1 if fail else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.getcwd())
    ap.add_argument("--manifest")
    ap.add_argument("--make", default="make")
    ap.add_argument("--list", action="store_true",
                    help="print what the scan found (command, where) and exit")
    ap.add_argument("--trace", metavar="STRACE_LOG",
                    help="compare the programs an strace -f -e trace=execve "
                    "log shows with the manifest instead of scanning")
    ap.add_argument("goals", nargs="*")
    o = ap.parse_args()
    root = os.path.realpath(o.root)
    manifest = o.manifest or os.path.join(root, "scripts/deps.manifest")

    n = [0, 0, 0]        # number, pass, fail

    def tap(good, text, diag=()):
        n[0] += 1
        n[1 if good else 2] += 1
        print(("ok" if good else "not ok") + f" {n[0]} {text}")
        for d in diag:
            print(f"# {d}")

    if o.trace:
        return check_trace(o.trace, manifest, root)
    if not o.goals:
        ap.error("no goals to scan")
    found = Found()
    variables, rules, patterns = make_db(o.make, root)
    REALVALS.update(shell_vars(o.make, root, variables))
    sc = Scanner(root, found, variables, rules, patterns)
    for where, text in make_shell_calls(root, variables):
        sc.scan_shell(expand(text, variables).replace("\\\n", " "),
                      where, root)
    for g in o.goals:
        sc.goal(g)
    if o.list:
        for c in sorted(found.cmds):
            print(f"{c}\t{found.cmds[c][0]}")
        print("# scanned: " + " ".join(sorted(found.scanned)))
        for e in found.errors:
            print(f"error: {e}", file=sys.stderr)
        return 0

    print("TAP version 13")
    tap(not found.errors and len(found.cmds) > 0,
        f"the scan parses every recipe and script "
        f"({len(found.scanned)} project files, {len(found.cmds)} programs)",
        found.errors)

    packages, commands, errors = read_manifest(manifest)
    mrel = os.path.relpath(manifest, root)
    if mrel.startswith("../"):
        mrel = manifest
    tap(not errors and packages, f"{mrel} parses "
        f"({len(packages)} packages, {len(commands)} commands)", errors)

    missing = sorted(c for c in found.cmds if c not in commands)
    for c in missing:
        tap(False, f"{c}: run at {', '.join(found.cmds[c][:3])} but not "
            f"a 'command' line of {mrel}")
    tap(not missing, f"every program the stages run ({len(found.cmds)}) "
        f"is in {mrel}")

    listed = set(packages)
    dp = Dpkg()
    covered = dp.closure(packages)
    resolved = {}
    for cmd in sorted(commands):
        path = resolve(cmd)
        if path:
            resolved[cmd] = (path, os.path.realpath(path), alternatives(path))
    dp.lookup([x for v in resolved.values() for x in [v[0], v[1]] + v[2]])

    def why(p):
        if p in listed:
            return "listed"
        if p in covered:
            return "Depends of a listed package"
        if dp.prio.get(p) == "required":
            return "Priority: required"
        return None

    for cmd in sorted(commands):
        pkg, line = commands[cmd]
        if cmd not in resolved:
            tap(False, f"{cmd}: not found on this machine (manifest: "
                f"package {pkg}; is it a 'package' line of {mrel}?)")
            continue
        path, real, alts = resolved[cmd]
        owner = dp.owner(real) or dp.owner(path)
        if not owner:
            tap(False, f"{cmd}: {real} belongs to no Debian package "
                f"(installed by hand, or earlier in PATH than Debian's?); "
                f"manifest says {pkg}")
            continue
        cands = [owner] + [o for o in map(dp.owner, alts)
                           if o and o != owner]
        ok_pkg = next((p for p in cands if why(p)), None)
        if not ok_pkg:
            tap(False, f"{cmd}: {real} is in package {owner}, which "
                f"install-deps.sh does not install (add 'package {pkg}' "
                f"to {mrel}; not listed, not a Depends of a listed "
                f"package, not Priority: required)")
            continue
        if pkg not in cands and not set(cands) & dp.closure([pkg]):
            tap(False, f"{cmd}: {mrel}:{line} says package {pkg}, but "
                f"{real} is in {owner}")
            continue
        tap(True, f"{cmd}: {real} ({ok_pkg}: {why(ok_pkg)})")

    unused = sorted(c for c in commands if c not in found.cmds)
    if unused:
        print(f"# in {mrel}, not seen by the scan (run some other way): "
              + " ".join(unused))
    print(f"1..{n[0]}")
    print(f"# Totals: pass:{n[1]} fail:{n[2]} xfail:0 xpass:0 skip:0 error:0")
    return 1 if n[2] else 0


if __name__ == "__main__":
    sys.exit(main())
