//! Every fixture in `test_data/cases.yaml`, evaluated natively; cluster
//! and registry lookups are answered from the case's kwctl session.
#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/session.rs"]
mod session;

use kyverno_validate_policy::admission;
use kyverno_validate_policy::cluster::{Cluster, Lookup, NoCluster};
use serde_json::Value;

/// A session as the module's host would serve it.
struct Replay(session::Session);

impl Cluster for Replay {
    fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
        let (namespace, operation, payload) = lookup.host_call();
        // Worded as the module words a failed waPC host call, so the
        // fixtures' messages hold on both paths.
        let answer = self
            .0
            .answer(namespace, operation, payload.to_string().as_bytes())
            .map_err(|e| format!("cannot read {}: Host error: {e}", lookup.describe()))?;
        serde_json::from_slice(&answer).map_err(|e| e.to_string())
    }
}

#[test]
fn fixtures_give_the_expected_verdicts_natively() {
    let cases = fixtures::cases();
    assert!(!cases.is_empty());
    for case in &cases {
        let settings = fixtures::document(&case.settings);
        let request = fixtures::document(&case.request);
        let validity = admission::validate_settings(settings.to_string().as_bytes());
        assert!(
            validity.valid,
            "{}: settings rejected: {:?}",
            case.name, validity.message
        );
        let payload = serde_json::json!({"settings": settings, "request": request}).to_string();
        let replay = case
            .session
            .as_ref()
            .map(|s| Replay(session::Session::load(&fixtures::test_data().join(s))));
        let cluster: &dyn Cluster = match &replay {
            Some(replay) => replay,
            None => &NoCluster,
        };
        let response = serde_json::to_value(admission::validate_with(payload.as_bytes(), cluster))
            .expect("serializes");
        fixtures::assert_response(case, &response);
        if let Some(replay) = &replay {
            assert!(
                replay.0.finished(),
                "{}: calls left in the session",
                case.name
            );
        }
    }
}
