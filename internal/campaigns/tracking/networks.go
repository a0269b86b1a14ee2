package tracking

import (
	_ "embed"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// The lists are text files so they can be reviewed, dated and extended without touching code.
var (
	//go:embed scanner_networks.txt
	scannerNetworksFile string
	//go:embed probable_scanner_networks.txt
	probableScannerNetworksFile string
	//go:embed privacy_proxies.txt
	privacyProxiesFile string
)

// Source is what the network lists say about where an open or click came from. Its fields mirror the
// tracking event body of the contract: a scanner name, whether that scanner is only probable, and the
// privacy proxy the fetch went through.
type Source struct {
	// Scanner names the scanner network the address belongs to ("" when none).
	Scanner string
	// ScannerProbable is true when Scanner is only a probable scanner (a cloud or hosting network).
	ScannerProbable bool
	// PrivacyProxy names the mail privacy proxy, by network or user agent ("" when none).
	PrivacyProxy string
}

// RecognisedScanner reports whether the source is a recognised scanner network, which makes every open and
// click a machine's and never receives a click identification ticket.
func (s Source) RecognisedScanner() bool { return s.Scanner != "" && !s.ScannerProbable }

// Networks answers Lookup from the embedded scanner, probable-scanner and privacy-proxy lists; it is built
// once at start and read concurrently without locks.
type Networks struct {
	scanners, probable, proxies prefixTable
	proxyAgents                 []agentMarker
}

// agentMarker is a lowercase user-agent substring naming a privacy proxy.
type agentMarker struct{ marker, name string }

// prefixTable finds the longest prefix holding an address: one sorted slice of masked network addresses per
// prefix length, longest length first, each searched in O(log n).
type prefixTable []prefixGroup

type prefixGroup struct {
	bits  int
	addrs []netip.Addr // masked to bits, sorted
	names []string
}

// LoadNetworks parses the embedded lists. A malformed line is an error, so a typo fails start instead of
// silently dropping a network.
func LoadNetworks() (*Networks, error) {
	return ParseNetworks(scannerNetworksFile, probableScannerNetworksFile, privacyProxiesFile)
}

// ParseNetworks builds Networks from list texts in the embedded files' format; LoadNetworks gives it the
// embedded files, and tests give it their own.
func ParseNetworks(scanners, probable, proxies string) (*Networks, error) {
	n := &Networks{}
	var err error
	if n.scanners, _, err = parseList("scanner_networks.txt", scanners, false); err != nil {
		return nil, err
	}
	if n.probable, _, err = parseList("probable_scanner_networks.txt", probable, false); err != nil {
		return nil, err
	}
	if n.proxies, n.proxyAgents, err = parseList("privacy_proxies.txt", proxies, true); err != nil {
		return nil, err
	}
	return n, nil
}

// Lookup says what ip and userAgent reveal about a fetch: a recognised scanner wins over a probable one, and
// the privacy proxy is found by network or by a marker in the user agent. An invalid ip matches no network.
func (n *Networks) Lookup(ip netip.Addr, userAgent string) Source {
	var s Source
	ip = ip.Unmap()
	if name, ok := n.scanners.find(ip); ok {
		s.Scanner = name
	} else if name, ok := n.probable.find(ip); ok {
		s.Scanner, s.ScannerProbable = name, true
	}
	if name, ok := n.proxies.find(ip); ok {
		s.PrivacyProxy = name
	} else if userAgent != "" {
		ua := strings.ToLower(userAgent)
		for _, m := range n.proxyAgents {
			if strings.Contains(ua, m.marker) {
				s.PrivacyProxy = m.name
				break
			}
		}
	}
	return s
}

// find returns the name of the longest prefix holding ip.
func (t prefixTable) find(ip netip.Addr) (string, bool) {
	if !ip.IsValid() {
		return "", false
	}
	for _, g := range t {
		if g.addrs[0].Is4() != ip.Is4() {
			continue
		}
		p, err := ip.Prefix(g.bits)
		if err != nil {
			continue
		}
		if i, ok := slices.BinarySearchFunc(g.addrs, p.Addr(), netip.Addr.Compare); ok {
			return g.names[i], true
		}
	}
	return "", false
}

// parseList reads "<prefix> <name>" lines (and, when agents is set, "ua:<marker> <name>" lines), skipping
// blank lines and "#" comments.
func parseList(file, text string, agents bool) (prefixTable, []agentMarker, error) {
	type entry struct {
		p    netip.Prefix
		name string
	}
	var entries []entry
	var markers []agentMarker
	lineNo := 0
	for line := range strings.Lines(text) {
		lineNo++
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 {
			return nil, nil, fmt.Errorf("tracking: %s line %d: %q needs a name after it", file, lineNo, fields[0])
		}
		name := strings.Join(fields[1:], " ")
		if marker, ok := strings.CutPrefix(fields[0], "ua:"); ok && agents {
			if marker == "" {
				return nil, nil, fmt.Errorf("tracking: %s line %d: ua: needs a user-agent marker", file, lineNo)
			}
			markers = append(markers, agentMarker{marker: strings.ToLower(marker), name: name})
			continue
		}
		p, err := netip.ParsePrefix(fields[0])
		if err != nil {
			return nil, nil, fmt.Errorf("tracking: %s line %d: %q is not a CIDR prefix", file, lineNo, fields[0])
		}
		if p != p.Masked() {
			return nil, nil, fmt.Errorf("tracking: %s line %d: %s has host bits set; write it as %s", file, lineNo, p, p.Masked())
		}
		entries = append(entries, entry{p, name})
	}
	// Longest prefixes first, IPv4 and IPv6 apart; within a group sorted by address for binary search.
	slices.SortFunc(entries, func(a, b entry) int {
		if a.p.Bits() != b.p.Bits() {
			return b.p.Bits() - a.p.Bits()
		}
		return a.p.Addr().Compare(b.p.Addr())
	})
	var t prefixTable
	for _, e := range entries {
		last := len(t) - 1
		if last < 0 || t[last].bits != e.p.Bits() || t[last].addrs[0].Is4() != e.p.Addr().Is4() {
			t = append(t, prefixGroup{bits: e.p.Bits()})
			last++
		}
		g := &t[last]
		if n := len(g.addrs); n > 0 && g.addrs[n-1] == e.p.Addr() {
			return nil, nil, fmt.Errorf("tracking: %s lists %s twice", file, e.p)
		}
		g.addrs = append(g.addrs, e.p.Addr())
		g.names = append(g.names, e.name)
	}
	return t, markers, nil
}
