package dnscheck

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// NormalizeTrackingDomain reads what a user typed as a tracking domain: scheme, path, query, trailing dot and
// case are stripped. It refuses, with a user-safe reason, a raw IP, a host with a port, localhost, a single
// label and anything that is not a host name.
func NormalizeTrackingDomain(raw string) (string, string) {
	d := strings.ToLower(strings.TrimSpace(raw))
	if i := strings.Index(d, "://"); i >= 0 {
		d = d[i+3:]
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		d = d[:i]
	}
	d = strings.TrimSuffix(d, ".")
	switch {
	case d == "":
		return "", ""
	case strings.HasPrefix(d, "[") || isIP(d):
		return "", "A tracking domain must be a host name, not an IP address."
	case strings.Contains(d, ":"):
		return "", "A tracking domain must not carry a port."
	case d == "localhost" || strings.HasSuffix(d, ".localhost"):
		return "", "localhost cannot be a tracking domain."
	case !strings.Contains(d, "."):
		return "", "A tracking domain needs at least two labels, such as track.example.com."
	case !hostName(d):
		return "", "A tracking domain may hold only letters, digits, hyphens and dots, at most 253 characters."
	}
	return d, ""
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// hostName reports whether d is a syntactically valid DNS host name.
func hostName(d string) bool {
	if len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Tracking statuses (part 2's tracking domain state).
const (
	TrackingVerified    = "verified"
	TrackingUnset       = "unset"
	TrackingNoTarget    = "no_target"
	TrackingNotFound    = "not_found"
	TrackingWrongTarget = "wrong_target"
	TrackingLookupError = "lookup_error"
)

// TrackingResult is one resolution of a tracking domain.
type TrackingResult struct {
	// Status is one of the Tracking constants.
	Status string
	// Message is one user-safe sentence explaining Status.
	Message string
	// Observed is what DNS answered when it differs from the target.
	Observed string
	// HostUnresolvable is set when the record is right but the deployment's tracking host has no address.
	HostUnresolvable bool
}

// CheckTracking resolves domain and compares it with target, the deployment's tracking host ("" when it has
// none: then nothing can verify). domain is normalized (NormalizeTrackingDomain).
func CheckTracking(ctx context.Context, r Resolver, domain, target string) TrackingResult {
	target = strings.TrimSuffix(strings.ToLower(target), ".")
	switch {
	case domain == "":
		return TrackingResult{Status: TrackingUnset, Message: "No tracking domain is set; opens and clicks use the shared tracking host."}
	case target == "":
		return TrackingResult{Status: TrackingNoTarget, Message: "This deployment has no tracking host, so no custom tracking domain can verify."}
	}
	cname, err := r.LookupCNAME(ctx, domain)
	cname = strings.TrimSuffix(strings.ToLower(cname), ".")
	switch {
	case err != nil && !notFound(err):
		return TrackingResult{Status: TrackingLookupError, Message: "The DNS lookup of " + domain + " failed; it is tried again later."}
	case err == nil && cname == target:
		res := TrackingResult{Status: TrackingVerified, Message: domain + " points at " + target + "."}
		if addrs, err := r.LookupIPAddr(ctx, target); err == nil && len(addrs) == 0 || notFound(err) {
			res.HostUnresolvable = true
			res.Message += " The tracking host itself has no address yet; the operator has to publish it."
		}
		return res
	case err == nil && cname != domain:
		return TrackingResult{Status: TrackingWrongTarget, Observed: cname,
			Message: domain + " is an alias of " + cname + ", not of " + target + "."}
	}
	// No CNAME: either nothing at all, or addresses a provider flattened a CNAME into.
	mine, err := r.LookupIPAddr(ctx, domain)
	switch {
	case notFound(err) || err == nil && len(mine) == 0:
		return TrackingResult{Status: TrackingNotFound, Message: "No DNS record was found for " + domain + ": add a CNAME pointing at " + target + "."}
	case err != nil:
		return TrackingResult{Status: TrackingLookupError, Message: "The DNS lookup of " + domain + " failed; it is tried again later."}
	}
	theirs, err := r.LookupIPAddr(ctx, target)
	if err != nil && !notFound(err) {
		return TrackingResult{Status: TrackingLookupError, Message: "The DNS lookup of the tracking host failed; it is tried again later."}
	}
	observed := addrList(mine)
	if len(theirs) > 0 && slices.Equal(observed, addrList(theirs)) {
		return TrackingResult{Status: TrackingVerified, Message: domain + " resolves to the tracking host's addresses (a flattened CNAME)."}
	}
	return TrackingResult{Status: TrackingWrongTarget, Observed: strings.Join(observed, ", "),
		Message: domain + " resolves to other addresses than " + target + ": make it a CNAME of " + target + "."}
}

// addrList is a sorted, de-duplicated list of addresses as text.
func addrList(addrs []net.IPAddr) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.IP.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}
