//! Built-in functions: resolved by name and arity once, at compile time,
//! into a `Func`; calls dispatch on it with a `match` and on the argument
//! types inside each function.

use crate::error::EvalError;
use crate::format::NamedFormat;
use crate::value::Value;
use crate::{
    format, ip, lists, optional, quantity, regex, semver, stdlib, strings, time, url, Budget,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    // Standard library.
    Size,
    Contains,
    StartsWith,
    EndsWith,
    Matches,
    Int,
    Uint,
    Double,
    String,
    Bool,
    Bytes,
    Dyn,
    Type,
    Duration,
    Timestamp,
    GetFullYear,
    GetMonth,
    GetDate,
    GetDayOfMonth,
    GetDayOfWeek,
    GetDayOfYear,
    GetHours,
    GetMinutes,
    GetSeconds,
    GetMilliseconds,
    // Strings extension.
    CharAt,
    IndexOf,
    LastIndexOf,
    LowerAscii,
    UpperAscii,
    Replace,
    Split,
    Substring,
    Trim,
    Join,
    Reverse,
    Slice,
    Flatten,
    Sort,
    Distinct,
    ListsRange,
    First,
    Last,
    Unwrap,
    UnwrapOpt,
    Format,
    Quote,
    // Kubernetes regex and lists libraries, sets extension.
    Find,
    FindAll,
    IsSorted,
    Sum,
    Min,
    Max,
    SetsContains,
    SetsEquivalent,
    SetsIntersects,
    // Optionals.
    OptionalOf,
    OptionalNone,
    OptionalOfNonZeroValue,
    HasValue,
    Value,
    OrValue,
    Or,
    // Kubernetes quantity library.
    Quantity,
    IsQuantity,
    Sign,
    IsInteger,
    AsInteger,
    AsApproximateFloat,
    Add,
    Sub,
    CompareTo,
    IsGreaterThan,
    IsLessThan,
    // Kubernetes URL library.
    Url,
    IsUrl,
    GetScheme,
    GetHost,
    GetHostname,
    GetPort,
    GetEscapedPath,
    GetQuery,
    // Kubernetes IP and CIDR libraries.
    Ip,
    IsIp,
    IpIsCanonical,
    Family,
    IsUnspecified,
    IsLoopback,
    IsLinkLocalMulticast,
    IsLinkLocalUnicast,
    IsGlobalUnicast,
    Cidr,
    IsCidr,
    CidrIp,
    Masked,
    PrefixLength,
    ContainsIp,
    ContainsCidr,
    // Kubernetes semver library.
    Semver,
    IsSemver,
    Major,
    Minor,
    Patch,
    // Kubernetes format library.
    FormatNamed,
    FormatOf(NamedFormat),
    FormatValidate,
}

