// Package captcha checks the anti-bot token sign-in starts carry (request field `captcha`). Deployments choose
// a Turnstile-compatible verifier or none (development).
package captcha

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Verifier decides whether a token proves a human.
type Verifier interface {
	// Verify returns nil for an accepted token and a 403 *apierror.Error for a rejected one.
	Verify(ctx context.Context, token, remoteIP string) error
}

// Off accepts every request: the development default.
type Off struct{}

// Verify accepts.
func (Off) Verify(context.Context, string, string) error { return nil }

// ErrRejected is the answer to a missing or rejected token.
var ErrRejected = apierror.Forbidden("captcha_rejected", "The anti-bot check failed. Reload the page and try again.")

// Turnstile verifies tokens with a Turnstile-compatible site-verify endpoint.
type Turnstile struct {
	secret    string
	verifyURL string
	client    *http.Client
}

// NewTurnstile builds the verifier; verifyURL is the site-verify endpoint (configurable so tests and
// self-hosted compatible services can be used).
func NewTurnstile(secret, verifyURL string) *Turnstile {
	return &Turnstile{secret: secret, verifyURL: verifyURL, client: &http.Client{Timeout: 10 * time.Second}}
}

// Verify posts the token to the site-verify endpoint.
func (t *Turnstile) Verify(ctx context.Context, token, remoteIP string) error {
	if strings.TrimSpace(token) == "" || len(token) > 2048 {
		return ErrRejected
	}
	form := url.Values{"secret": {t.secret}, "response": {token}}
	if remoteIP != "" {
		form.Set("remoteip", remoteIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.verifyURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := t.client.Do(req)
	if err != nil {
		return apierror.Unavailable("captcha_unavailable", "The anti-bot check could not be reached. Try again.").WithCause(err)
	}
	defer resp.Body.Close()
	var out struct {
		Success bool `json:"success"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<16)).Decode(&out); err != nil {
		return apierror.Unavailable("captcha_unavailable", "The anti-bot check answered nonsense. Try again.").
			WithCause(fmt.Errorf("decode site-verify answer (status %d): %w", resp.StatusCode, err))
	}
	if !out.Success {
		return ErrRejected
	}
	return nil
}
