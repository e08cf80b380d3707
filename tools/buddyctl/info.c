// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl info  - the device: ABI, features, codecs, pools and NUMA nodes
 *                  (BUDDY_IOC_GET_INFO).
 * buddyctl stats - the global counters of the sysfs files mm_stat, io_stat
 *                  and code_stat, with the ratio and buddy-access fraction.
 *
 * Both print text by default and one JSON object with --json; -u/--human
 * prints sizes in binary units.  Keys: Documentation/buddyctl.rst.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <numa.h>

#include "buddyctl.h"
#include "admin_util.h"

#define NODE_PAGE_BYTES	4096ULL	/* the *_node_pages unit (sysfs ABI) */

static const char *const feature_names[] = {
	"rw", "io_uring", "get_map", "admin", "auto", "uring_cmd", "mmap",
	"link_model", "link_requests",
};

/*
 * The sysfs directory of the device named (--device, $BUDDY_DEVICE, else
 * /dev/buddy): that of its character device, found by major:minor, so
 * that no read-write open is needed.  $BUDDY_SYSFS names another one (the
 * tests' fake sysfs).
 */
static char sysfs_buf[64];

static const char *sysfs_dir(void)
{
	const char *p = getenv("BUDDY_SYSFS");
	struct stat st;

	if (p && *p)
		return p;
	if (!stat(au_dev_path(), &st) && S_ISCHR(st.st_mode)) {
		snprintf(sysfs_buf, sizeof(sysfs_buf), "/sys/dev/char/%u:%u",
			 major(st.st_rdev), minor(st.st_rdev));
		return sysfs_buf;
	}
	return BUDDY_SYSFS_DIR;
}

/* First line of a sysfs file of the device, without '\n'; -errno. */
static int sysfs_read(const char *name, char *buf, size_t len)
{
	char path[512];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", sysfs_dir(), name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		err = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!err)
		buf[strcspn(buf, "\n")] = 0;
	return err;
}

/* The default codec: the bracketed name of the sysfs codecs file. */
static const char *default_codec(char *buf, size_t len)
{
	char line[256], *b = NULL, *e = NULL;

	/* an in-process device has buddy.ko's default, BPC, and no sysfs */
	if (!au_path_is_inproc(au_dev_path()) &&
	    !sysfs_read("codecs", line, sizeof(line)))
		b = strchr(line, '[');
	if (b)
		e = strchr(b, ']');
	if (!e)
		return buddy_codec_name(BUDDY_CODEC_BPC);
	*e = 0;
	snprintf(buf, len, "%s", b + 1);
	return buf;
}

static void feature_name(unsigned int bit, char *buf, size_t len)
{
	if (bit < ARRAY_SIZE(feature_names))
		snprintf(buf, len, "%s", feature_names[bit]);
	else
		snprintf(buf, len, "bit%u", bit);
}

static void codec_bit_name(unsigned int bit, char *buf, size_t len)
{
	if (bit < BUDDY_CODEC_NR)
		snprintf(buf, len, "%s", buddy_codec_name(bit));
	else
		snprintf(buf, len, "codec%u", bit);
}

struct pool_view {
	const char *name;
	uint64_t size, used;
	int32_t node;
	const __u64 *pages;
};

static unsigned int nr_nodes(const struct buddy_info *in)
{
	return in->nr_nodes < BUDDY_MAX_NODES ? in->nr_nodes : BUDDY_MAX_NODES;
}

/* The node of a pool: the one asked for, else the only one with pages. */
static int pool_node(const struct pool_view *p, unsigned int nodes)
{
	unsigned int n;
	int node = -1;

	if (p->node >= 0)
		return p->node;
	for (n = 0; n < nodes; n++) {
		if (!p->pages[n])
			continue;
		if (node >= 0)
			return -1;
		node = (int)n;
	}
	return node;
}

/* numa_distance() between the two pools' nodes (libnuma); -1: unknown. */
static int pools_distance(const struct pool_view *pv, unsigned int nodes)
{
	int a = pool_node(&pv[0], nodes), b = pool_node(&pv[1], nodes), d;

	if (a < 0 || b < 0 || numa_available() < 0)
		return -1;
	d = numa_distance(a, b);
	return d > 0 ? d : -1;
}