/// Why a call could not be resolved.
pub(crate) enum ResolveError {
    Unknown,
    /// The name exists; these are the argument counts it takes.
    Arity(&'static str),
}

/// The function `name` called with `argc` arguments (not counting the
/// target of a member call).
pub(crate) fn resolve(name: &str, member: bool, argc: usize) -> Result<Func, ResolveError> {
    use Func as F;
    let (func, arities): (Func, &'static [usize]) = if member {
        match name {
            "size" => (F::Size, &[0]),
            "contains" => (F::Contains, &[1]),
            "startsWith" => (F::StartsWith, &[1]),
            "endsWith" => (F::EndsWith, &[1]),
            "matches" => (F::Matches, &[1]),
            "getFullYear" => (F::GetFullYear, &[0, 1]),
            "getMonth" => (F::GetMonth, &[0, 1]),
            "getDate" => (F::GetDate, &[0, 1]),
            "getDayOfMonth" => (F::GetDayOfMonth, &[0, 1]),
            "getDayOfWeek" => (F::GetDayOfWeek, &[0, 1]),
            "getDayOfYear" => (F::GetDayOfYear, &[0, 1]),
            "getHours" => (F::GetHours, &[0, 1]),
            "getMinutes" => (F::GetMinutes, &[0, 1]),
            "getSeconds" => (F::GetSeconds, &[0, 1]),
            "getMilliseconds" => (F::GetMilliseconds, &[0, 1]),
            "charAt" => (F::CharAt, &[1]),
            "indexOf" => (F::IndexOf, &[1, 2]),
            "lastIndexOf" => (F::LastIndexOf, &[1, 2]),
            "lowerAscii" => (F::LowerAscii, &[0]),
            "upperAscii" => (F::UpperAscii, &[0]),
            "replace" => (F::Replace, &[2, 3]),
            "split" => (F::Split, &[1, 2]),
            "substring" => (F::Substring, &[1, 2]),
            "trim" => (F::Trim, &[0]),
            "join" => (F::Join, &[0, 1]),
            "reverse" => (F::Reverse, &[0]),
            "slice" => (F::Slice, &[2]),
            "flatten" => (F::Flatten, &[0, 1]),
            "sort" => (F::Sort, &[0]),
            "distinct" => (F::Distinct, &[0]),
            "first" => (F::First, &[0]),
            "last" => (F::Last, &[0]),
            "unwrapOpt" => (F::UnwrapOpt, &[0]),
            "format" => (F::Format, &[1]),
            "find" => (F::Find, &[1]),
            "findAll" => (F::FindAll, &[1, 2]),
            "isSorted" => (F::IsSorted, &[0]),
            "sum" => (F::Sum, &[0]),
            "min" => (F::Min, &[0]),
            "max" => (F::Max, &[0]),
            "hasValue" => (F::HasValue, &[0]),
            "value" => (F::Value, &[0]),
            "orValue" => (F::OrValue, &[1]),
            "or" => (F::Or, &[1]),
            "sign" => (F::Sign, &[0]),
            "isInteger" => (F::IsInteger, &[0]),
            "asInteger" => (F::AsInteger, &[0]),
            "asApproximateFloat" => (F::AsApproximateFloat, &[0]),
            "add" => (F::Add, &[1]),
            "sub" => (F::Sub, &[1]),
            "compareTo" => (F::CompareTo, &[1]),
            "isGreaterThan" => (F::IsGreaterThan, &[1]),
            "isLessThan" => (F::IsLessThan, &[1]),
            "getScheme" => (F::GetScheme, &[0]),
            "getHost" => (F::GetHost, &[0]),
            "getHostname" => (F::GetHostname, &[0]),
            "getPort" => (F::GetPort, &[0]),
            "getEscapedPath" => (F::GetEscapedPath, &[0]),
            "getQuery" => (F::GetQuery, &[0]),
            "family" => (F::Family, &[0]),
            "isUnspecified" => (F::IsUnspecified, &[0]),
            "isLoopback" => (F::IsLoopback, &[0]),
            "isLinkLocalMulticast" => (F::IsLinkLocalMulticast, &[0]),
            "isLinkLocalUnicast" => (F::IsLinkLocalUnicast, &[0]),
            "isGlobalUnicast" => (F::IsGlobalUnicast, &[0]),
            "ip" => (F::CidrIp, &[0]),
            "masked" => (F::Masked, &[0]),
            "prefixLength" => (F::PrefixLength, &[0]),
            "containsIP" => (F::ContainsIp, &[1]),
            "containsCIDR" => (F::ContainsCidr, &[1]),
            "major" => (F::Major, &[0]),
            "minor" => (F::Minor, &[0]),
            "patch" => (F::Patch, &[0]),
            "validate" => (F::FormatValidate, &[1]),
            _ => return Err(ResolveError::Unknown),
        }
    } else {
        match name {
            "size" => (F::Size, &[1]),
            "matches" => (F::Matches, &[2]),
            "int" => (F::Int, &[1]),
            "uint" => (F::Uint, &[1]),
            "double" => (F::Double, &[1]),
            "string" => (F::String, &[1]),
            "bool" => (F::Bool, &[1]),
            "bytes" => (F::Bytes, &[1]),
            "dyn" => (F::Dyn, &[1]),
            "type" => (F::Type, &[1]),
            "duration" => (F::Duration, &[1]),
            "timestamp" => (F::Timestamp, &[1]),
            "strings.quote" => (F::Quote, &[1]),
            "sets.contains" => (F::SetsContains, &[2]),
            "lists.range" => (F::ListsRange, &[1]),
            "optional.unwrap" => (F::Unwrap, &[1]),
            "sets.equivalent" => (F::SetsEquivalent, &[2]),
            "sets.intersects" => (F::SetsIntersects, &[2]),
            "optional.of" => (F::OptionalOf, &[1]),
            "optional.none" => (F::OptionalNone, &[0]),
            "optional.ofNonZeroValue" => (F::OptionalOfNonZeroValue, &[1]),
            "quantity" => (F::Quantity, &[1]),
            "isQuantity" => (F::IsQuantity, &[1]),
            "sign" => (F::Sign, &[1]),
            "url" => (F::Url, &[1]),
            "isURL" => (F::IsUrl, &[1]),
            "ip" => (F::Ip, &[1]),
            "isIP" => (F::IsIp, &[1]),
            "ip.isCanonical" => (F::IpIsCanonical, &[1]),
            "cidr" => (F::Cidr, &[1]),
            "isCIDR" => (F::IsCidr, &[1]),
            "semver" => (F::Semver, &[1, 2]),
            "isSemver" => (F::IsSemver, &[1, 2]),
            "format.named" => (F::FormatNamed, &[1]),
            _ => match name
                .strip_prefix("format.")
                .and_then(NamedFormat::from_name)
            {
                Some(format) => (F::FormatOf(format), &[0]),
                None => return Err(ResolveError::Unknown),
            },
        }
    };
    if arities.contains(&argc) {
        Ok(func)
    } else {
        Err(ResolveError::Arity(match arities {
            [0] => "no arguments",
            [1] => "1 argument",
            [2] => "2 arguments",
            [0, 1] => "0 or 1 arguments",
            [1, 2] => "1 or 2 arguments",
            _ => "2 or 3 arguments",
        }))
    }
}

/// The namespaced global function `ns.name` (`optional.of`), by its full
/// name.
pub(crate) fn namespaced(ns: &str, name: &str) -> Option<&'static str> {
    Some(match (ns, name) {
        ("strings", "quote") => "strings.quote",
        ("sets", "contains") => "sets.contains",
        ("lists", "range") => "lists.range",
        ("optional", "unwrap") => "optional.unwrap",
        ("sets", "equivalent") => "sets.equivalent",
        ("sets", "intersects") => "sets.intersects",
        ("optional", "of") => "optional.of",
        ("optional", "none") => "optional.none",
        ("optional", "ofNonZeroValue") => "optional.ofNonZeroValue",
        ("ip", "isCanonical") => "ip.isCanonical",
        ("format", "named") => "format.named",
        ("format", name) => NamedFormat::from_name(name)?.function_name(),
        _ => return None,
    })
}

