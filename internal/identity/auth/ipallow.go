package auth

import (
	"fmt"
	"net/netip"
)

// MaxAllowedIPs bounds a key's allow-list.
const MaxAllowedIPs = 100

// NormalizeAllowedIPs validates an allow-list of addresses and CIDR ranges and returns it in canonical
// prefix form (a bare address becomes a /32 or /128; IPv4-mapped IPv6 becomes IPv4), without duplicates.
func NormalizeAllowedIPs(in []string) ([]string, error) {
	if len(in) > MaxAllowedIPs {
		return nil, fmt.Errorf("at most %d entries are allowed", MaxAllowedIPs)
	}
	out := make([]string, 0, len(in))
	seen := map[netip.Prefix]bool{}
	for _, raw := range in {
		pfx, err := parseAllowed(raw)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR range", raw)
		}
		if !seen[pfx] {
			seen[pfx] = true
			out = append(out, pfx.String())
		}
	}
	return out, nil
}

func parseAllowed(raw string) (netip.Prefix, error) {
	if addr, err := netip.ParseAddr(raw); err == nil {
		addr = addr.Unmap().WithZone("")
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	pfx, err := netip.ParsePrefix(raw)
	if err != nil {
		return netip.Prefix{}, err
	}
	addr := pfx.Addr()
	bits := pfx.Bits()
	if addr.Is4In6() {
		if bits < 96 {
			return netip.Prefix{}, fmt.Errorf("mapped prefix too wide")
		}
		addr, bits = addr.Unmap(), bits-96
	}
	return netip.PrefixFrom(addr, bits).Masked(), nil
}

// ipAllowed reports whether client (the connection's peer address) is inside the allow-list; an empty list
// allows every address. Unparseable stored entries match nothing.
func ipAllowed(list []string, client string) bool {
	if len(list) == 0 {
		return true
	}
	addr, err := netip.ParseAddr(client)
	if err != nil {
		return false
	}
	addr = addr.Unmap().WithZone("")
	for _, raw := range list {
		if pfx, err := netip.ParsePrefix(raw); err == nil && pfx.Contains(addr) {
			return true
		}
	}
	return false
}
