// Package reqctx carries the facts of one HTTP request (its id, the client address and user agent) through
// the context, so the error envelope, the audit log and the access log all name the same request without
// threading the *http.Request through domain code.
package reqctx

import "context"

// Info is what the request path knows about the caller before any handler runs.
type Info struct {
	// ID correlates the response, every log line and every error body of the request.
	ID string
	// ClientIP is the peer address of the connection, without the port.
	ClientIP string
	// UserAgent is the User-Agent header as sent, truncated to a sane length.
	UserAgent string
	// Organization is the X-Organization-Id header: a signed-in person's choice of organization for this
	// request, overriding the one in their token.
	Organization string
	// Location is the coarse location of the client as the deployment's edge reported it (empty unless the
	// deployment trusts an edge that sets location headers).
	Location Location
}

// Location is a coarse, edge-reported client location for the sessions list.
type Location struct {
	City, Region, Country, CountryCode string
}

type key struct{}

// With returns ctx carrying info; the request-id middleware calls it once per request.
func With(ctx context.Context, info Info) context.Context {
	return context.WithValue(ctx, key{}, info)
}

// From returns the request facts in ctx, or the zero Info outside a request (jobs, CLI).
func From(ctx context.Context) Info {
	info, _ := ctx.Value(key{}).(Info)
	return info
}

// ID returns the request id in ctx, or "" outside a request.
func ID(ctx context.Context) string {
	return From(ctx).ID
}