impl Func {
    /// The name errors show.
    pub(crate) fn name(self) -> &'static str {
        use Func as F;
        match self {
            F::Size => "size",
            F::Contains => "contains",
            F::StartsWith => "startsWith",
            F::EndsWith => "endsWith",
            F::Matches => "matches",
            F::Int => "int",
            F::Uint => "uint",
            F::Double => "double",
            F::String => "string",
            F::Bool => "bool",
            F::Bytes => "bytes",
            F::Dyn => "dyn",
            F::Type => "type",
            F::Duration => "duration",
            F::Timestamp => "timestamp",
            F::GetFullYear => "getFullYear",
            F::GetMonth => "getMonth",
            F::GetDate => "getDate",
            F::GetDayOfMonth => "getDayOfMonth",
            F::GetDayOfWeek => "getDayOfWeek",
            F::GetDayOfYear => "getDayOfYear",
            F::GetHours => "getHours",
            F::GetMinutes => "getMinutes",
            F::GetSeconds => "getSeconds",
            F::GetMilliseconds => "getMilliseconds",
            F::CharAt => "charAt",
            F::IndexOf => "indexOf",
            F::LastIndexOf => "lastIndexOf",
            F::LowerAscii => "lowerAscii",
            F::UpperAscii => "upperAscii",
            F::Replace => "replace",
            F::Split => "split",
            F::Substring => "substring",
            F::Trim => "trim",
            F::Join => "join",
            F::Reverse => "reverse",
            F::Slice => "slice",
            F::Flatten => "flatten",
            F::Sort => "sort",
            F::Distinct => "distinct",
            F::ListsRange => "lists.range",
            F::First => "first",
            F::Last => "last",
            F::Unwrap => "optional.unwrap",
            F::UnwrapOpt => "unwrapOpt",
            F::Format => "format",
            F::Quote => "strings.quote",
            F::Find => "find",
            F::FindAll => "findAll",
            F::IsSorted => "isSorted",
            F::Sum => "sum",
            F::Min => "min",
            F::Max => "max",
            F::SetsContains => "sets.contains",
            F::SetsEquivalent => "sets.equivalent",
            F::SetsIntersects => "sets.intersects",
            F::OptionalOf => "optional.of",
            F::OptionalNone => "optional.none",
            F::OptionalOfNonZeroValue => "optional.ofNonZeroValue",
            F::HasValue => "hasValue",
            F::Value => "value",
            F::OrValue => "orValue",
            F::Or => "or",
            F::Quantity => "quantity",
            F::IsQuantity => "isQuantity",
            F::Sign => "sign",
            F::IsInteger => "isInteger",
            F::AsInteger => "asInteger",
            F::AsApproximateFloat => "asApproximateFloat",
            F::Add => "add",
            F::Sub => "sub",
            F::CompareTo => "compareTo",
            F::IsGreaterThan => "isGreaterThan",
            F::IsLessThan => "isLessThan",
            F::Url => "url",
            F::IsUrl => "isURL",
            F::GetScheme => "getScheme",
            F::GetHost => "getHost",
            F::GetHostname => "getHostname",
            F::GetPort => "getPort",
            F::GetEscapedPath => "getEscapedPath",
            F::GetQuery => "getQuery",
            F::Ip => "ip",
            F::IsIp => "isIP",
            F::IpIsCanonical => "ip.isCanonical",
            F::Family => "family",
            F::IsUnspecified => "isUnspecified",
            F::IsLoopback => "isLoopback",
            F::IsLinkLocalMulticast => "isLinkLocalMulticast",
            F::IsLinkLocalUnicast => "isLinkLocalUnicast",
            F::IsGlobalUnicast => "isGlobalUnicast",
            F::Cidr => "cidr",
            F::IsCidr => "isCIDR",
            F::CidrIp => "ip",
            F::Masked => "masked",
            F::PrefixLength => "prefixLength",
            F::ContainsIp => "containsIP",
            F::ContainsCidr => "containsCIDR",
            F::Semver => "semver",
            F::IsSemver => "isSemver",
            F::Major => "major",
            F::Minor => "minor",
            F::Patch => "patch",
            F::FormatNamed => "format.named",
            F::FormatOf(format) => format.function_name(),
            F::FormatValidate => "validate",
        }
    }
}

