//! The built-in functions: CEL's standard library and extensions, and
//! Kubernetes' libraries. A call is a `match` on the `Func` the parser
//! resolved, then on the argument types inside each function. The values
//! the Kubernetes libraries make (IPs, CIDRs, URLs, quantities, named
//! formats, timestamps) are defined, with their parsing, outside this
//! module, which only binds them to functions.

mod format;
mod ip;
pub(crate) mod lists;
mod optional;
mod quantity;
mod regex;
mod semver;
pub(crate) mod stdlib;
mod strings;
pub(crate) mod time;
mod url;

pub(crate) use strings::check_format;

use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use crate::regex::RegexCache;
use crate::value::Value;

/// Calls `func`; a member call's target is `args[0]`.
pub(crate) fn call<'a>(
    func: Func,
    args: &[Value<'a>],
    budget: &mut Budget,
    regexes: &RegexCache,
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
