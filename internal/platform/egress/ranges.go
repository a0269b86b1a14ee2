package egress

import "net/netip"

// notPublic4 are the IPv4 ranges that are not publicly routable (RFC 6890 and its updates).
var notPublic4 = prefixes(
	"0.0.0.0/8",       // "this network", the unspecified address
	"10.0.0.0/8",      // private (RFC 1918)
	"100.64.0.0/10",   // shared address space, carrier-grade NAT (RFC 6598)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, cloud metadata
	"172.16.0.0/12",   // private (RFC 1918)
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation (TEST-NET-1)
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",  // private (RFC 1918)
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation (TEST-NET-2)
	"203.0.113.0/24",  // documentation (TEST-NET-3)
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and the limited broadcast address
)

// global6 is global unicast IPv6; everything outside it (loopback, unspecified, unique-local fc00::/7,
// link-local fe80::/10, site-local, multicast ff00::/8, discard 100::/64, local-use NAT64 64:ff9b:1::/48) is
// not public.
var global6 = netip.MustParsePrefix("2000::/3")

// notPublic6 are the ranges inside global unicast that are not publicly routable.
var notPublic6 = prefixes(
	"2001::/23",     // IETF protocol assignments: Teredo, benchmarking, ORCHID, AS112 ...
	"2001:db8::/32", // documentation
	"3fff::/20",     // documentation (RFC 9637)
)

// IPv6 forms that carry an IPv4 address, judged by that address.
var (
	compat6 = netip.MustParsePrefix("::/96")        // IPv4-compatible (deprecated)
	nat64   = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix (RFC 6052)
	sixToF  = netip.MustParsePrefix("2002::/16")    // 6to4: the IPv4 address in bits 16 to 47
)

// metadataAddrs are the cloud providers' instance metadata services, refused even in AllowPrivate mode.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, DigitalOcean ...
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task metadata
	netip.MustParseAddr("169.254.169.123"): true, // AWS time sync
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
	netip.MustParseAddr("fd00:ec2::123"):   true, // AWS time sync over IPv6
}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// embedded4 is the IPv4 address an IPv6 address carries (IPv4-mapped, IPv4-compatible, NAT64, 6to4).
func embedded4(a netip.Addr) (netip.Addr, bool) {
	if a.Is4() {
		return a, true
	}
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	switch {
	case compat6.Contains(a), nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToF.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// Public reports whether a is a publicly routable unicast address. IPv6 spellings of an IPv4 address
// (mapped, compatible, NAT64, 6to4) are judged by the IPv4 address; an address with a zone is link-local.
func Public(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	if v4, ok := embedded4(a); ok {
		for _, p := range notPublic4 {
			if p.Contains(v4) {
				return false
			}
		}
		return true
	}
	if !global6.Contains(a) {
		return false
	}
	for _, p := range notPublic6 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// metadata reports whether a, in any IPv6 spelling, is a cloud metadata address.
func metadata(a netip.Addr) bool {
	a = a.WithZone("")
	if v4, ok := embedded4(a); ok {
		a = v4
	}
	return metadataAddrs[a]
}
