#!/usr/bin/env python3
"""Rebuilds Kyverno CLI test folders from the conformance corpus's `cli-test`
cases (one folder per Kyverno test, `kyverno-test.yaml` with its policies,
resources, values, user and exceptions), so that `kyverno-validate test` can
be checked against Kyverno's recorded results:

    scripts/corpus-cli-tests.py ../shared/conformance/dev.jsonl /tmp/cli-tests
    cargo run --release --bin kyverno-validate -- test /tmp/cli-tests
"""
import json
import os
import sys

import yaml  # PyYAML

corpus, out = sys.argv[1], sys.argv[2]
groups = {}
for line in open(corpus):
    case = json.loads(line)
    if case.get("harness") == "cli-test" and not case.get("needsClusterData") and not case.get("mocks"):
        groups.setdefault(case["group"], []).append(case)


def key(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace", ""), meta.get("name"))


for group, cases in sorted(groups.items()):
    folder = os.path.join(out, group.replace("/", "_"))
    os.makedirs(folder, exist_ok=True)
    policies, resources, exceptions = {}, {}, {}
    values, users, results = {}, None, []
    conflict = False
    for case in cases:
        policies[key(case["policy"])] = case["policy"]
        resource = case["resource"]
        if key(resource) in resources and resources[key(resource)] != resource:
            conflict = True
        resources[key(resource)] = resource
        for e in case.get("exceptions") or []:
            exceptions[key(e)] = e
        pname = (case["policy"].get("metadata") or {}).get("name")
        rname = (resource.get("metadata") or {}).get("name")
        vals = dict(case.get("variables") or {})
        if case.get("operation", "CREATE") != "CREATE":
            vals["request.operation"] = case["operation"]
        if vals:
            values.setdefault(pname, {})[rname] = vals
        if case.get("userInfo"):
            users = case["userInfo"]
        ns = (resource.get("metadata") or {}).get("namespace", "")
        result = {"policy": pname, "rule": case.get("resultRuleName") or case["rule"],
                  "resources": [rname], "kind": resource.get("kind"), "result": case["expected"]}
        if ns:
            result["namespace"] = ns
        results.append(result)
    if conflict:
        # The same resource name with different content in one test: the
        # folder would not say which one a result means.
        os.rmdir(folder) if not os.listdir(folder) else None
        continue
    labels = [c for c in cases if c.get("namespaceLabels")]
    test = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": group},
            "policies": ["policies.yaml"], "resources": ["resources.yaml"], "results": results}
    yaml.safe_dump_all(list(policies.values()), open(os.path.join(folder, "policies.yaml"), "w"))
    yaml.safe_dump_all(list(resources.values()), open(os.path.join(folder, "resources.yaml"), "w"))
    if exceptions:
        yaml.safe_dump_all(list(exceptions.values()), open(os.path.join(folder, "exceptions.yaml"), "w"))
        test["exceptions"] = ["exceptions.yaml"]
    if values or labels:
        doc = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Values",
               "policies": [{"name": p, "resources": [{"name": r, "values": v} for r, v in rs.items()]}
                            for p, rs in values.items()]}
        if labels:
            doc["namespaceSelector"] = [{"name": (c["resource"].get("metadata") or {}).get("namespace", "default"),
                                         "labels": c["namespaceLabels"]} for c in labels]
        yaml.safe_dump(doc, open(os.path.join(folder, "values.yaml"), "w"))
        test["variables"] = "values.yaml"
    if users:
        user = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "UserInfo"}
        user.update(users)
        yaml.safe_dump(user, open(os.path.join(folder, "user.yaml"), "w"))
        test["userinfo"] = "user.yaml"
    yaml.safe_dump(test, open(os.path.join(folder, "kyverno-test.yaml"), "w"))
print(f"{len(groups)} tests written to {out}")
