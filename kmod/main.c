// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko: Buddy Compression's memory system emulated on a Linux host.
 *
 * /dev/buddy owns a fast "device" pool and a buddy carve-out, both reserved
 * at load time on chosen NUMA nodes.  BUDDY_IOC_ALLOC hands out compressed
 * allocations as file descriptors (alloc.c); every 128-byte entry is
 * compressed by the shared codecs and striped between the pools
 * (core/stripe.c).  Statistics are zram-style one-line sysfs files.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "buddy.h"
#include "compat.h"

#define CREATE_TRACE_POINTS
#include "buddy_trace.h"

static unsigned int device_mb = 64;
module_param(device_mb, uint, 0444);
MODULE_PARM_DESC(device_mb, "Size of the fast device pool in MiB (default: 64)");

unsigned int buddy_max_ratio = 4;
module_param_named(max_ratio, buddy_max_ratio, uint, 0444);
MODULE_PARM_DESC(max_ratio,
		 "Largest overall expansion; the buddy carve-out is (max_ratio - 1) * device_mb (default: 4)");

int buddy_device_node = NUMA_NO_NODE;
module_param_named(device_node, buddy_device_node, int, 0444);
MODULE_PARM_DESC(device_node, "NUMA node of the device pool, -1 for any (default: -1)");

int buddy_buddy_node = NUMA_NO_NODE;
module_param_named(buddy_node, buddy_buddy_node, int, 0444);
MODULE_PARM_DESC(buddy_node, "NUMA node of the buddy carve-out, -1 for any (default: -1)");

unsigned int buddy_chunk_kb = 2048;
module_param_named(chunk_kb, buddy_chunk_kb, uint, 0444);
MODULE_PARM_DESC(chunk_kb,
		 "Logical KiB per chunk, a multiple of 4 (default: 2048, the paper's 2 MiB page)");

unsigned int buddy_user_limit_mb;
module_param_named(user_limit_mb, buddy_user_limit_mb, uint, 0644);
MODULE_PARM_DESC(user_limit_mb,
		 "MiB of device pool and carve-out, with its window pages and orphans, one user may hold, 0 for no limit (default: 0)");

unsigned int buddy_auto_target = BUDDY_TARGET_1X;
module_param_named(auto_target, buddy_auto_target, uint, 0444);
MODULE_PARM_DESC(auto_target,
		 "Device bytes per entry of an AUTO allocation without a profile (default: 128, i.e. 1x)");

struct buddy_device *buddy_dev;

/* ---- the ioctl dispatcher, shared by /dev/buddy and allocation fds ---- */

long buddy_ioctl_dispatch(const struct buddy_ioctl_desc *table,
			  unsigned int n, struct file *file,
			  unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct buddy_ioctl_desc *d = NULL;
	unsigned int usize = _IOC_SIZE(cmd), ksize, i;
	struct file *install = NULL;
	void *kdata;
	long ret;
	int fd = -1;

	if (_IOC_TYPE(cmd) != BUDDY_IOC_MAGIC)
		return -ENOTTY;
	for (i = 0; i < n; i++) {
		if (_IOC_NR(table[i].cmd) == _IOC_NR(cmd) &&
		    _IOC_DIR(table[i].cmd) == _IOC_DIR(cmd)) {
			d = &table[i];
			break;
		}
	}
	if (!d)
		return -ENOTTY;
	if (d->admin && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (usize < buddy_ioctl_min_size(d->cmd))
		return -EINVAL;
	ksize = _IOC_SIZE(d->cmd);
	kdata = kzalloc(ksize, GFP_KERNEL);
	if (!kdata)
		return -ENOMEM;
	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		ret = copy_struct_from_user(kdata, ksize, uarg, usize);
		if (ret)
			goto out;
	}
	ret = d->fn(file, kdata, &install);
	if (ret < 0)
		goto out;
	if (install) {
		/* reserve the fd, report it, and only then make it live */
		struct buddy_alloc *req = kdata;

		fd = get_unused_fd_flags(req->flags & BUDDY_ALLOC_CLOEXEC ?
					 O_CLOEXEC : 0);
		if (fd < 0) {
			ret = fd;
			goto out_fput;
		}
		req->fd = fd;
	}
	if ((_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, kdata, min(usize, ksize))) {
		ret = -EFAULT;
		goto out_put_fd;
	}
	if (install)
		fd_install(fd, install);
	goto out;

out_put_fd:
	if (install)
		put_unused_fd(fd);
out_fput:
	if (install)
		fput(install);
out:
	kfree(kdata);
	return ret;
}

