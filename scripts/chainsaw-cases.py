#!/usr/bin/env python3
"""Replays the chainsaw tests of kyverno/policies as admission requests, so the
engine can be checked on Kyverno verdicts beyond the conformance corpus:

    scripts/chainsaw-cases.py POLICIES_CHECKOUT /tmp/chainsaw.jsonl
    ../shared/conformance/bin/wapc-run policy.wasm /tmp/chainsaw.jsonl > /tmp/chainsaw.res
    python3 ../shared/conformance/score.py /tmp/chainsaw.jsonl /tmp/chainsaw.res

Each test's steps run in order (a step template's operations in place of
the step, with its bindings). A Kyverno policy applied (and patched) so far
becomes the settings (several policies: their rules, each keeping its
policy's failure action); every other object applied is a CREATE, or an
UPDATE of the object applied before (merged, as an apply patch does), and is
expected to be rejected when the step expects an error. Objects applied
without error are the cluster the host capabilities answer from. Tests with
mutate, generate or verifyImages rules, other policy kinds, or scripts that
change the cluster are left out. The API server's own changes (defaults,
`uid`, zero values it omits, a Pod's service account volume) are not
reproduced, so a few verdicts that depend on them disagree.
"""
import copy, glob, json, os, sys
import yaml


class Loader(yaml.SafeLoader):
    pass


Loader.yaml_implicit_resolvers = {k: [(t, r) for t, r in v if t != "tag:yaml.org,2002:timestamp"]
                                  for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}

root, out_path = sys.argv[1], sys.argv[2]
skip_groups = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else set()

CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass", "Node",
                  "CustomResourceDefinition", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                  "PriorityClass", "IngressClass", "RuntimeClass", "ClusterIssuer", "APIService", "CSIDriver",
                  "ClusterPolicy", "GatewayClass", "ClusterPolicyReport", "VolumeSnapshotClass",
                  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ClusterClaim",
                  "CertificateSigningRequest", "ClusterSecretStore", "Provider", "ClusterServingRuntime",
                  "TokenReview", "SelfSubjectAccessReview", "GlobalContextEntry", "ClusterCleanupPolicy"}
ADMIN = {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]}
KUBEADM_RBAC = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "kubeadm:cluster-admins"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeadm:cluster-admins"}]},
]
EPHEMERAL = "chainsaw-ephemeral-ns"


def merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        r = dict(a)
        for k, v in b.items():
            r[k] = merge(a.get(k), v) if k in a else v
        return r
    return copy.deepcopy(b)


def key(o):
    m = o.get("metadata") or {}
    return (o.get("apiVersion"), o.get("kind"), m.get("namespace"), m.get("name"))


def bind(node, bindings):
    """A step template's `($name)` strings, with the step's bindings."""
    if isinstance(node, dict):
        return {k: bind(v, bindings) for k, v in node.items()}
    if isinstance(node, list):
        return [bind(v, bindings) for v in node]
    if isinstance(node, str) and node.startswith("($") and node.endswith(")") and node[2:-1] in bindings:
        return bindings[node[2:-1]]
    return node


def step_ops(folder, step):
    """A step's `try` operations; a step that uses a template takes the template's."""
    use = step.get("use") or {}
    if not use.get("template"):
        return step.get("try") or []
    try:
        template = yaml.load(open(os.path.join(folder, use["template"])), Loader=Loader)
    except (OSError, yaml.YAMLError):
        return []
    bindings = {b.get("name"): b.get("value") for b in ((use.get("with") or {}).get("bindings") or [])}
    return bind((template.get("spec") or {}).get("try") or [], bindings)


def load(folder, op):
    if "resource" in op:
        return [op["resource"]]
    f = op.get("file")
    if not f:
        return []
    docs = []
    for path in sorted(glob.glob(os.path.join(folder, f))):
        with open(path) as fh:
            try:
                docs += [d for d in yaml.load_all(fh, Loader=Loader) if isinstance(d, dict)]
            except yaml.YAMLError:
                pass
    out = []
    for d in docs:
        if d.get("kind", "").endswith("List") and isinstance(d.get("items"), list):
            out += d["items"]
        else:
            out.append(d)
    return out


def expects_error(op):
    for e in op.get("expect") or []:
        chk = e.get("check") or {}
        for k, v in chk.items():
            if "$error" in k and "!= null" in k.replace("`", "") and v is True:
                return True
    return False


def gvk(o):
    g, _, v = o.get("apiVersion", "v1").rpartition("/")
    return {"group": g, "version": v, "kind": o.get("kind")}


def policy_spec(policies):
    rules, spec = [], None
    for p in policies:
        s = copy.deepcopy(p.get("spec") or {})
        action = s.get("validationFailureAction", "Audit")
        for r in s.get("rules") or []:
            v = r.get("validate")
            if isinstance(v, dict) and "failureAction" not in v:
                v["failureAction"] = action
            rules.append(r)
        if spec is None:
            spec = s
        ann = (p.get("metadata") or {}).get("annotations") or {}
        if "pod-policies.kyverno.io/autogen-controllers" in ann:
            spec["autogenControllers"] = ann["pod-policies.kyverno.io/autogen-controllers"]
    spec = spec or {}
    spec["rules"] = rules
    return spec


