//! Container image references, parsed as Kyverno's `GetImageInfo` does
//! (docker/distribution's grammar, `docker.io` and `latest` by default),
//! and the `images` variable built from a resource's containers.

use std::borrow::Cow;

use serde_json::{Map, Value};

const DEFAULT_REGISTRY: &str = "docker.io";

/// One parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImageInfo {
    pub registry: String,
    pub name: String,
    pub path: String,
    pub tag: String,
    pub digest: String,
}

impl ImageInfo {
    /// Parses `image`; the error text is Kyverno's `bad image` reason.
    pub fn parse(image: &str) -> Result<Self, String> {
        let full = with_default_registry(image);
        let parts = Parts::split(&full).map_err(|why| bad_image(&full, why))?;
        Ok(Self {
            registry: parts.registry.to_string(),
            name: parts
                .path
                .rsplit('/')
                .next()
                .unwrap_or(parts.path)
                .to_string(),
            path: parts.path.to_string(),
            tag: parts.tag.to_string(),
            digest: parts.digest.to_string(),
        })
    }

    /// Whether [`ImageInfo::parse`] accepts `image`, copying nothing of it.
    pub fn check(image: &str) -> Result<(), String> {
        let full = with_default_registry(image);
        Parts::split(&full)
            .map(|_| ())
            .map_err(|why| bad_image(&full, why))
    }

    /// `registry/path:tag`, or `registry/path@digest` when there is a digest.
    pub fn reference(&self) -> String {
        let image = if self.registry.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{}", self.registry, self.path)
        };
        if self.digest.is_empty() {
            format!("{image}:{}", self.tag)
        } else {
            format!("{image}@{}", self.digest)
        }
    }

    /// The JSON Kyverno stores for the image (empty fields omitted).
    pub fn to_value(&self, pointer: &str) -> Value {
        let mut map = Map::new();
        let mut put = |k: &str, v: &str, omit_empty: bool| {
            if !(omit_empty && v.is_empty()) {
                map.insert(k.to_string(), Value::String(v.to_string()));
            }
        };
        put("registry", &self.registry, true);
        put("name", &self.name, false);
        put("path", &self.path, false);
        put("tag", &self.tag, true);
        put("digest", &self.digest, true);
        put("reference", &self.reference(), true);
        let with_tag = format!("{}/{}:{}", self.registry, self.path, self.tag);
        put("referenceWithTag", &with_tag, true);
        put("jsonPointer", pointer, false);
        Value::Object(map)
    }
}

fn bad_image(full: &str, why: &str) -> String {
    format!("bad image: {full}, defaultRegistry: {DEFAULT_REGISTRY}, enableDefaultRegistryMutation: true: {why}")
}

/// An image reference's parts, borrowed from its text with the registry in.
struct Parts<'t> {
    registry: &'t str,
    path: &'t str,
    /// `latest` when neither a tag nor a digest is given.
    tag: &'t str,
    digest: &'t str,
}

impl<'t> Parts<'t> {
    /// Splits `full` (a reference with its registry); the error is the
    /// reason Kyverno gives.
    fn split(full: &'t str) -> Result<Self, &'static str> {
        let (rest, digest) = match full.split_once('@') {
            Some((rest, digest)) => {
                check_digest(digest)?;
                (rest, digest)
            }
            None => (full, ""),
        };
        // A tag follows the last `:` after the last `/`.
        let last_slash = rest.rfind('/').unwrap_or(0);
        let (name, tag) = match rest.rfind(':') {
            Some(i) if i > last_slash => (
                rest.get(..i).unwrap_or_default(),
                rest.get(i + 1..).unwrap_or_default(),
            ),
            _ => (rest, ""),
        };
        if !tag.is_empty() && !valid_tag(tag) || rest.ends_with(':') {
            return Err("invalid reference format");
        }
        let (registry, path) = name.split_once('/').unwrap_or(("", name));
        if path.is_empty() || !path.split('/').all(valid_path_component) {
            return Err(if path.chars().any(|c| c.is_ascii_uppercase()) {
                "repository name must be lowercase"
            } else {
                "invalid reference format"
            });
        }
        if name.len() > 255 {
            return Err("repository name must not be more than 255 characters");
        }
        let tag = if tag.is_empty() && digest.is_empty() {
            "latest"
        } else {
            tag
        };
        Ok(Self {
            registry,
            path,
            tag,
            digest,
        })
    }
}

/// Kyverno's `addDefaultRegistry`: a first component is a registry when it
/// has a `.` or `:`, is `localhost`, or has upper-case letters.
fn with_default_registry(image: &str) -> Cow<'_, str> {
    match image.split_once('/') {
        Some((first, _))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.bytes().any(|b| b.is_ascii_uppercase())
                || !first.is_ascii() && first.to_lowercase() != first =>
        {
            Cow::Borrowed(image)
        }
        _ => Cow::Owned(format!("{DEFAULT_REGISTRY}/{image}")),
    }
}

