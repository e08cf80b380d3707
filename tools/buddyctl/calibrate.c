// SPDX-License-Identifier: GPL-2.0
/*
 * calibrate.c - "buddyctl calibrate": CSWAP's codec-time model.
 *
 * For every codec (lib/tcodec.h), every size and every sparsity it
 * times compression and decompression of generated float32 activations
 * (smooth values, DATAGEN_FLOAT32, made non-negative, with the given
 * fraction of zeros placed independently), twice with two seeds, and fits
 * CSWAP's linear model of time on size and sparsity (tools/common/calib.h)
 * for each direction, and the same model of the encoded size.  Each fit's
 * relative absolute error is measured on the second run of every point
 * with the model fitted on the first.  The models go to a JSON file a
 * policy loads; the raw samples go with them.
 *
 * Every run is also decoded and compared: a codec that does not give its
 * input back (lossless ones) or its (x > 0) test (Binarize) fails the
 * calibration rather than being modelled.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "admin_util.h"
#include "buddyctl.h"
#include "tools/common/calib.h"
#include "tools/common/datagen.h"
#include "tools/common/stats.h"
#include "lib/tcodec.h"

#define CAL_FORMAT	"buddy-calibration"
#define CAL_VERSION	1
#define CAL_MAX_SIZE	(1ULL << 30)
#define CAL_RUNS	2	/* per point: fit on the first, RAE on the second */

static const char *const def_sizes = "65536,262144,1048576,4194304";
static const char *const def_sparsities = "0.2,0.35,0.5,0.65,0.8,0.9";

static void usage(FILE *f)
{
	fprintf(f,
"usage: buddyctl calibrate [OPTIONS]\n"
"\n"
"Time each codec on generated float32 activations of every size and\n"
"sparsity, fit CSWAP's model  t = c0 + c1*size + c2*sparsity +\n"
"c3*size*sparsity  per codec for compression, decompression and encoded\n"
"bytes, and write the models and their relative absolute error (RAE) as\n"
"JSON.\n"
"\n"
"  -c, --codecs LIST      codecs to time (default: every lossless one;\n"
"                         naming a lossy one opts in to it)\n"
"      --sizes LIST       tensor sizes in bytes, multiples of 4, at least\n"
"                         two (default %s)\n"
"      --sparsities LIST  fractions of zeros in [0, 1], at least two\n"
"                         (default %s)\n"
"      --repeat N         timed repetitions per run, the fastest kept\n"
"                         (default 5)\n"
"      --tensors DIR      time real tensors instead: every DIR/ *.f32 (raw\n"
"                         float32, e.g. activations numpy's tofile()\n"
"                         wrote), once each; the even-numbered by name fit,\n"
"                         the odd-numbered measure the RAE (not with\n"
"                         --sizes, --sparsities, --bins)\n"
"  -b, --bins N           also fit CSWAP's N sub-models, one per equal\n"
"                         range of sparsity, each of two or more of the\n"
"                         sparsities (default 1: the whole range only)\n"
"      --seed N           data seed (default 1)\n"
"  -o, --output FILE      write the model to FILE (default: stdout)\n"
"      --list             list the codecs and exit\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 success, 1 runtime error (a codec failed, a tensor file\n"
"or FILE that cannot be read or written), 2 usage error.\n",
		def_sizes, def_sparsities);
}

/*
 * The calling thread's CPU time: on a shared machine wall time also counts
 * the time other processes hold the CPU, which no model of the codec can
 * predict.  The codecs are single-threaded and do no I/O, so on an idle
 * machine the two agree.
 */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Non-negative smooth float32 values, a @sparsity fraction of them zero. */
static void gen(float *v, size_t n, double sparsity, u64 seed)
{
	struct datagen_rng r;
	size_t i;

	datagen_fill(DATAGEN_FLOAT32, seed, v, n * 4);
	datagen_seed(&r, datagen_mix(seed, 0x5ba75e));
	for (i = 0; i < n; i++) {
		if (datagen_below(&r, 1000000) < sparsity * 1000000)
			v[i] = 0.0f;
		else if (!(v[i] = fabsf(v[i])))
			v[i] = 1e-3f;
	}
}

