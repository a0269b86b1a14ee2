package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	// SignatureHeader carries `t=<unix>,v1=<hex>`.
	SignatureHeader = "X-Service-Signature"
	// EventHeader carries the event type.
	EventHeader = "X-Service-Event"
	// EventIDHeader carries the event id, stable across retries: use it as an idempotency key.
	EventIDHeader = "X-Service-Event-Id"
	// ChallengeHeader is where an OAuth app's endpoint may echo a verification challenge.
	ChallengeHeader = "X-Service-Webhook-Challenge"
	// UserAgent is the User-Agent of every delivery.
	UserAgent = "Webhooks/1.0"
)

// DefaultTolerance is how far a signature's timestamp may be from the receiver's clock.
const DefaultTolerance = 5 * time.Minute

// Errors VerifySignature returns; all of them mean "do not process this delivery".
var (
	ErrMalformedHeader = errors.New("webhook: malformed signature header")
	ErrNoSignature     = errors.New("webhook: no v1 signature in the header")
	ErrTimestamp       = errors.New("webhook: signature timestamp outside the tolerance")
	ErrMismatch        = errors.New("webhook: no signature matches the body")
)

// Sign returns the signature header value for body sent at t, keyed with secret (the whole `whsec_` value).
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// VerifySignature checks header (the X-Service-Signature value) against the raw body with secret. tolerance
// bounds the timestamp's distance from now; zero or less means DefaultTolerance (a signature is never
// accepted whatever its age). Several v1 values may be present (one must match); other schemes are ignored.
func VerifySignature(secret, header string, body []byte, tolerance time.Duration) error {
	return verifyAt(secret, header, body, tolerance, time.Now())
}

func verifyAt(secret, header string, body []byte, tolerance time.Duration, now time.Time) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformedHeader
		}
		switch k {
		case "t":
			if ts != "" {
				return ErrMalformedHeader
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil {
				return ErrMalformedHeader
			}
			sigs = append(sigs, sig)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrMalformedHeader
	}
	if len(sigs) == 0 {
		return ErrNoSignature
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := mac(secret, ts, body)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return ErrMismatch
}
