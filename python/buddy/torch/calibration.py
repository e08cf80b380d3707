# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.calibration - cswap's cost model: load_calibration() reads
what "buddyctl calibrate" (or buddy.cswap_model) wrote, and the
predictions the policy takes from it."""
import json


def load_calibration(path):
    """The model "buddyctl calibrate -o PATH" wrote: {codec: {"compress",
    "decompress", "bytes": (c0, c1, c2, c3), "rae": {...}}}.  A file that
    cannot be read or is not such a model raises ValueError (OSError for
    one that cannot be opened) naming @path and the cause."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a buddyctl calibrate model: not "
                         f"JSON ({e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a buddyctl calibrate model: not "
                         f"text ({e.reason})") from None
    if not isinstance(doc, dict) or doc.get("format") != "buddy-calibration":
        raise ValueError(f"{path}: not a buddyctl calibrate model")
    out = {}
    try:
        for c in doc["codecs"]:
            m = {k: tuple(float(v) for v in c[k]["coef"]) for k in
                 ("compress", "decompress", "bytes")}
            if any(len(m[k]) != 4 for k in m):
                raise ValueError("a model has other than 4 coefficients")
            m["rae"] = {k: c[k].get("rae") for k in
                        ("compress", "decompress", "bytes")}
            s = c.get("samples") or []
            if s:   # rows of size, sparsity, ...: what the fit has seen
                m["domain"] = (max(float(r[0]) for r in s),
                               min(float(r[1]) for r in s),
                               max(float(r[1]) for r in s))
            out[str(c["name"])] = m
    except (KeyError, TypeError, ValueError, IndexError) as e:
        what = f"no field {e}" if isinstance(e, KeyError) else str(e)
        raise ValueError(f"{path}: malformed buddyctl calibrate model: "
                         f"{what}") from None
    return out


def _predict(coef, size, sparsity):
    # calib.h's model: the same four products as calib_predict().
    return coef[0] + coef[1] * size + coef[2] * sparsity + \
        coef[3] * size * sparsity


def _predict_in(model, what, size, sparsity):
    """@what ("compress", "decompress", "bytes") of a codec's model, as a
    rate per byte: the fit evaluated at the largest size it saw (where its
    intercept matters least) and scaled to @size, with sparsity clamped to
    the range its samples covered.  The linear fit used as it is gave
    small tensors negative intercepts' worth of time and bytes: a codec
    free and its output smaller than it is (ResNet-18: LZ4 chosen for 88
    dense tensors it did not compress, 27% of decisions right).  Never
    below zero; a model without samples (no domain) is used as fitted."""
    dom = model.get("domain")
    if not dom:
        return max(_predict(model[what], size, sparsity), 0.0)
    smax, pmin, pmax = dom     # largest size, sparsity range seen
    sp = min(max(sparsity, pmin), pmax)
    return max(_predict(model[what], smax, sp), 0.0) * size / smax