/* Decoded output matches what the codec promises to keep. */
static int check_decoded(const struct tcodec *c, const float *in,
			 const float *out, size_t n)
{
	size_t i;

	if (tcodec_lossless(c))
		return memcmp(in, out, 4 * n) ? -1 : 0;
	if (c->flags & TCODEC_MASK) {
		for (i = 0; i < n; i++)
			if ((in[i] > 0) != (out[i] > 0))
				return -1;
	}
	return 0;	/* lossy: accuracy is tcodec_test's business */
}

struct cal_run {
	double size, sparsity, t_enc, t_dec, bytes;
};

/* Time @c on the @len bytes at @in (of @sparsity) into @res. */
static int time_one(const struct tcodec *c, size_t len, double sparsity,
		    unsigned int repeat, float *in, u8 *enc, float *out,
		    struct cal_run *res)
{
	double te[repeat], td[repeat], t0;	/* the fastest is kept */
	ssize_t elen = 0;
	unsigned int k;

	for (k = 0; k < repeat; k++) {
		t0 = now();
		elen = tcodec_encode(c, in, len, enc, c->bound(len));
		te[k] = now() - t0;
		if (elen < 0)
			return (int)elen;
		t0 = now();
		if (tcodec_decode(c, enc, elen, out, len))
			return -EBADMSG;
		td[k] = now() - t0;
	}
	if (check_decoded(c, in, out, len / 4))
		return -EBADMSG;
	qsort(te, repeat, sizeof(double), buddy_cmp_double);
	qsort(td, repeat, sizeof(double), buddy_cmp_double);
	res->size = len;
	res->sparsity = sparsity;
	res->t_enc = te[0];
	res->t_dec = td[0];
	res->bytes = elen;
	return 0;
}

struct cal_opts {
	const struct tcodec **codecs;
	size_t ncodecs;
	uint64_t *sizes;
	size_t nsizes;
	double *sp;
	size_t nsp;
	unsigned int repeat;
	uint64_t seed;
	unsigned int bins;
	double lo, hi;		/* sparsity range of the bins */
	const char *dir;	/* --tensors: real tensors instead */
	struct cal_file {
		char *path;
		uint64_t bytes;
	} *files;		/* sorted by path */
	size_t nfiles;
};

/* CSWAP's sub-model of sparsity @s: bins of equal width over [lo, hi]. */
static unsigned int bin_of(const struct cal_opts *o, double s)
{
	unsigned int b;

	if (o->bins < 2 || !(o->hi > o->lo))
		return 0;
	b = (unsigned int)((s - o->lo) / (o->hi - o->lo) * o->bins);
	return b < o->bins ? b : o->bins - 1;
}

static struct json_object *fit_json(const struct calib_sample *s, size_t n,
				    const char *codec, const char *what)
{
	struct json_object *o, *coef;
	struct calib_model m;
	int i, ret;

	ret = calib_model_fit(s, n, &m);
	if (ret) {
		buddyctl_err("calibrate: %s: fitting the %s model: %s", codec,
			     what, strerror(-ret));
		return NULL;
	}
	o = json_object_new_object();
	coef = json_object_new_array();
	for (i = 0; i < CALIB_NFEAT; i++)
		json_object_array_add(coef, json_object_new_double(m.coef[i]));
	json_object_object_add(o, "coef", coef);
	json_object_object_add(o, "rae", isnan(m.rae) ? NULL :
			       json_object_new_double(m.rae));
	return o;
}

