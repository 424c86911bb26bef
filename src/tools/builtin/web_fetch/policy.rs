//! Which addresses `web_fetch` may connect to. Loopback, private, link-local and the other
//! special ranges are refused unless `[tools.web_fetch] allow_private` names them. The check
//! runs on the address a connection would really go to: a DNS resolver for reqwest filters
//! what names resolve to, and literal IPs in URLs (which skip the resolver) are checked first.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// `[tools.web_fetch] allow_private`, parsed: the special addresses that may be fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowPrivate {
    rules: Vec<Rule>,
}

/// One entry: a host name or an address range, optionally for one port only.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    target: Target,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A host name as written in URLs (lowercase, no trailing dot): whatever it resolves to.
    Name(String),
    /// An address range; a single address is a full-length prefix.
    Net(IpAddr, u8),
}

impl AllowPrivate {
    /// Parses the entries: `host`, `address` or `address/prefix`, each optionally followed by
    /// `:port` (IPv6 in brackets then: `[::1]:8080`).
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let rules = entries
            .iter()
            .map(|entry| parse_rule(entry))
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    /// Whether `ip`, reached as `host` on `port`, is allowed by an entry.
    fn allows(&self, host: &str, port: u16, ip: IpAddr) -> bool {
        let host = normalize_name(host);
        let ip = canonical(ip);
        self.rules.iter().any(|rule| {
            rule.port.is_none_or(|p| p == port)
                && match &rule.target {
                    Target::Name(name) => *name == host,
                    Target::Net(net, prefix) => contains(*net, *prefix, ip),
                }
        })
    }
}

fn parse_rule(raw: &str) -> Result<Rule, String> {
    let entry = raw.trim();
    let bad = |why: &str| format!("'{raw}' {why}");
    let (target, port) = if let Some(rest) = entry.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or_else(|| bad("has a '[' without ']'"))?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .and_then(|p| p.parse::<u16>().ok())
                    .ok_or_else(|| bad("has no valid port after ']'"))?,
            ),
        };
        (inside, port)
    } else if entry.matches(':').count() == 1 {
        // One colon: host:port. More: a bare IPv6 address (a port needs brackets then).
        let (host, port) = entry.split_once(':').unwrap_or((entry, ""));
        let port = port
            .parse::<u16>()
            .map_err(|_| bad("has no valid port after ':'"))?;
        (host, Some(port))
    } else {
        (entry, None)
    };
    let target = if let Some((address, prefix)) = target.split_once('/') {
        let address: IpAddr = address
            .parse()
            .map_err(|_| bad("is not an address range like 10.0.0.0/8"))?;
        let max = if address.is_ipv4() { 32 } else { 128 };
        let prefix = prefix
            .parse::<u8>()
            .ok()
            .filter(|p| *p <= max)
            .ok_or_else(|| bad("has an invalid prefix length"))?;
        net(address, prefix)
    } else if let Ok(address) = target.parse::<IpAddr>() {
        let full = if address.is_ipv4() { 32 } else { 128 };
        net(address, full)
    } else {
        let name = normalize_name(target);
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
        if !valid {
            return Err(bad("is not a host name, an address or an address range"));
        }
        Target::Name(name)
    };
    Ok(Rule { target, port })
}

/// A range in canonical form: IPv4-mapped IPv6 ranges become IPv4 ranges.
fn net(address: IpAddr, prefix: u8) -> Target {
    match address {
        IpAddr::V6(v6) if prefix >= 96 => match v6.to_ipv4_mapped() {
            Some(v4) => Target::Net(IpAddr::V4(v4), prefix - 96),
            None => Target::Net(address, prefix),
        },
        _ => Target::Net(address, prefix),
    }
}

fn normalize_name(host: &str) -> String {
    host.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) reach the IPv4 host: treat them as IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn contains(net: IpAddr, prefix: u8, ip: IpAddr) -> bool {
    match (net, ip) {
        (IpAddr::V4(net), IpAddr::V4(ip)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(net) & mask == u32::from(ip) & mask
        }
        (IpAddr::V6(net), IpAddr::V6(ip)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(net) & mask == u128::from(ip) & mask
        }
        _ => false,
    }
}