static struct json_object *pool_json(const struct pool_view *p,
				     unsigned int nodes, bool human)
{
	struct json_object *o = json_object_new_object();
	struct json_object *np = json_object_new_array();
	char list[256];
	unsigned int n;

	json_object_object_add(o, "pool", json_object_new_string(p->name));
	json_object_object_add(o, "size", au_json_size(p->size, human));
	json_object_object_add(o, "used", au_json_size(p->used, human));
	json_object_object_add(o, "free",
			au_json_size(p->size > p->used ? p->size - p->used : 0,
				     human));
	json_object_object_add(o, "node_requested",
			       json_object_new_int(p->node));
	json_object_object_add(o, "nodes", json_object_new_string(
			au_nodelist(p->pages, nodes, list, sizeof(list))));
	for (n = 0; n < nodes; n++) {
		struct json_object *e;

		if (!p->pages[n])
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "node", json_object_new_int(n));
		json_object_object_add(e, "pages",
				       json_object_new_uint64(p->pages[n]));
		json_object_object_add(e, "bytes", au_json_size(
				p->pages[n] * NODE_PAGE_BYTES, human));
		json_object_array_add(np, e);
	}
	json_object_object_add(o, "node_pages", np);
	return o;
}

static int info_json(const struct buddy_info *in, const struct pool_view *pv,
		     bool human)
{
	struct json_object *o = json_object_new_object();
	struct json_object *feat = json_object_new_array();
	struct json_object *codecs = json_object_new_array();
	struct json_object *pools = json_object_new_array();
	char name[32];
	unsigned int b;
	int dist;

	json_object_object_add(o, "device", json_object_new_string(au_dev_path()));
	json_object_object_add(o, "abi_version",
			       json_object_new_int(in->abi_version));
	for (b = 0; b < 64; b++) {
		if (!(in->features & (1ULL << b)))
			continue;
		feature_name(b, name, sizeof(name));
		json_object_array_add(feat, json_object_new_string(name));
	}
	json_object_object_add(o, "features", feat);
	for (b = 1; b < 64; b++) {
		if (!(in->codecs & (1ULL << b)))
			continue;
		codec_bit_name(b, name, sizeof(name));
		json_object_array_add(codecs, json_object_new_string(name));
	}
	json_object_object_add(o, "codecs", codecs);
	json_object_object_add(o, "default_codec", json_object_new_string(
				       default_codec(name, sizeof(name))));
	json_object_object_add(o, "max_ratio",
			       json_object_new_int(in->max_ratio));
	json_object_object_add(o, "carve_out_ratio", bjson_fixed(
		in->device_bytes ? (double)in->buddy_bytes / in->device_bytes : 0,
		3));
	json_object_object_add(o, "ratio",
			       bjson_fixed(in->ratio_milli / 1000.0, 3));
	json_object_object_add(o, "ratio_milli",
			       json_object_new_int64(in->ratio_milli));
	json_object_object_add(o, "nr_allocs",
			       json_object_new_int64(in->nr_allocs));
	json_object_object_add(o, "logical_bytes",
			       au_json_size(in->logical_bytes, human));
	json_object_object_add(o, "chunk_bytes",
			       au_json_size(in->chunk_bytes, human));
	json_object_object_add(o, "nr_nodes", json_object_new_int(in->nr_nodes));
	dist = pools_distance(pv, nr_nodes(in));
	json_object_object_add(o, "numa_distance",
			       dist < 0 ? NULL : json_object_new_int(dist));
	for (b = 0; b < 2; b++)
		json_object_array_add(pools, pool_json(&pv[b], nr_nodes(in),
						       human));
	json_object_object_add(o, "pools", pools);
	return au_print_json(o);
}

static void node_pages_text(const __u64 *pages, unsigned int n, char *buf,
			    size_t len)
{
	size_t used = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < n && used < len; i++) {
		int w;

		if (!pages[i])
			continue;
		w = snprintf(buf + used, len - used, "%s%u:%" PRIu64,
			     used ? " " : "", i, (uint64_t)pages[i]);
		used += w > 0 ? (size_t)w : 0;
	}
	if (!used)
		snprintf(buf, len, "-");
}

