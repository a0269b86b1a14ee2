package dnscheck

import (
	"context"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"
)

// DKIMSelectors are the selectors probed for a DKIM key: the ones the large mailbox providers and sending
// services publish by default.
var DKIMSelectors = []string{"google", "selector1", "selector2", "default", "dkim", "mail", "k1", "k2", "s1", "s2", "smtp", "mxvault", "zoho"}

// Auth states of a mailbox (part 2): passing (SPF and DMARC present), failing (either missing), unknown (not
// checked, a lookup failed, or a special-use domain).
const (
	AuthPassing = "passing"
	AuthFailing = "failing"
	AuthUnknown = "unknown"
)

// AuthResult is what the SPF, DKIM and DMARC lookups of one domain found.
type AuthResult struct {
	Domain         string
	SPFFound       bool
	SPFRecord      string
	DKIMFound      bool
	DKIMSelectors  []string
	DMARCFound     bool
	DMARCPolicy    string
	DMARCDomain    string
	DMARCInherited bool
	// Reserved is a special-use domain that cannot be evaluated.
	Reserved bool
	// LookupError is an SPF or DMARC lookup that failed for another reason than the record not existing.
	LookupError bool
}

// State classifies the result: unknown for reserved domains and failed lookups, passing with SPF and DMARC,
// failing otherwise. DKIM is positive-only and never gates.
func (a AuthResult) State() string {
	switch {
	case a.Reserved || a.LookupError:
		return AuthUnknown
	case a.SPFFound && a.DMARCFound:
		return AuthPassing
	}
	return AuthFailing
}

// Aligned reports SPF, DKIM and DMARC all found.
func (a AuthResult) Aligned() bool { return a.SPFFound && a.DKIMFound && a.DMARCFound }

// Summary is one sentence for people.
func (a AuthResult) Summary() string {
	switch {
	case a.Reserved:
		return a.Domain + " is a special-use domain; its authentication cannot be evaluated."
	case a.LookupError:
		return "A DNS lookup for " + a.Domain + " failed; the check is inconclusive and is tried again later."
	case a.Aligned():
		return a.Domain + " publishes SPF, DKIM and DMARC."
	}
	var missing []string
	if !a.SPFFound {
		missing = append(missing, "SPF")
	}
	if !a.DMARCFound {
		missing = append(missing, "DMARC")
	}
	if len(missing) == 0 {
		return a.Domain + " publishes SPF and DMARC; no DKIM key answered at the common selectors (this never fails the check)."
	}
	return a.Domain + " is missing " + strings.Join(missing, " and ") + "; cold sending from it stops once the grace period is over."
}

// reservedSuffixes are special-use names (RFC 2606, 6761, 6762, 7686, 8375) and the documentation domains.
var reservedSuffixes = []string{"test", "example", "invalid", "localhost", "local", "onion", "home.arpa",
	"example.com", "example.net", "example.org"}

// Reserved reports whether domain is special-use.
func Reserved(domain string) bool {
	for _, s := range reservedSuffixes {
		if domain == s || strings.HasSuffix(domain, "."+s) {
			return true
		}
	}
	return false
}

// CheckAuth looks up the domain's SPF, DMARC (with the organizational-domain fallback) and DKIM keys.
func CheckAuth(ctx context.Context, r Resolver, domain string) AuthResult {
	domain = strings.TrimSuffix(strings.ToLower(domain), ".")
	res := AuthResult{Domain: domain}
	if Reserved(domain) {
		res.Reserved = true
		return res
	}
	txt, err := r.LookupTXT(ctx, domain)
	res.LookupError = err != nil && !notFound(err)
	for _, t := range txt {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(t)), "v=spf1") {
			res.SPFFound, res.SPFRecord = true, strings.TrimSpace(t)
			break
		}
	}
	policy, found, failed := dmarc(ctx, r, domain)
	if !found && !failed {
		if org, err := publicsuffix.EffectiveTLDPlusOne(domain); err == nil && org != domain {
			policy, found, failed = dmarc(ctx, r, org)
			if found {
				res.DMARCDomain, res.DMARCInherited = org, true
			}
		}
	} else if found {
		res.DMARCDomain = domain
	}
	res.DMARCFound, res.DMARCPolicy = found, policy
	res.LookupError = res.LookupError || failed
	// The selectors are asked all at once: with a real resolver that is one round of latency, not thirteen.
	answered := make([]bool, len(DKIMSelectors))
	var wg sync.WaitGroup
	for i, sel := range DKIMSelectors {
		wg.Go(func() {
			keys, err := r.LookupTXT(ctx, sel+"._domainkey."+domain)
			if err != nil {
				return
			}
			for _, k := range keys {
				if strings.Contains(strings.ReplaceAll(k, " ", ""), "p=") {
					answered[i] = true
					return
				}
			}
		})
	}
	wg.Wait()
	for i, ok := range answered {
		if ok {
			res.DKIMFound = true
			res.DKIMSelectors = append(res.DKIMSelectors, DKIMSelectors[i])
		}
	}
	return res
}

// dmarc reads the DMARC record at _dmarc.domain: its policy (p=), whether one exists, and whether the lookup
// failed.
func dmarc(ctx context.Context, r Resolver, domain string) (policy string, found, failed bool) {
	txt, err := r.LookupTXT(ctx, "_dmarc."+domain)
	if err != nil {
		return "", false, !notFound(err)
	}
	for _, t := range txt {
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(t)), "v=dmarc1") {
			continue
		}
		for _, tag := range strings.Split(t, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(tag), "=")
			if strings.EqualFold(strings.TrimSpace(k), "p") {
				policy = strings.ToLower(strings.TrimSpace(v))
			}
		}
		return policy, true, false
	}
	return "", false, false
}