static struct json_object *model_json(const struct cal_opts *opt,
				      const struct cal_run *runs, size_t n,
				      size_t field, const char *codec,
				      const char *what)
{
	struct calib_sample *s = malloc(n * sizeof(*s)), *sub = NULL, *half = NULL;
	struct json_object *o = NULL, *bins, *b;
	double num = 0, den = 0, mean = 0, c[CALIB_NFEAT];
	bool fitted = true;
	unsigned int bin;
	size_t k, m, j, h;

	if (!s)
		goto out;
	for (k = 0; k < n; k++) {
		s[k].size = runs[k].size;
		s[k].sparsity = runs[k].sparsity;
		s[k].y = *(const double *)((const char *)&runs[k] + field);
	}
	o = fit_json(s, n, codec, what);
	if (!o || opt->bins < 2)
		goto out;
	/* The runs of a point stay neighbours: k % 2 is still the run. */
	sub = malloc(n * sizeof(*sub));
	half = malloc(n * sizeof(*half));
	bins = json_object_new_array();
	json_object_object_add(o, "bins", bins);
	for (bin = 0; sub && half && bin < opt->bins; bin++) {
		struct json_object *range = json_object_new_array();
		double w = (opt->hi - opt->lo) / opt->bins;

		for (k = m = 0; k < n; k++)
			if (bin_of(opt, s[k].sparsity) == bin)
				sub[m++] = s[k];
		b = fit_json(sub, m, codec, what);
		if (!b) {
			json_object_put(o);
			o = NULL;
			goto out;
		}
		json_object_array_add(range, json_object_new_double(opt->lo + w * bin));
		json_object_array_add(range, json_object_new_double(
			bin + 1 == opt->bins ? opt->hi : opt->lo + w * (bin + 1)));
		json_object_object_add(b, "sparsity", range);
		json_object_array_add(bins, b);
		/* The piecewise model's error on the second runs, all bins. */
		for (j = h = 0; j < m; j += 2)
			half[h++] = sub[j];
		if (calib_fit(half, h, c)) {
			fitted = false;
			continue;
		}
		for (j = 1; j < m; j += 2)
			num += fabs(calib_predict(c, sub[j].size, sub[j].sparsity) -
				    sub[j].y);
	}
	if (!sub || !half) {
		json_object_put(o);
		o = NULL;
		goto out;
	}
	for (k = 1; k < n; k += 2)
		mean += s[k].y / (n / 2);
	for (k = 1; k < n; k += 2)
		den += fabs(mean - s[k].y);
	json_object_object_add(o, "bins_rae", fitted && den > 0 ?
			       json_object_new_double(num / den) : NULL);
out:
	free(s);
	free(sub);
	free(half);
	return o;
}

static struct json_object *samples_json(const struct cal_run *runs, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t k;

	for (k = 0; k < n; k++) {
		struct json_object *r = json_object_new_array();

		json_object_array_add(r, json_object_new_int64((int64_t)runs[k].size));
		json_object_array_add(r, json_object_new_double(runs[k].sparsity));
		json_object_array_add(r, json_object_new_double(runs[k].t_enc));
		json_object_array_add(r, json_object_new_double(runs[k].t_dec));
		json_object_array_add(r, json_object_new_int64((int64_t)runs[k].bytes));
		json_object_array_add(a, r);
	}
	return a;
}


static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct cal_file *)a)->path,
		      ((const struct cal_file *)b)->path);
}

/*
 * --tensors DIR: every regular file DIR/ *.f32 (raw float32, native byte
 * order, as numpy's tofile() writes it), sorted by name.  0, or an exit
 * status after printing why.
 */