/// What kind of special address `ip` is, in words ("a loopback address"); `None` for an
/// ordinary public address.
pub(super) fn special(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(if ip.is_loopback() {
        "a loopback address"
    } else if a == 0 {
        "an unspecified (this-network) address"
    } else if ip.is_private() {
        "a private address"
    } else if ip == Ipv4Addr::new(169, 254, 169, 254) {
        "the cloud metadata address"
    } else if ip.is_link_local() {
        "a link-local address"
    } else if a == 100 && b & 0xc0 == 64 {
        "a shared (carrier-grade NAT) address"
    } else if ip.is_broadcast() {
        "the broadcast address"
    } else if ip.is_multicast() {
        "a multicast address"
    } else if a >= 240 {
        "a reserved address"
    } else {
        return None;
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    Some(if ip.is_loopback() {
        "a loopback address"
    } else if ip.is_unspecified() {
        "an unspecified address"
    } else if segments[..6] == [0; 6] {
        // Deprecated IPv4-compatible form (::a.b.c.d): nothing public lives there.
        "a reserved (IPv4-compatible) address"
    } else if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64 reaches the embedded IPv4 address: judge that one.
        let [.., hi, lo] = segments;
        let embedded = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
        return special_v4(embedded);
    } else if ip.is_unique_local() {
        "a private (unique local) address"
    } else if ip.is_unicast_link_local() {
        "a link-local address"
    } else if segments[0] & 0xffc0 == 0xfec0 {
        "a private (site-local) address"
    } else if ip.is_multicast() {
        "a multicast address"
    } else {
        return None;
    })
}

/// A connection refused by the address policy; the message says how to allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The name that resolved to `ip`; `None` when the URL held the address itself.
    name: Option<String>,
    ip: IpAddr,
    kind: &'static str,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (ip, kind) = (self.ip, self.kind);
        match &self.name {
            Some(name) => write!(f, "refused: {name} resolves to {ip}, {kind}")?,
            None => write!(f, "refused: {ip} is {kind}")?,
        }
        let entry = self.name.clone().unwrap_or_else(|| ip.to_string());
        write!(
            f,
            "; allow it with [tools.web_fetch] allow_private = [\"{entry}\"]"
        )
    }
}

impl std::error::Error for Refused {}