/*
 * IORING_OP_URING_CMD: the SQE's cmd_op is an ioctl number and its command
 * area a struct buddy_uring_cmd; the same dispatcher runs it.  Commands may
 * sleep, so a non-blocking issue is sent back to io-wq with -EAGAIN.
 */
int buddy_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags,
		    long (*ioctl)(struct file *, unsigned int, unsigned long))
{
	const struct buddy_uring_cmd *pl = buddy_uring_cmd_payload(cmd);

	if (issue_flags & IO_URING_F_NONBLOCK)
		return -EAGAIN;
	if (READ_ONCE(pl->reserved))
		return -EINVAL;
	return ioctl(cmd->file, cmd->cmd_op, READ_ONCE(pl->arg));
}

/* ---- /dev/buddy ---- */

static void fill_info(struct buddy_info *info)
{
	struct buddy_device *bd = buddy_dev;
	unsigned int n;

	buddy_info_fill(info, buddy_max_ratio, buddy_chunk_kb, BUDDY_FEAT_MMAP);
	info->device_bytes = buddy_pool_bytes(&bd->device);
	info->device_used = atomic64_read(&bd->device.used);
	info->buddy_bytes = buddy_pool_bytes(&bd->buddy);
	info->buddy_used = atomic64_read(&bd->buddy.used);
	/* a snapshot: two words, each read whole (the lock is never held long) */
	mutex_lock(&bd->lock);
	info->logical_bytes = bd->logical_bytes;
	info->nr_allocs = bd->nr_allocs;
	mutex_unlock(&bd->lock);
	buddy_info_ratio(info);
	info->device_node = buddy_device_node;
	info->buddy_node = buddy_buddy_node;
	info->nr_nodes = min_t(unsigned int, nr_node_ids, BUDDY_MAX_NODES);
	for (n = 0; n < info->nr_nodes; n++) {
		info->device_node_pages[n] = bd->device.node_pages[n];
		info->buddy_node_pages[n] = bd->buddy.node_pages[n];
	}
}

static long buddy_get_info(struct file *file, void *kdata,
			   struct file **install)
{
	fill_info(kdata);
	return 0;
}

static long buddy_alloc_ioctl(struct file *file, void *kdata,
			      struct file **install)
{
	/* allocations are written: not through a read-only /dev/buddy */
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	return buddy_ioctl_alloc(kdata, install);
}

static const struct buddy_ioctl_desc buddy_dev_ioctls[] = {
	{ BUDDY_IOC_GET_INFO, false, buddy_get_info },
	{ BUDDY_IOC_ALLOC, false, buddy_alloc_ioctl },
	{ BUDDY_IOC_ALLOC_STAT, true, buddy_admin_stat },
	{ BUDDY_IOC_GET_MAP, true, buddy_admin_map },
	{ BUDDY_IOC_LIST, true, buddy_admin_list },
	{ BUDDY_IOC_SET_TARGET, true, buddy_admin_set_target },
	{ BUDDY_IOC_PROFILE_SET, true, buddy_profile_set },
	{ BUDDY_IOC_PROFILE_GET, true, buddy_profile_get },
};

static long buddy_dev_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	return buddy_ioctl_dispatch(buddy_dev_ioctls,
				    ARRAY_SIZE(buddy_dev_ioctls), file, cmd,
				    arg);
}

static int buddy_dev_uring_cmd(struct io_uring_cmd *cmd,
			       unsigned int issue_flags)
{
	return buddy_uring_cmd(cmd, issue_flags, buddy_dev_ioctl);
}

