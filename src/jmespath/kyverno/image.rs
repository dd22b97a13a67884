//! `image_normalize`: Kyverno's `GetImageInfo(image).String()` with the
//! default configuration (default registry `docker.io`, registry mutation
//! on): `nginx` → `docker.io/nginx:latest`. References are parsed with the
//! grammar of `github.com/distribution/reference`.

use regex_lite::Regex;

const DEFAULT_REGISTRY: &str = "docker.io";
const NAME_TOTAL_LENGTH_MAX: usize = 255;

/// The normalized reference, or the error text Kyverno wraps.
pub(super) fn normalize(image: &str) -> Result<String, String> {
    let full = add_default_registry(image);
    let reference = parse_reference(&full).map_err(|e| {
        format!(
            "bad image: {full}, defaultRegistry: {DEFAULT_REGISTRY}, enableDefaultRegistryMutation: true: {e}"
        )
    })?;
    let mut tag = reference.tag;
    if reference.digest.is_empty() && tag.is_empty() {
        tag = "latest".into();
    }
    let image = if reference.domain.is_empty() {
        reference.path
    } else {
        format!("{}/{}", reference.domain, reference.path)
    };
    Ok(if reference.digest.is_empty() {
        format!("{image}:{tag}")
    } else {
        format!("{image}@{}", reference.digest)
    })
}

/// Kyverno's `addDefaultRegistry`: a first path component that is not a
/// host (no `.` or `:`, not `localhost`, no upper case) gets the default
/// registry in front.
fn add_default_registry(name: &str) -> String {
    match name.split_once('/') {
        Some((first, _))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.to_lowercase() != first =>
        {
            name.to_string()
        }
        _ => format!("{DEFAULT_REGISTRY}/{name}"),
    }
}

struct Reference {
    domain: String,
    path: String,
    tag: String,
    digest: String,
}

fn patterns() -> (String, String) {
    let alphanumeric = "[a-z0-9]+";
    let separator = "(?:[._]|__|[-]+)";
    let path_component = format!("{alphanumeric}(?:{separator}{alphanumeric})*");
    let domain_component = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
    let domain_name = format!("{domain_component}(?:\\.{domain_component})*");
    let ipv6 = r"\[(?:[a-fA-F0-9:]+)\]";
    let host = format!("(?:{domain_name}|{ipv6})");
    let domain_and_port = format!("{host}(?::[0-9]+)?");
    let tag = r"[\w][\w.-]{0,127}";
    let digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}";
    let remote = format!("{path_component}(?:/{path_component})*");
    let name = format!("(?:{domain_and_port}/)?{remote}");
    let reference = format!("^({name})(?::({tag}))?(?:@({digest}))?$");
    let anchored_name = format!("^(?:({domain_and_port})/)?({remote})$");
    (reference, anchored_name)
}

/// `reference.Parse`, with its error texts.
fn parse_reference(text: &str) -> Result<Reference, String> {
    let (reference_pattern, name_pattern) = patterns();
    let reference = Regex::new(&reference_pattern).map_err(|e| e.to_string())?;
    let anchored_name = Regex::new(&name_pattern).map_err(|e| e.to_string())?;
    let Some(captures) = reference.captures(text) else {
        if text.is_empty() {
            return Err("repository name must have at least one component".into());
        }
        if reference.is_match(&text.to_lowercase()) {
            return Err("repository name must be lowercase".into());
        }
        return Err("invalid reference format".into());
    };
    let group = |i: usize| captures.get(i).map_or("", |m| m.as_str());
    let name = group(1);
    if name.len() > NAME_TOTAL_LENGTH_MAX {
        return Err(format!(
            "repository name must not be more than {NAME_TOTAL_LENGTH_MAX} characters"
        ));
    }
    let (domain, path) = match anchored_name.captures(name) {
        Some(parts) => (
            parts.get(1).map_or("", |m| m.as_str()).to_string(),
            parts.get(2).map_or("", |m| m.as_str()).to_string(),
        ),
        None => (String::new(), name.to_string()),
    };
    let digest = group(3);
    if !digest.is_empty() {
        validate_digest(digest)?;
    }
    Ok(Reference {
        domain,
        path,
        tag: group(2).to_string(),
        digest: digest.to_string(),
    })
}

/// `go-digest`'s `Parse`: a registered algorithm with the right length of
/// lower-case hex.
fn validate_digest(digest: &str) -> Result<(), String> {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return Err("invalid checksum digest format".into());
    };
    let length = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return Err("unsupported digest algorithm".into()),
    };
    if encoded.len() != length {
        return Err("invalid checksum digest length".into());
    }
    if !encoded
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err("invalid checksum digest format".into());
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;

    #[test]
    fn kyverno_image_table() {
        let digest = "sha256:".to_string() + &"ab".repeat(32);
        let cases = [
            ("short", "nginx".to_string(), Ok("docker.io/nginx:latest".to_string())),
            ("tag", "nginx:v10.3".into(), Ok("docker.io/nginx:v10.3".into())),
            ("registry_path_tag", "docker.io/test/nginx:v10.3".into(), Ok("docker.io/test/nginx:v10.3".into())),
            ("two_components", "test/nginx".into(), Ok("docker.io/test/nginx:latest".into())),
            ("localhost_port", "localhost:4443/test/nginx".into(), Ok("localhost:4443/test/nginx:latest".into())),
            ("localhost", "localhost/nginx".into(), Ok("localhost/nginx:latest".into())),
            (
                "digest",
                format!("docker.io/test/centos@{digest}"),
                Ok(format!("docker.io/test/centos@{digest}")),
            ),
            (
                "tag_and_digest",
                format!("nginx:1.2@{digest}"),
                Ok(format!("docker.io/nginx@{digest}")),
            ),
            (
                "ecr",
                "123456789012.dkr.ecr.eu-west-3.amazonaws.com/app:v1".into(),
                Ok("123456789012.dkr.ecr.eu-west-3.amazonaws.com/app:v1".into()),
            ),
            ("invalid", "++".into(), Err("bad image: docker.io/++, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: invalid reference format".to_string())),
            ("short_digest", "nginx@sha256:abcd".into(), Err("bad image: docker.io/nginx@sha256:abcd, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: invalid reference format".into())),
            (
                "unknown_algorithm",
                format!("nginx@md5:{}", "ab".repeat(16)),
                Err(format!("bad image: docker.io/nginx@md5:{}, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: unsupported digest algorithm", "ab".repeat(16))),
            ),
        ];
        for (case, input, want) in cases {
            assert_eq!(normalize(&input), want, "{case}");
        }
    }
}
