// SPDX-License-Identifier: GPL-2.0
/*
 * heur_json.c - a heuristic result as JSON (heur_json.h).
 */
#include <errno.h>

#include "heur_json.h"
#include "lib/libbuddy.h"
#include "tools/common/json.h"

/* The targets of nr_by_target[], in its order. */
static const unsigned int ladder[BUDDY_HEUR_NR_TARGETS] = {
	BUDDY_TARGET_16X, BUDDY_TARGET_4X, BUDDY_TARGET_2X,
	BUDDY_TARGET_4_3X, BUDDY_TARGET_1X,
};

const char *buddy_heur_err_name(int err)
{
	switch (err) {
	case 0:
		return "";
	case -ENOSPC:
		return "ENOSPC";
	case -EINVAL:
		return "EINVAL";
	case -EOVERFLOW:
		return "EOVERFLOW";
	}
	return "error";
}

static struct json_object *by_target(const struct buddy_heur_result *res)
{
	struct json_object *o = json_object_new_object();

	for (int t = 0; t < BUDDY_HEUR_NR_TARGETS; t++)
		json_object_object_add(o, buddy_target_name(ladder[t]),
				       json_object_new_int(res->nr_by_target[t]));
	return o;
}

struct json_object *buddy_heur_result_json(const struct buddy_heur_result *res,
					   enum buddy_heur_json_aliases aliases)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ratio", bjson_num(res->ratio, "%.4f"));
	json_object_object_add(o, "buddy_frac",
			       bjson_num(res->buddy_frac, "%.6f"));
	json_object_object_add(o, "threshold",
			       bjson_num(res->threshold_ppm / 1e6, "%.6f"));
	json_object_object_add(o, "logical_bytes",
			       json_object_new_int64(res->logical_bytes));
	json_object_object_add(o, "device_bytes",
			       json_object_new_int64(res->device_bytes));
	json_object_object_add(o, "buddy_bytes",
			       json_object_new_int64(res->buddy_bytes));
	json_object_object_add(o, "steps", json_object_new_int(res->steps));
	json_object_object_add(o, "by_target", by_target(res));
	json_object_object_add(o, "errno", json_object_new_int(res->err));
	json_object_object_add(o, "error_name", res->err ?
			json_object_new_string(buddy_heur_err_name(res->err)) :
			NULL);
	/* the keys of the previous release, for one more */
	if (aliases == BUDDY_HEUR_JSON_BUDDYD) {
		json_object_object_add(o, "units_by_target", by_target(res));
		json_object_object_add(o, "error", res->err ?
			json_object_new_string(buddy_heur_err_name(res->err)) :
			NULL);
	} else {
		json_object_object_add(o, "allocations_by_target",
				       by_target(res));
		json_object_object_add(o, "error",
				       json_object_new_int(res->err));
	}
	return o;
}