static int info_text(const struct buddy_info *in, const struct pool_view *pv,
		     bool human)
{
	char name[32], a[32], b[32], c[32], list[256], pages[512], line[512];
	unsigned int bit, k;
	size_t used = 0;

	printf("%-13s %s\n", "device", au_dev_path());
	printf("%-13s %u\n", "abi_version", in->abi_version);
	line[0] = 0;
	for (bit = 0; bit < 64; bit++) {
		if (!(in->features & (1ULL << bit)))
			continue;
		feature_name(bit, name, sizeof(name));
		used += snprintf(line + used, sizeof(line) - used, "%s%s",
				 used ? " " : "", name);
	}
	printf("%-13s %s\n", "features", used ? line : "-");
	default_codec(a, sizeof(a));
	used = 0;
	line[0] = 0;
	for (bit = 1; bit < 64; bit++) {
		if (!(in->codecs & (1ULL << bit)))
			continue;
		codec_bit_name(bit, name, sizeof(name));
		used += snprintf(line + used, sizeof(line) - used,
				 !strcmp(name, a) ? "%s[%s]" : "%s%s",
				 used ? " " : "", name);
	}
	printf("%-13s %s\n", "codecs", used ? line : "-");
	printf("%-13s %ux (carve-out %.3gx the device pool)\n", "max_ratio",
	       in->max_ratio,
	       in->device_bytes ? (double)in->buddy_bytes / in->device_bytes : 0);
	if (!in->nr_allocs || !in->device_used)
		printf("%-13s - (no allocations)\n", "ratio");
	else
		printf("%-13s %.3fx (logical %s / device used %s)\n", "ratio",
		       in->ratio_milli / 1000.0,
		       au_size(in->logical_bytes, human, a, sizeof(a)),
		       au_size(in->device_used, human, b, sizeof(b)));
	printf("%-13s %u\n", "allocations", in->nr_allocs);
	printf("%-13s %s\n", "chunk", au_size(in->chunk_bytes, human, a,
					      sizeof(a)));
	if (pools_distance(pv, nr_nodes(in)) < 0)
		printf("%-13s -\n", "numa_distance");
	else
		printf("%-13s %d (device pool on node %d, carve-out on node %d)\n",
		       "numa_distance", pools_distance(pv, nr_nodes(in)),
		       pool_node(&pv[0], nr_nodes(in)),
		       pool_node(&pv[1], nr_nodes(in)));
	printf("\n%-7s %14s %14s %14s %-5s %-8s %s\n", "pool", "size", "used",
	       "free", "asked", "nodes", "pages(node:count)");
	for (k = 0; k < 2; k++) {
		const struct pool_view *p = &pv[k];
		char asked[16];

		if (p->node < 0)
			snprintf(asked, sizeof(asked), "any");
		else
			snprintf(asked, sizeof(asked), "%d", p->node);
		au_nodelist(p->pages, nr_nodes(in), list, sizeof(list));
		node_pages_text(p->pages, nr_nodes(in), pages, sizeof(pages));
		printf("%-7s %14s %14s %14s %-5s %-8s %s\n", p->name,
		       au_size(p->size, human, a, sizeof(a)),
		       au_size(p->used, human, b, sizeof(b)),
		       au_size(p->size > p->used ? p->size - p->used : 0, human,
			       c, sizeof(c)),
		       asked, *list ? list : "-", pages);
	}
	return au_flush_stdout();
}

static void info_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl info [-j|--json] [-u|--human]\n"
		"\n"
		"Describe the Buddy Compression device (BUDDY_IOC_GET_INFO): ABI\n"
		"version, features, codecs ([default]), maximum and current\n"
		"expansion ratio, and both pools (device pool and buddy carve-out)\n"
		"with size, used and free bytes, the NUMA node asked for and the\n"
		"nodes their pages came from (numactl list, and pages per node).\n"
		"\n"
		"  -j, --json    one JSON object (keys: Documentation/buddyctl.rst)\n"
		"  -u, --human   sizes in binary units (\"1.50 MiB\")\n"
		"  -h, --help    this text\n"
		"\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n");
}