static int scan_tensors(struct cal_opts *o)
{
	struct dirent *d;
	struct stat st;
	char path[PATH_MAX];
	size_t cap = 0, len;
	DIR *dir = opendir(o->dir);

	if (!dir) {
		buddyctl_err("calibrate: --tensors %s: %s", o->dir, strerror(errno));
		return 1;
	}
	while ((d = readdir(dir))) {
		len = strlen(d->d_name);
		if (len < 5 || strcmp(d->d_name + len - 4, ".f32"))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", o->dir, d->d_name) >=
		    (int)sizeof(path)) {
			buddyctl_err("calibrate: %s/%s: %s", o->dir, d->d_name,
				     strerror(ENAMETOOLONG));
			goto err;
		}
		if (stat(path, &st)) {
			buddyctl_err("calibrate: %s: %s", path, strerror(errno));
			goto err;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (!st.st_size || st.st_size % 4 ||
		    (uint64_t)st.st_size > CAL_MAX_SIZE) {
			buddyctl_err("calibrate: %s: %lld bytes is not a float32 tensor of 4 to %llu bytes, a multiple of 4",
				     path, (long long)st.st_size, CAL_MAX_SIZE);
			goto err;
		}
		if (o->nfiles == cap) {
			struct cal_file *f;

			cap = cap ? 2 * cap : 64;
			f = realloc(o->files, cap * sizeof(*f));
			if (!f)
				goto nomem;
			o->files = f;
		}
		o->files[o->nfiles].path = strdup(path);
		if (!o->files[o->nfiles].path)
			goto nomem;
		o->files[o->nfiles++].bytes = st.st_size;
	}
	closedir(dir);
	dir = NULL;
	if (o->nfiles < 2 * CALIB_NFEAT) {
		buddyctl_err("calibrate: --tensors %s: %zu *.f32 files, need at least %d (half fit the model, half measure its error)",
			     o->dir, o->nfiles, 2 * CALIB_NFEAT);
		return 1;
	}
	qsort(o->files, o->nfiles, sizeof(*o->files), cmp_path);
	return 0;
nomem:
	buddyctl_err("calibrate: --tensors %s: %s", o->dir, strerror(ENOMEM));
err:
	if (dir)
		closedir(dir);
	return 1;
}