/// "no matching overload" for `function` applied to `args`.
pub(crate) fn no_overload(function: &str, args: &[Value<'_>]) -> EvalError {
    let types: Vec<&str> = args.iter().map(Value::type_name).collect();
    EvalError::NoMatchingOverload {
        function: function.to_string(),
        args: types.join(", "),
    }
}

/// Calls `func`; a member call's target is `args[0]`.
pub(crate) fn call<'a>(
    func: Func,
    args: &[Value<'a>],
    budget: &mut Budget,
    regexes: &regex::RegexCache,
) -> Result<Value<'a>, EvalError> {
    use Func as F;
    match func {
        F::Size
        | F::Contains
        | F::StartsWith
        | F::EndsWith
        | F::Int
        | F::Uint
        | F::Double
        | F::String
        | F::Bool
        | F::Bytes
        | F::Dyn
        | F::Type => stdlib::call(func, args, budget),
        F::Matches | F::Find | F::FindAll => regex::call(func, args, budget, regexes),
        F::Duration
        | F::Timestamp
        | F::GetFullYear
        | F::GetMonth
        | F::GetDate
        | F::GetDayOfMonth
        | F::GetDayOfWeek
        | F::GetDayOfYear
        | F::GetHours
        | F::GetMinutes
        | F::GetSeconds
        | F::GetMilliseconds => time::call(func, args),
        F::IndexOf | F::LastIndexOf | F::Reverse if matches!(args.first(), Some(v) if v.as_list().is_some()) => {
            lists::call(func, args, budget)
        }
        F::CharAt
        | F::IndexOf
        | F::LastIndexOf
        | F::LowerAscii
        | F::UpperAscii
        | F::Replace
        | F::Split
        | F::Substring
        | F::Trim
        | F::Join
        | F::Reverse
        | F::Format
        | F::Quote => strings::call(func, args, budget),
        F::Slice
        | F::Flatten
        | F::Sort
        | F::Distinct
        | F::ListsRange
        | F::First
        | F::Last
        | F::Unwrap
        | F::UnwrapOpt
        | F::IsSorted
        | F::Sum
        | F::Min
        | F::Max
        | F::SetsContains
        | F::SetsEquivalent
        | F::SetsIntersects => lists::call(func, args, budget),
        F::OptionalOf
        | F::OptionalNone
        | F::OptionalOfNonZeroValue
        | F::HasValue
        | F::Value
        | F::OrValue
        | F::Or => optional::call(func, args),
        F::CompareTo | F::IsGreaterThan | F::IsLessThan
            if matches!(args.first(), Some(Value::Semver(_))) =>
        {
            semver::call(func, args)
        }
        F::Quantity
        | F::IsQuantity
        | F::Sign
        | F::IsInteger
        | F::AsInteger
        | F::AsApproximateFloat
        | F::Add
        | F::Sub
        | F::CompareTo
        | F::IsGreaterThan
        | F::IsLessThan => quantity::call(func, args),
        F::Semver | F::IsSemver | F::Major | F::Minor | F::Patch => semver::call(func, args),
        F::FormatNamed | F::FormatOf(_) | F::FormatValidate => format::call(func, args),
        F::Url
        | F::IsUrl
        | F::GetScheme
        | F::GetHost
        | F::GetHostname
        | F::GetPort
        | F::GetEscapedPath
        | F::GetQuery => url::call(func, args, budget),
        F::Ip
        | F::IsIp
        | F::IpIsCanonical
        | F::Family
        | F::IsUnspecified
        | F::IsLoopback
        | F::IsLinkLocalMulticast
        | F::IsLinkLocalUnicast
        | F::IsGlobalUnicast
        | F::Cidr
        | F::IsCidr
        | F::CidrIp
        | F::Masked
        | F::PrefixLength
        | F::ContainsIp
        | F::ContainsCidr => ip::call(func, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_by_style_and_arity() {
        let cases = [
            ("global_size", "size", false, 1, true),
            ("member_size", "size", true, 0, true),
            ("member_size_with_arg", "size", true, 1, false),
            ("global_int", "int", false, 1, true),
            ("member_int_is_unknown", "int", true, 0, false),
            ("substring_two", "substring", true, 2, true),
            ("substring_three", "substring", true, 3, false),
            ("namespaced", "optional.none", false, 0, true),
            ("made_up", "frobnicate", false, 1, false),
        ];
        for (name, f, member, argc, ok) in cases {
            assert_eq!(resolve(f, member, argc).is_ok(), ok, "{name}");
        }
    }
}