int cmd_info(int argc, char **argv)
{
	struct buddy_info in;
	struct pool_view pv[2];
	bool json = false, human = false;
	int fd, r;

	r = au_simple_start("info", argc, argv, info_usage, &json, &human, &fd);
	if (r >= 0)
		return r;
	memset(&in, 0, sizeof(in));
	r = buddy_get_info(fd, &in);
	close(fd);
	if (r) {
		au_err(au_dev_path(), r, BUDDY_OP_INFO);
		return 1;
	}
	pv[0] = (struct pool_view){ "device", in.device_bytes, in.device_used,
				    in.device_node, in.device_node_pages };
	pv[1] = (struct pool_view){ "buddy", in.buddy_bytes, in.buddy_used,
				    in.buddy_node, in.buddy_node_pages };
	return json ? info_json(&in, pv, human) : info_text(&in, pv, human);
}

/* ---- stats ---------------------------------------------------------------- */

struct stat_file {
	const char *file;
	const char *const *cols;
	unsigned int nr;
	uint64_t bytes_mask;	/* columns that are byte counts */
};

static const char *const mm_cols[] = {
	"device_total", "device_used", "buddy_total", "buddy_used",
	"logical_bytes", "nr_allocs", "ratio_milli",
};
static const char *const io_cols[] = {
	"entry_reads", "entry_writes", "device_sectors_read",
	"device_sectors_written", "buddy_sectors_read",
	"buddy_sectors_written", "buddy_accesses", "overflows",
};

static const struct stat_file stat_files[] = {
	{ "mm_stat", mm_cols, 7, 0x1f },
	{ "io_stat", io_cols, 8, 0 },
	{ "code_stat", au_code_keys, BUDDY_CODE_NR, 0 },
};

#define MAX_COLS	32

/* Columns of one stat file; returns how many, or -errno (message printed). */
static int read_cols(const struct stat_file *sf, uint64_t *v)
{
	char line[1024], *p, *end, path[600];
	int n = 0, r;

	r = sysfs_read(sf->file, line, sizeof(line));
	if (r) {
		snprintf(path, sizeof(path), "%s/%s", sysfs_dir(), sf->file);
		if (r == -ENOENT && access(sysfs_dir(), F_OK))
			buddyctl_err("%s: %s (the buddy module is not loaded)",
				     path, strerror(-r));
		else
			au_err(path, r, -1);
		return r;
	}
	for (p = line; n < MAX_COLS; p = end) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		errno = 0;
		v[n] = strtoull(p, &end, 10);
		if (end == p || errno) {
			snprintf(path, sizeof(path), "%s/%s", sysfs_dir(),
				 sf->file);
			buddyctl_err("%s: unexpected contents '%s'", path, line);
			return -EINVAL;
		}
		n++;
	}
	return n;
}

/* The in-process device has no sysfs: the same columns from libbuddy. */
static int stats_inproc(uint64_t v[3][MAX_COLS], int nr[3])
{
	struct buddy_counters io;
	struct buddy_info in;
	int fd = au_open(), r;

	if (fd < 0)
		return -1;
	memset(&in, 0, sizeof(in));
	r = buddy_get_info(fd, &in);
	if (!r)
		r = buddy_device_stats(fd, &io, v[2]);
	close(fd);
	if (r) {
		au_err(au_dev_path(), r, BUDDY_OP_INFO);
		return -1;
	}
	v[0][0] = in.device_bytes;
	v[0][1] = in.device_used;
	v[0][2] = in.buddy_bytes;
	v[0][3] = in.buddy_used;
	v[0][4] = in.logical_bytes;
	v[0][5] = in.nr_allocs;
	v[0][6] = in.ratio_milli;
	memcpy(v[1], &io, sizeof(io));
	nr[0] = 7;
	nr[1] = sizeof(io) / sizeof(uint64_t);
	nr[2] = BUDDY_CODE_NR;
	return 0;
}

/*
 * The three stat files of the device named; -1 when it is not there or
 * not a buddy device (message printed).
 */