static const struct file_operations buddy_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = buddy_dev_ioctl,
	.uring_cmd = buddy_dev_uring_cmd,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* ---- sysfs: one-line stat files, columns only ever appended ---- */

static ssize_t mm_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct buddy_info info = {};

	fill_info(&info);
	return sysfs_emit(buf, "%llu %llu %llu %llu %llu %u %u\n",
			  info.device_bytes, info.device_used,
			  info.buddy_bytes, info.buddy_used,
			  info.logical_bytes, info.nr_allocs,
			  info.ratio_milli);
}
static DEVICE_ATTR_RO(mm_stat);

static ssize_t io_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	unsigned int i;
	int len = 0;

	for (i = 0; i < BUDDY_NR_COUNTERS; i++) {
		u64 sum = buddy_pcpu_sum(offsetof(struct buddy_pcpu,
						  counters[i]));

		len += sysfs_emit_at(buf, len, "%s%lld", i ? " " : "",
				     (long long)sum);
	}
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(io_stat);

static ssize_t code_stat_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	s64 codes[BUDDY_CODE_NR];
	unsigned int i;
	int len = 0;

	buddy_dev_codes_read(codes);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		len += sysfs_emit_at(buf, len, "%s%lld", i ? " " : "",
				     (long long)codes[i]);
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(code_stat);

static ssize_t codecs_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	int len = 0;
	unsigned int i;

	for (i = 0; buddy_codecs[i]; i++) {
		bool def = buddy_codecs[i] == buddy_codec_by_id(BUDDY_CODEC_DEFAULT);

		len += sysfs_emit_at(buf, len, "%s%s%s%s", i ? " " : "",
				     def ? "[" : "", buddy_codecs[i]->name,
				     def ? "]" : "");
	}
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(codecs);

static ssize_t node_pages_show(char *buf, const struct buddy_pool *p)
{
	unsigned int n, nr = min_t(unsigned int, nr_node_ids, BUDDY_MAX_NODES);
	int len = 0;

	for (n = 0; n < nr; n++)
		len += sysfs_emit_at(buf, len, "%s%lu", n ? " " : "",
				     p->node_pages[n]);
	return len + sysfs_emit_at(buf, len, "\n");
}

static ssize_t device_node_pages_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	return node_pages_show(buf, &buddy_dev->device);
}
static DEVICE_ATTR_RO(device_node_pages);

static ssize_t buddy_node_pages_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return node_pages_show(buf, &buddy_dev->buddy);
}
static DEVICE_ATTR_RO(buddy_node_pages);

static ssize_t window_stat_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return buddy_window_stat(buf);
}
static DEVICE_ATTR_RO(window_stat);

static ssize_t link_stat_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", buddy_link_device_ns());
}
static DEVICE_ATTR_RO(link_stat);

static struct attribute *buddy_attrs[] = {
	&dev_attr_mm_stat.attr,
	&dev_attr_io_stat.attr,
	&dev_attr_code_stat.attr,
	&dev_attr_codecs.attr,
	&dev_attr_device_node_pages.attr,
	&dev_attr_buddy_node_pages.attr,
	&dev_attr_window_stat.attr,
	&dev_attr_link_stat.attr,
	NULL,
};
ATTRIBUTE_GROUPS(buddy);

/* ---- load and unload ---- */

static int check_node(const char *what, int node)
{
	if (node == NUMA_NO_NODE)
		return 0;
	if (node < 0 || node >= MAX_NUMNODES || !node_online(node)) {
		pr_err("%s=%d: no such online NUMA node\n", what, node);
		return -EINVAL;
	}
	return 0;
}

static int check_params(void)
{
	if (!device_mb || device_mb > (1U << 20)) {
		pr_err("device_mb=%u: must be 1..%u\n", device_mb, 1U << 20);
		return -EINVAL;
	}
	if (!buddy_max_ratio || buddy_max_ratio > 16) {
		pr_err("max_ratio=%u: must be 1..16\n", buddy_max_ratio);
		return -EINVAL;
	}
	if (buddy_chunk_kb < 4 || buddy_chunk_kb % 4 ||
	    buddy_chunk_kb > (1U << 20)) {
		pr_err("chunk_kb=%u: must be a multiple of 4 in 4..%u\n",
		       buddy_chunk_kb, 1U << 20);
		return -EINVAL;
	}
	if (!buddy_target_valid(buddy_auto_target)) {
		pr_err("auto_target=%u: must be 128, 96, 64, 32 or 8\n",
		       buddy_auto_target);
		return -EINVAL;
	}
	return check_node("device_node", buddy_device_node) ?:
	       check_node("buddy_node", buddy_buddy_node);
}

