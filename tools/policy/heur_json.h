/* SPDX-License-Identifier: GPL-2.0 */
/*
 * heur_json.h - a heuristic result (struct buddy_heur_result) as the one
 * JSON object that buddyd's report and the profiler's both print
 * (Documentation/buddyctl.rst, "A heuristic result in JSON").
 */
#ifndef BUDDY_POLICY_HEUR_JSON_H
#define BUDDY_POLICY_HEUR_JSON_H

#include <json-c/json.h>

#include "heuristic.h"

/*
 * Whose keys of the previous release to add as aliases: buddyd's
 * ("units_by_target", "error" as a name or null) or the profiler's
 * ("allocations_by_target", "error" as a number).  They go after this
 * release.
 */
enum buddy_heur_json_aliases {
	BUDDY_HEUR_JSON_BUDDYD,
	BUDDY_HEUR_JSON_PROFILER,
};

/*
 * buddy_heur_result_json() - @res as { "ratio", "buddy_frac", "threshold",
 * "logical_bytes", "device_bytes", "buddy_bytes", "steps", "by_target",
 * "errno", "error_name" } and the aliases @aliases names.
 */
struct json_object *buddy_heur_result_json(const struct buddy_heur_result *res,
					   enum buddy_heur_json_aliases aliases);

/* "ENOSPC", "EINVAL", "EOVERFLOW", "error" for another, "" for 0. */
const char *buddy_heur_err_name(int err);

#endif /* BUDDY_POLICY_HEUR_JSON_H */
