//! Kubernetes' IP and CIDR libraries on `std::net`, with Go's `netip`
//! rules: no zones, no IPv4-mapped IPv6, no leading zeros.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::EvalError;
use crate::functions::{no_overload, Func};
use crate::value::Value;

/// An address with a prefix length, as written (`masked()` clears the
/// host bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

impl Cidr {
    fn masked(self) -> Self {
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

    fn contains(self, ip: IpAddr) -> bool {
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
fn parse_ip(s: &str) -> Result<IpAddr, String> {
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
fn parse_cidr(s: &str) -> Result<Cidr, String> {
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

fn is_loopback(ip: IpAddr) -> bool {
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

fn is_link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => matches!(a.octets(), [169, 254, _, _]),
        IpAddr::V6(a) => a.segments().first().is_some_and(|s| s & 0xffc0 == 0xfe80),
    }
}

fn is_link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => matches!(a.octets(), [224, 0, 0, _]),
        IpAddr::V6(a) => a.segments().first().is_some_and(|s| s & 0xff0f == 0xff02),
    }
}

/// Go's `Addr.IsGlobalUnicast`: private ranges count as global.
fn is_global_unicast(ip: IpAddr) -> bool {
    if let IpAddr::V4(a) = ip {
        if a == Ipv4Addr::UNSPECIFIED || a == Ipv4Addr::BROADCAST {
            return false;
        }
    }
    !ip.is_unspecified() && !is_loopback(ip) && !is_multicast(ip) && !is_link_local_unicast(ip)
}

pub(crate) fn call<'a>(func: Func, args: &[Value<'a>]) -> Result<Value<'a>, EvalError> {
    let fail = || no_overload(func.name(), args);
    let cidr_arg = |v: &Value<'_>| match v {
        Value::Cidr(c) => Ok(*c),
        Value::String(s) => parse_cidr(s).map_err(EvalError::msg),
        _ => Err(fail()),
    };
    match (func, args) {
        (Func::Ip, [Value::String(s)]) => parse_ip(s).map(Value::Ip).map_err(EvalError::msg),
        (Func::IsIp, [Value::String(s)]) => Ok(Value::Bool(parse_ip(s).is_ok())),
        (Func::IpIsCanonical, [Value::String(s)]) => {
            let ip = parse_ip(s).map_err(EvalError::msg)?;
            Ok(Value::Bool(ip.to_string() == **s))
        }
        (Func::Family, [Value::Ip(ip)]) => Ok(Value::Int(if ip.is_ipv4() { 4 } else { 6 })),
        (Func::IsUnspecified, [Value::Ip(ip)]) => Ok(Value::Bool(ip.is_unspecified())),
        (Func::IsLoopback, [Value::Ip(ip)]) => Ok(Value::Bool(is_loopback(*ip))),
        (Func::IsLinkLocalMulticast, [Value::Ip(ip)]) => {
            Ok(Value::Bool(is_link_local_multicast(*ip)))
        }
        (Func::IsLinkLocalUnicast, [Value::Ip(ip)]) => Ok(Value::Bool(is_link_local_unicast(*ip))),
        (Func::IsGlobalUnicast, [Value::Ip(ip)]) => Ok(Value::Bool(is_global_unicast(*ip))),
        (Func::Cidr, [Value::String(s)]) => parse_cidr(s).map(Value::Cidr).map_err(EvalError::msg),
        (Func::IsCidr, [Value::String(s)]) => Ok(Value::Bool(parse_cidr(s).is_ok())),
        (Func::CidrIp, [Value::Cidr(c)]) => Ok(Value::Ip(c.addr)),
        (Func::Masked, [Value::Cidr(c)]) => Ok(Value::Cidr(c.masked())),
        (Func::PrefixLength, [Value::Cidr(c)]) => Ok(Value::Int(i64::from(c.bits))),
        (Func::ContainsIp, [Value::Cidr(c), other]) => {
            let ip = match other {
                Value::Ip(ip) => *ip,
                Value::String(s) => parse_ip(s).map_err(EvalError::msg)?,
                _ => return Err(fail()),
            };
            Ok(Value::Bool(c.contains(ip)))
        }
        (Func::ContainsCidr, [Value::Cidr(c), other]) => {
            let other = cidr_arg(other)?;
            // Kubernetes: `Overlaps(other) && bits <= other.bits`, that is
            // the other prefix, masked to this one's length, is this one.
            let same = c.masked()
                == Cidr {
                    addr: other.addr,
                    bits: c.bits,
                }
                .masked();
            Ok(Value::Bool(same && c.bits <= other.bits))
        }
        _ => Err(fail()),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn ip_library() {
        let cases = [
            ("family_4", "ip('192.168.0.1').family()", "4"),
            ("family_6", "ip('::1').family()", "6"),
            (
                "string",
                "string(ip('2001:db8:0:0:0:0:0:1'))",
                "2001:db8::1",
            ),
            ("is_ip", "isIP('1.2.3.4')", "true"),
            ("leading_zero_rejected", "isIP('01.2.3.4')", "false"),
            (
                "mapped_rejected",
                "ip('::ffff:1.2.3.4')",
                "error: IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed",
            ),
            (
                "zone_rejected",
                "ip('fe80::1%eth0')",
                "error: IP address \"fe80::1%eth0\" with zone value is not allowed",
            ),
            ("garbage", "isIP('nope')", "false"),
            ("canonical", "ip.isCanonical('2001:db8::1')", "true"),
            ("not_canonical", "ip.isCanonical('2001:DB8::1')", "false"),
            ("unspecified", "ip('0.0.0.0').isUnspecified()", "true"),
            ("loopback", "ip('127.0.0.5').isLoopback()", "true"),
            ("loopback_6", "ip('::1').isLoopback()", "true"),
            (
                "link_local_multicast",
                "ip('224.0.0.1').isLinkLocalMulticast()",
                "true",
            ),
            (
                "link_local_multicast_6",
                "ip('ff02::1').isLinkLocalMulticast()",
                "true",
            ),
            (
                "link_local_unicast",
                "ip('169.254.1.1').isLinkLocalUnicast()",
                "true",
            ),
            (
                "link_local_unicast_6",
                "ip('fe80::1').isLinkLocalUnicast()",
                "true",
            ),
            ("global_private", "ip('10.0.0.1').isGlobalUnicast()", "true"),
            (
                "broadcast_not_global",
                "ip('255.255.255.255').isGlobalUnicast()",
                "false",
            ),
            ("equality", "ip('::1') == ip('0:0::1')", "true"),
            ("type", "type(ip('::1')) == net.IP", "true"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }

    #[test]
    fn cidr_library() {
        let cases = [
            ("contains_ip", "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", "true"),
            ("not_contains_ip", "cidr('192.168.0.0/24').containsIP('192.168.1.1')", "false"),
            ("other_family", "cidr('0.0.0.0/0').containsIP(ip('::1'))", "false"),
            ("contains_cidr", "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))", "true"),
            ("wider_not_contained", "cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')", "false"),
            ("narrower_inside", "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", "true"),
            ("a_host_inside", "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.1/32'))", "true"),
            ("narrower_outside", "cidr('10.0.0.0/8').containsCIDR('11.1.0.0/16')", "false"),
            ("other_family", "cidr('::/0').containsCIDR('10.0.0.0/8')", "false"),
            ("ip", "string(cidr('192.168.0.1/24').ip())", "192.168.0.1"),
            ("masked", "cidr('192.168.1.1/24').masked() == cidr('192.168.1.0/24')", "true"),
            ("masked_6", "string(cidr('2001:db8:1::/32').masked())", "2001:db8::/32"),
            ("prefix_length", "cidr('10.0.0.0/8').prefixLength()", "8"),
            ("string", "string(cidr('192.168.0.0/24'))", "192.168.0.0/24"),
            ("is_cidr", "isCIDR('10.0.0.0/8')", "true"),
            ("no_bits", "isCIDR('10.0.0.0')", "false"),
            ("bits_too_large", "isCIDR('10.0.0.0/33')", "false"),
            ("leading_zero_bits", "isCIDR('10.0.0.0/08')", "false"),
            ("bad_bits_error", "cidr('192.168.0.0/')", "error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"192.168.0.0/\"): bad bits after slash: \"\""),
            ("zero_prefix", "cidr('0.0.0.0/0').containsIP('8.8.8.8')", "true"),
            ("type", "type(cidr('10.0.0.0/8')) == net.CIDR", "true"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }
}
