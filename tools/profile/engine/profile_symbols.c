// SPDX-License-Identifier: GPL-2.0
/*
 * profile_symbols.c - a label's return addresses (module, file offset) as
 * symbols, from the modules' ELF symbol tables, C++ names demangled (here,
 * at report time: the interposer only records addresses), and a label's
 * site: the Python line the interposer recorded, else its first frame
 * outside the allocator libraries.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile_priv.h"

/* ---- symbols ---------------------------------------------------------------- */

struct sym {
	uint64_t value, size;
	const char *name;
};

struct elfsyms {
	void *map;
	size_t len;
	struct sym *syms;
	size_t n;
	Elf64_Phdr load[16];
	int nload;
	bool failed;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

static void add_symtab(struct elfsyms *es, const Elf64_Ehdr *eh,
		       const Elf64_Shdr *sh, unsigned int type)
{
	const char *base = es->map;
	unsigned int i;

	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = &sh[i], *strs;
		const Elf64_Sym *sym;
		size_t k, nsym;

		if (s->sh_type != type || s->sh_link >= eh->e_shnum ||
		    s->sh_offset + s->sh_size > es->len || !s->sh_entsize)
			continue;
		strs = &sh[s->sh_link];
		if (strs->sh_offset + strs->sh_size > es->len)
			continue;
		sym = (const Elf64_Sym *)(base + s->sh_offset);
		nsym = s->sh_size / sizeof(*sym);
		es->syms = realloc(es->syms, (es->n + nsym) * sizeof(struct sym));
		if (!es->syms) {
			es->n = 0;
			return;
		}
		for (k = 0; k < nsym; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
			    !sym[k].st_value || sym[k].st_shndx == SHN_UNDEF ||
			    sym[k].st_name >= strs->sh_size)
				continue;
			es->syms[es->n].value = sym[k].st_value;
			es->syms[es->n].size = sym[k].st_size;
			es->syms[es->n].name = base + strs->sh_offset + sym[k].st_name;
			es->n++;
		}
	}
}

static struct elfsyms *elf_load(const char *path)
{
	struct elfsyms *es = calloc(1, sizeof(*es));
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct stat stb;
	int fd, i;

	if (!es)
		return NULL;
	es->failed = true;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return es;
	if (fstat(fd, &stb) || stb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return es;
	}
	es->len = stb.st_size;
	es->map = mmap(NULL, es->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (es->map == MAP_FAILED) {
		es->map = NULL;
		return es;
	}
	eh = es->map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(*ph) > es->len ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > es->len)
		return es;
	ph = (const Elf64_Phdr *)((char *)es->map + eh->e_phoff);
	for (i = 0; i < eh->e_phnum && es->nload < 16; i++)
		if (ph[i].p_type == PT_LOAD)
			es->load[es->nload++] = ph[i];
	if (eh->e_shnum) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)((char *)es->map +
							    eh->e_shoff);

		add_symtab(es, eh, sh, SHT_SYMTAB);
		if (!es->n)
			add_symtab(es, eh, sh, SHT_DYNSYM);
	}
	qsort(es->syms, es->n, sizeof(*es->syms), cmp_sym);
	es->failed = false;
	return es;
}

/* libstdc++'s demangler (the Itanium C++ ABI's, extern "C") */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* "module!symbol+0xoff", @name demangled when it is a C++ name. */
static void put_sym(char *buf, size_t len, const char *mod, const char *name,
		    uint64_t off)
{
	char *dm = NULL;
	int status = -1;

	if (name[0] == '_' && name[1] == 'Z')
		dm = __cxa_demangle(name, NULL, NULL, &status);
	snprintf(buf, len, "%s!%s+0x%llx", mod, dm && !status ? dm : name,
		 (unsigned long long)off);
	free(dm);
}

