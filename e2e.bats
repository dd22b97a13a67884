#!/usr/bin/env bats
# End-to-end tests with kwctl against the annotated module (`make e2e-tests`).
# The same fixtures run in CI through the in-project wapc + wasmtime host
# (tests/wasm_host.rs), since kwctl is not installable everywhere.

run_policy() {
  run kwctl run --request-path "test_data/requests/$2" --settings-path "test_data/settings/$1" annotated-policy.wasm
  echo "output = ${output}"
  [ "$status" -eq 0 ]
}

# Cluster and registry lookups answered from a recorded kwctl session.
run_with_session() {
  run kwctl run --allow-context-aware --replay-host-capabilities-interactions "test_data/sessions/$3" \
    --request-path "test_data/requests/$2" --settings-path "test_data/settings/$1" annotated-policy.wasm
  echo "output = ${output}"
  [ "$status" -eq 0 ]
}

@test "accept a Namespace labelled purpose=production" {
  run_policy require-ns-purpose-label.yaml namespace-production.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "reject a Namespace without purpose=production, naming the rule and the path" {
  run_policy require-ns-purpose-label.yaml namespace-development.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*require-ns-purpose-label: validation error: You must have label `purpose` with value `production` set on all new namespaces. rule require-ns-purpose-label failed at path /metadata/labels/purpose/ (pattern.metadata.labels.purpose: expected `production` but found `development`).*') -ne 0 ]
}

@test "accept in Audit mode with a warning" {
  run_policy require-ns-purpose-label-audit.yaml namespace-development.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
  [ $(expr "$output" : '.*"warnings":\[".*failed at path /metadata/labels/purpose/.*') -ne 0 ]
}

@test "accept any request when the policy has admission: false (background scans only)" {
  run_policy require-ns-purpose-label-background-only.yaml namespace-development.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
  [ $(expr "$output" : '.*"warnings":\[.*') -eq 0 ]
}

@test "accept a request the webhook's matchConditions leave out" {
  run_policy require-ns-purpose-label-match-conditions.yaml namespace-development.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "do not check a pattern on DELETE" {
  run_policy require-ns-purpose-label.yaml namespace-delete.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "accept an update that keeps an existing violation" {
  run_policy require-ns-purpose-label.yaml namespace-update-keeps-violation.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "reject an update that introduces a violation" {
  run_policy require-ns-purpose-label.yaml namespace-update-introduces-violation.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
}

@test "reject an update that keeps a violation when existing violations are not allowed" {
  run_policy require-ns-purpose-label-no-existing.yaml namespace-update-keeps-violation.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
}

@test "check the old object of an update without an old object of its own" {
  run_policy immutable-team-label.yaml namespace-update-changes-team.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "check the old object of an update for the label key the new object bound to a wildcard" {
  run_policy team-label-wildcard.yaml namespace-update-empties-team-label.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "accept a conventional name by a small regex and a flagged one" {
  run_policy namespace-name-regexes.yaml namespace-production.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "reject a name off the convention with the rule's message" {
  run_policy namespace-name-regexes.yaml namespace-misnamed.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*Namespace `prod-bus-app` must be named `prod-<unit>-app<N>`.*') -ne 0 ]
}

@test "read a null new object from a plain context jmesPath on DELETE" {
  run_policy delete-context-jmespath.yaml namespace-delete.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*evaluated to nil.*') -ne 0 ]
}

@test "check the old object of an UPDATE against the pattern the new object filled in" {
  run_policy team-matches-owner-annotation.yaml namespace-update-changes-owner.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "substitute a pattern's variables on DELETE before skipping the pattern" {
  run_policy delete-pattern-variables.yaml namespace-delete.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*owner-is-known: variable substitution failed.*') -ne 0 ]
  [ $(expr "$output" : '.*purpose-is-known.*') -eq 0 ]
}

@test "let a request through a rule error when failurePolicy is Ignore" {
  run_policy delete-context-jmespath-ignore.yaml namespace-delete.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
  [ $(expr "$output" : '.*evaluated to nil.*') -ne 0 ]
}

@test "accept a compliant Pod" {
  run_policy pod-images.yaml pod-pinned-non-root.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "list every failing rule" {
  run_policy pod-images.yaml pod-latest-root.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*disallow-latest-tag: validation error: .* rule disallow-latest-tag failed at path /spec/containers/0/image/ .*; require-run-as-non-root: .*') -ne 0 ]
}

@test "apply a Pod rule to a Deployment through autogen" {
  run_policy pod-images.yaml deployment-latest.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*autogen-disallow-latest-tag: .* failed at path /spec/template/spec/containers/0/image/.*') -ne 0 ]
}

@test "apply a Pod rule to a CronJob through autogen" {
  run_policy pod-images.yaml cronjob-latest.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*autogen-cronjob-disallow-latest-tag: .* failed at path /spec/jobTemplate/spec/template/spec/containers/0/image/.*') -ne 0 ]
}

@test "accept a labelled Pod from a trusted registry (expressions)" {
  run_policy pod-expressions.yaml pod-team-ghcr.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "name the pod and the failing container (deny, foreach, variables)" {
  run_policy pod-expressions.yaml pod-latest-root.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*require-team-label: pod web needs a `team` label.*') -ne 0 ]
  [ $(expr "$output" : '.*container app uses nginx:latest (foreach `request.object.spec.containers`, element 0).*') -ne 0 ]
}

@test "reject a Pod with a latest image through CEL, naming the image" {
  run_policy pod-cel.yaml pod-latest-root.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*images must be pinned: nginx:latest.*') -ne 0 ]
}

@test "reject settings that use an unsupported rule type" {
  run kwctl run --request-path test_data/requests/namespace-production.json \
    --settings-json '{"rules":[{"name":"m","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"mutate":{}}]}' \
    annotated-policy.wasm
  echo "output = ${output}"
  [ "$status" -ne 0 ]
  [ $(expr "$output" : '.*only validate rules.*') -ne 0 ]
}

@test "take a whole ClusterPolicy manifest as settings, naming the policy" {
  run_policy disallow-latest-clusterpolicy.yaml deployment-latest.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*disallow-latest: autogen-disallow-latest-tag: validation error: .*') -ne 0 ]
}

@test "follow the manifest's autogen annotation (no CronJob rule)" {
  run_policy disallow-latest-clusterpolicy.yaml cronjob-latest.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "suggest the field a typo was meant to be" {
  run kwctl run --request-path test_data/requests/namespace-production.json \
    --settings-json '{"validationFailureActon":"Enforce","rules":[{"name":"r","match":{"any":[{"resources":{"kinds":["Pod"]}}]},"validate":{"pattern":{}}}]}' \
    annotated-policy.wasm
  echo "output = ${output}"
  [ "$status" -ne 0 ]
  [ $(expr "$output" : '.*did you mean `validationFailureAction`?.*') -ne 0 ]
}

@test "exempt cluster admins through their ClusterRoleBinding (clusterRoles in exclude)" {
  run_with_session latest-tag-except-cluster-admins.yaml pod-latest-root.json rbac-bindings.yml
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "do not exempt a service account without cluster-admin" {
  run_with_session latest-tag-except-cluster-admins.yaml pod-latest-by-ci.json rbac-bindings.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*disallow-latest-tag: validation error: .*nginx:latest.*') -ne 0 ]
}

@test "select a rule by the namespace's labels (namespaceSelector)" {
  run_with_session latest-tag-in-production.yaml pod-latest-by-ci.json namespace-prod.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*Production pods need a pinned image tag.*') -ne 0 ]
}

@test "read the allowed registry from a ConfigMap (configMap context)" {
  run_with_session registries-from-configmap.yaml pod-latest-root.json configmap-registries.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*images must come from ghcr.io/acme/.*') -ne 0 ]
}

@test "fail a query that names a ConfigMap entry that did not load, fallback or not" {
  run_with_session registries-from-missing-configmap.yaml pod-latest-root.json configmap-missing.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*context entry `registries` did not load: failed to retrieve config map.*') -ne 0 ]
}

@test "reject a creator a SubjectAccessReview says may not delete (apiCall POST, can_i)" {
  run_with_session pod-creators-may-delete-pods.yaml pod-latest-by-ci.json access-review-denied.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*may not delete pods in prod, so may not create them.*') -ne 0 ]
}

@test "accept a creator a SubjectAccessReview says may delete (apiCall POST, can_i)" {
  run_with_session pod-creators-may-delete-pods.yaml pod-latest-by-ci.json access-review-allowed.yml
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "read a GlobalContextEntry given in the settings (globalReference context)" {
  run_with_session pods-from-global-context.yaml pod-latest-root.json default-pods.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*namespace default already runs 2 pods: api, web.*') -ne 0 ]
}

@test "list pods with a label selector and a jmesPath (apiCall context)" {
  run_with_session frontend-pods-per-namespace.yaml pod-latest-root.json frontend-pods.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*namespace default already runs 2 frontend pods: web-1, web-2.*') -ne 0 ]
}

@test "read an image's config from its registry (imageRegistry context)" {
  run_with_session images-run-as-non-root.yaml pod-pinned-non-root.json image-nginx.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*image index.docker.io/library/nginx@sha256:a* runs as root.*') -ne 0 ]
}

@test "reject a Pod over the container limit (deny rule)" {
  run_policy max-containers-with-exception.yaml pod-three-containers.json
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*A maximum of 2 containers are allowed inside a Pod.*') -ne 0 ]
}

@test "exempt a labelled Pod through a PolicyException given in the settings" {
  run_policy max-containers-with-exception.yaml pod-three-containers-blue.json
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "exempt a pod security control through a PolicyException read from the cluster" {
  run_with_session pod-security-baseline.yaml pod-hostpath-staging.json policy-exceptions.yml
  [ $(expr "$output" : '.*"allowed":true.*') -ne 0 ]
}

@test "keep the pod security control outside the exception's namespace" {
  run_with_session pod-security-baseline.yaml pod-hostpath-default.json policy-exceptions.yml
  [ $(expr "$output" : '.*"allowed":false.*') -ne 0 ]
  [ $(expr "$output" : '.*hostPath volumes.*/var/lib1.*') -ne 0 ]
}