/* Read tensor @k into @in; its sparsity in *@sp.  0 or -errno. */
static int load_tensor(const struct cal_opts *o, size_t k, float *in,
		       double *sp)
{
	size_t n = o->files[k].bytes, got = 0, zeros = 0, i;
	int fd = open(o->files[k].path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (got < n) {
		r = read(fd, (char *)in + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -ENODATA;	/* shrank */
			break;
		}
		got += r;
	}
	close(fd);
	for (i = 0; !err && i < n / 4; i++)
		zeros += in[i] == 0.0f;
	*sp = (double)zeros / (n / 4);
	return err;
}

/* Time every codec; the JSON document, or NULL after printing why. */
static struct json_object *calibrate(const struct cal_opts *o)
{
	size_t maxlen = 0, i, j, r, ci;
	size_t npts = o->nfiles ? o->nfiles : o->nsizes * o->nsp * CAL_RUNS;
	struct json_object *doc = NULL, *arr, *feat;
	struct cal_run *runs = calloc(npts, sizeof(*runs));
	float *in = NULL, *out = NULL;
	u8 *enc = NULL;

	for (i = 0; i < o->nsizes && !o->nfiles; i++)
		if (o->sizes[i] > maxlen)
			maxlen = o->sizes[i];
	for (i = 0; i < o->nfiles; i++)
		if (o->files[i].bytes > maxlen)
			maxlen = o->files[i].bytes;
	in = malloc(maxlen);
	out = malloc(maxlen);
	if (!runs || !in || !out) {
		buddyctl_err("calibrate: %zu-byte buffers: %s", maxlen,
			     strerror(ENOMEM));
		goto err;
	}
	arr = json_object_new_array();
	for (ci = 0; ci < o->ncodecs; ci++) {
		const struct tcodec *c = o->codecs[ci];
		struct json_object *co, *mc, *md, *mb;
		size_t k = 0;

		free(enc);
		enc = malloc(c->bound(maxlen) ? c->bound(maxlen) : 1);
		if (!enc) {
			buddyctl_err("calibrate: %s: output buffer: %s",
				     c->name, strerror(ENOMEM));
			goto err_arr;
		}
		/*
		 * Real tensors: each one once; the even-numbered fit, the
		 * odd-numbered are held out for the RAE.
		 */
		for (i = 0; i < o->nfiles; i++, k++) {
			double sp = 0;
			int ret = load_tensor(o, i, in, &sp);

			if (!ret)
				ret = time_one(c, o->files[i].bytes, sp, o->repeat, in,
					       enc, out, &runs[k]);
			if (ret) {
				buddyctl_err("calibrate: %s: %s: %s", c->name,
					     o->files[i].path, ret == -EBADMSG ?
					     "output does not decode to the input" :
					     strerror(-ret));
				goto err_arr;
			}
		}
		/* The runs of a point are neighbours: k % 2 is the run. */
		for (i = 0; i < o->nsizes && !o->nfiles; i++)
			for (j = 0; j < o->nsp; j++)
				for (r = 0; r < CAL_RUNS; r++, k++) {
					u64 seed = datagen_mix(o->seed, k);
					int ret;

					gen(in, o->sizes[i] / 4, o->sp[j], seed);
					ret = time_one(c, o->sizes[i], o->sp[j],
						       o->repeat, in, enc, out,
						       &runs[k]);

					if (ret) {
						buddyctl_err("calibrate: %s: %llu bytes, sparsity %g: %s",
							     c->name,
							     (unsigned long long)o->sizes[i],
							     o->sp[j],
							     ret == -EBADMSG ?
							     "output does not decode to the input" :
							     strerror(-ret));
						goto err_arr;
					}
				}
		mc = model_json(o, runs, npts, offsetof(struct cal_run, t_enc),
				c->name, "compression-time");
		md = model_json(o, runs, npts, offsetof(struct cal_run, t_dec),
				c->name, "decompression-time");
		mb = model_json(o, runs, npts, offsetof(struct cal_run, bytes),
				c->name, "encoded-size");
		if (!mc || !md || !mb) {
			json_object_put(mc);
			json_object_put(md);
			json_object_put(mb);
			goto err_arr;
		}
		co = json_object_new_object();
		json_object_object_add(co, "name", json_object_new_string(c->name));
		json_object_object_add(co, "lossless",
				       json_object_new_boolean(tcodec_lossless(c)));
		json_object_object_add(co, "compress", mc);
		json_object_object_add(co, "decompress", md);
		json_object_object_add(co, "bytes", mb);
		json_object_object_add(co, "samples", samples_json(runs, npts));
		json_object_array_add(arr, co);
	}
	doc = json_object_new_object();
	json_object_object_add(doc, "format", json_object_new_string(CAL_FORMAT));
	json_object_object_add(doc, "version", json_object_new_int(CAL_VERSION));
	feat = json_object_new_array();
	json_object_array_add(feat, json_object_new_string("1"));
	json_object_array_add(feat, json_object_new_string("size"));
	json_object_array_add(feat, json_object_new_string("sparsity"));
	json_object_array_add(feat, json_object_new_string("size*sparsity"));
	json_object_object_add(doc, "features", feat);
	json_object_object_add(doc, "units",
			       json_tokener_parse("{\"size\": \"bytes\", \"time\": \"seconds\", \"bytes\": \"bytes\"}"));
	json_object_object_add(doc, "samples_columns",
			       json_tokener_parse("[\"size\", \"sparsity\", \"compress\", \"decompress\", \"bytes\"]"));
	json_object_object_add(doc, "repeat", json_object_new_int(o->repeat));
	json_object_object_add(doc, "seed", json_object_new_uint64(o->seed));
	json_object_object_add(doc, "bins", json_object_new_int(o->bins));
	json_object_object_add(doc, "data", json_object_new_string(
			       o->nfiles ? "tensors" : "generated"));
	if (o->nfiles)
		json_object_object_add(doc, "tensors",
				       json_object_new_string(o->dir));
	json_object_object_add(doc, "codecs", arr);
	goto out;
err_arr:
	json_object_put(arr);
err:
	doc = NULL;
out:
	free(runs);
	free(in);
	free(out);
	free(enc);
	return doc;
}

/* The model file's layout: pretty, without a space after ':'. */
#define DOC_FLAGS	(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)

static int write_doc(struct json_object *doc, const char *path)
{
	char tmp[4096];
	FILE *f;

	if (!path || !strcmp(path, "-")) {
		bjson_write(stdout, doc, DOC_FLAGS);
		return au_flush_stdout();
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		buddyctl_err("calibrate: %s: %s", path, strerror(ENAMETOOLONG));
		return 1;
	}
	f = fopen(tmp, "w");
	if (f)
		bjson_write(f, doc, DOC_FLAGS);
	if (!f || ferror(f) | fclose(f) || rename(tmp, path)) {
		buddyctl_err("calibrate: %s: %s", f ? path : tmp, strerror(errno));
		if (f)
			unlink(tmp);
		return 1;
	}
	return 0;
}

static int parse_lists(struct cal_opts *o, const char *codecs,
		       const char *sizes, const char *sps)
{
	struct strset cs = { 0 }, ss = { 0 }, ps = { 0 };
	int ret = EXIT_USAGE;
	unsigned int b;
	size_t i;

	if (strset_add(&ss, sizes) || strset_add(&ps, sps) ||
	    (codecs && strset_add(&cs, codecs))) {
		buddyctl_err("calibrate: %s", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	if (codecs) {
		o->codecs = calloc(cs.n, sizeof(*o->codecs));
		for (i = 0; o->codecs && i < cs.n; i++) {
			o->codecs[i] = tcodec_find(cs.v[i], ~0U);
			if (!o->codecs[i]) {
				buddyctl_err("calibrate: unknown codec '%s' (see --list)",
					     cs.v[i]);
				goto out;
			}
		}
		o->ncodecs = cs.n;
	} else {
		o->codecs = calloc(tcodec_count(), sizeof(*o->codecs));
		for (i = 0; o->codecs && i < tcodec_count(); i++)
			if (tcodec_lossless(tcodec_get(i)))
				o->codecs[o->ncodecs++] = tcodec_get(i);
	}
	o->sizes = calloc(ss.n, sizeof(*o->sizes));
	o->sp = calloc(ps.n, sizeof(*o->sp));
	if (!o->codecs || !o->sizes || !o->sp) {
		buddyctl_err("calibrate: %s", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	if (!o->ncodecs) {
		buddyctl_err("calibrate: --codecs: empty list");
		goto out;
	}
	for (i = 0; i < ss.n; i++) {
		if (parse_u64(ss.v[i], &o->sizes[i]) || !o->sizes[i] ||
		    o->sizes[i] % 4 || o->sizes[i] > CAL_MAX_SIZE) {
			buddyctl_err("calibrate: --sizes: '%s' is not a size in bytes, a multiple of 4 from 4 to %llu",
				     ss.v[i], CAL_MAX_SIZE);
			goto out;
		}
	}
	for (i = 0; i < ps.n; i++) {
		char *end;

		errno = 0;
		o->sp[i] = strtod(ps.v[i], &end);
		if (errno || end == ps.v[i] || *end || !(o->sp[i] >= 0) ||
		    o->sp[i] > 1) {
			buddyctl_err("calibrate: --sparsities: '%s' is not a fraction in [0, 1]",
				     ps.v[i]);
			goto out;
		}
	}
	o->nsizes = ss.n;
	o->nsp = ps.n;
	/* Two distinct values of each, or the model is not determined. */
	for (i = 1; i < ss.n && o->sizes[i] == o->sizes[0]; i++)
		;
	if (i == ss.n) {
		buddyctl_err("calibrate: --sizes: need two different sizes to fit the model");
		goto out;
	}
	for (i = 1; i < ps.n && o->sp[i] == o->sp[0]; i++)
		;
	if (i == ps.n) {
		buddyctl_err("calibrate: --sparsities: need two different sparsities to fit the model");
		goto out;
	}
	o->lo = o->hi = o->sp[0];
	for (i = 1; i < ps.n; i++) {
		o->lo = o->sp[i] < o->lo ? o->sp[i] : o->lo;
		o->hi = o->sp[i] > o->hi ? o->sp[i] : o->hi;
	}
	/* Each of CSWAP's sub-models needs two sparsities of its own. */
	for (b = 0; b < o->bins; b++) {
		double first = -1;

		for (i = 0; i < ps.n; i++) {
			if (bin_of(o, o->sp[i]) != b)
				continue;
			if (first < 0)
				first = o->sp[i];
			else if (o->sp[i] != first)
				break;
		}
		if (i == ps.n) {
			buddyctl_err("calibrate: --bins %u: sub-model %u of sparsities %g-%g has fewer than two different sparsities",
				     o->bins, b, o->lo + (o->hi - o->lo) * b / o->bins,
				     o->lo + (o->hi - o->lo) * (b + 1) / o->bins);
			goto out;
		}
	}
	ret = 0;
out:
	strset_free(&cs);
	strset_free(&ss);
	strset_free(&ps);
	return ret;
}

int cmd_calibrate(int argc, char **argv)
{
	/*
	 * Letters mean one thing across buddyctl (-l --label, -p a profile
	 * file, -r --max-rows, -s --sample-mib, -S --scale, -t --target):
	 * these options of a rarely typed command have none.
	 */
	enum {
		OPT_LIST = 256, OPT_SIZES, OPT_SPARSITIES, OPT_REPEAT,
		OPT_SEED, OPT_TENSORS,
	};
	static const struct option longopts[] = {
		{ "codecs", required_argument, NULL, 'c' },
		{ "sizes", required_argument, NULL, OPT_SIZES },
		{ "sparsities", required_argument, NULL, OPT_SPARSITIES },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "bins", required_argument, NULL, 'b' },
		{ "tensors", required_argument, NULL, OPT_TENSORS },
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *codecs = NULL, *sizes = def_sizes, *sps = def_sparsities;
	const char *output = NULL;
	struct cal_opts o = { .repeat = 5, .seed = 1, .bins = 1 };
	struct json_object *doc;
	uint64_t v;
	unsigned int i;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:b:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			codecs = optarg;
			break;
		case OPT_SIZES:
			sizes = optarg;
			break;
		case OPT_SPARSITIES:
			sps = optarg;
			break;
		case OPT_REPEAT:
			if (parse_u64(optarg, &v) || !v || v > 1000) {
				buddyctl_err("calibrate: --repeat: '%s' is not a count from 1 to 1000",
					     optarg);
				return EXIT_USAGE;
			}
			o.repeat = v;
			break;
		case 'b':
			if (parse_u64(optarg, &v) || !v || v > 16) {
				buddyctl_err("calibrate: --bins: '%s' is not a count from 1 to 16",
					     optarg);
				return EXIT_USAGE;
			}
			o.bins = v;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &o.seed)) {
				buddyctl_err("calibrate: --seed: '%s' is not a number",
					     optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_TENSORS:
			o.dir = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_LIST:
			for (i = 0; i < tcodec_count(); i++)
				printf("%s%s\n", tcodec_get(i)->name,
				       tcodec_lossless(tcodec_get(i)) ? "" :
				       tcodec_get(i)->flags & TCODEC_MASK ?
				       " (mask only)" : " (lossy)");
			return au_flush_stdout();
		default:
			return au_usage(usage, c == 'h');
		}
	}
	if (optind < argc) {
		buddyctl_err("calibrate: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (o.dir && (sizes != def_sizes || sps != def_sparsities ||
		      o.bins > 1)) {
		buddyctl_err("calibrate: --tensors takes sizes and sparsities from the tensors: not with --sizes, --sparsities or --bins");
		return EXIT_USAGE;
	}
	ret = parse_lists(&o, codecs, sizes, sps);
	if (!ret && o.dir)
		ret = scan_tensors(&o);
	if (!ret) {
		doc = calibrate(&o);
		ret = doc ? write_doc(doc, output) : 1;
		json_object_put(doc);
	}
	free(o.codecs);
	free(o.sizes);
	free(o.sp);
	for (i = 0; i < o.nfiles; i++)
		free(o.files[i].path);
	free(o.files);
	return ret;
}