/* "module!symbol+0xoff", or "module+0xoff" without a symbol. */
void prof_symbolize(struct prof_run *r, const struct prof_frame *f, char *buf,
		      size_t len)
{
	struct prof_module *m;
	struct elfsyms *es;
	uint64_t va = 0;
	bool have_va = false;
	int i;

	if (f->mod < 0) {
		snprintf(buf, len, "?+0x%llx", (unsigned long long)f->off);
		return;
	}
	m = &r->mods[f->mod];
	if (!m->elf)
		m->elf = elf_load(m->path);
	es = m->elf;
	if (es && !es->failed) {
		for (i = 0; i < es->nload; i++) {
			const Elf64_Phdr *p = &es->load[i];

			if (f->off >= p->p_offset &&
			    f->off < p->p_offset + p->p_filesz) {
				va = f->off - p->p_offset + p->p_vaddr;
				have_va = true;
				break;
			}
		}
	}
	if (have_va && es->n) {
		size_t lo = 0, hi = es->n;

		/* last symbol with value <= va - 1 (va is a return address) */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (es->syms[mid].value <= va - 1)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo) {
			const struct sym *s = &es->syms[lo - 1];

			if (!s->size || va - 1 < s->value + s->size) {
				put_sym(buf, len, m->base, s->name,
					va - s->value);
				return;
			}
		}
	}
	snprintf(buf, len, "%s+0x%llx", m->base, (unsigned long long)f->off);
}

/*
 * The allocator libraries: frames in them say how memory was allocated,
 * not who asked for it.  A module (basename prefix) and, where the library
 * also holds the code that asks (numpy's, libtorch's), the symbols that
 * are its allocator; NULL: every frame of it.
 */
static const struct {
	const char *mod;
	const char *const *syms;
} allocators[] = {
	{ "libc.so", NULL }, { "libc-", NULL }, { "ld-linux", NULL },
	{ "libstdc++", NULL }, { "libgcc_s", NULL }, { "libc10", NULL },
	{ "libbuddyprof", NULL },
	{ "_multiarray_umath", (const char *const[]){ "alloc", "DataMem",
	  "NewFromDescr", "npy_", NULL } },
	{ "libtorch", (const char *const[]){ "alloc", "Alloc", "empty",
	  "StorageImpl", "make_intrusive", NULL } },
};

/* Whether frame @f is in an allocator library; its symbol in @sym. */
static bool in_allocator(struct prof_run *r, const struct prof_frame *f,
			 const char *sym)
{
	const char *base, *name;

	if (f->mod < 0)
		return false;
	base = r->mods[f->mod].base;
	name = strchr(sym, '!');
	for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++) {
		if (strncmp(base, allocators[i].mod, strlen(allocators[i].mod)))
			continue;
		if (!allocators[i].syms)
			return true;
		for (const char *const *s = allocators[i].syms; name && *s; s++)
			if (strstr(name, *s))
				return true;
		return false;
	}
	return false;
}

int prof_site(struct prof_run *r, const struct prof_label *l, char *buf,
	      size_t len)
{
	if (l->site) {
		snprintf(buf, len, "%s", l->site);
		return l->nframes ? PROF_SITE_PYTHON : 0;
	}
	return prof_native_site(r, l, buf, len);
}

int prof_native_site(struct prof_run *r, const struct prof_label *l,
		     char *buf, size_t len)
{
	unsigned int k;

	for (k = 0; k < l->nframes; k++) {
		prof_symbolize(r, &l->frames[k], buf, len);
		if (!in_allocator(r, &l->frames[k], buf))
			return k;
	}
	if (!l->nframes) {
		snprintf(buf, len, "?");
		return -1;
	}
	prof_symbolize(r, &l->frames[0], buf, len);
	return 0;
}

void prof_short_sym(char *s)
{
	char *plus = strrchr(s, '+'), *bang = strchr(s, '!');
	int depth = 0;

	if (!bang || !plus)
		return;
	/* cut the parameter list: the first '(' at depth 0 of <> and () that
	 * follows a name (not "(anonymous namespace)") */
	for (char *p = bang + 1; p < plus; p++) {
		if (*p == '<') {
			depth++;
		} else if (*p == '>' && depth) {
			depth--;
		} else if (*p == '(' && !depth && p > bang + 1 &&
			   strncmp(p, "(anonymous", 10) && p[-1] != ':') {
			memmove(p, plus, strlen(plus) + 1);
			return;
		}
	}
}