/// `[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*`
fn valid_path_component(c: &str) -> bool {
    let bytes = c.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() || !bytes.first().copied().is_some_and(alnum) {
        return false;
    }
    if !bytes.last().copied().is_some_and(alnum) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(0);
        if alnum(b) {
            i += 1;
            continue;
        }
        // A separator run: `.`, `_`, `__` or any number of `-`.
        let start = i;
        while i < bytes.len() && !bytes.get(i).copied().is_some_and(alnum) {
            i += 1;
        }
        let sep = c.get(start..i).unwrap_or_default();
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-')) {
            return false;
        }
    }
    true
}

/// `[\w][\w.-]{0,127}`
fn valid_tag(tag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128
        && tag.chars().next().is_some_and(word)
        && tag.chars().all(|c| word(c) || c == '.' || c == '-')
}

/// A digest is `algorithm:hex` (32 hex digits at least), and the algorithm
/// one that go-digest knows, with its length.
fn check_digest(digest: &str) -> Result<(), &'static str> {
    const FORMAT: &str = "invalid reference format";
    let (algorithm, hex) = digest.split_once(':').ok_or(FORMAT)?;
    let well_formed = !algorithm.is_empty()
        && algorithm
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+._-".contains(c))
        && hex.len() >= 32
        && hex.chars().all(|c| c.is_ascii_hexdigit());
    if !well_formed {
        return Err(FORMAT);
    }
    let expected = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return Err("unsupported digest algorithm"),
    };
    if hex.len() != expected {
        return Err("invalid checksum digest length");
    }
    Ok(())
}

/// Kyverno's `images` variable for `resource`, whose pod template sits at
/// `template` (empty for a Pod): container groups → container name → image
/// info. `Ok(None)` when there are no images; an unparsable image is an
/// error, as in Kyverno.
pub fn images_of(resource: &Value, template: &[&str]) -> Result<Option<Value>, String> {
    let mut groups = Map::new();
    walk_images(resource, template, |group, name, info, pointer| {
        let infos = groups
            .entry(group.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(infos) = infos {
            infos.insert(name.to_string(), info.to_value(pointer));
        }
    })?;
    Ok((!groups.is_empty()).then_some(Value::Object(groups)))
}

/// Whether [`images_of`] would succeed, without building its value: the
/// references are parsed, which is what can fail.
pub fn check_images(resource: &Value, template: &[&str]) -> Result<(), String> {
    let Some(spec) = pod_spec(resource, template) else {
        return Ok(());
    };
    for (_, _, _, image) in images_in(spec) {
        ImageInfo::check(image).map_err(|e| invalid_image(image, &e))?;
    }
    Ok(())
}

/// The containers of a pod spec that name an image, in Kyverno's order of
/// groups: group, index in it, container, image.
fn images_in(spec: &Value) -> impl Iterator<Item = (&'static str, usize, &Value, &str)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |group| {
            let containers = spec.get(group).and_then(Value::as_array);
            containers
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(move |(i, container)| {
                    let image = container.get("image").and_then(Value::as_str)?;
                    (!image.trim().is_empty()).then_some((group, i, container, image))
                })
        })
}

fn invalid_image(image: &str, reason: &str) -> String {
    format!("invalid image '{image}' ({reason})")
}

/// The pod spec under `template`, if the resource has one.
fn pod_spec<'v>(resource: &'v Value, template: &[&str]) -> Option<&'v Value> {
    template
        .iter()
        .copied()
        .chain(["spec"])
        .try_fold(resource, |value, key| value.get(key))
}

