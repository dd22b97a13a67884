//! Kubernetes' IP and CIDR libraries (`ip()`, `cidr()`, `isIP()`, …).

use crate::error::EvalError;
use crate::func::Func;
use crate::ip::{
    is_global_unicast, is_link_local_multicast, is_link_local_unicast, is_loopback, parse_cidr,
    parse_ip, Cidr,
};
use crate::value::{no_overload, Value};

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
