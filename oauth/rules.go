package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// Limits on what an app registers.
const (
	MaxRedirectURIs   = 20
	maxURILength      = 2000
	MaxWebhookDomains = 50
)

// loopbackHosts are the hosts a native app's http redirect URI may name (any port), RFC 8252 §7.3.
var loopbackHosts = map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true}

// ValidateRedirectURI checks one redirect URI an app registers: an https URL, an http URL on a loopback host
// (127.0.0.1, [::1] or localhost, any port), or, when privateScheme is allowed (dynamic registration of native
// apps), a private-use scheme named after a domain in reverse order (RFC 8252 §7.1, `com.example.app:/cb`).
// No fragment and no user information; the URI is later matched exactly, so it is not normalised.
func ValidateRedirectURI(raw string, privateScheme bool) error {
	if raw == "" || len(raw) > maxURILength {
		return errors.New("a redirect URI must be 1 to 2000 characters")
	}
	if strings.ContainsAny(raw, "# \t\r\n") {
		return fmt.Errorf("redirect URI %q must not contain a fragment or whitespace", raw)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("redirect URI %q is not an absolute URI", raw)
	}
	if u.User != nil {
		return fmt.Errorf("redirect URI %q must not carry user information", raw)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
		if u.Hostname() == "" {
			return fmt.Errorf("redirect URI %q has no host", raw)
		}
		return nil
	case scheme == "http":
		if !loopbackHosts[strings.ToLower(u.Hostname())] {
			return fmt.Errorf("redirect URI %q must use https, or http on a loopback host (127.0.0.1, [::1] or localhost)", raw)
		}
		return nil
	case privateScheme && privateUseScheme.MatchString(scheme):
		return nil
	case privateScheme:
		return fmt.Errorf("redirect URI %q must use https, http on a loopback host, or a private-use scheme named after a domain (com.example.app:/callback)", raw)
	default:
		return fmt.Errorf("redirect URI %q must use https, or http on a loopback host (127.0.0.1, [::1] or localhost)", raw)
	}
}

// privateUseScheme is a reverse-domain-name scheme: at least two dot-separated labels, which rules out
// javascript:, data:, file: and every other scheme a browser would act on itself.
var privateUseScheme = regexp.MustCompile(`^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$`)

// ValidateRedirectURIs checks a whole list: 1 to MaxRedirectURIs entries, each valid, no duplicates.
func ValidateRedirectURIs(uris []string, privateScheme bool) error {
	if len(uris) == 0 || len(uris) > MaxRedirectURIs {
		return fmt.Errorf("give 1 to %d redirect URIs", MaxRedirectURIs)
	}
	seen := map[string]bool{}
	for _, u := range uris {
		if err := ValidateRedirectURI(u, privateScheme); err != nil {
			return err
		}
		if seen[u] {
			return fmt.Errorf("redirect URI %q is listed twice", u)
		}
		seen[u] = true
	}
	return nil
}

// dnsLabel is one label of a host name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// NormalizeWebhookDomains checks and normalises allowed_webhook_domains: each entry a host name of at least two
// labels (lower-cased, no trailing dot), optionally with one leading dot. A bare entry allows exactly that host;
// a leading-dot entry the apex and every subdomain. IP addresses, ports, schemes and wildcards are refused.
func NormalizeWebhookDomains(in []string) ([]string, error) {
	if len(in) > MaxWebhookDomains {
		return nil, fmt.Errorf("give at most %d allowed webhook domains", MaxWebhookDomains)
	}
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, raw := range in {
		d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(raw)), ".")
		host, sub := strings.CutPrefix(d, ".")
		if strings.HasPrefix(host, "*") {
			return nil, fmt.Errorf("allowed webhook domain %q: write .%s to allow the domain and its subdomains", raw, strings.TrimPrefix(host, "*."))
		}
		if !validHostName(host) {
			return nil, fmt.Errorf("allowed webhook domain %q is not a host name such as hooks.example.com or .example.com", raw)
		}
		if sub {
			host = "." + host
		}
		if !seen[host] {
			seen[host] = true
			out = append(out, host)
		}
	}
	return out, nil
}

func validHostName(host string) bool {
	if host == "" || len(host) > 253 || net.ParseIP(host) != nil {
		return false
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !dnsLabel.MatchString(l) {
			return false
		}
	}
	// The top-level label of a real domain is never all digits.
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// WebhookHostAllowed reports whether host lies inside domains (as NormalizeWebhookDomains returns them): a bare
// entry matches that exact host, a leading-dot entry the apex and every subdomain. An empty list allows nothing.
func WebhookHostAllowed(host string, domains []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	for _, d := range domains {
		if apex, ok := strings.CutPrefix(d, "."); ok {
			if host == apex || strings.HasSuffix(host, d) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}

// ValidateWebhookURL checks an app's webhook_url against its allowed domains: empty opts out of app
// webhooks; anything else must be an https URL without user information or fragment whose host lies inside
// domains (an empty list therefore forbids any webhook_url). Deliveries repeat the host check.
func ValidateWebhookURL(raw string, domains []string) error {
	if raw == "" {
		return nil
	}
	if len(raw) > maxURILength {
		return errors.New("webhook_url must be at most 2000 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Hostname() == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("webhook_url %q must be an https URL without user information or fragment", raw)
	}
	if len(domains) == 0 {
		return errors.New("webhook_url needs allowed_webhook_domains: an app without allowed domains cannot receive webhooks")
	}
	if !WebhookHostAllowed(u.Hostname(), domains) {
		return fmt.Errorf("webhook_url host %q is not inside allowed_webhook_domains", u.Hostname())
	}
	return nil
}

// CheckDeliveryURL is the allowed_webhook_domains rule again at delivery time: the URL an app's managed
// endpoint is about to be sent to must still be an https URL whose host lies inside the app's current domains
// (which may have narrowed since the endpoint was created). nil when it may be sent to; the error says why not.
// The egress rules (public addresses, port 443) are checked apart, by package egress.
func CheckDeliveryURL(raw string, domains []string) error {
	if raw == "" {
		return errors.New("the app has no webhook_url")
	}
	return ValidateWebhookURL(raw, domains)
}
