// Package egress is the deployment's only way to call URLs its tenants chose (webhook endpoints, OAuth apps'
// webhook URLs): it keeps those requests from reaching inside the deployment's own network (SSRF).
//
// Two walls, both needed:
//
//   - ValidateURL, when a URL is registered (and again before it is used): https only, the standard port
//     only, a host name rather than an IP address in any spelling (dotted, decimal, octal, hex, short forms,
//     bracketed IPv6), and a name that resolves only to publicly routable addresses. Loopback, RFC 1918
//     private, link-local, CGNAT, unique-local IPv6, unspecified, multicast, broadcast, reserved,
//     documentation and benchmark ranges and the cloud metadata addresses are refused, as are their
//     IPv4-mapped, IPv4-compatible, 6to4 and NAT64 IPv6 spellings.
//   - NewClient's transport checks the address it actually connects to, in net.Dialer.Control, right before
//     connect(2). A name that resolved to a public address at registration and resolves to a private one now
//     (DNS rebinding) is refused there, and no connection is ever opened to it. The client takes no proxy from
//     the environment, never follows a redirect (the 3xx answer is returned as it is) and gives up after 15
//     seconds; bounding how much of an answer is read is the caller's job.
//
// Options.AllowPrivate (OUTFLOW_WEBHOOKS_ALLOW_PRIVATE=1) lifts the address, scheme and port rules for
// self-hosted test rigs whose receivers live on a private network or on loopback. The cloud metadata
// addresses stay refused even then.
package egress
