//! Compile-and-evaluate time for a request-sized workload: about 40
//! Kyverno-style expressions against a ~15 KB Pod, everything fresh each
//! round (as in a fresh wasm instance).
//!
//!     cargo run --release -p kube-cel --example speed

use std::time::Instant;

use kube_cel::{compile, Activation, Budget, Program};
use serde_json::{json, Value};

fn pod() -> Value {
    let container = |i: usize| {
        json!({
            "name": format!("container-{i}"),
            "image": format!("registry.example.com/team/app-{i}:1.{i}.0"),
            "imagePullPolicy": "IfNotPresent",
            "args": ["--port=8080", "--log-level=info", "--metrics"],
            "env": (0..12).map(|e| json!({"name": format!("ENV_{e}"), "value": format!("value-{e}-{i}")})).collect::<Vec<_>>(),
            "ports": [{"containerPort": 8080 + i, "name": "http", "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
            "securityContext": {"allowPrivilegeEscalation": false, "runAsNonRoot": true, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": (0..4).map(|v| json!({"name": format!("vol-{v}"), "mountPath": format!("/data/{v}")})).collect::<Vec<_>>(),
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 10},
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "team-a",
            "labels": {"app.kubernetes.io/name": "web", "app.kubernetes.io/version": "1.2.3", "team": "a"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "x".repeat(2000)},
        },
        "spec": {
            "serviceAccountName": "web",
            "automountServiceAccountToken": false,
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": (0..8).map(container).collect::<Vec<_>>(),
            "initContainers": [container(9)],
            "volumes": (0..4).map(|v| json!({"name": format!("vol-{v}"), "emptyDir": {}})).collect::<Vec<_>>(),
        }
    })
}

const EXPRESSIONS: &[&str] = &[
    "object.spec.containers.all(c, !c.image.endsWith(':latest'))",
    "object.spec.containers.all(c, c.image.contains(':'))",
    "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
    "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && has(c.resources.limits.memory))",
    "object.spec.containers.all(c, has(c.resources.requests.cpu))",
    "object.spec.containers.all(c, quantity(c.resources.limits.memory).isLessThan(quantity('1Gi')))",
    "object.spec.containers.all(c, quantity(c.resources.limits.cpu).compareTo(quantity('2')) <= 0)",
    "object.spec.containers.all(c, c.?securityContext.?allowPrivilegeEscalation.orValue(true) == false)",
    "object.spec.containers.all(c, c.?securityContext.?privileged.orValue(false) == false)",
    "object.spec.containers.all(c, c.securityContext.capabilities.drop.exists(d, d == 'ALL'))",
    "object.spec.containers.all(c, !has(c.securityContext.capabilities.add))",
    "object.spec.?hostNetwork.orValue(false) == false",
    "object.spec.?hostPID.orValue(false) == false",
    "object.spec.?hostIPC.orValue(false) == false",
    "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))",
    "object.spec.securityContext.runAsNonRoot == true",
    "object.spec.securityContext.?seccompProfile.?type.orValue('') in ['RuntimeDefault', 'Localhost']",
    "has(object.metadata.labels) && 'app.kubernetes.io/name' in object.metadata.labels",
    "object.metadata.labels.all(k, k.size() < 64)",
    "object.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
    "object.metadata.name.size() <= 63",
    "object.spec.containers.map(c, c.name).size() == object.spec.containers.size()",
    "object.spec.containers.exists_one(c, c.name == 'container-0')",
    "object.spec.containers.all(c, c.ports.all(p, p.containerPort > 1024))",
    "object.spec.containers.all(c, c.env.all(e, !e.name.startsWith('AWS_')))",
    "object.spec.containers.all(c, c.imagePullPolicy in ['Always', 'IfNotPresent'])",
    "object.spec.containers.filter(c, c.image.contains('registry.example.com')).size() > 0",
    "object.spec.initContainers.all(c, !c.image.endsWith(':latest'))",
    "object.spec.serviceAccountName != 'default'",
    "object.spec.automountServiceAccountToken == false",
    "object.spec.containers.all(c, c.volumeMounts.all(m, m.mountPath.startsWith('/data')))",
    "object.spec.containers.all(c, has(c.livenessProbe))",
    "object.spec.containers.all(c, c.args.all(a, !a.contains('--privileged')))",
    "object.spec.containers.all(c, c.image.split(':').size() == 2)",
    "object.spec.containers.all(c, c.image.find('[0-9]+\\\\.[0-9]+\\\\.[0-9]+') != '')",
    "object.metadata.namespace in ['team-a', 'team-b']",
    "request.operation in ['CREATE', 'UPDATE']",
    "oldObject == null || oldObject.metadata.name == object.metadata.name",
    "variables.images.all(i, !i.endsWith(':latest'))",
    "'%s has %d containers'.format([object.metadata.name, size(object.spec.containers)]).size() > 0",
];

const VARIABLES: &[(&str, &str)] = &[(
    "images",
    "object.spec.containers.map(c, c.image) + object.spec.initContainers.map(c, c.image)",
)];

fn round(object: &Value, request: &Value, old: &Value) -> u64 {
    let programs: Vec<Program> = EXPRESSIONS
        .iter()
        .map(|e| compile(e).unwrap_or_else(|err| panic!("{e}: {err}")))
        .collect();
    let variables: Vec<(String, Program)> = VARIABLES
        .iter()
        .map(|(n, e)| (n.to_string(), compile(e).expect("variable compiles")))
        .collect();
    let mut activation = Activation::new();
    activation.bind_json("object", object);
    activation.bind_json("oldObject", old);
    activation.bind_json("request", request);
    activation.bind_variables(&variables);
    let mut cost = 0;
    for (p, e) in programs.iter().zip(EXPRESSIONS) {
        let mut budget = Budget::default();
        let v = p
            .evaluate(&activation, &mut budget)
            .unwrap_or_else(|err| panic!("{e}: {err}"));
        assert_eq!(v.as_bool(), Some(true), "{e}");
        cost += Budget::DEFAULT_LIMIT - budget.remaining();
    }
    cost
}

fn main() {
    let object = pod();
    let request = json!({"operation": "CREATE"});
    let old = Value::Null;
    println!(
        "pod: {} bytes, {} expressions",
        serde_json::to_string(&object).map(|s| s.len()).unwrap_or(0),
        EXPRESSIONS.len()
    );
    let cost = round(&object, &request, &old);
    // The best of several batches: the machine may be shared.
    let rounds = 200;
    let best = |f: &dyn Fn()| {
        (0..10)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..rounds {
                    f();
                }
                start.elapsed() / rounds
            })
            .min()
            .unwrap_or_default()
    };
    let per = best(&|| {
        round(&object, &request, &old);
    });
    let compile_only = best(&|| {
        for e in EXPRESSIONS {
            let _ = compile(e);
        }
    });
    println!("compile + evaluate: {per:?} per round (compile alone {compile_only:?}), cost {cost}");
    if std::env::args().any(|a| a == "--each") {
        let variables: Vec<(String, Program)> = VARIABLES
            .iter()
            .map(|(n, e)| (n.to_string(), compile(e).expect("variable compiles")))
            .collect();
        for e in EXPRESSIONS {
            let start = Instant::now();
            for _ in 0..rounds {
                let p = compile(e).expect("compiles");
                let mut activation = Activation::new();
                activation.bind_json("object", &object);
                activation.bind_json("oldObject", &old);
                activation.bind_json("request", &request);
                activation.bind_variables(&variables);
                let _ = p.evaluate(&activation, &mut Budget::default());
            }
            println!("{:>10?}  {e}", start.elapsed() / rounds);
        }
    }
}
