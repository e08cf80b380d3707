// SPDX-License-Identifier: GPL-2.0
/*
 * The profile table: which target (and codec) an AUTO allocation gets,
 * keyed by owner uid and label so that one user cannot steer another's
 * allocations.  buddyd installs it (CAP_SYS_ADMIN); ALLOC looks it up.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "buddy.h"

struct buddy_profile_node {
	struct list_head node;
	kuid_t uid;
	unsigned int target;
	unsigned int codec;
	char label[BUDDY_LABEL_LEN];
};

static LIST_HEAD(profiles);
static DEFINE_MUTEX(profile_lock);
static unsigned int nr_profiles;

static struct buddy_profile_node *find(kuid_t uid, const char *label)
{
	struct buddy_profile_node *p;

	list_for_each_entry(p, &profiles, node)
		if (uid_eq(p->uid, uid) &&
		    !strncmp(p->label, label, BUDDY_LABEL_LEN))
			return p;
	return NULL;
}

bool buddy_profile_lookup(kuid_t uid, const char *label,
			  unsigned int *target, unsigned int *codec)
{
	struct buddy_profile_node *p;

	mutex_lock(&profile_lock);
	p = find(uid, label);
	if (p) {
		*target = p->target;
		*codec = p->codec;
	}
	mutex_unlock(&profile_lock);
	return p;
}

static bool same_node(const struct buddy_profile_node *x,
		      const struct buddy_profile_node *y)
{
	return uid_eq(x->uid, y->uid) &&
	       !strncmp(x->label, y->label, BUDDY_LABEL_LEN);
}

/* buddy_profile_admit()'s view of a request's nodes (profile_lock held). */
static bool node_in_table(void *ctx, unsigned int i)
{
	struct buddy_profile_node **nodes = ctx;

	return find(nodes[i]->uid, nodes[i]->label);
}

static bool node_same(void *ctx, unsigned int k, unsigned int i)
{
	struct buddy_profile_node **nodes = ctx;

	return same_node(nodes[k], nodes[i]);
}

static void clear_locked(void)
{
	struct buddy_profile_node *p, *tmp;

	list_for_each_entry_safe(p, tmp, &profiles, node) {
		list_del(&p->node);
		kfree(p);
	}
	nr_profiles = 0;
}

void buddy_profile_clear(void)
{
	mutex_lock(&profile_lock);
	clear_locked();
	mutex_unlock(&profile_lock);
}

long buddy_profile_set(struct file *file, void *kdata, struct file **install)
{
	struct buddy_profile *req = kdata;
	struct buddy_profile_entry __user *uent =
		u64_to_user_ptr(req->entries_ptr);
	struct buddy_profile_entry *ent;
	struct buddy_profile_node **nodes;
	unsigned int i;
	long ret = 0;

	ret = buddy_profile_req_check(req, true);
	if (ret)
		return ret;
	ent = kvmalloc_array(req->count ?: 1, sizeof(*ent), GFP_KERNEL);
	nodes = kvcalloc(req->count ?: 1, sizeof(*nodes), GFP_KERNEL);
	if (!ent || !nodes) {
		ret = -ENOMEM;
		goto out;
	}
	if (copy_from_user(ent, uent, req->count * sizeof(*ent))) {
		ret = -EFAULT;
		goto out;
	}
	/* validate everything before changing anything */
	for (i = 0; i < req->count; i++) {
		kuid_t uid = make_kuid(current_user_ns(), ent[i].uid);

		if (!uid_valid(uid) || buddy_profile_entry_check(&ent[i])) {
			ret = -EINVAL;
			goto out;
		}
		nodes[i] = kzalloc(sizeof(*nodes[i]), GFP_KERNEL);
		if (!nodes[i]) {
			ret = -ENOMEM;
			goto out;
		}
		nodes[i]->uid = uid;
		nodes[i]->target = ent[i].target;
		nodes[i]->codec = ent[i].codec;
		memcpy(nodes[i]->label, ent[i].label, BUDDY_LABEL_LEN);
	}

	mutex_lock(&profile_lock);
	if (req->flags & BUDDY_PROFILE_REPLACE)
		clear_locked();
	ret = buddy_profile_admit(req->count, nr_profiles, node_in_table,
				  node_same, nodes);
	if (ret) {
		mutex_unlock(&profile_lock);
		goto out;
	}
	for (i = 0; i < req->count; i++) {
		struct buddy_profile_node *old = find(nodes[i]->uid,
						      nodes[i]->label);

		if (old) {
			old->target = nodes[i]->target;
			old->codec = nodes[i]->codec;
			continue;
		}
		list_add_tail(&nodes[i]->node, &profiles);
		nr_profiles++;
		nodes[i] = NULL;	/* owned by the table now */
	}
	req->total = nr_profiles;
	mutex_unlock(&profile_lock);
out:
	if (nodes)
		for (i = 0; i < req->count; i++)
			kfree(nodes[i]);
	kvfree(nodes);
	kvfree(ent);
	return ret;
}

long buddy_profile_get(struct file *file, void *kdata, struct file **install)
{
	struct buddy_profile *req = kdata;
	struct buddy_profile_entry __user *out =
		u64_to_user_ptr(req->entries_ptr);
	struct buddy_profile_entry *e;
	struct buddy_profile_node *p;
	unsigned int n = 0, want;
	long ret = 0;

	ret = buddy_profile_req_check(req, false);
	if (ret)
		return ret;
	want = min_t(u64, req->count, BUDDY_PROFILE_MAX);
	/* a snapshot under the lock, copied out after it: no user copy inside */
	e = kvcalloc(want ?: 1, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	ret = mutex_lock_killable(&profile_lock);
	if (ret)
		goto out;
	list_for_each_entry(p, &profiles, node) {
		if (n == want)
			break;
		e[n].uid = from_kuid_munged(current_user_ns(), p->uid);
		e[n].target = p->target;
		e[n].codec = p->codec;
		memcpy(e[n].label, p->label, BUDDY_LABEL_LEN);
		n++;
	}
	req->total = nr_profiles;
	mutex_unlock(&profile_lock);
	if (copy_to_user(out, e, (size_t)n * sizeof(*e)))
		ret = -EFAULT;
	req->count = n;
out:
	kvfree(e);
	return ret;
}