stats = {"tests": 0, "skipped": 0, "cases": 0}
with open(out_path, "w") as out:
    for path in sorted(os.path.join(d, "chainsaw-test.yaml") for d, _, fs in os.walk(root) if "chainsaw-test.yaml" in fs):
        folder = os.path.dirname(path)
        group = "policies-chainsaw/" + os.path.relpath(folder, root)
        if group in skip_groups:
            continue
        try:
            test = yaml.load(open(path), Loader=Loader)
        except yaml.YAMLError:
            continue
        spec = test.get("spec") or {}
        ns_default = spec.get("namespace") or EPHEMERAL
        policies, cluster, exceptions = {}, {}, []
        # A CRD a test applies changes scopes for that test only.
        cluster_scoped = set(CLUSTER_SCOPED)
        cases, bad = [], None
        for si, step in enumerate(spec.get("steps") or []):
            for oi, op in enumerate(step_ops(folder, step)):
                (verb, body), = [(k, v) for k, v in op.items() if k in (
                    "apply", "create", "update", "patch", "delete", "assert", "error", "script", "sleep", "wait",
                    "command", "events", "podLogs", "describe", "get")] or [("other", None)]
                if verb in ("assert", "error", "sleep", "wait", "events", "podLogs", "describe", "get", "other"):
                    continue
                if verb in ("script", "command"):
                    content = (body or {}).get("content", "")
                    if "kubectl" in content and ("apply" in content or "create" in content or "label" in content
                                                 or "annotate" in content or "patch" in content):
                        bad = bad or "script changes the cluster"
                    continue
                docs = load(folder, body)
                for di, doc in enumerate(docs):
                    kind = doc.get("kind", "")
                    api = doc.get("apiVersion", "")
                    if api.startswith("kyverno.io/") and kind in ("ClusterPolicy", "Policy"):
                        name = (doc.get("metadata") or {}).get("name")
                        if verb == "patch" and name in policies:
                            policies[name] = merge(policies[name], doc)
                        elif verb != "delete":
                            policies[name] = doc
                        for r in (doc.get("spec") or {}).get("rules") or []:
                            if any(x in r for x in ("mutate", "generate", "verifyImages")):
                                bad = bad or "mutate/generate/verifyImages"
                        continue
                    if api.startswith("policies.kyverno.io/") or api.startswith("admissionregistration"):
                        bad = bad or "other policy kinds"
                        continue
                    if kind == "CustomResourceDefinition" and (doc.get("spec") or {}).get("scope") == "Cluster":
                        # A CRD applied by the test makes its kind cluster-scoped.
                        crd_kind = ((doc.get("spec") or {}).get("names") or {}).get("kind")
                        if crd_kind:
                            cluster_scoped.add(crd_kind)
                    doc = copy.deepcopy(doc)
                    meta = doc.setdefault("metadata", {})
                    if kind not in cluster_scoped and not meta.get("namespace"):
                        meta["namespace"] = ns_default
                    if kind in cluster_scoped:
                        meta.pop("namespace", None)
                    if kind == "Namespace" and meta.get("name"):
                        # The API server labels every Namespace with its name.
                        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
                    k = key(doc)
                    if kind == "PolicyException":
                        exceptions.append(doc)
                        cluster[k] = doc
                        continue
                    old = cluster.get(k)
                    if verb == "delete":
                        if old is None:
                            continue
                        op_name, obj, oldobj = "DELETE", None, old
                    elif verb == "patch" or (verb == "apply" and old is not None):
                        if old is None:
                            continue
                        op_name, obj, oldobj = "UPDATE", merge(old, doc), old
                    elif verb == "update":
                        op_name, obj, oldobj = "UPDATE", doc, old
                    else:
                        op_name, obj, oldobj = "CREATE", doc, None
                    if policies:
                        req = {"uid": "00000000-0000-0000-0000-000000000000", "kind": gvk(doc),
                               "operation": op_name, "name": meta.get("name", ""), "userInfo": ADMIN,
                               "dryRun": False}
                        if meta.get("namespace"):
                            req["namespace"] = meta["namespace"]
                        if obj is not None:
                            req["object"] = obj
                        if oldobj is not None:
                            req["oldObject"] = oldobj
                        cases.append((f"{group}#steps[{si}].try[{oi}][doc{di}]#{kind}/{meta.get('namespace','')}/{meta.get('name')}@{op_name}",
                                      req, "reject" if expects_error(body) else "accept",
                                      copy.deepcopy(list(policies.values())), copy.deepcopy(list(cluster.values())),
                                      list(exceptions)))
                    if not expects_error(body):
                        if verb == "delete":
                            cluster.pop(k, None)
                        else:
                            cluster[k] = obj
        stats["tests"] += 1
        if bad:
            stats["skipped"] += 1
            print("skip", group, bad, file=sys.stderr)
            continue
        for cid, req, expect, pols, objs, excs in cases:
            settings = policy_spec(pols)
            if excs:
                settings["policyName"] = (pols[0].get("metadata") or {}).get("name", "")
            names = {req.get("namespace"), "default", "kube-system", ns_default} - {None}
            have = {(o.get("kind"), (o.get("metadata") or {}).get("name")) for o in objs}
            for n in sorted(names):
                if ("Namespace", n) not in have:
                    objs.append({"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}})
            objs += KUBEADM_RBAC
            feats = ["chainsaw.admission", "operation:" + req["operation"]]
            for p in pols:
                for r in (p.get("spec") or {}).get("rules") or []:
                    v = r.get("validate") or {}
                    feats += ["validate." + x for x in v if x not in ("message", "failureAction")]
            out.write(json.dumps({"id": cid, "group": group, "harness": "chainsaw", "features": sorted(set(feats)),
                                  "expect": expect, "payload": {"request": req, "settings": settings},
                                  "cluster": objs}, sort_keys=True) + "\n")
            stats["cases"] += 1
print(stats, file=sys.stderr)
