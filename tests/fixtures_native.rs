//! Every fixture in `test_data/cases.yaml`, evaluated natively.
#[path = "support/fixtures.rs"]
mod fixtures;

use kyverno_validate_policy::admission;

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
        let response =
            serde_json::to_value(admission::validate(payload.as_bytes())).expect("serializes");
        fixtures::assert_response(case, &response);
    }
}
