//! `context.imageRegistry`: an image's data from its registry, shaped as
//! Kyverno's `imageData` (`image`, `resolvedImage`, `registry`,
//! `repository`, `identifier`, `manifestList`, `manifest`, `configData`),
//! read through Kubewarden's OCI host capabilities. References are read as
//! go-containerregistry reads them (Kyverno's registry client): Docker Hub
//! is `index.docker.io`, its one-part names are under `library/`, and the
//! identifier is the digest or the tag (`latest` by default).

use std::rc::Rc;

use serde_json::{json, Value};

use crate::cluster::{Cached, Lookup, OciRead};

const DOCKER_HUB: &str = "index.docker.io";

/// A reference, read as go-containerregistry's `name.ParseReference`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub registry: String,
    pub repository: String,
    /// The digest when there is one, else the tag.
    pub identifier: String,
}

impl Reference {
    pub fn parse(image: &str) -> Result<Self, String> {
        let bad = || format!("could not parse reference: {image}");
        let (name, digest) = match image.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (image, None),
        };
        let last_slash = name.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match name.rfind(':') {
            Some(i) if i >= last_slash => (
                name.get(..i).unwrap_or_default(),
                name.get(i + 1..).filter(|t| !t.is_empty()),
            ),
            _ => (name, None),
        };
        let (registry, repository) = match name.split_once('/') {
            Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => {
                (first.to_string(), rest.to_string())
            }
            _ => (DOCKER_HUB.to_string(), name.to_string()),
        };
        let registry = if registry == "docker.io" {
            DOCKER_HUB.to_string()
        } else {
            registry
        };
        let repository = if registry == DOCKER_HUB && !repository.contains('/') {
            format!("library/{repository}")
        } else {
            repository
        };
        let component_ok = |c: &str| {
            !c.is_empty()
                && c.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
                })
        };
        if !repository.split('/').all(component_ok) {
            return Err(bad());
        }
        let identifier = match (digest, tag) {
            (Some(digest), _) => {
                if !digest.contains(':') {
                    return Err(bad());
                }
                // Kyverno keeps a tag written before the digest, taking
                // whatever follows the last `:` as the tag.
                let before = image.split_once('@').map_or("", |(b, _)| b);
                match before.rfind(':') {
                    Some(i) => format!("{}@{digest}", before.get(i + 1..).unwrap_or_default()),
                    None => digest.to_string(),
                }
            }
            (None, Some(tag)) => tag.to_string(),
            (None, None) => "latest".to_string(),
        };
        Ok(Self {
            registry,
            repository,
            identifier,
        })
    }

    /// `registry/repository`, go-containerregistry's `Context().Name()`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }
}

/// The data Kyverno stores for `image`; an unreadable registry is an error.
pub fn fetch(image: &str, cluster: &Cached<'_>) -> Result<Value, String> {
    let reference = Reference::parse(image)?;
    let read = |read: OciRead| {
        cluster.fetch(&Lookup::Oci {
            read,
            image: image.to_string(),
        })
    };
    let digest = read(OciRead::ManifestDigest)?;
    let digest = digest
        .get("digest")
        .and_then(Value::as_str)
        .ok_or("the registry's answer has no digest")?
        .to_string();
    // The reference names an image index or one image manifest; either
    // way the host resolves the image for its platform with its config.
    let top = read(OciRead::Manifest)?;
    let manifest_list = top
        .get("manifests")
        .is_some()
        .then(|| Rc::unwrap_or_clone(top));
    let resolved = read(OciRead::ManifestAndConfig)?;
    Ok(json!({
        "image": image,
        "resolvedImage": format!("{}@{digest}", reference.name()),
        "registry": reference.registry,
        "repository": reference.repository,
        "identifier": reference.identifier,
        "manifestList": manifest_list,
        "manifest": resolved.get("manifest").cloned().unwrap_or(Value::Null),
        "configData": resolved.get("config").cloned().unwrap_or(Value::Null),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Cluster;

    #[test]
    fn references_read_as_go_containerregistry_does() {
        let cases = [
            (
                "docker_hub_short_name",
                "nginx",
                ("index.docker.io", "library/nginx", "latest"),
            ),
            (
                "docker_hub_alias",
                "docker.io/bitnami/redis:7",
                ("index.docker.io", "bitnami/redis", "7"),
            ),
            (
                "other_registry",
                "ghcr.io/acme/app:1.0",
                ("ghcr.io", "acme/app", "1.0"),
            ),
            (
                "registry_with_port",
                "localhost:5000/app",
                ("localhost:5000", "app", "latest"),
            ),
            (
                "digest",
                "ghcr.io/acme/app@sha256:abc",
                ("ghcr.io", "acme/app", "sha256:abc"),
            ),
            (
                "tag_and_digest",
                "alpine:3.20@sha256:abc",
                ("index.docker.io", "library/alpine", "3.20@sha256:abc"),
            ),
        ];
        for (name, image, (registry, repository, identifier)) in cases {
            assert_eq!(
                Reference::parse(image),
                Ok(Reference {
                    registry: registry.into(),
                    repository: repository.into(),
                    identifier: identifier.into()
                }),
                "{name}"
            );
        }
        assert_eq!(
            Reference::parse("ghcr.io/Acme/app"),
            Err("could not parse reference: ghcr.io/Acme/app".into())
        );
    }

    struct Registry;

    impl Cluster for Registry {
        fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
            let Lookup::Oci { read, .. } = lookup else {
                return Err("not a registry call".into());
            };
            Ok(match read {
                OciRead::ManifestDigest => json!({"digest": "sha256:index"}),
                OciRead::Manifest => {
                    json!({"schemaVersion": 2, "manifests": [{"digest": "sha256:amd64"}]})
                }
                OciRead::ManifestAndConfig => {
                    json!({"manifest": {"layers": []}, "digest": "sha256:amd64",
                    "config": {"config": {"User": "1000"}}})
                }
            })
        }
    }

    #[test]
    fn image_data_has_kyvernos_shape() {
        assert_eq!(
            fetch("nginx:1.27", &Cached::new(&Registry)),
            Ok(json!({
                "image": "nginx:1.27",
                "resolvedImage": "index.docker.io/library/nginx@sha256:index",
                "registry": "index.docker.io",
                "repository": "library/nginx",
                "identifier": "1.27",
                "manifestList": {"schemaVersion": 2, "manifests": [{"digest": "sha256:amd64"}]},
                "manifest": {"layers": []},
                "configData": {"config": {"User": "1000"}},
            }))
        );
    }
}
