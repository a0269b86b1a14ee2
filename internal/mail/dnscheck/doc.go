// Package dnscheck answers the DNS questions a sender's domain raises, through one Resolver (the
// deployment's; an in-process DNS server in tests):
//
//   - Tracking domains: a mailbox's custom domain verifies when it is a CNAME of the deployment's tracking
//     host, or, where a DNS provider flattens CNAMEs, when its addresses are the tracking host's. A failed
//     lookup (timeout, server failure) is reported as such and never counts as a wrong record, so callers
//     keep a verified domain verified through it.
//   - Domain authentication: SPF at the domain, DMARC at _dmarc.<domain> or, when the domain has none, at
//     its organizational domain (the registrable domain, by the public suffix list), and DKIM keys at a set
//     of common selectors (positive-only: a selector that does not answer proves nothing). Special-use
//     domains (RFC 6761 and friends) are reserved and classify as unknown, as do lookup failures.
package dnscheck