static int stats_read(uint64_t v[3][MAX_COLS], int nr[3])
{
	const char *path = au_dev_path(), *env = getenv("BUDDY_SYSFS");
	struct stat st;
	char mm[128];
	unsigned int f;

	if (au_path_is_inproc(path))
		return stats_inproc(v, nr);
	if (!(env && *env)) {
		if (stat(path, &st)) {
			int err = errno;

			buddyctl_err("%s: %s%s", path, strerror(err),
				     err == ENOENT && !au_module_loaded() ?
				     " (the buddy module is not loaded: modprobe buddy)" : "");
			return -1;
		}
		if (!S_ISCHR(st.st_mode)) {
			buddyctl_err("%s: not a buddy device (not a character device)",
				     path);
			return -1;
		}
		snprintf(mm, sizeof(mm), "%s/mm_stat", sysfs_dir());
		if (access(mm, F_OK)) {
			buddyctl_err("%s: not a buddy device (no %s)", path,
				     mm);
			return -1;
		}
	}
	for (f = 0; f < 3; f++) {
		nr[f] = read_cols(&stat_files[f], v[f]);
		if (nr[f] < 0)
			return -1;
	}
	return 0;
}

static void stats_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl stats [-j|--json] [-u|--human]\n"
		"\n"
		"Global counters of the device since the module was loaded, from\n"
		"the sysfs files mm_stat, io_stat and code_stat of the device named\n"
		"by --device (default %s: %s), plus the\n"
		"expansion ratio now and the measured buddy-access fraction,\n"
		"buddy_accesses / (entry_reads + entry_writes).  For an in-process\n"
		"device (--device inproc:...) the same columns come from libbuddy.\n"
		"\n"
		"  -j, --json    one JSON object (keys: Documentation/buddyctl.rst)\n"
		"  -u, --human   byte counts in binary units\n"
		"  -h, --help    this text\n"
		"\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n",
		BUDDY_DEV_PATH, BUDDY_SYSFS_DIR);
}

int cmd_stats(int argc, char **argv)
{
	uint64_t v[3][MAX_COLS];
	int nr[3];
	struct json_object *root = NULL;
	struct buddy_counters cnt;
	bool json = false, human = false;
	double ratio = 0, frac;
	unsigned int f, k;
	int r;

	r = au_simple_opts("stats", argc, argv, stats_usage, &json, &human);
	if (r >= 0)
		return r;
	if (stats_read(v, nr))
		return 1;
	/* columns are only ever appended: name those this tool knows */
	memset(&cnt, 0, sizeof(cnt));
	memcpy(&cnt, v[1], sizeof(uint64_t) *
	       (nr[1] < 8 ? nr[1] : 8));
	frac = au_buddy_fraction(&cnt);
	if (nr[0] >= 7)
		ratio = v[0][6] / 1000.0;

	if (json)
		root = json_object_new_object();
	for (f = 0; f < 3; f++) {
		const struct stat_file *sf = &stat_files[f];
		struct json_object *o = json ? json_object_new_object() : NULL;
		unsigned int n = (unsigned int)nr[f] < sf->nr ? nr[f] : sf->nr;

		if (!json)
			printf("%s\n", sf->file);
		for (k = 0; k < n; k++) {
			bool bytes = sf->bytes_mask & (1ULL << k);
			char buf[32];

			if (json)
				json_object_object_add(o, sf->cols[k], bytes ?
					au_json_size(v[f][k], human) :
					json_object_new_uint64(v[f][k]));
			else
				printf("  %-24s %s\n", sf->cols[k],
				       au_size(v[f][k], human && bytes, buf,
					       sizeof(buf)));
		}
		if (json)
			json_object_object_add(root, sf->file, o);
	}
	if (json) {
		json_object_object_add(root, "ratio", bjson_fixed(ratio, 3));
		json_object_object_add(root, "buddy_access_fraction",
				       bjson_fixed(frac, 4));
		return au_print_json(root);
	}
	printf("%-26s %.3f\n", "ratio", ratio);
	printf("%-26s %.4f\n", "buddy_access_fraction", frac);
	return au_flush_stdout();
}
