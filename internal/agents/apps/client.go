package apps

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/webhook"
)

// Limits of a call to an app (part 3).
const (
	// Timeout is how long the app has to answer a call, the whole exchange included.
	Timeout = 30 * time.Second
	// MaxAnswer is the largest answer body an action accepts; one more byte is read to tell a larger one.
	MaxAnswer = 64 << 10
)

// The X-Service-Event of the two requests an app receives.
const (
	EventPing   = "app.ping"
	EventAction = "app.action"
)

// Options configure the client.
type Options struct {
	// Egress are the deployment's rules for tenant-chosen URLs (AllowPrivate for self-hosted test rigs); the
	// client is egress's, so every address is checked as it is connected to. HTTPS is required whatever they
	// say.
	Egress egress.Options
	// Timeout bounds each call (0: Timeout); tests make it short.
	Timeout time.Duration
	// TLS, when set, is the client's TLS configuration (tests trust their own server's certificate); nil uses
	// the system's roots.
	TLS *tls.Config
}

// Client makes the signed calls to customer apps: the live app.action of an app_action step and the app.ping
// of a connection test.
type Client struct {
	http    *http.Client
	egress  egress.Options
	timeout time.Duration
}

// NewClient builds the client over egress's SSRF-safe HTTP client.
func NewClient(o Options) *Client {
	e := o.Egress
	e.Timeout = cmp.Or(o.Timeout, Timeout)
	c := egress.NewClient(e)
	if o.TLS != nil {
		c.Transport.(*http.Transport).TLSClientConfig = o.TLS
	}
	return &Client{http: c, egress: e, timeout: e.Timeout}
}

// Request is one signed call.
type Request struct {
	// BaseURL and Path make the URL (the path is appended to the base URL's own).
	BaseURL, Path string
	// Secret signs the body (X-Service-Signature).
	Secret string
	// Event is EventPing or EventAction.
	Event string
	// ID is the X-Service-Event-Id and the Idempotency-Key: the step run id, stable across retries.
	ID uuid.UUID
	// Body is the JSON body.
	Body []byte
	// At is when the call is signed.
	At time.Time
}

// Exchange is how far a call got and what came back.
type Exchange struct {
	// DNS, Connection and TLS report that the host resolved to allowed addresses, that a connection was made
	// and that the TLS handshake succeeded.
	DNS, Connection, TLS bool
	// Status is the HTTP status (0 when no answer came).
	Status int
	// Body is the answer, at most MaxAnswer+1 bytes.
	Body []byte
	// Latency is how long the exchange took.
	Latency time.Duration
	// Err is why the exchange did not complete (nil once an answer was read, whatever its status).
	Err error
}

// Do sends r and reads the answer (MaxAnswer+1 bytes at most). It never follows redirects.
func (c *Client) Do(ctx context.Context, r Request) (x Exchange) {
	start := time.Now()
	defer func() { x.Latency = time.Since(start) }()
	raw := strings.TrimRight(r.BaseURL, "/") + r.Path
	u, err := egress.ValidateURL(ctx, raw, c.egress)
	var refused *egress.Error
	if errors.As(err, &refused) {
		x.DNS = refused.Reason != egress.ReasonUnresolvable && refused.Reason != egress.ReasonInvalid && refused.Reason != egress.ReasonHost
	}
	if err == nil && u.Scheme != "https" {
		err = &egress.Error{Reason: egress.ReasonScheme, Host: u.Hostname(), Message: "the URL must use https"}
	}
	if err != nil {
		x.Err = err
		return x
	}
	x.DNS = true
	trace := &httptrace.ClientTrace{
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				x.Connection = true
			}
		},
		GotConn: func(info httptrace.GotConnInfo) { // a kept-alive connection reports no connect or handshake
			x.Connection = true
			if tc, ok := info.Conn.(*tls.Conn); ok && tc.ConnectionState().HandshakeComplete {
				x.TLS = true
			}
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				x.TLS = true
			}
		},
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, u.String(), bytes.NewReader(r.Body))
	if err != nil {
		x.Err = err
		return x
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhook.UserAgent)
	req.Header.Set(webhook.EventHeader, r.Event)
	req.Header.Set(webhook.EventIDHeader, r.ID.String())
	req.Header.Set("Idempotency-Key", r.ID.String())
	req.Header.Set(webhook.SignatureHeader, webhook.Sign(r.Secret, r.At, r.Body))
	resp, err := c.http.Do(req)
	if err != nil {
		x.Err = err
		return x
	}
	defer resp.Body.Close()
	x.Status = resp.StatusCode
	x.Body, x.Err = io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	return x
}

// Answer is what an app.action call's exchange means: the app's JSON object, or why the call failed.
func (c *Client) Answer(x Exchange) (json.RawMessage, string) {
	switch {
	case x.Err != nil:
		return nil, c.failure(x.Err)
	case x.Status < 200 || x.Status > 299:
		return nil, fmt.Sprintf("the app answered HTTP %d; an action must answer 2xx with a JSON object", x.Status)
	case len(x.Body) > MaxAnswer:
		return nil, "the app's answer is larger than 64 KiB"
	}
	body := bytes.TrimSpace(x.Body)
	if len(body) == 0 || body[0] != '{' || !json.Valid(body) {
		return nil, "the app's answer is not a JSON object (" + shape(body) + ")"
	}
	var out bytes.Buffer
	if err := json.Compact(&out, body); err != nil {
		return nil, "the app's answer is not a JSON object (" + err.Error() + ")"
	}
	return out.Bytes(), ""
}

// shape names what an answer that is not a JSON object is.
func shape(body []byte) string {
	switch {
	case len(body) == 0:
		return "the body is empty"
	case !json.Valid(body):
		return "the body is not valid JSON"
	case body[0] == '[':
		return "it is an array"
	case string(body) == "null":
		return "it is null"
	case body[0] == '"':
		return "it is a string"
	case body[0] == 't' || body[0] == 'f':
		return "it is a boolean"
	}
	return "it is a number"
}

// failure says, for people, why an exchange did not complete.
func (c *Client) failure(err error) string {
	var ue *url.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ue) && ue.Timeout() {
		return fmt.Sprintf("the app did not answer within %s", c.timeout)
	}
	return "the app could not be reached: " + egress.Describe(err)
}
