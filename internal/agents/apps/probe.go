package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/platform/egress"
)

// CodeConnectionFailed is the error code of a connection test that did not get a 2xx answer to its ping.
const CodeConnectionFailed = "app_connection_failed"

// Probe is what a connection test found: how far the signed app.ping got, the HTTP status, how long it took,
// and when it did not get a 2xx answer, why and what to change.
type Probe struct {
	DNS, TLS, Connection bool
	// Authentication is true when the app answered the signed ping with any 2xx.
	Authentication bool
	Status         int
	Latency        time.Duration
	// Failure and Fix are "" when the app answered 2xx.
	Failure, Fix string
}

// Ping sends the signed app.ping to baseURL, signed with secret at at: body {id "ping:<uuid>", run_mode test,
// ping true, requested_at}.
func (c *Client) Ping(ctx context.Context, baseURL, secret string, at time.Time) (Probe, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return Probe{}, err
	}
	body, err := json.Marshal(map[string]any{"id": "ping:" + id.String(), "run_mode": "test", "ping": true,
		"requested_at": at.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return Probe{}, err
	}
	x := c.Do(ctx, Request{BaseURL: baseURL, Secret: secret, Event: EventPing, ID: id, Body: body, At: at})
	p := Probe{DNS: x.DNS, TLS: x.TLS, Connection: x.Connection, Status: x.Status, Latency: x.Latency}
	p.Authentication = x.Status >= 200 && x.Status <= 299
	if !p.Authentication {
		p.Failure, p.Fix = c.diagnose(baseURL, x)
	}
	return p, nil
}

// diagnose says why a ping got no 2xx answer, and what would fix it, from how far it got.
func (c *Client) diagnose(baseURL string, x Exchange) (string, string) {
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	var refused *egress.Error
	switch {
	case errors.As(x.Err, &refused) && !x.DNS:
		return "base_url is not usable: " + refused.Message + ".",
			"Set base_url to an https URL whose host name resolves in public DNS."
	case errors.As(x.Err, &refused):
		return "base_url is refused: " + refused.Message + ".",
			"Point base_url at a host on the public internet (port 443); private, loopback and metadata addresses are never called."
	case x.Err != nil && x.Status == 0 && !x.Connection:
		return c.failure(x.Err) + ".", fmt.Sprintf("Check that the app is running and accepts HTTPS connections at %s on port 443.", host)
	case x.Err != nil && x.Status == 0 && !x.TLS:
		return "The TLS handshake failed: " + c.failure(x.Err) + ".",
			fmt.Sprintf("Serve a certificate valid for %s, issued by a public certificate authority, with its full chain.", host)
	case x.Err != nil && x.Status == 0:
		return c.failure(x.Err) + ".", fmt.Sprintf("Make the app answer the ping within %s.", c.timeout)
	case x.Status == 401 || x.Status == 403:
		return fmt.Sprintf("The app refused the ping with HTTP %d.", x.Status),
			"Verify X-Service-Signature (t=<unix>,v1=<hex>: HMAC-SHA256 of \"<unix>.<raw body>\") with this connection's current secret; after rotate-secret only the new one verifies."
	}
	return fmt.Sprintf("The app answered the ping with HTTP %d.", x.Status),
		"Make the app answer any 2xx to a POST of base_url with X-Service-Event app.ping."
}