/// Parses the image of every container under `template`, handing each to
/// `visit` with its group, container name and JSON pointer.
fn walk_images(
    resource: &Value,
    template: &[&str],
    mut visit: impl FnMut(&str, &str, &ImageInfo, &str),
) -> Result<(), String> {
    let Some(spec) = pod_spec(resource, template) else {
        return Ok(());
    };
    // The JSON pointer of the pod template, for each image's `jsonPointer`.
    let prefix: String = template.iter().map(|key| format!("/{key}")).collect();
    for (group, i, container, image) in images_in(spec) {
        let name = container.get("name").and_then(Value::as_str).unwrap_or("");
        let info = ImageInfo::parse(image).map_err(|e| invalid_image(image, &e))?;
        let pointer = format!("{prefix}/spec/{group}/{i}/image");
        visit(group, name, &info, &pointer);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_parse_as_kyverno_does() {
        // (image, registry, path, tag, digest, reference)
        let cases = [
            ("nginx", "docker.io", "nginx", "latest", "", "docker.io/nginx:latest"),
            ("nginx:v10.3", "docker.io", "nginx", "v10.3", "", "docker.io/nginx:v10.3"),
            ("docker.io/test/nginx:v10.3", "docker.io", "test/nginx", "v10.3", "", "docker.io/test/nginx:v10.3"),
            ("test/nginx", "docker.io", "test/nginx", "latest", "", "docker.io/test/nginx:latest"),
            ("localhost:4443/test/nginx", "localhost:4443", "test/nginx", "latest", "", "localhost:4443/test/nginx:latest"),
            (
                "docker.io/test/centos@sha256:dead07b4d8ed7e29e98de0f4504d87e8880d4347859d839686a31da35a3b532f",
                "docker.io", "test/centos", "", "sha256:dead07b4d8ed7e29e98de0f4504d87e8880d4347859d839686a31da35a3b532f",
                "docker.io/test/centos@sha256:dead07b4d8ed7e29e98de0f4504d87e8880d4347859d839686a31da35a3b532f",
            ),
            ("ghcr.io/org/app:1.2.3", "ghcr.io", "org/app", "1.2.3", "", "ghcr.io/org/app:1.2.3"),
        ];
        for (image, registry, path, tag, digest, reference) in cases {
            let info = ImageInfo::parse(image).unwrap_or_else(|e| panic!("{image}: {e}"));
            assert_eq!(
                (
                    info.registry.as_str(),
                    info.path.as_str(),
                    info.tag.as_str(),
                    info.digest.as_str()
                ),
                (registry, path, tag, digest),
                "{image}"
            );
            assert_eq!(info.reference(), reference, "{image}");
        }
    }

    #[test]
    fn normalized_references_match_kyvernos_image_normalize() {
        let digest = "sha256:".to_string() + &"ab".repeat(32);
        let bad = |image: &str, why: &str| {
            Err(format!("bad image: {image}, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: {why}"))
        };
        let cases = [
            (
                "localhost",
                "localhost/nginx".to_string(),
                Ok("localhost/nginx:latest".to_string()),
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
            (
                "invalid",
                "++".into(),
                bad("docker.io/++", "invalid reference format"),
            ),
            (
                "short_digest",
                "nginx@sha256:abcd".into(),
                bad("docker.io/nginx@sha256:abcd", "invalid reference format"),
            ),
            (
                "unknown_algorithm",
                format!("nginx@md5:{}", "ab".repeat(16)),
                bad(
                    &format!("docker.io/nginx@md5:{}", "ab".repeat(16)),
                    "unsupported digest algorithm",
                ),
            ),
        ];
        for (name, image, want) in cases {
            assert_eq!(
                ImageInfo::parse(&image).map(|i| i.reference()),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn malformed_references_are_errors() {
        for image in [
            "++",
            "nginx:",
            "Docker/Nginx",
            "repo/UPPER:tag",
            "nginx@sha256:short",
        ] {
            assert!(ImageInfo::parse(image).is_err(), "{image}");
        }
    }

    #[test]
    fn checking_a_reference_agrees_with_parsing_it() {
        let images = [
            "nginx",
            "nginx:1.2",
            "ghcr.io/org/app:1.2.3",
            "localhost:5000/app",
            "Registry/app",
            "++",
            "nginx:",
            "Docker/Nginx",
            "repo/UPPER:tag",
            "nginx@sha256:short",
            "app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ];
        for image in images {
            assert_eq!(
                ImageInfo::check(image),
                ImageInfo::parse(image).map(|_| ()),
                "{image}"
            );
        }
    }

    #[test]
    fn images_variable_groups_containers_by_name() {
        let pod = json!({"kind": "Pod", "spec": {
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [{"name": "app", "image": "ghcr.io/org/app:1.0"}, {"name": "noimage"}]
        }});
        let images = images_of(&pod, &[]).unwrap().unwrap();
        assert_eq!(images["containers"]["app"]["registry"], "ghcr.io");
        assert_eq!(
            images["containers"]["app"]["jsonPointer"],
            "/spec/containers/0/image"
        );
        assert_eq!(images["initContainers"]["init"]["tag"], "latest");
        assert!(images["containers"].get("noimage").is_none());
        let deployment = json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx@sha256:dead07b4d8ed7e29e98de0f4504d87e8880d4347859d839686a31da35a3b532f"}]}}}});
        let images = images_of(&deployment, &["spec", "template"])
            .unwrap()
            .unwrap();
        assert!(images["containers"]["c"].get("tag").is_none());
        assert_eq!(
            images["containers"]["c"]["jsonPointer"],
            "/spec/template/spec/containers/0/image"
        );
    }
}