static int __init buddy_init(void)
{
	struct buddy_device *bd;
	u64 dev_bytes;
	int ret, cpu;

	ret = check_params();
	if (ret)
		return ret;
	buddy_codec_fpu_init();
	bd = kzalloc(sizeof(*bd), GFP_KERNEL);
	if (!bd)
		return -ENOMEM;
	mutex_init(&bd->lock);
	INIT_LIST_HEAD(&bd->users);
	xa_init(&bd->allocs);
	atomic64_set(&bd->next_id, 0);
	bd->pcpu = alloc_percpu(struct buddy_pcpu);
	if (!bd->pcpu) {
		kfree(bd);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu)
		seqcount_init(&per_cpu_ptr(bd->pcpu, cpu)->codes_seq);

	dev_bytes = (u64)device_mb << 20;
	ret = buddy_pool_init(&bd->device, "device", dev_bytes,
			      buddy_device_node);
	if (ret)
		goto err_free_dev;
	ret = buddy_pool_init(&bd->buddy, "buddy",
			      dev_bytes * (buddy_max_ratio - 1),
			      buddy_buddy_node);
	if (ret)
		goto err_destroy_device;
	bd->space.dev_total = buddy_pool_bytes(&bd->device);
	bd->space.bud_total = buddy_pool_bytes(&bd->buddy);
	buddy_dev = bd;
	ret = buddy_fs_init();
	if (ret)
		goto err_destroy_buddy;

	bd->misc.minor = MISC_DYNAMIC_MINOR;
	bd->misc.name = "buddy";
	bd->misc.fops = &buddy_dev_fops;
	bd->misc.groups = buddy_groups;
	bd->misc.mode = 0660;
	ret = misc_register(&bd->misc);
	if (ret) {
		pr_err("cannot register /dev/buddy: %d\n", ret);
		goto err_fs_exit;
	}
	pr_info("device pool %u MiB (node %d), buddy carve-out %llu MiB (node %d), max ratio %u\n",
		device_mb, buddy_device_node,
		buddy_pool_bytes(&bd->buddy) >> 20, buddy_buddy_node,
		buddy_max_ratio);
	return 0;

err_fs_exit:
	buddy_fs_exit();
err_destroy_buddy:
	buddy_dev = NULL;
	buddy_pool_destroy(&bd->buddy);
err_destroy_device:
	buddy_pool_destroy(&bd->device);
err_free_dev:
	free_percpu(bd->pcpu);
	kfree(bd);
	return ret;
}

static void buddy_pcpu_free(struct buddy_pcpu __percpu *pcpu)
{
	int cpu;

	for_each_possible_cpu(cpu)
		kfree(per_cpu_ptr(pcpu, cpu)->bounce);
	free_percpu(pcpu);
}

static void __exit buddy_exit(void)
{
	struct buddy_device *bd = buddy_dev;

	misc_deregister(&bd->misc);
	/* the orphans hold their users' entries and their inodes */
	buddy_window_exit();
	WARN_ON(!xa_empty(&bd->allocs) || !list_empty(&bd->users));
	xa_destroy(&bd->allocs);
	buddy_profile_clear();
	buddy_fs_exit();
	buddy_pool_destroy(&bd->buddy);
	buddy_pool_destroy(&bd->device);
	buddy_dev = NULL;
	buddy_pcpu_free(bd->pcpu);
	kfree(bd);
}

module_init(buddy_init);
module_exit(buddy_exit);
MODULE_DESCRIPTION("Buddy Compression: compressed device memory with a buddy carve-out");
MODULE_LICENSE("GPL");
