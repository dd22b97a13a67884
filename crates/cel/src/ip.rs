//! IP addresses and CIDRs as Kubernetes' IP and CIDR libraries parse them,
//! on `std::net`, with Go's `netip` rules: no zones, no IPv4-mapped IPv6,
//! no leading zeros. The functions are in `library::ip`.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address with a prefix length, as written (`masked()` clears the
/// host bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub(crate) addr: IpAddr,
    pub(crate) bits: u8,
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

impl Cidr {
    pub(crate) fn masked(self) -> Self {
        let addr = match self.addr {
            IpAddr::V4(a) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.bits)).unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.bits))
                    .unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
            }
        };
        Self { addr, ..self }
    }

    pub(crate) fn contains(self, ip: IpAddr) -> bool {
        let same_family = matches!(
            (self.addr, ip),
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_))
        );
        same_family
            && Cidr {
                addr: ip,
                bits: self.bits,
            }
            .masked()
                == self.masked()
    }
}

/// Go's `netip.ParseAddr`, then Kubernetes' restrictions.
pub(crate) fn parse_ip(s: &str) -> Result<IpAddr, String> {
    let fail = || {
        format!("IP Address {s:?} parse error during conversion from string: ParseAddr({s:?}): unable to parse IP")
    };
    if let Some((addr, _zone)) = s.split_once('%') {
        return match addr.parse::<Ipv6Addr>() {
            Ok(_) => Err(format!("IP address {s:?} with zone value is not allowed")),
            Err(_) => Err(fail()),
        };
    }
    let ip: IpAddr = s.parse().map_err(|_| fail())?;
    if let IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
        }
    }
    Ok(ip)
}

/// Go's `netip.ParsePrefix`, then Kubernetes' restrictions.
pub(crate) fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let prefix = |m: String| {
        format!(
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix({s:?}): {m}"
        )
    };
    let Some((addr, bits)) = s.rsplit_once('/') else {
        return Err(prefix("no '/'".into()));
    };
    if addr.contains('%') {
        return Err(prefix("IPv6 zones cannot be present in a prefix".into()));
    }
    let ip: IpAddr = addr
        .parse()
        .map_err(|_| prefix(format!("ParseAddr({addr:?}): unable to parse IP")))?;
    let bad_bits = || prefix(format!("bad bits after slash: {bits:?}"));
    let leading_zero = bits.len() > 1 && bits.starts_with('0');
    if bits.is_empty() || leading_zero || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_bits());
    }
    let bits: u8 = bits.parse().map_err(|_| bad_bits())?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if bits > max {
        return Err(prefix(format!(
            "prefix length {bits} too large for IPv{}",
            if ip.is_ipv4() { 4 } else { 6 }
        )));
    }
    if let IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!(
                "network address parse error during conversion from string: IPv4-mapped IPv6 address {s:?} is not allowed"
            ));
        }
    }
    Ok(Cidr { addr: ip, bits })
}

pub(crate) fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => a.octets().first() == Some(&127),
        IpAddr::V6(a) => a == Ipv6Addr::LOCALHOST,
    }
}

fn is_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => a.octets().first().is_some_and(|o| o & 0xf0 == 0xe0),
        IpAddr::V6(a) => a.segments().first().is_some_and(|s| s & 0xff00 == 0xff00),
    }
}

pub(crate) fn is_link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => matches!(a.octets(), [169, 254, _, _]),
        IpAddr::V6(a) => a.segments().first().is_some_and(|s| s & 0xffc0 == 0xfe80),
    }
}

pub(crate) fn is_link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => matches!(a.octets(), [224, 0, 0, _]),
        IpAddr::V6(a) => a.segments().first().is_some_and(|s| s & 0xff0f == 0xff02),
    }
}

/// Go's `Addr.IsGlobalUnicast`: private ranges count as global.
pub(crate) fn is_global_unicast(ip: IpAddr) -> bool {
    if let IpAddr::V4(a) = ip {
        if a == Ipv4Addr::UNSPECIFIED || a == Ipv4Addr::BROADCAST {
            return false;
        }
    }
    !ip.is_unspecified() && !is_loopback(ip) && !is_multicast(ip) && !is_link_local_unicast(ip)
}