/// The address in a URL host (`127.0.0.1`, `[::1]`), if it is one.
fn literal(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Checks one address that `host` (a name, or the address itself) leads to on `port`.
pub(super) fn check(
    allow: &AllowPrivate,
    host: &str,
    port: u16,
    ip: IpAddr,
) -> Result<(), Refused> {
    let Some(kind) = special(ip) else {
        return Ok(());
    };
    if allow.allows(host, port, ip) {
        return Ok(());
    }
    Err(Refused {
        name: literal(host).is_none().then(|| normalize_name(host)),
        ip: canonical(ip),
        kind,
    })
}

/// Checks a URL whose host is a literal IP address: those never reach the resolver.
pub(super) fn check_literal(url: &Url, allow: &AllowPrivate) -> Result<(), Refused> {
    let port = url.port_or_known_default().unwrap_or(0);
    match url.host_str().and_then(literal) {
        Some(ip) => check(allow, &ip.to_string(), port, ip),
        None => Ok(()),
    }
}

/// A reqwest resolver that keeps only the addresses the policy allows. It serves one port:
/// a name cannot be judged without it (`allow_private` entries may name a port), and reqwest
/// hands resolvers the name alone, so each port gets its own client.
#[derive(Debug, Clone)]
pub(super) struct GuardedResolver {
    pub(super) allow: Arc<AllowPrivate>,
    pub(super) port: u16,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = Arc::clone(&self.allow);
        let port = self.port;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect();
            let mut refused = None;
            let mut kept = Vec::with_capacity(found.len());
            for address in found {
                match check(&allow, &host, port, address.ip()) {
                    Ok(()) => kept.push(address),
                    Err(error) => {
                        refused.get_or_insert(error);
                    }
                }
            }
            // Allowed addresses are used even if others were refused: only those are dialled.
            match (kept.is_empty(), refused) {
                (true, Some(refused)) => Err(refused.into()),
                (true, None) => Err(format!("{host} has no addresses").into()),
                (false, _) => Ok(Box::new(kept.into_iter()) as Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn special_ranges() {
        for (address, kind) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("::", "unspecified"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("::ffff:192.168.1.1", "private"),
            ("169.254.169.254", "metadata"),
            ("169.254.1.1", "link-local"),
            ("fe80::1", "link-local"),
            ("fc00::1", "unique local"),
            ("fd12:3456::1", "unique local"),
            ("fec0::1", "site-local"),
            ("100.64.0.1", "carrier-grade"),
            ("100.127.255.255", "carrier-grade"),
            ("224.0.0.1", "multicast"),
            ("ff02::1", "multicast"),
            ("255.255.255.255", "broadcast"),
            ("240.0.0.1", "reserved"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("64:ff9b::7f00:1", "loopback"),
        ] {
            let got = special(ip(address));
            assert!(got.is_some_and(|k| k.contains(kind)), "{address}: {got:?}");
        }
        for public in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "169.253.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert_eq!(special(ip(public)), None, "{public}");
        }
    }

    #[test]
    fn allow_private_entries() {
        let entries: Vec<String> = [
            "localhost",
            "MyServer.lan.",
            "127.0.0.1:8080",
            "10.0.0.0/8",
            "[::1]:9000",
            "fd00::/8",
            "::ffff:192.168.0.0/112",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let allow = AllowPrivate::parse(&entries).unwrap();
        assert!(allow.allows("localhost", 1, ip("127.0.0.1")));
        assert!(allow.allows("LOCALHOST.", 1, ip("::1")));
        assert!(allow.allows("myserver.lan", 80, ip("192.168.1.2")));
        assert!(allow.allows("127.0.0.1", 8080, ip("127.0.0.1")));
        assert!(allow.allows("a.example", 8080, ip("::ffff:127.0.0.1")));
        assert!(!allow.allows("127.0.0.1", 8081, ip("127.0.0.1")));
        assert!(allow.allows("x", 1, ip("10.200.3.4")));
        assert!(!allow.allows("x", 1, ip("11.0.0.1")));
        assert!(allow.allows("x", 9000, ip("::1")));
        assert!(!allow.allows("x", 9001, ip("::1")));
        assert!(allow.allows("x", 1, ip("fd12::1")));
        assert!(allow.allows("x", 1, ip("192.168.77.1")));
        assert!(!allow.allows("x", 1, ip("192.169.0.1")));
        assert!(!allow.allows("other", 1, ip("127.0.0.1")));

        for bad in [
            "",
            "a b",
            "host:",
            "host:99999",
            "10.0.0.0/33",
            "[::1",
            "[::1]x",
            "300.1.1.1/8",
        ] {
            assert!(
                AllowPrivate::parse(&[bad.to_string()]).is_err(),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn refusals_say_how_to_allow() {
        let none = AllowPrivate::default();
        let err = check(&none, "localhost", 80, ip("127.0.0.1")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "refused: localhost resolves to 127.0.0.1, a loopback address; allow it with [tools.web_fetch] allow_private = [\"localhost\"]"
        );
        let err = check(&none, "[::ffff:a00:1]", 80, ip("::ffff:10.0.0.1")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "refused: 10.0.0.1 is a private address; allow it with [tools.web_fetch] allow_private = [\"10.0.0.1\"]"
        );
        assert_eq!(
            check(&none, "example.com", 443, ip("93.184.216.34")),
            Ok(())
        );
    }
}
